//! [`FileScratch`]: where the event log ([`crate::engine::local::events`]) spills, an unlinked file
//! in the temp directory (`TMPDIR`), created only once a spill happens. It has no name, so
//! nothing is left behind, even after a crash; it is not part of any published state.
//! Appends gather in memory and reach the file in writes of [`WRITE_BYTES`], not one
//! write per spilled segment.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::engine::local::events::Scratch;

pub struct FileScratch {
    dir: PathBuf,
    file: Option<File>,
    /// Bytes appended so far, written or not.
    len: u64,
    /// Appended bytes not yet written: the file holds `len - pending.len()` bytes.
    pending: Vec<u8>,
}

/// Appended bytes gathered before one write.
const WRITE_BYTES: usize = 1 << 20;

impl FileScratch {
    /// A scratch in `dir` (the landing passes the temp directory).
    pub fn in_dir(dir: &Path) -> Self {
        FileScratch {
            dir: dir.to_owned(),
            file: None,
            len: 0,
            pending: Vec::new(),
        }
    }

    fn write_pending(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(tempfile::tempfile_in(&self.dir)?),
        };
        file.write_all(&self.pending)?;
        self.pending.clear();
        Ok(())
    }

    /// `source` (from the event log) as the error to report: where, and what to do.
    pub fn error(dir: &Path, source: std::io::Error) -> Error {
        Error::io(
            dir,
            "spill event ids to an unnamed scratch file",
            "free space there, or set TMPDIR to a directory with room",
            source,
        )
    }
}

impl Scratch for FileScratch {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<u64> {
        if self.pending.len() + bytes.len() > WRITE_BYTES {
            self.write_pending()?;
        }
        if self.pending.capacity() == 0 {
            self.pending.reserve_exact(WRITE_BYTES.max(bytes.len()));
        }
        self.pending.extend_from_slice(bytes);
        let offset = self.len;
        self.len += bytes.len() as u64;
        Ok(offset)
    }

    fn seal(&mut self) -> std::io::Result<()> {
        self.write_pending()?;
        self.pending = Vec::new();
        Ok(())
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        match &self.file {
            Some(file) => file.read_exact_at(buf, offset),
            None => Err(std::io::Error::other("nothing was spilled")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::local::events::EventLog;

    #[test]
    fn a_spilled_log_resolves_from_its_file_and_leaves_no_name_behind() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = EventLog::new(Box::new(FileScratch::in_dir(dir.path())), 2);
        for line in 1..=50u64 {
            // Ten events, each sent five times; the last copy of event 3 differs.
            let fingerprint = if line == 43 { 99 } else { line % 10 };
            log.push(u128::from(line % 10) << 120, fingerprint, line);
        }
        let resolved = log.resolve(2).unwrap();
        assert_eq!(resolved.conflicts, vec![43]);
        assert_eq!((resolved.accepted, resolved.retries), (49, 39));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "the scratch file has no name: {names:?}");
    }

    #[test]
    fn appends_across_buffered_writes_read_back_at_their_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let mut scratch = FileScratch::in_dir(dir.path());
        // Sizes that straddle the write buffer's edge, one larger than the buffer itself.
        let sizes = [
            1,
            4096,
            WRITE_BYTES - 4096,
            2,
            WRITE_BYTES + 3,
            7,
            WRITE_BYTES / 2,
        ];
        let mut appended = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            let bytes: Vec<u8> = (0..size).map(|j| (i * 31 + j % 251) as u8).collect();
            let offset = scratch.append(&bytes).unwrap();
            appended.push((offset, bytes));
        }
        scratch.seal().unwrap();
        for (offset, bytes) in &appended {
            let mut back = vec![0u8; bytes.len()];
            scratch.read_at(&mut back, *offset).unwrap();
            assert!(
                back == *bytes,
                "the {} bytes at {offset} differ",
                bytes.len()
            );
        }
        let total: usize = sizes.iter().sum();
        assert_eq!(
            scratch.file.as_ref().unwrap().metadata().unwrap().len(),
            total as u64
        );
    }

    #[test]
    fn a_scratch_dir_that_is_not_there_is_an_error_naming_it() {
        let mut log = EventLog::new(
            Box::new(FileScratch::in_dir(Path::new("/nonexistent/wharf"))),
            1,
        );
        log.push(1, 1, 1);
        let error =
            FileScratch::error(Path::new("/nonexistent/wharf"), log.resolve(1).unwrap_err());
        let text = error.to_string();
        assert!(
            text.contains("/nonexistent/wharf") && text.contains("TMPDIR"),
            "{text}"
        );
    }
}
