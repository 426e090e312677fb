//! EFFECTS. A folder inside the table's storage that a cluster's executors write a
//! landing's files into (CONTRACT.md §12.1, the Spark engine): listed and emptied through
//! the table's store, its files moved to the table's names and their row counts read from
//! their footers, so the commit adds exactly what that run wrote, as it holds.

use futures::TryStreamExt;
use object_store::ObjectStoreExt;
use parquet::file::FOOTER_SIZE;
use parquet::file::metadata::{FooterTail, ParquetMetaDataReader};

use super::Table;
use crate::engine::TableFolder;
use crate::error::Result;

/// Where a landing's executors write: `_wharf-staging/<generation>/` under the table
/// root, a name Delta readers never list (they read the log) and hive readers skip.
pub fn staging_folder(generation: &str) -> String {
    format!("{STAGING}/{generation}/")
}

/// The table folder every landing's staging folder is in.
pub const STAGING: &str = crate::store::objects::TABLE_STAGING;

/// A staging folder of `table`, as an engine sees it.
pub struct InTable<'a> {
    pub table: &'a Table,
    pub relative: String,
}

impl TableFolder for InTable<'_> {
    fn relative(&self) -> &str {
        &self.relative
    }

    fn list(&self) -> Result<Vec<String>> {
        Ok(self
            .table
            .list_under(&self.relative)?
            .into_iter()
            .map(|(path, _)| path)
            .collect())
    }
}

impl Table {
    /// Every object under `prefix` (relative to the root, ending in `/`), with its size,
    /// as paths relative to `prefix`.
    pub fn list_under(&self, prefix: &str) -> Result<Vec<(String, u64)>> {
        let base = self.store_path(prefix)?;
        let listed: std::result::Result<Vec<object_store::ObjectMeta>, _> = self
            .objects
            .runtime
            .block_on(self.objects.store.list(Some(&base)).try_collect());
        let listed = listed.map_err(|e| self.error("list a staging folder", e))?;
        let mut out = Vec::with_capacity(listed.len());
        for meta in listed {
            let full = meta.location.as_ref();
            let relative = full
                .strip_prefix(base.as_ref())
                .map(|rest| rest.trim_start_matches('/'))
                .unwrap_or(full);
            let decoded = percent_encoding::percent_decode_str(relative).decode_utf8_lossy();
            out.push((decoded.into_owned(), meta.size));
        }
        out.sort();
        Ok(out)
    }

    /// Moves the object `from` to `to` (both relative to the root): a rename on a local
    /// disk, a server-side copy and delete on S3.
    pub fn move_file(&self, from: &str, to: &str) -> Result<()> {
        let (from, to) = (self.store_path(from)?, self.store_path(to)?);
        self.objects
            .runtime
            .block_on(self.objects.store.rename(&from, &to))
            .map_err(|e| self.error("move a written file into the table", e))
    }

    /// Deletes everything under `prefix` (relative to the root, ending in `/`), and on a
    /// local disk the emptied folders too.
    pub fn delete_under(&self, prefix: &str) -> Result<()> {
        let paths: Vec<String> = self
            .list_under(prefix)?
            .into_iter()
            .map(|(path, _)| format!("{prefix}{path}"))
            .collect();
        self.delete(&paths)?;
        if let Some(folder) = self.local_path(prefix) {
            match std::fs::remove_dir_all(&folder) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(crate::error::Error::io(
                        &folder,
                        "remove a staging folder",
                        "check the table's folder is writable",
                        e,
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The rows and bytes of the Parquet file `path` (relative to the root), from its
    /// footer: two ranged reads, never the whole file.
    pub fn rows_and_size(&self, path: &str) -> Result<(u64, u64)> {
        let location = self.store_path(path)?;
        let fail = |e: String| self.error("read a written file's footer", format!("{path}: {e}"));
        let read = self.objects.runtime.block_on(async {
            let size = self
                .objects
                .store
                .head(&location)
                .await
                .map_err(|e| e.to_string())?
                .size;
            if size < FOOTER_SIZE as u64 {
                return Err(format!("{size} bytes is no Parquet file"));
            }
            let tail = self
                .objects
                .store
                .get_range(&location, size - FOOTER_SIZE as u64..size)
                .await
                .map_err(|e| e.to_string())?;
            let tail: [u8; FOOTER_SIZE] = tail[..].try_into().map_err(|_| "a short read")?;
            let length = FooterTail::try_new(&tail)
                .map_err(|e| e.to_string())?
                .metadata_length() as u64;
            let start = (size - FOOTER_SIZE as u64)
                .checked_sub(length)
                .ok_or("a footer longer than the file")?;
            let footer = self
                .objects
                .store
                .get_range(&location, start..size - FOOTER_SIZE as u64)
                .await
                .map_err(|e| e.to_string())?;
            let metadata =
                ParquetMetaDataReader::decode_metadata(&footer).map_err(|e| e.to_string())?;
            Ok((metadata.file_metadata().num_rows() as u64, size))
        });
        read.map_err(fail)
    }
}
