//! [`FileScratch`]: where the event log ([`crate::plan::events`]) spills, an unlinked file
//! in the temp directory (`TMPDIR`), created only once a spill happens. It has no name, so
//! nothing is left behind, even after a crash; it is not part of any published state.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::plan::Scratch;

pub struct FileScratch {
    dir: PathBuf,
    file: Option<File>,
    len: u64,
}

impl FileScratch {
    /// A scratch in `dir` (the landing passes the temp directory).
    pub fn in_dir(dir: &Path) -> Self {
        FileScratch {
            dir: dir.to_owned(),
            file: None,
            len: 0,
        }
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
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(tempfile::tempfile_in(&self.dir)?),
        };
        file.write_all(bytes)?;
        let offset = self.len;
        self.len += bytes.len() as u64;
        Ok(offset)
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
    use crate::plan::EventLog;

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
