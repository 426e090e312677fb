//! Opening an entry that was listed or checked, and only that entry: never through a
//! symbolic link (`O_NOFOLLOW`), never waiting on a FIFO or a device (`O_NONBLOCK`), and
//! the open file must be the regular file (or folder) checked, by device and inode. An
//! inbox name swapped for a link to a file outside, or for a FIFO, between the check and
//! the open is refused, not read (CONTRACT.md "input").

use std::fs::{File, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

/// Why an entry was not opened: the sentence an input error carries.
pub type Refused = String;

const FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

/// Opens `path`, whose `lstat` was `checked`, as that regular file.
pub fn open_file(path: &Path, checked: &Metadata) -> Result<File, Refused> {
    let fd = rustix::fs::open(path, FLAGS, Mode::empty()).map_err(|e| refused(e.into()))?;
    same(File::from(fd), checked, false)
}

/// Opens the folder `path`, whose `lstat` was `checked`, as that folder.
pub fn open_dir(path: &Path, checked: &Metadata) -> Result<File, Refused> {
    let fd = rustix::fs::open(path, FLAGS | OFlags::DIRECTORY, Mode::empty())
        .map_err(|e| refused(e.into()))?;
    same(File::from(fd), checked, true)
}

/// Opens `name` in the open folder `dir` as a regular file (a set's part: never through a
/// link, and never outside the folder opened).
pub fn open_in(dir: &File, name: &str) -> Result<File, Refused> {
    let fd = rustix::fs::openat(dir, name, FLAGS, Mode::empty()).map_err(|e| refused(e.into()))?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(refused)?;
    if !meta.is_file() {
        return Err(NOT_FILE.to_owned());
    }
    Ok(file)
}

const NOT_FILE: &str = "is not a regular file (a FIFO, a device or a socket is never read)";

fn same(file: File, checked: &Metadata, dir: bool) -> Result<File, Refused> {
    let now = file.metadata().map_err(refused)?;
    if (dir && !now.is_dir()) || (!dir && !now.is_file()) {
        return Err(NOT_FILE.to_owned());
    }
    if (now.dev(), now.ino()) != (checked.dev(), checked.ino()) {
        return Err(
            "was replaced by another file after it was checked; land it again once \
                    its producer has finished renaming"
                .to_owned(),
        );
    }
    Ok(file)
}

fn refused(e: std::io::Error) -> Refused {
    // ELOOP: the name is a symbolic link now.
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        return "is a symbolic link, which Wharf never follows; land the file it points to"
            .to_owned();
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            "no such file; check the path (is it still in the inbox?)".to_owned()
        }
        std::io::ErrorKind::PermissionDenied => {
            "permission denied; make the file readable by this user".to_owned()
        }
        _ => format!("cannot open it ({e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_a_fifo_or_a_swapped_file_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::write(&real, b"x\n").unwrap();
        let checked = std::fs::symlink_metadata(&real).unwrap();
        assert!(open_file(&real, &checked).is_ok());

        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let why = open_file(&link, &checked).unwrap_err();
        assert!(why.contains("symbolic link"), "{why}");

        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let why = open_file(&fifo, &checked).unwrap_err();
        assert!(why.contains("FIFO"), "{why}");

        let other = dir.path().join("other");
        std::fs::write(&other, b"y\n").unwrap();
        let why = open_file(&other, &checked).unwrap_err();
        assert!(why.contains("replaced"), "{why}");

        let opened = open_dir(dir.path(), &std::fs::symlink_metadata(dir.path()).unwrap());
        let opened = opened.unwrap();
        assert!(open_in(&opened, "real").is_ok());
        assert!(
            open_in(&opened, "link")
                .unwrap_err()
                .contains("symbolic link")
        );
        assert!(open_in(&opened, "fifo").unwrap_err().contains("FIFO"));
    }
}
