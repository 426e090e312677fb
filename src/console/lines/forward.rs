//! [`Forward`]: lines read on from a point where one starts, through any reader (a plain
//! part seeked to a kept start, or a compressed part's decoder from its first byte).
//! Each line kept is cut to a caller's limit while its full length is still counted, so a
//! line of any size costs one buffer.

use std::io::{BufRead, BufReader, Read};

/// Bytes buffered from the reader at a time.
const BUFFER: usize = 256 << 10;

/// A reader positioned at the start of line `next` (0-based, in its part).
pub struct Forward<R: Read> {
    reader: BufReader<R>,
    next: u64,
}

impl<R: Read> Forward<R> {
    pub fn new(reader: R, next: u64) -> Self {
        Forward {
            reader: BufReader::with_capacity(BUFFER, reader),
            next,
        }
    }

    /// The line the reader is at.
    pub fn next(&self) -> u64 {
        self.next
    }

    /// Skips lines until line `to`; `false` if the part ends first.
    pub fn skip_to(&mut self, to: u64) -> std::io::Result<bool> {
        while self.next < to {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(false);
            }
            let want = (to - self.next) as usize;
            let mut used = buf.len();
            let mut seen = 0;
            for end in memchr::memchr_iter(b'\n', buf) {
                seen += 1;
                if seen == want {
                    used = end + 1;
                    break;
                }
            }
            self.next += seen as u64;
            self.reader.consume(used);
        }
        Ok(true)
    }

    /// The line at the reader, without its `\n`: its first `keep` bytes and its length;
    /// `None` at the end of the part.
    pub fn line(&mut self, keep: usize) -> std::io::Result<Option<(Vec<u8>, u64)>> {
        let mut kept = Vec::new();
        let mut len = 0u64;
        let mut any = false;
        loop {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            any = true;
            let (piece, used, ends) = match memchr::memchr(b'\n', buf) {
                Some(end) => (&buf[..end], end + 1, true),
                None => (buf, buf.len(), false),
            };
            let room = keep.saturating_sub(kept.len()).min(piece.len());
            kept.extend_from_slice(&piece[..room]);
            len += piece.len() as u64;
            self.reader.consume(used);
            if ends {
                self.next += 1;
                return Ok(Some((kept, len)));
            }
        }
        // A last line without its `\n` is a line; the end right after a `\n` is none.
        if any {
            self.next += 1;
            return Ok(Some((kept, len)));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_but_measured_whole() {
        let data = b"abc\n\nlonger line\nlast";
        let mut forward = Forward::new(&data[..], 0);
        assert_eq!(forward.line(10).unwrap(), Some((b"abc".to_vec(), 3)));
        assert!(forward.skip_to(2).unwrap());
        assert_eq!(forward.line(4).unwrap(), Some((b"long".to_vec(), 11)));
        assert_eq!(forward.line(10).unwrap(), Some((b"last".to_vec(), 4)));
        assert_eq!(forward.line(10).unwrap(), None);
        assert!(!forward.skip_to(9).unwrap());
    }
}
