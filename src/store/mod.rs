//! EFFECTS, shared. The dataset and the state on disk as every part of Wharf reads and
//! writes them: crash-safe writes ([`atomic`]), what a merge reads of
//! the published dataset, hive or Delta ([`dataset`]), the failpoints and injected faults that
//! prove them ([`failpoint`]), the published Parquet read back ([`parquet_files`], [`rows`]), every other writer's column read as its field's type or refused ([`conform`]), a table's objects on S3 or a local path ([`objects`]), the
//! checkpoint, manifest and paths ([`state`]) through a local or S3 state root ([`state_store`]), and where merge mode finds a key: the files' footers and filters ([`key_files`]).
//!
//! Both `land` (the landing's steps) and the engines (their row work) use these; neither
//! is used by them, so no two modules import each other.

pub mod atomic;
pub mod conform;
pub mod dataset;
pub mod failpoint;
pub mod findings;
pub mod key_files;
pub mod objects;
pub mod parquet_files;
pub mod rows;
pub mod state;
pub mod state_store;
