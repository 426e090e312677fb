//! [`Metrics`]: one product's Prometheus metrics (`prometheus-client`), fed by
//! [`super::Pager`] and encoded for a scrape of `/metrics` or for the textfile
//! collector ([`super::textfile`]). Every series carries the product, so two products'
//! textfiles share one node_exporter folder. Labels hold the product, an action, a reason
//! code, the version, and (on the `_info` series of the last refusal and last error
//! only, one live series each) the name of the input: never a row value.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::durations::Durations;

/// Every action a landing ends in, each counted from zero so `increase()` sees the first.
pub const ACTIONS: [&str; 5] = ["published", "skipped", "refused", "busy", "error"];
/// The actions whose durations are observed: a busy landing stops at the lock, so its
/// time says nothing about landing.
pub const TIMED: [&str; 4] = ["published", "skipped", "refused", "error"];

/// The names the textfile is read back by (the counters with their `_total`).
pub const LANDINGS_TOTAL: &str = "wharf_landings_total";
pub const REJECTED_TOTAL: &str = "wharf_rejected_lines_total";
pub const LAST_PUBLISH: &str = "wharf_last_publish_timestamp_seconds";
pub const DURATION: &str = "wharf_landing_duration_seconds";

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

/// Which input failed last and why (a code), so an alert names it.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Culprit {
    product: String,
    input: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Build {
    product: String,
    version: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;
type DurationFamily = Family<Landing, Durations>;

/// The two kinds of failure whose last one is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    Refusal,
    Error,
}

impl Failure {
    /// The stem of its two series: `wharf_last_refusal` or `wharf_last_error`.
    pub fn stem(self) -> &'static str {
        match self {
            Failure::Refusal => "wharf_last_refusal",
            Failure::Error => "wharf_last_error",
        }
    }

    /// What it is, for a help text.
    fn what(self) -> &'static str {
        match self {
            Failure::Refusal => "refusal",
            Failure::Error => "landing error",
        }
    }
}

/// The last failure of a kind: when (`…_timestamp_seconds{product}`) and which input and
/// reason (`…_info{product,input,reason} 1`, one live series).
#[derive(Clone, Default)]
struct LastFailure {
    at: Family<Product, FloatGauge>,
    culprit: Family<Culprit, Gauge>,
}

/// One product's metrics; clones share the values.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    product: String,
    inputs_waiting: Family<Product, Gauge>,
    waiting_bytes: Family<Product, Gauge>,
    landings: Family<Landing, Counter>,
    rejected: Family<Rejected, Counter>,
    last_publish: Family<Product, FloatGauge>,
    duration: DurationFamily,
    freshness_breach: Family<Product, Gauge>,
    max_silence: Family<Product, FloatGauge>,
    busy_seconds: Family<Product, FloatGauge>,
    last_refusal: LastFailure,
    last_error: LastFailure,
    /// Held while a last failure's pair of series changes and while encoding, so a
    /// scrape never pairs one failure's time with another's input.
    pairs: Arc<Mutex<()>>,
}

impl Metrics {
    pub fn new(product: &str) -> Metrics {
        let product = label(product);
        let mut metrics = Metrics {
            registry: Arc::default(),
            product: product.clone(),
            inputs_waiting: Family::default(),
            waiting_bytes: Family::default(),
            landings: Family::default(),
            rejected: Family::default(),
            last_publish: Family::default(),
            duration: Family::default(),
            freshness_breach: Family::default(),
            max_silence: Family::default(),
            busy_seconds: Family::default(),
            last_refusal: LastFailure::default(),
            last_error: LastFailure::default(),
            pairs: Arc::default(),
        };
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        for action in ACTIONS {
            let _ = metrics.landings.get_or_create(&metrics.landing(action));
        }
        for action in TIMED {
            let _ = metrics.duration.get_or_create(&metrics.landing(action));
        }
        let build = Family::<Build, Gauge>::default();
        build
            .get_or_create(&Build {
                product,
                version: env!("CARGO_PKG_VERSION").to_owned(),
            })
            .set(1);
        registry.register("wharf_build_info", "Wharf's version, as a label", build);
        metrics.registry = Arc::new(registry);
        metrics
    }

    fn register(&self, r: &mut Registry) {
        let gauges = [
            (
                "wharf_inputs_waiting",
                "Closed inputs in the inbox not landed yet",
                &self.inputs_waiting,
            ),
            (
                "wharf_waiting_bytes",
                "Bytes of the closed inputs not landed yet",
                &self.waiting_bytes,
            ),
            (
                "wharf_freshness_breach",
                "1 while the product has not published for max_silence",
                &self.freshness_breach,
            ),
        ];
        for (name, help, family) in gauges {
            r.register(name, help, family.clone());
        }
        let float_gauges = [
            (
                LAST_PUBLISH,
                "When the product last published (Unix time)",
                &self.last_publish,
            ),
            (
                "wharf_max_silence_seconds",
                "The product's max_silence (absent when it has none)",
                &self.max_silence,
            ),
            (
                "wharf_busy_seconds",
                "How long the watch has found the product busy (0: not busy)",
                &self.busy_seconds,
            ),
        ];
        for (name, help, family) in float_gauges {
            r.register(name, help, family.clone());
        }
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
            DURATION,
            "How long landings took, by how they ended",
            self.duration.clone(),
        );
        for (kind, last) in [
            (Failure::Refusal, &self.last_refusal),
            (Failure::Error, &self.last_error),
        ] {
            let (stem, what) = (kind.stem(), kind.what());
            r.register(
                format!("{stem}_timestamp_seconds"),
                format!("When the last {what} happened (Unix time)"),
                last.at.clone(),
            );
            r.register(
                format!("{stem}_info"),
                format!("The last {what}'s input and reason code, as labels (1)"),
                last.culprit.clone(),
            );
        }
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

    fn pairs(&self) -> MutexGuard<'_, ()> {
        self.pairs
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// One landing ended in `action` after `seconds` (busy ones are counted, not timed).
    pub fn landed(&self, action: &str, seconds: f64) {
        self.landings.get_or_create(&self.landing(action)).inc();
        if TIMED.contains(&action) {
            self.duration
                .get_or_create(&self.landing(action))
                .observe(seconds);
        }
    }

    /// `landings` more landings that ended in `action`, as a previous run counted them.
    pub fn add_landings(&self, action: &str, landings: u64) {
        self.landings
            .get_or_create(&self.landing(action))
            .inc_by(landings);
    }

    /// The durations a previous run observed for `action`.
    pub fn add_durations(&self, action: &str, durations: &Durations) {
        self.duration
            .get_or_create(&self.landing(action))
            .absorb(durations);
    }

    pub fn rejected(&self, reason: &str, lines: u64) {
        let key = Rejected {
            product: self.product.clone(),
            reason: label(reason),
        };
        self.rejected.get_or_create(&key).inc_by(lines);
    }

    /// The product published at `unix_seconds`, unless a later publish is known.
    pub fn published_at(&self, unix_seconds: f64) {
        let gauge = self.last_publish.get_or_create(&self.me());
        if gauge.get() < unix_seconds {
            gauge.set(unix_seconds);
        }
    }

    pub fn last_publish(&self) -> Option<f64> {
        self.last_publish.get(&self.me()).map(|g| g.get())
    }

    /// A `kind` failure of `input` for `reason` at `unix_seconds`: it supersedes the
    /// last one (whose `_info` series goes) unless that one is later.
    pub fn last_failure(&self, kind: Failure, input: &str, reason: &str, unix_seconds: f64) {
        let last = match kind {
            Failure::Refusal => &self.last_refusal,
            Failure::Error => &self.last_error,
        };
        let _pairs = self.pairs();
        let at = last.at.get_or_create(&self.me());
        if at.get() > unix_seconds {
            return;
        }
        at.set(unix_seconds);
        last.culprit.clear();
        let culprit = Culprit {
            product: self.product.clone(),
            input: label(input),
            reason: label(reason),
        };
        last.culprit.get_or_create(&culprit).set(1);
    }

    pub fn waiting(&self, inputs: u64, bytes: u64) {
        self.inputs_waiting
            .get_or_create(&self.me())
            .set(inputs as i64);
        self.waiting_bytes
            .get_or_create(&self.me())
            .set(bytes as i64);
    }

    pub fn freshness_breach(&self, breached: bool) {
        self.freshness_breach
            .get_or_create(&self.me())
            .set(i64::from(breached));
    }

    /// The product's `max_silence`, for a rule that reads the last publish against it.
    pub fn max_silence(&self, seconds: f64) {
        self.max_silence.get_or_create(&self.me()).set(seconds);
    }

    pub fn busy_for(&self, seconds: f64) {
        self.busy_seconds.get_or_create(&self.me()).set(seconds);
    }

    /// The Prometheus text (format 0.0.4) a scrape and the textfile collector get.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        {
            let _pairs = self.pairs();
            // Writing into a String does not fail.
            let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        }
        prometheus_text(&text)
    }

    pub fn product(&self) -> &str {
        &self.product
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
pub fn label(value: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_keeps_one_live_info_series_per_kind_and_ignores_an_older_failure() {
        let metrics = Metrics::new("orders");
        metrics.last_failure(Failure::Refusal, "a.jsonl", "bad_type", 100.0);
        metrics.last_failure(Failure::Refusal, "b.jsonl", "too_many_dates", 200.0);
        metrics.last_failure(Failure::Refusal, "old.jsonl", "shrink", 150.0);
        metrics.last_failure(Failure::Error, "c.jsonl", "error", 300.0);
        let text = metrics.encode();
        let infos: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("wharf_last_refusal_info{"))
            .collect();
        assert_eq!(
            infos,
            [
                "wharf_last_refusal_info{product=\"orders\",input=\"b.jsonl\",reason=\"too_many_dates\"} 1"
            ]
        );
        assert!(text.contains("wharf_last_refusal_timestamp_seconds{product=\"orders\"} 200.0\n"));
        assert!(text.contains(
            "wharf_last_error_info{product=\"orders\",input=\"c.jsonl\",reason=\"error\"} 1"
        ));
        assert!(
            text.contains("wharf_build_info{product=\"orders\",version="),
            "{text}"
        );
    }

    #[test]
    fn label_values_cannot_break_the_format() {
        assert_eq!(label("a\"b\\c\nd"), "a_b_c_d");
    }
}
