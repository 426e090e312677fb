//! Reading the published Parquet files: [`count_rows`] from the footers, [`parquet_paths`]
//! of a partition, [`read_partition`] as records (through [`super::rows`], as every read of published rows). The files are written by an engine (`crate::engine::local::parquet`).

use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::contract::Schema;
use crate::error::{Error, Result};

/// The rows in every `*.parquet` file of `folder`, from the footers.
pub fn count_rows(folder: &Path) -> Result<u64> {
    let mut rows = 0;
    for path in parquet_paths(folder)? {
        rows += open_reader(&path)?.metadata().file_metadata().num_rows() as u64;
    }
    Ok(rows)
}

/// A reader of the published file `path`; one that cannot be read is corrupt state.
pub fn open_reader(path: &Path) -> Result<SerializedFileReader<File>> {
    let fail = |detail: String| Error::CorruptState {
        path: path.to_owned(),
        detail,
    };
    let file = File::open(path).map_err(|e| fail(e.to_string()))?;
    SerializedFileReader::new(file).map_err(|e| fail(e.to_string()))
}

/// The `*.parquet` files directly in `folder`, sorted by name.
pub fn parquet_paths(folder: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(folder)
        .map_err(|e| Error::io(folder, "list the partition", "check that it is readable", e))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    paths.sort();
    Ok(paths)
}

/// Every row of every `*.parquet` file in `folder`, as records of `schema` (a column the
/// files lack reads as null), read as [`super::rows::Rows`] reads every published row.
pub fn read_partition(folder: &Path, schema: &Schema) -> Result<Vec<crate::contract::Record>> {
    super::rows::Rows::open(folder, schema)?.collect()
}
