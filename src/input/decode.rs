//! [`PartReader`]: one part's bytes as lines see them, decoded through `gzip` or `zstd`
//! when its name says so (CONTRACT.md §11.5), while the bytes *as stored* are hashed and
//! counted: a compressed input's identity is its stored bytes', and a stream that does not
//! decode is reported at the stored byte where the decoder stopped. Every stage streams,
//! so memory is the decoder's window and one buffer, whatever the compression ratio.

use std::io::{BufRead, Read};

use sha2::{Digest, Sha256};

use super::{Part, hex};
use crate::error::{Error, Result};

/// Stored bytes read from the file at a time.
const STORED_BYTES: usize = 128 << 10;

/// How a part's bytes are stored, by its name's ending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Plain,
    Gzip,
    Zstd,
}

impl Codec {
    /// `.gz` is gzip, `.zst` is zstd; anything else is read as it is.
    pub fn of(name: &str) -> Codec {
        if name.ends_with(".gz") {
            Codec::Gzip
        } else if name.ends_with(".zst") {
            Codec::Zstd
        } else {
            Codec::Plain
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Codec::Plain => "plain",
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
        }
    }
}

/// The file's (or object's) bytes through one buffer, each hashed and counted once as
/// it is read.
struct Stored<'a> {
    file: Box<dyn Read + Send + 'a>,
    buf: Box<[u8]>,
    pos: usize,
    filled: usize,
    hasher: Sha256,
    /// Bytes read from the file so far.
    read: u64,
    /// The file itself failed to read (not the decoder): an I/O error, not a bad stream.
    failed: bool,
}

impl Stored<'_> {
    /// Bytes handed on to the decoder (read and consumed).
    fn consumed(&self) -> u64 {
        self.read - (self.filled - self.pos) as u64
    }

    fn read_file(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(out).inspect_err(|e| {
            self.failed = e.kind() != std::io::ErrorKind::Interrupted;
        })?;
        self.hasher.update(&out[..n]);
        self.read += n as u64;
        Ok(n)
    }
}

impl Read for Stored<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        // A plain part skips the copy: large reads go straight to the caller's buffer.
        if self.pos == self.filled && out.len() >= self.buf.len() {
            return self.read_file(out);
        }
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Stored<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.pos == self.filled {
            let mut buf = std::mem::take(&mut self.buf);
            let n = self.read_file(&mut buf);
            self.buf = buf;
            self.filled = n?;
            self.pos = 0;
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.filled);
    }
}

/// zstd fed no more than it asks for next (its hint: the rest of the header or block it
/// is in), so each call decodes at most one block, and a block that does not decode
/// leaves [`Stored::consumed`] at that block. zstd's own reader hands the decoder every
/// byte read, many blocks a call, and an error leaves the offset where that read began,
/// up to a whole buffer before the damage.
struct Zstd<'a> {
    stored: Stored<'a>,
    decoder: zstd::stream::raw::Decoder<'static>,
    /// The input the decoder asked for next.
    want: usize,
    /// A frame ended, its output all handed out; more input starts the next frame.
    frame_ended: bool,
}

impl<'a> Zstd<'a> {
    fn new(stored: Stored<'a>) -> std::io::Result<Zstd<'a>> {
        Ok(Zstd {
            stored,
            decoder: zstd::stream::raw::Decoder::new()?,
            want: 1,
            frame_ended: false,
        })
    }

    /// Takes the decoder's answer to one call: 0 when its frame ended, else what it
    /// wants next.
    fn asked(&mut self, hint: usize) {
        if hint == 0 {
            self.frame_ended = true;
        } else {
            self.want = hint;
        }
    }
}

impl Read for Zstd<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        if out.is_empty() {
            return Ok(0);
        }
        // First what the decoder still holds of its last block, without new input.
        let mut dst = OutBuffer::around(&mut *out);
        let hint = self.decoder.run(&mut InBuffer::around(&[]), &mut dst)?;
        let written = dst.pos();
        self.asked(hint);
        if written > 0 {
            return Ok(written);
        }
        loop {
            let input = self.stored.fill_buf()?;
            if input.is_empty() {
                if self.frame_ended {
                    return Ok(0);
                }
                let kind = std::io::ErrorKind::UnexpectedEof;
                return Err(std::io::Error::new(kind, "incomplete frame"));
            }
            if self.frame_ended {
                self.decoder.reinit()?;
                (self.frame_ended, self.want) = (false, 1);
            }
            let fed = &input[..input.len().min(self.want)];
            let mut src = InBuffer::around(fed);
            let mut dst = OutBuffer::around(&mut *out);
            // On an error nothing of `fed` is consumed: the offset stays at its start.
            let hint = self.decoder.run(&mut src, &mut dst)?;
            let (used, written) = (src.pos(), dst.pos());
            self.stored.consume(used);
            self.asked(hint);
            if written > 0 {
                return Ok(written);
            }
        }
    }
}

enum Decoder<'a> {
    Plain(Stored<'a>),
    // Boxed: one per part, and the gzip state is the largest by far.
    Gzip(Box<flate2::bufread::MultiGzDecoder<Stored<'a>>>),
    Zstd(Zstd<'a>),
}

impl<'a> Decoder<'a> {
    fn stored(&self) -> &Stored<'a> {
        match self {
            Decoder::Plain(s) => s,
            Decoder::Gzip(d) => d.get_ref(),
            Decoder::Zstd(d) => &d.stored,
        }
    }

    fn into_stored(self) -> Stored<'a> {
        match self {
            Decoder::Plain(s) => s,
            Decoder::Gzip(d) => d.into_inner(),
            Decoder::Zstd(d) => d.stored,
        }
    }
}

/// One part read once: decoded bytes out, its stored bytes hashed on the way.
pub struct PartReader<'a> {
    part: &'a Part,
    decoder: Decoder<'a>,
}

impl<'a> PartReader<'a> {
    pub fn new(part: &'a Part) -> Result<PartReader<'a>> {
        let file = part
            .source
            .reader_at(0)
            .map_err(|e| part.io_error("read the input", e))?;
        let stored = Stored {
            file,
            buf: vec![0u8; STORED_BYTES].into_boxed_slice(),
            pos: 0,
            filled: 0,
            hasher: Sha256::new(),
            read: 0,
            failed: false,
        };
        let decoder = match part.codec {
            Codec::Plain => Decoder::Plain(stored),
            Codec::Gzip => Decoder::Gzip(Box::new(flate2::bufread::MultiGzDecoder::new(stored))),
            Codec::Zstd => Decoder::Zstd(
                Zstd::new(stored).map_err(|e| part.io_error("start its zstd decoder", e))?,
            ),
        };
        Ok(PartReader { part, decoder })
    }

    /// Stored bytes read so far (progress is over stored bytes, as the input's size is).
    pub fn stored_read(&self) -> u64 {
        self.decoder.stored().read
    }

    /// The next decoded bytes into `buf`, `None` at the end. A stream that does not
    /// decode is an input error naming the part and the stored byte offset.
    pub fn read_some(&mut self, buf: &mut [u8]) -> Result<Option<usize>> {
        loop {
            let read = match &mut self.decoder {
                Decoder::Plain(s) => s.read(buf),
                Decoder::Gzip(d) => d.read(buf),
                Decoder::Zstd(d) => d.read(buf),
            };
            match read {
                Ok(0) => return Ok(None),
                Ok(n) => return Ok(Some(n)),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if self.decoder.stored().failed => {
                    return Err(self.part.io_error("read the input", e));
                }
                Err(e) => return Err(self.undecodable(&e)),
            }
        }
    }

    fn undecodable(&self, e: &std::io::Error) -> Error {
        let offset = self.decoder.stored().consumed();
        let detail = if offset >= self.part.size {
            "the stream ends early: truncated".to_owned()
        } else {
            e.to_string()
        };
        Error::Input {
            path: self.part.path.clone(),
            message: format!(
                "does not decode as {} at byte {offset} of the stored file ({detail}); nothing \
                 was written. Ask its producer to deliver it again",
                self.part.codec.label()
            ),
        }
    }

    /// The stored bytes' SHA-256, once every stored byte is read and the part is checked
    /// not to have moved since it was opened: the bytes landed are the bytes hashed.
    pub fn finish(self) -> Result<String> {
        let mut stored = self.decoder.into_stored();
        let mut sink = vec![0u8; STORED_BYTES];
        // A decoder stops at its stream's end; bytes after it are still the part's.
        loop {
            match stored.read_file(&mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.part.io_error("read the input", e)),
            }
        }
        self.part.unchanged(stored.read)?;
        Ok(hex(&stored.hasher.finalize()))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::input::open;

    fn decoded(path: &std::path::Path) -> Result<(Vec<u8>, String)> {
        let input = open(path, "_SUCCESS")?;
        let mut reader = PartReader::new(&input.parts[0])?;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 1000];
        while let Some(n) = reader.read_some(&mut buf)? {
            out.extend_from_slice(&buf[..n]);
        }
        Ok((out, reader.finish()?))
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn each_codec_decodes_and_hashes_the_stored_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..50_000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        // Two zstd frames, as concatenating sinks write them too.
        let mut zst = zstd::encode_all(&data[..7000], 3).unwrap();
        zst.extend(zstd::encode_all(&data[7000..], 3).unwrap());
        // Two gzip members, as concatenating sinks write them.
        let mut gz = gzip(&data[..1000]);
        gz.extend(gzip(&data[1000..]));
        for (name, stored) in [
            ("a.jsonl", data.clone()),
            ("a.jsonl.gz", gz),
            ("a.zst", zst),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, &stored).unwrap();
            let (out, sha) = decoded(&path).unwrap();
            assert_eq!(out, data, "{name}");
            assert_eq!(sha, hex(&Sha256::digest(&stored)), "{name}");
        }
    }

    #[test]
    fn a_truncated_stream_names_the_file_and_the_offset() {
        let dir = tempfile::tempdir().unwrap();
        let gz = gzip(&vec![b'x'; 100_000]);
        let path = dir.path().join("cut.gz");
        std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
        let message = decoded(&path).unwrap_err().to_string();
        assert!(message.contains("cut.gz"), "{message}");
        assert!(
            message.contains(&format!("at byte {}", gz.len() / 2)),
            "{message}"
        );
        let zst = dir.path().join("junk.zst");
        std::fs::write(&zst, b"not zstd at all").unwrap();
        let message = decoded(&zst).unwrap_err().to_string();
        assert!(
            message.contains("junk.zst") && message.contains("zstd"),
            "{message}"
        );
    }
}
