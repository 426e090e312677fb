//! [`PartLines`]: one part's lines, counted once ([`PartLines::index`]) and read back
//! ([`PartLines::read`]): a plain part by seeking to the kept start at or before each line
//! asked for, a compressed one by decoding it from its first byte, once for all its lines
//! asked for. [`ReadLine`] is one line read back.

use std::io::Read;
use std::path::PathBuf;

use super::forward::Forward;
use crate::error::{Error, Result};
use crate::input::{Codec, Part, PartReader, Source};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One line read back: its first bytes (a BOM at its part's start left out, a `\r` left
/// in) and its whole length in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadLine {
    /// 1-based, through the whole input.
    pub number: u64,
    pub bytes: Vec<u8>,
    pub len: u64,
}

impl ReadLine {
    /// Whether `bytes` is the whole line.
    pub fn complete(&self) -> bool {
        self.bytes.len() as u64 == self.len
    }
}

/// One part's lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartLines {
    pub name: String,
    pub path: PathBuf,
    pub codec: Codec,
    /// Its line `n` is the input's line `first_line + n` (§11.4).
    pub first_line: u64,
    pub lines: u64,
    /// Bytes stored when indexed: a part that no longer has them is read no more.
    size: u64,
    /// An object's ETag when indexed (an S3 inbox): read only as those bytes.
    etag: Option<String>,
    /// The byte start of lines `0, stride, 2 * stride, …`, for a plain part only.
    starts: Vec<u64>,
    stride: u64,
}

impl PartLines {
    /// Counts `part`'s lines (the input's lines before it: `before`), keeping every
    /// `stride`th start of a plain part; `progress` gets the stored bytes read and returns
    /// `false` to cancel.
    pub fn index(
        part: &Part,
        before: u64,
        stride: u64,
        progress: &mut dyn FnMut(u64) -> bool,
    ) -> Result<PartLines> {
        let plain = part.codec == Codec::Plain;
        let mut counter = Counter {
            stride: if plain { stride } else { 0 },
            ..Counter::default()
        };
        let mut buf = vec![0u8; 1 << 20];
        if plain {
            // Read as stored: hashing is a landing's business, and the index is a fast pass.
            let mut file = part.source.reader_at(0).map_err(|e| {
                Error::io(&part.path, "read the input", "is it still in the inbox?", e)
            })?;
            let mut read = 0;
            while let Some(n) = crate::input::read_some(&mut file, &mut buf, &part.path)? {
                counter.feed(&buf[..n]);
                read += n as u64;
                if !progress(read) {
                    return Err(Error::Cancelled);
                }
            }
        } else {
            let mut reader = PartReader::new(part)?;
            while let Some(n) = reader.read_some(&mut buf)? {
                counter.feed(&buf[..n]);
                if !progress(reader.stored_read()) {
                    return Err(Error::Cancelled);
                }
            }
            // The stored bytes must be the ones counted, as a landing checks them.
            reader.finish()?;
        }
        let (lines, starts) = counter.finish();
        Ok(PartLines {
            name: part.name.clone(),
            path: part.path.clone(),
            codec: part.codec,
            first_line: before,
            lines,
            size: part.size,
            etag: part.source.etag().map(str::to_owned),
            starts,
            stride: stride.max(1),
        })
    }

    /// Reads the input's lines `numbers` (ascending, all in this part), each cut to `keep`
    /// bytes, handing each to `each`.
    pub fn read(&self, numbers: &[u64], keep: usize, each: &mut dyn FnMut(ReadLine)) -> Result<()> {
        let source = self.open()?;
        let io = |e| Error::io(&self.path, "read the input", "is it still in the inbox?", e);
        if self.codec == Codec::Plain {
            let mut forward: Option<Forward<Box<dyn Read + Send + '_>>> = None;
            for &number in numbers {
                let at = number - self.first_line - 1;
                let kept = at / self.stride * self.stride;
                // On from where the last line ended, unless a kept start is nearer.
                let stale = forward
                    .as_ref()
                    .is_none_or(|f| f.next() > at || f.next() < kept);
                if stale {
                    // A file sought there, an object's range request from there.
                    let start = self.starts[(at / self.stride) as usize];
                    forward = Some(Forward::new(source.reader_at(start).map_err(io)?, kept));
                }
                if let Some(f) = forward.as_mut() {
                    self.take(f, number, keep, each).map_err(io)?;
                }
            }
            return Ok(());
        }
        let part = Part {
            path: self.path.clone(),
            name: self.name.clone(),
            source,
            size: self.size,
            modified: None,
            codec: self.codec,
        };
        let mut forward = Forward::new(Decoded(PartReader::new(&part)?), 0);
        for &number in numbers {
            self.take(&mut forward, number, keep, each).map_err(io)?;
        }
        Ok(())
    }

    /// Reads on to the input's line `number` and hands it to `each`.
    fn take<R: Read>(
        &self,
        forward: &mut Forward<R>,
        number: u64,
        keep: usize,
        each: &mut dyn FnMut(ReadLine),
    ) -> std::io::Result<()> {
        let at = number - self.first_line - 1;
        let found = if forward.skip_to(at)? {
            forward.line(keep)?
        } else {
            None
        };
        let Some((mut bytes, mut len)) = found else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the input is shorter than when its lines were indexed; open the tab again",
            ));
        };
        if at == 0 && bytes.starts_with(BOM) {
            bytes.drain(..BOM.len());
            len -= BOM.len() as u64;
        }
        each(ReadLine { number, bytes, len });
        Ok(())
    }

    /// The part's file or object, checked to be the size (the ETag) it was indexed at.
    fn open(&self) -> Result<Source> {
        let changed = || Error::Input {
            path: self.path.clone(),
            message: "changed since its lines were indexed; open the tab again".into(),
        };
        if crate::s3_inbox::is_url(&self.path) {
            let object = crate::s3_inbox::read::Object::head(&self.path)?.ok_or_else(changed)?;
            if object.size != self.size || object.etag != self.etag {
                return Err(changed());
            }
            return Ok(Source::Object(object));
        }
        let io = |e| Error::io(&self.path, "read the input", "is it still in the inbox?", e);
        let file = std::fs::File::open(&self.path).map_err(io)?;
        if file.metadata().map_err(io)?.len() != self.size {
            return Err(Error::Input {
                path: self.path.clone(),
                message: "changed since its lines were indexed; open the tab again".into(),
            });
        }
        Ok(Source::File(file))
    }
}

/// A compressed part's decoded bytes as a [`Read`], its errors (a stream that does not
/// decode, named with its byte offset) carried as I/O errors.
struct Decoded<'a>(PartReader<'a>);

impl Read for Decoded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.0.read_some(buf) {
            Ok(n) => Ok(n.unwrap_or(0)),
            Err(e) => Err(std::io::Error::other(e.to_string())),
        }
    }
}

/// Lines in a stream fed in chunks, split as §1 splits them (a BOM at the start is no
/// line's byte), with every `stride`th line's start (none when `stride` is 0).
#[derive(Default)]
struct Counter {
    stride: u64,
    starts: Vec<u64>,
    newlines: u64,
    /// Bytes fed, and where the bytes after the last `\n` begin.
    len: u64,
    tail: u64,
    /// The first bytes, until a BOM's length of them has come.
    head: Vec<u8>,
}

impl Counter {
    fn feed(&mut self, chunk: &[u8]) {
        if self.len == 0 && self.stride > 0 {
            self.starts.push(0);
        }
        if self.head.len() < BOM.len() {
            let take = (BOM.len() - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        for at in memchr::memchr_iter(b'\n', chunk) {
            self.newlines += 1;
            self.tail = self.len + at as u64 + 1;
            if self.stride > 0 && self.newlines.is_multiple_of(self.stride) {
                self.starts.push(self.tail);
            }
        }
        self.len += chunk.len() as u64;
    }

    /// Lines, and the starts kept.
    fn finish(mut self) -> (u64, Vec<u64>) {
        let tail_from = if self.newlines == 0 && self.head == BOM {
            BOM.len() as u64
        } else {
            self.tail
        };
        let lines = self.newlines + u64::from(self.len > tail_from);
        if self.stride > 0 {
            // A start after the last `\n` begins no line.
            self.starts.truncate(lines.div_ceil(self.stride) as usize);
        }
        (lines, self.starts)
    }
}
