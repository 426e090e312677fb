//! [`Metrics`]: one product's Prometheus metrics (`prometheus-client`), fed by
//! [`super::Pager`] and encoded for a scrape of `/metrics` or for the textfile
//! collector ([`Metrics::write_textfile`]). Labels hold the product, an action or a
//! reason code, and the name of a refused input: never a row value.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::error::Result;
use crate::store::atomic;

/// Every action a landing ends in, each counted from zero so `increase()` sees the first.
pub const ACTIONS: [&str; 5] = ["published", "skipped", "refused", "busy", "error"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Product {
    product: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Landing {
    product: String,
    action: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Rejected {
    product: String,
    reason: String,
}

/// The last input refused or failed: which one and why (a code), so an alert names it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Last {
    product: String,
    input: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Build {
    version: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;

/// One product's metrics; clones share the values.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    product: String,
    inputs_waiting: Family<Product, Gauge>,
    bytes_waiting: Family<Product, Gauge>,
    landings: Family<Landing, Counter>,
    rejected: Family<Rejected, Counter>,
    last_publish: Family<Product, FloatGauge>,
    duration: Family<Product, Histogram>,
    freshness_breach: Family<Product, Gauge>,
    busy_seconds: Family<Product, FloatGauge>,
    last_refusal: Family<Last, FloatGauge>,
    last_error: Family<Last, FloatGauge>,
}

impl Metrics {
    pub fn new(product: &str) -> Metrics {
        let product = label(product);
        let durations = || Histogram::new(exponential_buckets(0.05, 2.0, 14));
        let mut metrics = Metrics {
            registry: Arc::default(),
            product: product.clone(),
            inputs_waiting: Family::default(),
            bytes_waiting: Family::default(),
            landings: Family::default(),
            rejected: Family::default(),
            last_publish: Family::default(),
            duration: Family::new_with_constructor(durations),
            freshness_breach: Family::default(),
            busy_seconds: Family::default(),
            last_refusal: Family::default(),
            last_error: Family::default(),
        };
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        for action in ACTIONS {
            let _ = metrics.landings.get_or_create(&metrics.landing(action));
        }
        let build = Family::<Build, Gauge>::default();
        build
            .get_or_create(&Build {
                version: env!("CARGO_PKG_VERSION").to_owned(),
            })
            .set(1);
        registry.register("wharf_build_info", "Wharf's version, as a label", build);
        metrics.registry = Arc::new(registry);
        metrics
    }

    fn register(&self, r: &mut Registry) {
        r.register(
            "wharf_inputs_waiting",
            "Closed inputs in the inbox not landed yet",
            self.inputs_waiting.clone(),
        );
        r.register(
            "wharf_bytes_waiting",
            "Bytes of the closed inputs not landed yet",
            self.bytes_waiting.clone(),
        );
        r.register(
            "wharf_landings",
            "Landings by how they ended",
            self.landings.clone(),
        );
        r.register(
            "wharf_rejected_lines",
            "Rejected or breaching lines by reason code",
            self.rejected.clone(),
        );
        r.register(
            "wharf_last_publish_timestamp_seconds",
            "When the product last published (Unix time)",
            self.last_publish.clone(),
        );
        r.register(
            "wharf_landing_duration_seconds",
            "How long landings took",
            self.duration.clone(),
        );
        r.register(
            "wharf_freshness_breach",
            "1 while the product has not published for max_silence",
            self.freshness_breach.clone(),
        );
        r.register(
            "wharf_busy_seconds",
            "How long the watch has found the product busy (0: not busy)",
            self.busy_seconds.clone(),
        );
        r.register(
            "wharf_last_refusal_timestamp_seconds",
            "When the last refusal happened, naming the input and reason code",
            self.last_refusal.clone(),
        );
        r.register(
            "wharf_last_error_timestamp_seconds",
            "When the last landing error happened, naming the input",
            self.last_error.clone(),
        );
    }

    fn landing(&self, action: &str) -> Landing {
        Landing {
            product: self.product.clone(),
            action: action.to_owned(),
        }
    }

    fn me(&self) -> Product {
        Product {
            product: self.product.clone(),
        }
    }

    /// One landing ended in `action` after `seconds`.
    pub fn landed(&self, action: &str, seconds: f64) {
        self.landings.get_or_create(&self.landing(action)).inc();
        if action != "busy" {
            self.duration.get_or_create(&self.me()).observe(seconds);
        }
    }

    pub fn rejected(&self, reason: &str, lines: u64) {
        let key = Rejected {
            product: self.product.clone(),
            reason: label(reason),
        };
        self.rejected.get_or_create(&key).inc_by(lines);
    }

    pub fn published_at(&self, unix_seconds: f64) {
        self.last_publish
            .get_or_create(&self.me())
            .set(unix_seconds);
    }

    pub fn last_publish(&self) -> Option<f64> {
        self.last_publish.get(&self.me()).map(|g| g.get())
    }

    /// The last refusal (`error` false) or error: the previous one's series is dropped.
    pub fn last_failure(&self, error: bool, input: &str, reason: &str, unix_seconds: f64) {
        let family = if error {
            &self.last_error
        } else {
            &self.last_refusal
        };
        family.clear();
        let key = Last {
            product: self.product.clone(),
            input: label(input),
            reason: label(reason),
        };
        family.get_or_create(&key).set(unix_seconds);
    }

    pub fn waiting(&self, inputs: u64, bytes: u64) {
        self.inputs_waiting
            .get_or_create(&self.me())
            .set(inputs as i64);
        self.bytes_waiting
            .get_or_create(&self.me())
            .set(bytes as i64);
    }

    pub fn freshness_breach(&self, breached: bool) {
        self.freshness_breach
            .get_or_create(&self.me())
            .set(i64::from(breached));
    }

    pub fn busy_for(&self, seconds: f64) {
        self.busy_seconds.get_or_create(&self.me()).set(seconds);
    }

    /// The Prometheus text (format 0.0.4) a scrape and the textfile collector get.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String does not fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        prometheus_text(&text)
    }

    /// Counters and the last publish time of the file a previous run wrote at `path`
    /// carried into these metrics, so the textfile's counters only grow and its last
    /// success survives a run that did not publish. A missing or foreign file adds
    /// nothing.
    pub fn carry_over(&self, path: &Path) {
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((series, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(value) = value.parse::<f64>() else {
                continue;
            };
            let (name, labels) = series.split_once('{').unwrap_or((series, ""));
            let get = |key: &str| label_value(labels, key);
            match (name, get("action"), get("reason")) {
                ("wharf_landings_total", Some(action), _) => {
                    let key = self.landing(&action);
                    self.landings.get_or_create(&key).inc_by(value as u64);
                }
                ("wharf_rejected_lines_total", _, Some(reason)) => {
                    self.rejected(&reason, value as u64);
                }
                ("wharf_last_publish_timestamp_seconds", _, _) => self.published_at(value),
                _ => {}
            }
        }
    }

    /// Writes the metrics for node_exporter's textfile collector, atomically (a
    /// collector never reads half a file): temp file, fsync, rename.
    pub fn write_textfile(&self, path: &Path) -> Result<()> {
        let text = self.encode();
        // A bare file name's folder is the working directory, which is fsynced by name.
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        atomic::write_atomic(&path, text.as_bytes(), 0o644)
    }
}

/// `prometheus-client`'s OpenMetrics text as the Prometheus text format (0.0.4) that
/// every scraper, the textfile collector and `promtool check metrics` parse: a counter's family takes its sample's `_total` name,
/// and the `# EOF` and `# UNIT` lines go.
pub fn prometheus_text(open_metrics: &str) -> String {
    let mut counters = Vec::new();
    for line in open_metrics.lines() {
        if let Some(name) = line
            .strip_prefix("# TYPE ")
            .and_then(|rest| rest.strip_suffix(" counter"))
        {
            counters.push(name.to_owned());
        }
    }
    let mut out = String::with_capacity(open_metrics.len());
    for line in open_metrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = counters.iter().find_map(|name| {
            ["# TYPE ", "# HELP "].iter().find_map(|head| {
                let rest = line.strip_prefix(head)?.strip_prefix(name.as_str())?;
                rest.starts_with(' ')
                    .then(|| format!("{head}{name}_total{rest}"))
            })
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// A label value the text format carries verbatim (`prometheus-client` does not escape):
/// quotes, backslashes and control characters become `_`.
fn label(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// `key`'s value in `a="x",key="y"}` (values as [`label`] wrote them: no escapes).
fn label_value(labels: &str, key: &str) -> Option<String> {
    labels
        .trim_end_matches('}')
        .split("\",")
        .filter_map(|pair| pair.split_once("=\""))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.trim_end_matches('"').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_carry_over_and_the_textfile_names_them_total() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wharf.prom");
        let first = Metrics::new("orders");
        first.landed("published", 1.0);
        first.rejected("bad_type", 3);
        first.published_at(1_700_000_000.0);
        first.write_textfile(&path).unwrap();
        let second = Metrics::new("orders");
        second.carry_over(&path);
        second.landed("refused", 0.5);
        let text = second.encode();
        assert!(
            text.contains("# TYPE wharf_landings_total counter"),
            "{text}"
        );
        assert!(text.contains("wharf_landings_total{product=\"orders\",action=\"published\"} 1"));
        assert!(text.contains("wharf_landings_total{product=\"orders\",action=\"refused\"} 1"));
        assert!(
            text.contains("wharf_rejected_lines_total{product=\"orders\",reason=\"bad_type\"} 3")
        );
        assert!(
            text.contains("wharf_last_publish_timestamp_seconds{product=\"orders\"} 1700000000")
        );
        assert!(!text.contains("# EOF"));
    }

    #[test]
    fn label_values_cannot_break_the_format() {
        assert_eq!(label("a\"b\\c\nd"), "a_b_c_d");
    }
}
