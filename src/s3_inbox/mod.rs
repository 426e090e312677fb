//! An inbox on S3 (CONTRACT.md §13). The inbox and its inputs keep their URLs as paths
//! (`s3://bucket/prefix/name`), so everything that takes an input's path takes an
//! object's: [`is_url`] tells them apart, and [`crate::inbox`] and [`crate::input`] hand
//! such paths here.
//!
//! - [`Bucket`]: one bucket's store, from the environment the lake's comes from (§12.7),
//!   with the runtime its connections live on; one per bucket per process.
//! - [`list`]: the objects and sets under a prefix as inbox entries, streamed.
//! - [`read`]: one object read once, resumed with range requests, never spliced.
//! - [`discover`]: `watch`'s discovery, listing after the last key seen and in full
//!   every `rescan`.

pub mod discover;
pub mod list;
pub mod read;

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use object_store::ObjectStore;
use object_store::path::Path as StorePath;

use crate::error::{Error, Result};
use crate::store::objects;

/// Whether `path` is an S3 URL rather than a local path.
pub fn is_url(path: &Path) -> bool {
    path.as_os_str().as_bytes().starts_with(b"s3://")
}

/// One bucket: its store and the runtime its pooled connections belong to.
pub struct Bucket {
    pub name: String,
    pub(crate) store: Arc<dyn ObjectStore>,
    runtime: tokio::runtime::Runtime,
}

impl Bucket {
    /// Runs `future` on the bucket's runtime, from a thread that is not in one.
    pub(crate) fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Runs `future` on the bucket's runtime in the background.
    pub(crate) fn spawn<F>(&self, future: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        self.runtime.spawn(future);
    }

    /// The URL of `key` in this bucket, as inputs are named.
    pub fn url_of(&self, key: &str) -> PathBuf {
        PathBuf::from(format!("s3://{}/{key}", self.name))
    }
}

/// The bucket of `url` (`s3://bucket/...`) and the key it names (no leading `/`).
pub fn locate(url: &Path) -> Result<(Arc<Bucket>, String)> {
    let text = url.to_string_lossy();
    let rest = text.strip_prefix("s3://").unwrap_or(&text);
    let (name, key) = rest.split_once('/').unwrap_or((rest, ""));
    Ok((bucket(url, name)?, key.trim_matches('/').to_owned()))
}

/// The object-store path of `key`, a key as S3 spells it: taken as it is (`Path::from`
/// would percent-encode a `~` or a `[`, naming another object).
pub(crate) fn store_path(key: &str) -> StorePath {
    StorePath::parse(key).unwrap_or_else(|_| StorePath::from(key))
}

/// The store of bucket `name`, made once per process: S3 from the environment's `AWS_*`
/// (never the config), so a credential is never in a URL, a message or a log.
fn bucket(url: &Path, name: &str) -> Result<Arc<Bucket>> {
    static BUCKETS: OnceLock<Mutex<HashMap<String, Arc<Bucket>>>> = OnceLock::new();
    let buckets = BUCKETS.get_or_init(Default::default);
    let mut buckets = buckets.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = buckets.get(name) {
        return Ok(found.clone());
    }
    let fail = |detail: String| Error::Input {
        path: url.to_owned(),
        message: format!(
            "cannot reach the inbox's bucket ({}); nothing was written. {}",
            objects::scrub(&detail),
            objects::HINT
        ),
    };
    let root = url::Url::parse(&format!("s3://{name}/")).map_err(|e| fail(e.to_string()))?;
    let store = objects::connect(&root).map_err(fail)?;
    // Its own threads: a caller's thread blocks on it, and no caller is in a runtime.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("wharf-s3-inbox")
        .enable_all()
        .build()
        .map_err(|e| fail(format!("cannot start the I/O runtime: {e}")))?;
    let made = Arc::new(Bucket {
        name: name.to_owned(),
        store,
        runtime,
    });
    buckets.insert(name.to_owned(), made.clone());
    Ok(made)
}

/// A failure to reach the object at `url` (exit 1, as a disk's would be), its detail
/// scrubbed of credentials.
pub(crate) fn object_error(
    url: &Path,
    action: &'static str,
    detail: impl std::fmt::Display,
) -> Error {
    let detail = objects::scrub(&detail.to_string());
    Error::io(url, action, objects::HINT, std::io::Error::other(detail))
}
