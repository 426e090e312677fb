//! [`Durations`]: the landing-duration histogram. `prometheus-client`'s own histogram
//! only observes; this one also takes in the buckets, sum and count a previous run wrote
//! to its textfile ([`Durations::add`]), so a cron-driven product's histogram keeps
//! growing across runs as Prometheus expects of one.

use std::sync::{Arc, Mutex, MutexGuard};

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::{MetricType, TypedMetric};

/// The buckets' upper bounds in seconds: 50 ms doubling to about 7 minutes, then +Inf.
pub fn bounds() -> Vec<f64> {
    let mut bounds: Vec<f64> =
        prometheus_client::metrics::histogram::exponential_buckets(0.05, 2.0, 14).collect();
    bounds.push(f64::MAX);
    bounds
}

/// One histogram of durations in seconds; clones share the counts.
#[derive(Clone, Debug)]
pub struct Durations(Arc<Mutex<Counts>>);

#[derive(Debug)]
struct Counts {
    sum: f64,
    count: u64,
    /// Each bucket's upper bound and the observations in it alone (not cumulative), as
    /// `prometheus-client`'s encoder takes them; the last bound is `f64::MAX` (+Inf).
    buckets: Vec<(f64, u64)>,
}

impl Default for Durations {
    fn default() -> Self {
        let buckets = bounds().into_iter().map(|b| (b, 0)).collect();
        Durations(Arc::new(Mutex::new(Counts {
            sum: 0.0,
            count: 0,
            buckets,
        })))
    }
}

impl Durations {
    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.0.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    pub fn observe(&self, seconds: f64) {
        let mut counts = self.counts();
        counts.sum += seconds;
        counts.count += 1;
        if let Some(bucket) = counts.buckets.iter_mut().find(|(le, _)| seconds <= *le) {
            bucket.1 += 1;
        }
    }

    /// Adds a histogram as the text format writes it: `cumulative` holds each `le` bound
    /// (+Inf as `f64::INFINITY`) and the observations at or under it. The bounds must be
    /// these buckets' own, the counts must not fall, and the +Inf bucket must equal
    /// `count`; otherwise nothing is added and the reason comes back.
    pub fn add(&self, sum: f64, count: u64, cumulative: &[(f64, u64)]) -> Result<(), String> {
        let mut counts = self.counts();
        let ours: Vec<f64> = counts.buckets.iter().map(|(le, _)| *le).collect();
        let theirs: Vec<f64> = cumulative
            .iter()
            .map(|(le, _)| if le.is_infinite() { f64::MAX } else { *le })
            .collect();
        if ours != theirs {
            return Err(format!(
                "its duration buckets are {theirs:?}, not this version's {ours:?}"
            ));
        }
        let mut below = 0;
        let mut each = Vec::with_capacity(cumulative.len());
        for (_, at_or_under) in cumulative {
            let Some(in_bucket) = at_or_under.checked_sub(below) else {
                return Err("its duration buckets' counts fall as the bounds rise".to_owned());
            };
            each.push(in_bucket);
            below = *at_or_under;
        }
        if below != count || !sum.is_finite() || sum < 0.0 {
            return Err(format!(
                "its duration histogram's +Inf bucket ({below}) is not its count ({count}), \
                 or its sum ({sum}) is not a duration"
            ));
        }
        counts.sum += sum;
        counts.count += count;
        for ((_, mine), more) in counts.buckets.iter_mut().zip(each) {
            *mine += more;
        }
        Ok(())
    }

    /// Adds `other`'s observations to these (both have [`bounds`]).
    pub fn absorb(&self, other: &Durations) {
        let theirs = other.counts();
        let mut mine = self.counts();
        mine.sum += theirs.sum;
        mine.count += theirs.count;
        for ((_, n), (_, more)) in mine.buckets.iter_mut().zip(&theirs.buckets) {
            *n += more;
        }
    }
}

impl TypedMetric for Durations {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for Durations {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let counts = self.counts();
        encoder.encode_histogram::<NoLabelSet>(counts.sum, counts.count, &counts.buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cumulative(d: &Durations) -> (f64, u64, Vec<(f64, u64)>) {
        let counts = d.counts();
        let mut total = 0;
        let buckets = counts
            .buckets
            .iter()
            .map(|(le, n)| {
                total += n;
                (if *le == f64::MAX { f64::INFINITY } else { *le }, total)
            })
            .collect();
        (counts.sum, counts.count, buckets)
    }

    #[test]
    fn a_written_histogram_adds_back_bucket_for_bucket() {
        let first = Durations::default();
        first.observe(0.01);
        first.observe(3.0);
        first.observe(10_000.0);
        let (sum, count, buckets) = cumulative(&first);
        let second = Durations::default();
        second.observe(0.2);
        second.add(sum, count, &buckets).unwrap();
        let (sum2, count2, buckets2) = cumulative(&second);
        assert_eq!(count2, 4);
        assert!((sum2 - 10_003.21).abs() < 1e-9, "{sum2}");
        assert_eq!(buckets2[0], (0.05, 1));
        assert_eq!(buckets2[2], (0.2, 2));
        assert_eq!(buckets2.last(), Some(&(f64::INFINITY, 4)));
    }

    #[test]
    fn foreign_or_broken_buckets_add_nothing() {
        let d = Durations::default();
        assert!(d.add(1.0, 1, &[(1.0, 1), (f64::INFINITY, 1)]).is_err());
        let (_, _, mut buckets) = cumulative(&Durations::default());
        buckets[3].1 = 5;
        assert!(d.add(1.0, 0, &buckets).is_err());
        assert_eq!(cumulative(&d).1, 0);
    }
}
