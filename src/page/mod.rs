//! Paging the on-call: [`Pager`] turns what landings report (a [`RunOutcome`], a busy
//! spell, an error) into Prometheus [`metrics`], [`alert`] documents for the `[alerts]`
//! hooks and OpenLineage [`lineage`] events, and watches freshness (`max_silence`).
//! Landing code never calls it: `wharf run` and `wharf watch` hand it their outcomes.
//! Deliveries run on the [`deliver::Courier`]'s thread, so a hook never delays a landing.

pub mod alert;
pub mod deliver;
mod durations;
pub mod freshness;
pub mod lineage;
pub mod metrics;
pub mod serve;
pub mod textfile;
mod waiting;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value as Json;

use crate::config::{Config, LineageTarget};
use crate::error::Error;
use crate::land::{self, RunOutcome, RunStatus, Started, quarantine};
use alert::Event;
use deliver::{Courier, Target};
use freshness::last_publish;
use metrics::{Failure, Metrics};

/// How often a watching pager looks at freshness and busy spells.
const TICK: Duration = Duration::from_millis(500);
/// How often it lists the inbox for the inputs waiting.
const WAITING_EVERY: Duration = Duration::from_secs(5);

/// One product's paging: its metrics, hooks, lineage and freshness.
pub struct Pager {
    shared: Arc<Shared>,
    ticker: Option<(Sender<()>, std::thread::JoinHandle<()>)>,
}

struct Shared {
    config: Config,
    metrics: Metrics,
    courier: Courier,
    state: Mutex<State>,
}

struct State {
    /// When the product last published, or when paging started if never.
    reference: SystemTime,
    last_publish: Option<String>,
    stale: bool,
    busy: Option<Busy>,
    waiting_at: Option<Instant>,
}

struct Busy {
    since: Instant,
    input: PathBuf,
    alerted: bool,
}

impl Pager {
    /// Starts paging `config`'s product: the last publish comes from the run log.
    pub fn new(config: &Config) -> Pager {
        let metrics = Metrics::new(&config.product);
        let last = last_publish(config);
        if let Some((_, seconds)) = &last {
            metrics.published_at(*seconds);
        }
        if let Some(max) = config.paging.max_silence {
            metrics.max_silence(max.as_secs_f64());
        }
        let reference = last.as_ref().map_or_else(SystemTime::now, |(_, s)| {
            SystemTime::UNIX_EPOCH + Duration::from_secs_f64(*s)
        });
        let state = State {
            reference,
            last_publish: last.map(|(time, _)| time),
            stale: false,
            busy: None,
            waiting_at: None,
        };
        let shared = Shared {
            config: config.clone(),
            metrics,
            courier: Courier::start(config.paging.alerts.timeout),
            state: Mutex::new(state),
        };
        Pager {
            shared: Arc::new(shared),
            ticker: None,
        }
    }

    pub fn metrics(&self) -> &Metrics {
        &self.shared.metrics
    }

    /// Looks at freshness, busy spells and the inbox on a thread, for a watch.
    pub fn watch(&mut self) {
        let (stop, stopped) = channel::<()>();
        let shared = self.shared.clone();
        let thread = std::thread::Builder::new()
            .name("wharf-pager".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                    shared.tick();
                }
            });
        match thread {
            Ok(thread) => self.ticker = Some((stop, thread)),
            Err(e) => eprintln!("wharf: cannot start the freshness thread ({e}); no stale alert"),
        }
        self.shared.tick();
    }

    /// A landing ended (published, skipped or refused).
    pub fn landed(&self, outcome: &RunOutcome) {
        self.shared.landed(outcome);
    }

    /// A landing found the product busy.
    pub fn busy(&self, input: &Path) {
        let s = &self.shared;
        s.metrics.landed("busy", 0.0);
        let mut state = s.lock();
        if state.busy.is_none() {
            state.busy = Some(Busy {
                since: Instant::now(),
                input: input.to_owned(),
                alerted: false,
            });
        }
    }

    /// Landing `input`, begun at `started`, failed with `error`.
    pub fn failed(&self, input: &Path, error: &Error, started: Started) {
        self.shared.failed(input, error, started);
    }

    /// Stops the ticker, and waits for every queued delivery.
    pub fn finish(mut self) {
        if let Some((stop, thread)) = self.ticker.take() {
            drop(stop);
            let _ = thread.join();
        }
        if let Ok(shared) = Arc::try_unwrap(self.shared) {
            shared.courier.finish();
        }
    }

    /// For a one-shot run's metrics file: the freshness gauge and the inputs waiting, as
    /// of now.
    pub fn settle(&self) {
        self.shared.freshness(false);
        self.shared.waiting();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn landed(&self, outcome: &RunOutcome) {
        let now = land::timestamp_now();
        let plan = &outcome.plan;
        self.metrics
            .landed(outcome.status.code(), outcome.duration_ms as f64 / 1000.0);
        for (reason, lines) in quarantine::by_reason(&plan.counts) {
            self.metrics.rejected(&reason, lines);
        }
        let unix = unix_now();
        self.lock().busy = None;
        match outcome.status {
            RunStatus::Published => self.published(&now, unix),
            RunStatus::Refused => {
                let reason = plan.reason().unwrap_or("refused");
                self.metrics
                    .last_failure(Failure::Refusal, &plan.input_name, reason, unix);
            }
            RunStatus::Skipped => {}
        }
        if let Some(alert) = alert::refused(&self.config, outcome, &now) {
            self.alert(Event::Refused, &alert, &plan.run_id);
        }
        self.lineage(lineage::of_outcome(&self.config, outcome), &plan.run_id);
    }

    fn published(&self, now: &str, unix: f64) {
        self.metrics.published_at(unix);
        let was_stale = {
            let mut state = self.lock();
            state.reference = SystemTime::now();
            state.last_publish = Some(now.to_owned());
            std::mem::replace(&mut state.stale, false)
        };
        self.metrics.freshness_breach(false);
        if was_stale {
            let alert =
                alert::freshness(&self.config, Event::Fresh, Duration::ZERO, Some(now), now);
            self.alert(Event::Fresh, &alert, "");
        }
    }

    fn failed(&self, input: &Path, error: &Error, started: Started) {
        let now = land::timestamp_now();
        let run_id = land::new_run_id();
        self.metrics
            .landed("error", started.elapsed().as_secs_f64());
        let name = alert::input_name(input);
        self.metrics
            .last_failure(Failure::Error, &name, "error", unix_now());
        self.lock().busy = None;
        let alert = alert::error(&self.config, input, &error.to_string(), &run_id, &now);
        self.alert(Event::Error, &alert, &run_id);
        let events = lineage::of_error(&self.config, input, error, &run_id, started);
        self.lineage(events, &run_id);
    }

    fn tick(&self) {
        self.freshness(true);
        let busy = {
            let mut state = self.lock();
            let after = self.config.paging.alerts.busy_alert_after;
            match &mut state.busy {
                Some(busy) => {
                    let spell = busy.since.elapsed();
                    let raise = !busy.alerted && spell >= after;
                    busy.alerted |= raise;
                    Some((spell, raise.then(|| busy.input.clone())))
                }
                None => None,
            }
        };
        self.metrics
            .busy_for(busy.as_ref().map_or(0.0, |(spell, _)| spell.as_secs_f64()));
        if let Some((spell, Some(input))) = busy {
            let alert = alert::busy(&self.config, &input, spell, &land::timestamp_now());
            self.alert(Event::Busy, &alert, "");
        }
        let due = self
            .lock()
            .waiting_at
            .is_none_or(|at| at.elapsed() >= WAITING_EVERY);
        if due {
            self.waiting();
        }
    }

    /// Sets the breach gauge; with `alerts`, raises `stale` when a breach begins.
    fn freshness(&self, alerts: bool) {
        let Some(max) = self.config.paging.max_silence else {
            return;
        };
        let (silence, raise, last) = {
            let mut state = self.lock();
            let silence = SystemTime::now()
                .duration_since(state.reference)
                .unwrap_or_default();
            let breach = silence > max;
            let raise = breach && !state.stale;
            state.stale = breach;
            (silence, raise, state.last_publish.clone())
        };
        self.metrics.freshness_breach(silence > max);
        if raise && alerts {
            let now = land::timestamp_now();
            let alert =
                alert::freshness(&self.config, Event::Stale, silence, last.as_deref(), &now);
            self.alert(Event::Stale, &alert, "");
        }
    }

    fn waiting(&self) {
        self.lock().waiting_at = Some(Instant::now());
        if let Some((inputs, bytes)) = waiting::count(&self.config) {
            self.metrics.waiting(inputs, bytes);
        }
    }

    fn alert(&self, event: Event, alert: &Json, run_id: &str) {
        let alerts = &self.config.paging.alerts;
        let body = alert.to_string().into_bytes();
        let label = format!("alert {} (run {})", event.code(), or_none(run_id));
        if !alerts.command.is_empty() {
            let target = Target::Command(alerts.command.clone());
            self.courier.send(target, body.clone(), label.clone());
        }
        if let Some(url) = &alerts.webhook {
            self.courier.send(Target::Post(url.clone()), body, label);
        }
    }

    fn lineage(&self, events: [Json; 2], run_id: &str) {
        let Some(target) = &self.config.paging.lineage else {
            return;
        };
        for event in events {
            let target = match target {
                LineageTarget::File(path) => Target::Append(path.clone()),
                LineageTarget::Http(url) => Target::Post(url.clone()),
            };
            let kind = event["eventType"].as_str().unwrap_or("").to_owned();
            let label = format!("lineage {kind} (run {run_id})");
            self.courier
                .send(target, event.to_string().into_bytes(), label);
        }
    }
}

fn or_none(run_id: &str) -> &str {
    if run_id.is_empty() { "none" } else { run_id }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
