//! Many reads as one frame.

use spark_connect::DataFrame;

/// The frames' rows together, as a balanced tree of unions: a table of many files must
/// not make a plan as deep as its file count (Spark Connect's plans are nested messages).
pub fn union_all(mut frames: Vec<DataFrame>) -> Option<DataFrame> {
    while frames.len() > 1 {
        let mut paired = Vec::with_capacity(frames.len().div_ceil(2));
        let mut rest = frames.into_iter();
        while let Some(a) = rest.next() {
            paired.push(match rest.next() {
                Some(b) => a.union_all(&b),
                None => a,
            });
        }
        frames = paired;
    }
    frames.pop()
}
