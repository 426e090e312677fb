//! Reading one input: [`open`] checks the path and names it; [`scan`] reads the bytes
//! once, feeding both the SHA-256 and the line splitter (CONTRACT.md §1: split on `\n`,
//! strip one trailing `\r`, skip a BOM at the very start, never buffer a line longer than
//! `max_line_bytes`).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::contract::LineBytes;
use crate::error::{Error, Result};

pub(crate) const CHUNK: usize = 1 << 20;
const BOM: &[u8] = b"\xEF\xBB\xBF";
/// The longest file name Linux file systems take, in bytes.
const NAME_MAX: usize = 255;
/// An input's checkpoint is `<name>.json` (CONTRACT.md §7), so its name must leave room.
const CHECKPOINT_SUFFIX: &str = ".json";

/// An input file opened for reading.
#[derive(Debug)]
pub struct Input {
    pub path: PathBuf,
    /// The file name: the input's name in checkpoints and reports.
    pub name: String,
    pub file: File,
    pub size: u64,
}

/// Opens `path` as an input, with a message naming the path and the fix on failure.
pub fn open(path: &Path) -> Result<Input> {
    let fail = |message: &str| Error::Input {
        path: path.to_owned(),
        message: message.to_owned(),
    };
    if path.as_os_str().is_empty() {
        return Err(fail("the input path is empty; pass the JSONL file to land"));
    }
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            fail("no such file; check the path (is it still in the inbox?)")
        }
        std::io::ErrorKind::PermissionDenied => {
            fail("permission denied; make the file readable by this user")
        }
        _ => fail(&format!("cannot read its metadata ({e})")),
    })?;
    if meta.is_dir() {
        return Err(fail(
            "is a directory; pass one JSONL file (or run without INPUT to land the inbox)",
        ));
    }
    if !meta.is_file() {
        return Err(fail("is not a regular file; pass one closed JSONL file"));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| fail("has no file name"))?;
    if name.len() + CHECKPOINT_SUFFIX.len() > NAME_MAX {
        return Err(fail(&format!(
            "its name is {} bytes, so its checkpoint file name ({CHECKPOINT_SUFFIX} appended) \
             would exceed the file-system limit of {NAME_MAX} bytes; nothing was written. \
             Rename the input to at most {} bytes and land it again",
            name.len(),
            NAME_MAX - CHECKPOINT_SUFFIX.len()
        )));
    }
    let file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied => {
            fail("permission denied; make the file readable by this user")
        }
        _ => fail(&format!("cannot open it ({e})")),
    })?;
    Ok(Input {
        path: path.to_owned(),
        name,
        file,
        size: meta.len(),
    })
}

/// Reads `reader` to the end once: hashes every byte and hands each line to `on_line`
/// with its 1-based number. `progress` gets the bytes read so far and returns `false`
/// to cancel. Returns the SHA-256 as lowercase hex.
pub fn scan(
    reader: &mut impl Read,
    source: &Path,
    max_line_bytes: usize,
    progress: &mut dyn FnMut(u64) -> bool,
    mut on_line: impl FnMut(u64, LineBytes<'_>),
) -> Result<String> {
    let mut hasher = Sha256::new();
    let mut splitter = Splitter::new(max_line_bytes);
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    while let Some(n) = read_some(reader, &mut buf, source)? {
        hasher.update(&buf[..n]);
        splitter.feed(&buf[..n], &mut on_line);
        total += n as u64;
        if !progress(total) {
            return Err(Error::Cancelled);
        }
    }
    splitter.finish(&mut on_line);
    Ok(hex(&hasher.finalize()))
}

/// The SHA-256 of everything `reader` holds, as lowercase hex, without splitting lines;
/// `keep_going` is asked after each read and returning `false` cancels.
pub fn sha256(
    reader: &mut impl Read,
    source: &Path,
    keep_going: &dyn Fn() -> bool,
) -> Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    while let Some(n) = read_some(reader, &mut buf, source)? {
        hasher.update(&buf[..n]);
        if !keep_going() {
            return Err(Error::Cancelled);
        }
    }
    Ok(hex(&hasher.finalize()))
}

/// Reads the next bytes into `buf`: `None` at the end, retrying interrupted reads, an
/// error naming `source` otherwise.
pub(crate) fn read_some(
    reader: &mut impl Read,
    buf: &mut [u8],
    source: &Path,
) -> Result<Option<usize>> {
    loop {
        match reader.read(buf) {
            Ok(0) => return Ok(None),
            Ok(n) => return Ok(Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Error::io(
                    source,
                    "read the input",
                    "check the disk and rerun",
                    e,
                ));
            }
        }
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Splits a byte stream into lines, holding at most `max + 1` bytes of one line.
pub(crate) struct Splitter {
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
    pub(crate) fn new(max: usize) -> Self {
        Splitter {
            max,
            carry: Vec::new(),
            too_long: false,
            line: 0,
            head: Some(Vec::new()),
        }
    }

    pub(crate) fn feed(&mut self, mut chunk: &[u8], on_line: &mut impl FnMut(u64, LineBytes<'_>)) {
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

    pub(crate) fn finish(&mut self, on_line: &mut impl FnMut(u64, LineBytes<'_>)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits `data` fed in chunks of `step` bytes; too-long lines show as `None`.
    fn lines(data: &[u8], max: usize, step: usize) -> Vec<Option<Vec<u8>>> {
        let mut out = Vec::new();
        let mut splitter = Splitter::new(max);
        let mut push = |_: u64, line: LineBytes<'_>| {
            out.push(match line {
                LineBytes::Kept(b) => Some(b.to_vec()),
                LineBytes::TooLong => None,
            })
        };
        for chunk in data.chunks(step.max(1)) {
            splitter.feed(chunk, &mut push);
        }
        splitter.finish(&mut push);
        out
    }

    #[test]
    fn crlf_bom_and_final_line_without_newline() {
        let data = b"\xEF\xBB\xBFa\r\nb\n\nc";
        for step in [1, 2, 3, 100] {
            let got = lines(data, 10, step);
            let want: Vec<Option<Vec<u8>>> = vec![
                Some(b"a".to_vec()),
                Some(b"b".to_vec()),
                Some(vec![]),
                Some(b"c".to_vec()),
            ];
            assert_eq!(got, want, "step {step}");
        }
    }

    #[test]
    fn bom_is_skipped_only_at_the_very_start() {
        let got = lines(b"a\n\xEF\xBB\xBFb\n", 10, 4);
        assert_eq!(got[1], Some(b"\xEF\xBB\xBFb".to_vec()));
    }

    #[test]
    fn long_lines_are_flagged_without_being_kept() {
        let data = b"12345\n123456\n12345\r\n1234567890\n";
        for step in [1, 4, 64] {
            let got = lines(data, 5, step);
            assert_eq!(
                got,
                vec![Some(b"12345".to_vec()), None, Some(b"12345".to_vec()), None],
                "step {step}"
            );
        }
    }

    #[test]
    fn scan_hashes_every_byte_once() {
        let data = b"{\"a\":1}\n\n";
        let mut count = 0;
        let sha = scan(
            &mut &data[..],
            Path::new("x"),
            100,
            &mut |_| true,
            |_, _| count += 1,
        )
        .unwrap();
        assert_eq!(count, 2);
        assert_eq!(sha, hex(&Sha256::digest(data)));
    }
}
