//! EFFECTS, reads only. What a Delta table remembers of the landings (CONTRACT.md §12.2,
//! §12.5): each landing's commit carries the input's identity in `commitInfo`
//! (`operationParameters`: product, input name, SHA-256, a set's parts, run id, the
//! landing's sequence, whether it was a reland) and a `txn` action (`appId` = the product,
//! `version` = the sequence).
//!
//! [`Table::landings`] reads the commits of a range of versions, one small JSON each,
//! never a data file; [`TableLanding`] is one commit as Wharf reads it back. `commitInfo`
//! lives only in the commit files: a Delta checkpoint or a compacted log keeps `txn` (so
//! the last sequence) but not `commitInfo`, so a commit another writer's log clean-up
//! removed is reported as gone, never guessed.

use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStoreExt;
use serde_json::Value;

use super::Table;
use crate::contract::Date;
use crate::error::Result;
use crate::input::PartDigest;

/// How many commit files are fetched at once when a log is read back.
const FETCHES: usize = 16;

/// One commit of the table, as Wharf reads it back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableLanding {
    pub version: u64,
    /// The product `commitInfo` names; empty for another writer's commit.
    pub product: String,
    pub input_name: String,
    pub input_sha256: String,
    pub run_id: String,
    /// The landing's sequence (`txn.version`); `None` for a restore or another writer's.
    pub sequence: Option<u64>,
    /// A landing (not a restore): it has an input's counts or a sequence.
    pub is_landing: bool,
    pub reland: bool,
    pub parts: Vec<PartDigest>,
    /// `acceptedRows`, `rejectedRows`, `retries`, `keys` from `operationMetrics`.
    pub counts: [u64; 4],
    pub timestamp_ms: i64,
    pub tool_version: String,
    /// Files added: path, date, rows.
    pub adds: Vec<(String, Date, u64)>,
    /// Dates whose files the commit removed.
    pub removed_dates: Vec<Date>,
}

/// The commits of a range of versions: those read, and the versions the log no longer holds.
#[derive(Debug, Default)]
pub struct Landings {
    pub commits: Vec<TableLanding>,
    pub gone: Vec<u64>,
}

impl Table {
    /// The commits `from..=to`, read concurrently, in version order.
    pub fn landings(&self, from: u64, to: u64) -> Result<Landings> {
        let store = &self.objects.store;
        let paths: Vec<(u64, object_store::path::Path)> = (from..=to)
            .map(|v| Ok((v, self.store_path(&format!("_delta_log/{v:020}.json"))?)))
            .collect::<Result<_>>()?;
        let fetched: Vec<(u64, Option<bytes::Bytes>)> = self
            .objects
            .runtime
            .block_on(
                futures::stream::iter(paths.into_iter().map(|(v, path)| async move {
                    match store.get(&path).await {
                        Ok(got) => got.bytes().await.map(|b| (v, Some(b))),
                        Err(object_store::Error::NotFound { .. }) => Ok((v, None)),
                        Err(e) => Err(e),
                    }
                }))
                .buffered(FETCHES)
                .try_collect(),
            )
            .map_err(|e| self.error("read the table's log", e))?;
        let mut out = Landings::default();
        for (version, bytes) in fetched {
            match bytes {
                Some(bytes) => out.commits.push(parse_commit(version, &bytes)),
                None => out.gone.push(version),
            }
        }
        Ok(out)
    }

    /// The last landing sequence the table's `txn` actions record for `product` (they
    /// survive checkpoints and log compaction, unlike `commitInfo`).
    pub fn last_sequence(
        &self,
        snapshot: &delta_kernel::SnapshotRef,
        product: &str,
    ) -> Result<Option<u64>> {
        snapshot
            .get_app_id_version(product, self.engine.as_ref())
            .map(|v| v.map(|v| v.max(0) as u64))
            .map_err(|e| self.error("read the table's transactions", e))
    }
}

/// One commit file's actions, as Wharf reads them back; unparsable lines are skipped (a
/// commit of another writer's may carry actions Wharf does not know).
pub fn parse_commit(version: u64, bytes: &[u8]) -> TableLanding {
    let mut landing = TableLanding {
        version,
        ..TableLanding::default()
    };
    for line in bytes.split(|b| *b == b'\n') {
        let Ok(action) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if let Some(info) = action.get("commitInfo") {
            read_info(&mut landing, info);
        } else if let Some(add) = action.get("add") {
            let path = add["path"].as_str().unwrap_or_default().to_owned();
            let date = add["partitionValues"]["event_date"]
                .as_str()
                .and_then(Date::parse);
            let rows = add["stats"]
                .as_str()
                .and_then(|s| serde_json::from_str::<Value>(s).ok())
                .and_then(|s| s["numRecords"].as_u64())
                .unwrap_or(0);
            if let Some(date) = date {
                landing.adds.push((path, date, rows));
            }
        } else if let Some(remove) = action.get("remove") {
            let date = remove["partitionValues"]["event_date"]
                .as_str()
                .and_then(Date::parse)
                .or_else(|| date_of_path(remove["path"].as_str().unwrap_or_default()));
            landing.removed_dates.extend(date);
        } else if let Some(txn) = action.get("txn") {
            let ours = txn["appId"].as_str() == Some(landing.product.as_str());
            if ours || landing.product.is_empty() {
                landing.sequence = txn["version"].as_u64();
            }
        }
    }
    landing.removed_dates.sort();
    landing.removed_dates.dedup();
    landing
}

fn read_info(landing: &mut TableLanding, info: &Value) {
    let parameter = |key: &str| {
        info["operationParameters"][key]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let metric = |key: &str| {
        info["operationMetrics"][key]
            .as_str()
            .and_then(|m| m.parse::<u64>().ok())
    };
    landing.product = parameter("product");
    landing.input_name = parameter("inputName");
    landing.input_sha256 = parameter("inputSha256");
    landing.run_id = parameter("runId");
    landing.tool_version = parameter("toolVersion");
    landing.reland = parameter("reland") == "true";
    landing.parts = serde_json::from_str(&parameter("inputParts")).unwrap_or_default();
    if let Ok(sequence) = parameter("landingSequence").parse::<u64>() {
        landing.sequence = Some(sequence);
    }
    let counts = ["acceptedRows", "rejectedRows", "retries", "keys"].map(metric);
    landing.is_landing = landing.sequence.is_some() || counts[0].is_some();
    landing.counts = counts.map(|c| c.unwrap_or(0));
    landing.timestamp_ms = info["timestamp"].as_i64().unwrap_or(0);
}

/// `event_date=D/…` → D.
fn date_of_path(path: &str) -> Option<Date> {
    path.strip_prefix("event_date=")?
        .split('/')
        .next()
        .and_then(Date::parse)
}

/// What a landing's commit says of its input beyond name and hash (§12.2).
#[derive(Clone, Copy, Debug)]
pub struct Mark<'a> {
    /// The landing's sequence: the `txn` action's version.
    pub sequence: u64,
    /// A set's parts (§11.3); empty for a single file.
    pub parts: &'a [PartDigest],
    /// The operator landed these bytes again (`--reland`).
    pub reland: bool,
}

impl Mark<'_> {
    /// The `commitInfo` parameters it adds.
    pub fn parameters(&self) -> Vec<(&'static str, Option<String>)> {
        let mut out = vec![("landingSequence", Some(self.sequence.to_string()))];
        if !self.parts.is_empty() {
            out.push(("inputParts", serde_json::to_string(self.parts).ok()));
        }
        if self.reland {
            out.push(("reland", Some("true".to_owned())));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_landing_commit_reads_back_its_identity_files_and_sequence() {
        let commit = concat!(
            r#"{"commitInfo":{"timestamp":1700000000000,"operationParameters":{"product":"orders","inputName":"a.jsonl","inputSha256":"ab","runId":"r1","toolVersion":"0.1.0","landingSequence":"7","reland":"true","inputParts":"[{\"name\":\"p1\",\"size\":3,\"sha256\":\"cd\"}]"},"operationMetrics":{"acceptedRows":"3","rejectedRows":"1","retries":"0","keys":"3"}}}"#,
            "\n",
            r#"{"txn":{"appId":"orders","version":7,"lastUpdated":1}}"#,
            "\n",
            r#"{"add":{"path":"event_date=2024-03-01/part-x-00000.parquet","partitionValues":{"event_date":"2024-03-01"},"size":10,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":3}"}}"#,
            "\n",
            r#"{"remove":{"path":"event_date=2024-02-29/part-y-00000.parquet","dataChange":true}}"#,
            "\nnot json\n"
        );
        let read = parse_commit(5, commit.as_bytes());
        assert_eq!(
            (read.version, read.sequence, read.is_landing, read.reland),
            (5, Some(7), true, true)
        );
        assert_eq!(
            (read.product.as_str(), read.input_name.as_str()),
            ("orders", "a.jsonl")
        );
        assert_eq!(read.counts, [3, 1, 0, 3]);
        assert_eq!(read.parts.len(), 1);
        assert_eq!(read.adds[0].2, 3);
        assert_eq!(read.removed_dates, [Date::parse("2024-02-29").unwrap()]);
        // Another writer's commit: no product, no landing.
        let other = parse_commit(6, br#"{"commitInfo":{"operation":"OPTIMIZE"}}"#);
        assert!(!other.is_landing && other.product.is_empty());
    }
}
