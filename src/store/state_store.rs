//! EFFECTS. Where the state root's documents (checkpoints, manifest, run log, the table's
//! memory, trash and pending records) and the quarantine live: a local folder, or an S3
//! prefix (CONTRACT.md §13.4), behind one [`StateStore`].
//!
//! Locally every document is written as before ([`atomic::write_atomic`]: temp file,
//! fsync, rename). On S3 every object is written with a conditional put, so two machines
//! never overwrite each other's state silently: a new object with `If-None-Match: *`, a
//! document read before with `If-Match` on the ETag read (the store remembers, per
//! document, the ETag this process last read or wrote, or that it found none). A put
//! whose condition fails is [`Error::StateRace`]: busy, nothing overwritten, and a rerun
//! reads what the other machine wrote. Credentials and endpoint come from the
//! environment (§12.7), never printed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use object_store::path::Path as StorePath;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::atomic;
use crate::store::objects::{self, Objects};

/// A local state folder, or an S3 prefix shared by every machine that names it.
#[derive(Clone)]
pub enum StateStore {
    Local(PathBuf),
    S3(Arc<Remote>),
}

/// An S3 prefix: its objects, and the ETag of each document as this process last saw it
/// (`None`: it found none).
pub struct Remote {
    url: String,
    objects: Objects,
    seen: Mutex<HashMap<String, Option<String>>>,
}

/// Whether a root (`state_root`, `quarantine_root`) is an S3 prefix.
pub fn is_s3(root: &Path) -> bool {
    crate::s3_inbox::is_url(root)
}

impl StateStore {
    /// The store of `config`'s state root.
    pub fn state(config: &Config) -> Result<StateStore> {
        StateStore::at(&config.state_root)
    }

    /// The store of `config`'s quarantine root.
    pub fn quarantine(config: &Config) -> Result<StateStore> {
        StateStore::at(&config.quarantine_root)
    }

    /// The store at `root`; one per S3 prefix in a process, so the ETags it read are the
    /// ones its writes are conditional on.
    pub fn at(root: &Path) -> Result<StateStore> {
        if !is_s3(root) {
            return Ok(StateStore::Local(root.to_owned()));
        }
        static REMOTES: OnceLock<Mutex<HashMap<String, Arc<Remote>>>> = OnceLock::new();
        let url = root.to_string_lossy().into_owned();
        let mut remotes = REMOTES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(remote) = remotes.get(&url) {
            return Ok(StateStore::S3(remote.clone()));
        }
        let objects = Objects::open(&url).map_err(|e| Error::State {
            url: url.clone(),
            action: "open the state store",
            detail: e.to_string(),
        })?;
        let remote = Arc::new(Remote {
            url: url.clone(),
            objects,
            seen: Mutex::new(HashMap::new()),
        });
        remotes.insert(url, remote.clone());
        Ok(StateStore::S3(remote))
    }

    /// Whether this store is an S3 prefix.
    pub fn on_s3(&self) -> bool {
        matches!(self, StateStore::S3(_))
    }

    /// `relative` as a message names it: its path, or its URL.
    pub fn shown(&self, relative: &str) -> PathBuf {
        match self {
            StateStore::Local(root) => root.join(relative),
            StateStore::S3(remote) => PathBuf::from(format!("{}{relative}", remote.url)),
        }
    }

    /// The bytes of `relative`, `None` when there is none; a local read failure is
    /// `action` with `hint`.
    pub fn read(
        &self,
        relative: &str,
        action: &'static str,
        hint: &'static str,
    ) -> Result<Option<Vec<u8>>> {
        match self {
            StateStore::Local(root) => {
                let path = root.join(relative);
                match std::fs::read(&path) {
                    Ok(bytes) => Ok(Some(bytes)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(Error::io(&path, action, hint, e)),
                }
            }
            StateStore::S3(remote) => remote.get(relative),
        }
    }

    /// Writes document `relative`: locally atomically (0600); on S3 on the condition that
    /// it is still what this process last read of it (or still absent).
    pub fn write(&self, relative: &str, bytes: &[u8]) -> Result<()> {
        match self {
            StateStore::Local(root) => atomic::write_atomic(&root.join(relative), bytes, 0o600),
            StateStore::S3(remote) => {
                let expected = remote.remembered(relative);
                remote.put(relative, bytes.to_vec(), expected)
            }
        }
    }

    /// Writes `relative`, replacing whatever is there now (a quarantine entry written
    /// again for the same input): on S3 on the condition that nobody changes it between
    /// this look and the put.
    pub fn replace(&self, relative: &str, bytes: &[u8]) -> Result<()> {
        match self {
            StateStore::Local(root) => atomic::write_atomic(&root.join(relative), bytes, 0o600),
            StateStore::S3(remote) => {
                let current = remote.etag(relative)?;
                remote.put(relative, bytes.to_vec(), current)
            }
        }
    }

    /// Writes `relative`, which must not exist yet (a run log entry): on S3 a put-if-absent.
    pub fn create(&self, relative: &str, bytes: &[u8]) -> Result<()> {
        match self {
            StateStore::Local(root) => atomic::write_atomic(&root.join(relative), bytes, 0o600),
            StateStore::S3(remote) => remote.put(relative, bytes.to_vec(), None),
        }
    }

    /// Removes `relative`; one already gone is no error.
    pub fn remove(&self, relative: &str, hint: &'static str) -> Result<()> {
        match self {
            StateStore::Local(root) => {
                let path = root.join(relative);
                match std::fs::remove_file(&path) {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(Error::io(&path, "remove", hint, e)),
                }
            }
            StateStore::S3(remote) => {
                remote
                    .objects
                    .delete(relative)
                    .map_err(|e| remote.fail("delete", e))?;
                remote.remember(relative, None);
                Ok(())
            }
        }
    }

    /// The names directly under folder `relative` (files and folders), sorted; none when
    /// it does not exist. Names starting with a dot (Wharf's temporaries) are left out.
    pub fn list(&self, relative: &str, action: &'static str) -> Result<Vec<String>> {
        let mut names = match self {
            StateStore::Local(root) => list_local(&root.join(relative), action)?,
            StateStore::S3(remote) => remote.list(relative)?,
        };
        names.retain(|n| !n.starts_with('.'));
        names.sort();
        Ok(names)
    }

    /// Uploads the local file `local` as `relative`, replacing what is there
    /// ([`StateStore::replace`]'s condition; above [`objects::PART_BYTES`] in parts).
    pub fn put_file(&self, relative: &str, local: &Path) -> Result<()> {
        let StateStore::S3(remote) = self else {
            return Err(Error::internal("a local state store was asked to upload"));
        };
        let size = std::fs::metadata(local).map(|m| m.len()).unwrap_or(0);
        if size > objects::PART_BYTES as u64 {
            // A multipart upload takes no condition; the entry's summary, written after
            // it with one, is what a reader lists.
            return remote
                .objects
                .put_file(local, relative)
                .map(|_| ())
                .map_err(|e| remote.fail("upload", e));
        }
        let bytes = std::fs::read(local)
            .map_err(|e| Error::io(local, "read", "check the disk, then rerun", e))?;
        self.replace(relative, &bytes)
    }
}

/// An append-only log on S3 (the run log): one object per entry under `folder`, named
/// so that names sort in the order written.
impl StateStore {
    /// Adds `bytes` as the log's next entry, a new object (put-if-absent).
    pub fn append_entry(&self, folder: &str, bytes: &[u8]) -> Result<()> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let pid = std::process::id();
        self.create(&format!("{folder}/{nanos:020}-{pid}-{n:04}.json"), bytes)
    }

    /// The log's entries oldest first, each with its name; only the newest `limit` when
    /// given.
    pub fn entries(&self, folder: &str, limit: Option<usize>) -> Result<Vec<(PathBuf, Vec<u8>)>> {
        let mut names = self.list(folder, "list the log")?;
        if let Some(limit) = limit {
            names.drain(..names.len().saturating_sub(limit));
        }
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let relative = format!("{folder}/{name}");
            // An entry is written whole or not at all; one gone since the listing is skipped.
            if let Some(bytes) = self.read(&relative, "read the log", "check permissions")? {
                out.push((self.shown(&relative), bytes));
            }
        }
        Ok(out)
    }
}

fn list_local(dir: &Path, action: &'static str) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, action, "check its permissions", e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, action, "check the disk", e))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

impl Remote {
    fn fail(&self, action: &'static str, detail: impl std::fmt::Display) -> Error {
        Error::State {
            url: self.url.clone(),
            action,
            detail: objects::scrub(&detail.to_string()),
        }
    }

    fn path(&self, relative: &str) -> Result<StorePath> {
        self.objects
            .path(relative)
            .map_err(|e| self.fail("name an object", e))
    }

    fn remembered(&self, relative: &str) -> Option<String> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.get(relative).cloned().flatten()
    }

    fn remember(&self, relative: &str, etag: Option<String>) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.insert(relative.to_owned(), etag);
    }

    fn get(&self, relative: &str) -> Result<Option<Vec<u8>>> {
        let path = self.path(relative)?;
        let got = self.objects.runtime.block_on(async {
            let got = self.objects.store.get(&path).await?;
            let etag = got.meta.e_tag.clone();
            got.bytes().await.map(|b| (b.to_vec(), etag))
        });
        match got {
            Ok((bytes, etag)) => {
                self.remember(relative, etag);
                Ok(Some(bytes))
            }
            Err(object_store::Error::NotFound { .. }) => {
                self.remember(relative, None);
                Ok(None)
            }
            Err(e) => Err(self.fail("read", e)),
        }
    }

    /// The ETag of `relative` now, `None` when it does not exist.
    fn etag(&self, relative: &str) -> Result<Option<String>> {
        let path = self.path(relative)?;
        match self
            .objects
            .runtime
            .block_on(self.objects.store.head(&path))
        {
            Ok(meta) => Ok(meta.e_tag),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.fail("read", e)),
        }
    }

    /// Puts `bytes` at `relative` if its ETag is `expected` (absent when `None`).
    fn put(&self, relative: &str, bytes: Vec<u8>, expected: Option<String>) -> Result<()> {
        let path = self.path(relative)?;
        let mode = match expected {
            Some(e_tag) => PutMode::Update(UpdateVersion {
                e_tag: Some(e_tag),
                version: None,
            }),
            None => PutMode::Create,
        };
        let options = PutOptions {
            mode,
            ..PutOptions::default()
        };
        let put = self.objects.runtime.block_on(self.objects.store.put_opts(
            &path,
            PutPayload::from(bytes),
            options,
        ));
        match put {
            Ok(done) => {
                self.remember(relative, done.e_tag);
                Ok(())
            }
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. }
                | object_store::Error::NotModified { .. },
            ) => Err(Error::StateRace {
                object: format!("{}{relative}", self.url),
            }),
            Err(e) => Err(self.fail("write", e)),
        }
    }

    fn list(&self, relative: &str) -> Result<Vec<String>> {
        let under = self.path(relative.trim_end_matches('/'))?;
        let listed = self
            .objects
            .runtime
            .block_on(self.objects.store.list_with_delimiter(Some(&under)))
            .map_err(|e| self.fail("list", e))?;
        let name = |p: &StorePath| p.filename().map(str::to_owned);
        Ok(listed
            .objects
            .iter()
            .filter_map(|o| name(&o.location))
            .chain(listed.common_prefixes.iter().filter_map(name))
            .collect())
    }
}

/// A local folder for what never leaves this machine (staging, spilled findings, the
/// watch's cache of file fingerprints and its one-watch lock): the state root itself, or
/// with state on S3 `$TMPDIR/wharf-<product>-<hash of the state root>/`.
pub fn scratch(config: &Config) -> PathBuf {
    if !is_s3(&config.state_root) {
        return config.state_root.clone();
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(config.state_root.as_os_str().as_encoded_bytes());
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    std::env::temp_dir().join(format!("wharf-{}-{short}", config.product))
}
