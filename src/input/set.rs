//! A set: one delivery as a folder of parts (CONTRACT.md §11.1–11.4). [`survey`] tells
//! an open set from a closed one and lists its parts without reading them (the inbox
//! uses it); [`set_identity`] is §11.3's hash; [`locate`] turns the input's line number
//! back into (part, line).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::{PartDigest, hex};
use crate::error::{Error, Result};

/// What a folder holds, read from its listing alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Survey {
    /// `None` while the marker is missing (an open set); its modification time once
    /// it exists, which is when the delivery closed.
    pub closed: Option<SystemTime>,
    /// The parts in byte order of their names: (name, path, size).
    pub parts: Vec<(String, PathBuf, u64)>,
}

/// Whether `name` is a part of a set (§11.2): not the marker, not hidden.
pub fn is_part_name(name: &str, marker: &str) -> bool {
    name != marker && !name.starts_with('.') && !name.starts_with('_')
}

/// The folder `dir` as a set closed by `marker`. An open set's parts are not listed (it
/// is never read then); a closed set with a symbolic link, a subfolder or anything but
/// a regular file among its parts is an error naming that entry.
pub fn survey(dir: &Path, marker: &str) -> Result<Survey> {
    let closed = match std::fs::symlink_metadata(dir.join(marker)) {
        Ok(meta) => Some(meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)),
        Err(_) => None,
    };
    if closed.is_none() {
        return Ok(Survey {
            closed,
            parts: Vec::new(),
        });
    }
    let listing_failed = |e: std::io::Error| Error::Input {
        path: dir.to_owned(),
        message: format!(
            "cannot list the set ({e}); nothing was written. Make the folder readable by this \
             user and land it again"
        ),
    };
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(listing_failed)? {
        let entry = entry.map_err(listing_failed)?;
        let name = entry.file_name();
        let Some(text) = name.to_str() else {
            return Err(bad_part(&entry.path(), "has a name that is not UTF-8"));
        };
        if is_part_name(text, marker) {
            entries.push((
                name.as_encoded_bytes().to_vec(),
                text.to_owned(),
                entry.path(),
            ));
        }
    }
    entries.sort();
    let mut parts = Vec::with_capacity(entries.len());
    for (_, name, path) in entries {
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| bad_part(&path, &format!("cannot be read ({e})")))?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            return Err(bad_part(
                &path,
                "is a symbolic link, which Wharf never follows",
            ));
        }
        if kind.is_dir() {
            return Err(bad_part(
                &path,
                "is a subfolder; a set's parts are files directly in its folder",
            ));
        }
        if !kind.is_file() {
            return Err(bad_part(&path, "is not a regular file"));
        }
        parts.push((name, path, meta.len()));
    }
    Ok(Survey { closed, parts })
}

/// §11.2: an entry that makes its set invalid, and what to do about it.
pub(super) fn bad_part(entry: &Path, why: &str) -> Error {
    Error::Input {
        path: entry.to_owned(),
        message: format!(
            "{why}, so its set is invalid and nothing was written. Move it out of the folder \
             (or make it a readable regular file), then land the set again"
        ),
    }
}

/// §11.3: the SHA-256 of `<part name> NUL <part sha256> LF`, one line per part in order.
pub fn set_identity(digests: &[PartDigest]) -> String {
    let mut hasher = Sha256::new();
    for d in digests {
        hasher.update(d.name.as_bytes());
        hasher.update([0u8]);
        hasher.update(d.sha256.as_bytes());
        hasher.update(b"\n");
    }
    hex(&hasher.finalize())
}

/// Where the input's line `line` sits (§11.4): the part's name and its line there. A set's
/// lines are numbered on through its parts, so arrival order is (part order, line); a
/// single file (`parts` empty) keeps its own numbers.
pub fn locate(parts: &[PartDigest], line: u64) -> (Option<&str>, u64) {
    // Parts are in line order; an empty part ends where it starts and is passed over.
    let at = parts.partition_point(|p| p.first_line + p.lines < line);
    match parts.get(at) {
        Some(p) if p.first_line < line => (Some(&p.name), line - p.first_line),
        _ => (None, line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(name: &str, sha256: &str, lines: u64, first_line: u64) -> PartDigest {
        PartDigest {
            name: name.into(),
            size: 0,
            sha256: sha256.into(),
            lines,
            first_line,
        }
    }

    #[test]
    fn identity_is_the_hash_of_name_nul_hash_lines() {
        let parts = [digest("p0", "aa", 0, 0), digest("p1", "bb", 0, 0)];
        let want = hex(&Sha256::digest(b"p0\0aa\np1\0bb\n"));
        assert_eq!(set_identity(&parts), want);
        assert_ne!(set_identity(&parts[..1]), want);
    }

    #[test]
    fn lines_are_located_in_their_part() {
        let parts = [
            digest("a", "", 2, 0),
            digest("b", "", 0, 2),
            digest("c", "", 3, 2),
        ];
        assert_eq!(locate(&parts, 2), (Some("a"), 2));
        assert_eq!(locate(&parts, 3), (Some("c"), 1));
        assert_eq!(locate(&[], 7), (None, 7));
    }
}
