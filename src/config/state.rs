//! Where the state and quarantine roots are (CONTRACT.md §13.4): local paths, or with a
//! Delta table on S3 an `s3://bucket/prefix/` each, kept as its URL. A hive lake keeps a
//! local state root: its lock is an OS file lock, which machines sharing S3 cannot take.

use std::path::PathBuf;

/// `value` as an S3 prefix URL (`s3://bucket/prefix/`), `None` for a local path; an S3
/// root without a Delta table on S3, or another URL, is refused naming `name`.
pub fn location(
    name: &str,
    value: Option<&str>,
    s3_table: bool,
) -> Result<Option<PathBuf>, String> {
    let Some(value) = value.filter(|v| v.contains("://")) else {
        return Ok(None);
    };
    let Some(rest) = value.strip_prefix("s3://") else {
        return Err(format!(
            "{name} = {value:?} is a URL Wharf does not write to; use a local path, or \
             s3://bucket/prefix/ with a Delta table on S3"
        ));
    };
    if !s3_table {
        return Err(format!(
            "{name} = {value:?} is on S3, which requires a Delta table on S3 (publish_root = \
             \"s3://…\" with table_format = \"delta\"): the Delta commit is then the product's \
             lock. A hive lake, or a local table, keeps {name} a local path"
        ));
    }
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let prefix = prefix.trim_matches('/');
    if bucket.is_empty() || prefix.is_empty() {
        return Err(format!(
            "{name} = {value:?} must name a bucket and a prefix: s3://bucket/prefix/"
        ));
    }
    Ok(Some(PathBuf::from(format!("s3://{bucket}/{prefix}/"))))
}

/// Refuses two roots on S3 where one is inside the other (the same prefix included): the
/// inbox would list Wharf's own objects, and the table's readers would see state.
pub fn check_apart(roots: &[(&str, &PathBuf)]) -> Result<(), String> {
    let on_s3: Vec<(&str, String)> = roots
        .iter()
        .filter(|(_, p)| crate::s3_inbox::is_url(p))
        .map(|(n, p)| {
            let url = p.to_string_lossy();
            (*n, format!("{}/", url.trim_end_matches('/')))
        })
        .collect();
    for (i, (a, ua)) in on_s3.iter().enumerate() {
        for (b, ub) in &on_s3[i + 1..] {
            if ua.starts_with(ub.as_str()) || ub.starts_with(ua.as_str()) {
                return Err(format!(
                    "{a} ({ua}) and {b} ({ub}) overlap; they must be separate prefixes, \
                     neither inside the other"
                ));
            }
        }
    }
    Ok(())
}
