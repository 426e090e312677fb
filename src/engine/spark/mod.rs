//! The Spark engine (feature `spark`): the row work of a landing done by a Spark cluster
//! through Spark Connect. [`merge`] is merge mode (CONTRACT.md §10) on Spark.

pub mod merge;
