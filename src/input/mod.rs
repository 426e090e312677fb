//! Reading one input: [`open`] checks the path and names it, a file or a set of parts
//! (CONTRACT.md §11); [`scan_input`] reads the bytes once, feeding both the SHA-256 and
//! the line splitter (§1: split on `\n`, strip one trailing `\r`, skip a BOM at the very
//! start, never buffer a line longer than `max_line_bytes`). [`PartReader`] decodes a
//! `.gz` or `.zst` part on the way (§11.5).

mod decode;
mod name;
mod object;
mod safe;
mod set;
mod split;

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::contract::LineBytes;
use crate::error::{Error, Result};
pub use decode::{Codec, PartReader};
pub use name::name_of;
pub use object::{ObjectStamp, Source};
pub use set::{Survey, is_part_name, locate, set_identity, survey};
pub use split::Splitter;

pub(crate) const CHUNK: usize = 1 << 20;
/// The longest file name Linux file systems take, in bytes.
const NAME_MAX: usize = 255;
/// An input's checkpoint is `<name>.json` (CONTRACT.md §7), so its name must leave room.
const CHECKPOINT_SUFFIX: &str = ".json";

/// The marker a set's producer writes last (CONTRACT.md §11.1).
pub const SET_MARKER: &str = "_SUCCESS";

/// An input opened for reading: one file, or a closed set of parts (§11).
#[derive(Debug)]
pub struct Input {
    pub path: PathBuf,
    /// The file's or folder's name: the input's name in checkpoints and reports.
    pub name: String,
    /// Bytes stored, over every part.
    pub size: u64,
    /// A single file is its one part; a set's parts in byte order of their names.
    pub parts: Vec<Part>,
    /// Whether the input is a folder of parts, whose identity is §11.3's.
    pub set: bool,
}

/// One file of an input, opened: a local file, or an object of an S3 inbox (§13).
#[derive(Debug)]
pub struct Part {
    pub path: PathBuf,
    pub name: String,
    pub source: Source,
    /// Bytes stored.
    pub size: u64,
    /// The modification time at open, to tell a part that moves while read.
    pub modified: Option<SystemTime>,
    pub codec: Codec,
}

/// What reading one part found: its name, size and hash (the checkpoint keeps these,
/// §11.3), and where its lines sit among the input's.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartDigest {
    pub name: String,
    pub size: u64,
    pub sha256: String,
    /// Lines in the part; its line `n` is the input's line `first_line + n` (§11.4).
    #[serde(skip)]
    pub lines: u64,
    #[serde(skip)]
    pub first_line: u64,
}

impl Input {
    /// The input's identity from its parts' digests: a file's own hash, or §11.3's.
    pub fn identity(&self, digests: &[PartDigest]) -> String {
        match (self.set, digests) {
            (false, [one]) => one.sha256.clone(),
            _ => set_identity(digests),
        }
    }
}

/// Each part's digest from what one read found, in part order: (SHA-256, lines).
pub fn digests(input: &Input, read: Vec<(String, u64)>) -> Vec<PartDigest> {
    let mut out = Vec::with_capacity(read.len());
    let mut before = 0;
    for (part, (sha256, lines)) in input.parts.iter().zip(read) {
        out.push(PartDigest {
            name: part.name.clone(),
            size: part.size,
            sha256,
            lines,
            first_line: before,
        });
        before += lines;
    }
    out
}

impl Part {
    /// An error if the file moved since it was opened: `stored` bytes were read where it
    /// had `size`, or its size or modification time is not the one at open. The bytes
    /// landed must be the bytes hashed.
    fn unchanged(&self, stored: u64) -> Result<()> {
        let Source::File(file) = &self.source else {
            // Every GET of an object asked for the ETag first seen (§13.3).
            return match stored == self.size {
                true => Ok(()),
                false => Err(Error::Input {
                    path: self.path.clone(),
                    message: object::CHANGED.to_owned(),
                }),
            };
        };
        let now = file.metadata().ok();
        let same = stored == self.size
            && now.is_some_and(|m| m.len() == self.size && m.modified().ok() == self.modified);
        if same {
            return Ok(());
        }
        Err(Error::Input {
            path: self.path.clone(),
            message: "changed while it was read (its size or modification time moved); \
                      nothing was written. Land it once its producer has closed it"
                .to_owned(),
        })
    }

    /// Back to the first byte, for a second read of the same open file.
    fn rewind(&self) -> Result<()> {
        use std::io::Seek;
        let Source::File(file) = &self.source else {
            return Ok(()); // each read of an object is a GET of its own
        };
        (&*file)
            .seek(std::io::SeekFrom::Start(0))
            .map(drop)
            .map_err(|e| self.io_error("rewind the input", e))
    }

    /// `e`, a read of this part that failed, as an object's error when it is one.
    fn reread_error(&self, e: Error) -> Error {
        match (e, &self.source) {
            (Error::Io { source, .. }, Source::Object(_)) => {
                object::read_error(&self.path, "read the input", source)
            }
            (e, _) => e,
        }
    }

    fn io_error(&self, action: &'static str, e: std::io::Error) -> Error {
        match &self.source {
            Source::File(_) => Error::io(&self.path, action, "check the disk and rerun", e),
            Source::Object(_) => object::read_error(&self.path, action, e),
        }
    }
}

/// Opens `path` as an input, with a message naming the path and the fix on failure; a
/// folder is a set closed by `marker` (§11).
pub fn open(path: &Path, marker: &str) -> Result<Input> {
    if crate::s3_inbox::is_url(path) {
        return object::open(path, marker);
    }
    let fail = |message: &str| Error::Input {
        path: path.to_owned(),
        message: message.to_owned(),
    };
    if path.as_os_str().is_empty() {
        return Err(fail("the input path is empty; pass the JSONL file to land"));
    }
    // lstat: a link is never followed, and the open below must find this very entry.
    let meta = std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            fail("no such file; check the path (is it still in the inbox?)")
        }
        std::io::ErrorKind::PermissionDenied => {
            fail("permission denied; make the file readable by this user")
        }
        _ => fail(&format!("cannot read its metadata ({e})")),
    })?;
    if meta.file_type().is_symlink() {
        return Err(fail(
            "is a symbolic link, which Wharf never follows; land the file it points to",
        ));
    }
    if !meta.is_file() && !meta.is_dir() {
        return Err(fail(
            "is not a regular file or a folder; pass one closed JSONL file or set",
        ));
    }
    let name = path
        .file_name()
        .map(name_of)
        .ok_or_else(|| fail("has no file name"))?;
    check_name_length(path, &name)?;
    if meta.is_dir() {
        return open_set(path, name, marker, &meta);
    }
    let file = safe::open_file(path, &meta).map_err(|why| fail(&why))?;
    let part = opened_part(path, name.clone(), file)?;
    Ok(Input {
        path: path.to_owned(),
        name,
        size: part.size,
        parts: vec![part],
        set: false,
    })
}

/// An input's checkpoint is named after it, so its name must fit a file name.
fn check_name_length(path: &Path, name: &str) -> Result<()> {
    if name.len() + CHECKPOINT_SUFFIX.len() <= NAME_MAX {
        return Ok(());
    }
    Err(Error::Input {
        path: path.to_owned(),
        message: format!(
            "its name is {} bytes, so its checkpoint file name ({CHECKPOINT_SUFFIX} appended) \
             would exceed the file-system limit of {NAME_MAX} bytes; nothing was written. \
             Rename the input to at most {} bytes and land it again",
            name.len(),
            NAME_MAX - CHECKPOINT_SUFFIX.len()
        ),
    })
}

/// The folder `path` as a closed set's survey, or the error an open or invalid set is
/// (§11.1–11.2).
pub fn check_set(path: &Path, marker: &str) -> Result<Survey> {
    let survey = survey(path, marker)?;
    if survey.closed.is_none() {
        return Err(Error::Input {
            path: path.to_owned(),
            message: format!(
                "is a directory without the marker {marker}: an open set, whose producer may \
                 still be writing it (CONTRACT.md §11); nothing was read or written. Land it \
                 once {marker} exists, or pass one file (run without INPUT to land the inbox)"
            ),
        });
    }
    Ok(survey)
}

/// §11.1–11.2: a closed folder's parts, opened, or an error naming what spoils the set.
fn open_set(path: &Path, name: String, marker: &str, checked: &Metadata) -> Result<Input> {
    // Parts are opened inside the folder checked, never through a link.
    let dir = safe::open_dir(path, checked).map_err(|why| Error::Input {
        path: path.to_owned(),
        message: why,
    })?;
    let survey = check_set(path, marker)?;
    let mut parts = Vec::with_capacity(survey.parts.len());
    for (part, entry, _) in survey.parts {
        let file = safe::open_in(&dir, &part).map_err(|why| set::bad_part(&entry, &why))?;
        parts.push(opened_part(&entry, part, file)?);
    }
    Ok(Input {
        path: path.to_owned(),
        name,
        size: parts.iter().map(|p| p.size).sum(),
        parts,
        set: true,
    })
}

fn opened_part(path: &Path, name: String, file: File) -> Result<Part> {
    // Size and time from the open file, so a rename between two calls cannot mix them.
    let meta = file.metadata().map_err(|e| Error::Input {
        path: path.to_owned(),
        message: format!("cannot read its metadata ({e}); nothing was written"),
    })?;
    Ok(Part {
        path: path.to_owned(),
        codec: Codec::of(&name),
        name,
        source: Source::File(file),
        size: meta.len(),
        modified: meta.modified().ok(),
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

/// Reads every part of `input` once, in order, decoding compressed ones: hashes the
/// stored bytes and hands each line to `on_line` with its number, numbered on through the
/// parts (§11.4). `progress` gets the stored bytes read so far and returns `false` to
/// cancel. Returns each part's digest, in order.
pub fn scan_input(
    input: &Input,
    max_line_bytes: usize,
    progress: &mut dyn FnMut(u64) -> bool,
    mut on_line: impl FnMut(u64, LineBytes<'_>),
) -> Result<Vec<PartDigest>> {
    let mut read = Vec::with_capacity(input.parts.len());
    let (mut before, mut done) = (0u64, 0u64);
    let mut buf = vec![0u8; CHUNK];
    for part in &input.parts {
        let mut reader = PartReader::new(part)?;
        let mut splitter = Splitter::numbered_after(max_line_bytes, before);
        while let Some(n) = reader.read_some(&mut buf)? {
            splitter.feed(&buf[..n], &mut on_line);
            if !progress(done + reader.stored_read()) {
                return Err(Error::Cancelled);
            }
        }
        splitter.finish(&mut on_line);
        done += reader.stored_read();
        read.push((reader.finish()?, splitter.last_line() - before));
        before = splitter.last_line();
    }
    Ok(digests(input, read))
}

/// The identity of the input at `path` (§11.3 for a set), from its stored bytes alone:
/// nothing is decoded or split. `keep_going` is asked after each read.
pub fn identity(path: &Path, marker: &str, keep_going: &dyn Fn() -> bool) -> Result<String> {
    identity_of(&open(path, marker)?, &mut |_| keep_going())
}

/// The identity of the opened `input`, from its stored bytes alone (§5.4 decides a skip
/// on it): each part is hashed, checked unchanged since it was opened, and rewound, so a
/// census that follows reads it from the start. `progress` gets the stored bytes read
/// so far and returns `false` to cancel.
pub fn identity_of(input: &Input, progress: &mut dyn FnMut(u64) -> bool) -> Result<String> {
    let mut done = 0u64;
    let mut read = Vec::with_capacity(input.parts.len());
    for part in &input.parts {
        let mut seen = 0u64;
        let mut reader = part
            .source
            .reader_at(0)
            .map_err(|e| part.io_error("read", e))?;
        let sha256 = sha256_counted(&mut reader, &part.path, &mut |bytes| {
            seen = bytes;
            progress(done + bytes)
        })
        .map_err(|e| part.reread_error(e))?;
        part.unchanged(seen)?;
        part.rewind()?;
        done += seen;
        read.push((sha256, 0));
    }
    Ok(input.identity(&digests(input, read)))
}

/// The SHA-256 of everything `reader` holds, as lowercase hex, without splitting lines;
/// `keep_going` is asked after each read and returning `false` cancels.
pub fn sha256(
    reader: &mut impl Read,
    source: &Path,
    keep_going: &dyn Fn() -> bool,
) -> Result<String> {
    sha256_counted(reader, source, &mut |_| keep_going())
}

/// [`sha256`], telling `progress` the bytes read so far after each read.
pub fn sha256_counted(
    reader: &mut impl Read,
    source: &Path,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    while let Some(n) = read_some(reader, &mut buf, source)? {
        hasher.update(&buf[..n]);
        total += n as u64;
        if !progress(total) {
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
    fn a_part_that_grows_while_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let set = dir.path().join("set");
        std::fs::create_dir(&set).unwrap();
        std::fs::write(set.join("a.jsonl"), b"{}\n").unwrap();
        std::fs::write(set.join("_SUCCESS"), b"").unwrap();
        let input = open(&set, SET_MARKER).unwrap();
        // The producer was not done after all: bytes past the size at open.
        let mut late = std::fs::OpenOptions::new()
            .append(true)
            .open(set.join("a.jsonl"))
            .unwrap();
        std::io::Write::write_all(&mut late, b"{}\n").unwrap();
        let error = scan_input(&input, 100, &mut |_| true, |_, _| {}).unwrap_err();
        assert!(
            error.to_string().contains("changed while it was read"),
            "{error}"
        );
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
