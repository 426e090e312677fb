//! Listing an S3 inbox (CONTRACT.md §13.1): the keys under the inbox's prefix, in key
//! order, grouped into entries as they stream by. A key directly under the prefix is an
//! object, closed once listed (a PUT is atomic); a key one level deeper belongs to a set,
//! closed by its marker object. A set's keys are contiguous in key order, so the
//! [`Grouper`] holds one set at a time, never the whole listing.

use std::path::Path;
use std::time::SystemTime;

use futures::StreamExt;
use object_store::ObjectMeta;
use sha2::{Digest, Sha256};

use super::{Bucket, locate, object_error, store_path};
use crate::error::{Error, Result};
use crate::inbox::{InboxEntry, OPEN_SET, SetEntry, temporary_name};
use crate::input::{hex, is_part_name};

/// One object of a set, as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub key: String,
    pub size: u64,
    pub etag: Option<String>,
    pub modified: SystemTime,
}

/// A set as its listing shows it (§11.1–11.2).
#[derive(Clone, Debug, Default)]
pub struct SetListing {
    /// The marker's time, once it exists.
    pub closed: Option<SystemTime>,
    /// Parts in byte order of their names.
    pub parts: Vec<Listed>,
    /// A key that spoils the set: one in a sub-prefix.
    pub invalid: Option<String>,
    /// The newest time of any of its keys.
    pub newest: Option<SystemTime>,
}

impl SetListing {
    fn add(&mut self, rest: &str, meta: &ObjectMeta, marker: &str) {
        let modified = SystemTime::from(meta.last_modified);
        self.newest = self.newest.max(Some(modified));
        if rest == marker {
            self.closed = Some(modified);
        } else if rest.contains('/') {
            self.invalid
                .get_or_insert_with(|| meta.location.to_string());
        } else if is_part_name(rest, marker) {
            self.parts.push(Listed {
                name: rest.to_owned(),
                key: meta.location.to_string(),
                size: meta.size,
                etag: meta.e_tag.clone(),
                modified,
            });
        }
    }

    /// The set's parts' ETags as one: what changes when any part is replaced, added or
    /// removed, to tell a landed set from a new one without reading it.
    pub fn etag(&self) -> String {
        set_etag(
            self.parts
                .iter()
                .map(|p| (p.name.as_str(), p.etag.as_deref(), p.size)),
        )
    }
}

/// A set's ETag from its parts' (name, ETag, size), in part order.
pub fn set_etag<'a>(parts: impl IntoIterator<Item = (&'a str, Option<&'a str>, u64)>) -> String {
    let mut hasher = Sha256::new();
    for (name, etag, size) in parts {
        hasher.update(name.as_bytes());
        hasher.update([0u8]);
        hasher.update(etag.unwrap_or("").as_bytes());
        hasher.update([0u8]);
        hasher.update(size.to_string().as_bytes());
        hasher.update(b"\n");
    }
    format!("set-{}", hex(&hasher.finalize()))
}

/// The error a set spoiled by `key` (a key in a sub-prefix) is.
pub fn invalid_set(bucket: &Bucket, key: &str) -> Error {
    Error::Input {
        path: bucket.url_of(key),
        message: "is in a sub-prefix of a set; a set's parts are objects directly under it, so \
                  the set is invalid and nothing was written. Move it out, then land the set \
                  again"
            .to_owned(),
    }
}

/// Groups a listing's keys, in key order, into inbox entries.
pub struct Grouper<'b> {
    bucket: &'b Bucket,
    /// The inbox's prefix, with its trailing `/` (empty for a whole bucket).
    prefix: String,
    marker: String,
    /// The set being listed: its name and what its keys showed so far.
    set: Option<(String, SetListing)>,
}

impl<'b> Grouper<'b> {
    pub fn new(bucket: &'b Bucket, prefix: &str, marker: &str) -> Grouper<'b> {
        let prefix = match prefix.trim_matches('/') {
            "" => String::new(),
            p => format!("{p}/"),
        };
        Grouper {
            bucket,
            prefix,
            marker: marker.to_owned(),
            set: None,
        }
    }

    /// The inbox's prefix as a store path.
    pub fn prefix(&self) -> object_store::path::Path {
        store_path(self.prefix.trim_end_matches('/'))
    }

    /// Takes the next key in key order, handing `out` each entry it completes.
    pub fn feed(&mut self, meta: &ObjectMeta, out: &mut dyn FnMut(InboxEntry)) {
        let key = meta.location.as_ref();
        let Some(rest) = key.strip_prefix(&self.prefix) else {
            return;
        };
        let Some((name, inner)) = rest.split_once('/') else {
            self.flush(out);
            out(self.object(rest, meta));
            return;
        };
        if self.set.as_ref().is_none_or(|(open, _)| open != name) {
            self.flush(out);
        }
        let (_, listing) = self
            .set
            .get_or_insert_with(|| (name.to_owned(), SetListing::default()));
        listing.add(inner, meta, &self.marker);
    }

    /// Hands `out` the set being listed, if any: the listing ended or moved past it.
    pub fn flush(&mut self, out: &mut dyn FnMut(InboxEntry)) {
        if let Some((name, listing)) = self.set.take() {
            out(self.set_entry(&name, &listing));
        }
    }

    fn object(&self, name: &str, meta: &ObjectMeta) -> InboxEntry {
        InboxEntry {
            path: self.bucket.url_of(meta.location.as_ref()),
            name: name.to_owned(),
            size: meta.size,
            modified: SystemTime::from(meta.last_modified),
            ignored: temporary_name(name),
            set: None,
            etag: meta.e_tag.clone(),
        }
    }

    /// The set `name` as the inbox shows it.
    pub fn set_entry(&self, name: &str, listing: &SetListing) -> InboxEntry {
        let key = format!("{}{name}", self.prefix);
        let invalid = listing
            .invalid
            .as_deref()
            .map(|k| invalid_set(self.bucket, k).to_string());
        let open = listing.closed.is_none();
        let set = SetEntry {
            parts: if open { 0 } else { listing.parts.len() },
            open,
            invalid: invalid.filter(|_| !open),
        };
        let ignored = temporary_name(name).or(open.then_some(OPEN_SET));
        InboxEntry {
            path: self.bucket.url_of(&key),
            name: name.to_owned(),
            size: match open {
                true => 0,
                false => listing.parts.iter().map(|p| p.size).sum(),
            },
            modified: listing
                .closed
                .or(listing.newest)
                .unwrap_or(SystemTime::UNIX_EPOCH),
            ignored,
            set: Some(set),
            etag: (!open).then(|| listing.etag()),
        }
    }
}

/// Every entry of the inbox at `url` (`s3://bucket/prefix/`), in key order.
pub fn list(url: &Path, marker: &str) -> Result<Vec<InboxEntry>> {
    let (bucket, prefix) = locate(url)?;
    let mut grouper = Grouper::new(&bucket, &prefix, marker);
    let mut out = Vec::new();
    let mut stream = bucket.store.list(Some(&grouper.prefix()));
    while let Some(meta) = bucket.block_on(stream.next()) {
        let meta = meta.map_err(|e| object_error(url, "list the inbox", e))?;
        grouper.feed(&meta, &mut |e| out.push(e));
    }
    grouper.flush(&mut |e| out.push(e));
    Ok(out)
}

/// The set at `key` of `bucket`, listed in full.
pub fn survey(bucket: &Bucket, key: &str, marker: &str) -> Result<SetListing> {
    let url = bucket.url_of(key);
    let mut listing = SetListing::default();
    let mut stream = bucket.store.list(Some(&store_path(key)));
    let inner = format!("{key}/");
    while let Some(meta) = bucket.block_on(stream.next()) {
        let meta = meta.map_err(|e| object_error(&url, "list the set", e))?;
        if let Some(rest) = meta.location.as_ref().strip_prefix(&inner) {
            listing.add(rest, &meta, marker);
        }
    }
    listing.parts.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(listing)
}

/// The entry at `url` as the inbox shows it (an object, else a set); `None` when neither
/// exists.
pub fn describe(url: &Path, marker: &str) -> Option<InboxEntry> {
    use object_store::ObjectStoreExt;
    let (bucket, key) = locate(url).ok()?;
    let (parent, name) = key.rsplit_once('/').unwrap_or(("", &key));
    let grouper = Grouper::new(&bucket, parent, marker);
    match bucket.block_on(bucket.store.head(&store_path(&key))) {
        Ok(meta) => return Some(grouper.object(name, &meta)),
        Err(object_store::Error::NotFound { .. }) => {}
        Err(_) => return None,
    }
    let listing = survey(&bucket, &key, marker).ok()?;
    listing.newest?;
    Some(grouper.set_entry(name, &listing))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry as the test compares it: name, size, why ignored, (parts, open, invalid).
    type Shown<'a> = (&'a str, u64, Option<&'a str>, Option<(usize, bool, bool)>);

    fn meta(key: &str, size: u64) -> ObjectMeta {
        ObjectMeta {
            location: store_path(key),
            last_modified: chrono::DateTime::from_timestamp(1_700_000_000 + size as i64, 0)
                .unwrap_or_default(),
            size,
            e_tag: Some(format!("\"{key}\"")),
            version: None,
        }
    }

    /// Keys in key order become objects and sets, one set held at a time.
    #[test]
    fn keys_group_into_objects_and_sets() {
        let (bucket, prefix) = locate(Path::new("s3://unit-bucket/in/")).unwrap();
        let mut grouper = Grouper::new(&bucket, &prefix, "_SUCCESS");
        let mut out = Vec::new();
        for (key, size) in [
            ("in/a.jsonl", 10),
            ("in/bad/_SUCCESS", 0),
            ("in/bad/deeper/x.jsonl", 3),
            ("in/open/part-0.jsonl", 4),
            ("in/set/_SUCCESS", 1),
            ("in/set/_hidden", 9),
            ("in/set/part-0.jsonl", 5),
            ("in/set/part-1.jsonl", 6),
            ("in/t.jsonl.tmp", 7),
        ] {
            grouper.feed(&meta(key, size), &mut |e| out.push(e));
        }
        grouper.flush(&mut |e| out.push(e));
        let shown: Vec<Shown<'_>> = out
            .iter()
            .map(|e| {
                let set = e
                    .set
                    .as_ref()
                    .map(|s| (s.parts, s.open, s.invalid.is_some()));
                (e.name.as_str(), e.size, e.ignored, set)
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("a.jsonl", 10, None, None),
                ("bad", 0, None, Some((0, false, true))),
                ("open", 0, Some(OPEN_SET), Some((0, true, false))),
                ("set", 11, None, Some((2, false, false))),
                ("t.jsonl.tmp", 7, temporary_name("t.jsonl.tmp"), None),
            ]
        );
        assert_eq!(out[0].path, Path::new("s3://unit-bucket/in/a.jsonl"));
        assert_eq!(out[3].path, Path::new("s3://unit-bucket/in/set"));
        // The set's time is its marker's; its ETag moves with any part's.
        assert_eq!(
            out[3].modified,
            SystemTime::from(meta("m", 1).last_modified)
        );
        let mut listing = SetListing::default();
        listing.add("part-0.jsonl", &meta("in/set/part-0.jsonl", 5), "_SUCCESS");
        let before = listing.etag();
        listing.parts[0].etag = Some("\"other\"".into());
        assert_ne!(listing.etag(), before);
    }
}
