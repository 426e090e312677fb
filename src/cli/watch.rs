//! `wharf watch`: land each closed input as it is renamed into the inbox, until SIGTERM
//! or Ctrl-C (which let the current landing finish; a second one stops at once, as safe
//! as SIGKILL). One line per outcome: the `wharf run --json` object with `--json`, a
//! readable line otherwise. The loop itself is [`crate::watch`].

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};

use super::{emit, report};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::exit;
use crate::land;
use crate::page::{self, Pager};
use crate::watch::{Report, Settings, Stopper, Watch};

/// How long a landing that found the product busy waits before trying again: short, as
/// a console's or a `wharf run`'s landing holds the lock for seconds, and a try costs one
/// `flock`.
const BUSY_RETRY: Duration = Duration::from_secs(1);

/// `--rescan` and `--poll` as given (`None` when not).
#[derive(Clone, Copy, Debug, Default)]
pub struct Flags {
    pub rescan: Option<u64>,
    pub poll: Option<u64>,
}

/// How often a local inbox is listed again when `--rescan` is not given.
const RESCAN_SECS: u64 = 10;

pub fn watch(config: Config, flags: Flags, metrics: Option<&str>, json: bool) -> Result<u8> {
    let config = &with_flags(config, flags)?;
    let settings = Settings {
        rescan: Duration::from_secs(flags.rescan.unwrap_or(RESCAN_SECS)),
        busy_retry: BUSY_RETRY,
    };
    let mut pager = Pager::new(config);
    if let Some(addr) = metrics {
        let bound = page::serve::serve(addr, pager.metrics().clone())?;
        eprintln!("wharf watch: metrics at http://{bound}/metrics");
    }
    pager.watch();
    let mut out = |event: Report<'_>| {
        page_report(&pager, &event);
        print(event, json)
    };
    let mut watch = Watch::start(config, settings, &mut out)?;
    stop_on_signals(watch.stopper())?;
    if !json {
        // An S3 inbox is listed on a schedule, not on events (§13.2).
        let listing = match crate::s3_inbox::is_url(&config.inbox) {
            true => format!(
                "new keys every {}, every key every {}",
                humantime::format_duration(config.listing.poll),
                humantime::format_duration(config.listing.rescan)
            ),
            false => format!("rescan every {} s", settings.rescan.as_secs()),
        };
        super::say(&format!(
            "wharf watch: landing closed inputs of {} as they arrive ({listing}); \
             Ctrl-C or SIGTERM stops after the current landing",
            config.inbox.display()
        ));
    }
    watch.run(&mut out);
    drop(watch);
    pager.finish();
    if !json {
        super::say("wharf watch: stopped");
    }
    Ok(exit::SUCCESS)
}

/// `config` with `flags` over its S3 listing (a flag given wins over the config's key);
/// `--poll` on a local inbox, which has no poll, is a usage error.
fn with_flags(mut config: Config, flags: Flags) -> Result<Config> {
    if !crate::s3_inbox::is_url(&config.inbox) {
        return match flags.poll {
            Some(_) => Err(Error::Usage(
                "--poll applies to an S3 inbox; a local inbox wakes on file-system events \
                 and is listed again every --rescan seconds"
                    .into(),
            )),
            None => Ok(config),
        };
    }
    if let Some(secs) = flags.rescan {
        config.listing.rescan = Duration::from_secs(secs);
    }
    if let Some(secs) = flags.poll {
        config.listing.poll = Duration::from_secs(secs);
    }
    Ok(config)
}

/// Hands an outcome to the pager: metrics, alerts, lineage.
fn page_report(pager: &Pager, event: &Report<'_>) {
    match event {
        Report::Landed(outcome) => pager.landed(outcome),
        Report::Busy { path, .. } => pager.busy(path),
        Report::Failed {
            path,
            error,
            started,
        } => pager.failed(path, error, *started),
        Report::Trouble(_) => {}
    }
}

/// SIGTERM and SIGINT ask `stopper` to stop; a second one of either ends the process at
/// once (exit 128 + the signal), which is as safe as SIGKILL.
fn stop_on_signals(stopper: Stopper) -> Result<()> {
    let io = |e| Error::io(Path::new("<signals>"), "handle SIGTERM and SIGINT", "", e);
    let asked = Arc::new(AtomicBool::new(false));
    for signal in [SIGTERM, SIGINT] {
        // The shutdown goes first: it fires only once the flag is already set.
        signal_hook::flag::register_conditional_shutdown(signal, 128 + signal, asked.clone())
            .map_err(io)?;
        signal_hook::flag::register(signal, asked.clone()).map_err(io)?;
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT]).map_err(io)?;
    std::thread::Builder::new()
        .name("wharf-signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                stopper.stop();
            }
        })
        .map_err(io)?;
    Ok(())
}

/// Prints one outcome: stdout for outcomes, stderr for what went wrong.
fn print(event: Report<'_>, json: bool) {
    let line = match event {
        Report::Landed(outcome) if json => report::outcome_json(outcome).to_string(),
        Report::Landed(outcome) => format!(
            "{}  {}",
            land::timestamp_now(),
            report::outcome_line(outcome)
        ),
        Report::Busy { path, error } => {
            super::say(&format!(
                "wharf: {}: {error}; trying again every {} s",
                name(path),
                BUSY_RETRY.as_secs()
            ));
            if !json {
                return;
            }
            report::busy_json(path, error).to_string()
        }
        Report::Failed { path, error, .. } => {
            super::say(&format!("wharf: {error}; watching goes on"));
            if !json {
                return;
            }
            serde_json::json!({
                "action": "error", "reason": null, "input_name": name(path),
                "input_sha256": null, "detail": error.to_string(), "exit_code": error.exit_code(),
            })
            .to_string()
        }
        Report::Trouble(error) => {
            super::say(&format!("wharf: {error}; watching goes on"));
            return;
        }
    };
    // A closed stdout must not stop the landings; the outcomes are in the run log too.
    let _ = emit(&line);
}

fn name(path: &Path) -> String {
    report::inert(&super::plan::input_name(path))
}
