//! The locations Spark is given: explicit `file://` URIs of absolute paths, so a cluster
//! whose default file system is HDFS or S3 never resolves them against that, and, for a
//! read, with Hadoop's glob characters escaped, so an input named `a[1].jsonl` is read as
//! that one file and never as a pattern that matches others.

use std::path::Path;

use crate::config::Config;
use crate::error::{Error, Result};

/// Characters Hadoop's glob expands (`GlobPattern`); a backslash escapes each.
const GLOB: [char; 7] = ['\\', '[', ']', '{', '}', '*', '?'];

/// `path` as the `file://` URI Spark writes to: absolute, no escaping (a write does not
/// glob). `what` names the path in the error, e.g. "the staging folder".
pub fn file_uri(path: &Path, what: &str) -> Result<String> {
    let absolute = std::path::absolute(path)
        .map_err(|e| Error::io(path, "resolve a path for Spark", "check the path", e))?;
    let text = absolute.to_str().ok_or_else(|| Error::Input {
        path: path.to_owned(),
        message: format!("{what} is not UTF-8, which Spark cannot address; rename it"),
    })?;
    Ok(format!("file://{text}"))
}

/// `path` as the `file://` URI Spark reads: [`file_uri`] with every glob character
/// escaped, so it names exactly one file or folder.
pub fn read_uri(path: &Path, what: &str) -> Result<String> {
    Ok(escape_glob(&file_uri(path, what)?))
}

/// `relative` under the config's Delta table as the cluster's executors address it:
/// `file:///…` for a local table; for an `s3://` one, `[engine] s3_scheme` (`s3a` by
/// default) over the same bucket and key. Not glob-escaped: see [`table_read_uri`].
pub fn table_uri(config: &Config, relative: &str) -> Result<String> {
    let url = config.lake.table_url().unwrap_or_default();
    let bad = |detail: String| Error::Config {
        path: config.path.clone(),
        message: format!("the table's URL {url:?} {detail}"),
    };
    let parsed = url::Url::parse(url).map_err(|e| bad(format!("is not a URL: {e}")))?;
    if parsed.scheme() == "file" {
        let root = parsed
            .to_file_path()
            .map_err(|()| bad("is not a local path".to_owned()))?;
        return file_uri(&root.join(relative), "the table's folder");
    }
    let path = percent_encoding::percent_decode_str(parsed.path())
        .decode_utf8()
        .map_err(|e| bad(format!("has a key that is not UTF-8: {e}")))?;
    let host = parsed.host_str().unwrap_or_default();
    let root = path.trim_end_matches('/');
    Ok(format!(
        "{}://{host}{root}/{relative}",
        config.engine.s3_scheme()
    ))
}

/// [`table_uri`] for a read: glob characters escaped, so it names that one file.
pub fn table_read_uri(config: &Config, relative: &str) -> Result<String> {
    Ok(escape_glob(&table_uri(config, relative)?))
}

fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if GLOB.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_escapes_every_glob_character_and_nothing_else() {
        let uri = read_uri(Path::new("/in/o[1]*{a,b}?\\ é.jsonl"), "the input").unwrap();
        assert_eq!(uri, r"file:///in/o\[1\]\*\{a,b\}\?\\ é.jsonl");
    }

    #[test]
    fn a_table_is_addressed_as_the_cluster_knows_it() {
        let mut config = crate::config::fixtures::on_table("s3://b/lake/o%20x/");
        let file = "event_date=2024-03-01/part-g-00000.parquet";
        assert_eq!(
            table_uri(&config, file).unwrap(),
            format!("s3a://b/lake/o x/{file}"),
            "S3A by default, the key decoded as Hadoop takes it"
        );
        config.engine.s3_scheme = Some("s3".to_owned());
        assert_eq!(
            table_uri(&config, "_wharf-staging/g/").unwrap(),
            "s3://b/lake/o x/_wharf-staging/g/"
        );
        config = crate::config::fixtures::on_table("file:///lake/o%5B1%5D/");
        assert_eq!(
            table_read_uri(&config, file).unwrap(),
            format!(r"file:///lake/o\[1\]/{file}"),
            "a local table's path, glob-escaped for a read"
        );
    }

    #[test]
    fn a_relative_path_becomes_absolute() {
        let uri = file_uri(Path::new("lake/orders"), "the publish root").unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(uri, format!("file://{}/lake/orders", cwd.display()));
    }
}
