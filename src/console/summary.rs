//! [`summarize`]: what the Products screen shows of one product, read now (on a reader
//! thread, never the UI thread) with the core's own readers: the inbox listing, the
//! checkpoints by name, the run log read from its end, the manifest's dates, and a probe
//! of the product's locks. A part that cannot be read is a problem in the summary; the
//! rest still shows.

use super::products::{LastRun, Locks, REFUSALS_READ, Summary};
use crate::config::Config;
use crate::inbox;
use crate::land::{RunStatus, lock, runlog};
use crate::store::state;

/// One product's summary.
pub fn summarize(config: &Config) -> Summary {
    let mut out = Summary::default();
    match inbox::list(&config.inbox, &config.set_marker) {
        Ok(entries) => {
            out.open_sets = entries
                .iter()
                .filter(|e| e.set.as_ref().is_some_and(|s| s.open))
                .count();
            for entry in entries.iter().filter(|e| e.ignored.is_none()) {
                match state::read_checkpoint(config, &entry.name) {
                    Ok(Some(_)) => {}
                    Ok(None) => out.waiting += 1,
                    Err(e) => out.problems.push(e.to_string()),
                }
            }
        }
        Err(e) => out.problems.push(e.to_string()),
    }
    match runlog::newest(config, REFUSALS_READ) {
        Ok(runs) => {
            out.last = runs.first().map(|run| LastRun {
                action: run.action.clone(),
                reason: run.reason.clone(),
                age_secs: age(&run.time),
            });
            out.refusals = runs
                .iter()
                .take_while(|run| run.action != RunStatus::Published.code())
                .filter(|run| run.action == RunStatus::Refused.code())
                .count();
        }
        Err(e) => out.problems.push(e.to_string()),
    }
    let fresh = crate::page::freshness::of(config);
    out.stale_secs = fresh.age.filter(|_| fresh.breached()).map(|a| a.as_secs());
    match state::read_manifest(config) {
        Ok(manifest) => out.newest_date = manifest.dates.keys().next_back().cloned(),
        Err(e) => out.problems.push(e.to_string()),
    }
    let mut probe = |name| match lock::held(config, name) {
        Ok(held) => held,
        Err(e) => {
            out.problems.push(e.to_string());
            false
        }
    };
    out.locks = Locks {
        run: probe(lock::RUN),
        watch: probe(lock::WATCH),
    };
    out
}

/// Seconds since the run log's `time` (RFC 3339, UTC), if it parses and is not ahead.
fn age(time: &str) -> Option<u64> {
    let then = chrono::DateTime::parse_from_rfc3339(time).ok()?;
    let secs = (chrono::Utc::now() - then.to_utc()).num_seconds();
    u64::try_from(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::age;

    #[test]
    fn a_runs_age_is_read_from_its_time() {
        let an_hour_ago = (chrono::Utc::now() - chrono::Duration::hours(1))
            .format("%Y-%m-%dT%H:%M:%S%.6fZ")
            .to_string();
        let secs = age(&an_hour_ago).expect("parses");
        assert!((3599..3700).contains(&secs), "{secs}");
        assert_eq!(age("not a time"), None);
        assert_eq!(age("2999-01-01T00:00:00Z"), None, "a time ahead has no age");
    }
}
