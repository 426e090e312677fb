//! Discovery on an S3 inbox (CONTRACT.md §13.2), which has no file-system events:
//!
//! - [`Discovery`] (`watch`): each cycle lists only the keys after the last one seen
//!   (`list_with_offset`, S3's `start-after`), so a quiet inbox costs one request a
//!   cycle however many objects it holds; every `rescan` it lists every key, which finds
//!   one that arrived out of key order. It keeps the last key and nothing per object:
//!   whether an entry landed is its checkpoint's business (the ETag it records), read as
//!   the listing streams by, so memory does not grow with the objects landed.
//! - [`Poller`] (the console): the same listing on a thread, telling the console when
//!   something changed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use futures::StreamExt;
use sha2::{Digest, Sha256};

use super::list::{Grouper, survey};
use super::{Bucket, locate, object_error, store_path};
use crate::config::inbox::Listing;
use crate::error::Result;
use crate::inbox::InboxEntry;

/// `watch`'s discovery over one S3 inbox.
pub struct Discovery {
    url: PathBuf,
    bucket: Arc<Bucket>,
    prefix: String,
    marker: String,
    listing: Listing,
    /// The greatest key listed so far: the next cycle lists after it.
    last_key: Option<String>,
    next_poll: Instant,
    next_full: Instant,
    /// Refused at this ETag by this process: not planned again until it changes, as a
    /// local watch does not (a restart tries it once more).
    refused: HashMap<String, String>,
    /// Requests made, for the bench and the tests.
    pub listings: u64,
}

/// What one cycle found.
pub struct Found {
    /// Closed entries not landed, oldest first.
    pub entries: Vec<InboxEntry>,
    /// Whether the cycle listed every key (the reconcile).
    pub full: bool,
}

impl Discovery {
    pub fn new(url: &Path, marker: &str, listing: Listing) -> Result<Discovery> {
        let (bucket, prefix) = locate(url)?;
        let now = Instant::now();
        Ok(Discovery {
            url: url.to_owned(),
            bucket,
            prefix,
            marker: marker.to_owned(),
            listing,
            last_key: None,
            next_poll: now,
            next_full: now,
            refused: HashMap::new(),
            listings: 0,
        })
    }

    /// When the next cycle is due.
    pub fn due(&self) -> Instant {
        self.next_poll.min(self.next_full)
    }

    /// Remembers that `entry` was refused at its ETag.
    pub fn refused(&mut self, entry: &InboxEntry) {
        let etag = entry.etag.clone().unwrap_or_default();
        self.refused.insert(entry.name.clone(), etag);
    }

    /// One cycle: the closed entries listed (after the last key seen, or all of them when
    /// the reconcile is due) that `landed` does not call landed, oldest first.
    pub fn cycle(&mut self, landed: &dyn Fn(&InboxEntry) -> bool) -> Result<Found> {
        let now = Instant::now();
        let full = self.last_key.is_none() || now >= self.next_full;
        self.next_poll = now + self.listing.poll;
        if full {
            self.next_full = now + self.listing.rescan;
        }
        let offset = if full { None } else { self.last_key.clone() };
        let refused = std::mem::take(&mut self.refused);
        // Filtered as the listing streams by: only entries to land are kept.
        let keep = |entry: &InboxEntry| {
            let etag = entry.etag.as_deref().unwrap_or_default();
            let was_refused = refused.get(&entry.name).is_some_and(|e| e == etag);
            entry.ignored.is_none() && !was_refused && !landed(entry)
        };
        let listed = self.list(offset.as_deref(), &keep);
        self.refused = refused;
        let (mut entries, last) = listed?;
        if last.is_some() {
            self.last_key = self.last_key.clone().max(last);
        }
        entries.sort_by(|a, b| {
            a.modified
                .cmp(&b.modified)
                .then_with(|| a.name.cmp(&b.name))
        });
        Ok(Found { entries, full })
    }

    /// The entries `keep` keeps among those whose keys sort after `offset` (all with
    /// none), and the greatest key listed. A set touched by a new key is listed again in
    /// full: its marker may be the new key, its parts older ones.
    fn list(
        &mut self,
        offset: Option<&str>,
        keep: &dyn Fn(&InboxEntry) -> bool,
    ) -> Result<(Vec<InboxEntry>, Option<String>)> {
        let mut grouper = Grouper::new(&self.bucket, &self.prefix, &self.marker);
        let prefix = grouper.prefix();
        let mut stream = match offset {
            Some(after) => self
                .bucket
                .store
                .list_with_offset(Some(&prefix), &store_path(after)),
            None => self.bucket.store.list(Some(&prefix)),
        };
        self.listings += 1;
        let (mut out, mut last, mut sets) = (Vec::new(), None::<String>, Vec::new());
        let mut take = |entry: InboxEntry| match (entry.set.is_some(), offset.is_some()) {
            (true, true) => sets.push(entry.name),
            _ if keep(&entry) => out.push(entry),
            _ => {}
        };
        while let Some(meta) = self.bucket.block_on(stream.next()) {
            let meta = meta.map_err(|e| object_error(&self.url, "list the inbox", e))?;
            let key = meta.location.to_string();
            if last.as_ref().is_none_or(|l| *l < key) {
                last = Some(key);
            }
            grouper.feed(&meta, &mut take);
        }
        grouper.flush(&mut take);
        for name in sets {
            let key = format!("{}/{name}", self.prefix.trim_end_matches('/'));
            let listing = survey(&self.bucket, key.trim_start_matches('/'), &self.marker)?;
            self.listings += 1;
            let entry = grouper.set_entry(&name, &listing);
            if keep(&entry) {
                out.push(entry);
            }
        }
        Ok((out, last))
    }
}

/// Lists an S3 inbox on a thread of its own and calls `on_change` when a cycle finds a
/// new key, or a reconcile a listing unlike the last. Stops when dropped.
pub struct Poller {
    _stop: Sender<()>,
}

/// How often the console's poller lists new keys, and every key.
const CONSOLE_LISTING: Listing = Listing {
    poll: Duration::from_secs(2),
    rescan: Duration::from_secs(60),
};

impl Poller {
    pub fn start(url: &Path, on_change: Box<dyn Fn() + Send>) -> Result<Poller> {
        let mut discovery = Discovery::new(url, "", CONSOLE_LISTING)?;
        let (stop, stopped) = channel::<()>();
        let mut seen: Option<[u8; 32]> = None;
        let spawned = std::thread::Builder::new()
            .name("wharf-s3-poll".into())
            .spawn(move || {
                loop {
                    let wait = discovery.due().saturating_duration_since(Instant::now());
                    match stopped.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                    let Ok(found) = discovery.changes() else {
                        on_change(); // the listing failed: the console says so itself
                        continue;
                    };
                    if found.is_some() && found != seen {
                        on_change();
                    }
                    if let Some(digest) = found {
                        seen = Some(digest);
                    }
                }
            });
        spawned.map_err(|e| object_error(url, "start listing the inbox", e))?;
        Ok(Poller { _stop: stop })
    }
}

impl Discovery {
    /// For the console: a digest of what this cycle listed (every key and ETag on a
    /// reconcile, the new keys otherwise); `None` when a cycle after the last key found
    /// nothing.
    fn changes(&mut self) -> Result<Option<[u8; 32]>> {
        let now = Instant::now();
        let full = self.last_key.is_none() || now >= self.next_full;
        self.next_poll = now + self.listing.poll;
        if full {
            self.next_full = now + self.listing.rescan;
        }
        let prefix = store_path(self.prefix.trim_end_matches('/'));
        let mut stream = match (&self.last_key, full) {
            (Some(after), false) => self
                .bucket
                .store
                .list_with_offset(Some(&prefix), &store_path(after)),
            _ => self.bucket.store.list(Some(&prefix)),
        };
        let mut hasher = Sha256::new();
        let mut any = false;
        while let Some(meta) = self.bucket.block_on(stream.next()) {
            let meta = meta.map_err(|e| object_error(&self.url, "list the inbox", e))?;
            let key = meta.location.to_string();
            hasher.update(key.as_bytes());
            hasher.update(meta.e_tag.as_deref().unwrap_or("").as_bytes());
            any = true;
            if self.last_key.as_ref().is_none_or(|l| *l < key) {
                self.last_key = Some(key);
            }
        }
        Ok((full || any).then(|| hasher.finalize().into()))
    }
}
