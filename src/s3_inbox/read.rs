//! Reading one object (CONTRACT.md §13.3): [`Object`] is what its HEAD or its listing
//! showed (size, ETag); [`ObjectReader`] streams its bytes from an offset as a
//! [`std::io::Read`], so the local pipeline (hash, decode, split, classify) reads it as it
//! reads a file, in bounded memory. Every GET carries `If-Match` with the ETag seen first,
//! so a connection cut or a 503 mid-object costs a resumed range request, and an object
//! replaced while it is read is an error, never a splice of two versions.

use std::collections::VecDeque;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::{GetOptions, GetRange, ObjectStoreExt};
use tokio::sync::mpsc;

use super::{Bucket, locate, object_error, store_path};
use crate::error::Result;

/// Resumes of one read before it fails: each after a connection cut or an error status
/// the store's own retries gave up on.
const RESUMES: u32 = 8;

/// The body is read ahead of the reader in pieces of this size, at most [`AHEAD`] of them
/// waiting: the transfer overlaps the hashing and classifying of what came before, in
/// bounded memory. A piece is the body's own buffers, passed on without a copy.
const PIECE: usize = 1 << 20;
const AHEAD: usize = 4;

/// What an object is, as first seen: every read of it must find these bytes.
#[derive(Clone)]
pub struct Object {
    pub bucket: Arc<Bucket>,
    pub key: String,
    /// `s3://bucket/key`, as errors and reports name it.
    pub url: PathBuf,
    pub size: u64,
    pub etag: Option<String>,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object")
            .field("url", &self.url)
            .field("size", &self.size)
            .field("etag", &self.etag)
            .finish()
    }
}

/// The message of an object that changed while it was read.
pub const CHANGED: &str = "changed while it was read (its ETag is no longer the one first \
                           seen); nothing was written. Land it once its producer has \
                           finished writing it";

impl Object {
    /// The object at `url`, by a HEAD; `None` when there is none (it may be a set).
    pub fn head(url: &std::path::Path) -> Result<Option<Object>> {
        let (bucket, key) = locate(url)?;
        match bucket.block_on(bucket.store.head(&store_path(&key))) {
            Ok(meta) => Ok(Some(Object {
                url: url.to_owned(),
                size: meta.size,
                etag: meta.e_tag,
                bucket,
                key,
            })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(object_error(url, "read the object's metadata", e)),
        }
    }

    /// A reader of its bytes from `offset` on.
    pub fn reader_at(&self, offset: u64) -> ObjectReader {
        ObjectReader {
            object: self.clone(),
            offset,
            stream: None,
            chunks: VecDeque::new(),
            resumes: 0,
        }
    }
}

/// An object's bytes from an offset, as a [`Read`].
pub struct ObjectReader {
    object: Object,
    offset: u64,
    stream: Option<mpsc::Receiver<object_store::Result<Piece>>>,
    /// The current piece's buffers not yet read, the first maybe partly.
    chunks: VecDeque<Bytes>,
    resumes: u32,
}

impl ObjectReader {
    /// Resumes made so far.
    pub fn resumes(&self) -> u32 {
        self.resumes
    }

    /// A GET from the offset, only of the bytes first seen.
    fn open(&mut self) -> std::io::Result<()> {
        let options = GetOptions {
            if_match: self.object.etag.clone(),
            range: (self.offset > 0).then_some(GetRange::Offset(self.offset)),
            ..GetOptions::default()
        };
        let path = store_path(&self.object.key);
        let bucket = &self.object.bucket;
        let got = bucket.block_on(bucket.store.get_opts(&path, options));
        match got {
            // A server that ignores If-Match still names the version it sends.
            Ok(got) if got.meta.e_tag != self.object.etag => Err(std::io::Error::other(Failure {
                changed: true,
                detail: CHANGED.to_owned(),
            })),
            Ok(got) => {
                self.stream = Some(read_ahead(bucket, got.into_stream()));
                Ok(())
            }
            Err(e) => Err(self.failure(e)),
        }
    }

    /// The next bytes of the current GET, `None` at its end.
    fn next(&mut self) -> std::io::Result<Option<Piece>> {
        if self.stream.is_none() {
            self.open()?;
        }
        let Some(stream) = self.stream.as_mut() else {
            return Ok(None);
        };
        match stream.blocking_recv() {
            None => Ok(None),
            Some(Ok(piece)) => Ok(Some(piece)),
            Some(Err(e)) => Err(self.failure(e)),
        }
    }

    fn failure(&self, e: object_store::Error) -> std::io::Error {
        let changed = matches!(
            e,
            object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. }
        );
        let detail = if changed {
            CHANGED.to_owned()
        } else {
            crate::store::objects::scrub(&e.to_string())
        };
        std::io::Error::other(Failure { changed, detail })
    }

    /// After a failed or short GET: waits, then the next one starts where this stopped.
    fn resume(&mut self, why: std::io::Error) -> std::io::Result<()> {
        let changed = why
            .get_ref()
            .and_then(|e| e.downcast_ref::<Failure>())
            .is_some_and(|f| f.changed);
        if changed || self.resumes >= RESUMES {
            return Err(why);
        }
        self.resumes += 1;
        self.stream = None;
        std::thread::sleep(Duration::from_millis(50 << self.resumes.min(5)));
        Ok(())
    }
}

impl Read for ObjectReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(chunk) = self.chunks.front_mut() {
                let n = chunk.len().min(out.len());
                out[..n].copy_from_slice(&chunk[..n]);
                if n == chunk.len() {
                    self.chunks.pop_front();
                } else {
                    *chunk = chunk.slice(n..);
                }
                self.offset += n as u64;
                return Ok(n);
            }
            if self.offset >= self.object.size || out.is_empty() {
                return Ok(0);
            }
            match self.next() {
                Ok(Some(piece)) => self
                    .chunks
                    .extend(piece.into_iter().filter(|c| !c.is_empty())),
                // Ended before the size first seen: the connection closed early.
                Ok(None) => self.resume(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the object ended before its size",
                ))?,
                Err(e) => self.resume(e)?,
            }
        }
    }
}

/// Some of the body's buffers in order, at least [`PIECE`] bytes of them but at the end.
type Piece = Vec<Bytes>;

/// The items of `body` in order, read ahead on the bucket's runtime into pieces (an
/// error comes after every byte before it); dropping the receiver ends the read.
fn read_ahead(
    bucket: &super::Bucket,
    mut body: BoxStream<'static, object_store::Result<Bytes>>,
) -> mpsc::Receiver<object_store::Result<Piece>> {
    let (pieces, received) = mpsc::channel(AHEAD);
    bucket.spawn(async move {
        let (mut piece, mut size) = (Piece::new(), 0);
        while let Some(item) = body.next().await {
            let item = match item {
                Ok(bytes) => {
                    size += bytes.len();
                    piece.push(bytes);
                    if size < PIECE {
                        continue;
                    }
                    size = 0;
                    Ok(std::mem::take(&mut piece))
                }
                Err(e) if piece.is_empty() => Err(e),
                Err(e) => {
                    if pieces.send(Ok(std::mem::take(&mut piece))).await.is_err() {
                        return;
                    }
                    Err(e)
                }
            };
            let end = item.is_err();
            if pieces.send(item).await.is_err() || end {
                return;
            }
        }
        if !piece.is_empty() {
            let _ = pieces.send(Ok(piece)).await; // a dropped reader wants no more
        }
    });
    received
}

/// Why a read of an object failed.
#[derive(Debug)]
struct Failure {
    changed: bool,
    detail: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for Failure {}

/// Whether `e` is a read of an object that changed while it was read.
pub fn is_changed(e: &std::io::Error) -> bool {
    e.get_ref()
        .and_then(|e| e.downcast_ref::<Failure>())
        .is_some_and(|f| f.changed)
}
