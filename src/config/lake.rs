//! The lake a product publishes into (CONTRACT.md §12), one value parsed from the
//! config's `publish_root` and `table_format`: [`Lake::Hive`], folders under a local
//! path, or [`Lake::Delta`], a table at a URL. A URL for a hive lake, or a Delta table
//! without one, cannot be stated. Code outside `land/` asks the lake where it is, never
//! which format it has: `land::root::PublishRoot` answers the rest.

use std::path::{Path, PathBuf};

/// Where a product's published dataset lives, and in which format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lake {
    /// `event_date=D` folders under a local folder, each swapped in by rename (§6).
    Hive(PathBuf),
    /// A Delta table: one commit per landing, on a local path or S3.
    Delta {
        /// `file:///…/` for a local table, or the `s3://bucket/prefix/` given.
        url: String,
        /// The local table's folder; for S3, the URL as a path, which only shows it.
        root: PathBuf,
    },
}

impl Lake {
    /// The `publish_root` the config names, resolved: the hive folder or the local
    /// table's folder (an S3 table's URL, as a path, names nothing on disk).
    pub fn publish_root(&self) -> &Path {
        match self {
            Lake::Hive(folder) => folder,
            Lake::Delta { root, .. } => root,
        }
    }

    /// How records and reports name the lake: a table's URL, or the hive folder's path.
    pub fn location(&self) -> String {
        match self {
            Lake::Hive(folder) => folder.display().to_string(),
            Lake::Delta { url, .. } => url.clone(),
        }
    }

    /// The Delta table's URL; `None` for hive folders.
    pub fn table_url(&self) -> Option<&str> {
        match self {
            Lake::Hive(_) => None,
            Lake::Delta { url, .. } => Some(url),
        }
    }

    /// The folder on this machine's file system that holds the lake; `None` for a table
    /// on S3, which shares no file system with the local roots.
    pub fn local_folder(&self) -> Option<&Path> {
        match self {
            Lake::Hive(folder) => Some(folder),
            Lake::Delta { url, root } => url.starts_with("file://").then_some(root.as_path()),
        }
    }
}

/// The lake of `publish_root` and `table_format` (paths relative to the config's
/// `folder`). An `s3://bucket/prefix` root must be a Delta table: Hive folders cannot be
/// swapped atomically without a rename.
pub(super) fn parse(
    folder: &Path,
    root: Option<String>,
    format: Option<String>,
    product: &str,
) -> Result<Lake, String> {
    let root = root.unwrap_or_else(|| format!("lake/{product}"));
    let delta = match format.as_deref() {
        None | Some("hive") => false,
        Some("delta") => true,
        Some(other) => {
            return Err(format!(
                "table_format = {other:?} is not a format; use \"hive\" or \"delta\""
            ));
        }
    };
    if let Some(rest) = root.strip_prefix("s3://") {
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let prefix = prefix.trim_matches('/');
        if bucket.is_empty() || prefix.is_empty() {
            return Err(format!(
                "publish_root = {root:?} must name a bucket and a prefix: s3://bucket/prefix"
            ));
        }
        if !delta {
            return Err(format!(
                "publish_root = {root:?} is on S3, which has no atomic rename for Hive folders; \
                 set table_format = \"delta\""
            ));
        }
        let url = format!("s3://{bucket}/{prefix}/");
        let root = PathBuf::from(&url);
        return Ok(Lake::Delta { url, root });
    }
    if root.contains("://") {
        return Err(format!(
            "publish_root = {root:?}: only local paths and s3:// URLs are supported"
        ));
    }
    let path = super::resolve(folder, &root);
    Ok(match delta {
        true => Lake::Delta {
            url: format!("file://{}/", path.display()),
            root: path,
        },
        false => Lake::Hive(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::{on_table, orders};

    #[test]
    fn a_lake_is_named_by_its_url_or_its_folder() {
        let hive = orders().lake;
        assert_eq!(hive.location(), "/lake/orders");
        assert_eq!(hive.local_folder(), Some(Path::new("/lake/orders")));
        let s3 = on_table("s3://b/lake/o/").lake;
        assert_eq!(s3.location(), "s3://b/lake/o/");
        assert_eq!(
            (s3.table_url(), s3.local_folder()),
            (Some("s3://b/lake/o/"), None)
        );
        let local = parse(Path::new("/cfg"), None, Some("delta".into()), "o").unwrap();
        assert_eq!(local.location(), "file:///cfg/lake/o/");
        assert_eq!(local.local_folder(), Some(Path::new("/cfg/lake/o")));
        assert_eq!(local.publish_root(), Path::new("/cfg/lake/o"));
    }
}
