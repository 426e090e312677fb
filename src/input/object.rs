//! Where a part's bytes come from: [`Source`], a local file or an object of an S3 inbox
//! (CONTRACT.md §13). [`open`] opens an input named by its URL as [`super::open`] opens a
//! path: one object, or a set (a sub-prefix closed by its marker object), with the same
//! names, so its identity is the one the same delivery has in a local inbox.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::{Codec, Input, Part, check_name_length};
use crate::error::{Error, Result};
use crate::s3_inbox::list::{self, invalid_set, set_etag};
use crate::s3_inbox::read::{Object, is_changed};
use crate::s3_inbox::{locate, object_error};

pub use crate::s3_inbox::read::CHANGED;

/// Where one part's stored bytes are read from.
#[derive(Debug)]
pub enum Source {
    File(File),
    Object(Object),
}

impl Source {
    /// A reader of the stored bytes from `offset` on: the file, sought there, or a GET
    /// of the object from there.
    pub fn reader_at(&self, offset: u64) -> std::io::Result<Box<dyn Read + Send + '_>> {
        match self {
            Source::File(file) => {
                let mut file = file;
                file.seek(SeekFrom::Start(offset))?;
                Ok(Box::new(file))
            }
            Source::Object(object) => Ok(Box::new(object.reader_at(offset))),
        }
    }

    /// The object's ETag, for an object.
    pub fn etag(&self) -> Option<&str> {
        match self {
            Source::File(_) => None,
            Source::Object(object) => object.etag.as_deref(),
        }
    }
}

/// What an S3 input was when it landed (§13.3): its ETag (a set's, over its parts') and
/// size. Discovery tells a landed object from a new one by it, without reading it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ObjectStamp {
    pub etag: String,
    pub size: u64,
}

impl Input {
    /// The stamp of an input read from S3; `None` for a local one.
    pub fn object_stamp(&self) -> Option<ObjectStamp> {
        if !crate::s3_inbox::is_url(&self.path) {
            return None;
        }
        let first = self.parts.first();
        let etag = match (self.set, first) {
            (false, Some(part)) => part.source.etag().unwrap_or_default().to_owned(),
            _ => set_etag(
                self.parts
                    .iter()
                    .map(|p| (p.name.as_str(), p.source.etag(), p.size)),
            ),
        };
        Some(ObjectStamp {
            etag,
            size: self.size,
        })
    }
}

/// The error reading an object failed with: a change is an input error (nothing is
/// landed from a mix), anything else a failure to reach the store.
pub fn read_error(url: &Path, action: &'static str, e: std::io::Error) -> Error {
    if is_changed(&e) {
        return Error::Input {
            path: url.to_owned(),
            message: CHANGED.to_owned(),
        };
    }
    object_error(url, action, e)
}

/// Opens the input at `url` (`s3://bucket/prefix/name`): the object, else the set.
pub fn open(url: &Path, marker: &str) -> Result<Input> {
    let (bucket, key) = locate(url)?;
    let name = key.rsplit('/').next().unwrap_or_default().to_owned();
    if name.is_empty() {
        return Err(Error::Input {
            path: url.to_owned(),
            message: "names no object; pass s3://bucket/prefix/name".to_owned(),
        });
    }
    check_name_length(url, &name)?;
    if let Some(object) = Object::head(url)? {
        let part = part(name.clone(), object);
        return Ok(Input {
            path: url.to_owned(),
            name,
            size: part.size,
            parts: vec![part],
            set: false,
        });
    }
    let listing = list::survey(&bucket, &key, marker)?;
    if listing.newest.is_none() {
        return Err(Error::Input {
            path: url.to_owned(),
            message: "no such object or set in the bucket; check the name (is it still in \
                      the inbox?)"
                .to_owned(),
        });
    }
    if listing.closed.is_none() {
        return Err(Error::Input {
            path: url.to_owned(),
            message: format!(
                "is a set without the marker {marker}: an open set, whose producer may still \
                 be writing it (CONTRACT.md §11); nothing was read or written. Land it once \
                 {marker} exists"
            ),
        });
    }
    if let Some(spoiler) = &listing.invalid {
        return Err(invalid_set(&bucket, spoiler));
    }
    let parts: Vec<Part> = listing
        .parts
        .into_iter()
        .map(|p| {
            let object = Object {
                url: bucket.url_of(&p.key),
                bucket: bucket.clone(),
                key: p.key,
                size: p.size,
                etag: p.etag,
            };
            part(p.name, object)
        })
        .collect();
    Ok(Input {
        path: url.to_owned(),
        name,
        size: parts.iter().map(|p| p.size).sum(),
        parts,
        set: true,
    })
}

fn part(name: String, object: Object) -> Part {
    Part {
        path: object.url.clone(),
        codec: Codec::of(&name),
        name,
        size: object.size,
        modified: None,
        source: Source::Object(object),
    }
}
