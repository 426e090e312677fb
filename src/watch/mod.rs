//! Landing unattended: [`Watch`] lands each closed input of the inbox as it appears,
//! oldest first, until it is told to [`Stopper::stop`]. Not tied to the CLI (`wharf
//! watch` drives it; the console may too).
//!
//! - It wakes on the inbox watcher's events ([`inbox::watch_with`]), and rescans the
//!   inbox at start and every [`Settings::rescan`], since events can be lost (a full
//!   inotify queue, an inbox on a network file system).
//! - Each input lands through [`land::run`], so under the product's lock with all of the
//!   landing's crash safety. A landing that meets `busy` is retried after
//!   [`Settings::busy_retry`]; the file is never dropped.
//! - A file landed (published or skipped) at one [`Fingerprint`] is not read again while
//!   it keeps it, across restarts too ([`Ledger`]); a refused one not while this process
//!   runs (a restart, e.g. after a config change, tries it once more). A file that failed
//!   with an error is tried again at each periodic rescan, or as soon as it changes.
//! - A stop is honoured between landings: the current one finishes.
//! - An S3 inbox has no events: [`Discovery`] lists the keys after the last one seen
//!   every `poll` and every key every `rescan` (§13.2); an object counts as landed when
//!   its checkpoint records its ETag, so nothing is kept per landed object.

pub mod ledger;

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::engine::{self, Engine};
use crate::error::{Error, Result};
use crate::inbox::{self, InboxEntry};
use crate::land::{self, RunOutcome, RunStatus, lock};
use crate::plan::DecideOptions;
use crate::s3_inbox::discover::Discovery;
pub use ledger::{Fingerprint, Ledger};

/// How often to rescan and to retry.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// The inbox is listed again at least this often, events or not.
    pub rescan: Duration,
    /// A landing that found the product busy is tried again after this long.
    pub busy_retry: Duration,
}

/// What happened to one input, as it happens.
#[derive(Debug)]
pub enum Report<'a> {
    /// [`land::run`] finished: published, skipped or refused.
    Landed(&'a RunOutcome),
    /// Another run holds the product's lock, or another writer committed the Delta
    /// table's next version first; `path` is tried again later. Reported once per spell
    /// of busy retries.
    Busy { path: &'a Path, error: &'a Error },
    /// Landing `path`, begun at `started`, failed; watching goes on.
    Failed {
        path: &'a Path,
        error: &'a Error,
        started: Instant,
    },
    /// Something not about one input went wrong (listing the inbox, the ledger);
    /// watching goes on.
    Trouble(&'a Error),
}

enum Wake {
    Changed,
    Stop,
}

/// Asks a running [`Watch`] to stop after its current landing; cheap to clone, usable
/// from any thread (a signal handler's thread, say).
#[derive(Clone)]
pub struct Stopper(Sender<Wake>);

impl Stopper {
    pub fn stop(&self) {
        let _ = self.0.send(Wake::Stop);
    }
}

/// A running watch over one product's inbox.
pub struct Watch<'c> {
    config: &'c Config,
    /// Opened once: every landing of the watch goes through it.
    engine: Box<dyn Engine>,
    settings: Settings,
    sender: Sender<Wake>,
    wakes: Receiver<Wake>,
    _watcher: Option<inbox::Watcher>,
    /// An S3 inbox's discovery, which stands for the watcher and the ledger there.
    objects: Option<Discovery>,
    _only_watch: lock::ProductLock,
    ledger: Ledger,
    /// Landed, skipped or refused at this fingerprint by this process.
    handled: HashMap<String, Fingerprint>,
    /// Failed at this fingerprint; forgotten at each periodic rescan, to be tried again.
    failed: HashMap<String, Fingerprint>,
    busy_until: Option<Instant>,
    next_rescan: Instant,
    /// The rest of the last listing, oldest first: landed one by one before the inbox is
    /// listed again, so a landing costs no listing of the whole inbox.
    pending: VecDeque<InboxEntry>,
}

impl<'c> Watch<'c> {
    /// Takes the product's watch lock (one watch per product), starts the inbox watcher
    /// and loads the ledger. A ledger that cannot be read is reported through `report`
    /// and started afresh.
    pub fn start(
        config: &'c Config,
        settings: Settings,
        report: &mut dyn FnMut(Report<'_>),
    ) -> Result<Watch<'c>> {
        // `<state_root>/.watch.lock`: two watches of one product would only contend for the
        // product's lock.
        let only_watch = lock::acquire_named(config, lock::WATCH)?;
        let engine = engine::open(config)?;
        let (sender, wakes) = channel();
        let changes = sender.clone();
        let objects = match crate::s3_inbox::is_url(&config.inbox) {
            true => Some(Discovery::new(
                &config.inbox,
                &config.set_marker,
                config.listing,
            )?),
            false => None,
        };
        let watcher = match objects {
            Some(_) => None,
            None => Some(inbox::watch_with(&config.inbox, move || {
                let _ = changes.send(Wake::Changed);
            })?),
        };
        let ledger = present_names(config, objects.is_some())
            .and_then(|names| {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                Ledger::load(config, &names)
            })
            .unwrap_or_else(|e| {
                report(Report::Trouble(&e));
                Ledger::empty(config)
            });
        Ok(Watch {
            config,
            engine,
            settings,
            sender,
            wakes,
            _watcher: watcher,
            objects,
            _only_watch: only_watch,
            ledger,
            handled: HashMap::new(),
            failed: HashMap::new(),
            busy_until: None,
            next_rescan: Instant::now() + settings.rescan,
            pending: VecDeque::new(),
        })
    }

    /// A handle that stops [`Watch::run`] after its current landing.
    pub fn stopper(&self) -> Stopper {
        Stopper(self.sender.clone())
    }

    /// Lands inputs as they appear until stopped.
    pub fn run(&mut self, report: &mut dyn FnMut(Report<'_>)) {
        let mut busy_spell = false;
        loop {
            if self.stop_requested() {
                return;
            }
            let now = Instant::now();
            if now >= self.next_rescan {
                self.failed.clear();
                self.next_rescan = now + self.settings.rescan;
            }
            if self.busy_until.is_some_and(|until| now >= until) {
                self.busy_until = None;
            }
            let next = match self.busy_until {
                Some(_) => None,
                None => self.next_input(report),
            };
            match next {
                Some((entry, fingerprint)) => {
                    busy_spell = self.land(&entry, fingerprint, !busy_spell, report);
                    if busy_spell {
                        self.pending.push_front(entry); // still the oldest
                    }
                }
                None => {
                    if self.wait() {
                        return;
                    }
                }
            }
        }
    }

    /// Consumes every queued wake without blocking; `true` if one asks to stop.
    fn stop_requested(&self) -> bool {
        self.wakes.try_iter().any(|wake| matches!(wake, Wake::Stop))
    }

    /// Blocks until a wake, the next rescan or the busy retry; `true` if asked to stop.
    fn wait(&self) -> bool {
        let mut deadline = self
            .busy_until
            .map_or(self.next_rescan, |b| b.min(self.next_rescan));
        if let Some(objects) = &self.objects {
            deadline = deadline.min(objects.due());
        }
        let timeout = deadline.saturating_duration_since(Instant::now());
        match self.wakes.recv_timeout(timeout) {
            Ok(Wake::Stop) => true,
            Ok(Wake::Changed) | Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => true,
        }
    }

    /// The oldest closed input not handled at its current fingerprint: the next of the
    /// last listing, or, when that is done, of a new one.
    fn next_input(
        &mut self,
        report: &mut dyn FnMut(Report<'_>),
    ) -> Option<(InboxEntry, Fingerprint)> {
        if self.objects.is_some() {
            return self.next_object(report);
        }
        if self.pending.is_empty() {
            match inbox::closed(&self.config.inbox, &self.config.set_marker) {
                Ok(entries) => self.pending = entries.into(),
                Err(e) => {
                    report(Report::Trouble(&e));
                    return None;
                }
            }
        }
        while let Some(entry) = self.pending.pop_front() {
            let Some(fingerprint) = Fingerprint::of(&entry.path) else {
                continue; // gone since it was listed
            };
            let seen =
                |map: &HashMap<String, Fingerprint>| map.get(&entry.name) == Some(&fingerprint);
            if seen(&self.handled) || seen(&self.failed) {
                continue;
            }
            if self.ledger.landed(self.config, &entry.name, &fingerprint) {
                self.handled.insert(entry.name.clone(), fingerprint);
                continue;
            }
            return Some((entry, fingerprint));
        }
        None
    }

    /// The oldest entry of an S3 inbox not landed: the next of the last cycle's, or, when
    /// those are done and a cycle is due, of a new cycle. Landed is the checkpoint's say
    /// (it records the ETag landed), so a reconcile of a large inbox reads checkpoints,
    /// never objects.
    fn next_object(
        &mut self,
        report: &mut dyn FnMut(Report<'_>),
    ) -> Option<(InboxEntry, Fingerprint)> {
        let objects = self.objects.as_mut()?;
        if self.pending.is_empty() && Instant::now() >= objects.due() {
            let config = self.config;
            match objects.cycle(&|entry| landed_object(config, entry)) {
                Ok(found) => self.pending = found.entries.into(),
                Err(e) => report(Report::Trouble(&e)),
            }
        }
        let entry = self.pending.pop_front()?;
        let fingerprint = Fingerprint {
            dev: 0,
            ino: 0,
            size: entry.size,
            mtime: (0, 0),
            ctime: (0, 0),
        };
        Some((entry, fingerprint))
    }

    /// Lands one input and reports it; `true` when the product was busy.
    fn land(
        &mut self,
        entry: &InboxEntry,
        before: Fingerprint,
        report_busy: bool,
        report: &mut dyn FnMut(Report<'_>),
    ) -> bool {
        // Discovery never relands (§5.4): a landed input is a skip.
        let options = DecideOptions::default();
        let started = Instant::now();
        let landed = land::run(
            self.config,
            self.engine.as_mut(),
            &entry.path,
            options,
            &mut |_| true,
        );
        // Unchanged across the landing: the bytes landed are this fingerprint's.
        let unchanged = Fingerprint::of(&entry.path) == Some(before);
        match landed {
            Ok(outcome) => {
                if unchanged {
                    self.handled.insert(entry.name.clone(), before);
                    let landed = outcome.status != RunStatus::Refused;
                    let recorded = match landed {
                        true => self
                            .ledger
                            .record(&entry.name, before, &outcome.plan.input_sha256),
                        false => Ok(()),
                    };
                    if let Err(e) = recorded {
                        report(Report::Trouble(&e));
                    }
                }
                if let Some(objects) = self.objects.as_mut()
                    && outcome.status == RunStatus::Refused
                {
                    objects.refused(entry);
                }
                report(Report::Landed(&outcome));
                false
            }
            // The product's lock, or a lost race for the table's next version (§12.2):
            // either way the next try plans afresh.
            Err(error) if error.is_busy() => {
                self.busy_until = Some(Instant::now() + self.settings.busy_retry);
                if report_busy {
                    report(Report::Busy {
                        path: &entry.path,
                        error: &error,
                    });
                }
                true
            }
            Err(error) => {
                self.failed.insert(entry.name.clone(), before);
                report(Report::Failed {
                    path: &entry.path,
                    error: &error,
                    started,
                });
                false
            }
        }
    }
}

/// Whether the S3 inbox's `entry` landed at its ETag: its checkpoint records it (§13.3).
fn landed_object(config: &Config, entry: &InboxEntry) -> bool {
    let Ok(Some(checkpoint)) = crate::store::state::read_checkpoint(config, &entry.name) else {
        return false;
    };
    checkpoint
        .object
        .is_some_and(|o| Some(&o.etag) == entry.etag.as_ref() && o.size == entry.size)
}

/// The names in the inbox now, to which a start compacts the ledger; none on S3, where
/// the ledger is not kept (checkpoints tell what landed).
fn present_names(config: &Config, s3: bool) -> Result<Vec<String>> {
    if s3 {
        return Ok(Vec::new());
    }
    let entries = inbox::list(&config.inbox, &config.set_marker)?;
    Ok(entries.into_iter().map(|e| e.name).collect())
}
