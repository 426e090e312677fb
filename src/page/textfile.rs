//! `wharf run --metrics-file`: the textfile for node_exporter's textfile collector is
//! also the state its series carry from run to run. [`carry_over`] reads the previous
//! file back and adds it into this run's [`Metrics`] (counters, the duration histograms'
//! buckets, sums and counts, the last publish, and the last refusal and last error until
//! a later one supersedes them); [`write`] then replaces the file atomically. A file this
//! version did not write (no [`MARKER`] first line), of another product, or damaged is
//! not merged at all: the run says why and its series start afresh.

use std::collections::BTreeMap;
use std::path::Path;

use super::durations::Durations;
use super::metrics::{
    ACTIONS, DURATION, Failure, LANDINGS_TOTAL, LAST_PUBLISH, Metrics, REJECTED_TOTAL, TIMED,
};
use crate::error::Result;
use crate::store::atomic;

/// The first line of every textfile this version writes (a comment to every parser).
pub const MARKER: &str = "# wharf textfile format 2";

/// Writes the metrics for the textfile collector, atomically (a collector never reads
/// half a file): temp file, fsync, rename.
pub fn write(metrics: &Metrics, path: &Path) -> Result<()> {
    let text = format!(
        "{MARKER}: the next `wharf run --metrics-file` adds to it; edit nothing\n{}",
        metrics.encode()
    );
    // A bare file name's folder is the working directory, which is fsynced by name.
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    atomic::write_atomic(&path, text.as_bytes(), 0o644)
}

/// Adds the series the file at `path` holds into `metrics`. A missing file adds nothing;
/// one that cannot be merged adds nothing either, and the sentence why comes back.
pub fn carry_over(metrics: &Metrics, path: &Path) -> std::result::Result<(), String> {
    let fresh = "so its series start afresh from this run (Prometheus reads the fall as a \
                 counter reset)";
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(format!(
                "{}: cannot be read back ({e}), {fresh}",
                path.display()
            ));
        }
    };
    Carried::parse(&text, metrics.product())
        .and_then(|carried| carried.apply(metrics))
        .map_err(|why| format!("{}: {why}, {fresh}", path.display()))
}

/// One sample line: `name{label="value",…} value`.
#[derive(Debug, PartialEq)]
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

impl Sample {
    /// Parses a line as [`Metrics::encode`] writes it (label values never hold a quote
    /// or a backslash, as [`super::metrics::label`] replaced them).
    fn parse(line: &str) -> std::result::Result<Sample, String> {
        let (series, value) = line.rsplit_once(' ').ok_or("it has no value")?;
        let value: f64 = value
            .parse()
            .map_err(|_| format!("its value {value:?} is not a number"))?;
        let (name, mut rest) = match series.split_once('{') {
            Some((name, rest)) => (
                name,
                rest.strip_suffix('}').ok_or("its labels do not close")?,
            ),
            None => (series, ""),
        };
        let named = |n: &str| {
            !n.is_empty()
                && !n.starts_with(|c: char| c.is_ascii_digit())
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        };
        if !named(name) {
            return Err(format!("{name:?} is not a metric name"));
        }
        let mut labels = Vec::new();
        while !rest.is_empty() {
            let (key, after) = rest
                .split_once("=\"")
                .ok_or("a label has no quoted value")?;
            let (value, after) = after
                .split_once('"')
                .ok_or("a label value does not close")?;
            if !named(key) || value.contains('\\') {
                return Err(format!("the label {key:?} is not as wharf writes it"));
            }
            labels.push((key.to_owned(), value.to_owned()));
            rest = after.strip_prefix(',').unwrap_or(after);
            if !after.is_empty() && !after.starts_with(',') {
                return Err("its labels are not separated by commas".to_owned());
            }
        }
        Ok(Sample {
            name: name.to_owned(),
            labels,
            value,
        })
    }

    fn label(&self, key: &str) -> std::result::Result<&str, String> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| format!("{} has no {key} label", self.name))
    }

    /// The value as a count: a whole number, not negative.
    fn count(&self) -> std::result::Result<u64, String> {
        let v = self.value;
        match v.is_finite() && v >= 0.0 && v.fract() == 0.0 {
            true => Ok(v as u64),
            false => Err(format!("{} is {v}, not a count", self.name)),
        }
    }
}

/// A histogram's sum, count and cumulative buckets as the file has them.
#[derive(Default)]
struct Written {
    sum: f64,
    count: u64,
    buckets: Vec<(f64, u64)>,
}

/// A last failure as the file has it: its time, and its input and reason.
#[derive(Default)]
struct Last {
    at: Option<f64>,
    culprit: Option<(String, String)>,
}

/// What a previous file carries into this run, checked whole before any of it is added.
#[derive(Default)]
struct Carried {
    landings: Vec<(String, u64)>,
    rejected: Vec<(String, u64)>,
    last_publish: Option<f64>,
    durations: BTreeMap<String, Written>,
    last: [Last; 2],
}

const KINDS: [Failure; 2] = [Failure::Refusal, Failure::Error];

impl Carried {
    fn parse(text: &str, product: &str) -> std::result::Result<Carried, String> {
        if !text.starts_with(MARKER) {
            return Err(format!(
                "it was not written by this version of wharf (its first line is not `{MARKER}`)"
            ));
        }
        let mut carried = Carried::default();
        for (n, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            Sample::parse(line)
                .and_then(|sample| carried.take(sample, product))
                .map_err(|why| format!("line {}: {why}", n + 1))?;
        }
        Ok(carried)
    }

    fn take(&mut self, s: Sample, product: &str) -> std::result::Result<(), String> {
        let theirs = s.label("product")?;
        if theirs != product {
            return Err(format!(
                "it holds product {theirs}'s series, not {product}'s"
            ));
        }
        let timed = |s: &Sample| -> std::result::Result<String, String> {
            let action = s.label("action")?;
            match TIMED.contains(&action) {
                true => Ok(action.to_owned()),
                false => Err(format!("{} has an unknown action {action}", s.name)),
            }
        };
        match s.name.as_str() {
            LANDINGS_TOTAL => {
                let action = s.label("action")?;
                if !ACTIONS.contains(&action) {
                    return Err(format!("{LANDINGS_TOTAL} has an unknown action {action}"));
                }
                self.landings.push((action.to_owned(), s.count()?));
            }
            REJECTED_TOTAL => self
                .rejected
                .push((s.label("reason")?.to_owned(), s.count()?)),
            LAST_PUBLISH => self.last_publish = Some(s.value),
            name => {
                if let Some(part) = name.strip_prefix(DURATION) {
                    let written = self.durations.entry(timed(&s)?).or_default();
                    match part {
                        "_sum" => written.sum = s.value,
                        "_count" => written.count = s.count()?,
                        "_bucket" => {
                            let le = s.label("le")?;
                            let le = match le {
                                "+Inf" => f64::INFINITY,
                                _ => le.parse().map_err(|_| format!("le {le:?} is no bound"))?,
                            };
                            written.buckets.push((le, s.count()?));
                        }
                        _ => {}
                    }
                    return Ok(());
                }
                for (kind, last) in KINDS.iter().zip(&mut self.last) {
                    let Some(part) = name.strip_prefix(kind.stem()) else {
                        continue;
                    };
                    match part {
                        "_timestamp_seconds" => last.at = Some(s.value),
                        "_info" => {
                            let culprit = (s.label("input")?.to_owned(), s.label("reason")?);
                            last.culprit = Some((culprit.0, culprit.1.to_owned()));
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Adds it all into `metrics`; nothing when a histogram or a last failure is not
    /// whole.
    fn apply(self, metrics: &Metrics) -> std::result::Result<(), String> {
        let mut durations = Vec::new();
        for (action, written) in self.durations {
            let checked = Durations::default();
            checked
                .add(written.sum, written.count, &written.buckets)
                .map_err(|why| format!("{DURATION}{{action=\"{action}\"}}: {why}"))?;
            durations.push((action, checked));
        }
        let mut lasts = Vec::new();
        for (kind, last) in KINDS.into_iter().zip(self.last) {
            match (last.at, last.culprit) {
                (Some(at), Some((input, reason))) => lasts.push((kind, at, input, reason)),
                (None, None) => {}
                _ => {
                    return Err(format!(
                        "its {} has a time or an _info, not both",
                        kind.stem()
                    ));
                }
            }
        }
        for (action, n) in self.landings {
            metrics.add_landings(&action, n);
        }
        for (reason, lines) in self.rejected {
            metrics.rejected(&reason, lines);
        }
        if let Some(at) = self.last_publish {
            metrics.published_at(at);
        }
        for (action, d) in durations {
            metrics.add_durations(&action, &d);
        }
        for (kind, at, input, reason) in lasts {
            metrics.last_failure(kind, &input, &reason, at);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(text: &str, head: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(head))
            .unwrap_or_else(|| panic!("no {head} in {text}"))
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn every_series_adds_up_and_the_later_failure_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("orders.prom");
        let first = Metrics::new("orders");
        first.landed("published", 1.5);
        first.landed("error", 0.25);
        first.rejected("bad_type", 3);
        first.published_at(1_700_000_000.0);
        first.last_failure(Failure::Refusal, "a.jsonl", "bad_type", 1_700_000_100.0);
        first.last_failure(Failure::Error, "b.jsonl", "error", 1_700_000_200.0);
        write(&first, &path).unwrap();
        let second = Metrics::new("orders");
        second.landed("published", 0.5);
        second.last_failure(Failure::Refusal, "c.jsonl", "too_many", 1_700_000_300.0);
        carry_over(&second, &path).unwrap();
        let text = second.encode();
        let landings = "wharf_landings_total{product=\"orders\",action=";
        assert_eq!(series(&text, &format!("{landings}\"published\"}}")), 2.0);
        assert_eq!(series(&text, &format!("{landings}\"error\"}}")), 1.0);
        let count = "wharf_landing_duration_seconds_count{product=\"orders\",action=";
        assert_eq!(series(&text, &format!("{count}\"published\"}}")), 2.0);
        let sum = "wharf_landing_duration_seconds_sum{product=\"orders\",action=";
        assert_eq!(series(&text, &format!("{sum}\"published\"}}")), 2.0);
        assert_eq!(series(&text, &format!("{sum}\"error\"}}")), 0.25);
        assert_eq!(
            series(
                &text,
                "wharf_rejected_lines_total{product=\"orders\",reason=\"bad_type\"}"
            ),
            3.0
        );
        assert_eq!(
            series(
                &text,
                "wharf_last_publish_timestamp_seconds{product=\"orders\"}"
            ),
            1_700_000_000.0
        );
        let refusal =
            "wharf_last_refusal_info{product=\"orders\",input=\"c.jsonl\",reason=\"too_many\"}";
        assert_eq!(series(&text, refusal), 1.0);
        assert_eq!(
            text.matches("wharf_last_refusal_info{").count(),
            1,
            "{text}"
        );
        let error = "wharf_last_error_info{product=\"orders\",input=\"b.jsonl\",reason=\"error\"}";
        assert_eq!(series(&text, error), 1.0);
        assert_eq!(
            series(
                &text,
                "wharf_last_error_timestamp_seconds{product=\"orders\"}"
            ),
            1_700_000_200.0
        );
    }

    #[test]
    fn an_older_foreign_or_damaged_file_is_not_merged_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("orders.prom");
        let written = Metrics::new("orders");
        written.landed("published", 1.0);
        write(&written, &path).unwrap();
        let good = std::fs::read_to_string(&path).unwrap();
        let older = good.lines().skip(1).collect::<Vec<_>>().join("\n");
        let cases = [
            (older, "not written by this version"),
            (good.replace("\"orders\"", "\"billing\""), "billing"),
            (good.replacen("} 1\n", "} one\n", 1), "line "),
            (good.replace("le=\"0.1\"", "le=\"0.15\""), "buckets"),
        ];
        for (text, says) in cases {
            std::fs::write(&path, text).unwrap();
            let fresh = Metrics::new("orders");
            let why = carry_over(&fresh, &path).unwrap_err();
            assert!(why.contains(says) && why.contains("afresh"), "{why}");
            assert!(
                fresh
                    .encode()
                    .contains("wharf_landings_total{product=\"orders\",action=\"published\"} 0")
            );
        }
        std::fs::remove_file(&path).unwrap();
        assert_eq!(carry_over(&Metrics::new("orders"), &path), Ok(()));
    }

    #[test]
    fn a_sample_line_parses_as_written() {
        let s = Sample::parse("a_total{product=\"o\",input=\"x y,z\"} 3").unwrap();
        assert_eq!(s.name, "a_total");
        assert_eq!(s.labels[1], ("input".to_owned(), "x y,z".to_owned()));
        assert_eq!(s.value, 3.0);
        assert!(Sample::parse("a{product=\"o\"").is_err());
        assert!(Sample::parse("a{product=\"o\"x=\"1\"} 1").is_err());
        assert!(Sample::parse("9a 1").is_err());
    }
}
