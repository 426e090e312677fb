//! [`Splitter`]: a byte stream into lines by CONTRACT.md §1 (split on `\n`, strip one
//! trailing `\r`, skip a BOM at the very start), never holding more than
//! `max_line_bytes + 1` bytes of one line, whatever the stream's size.

use crate::contract::LineBytes;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Splits a byte stream into lines, holding at most `max + 1` bytes of one line.
pub struct Splitter {
    max: usize,
    carry: Vec<u8>,
    too_long: bool,
    line: u64,
    /// The file's first bytes while fewer than a BOM's length have arrived (`None` once
    /// decided): a BOM at the very start is not part of the first line (§1), whatever
    /// the read sizes, so it never counts towards `max`.
    head: Option<Vec<u8>>,
}

impl Splitter {
    pub fn new(max: usize) -> Self {
        Splitter::numbered_after(max, 0)
    }

    /// A splitter whose first line is number `before + 1`: a part's lines are numbered
    /// through the whole input, so arrival order is (part order, line) (§11.4).
    pub fn numbered_after(max: usize, before: u64) -> Self {
        Splitter {
            max,
            carry: Vec::new(),
            too_long: false,
            line: before,
            head: Some(Vec::new()),
        }
    }

    pub fn feed(&mut self, mut chunk: &[u8], on_line: &mut impl FnMut(u64, LineBytes<'_>)) {
        if let Some(head) = self.head.as_mut() {
            let take = (BOM.len() - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if head.len() < BOM.len() {
                return;
            }
            let head = self.head.take().unwrap_or_default();
            if head != BOM {
                self.split(&head, on_line);
            }
        }
        self.split(chunk, on_line);
    }

    fn split(&mut self, chunk: &[u8], on_line: &mut impl FnMut(u64, LineBytes<'_>)) {
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', chunk) {
            let piece = &chunk[start..end];
            if self.carry.is_empty() && !self.too_long {
                self.emit(piece, false, on_line);
            } else {
                self.hold(piece);
                let carry = std::mem::take(&mut self.carry);
                let too_long = std::mem::replace(&mut self.too_long, false);
                self.emit(&carry, too_long, on_line);
                self.carry = carry;
                self.carry.clear();
            }
            start = end + 1;
        }
        self.hold(&chunk[start..]);
    }

    pub fn finish(&mut self, on_line: &mut impl FnMut(u64, LineBytes<'_>)) {
        if let Some(head) = self.head.take() {
            self.split(&head, on_line); // shorter than a BOM: ordinary bytes
        }
        if !self.carry.is_empty() || self.too_long {
            let carry = std::mem::take(&mut self.carry);
            self.emit(&carry, self.too_long, on_line);
        }
    }

    /// Keeps `piece` as part of the current line unless the line is already too long.
    fn hold(&mut self, piece: &[u8]) {
        if self.too_long {
            return;
        }
        if self.carry.len() + piece.len() > self.max + 1 {
            self.too_long = true;
            self.carry = Vec::new();
        } else {
            self.carry.extend_from_slice(piece);
        }
    }

    /// The number of the last line handed out.
    pub fn last_line(&self) -> u64 {
        self.line
    }

    fn emit(
        &mut self,
        mut bytes: &[u8],
        too_long: bool,
        on_line: &mut impl FnMut(u64, LineBytes<'_>),
    ) {
        self.line += 1;
        if too_long {
            on_line(self.line, LineBytes::TooLong);
            return;
        }
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if bytes.len() > self.max {
            on_line(self.line, LineBytes::TooLong);
        } else {
            on_line(self.line, LineBytes::Kept(bytes));
        }
    }
}
