//! EFFECTS. Objects under a table's root URL (`s3://bucket/prefix` or `file:///path`)
//! through `object_store`: [`connect`] builds the store (S3 from the environment's
//! `AWS_*`, never the config; a local file system with fsync), [`put_file`] uploads a
//! local file (multipart above [`PART_BYTES`], so memory stays bounded), and [`scrub`]
//! masks every credential in a message. [`Objects`] is the same for a caller that owns
//! no Delta table (the Spark engine's handoff).

use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};

use crate::error::{Error, Result};

/// Files above this size are uploaded in parts of this size (S3's multipart minimum is
/// 5 MiB); the buffer in flight is bounded by a few parts.
pub const PART_BYTES: usize = 8 << 20;

/// The table folder Wharf's own transient files are written in, under the table root: a
/// name Delta readers never list (they read the log) and hive readers skip.
pub const TABLE_STAGING: &str = "_wharf-staging";

/// What to check and set when the table cannot be reached; names variables, never values.
pub const HINT: &str = "check the URL, and for S3 the environment: AWS_ENDPOINT_URL (and \
                        AWS_ALLOW_HTTP=true for a plain-http endpoint), AWS_REGION, \
                        AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; then rerun. Nothing \
                        published changed";

/// The store of the table at `root`: S3 from the environment, else the local file system,
/// whose files are made durable before a commit names them.
pub fn connect(root: &url::Url) -> std::result::Result<Arc<dyn ObjectStore>, String> {
    if root.scheme() == "s3" {
        let built = object_store::aws::AmazonS3Builder::from_env()
            .with_url(root.as_str())
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Arc::new(built))
    } else {
        Ok(Arc::new(
            object_store::local::LocalFileSystem::new().with_fsync(true),
        ))
    }
}

/// Uploads the local file `local` to `target`; its size.
pub async fn put_file(
    store: &dyn ObjectStore,
    target: &StorePath,
    local: &Path,
) -> std::result::Result<u64, String> {
    let mut source = std::fs::File::open(local).map_err(|e| e.to_string())?;
    let size = source.metadata().map(|m| m.len()).unwrap_or(0);
    if size <= PART_BYTES as u64 {
        let mut bytes = Vec::with_capacity(size as usize);
        source.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        store
            .put(target, bytes.into())
            .await
            .map_err(|e| e.to_string())?;
        return Ok(size);
    }
    let upload = store
        .put_multipart(target)
        .await
        .map_err(|e| e.to_string())?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
    let mut buffer = vec![0; PART_BYTES];
    loop {
        let read = source.read(&mut buffer).map_err(|e| e.to_string())?;
        if read == 0 {
            break;
        }
        // Bounded memory: at most a few parts in flight.
        writer
            .wait_for_capacity(2)
            .await
            .map_err(|e| e.to_string())?;
        writer.write(&buffer[..read]);
    }
    writer.finish().await.map_err(|e| e.to_string())?;
    Ok(size)
}

/// `text` with every credential value of the environment masked: a store's error may
/// quote a request, and a secret must never reach a message, a log or the console.
pub fn scrub(text: &str) -> String {
    let mut out = text.to_owned();
    for name in [
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_ACCESS_KEY_ID",
    ] {
        if let Ok(value) = std::env::var(name)
            && value.len() >= 4
        {
            out = out.replace(&value, &format!("<{name}>"));
        }
    }
    out
}

/// The objects under one table root, with a runtime of their own.
pub struct Objects {
    pub(crate) url: String,
    pub(crate) root: url::Url,
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) runtime: tokio::runtime::Runtime,
}

impl Objects {
    /// The objects under `url`, the table's root.
    pub fn open(url: &str) -> Result<Objects> {
        let fail = |detail: String| Error::Table {
            url: url.to_owned(),
            action: "open the table's storage",
            detail: scrub(&detail),
            hint: HINT.to_owned(),
        };
        let root = url::Url::parse(url).map_err(|e| fail(e.to_string()))?;
        let store = connect(&root).map_err(fail)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(format!("cannot start the I/O runtime: {e}")))?;
        Ok(Objects {
            url: url.to_owned(),
            root,
            store,
            runtime,
        })
    }

    pub(crate) fn error(&self, action: &'static str, detail: impl std::fmt::Display) -> Error {
        Error::Table {
            url: self.url.clone(),
            action,
            detail: scrub(&detail.to_string()),
            hint: HINT.to_owned(),
        }
    }

    /// The object-store path of `relative` under the root.
    pub(crate) fn path(&self, relative: &str) -> Result<StorePath> {
        let full = self
            .root
            .join(relative)
            .map_err(|e| self.error("name an object", e))?;
        StorePath::from_url_path(full.path()).map_err(|e| self.error("name an object", e))
    }

    /// Uploads `local` to `relative` under the root; its size.
    pub fn put_file(&self, local: &Path, relative: &str) -> Result<u64> {
        let target = self.path(relative)?;
        let put = self
            .runtime
            .block_on(put_file(&*self.store, &target, local));
        put.map_err(|e| self.error("upload a file", e))
    }

    /// Deletes `relative`; one already gone is no error.
    pub fn delete(&self, relative: &str) -> Result<()> {
        let target = self.path(relative)?;
        match self.runtime.block_on(self.store.delete(&target)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error("delete a file", e)),
        }
    }

    /// The objects under `prefix` (relative to the root) last modified `age` ago or more,
    /// relative to the root.
    pub fn list_older(&self, prefix: &str, age: Duration) -> Result<Vec<String>> {
        let under = self.path(prefix)?;
        let root = self.path("")?;
        let listed: Vec<object_store::ObjectMeta> = self
            .runtime
            .block_on(self.store.list(Some(&under)).try_collect())
            .map_err(|e| self.error("list the staging folder", e))?;
        let cutoff = chrono::Utc::now() - chrono::Duration::from_std(age).unwrap_or_default();
        Ok(listed
            .into_iter()
            .filter(|meta| meta.last_modified <= cutoff)
            .filter_map(|meta| {
                meta.location
                    .as_ref()
                    .strip_prefix(root.as_ref())
                    .map(|r| r.trim_start_matches('/').to_owned())
            })
            .collect())
    }
}
