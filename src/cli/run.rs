//! `wharf run [INPUT]`: land one input, or every closed inbox input oldest first
//! (carrying on past a refusal; exit 3 at the end if any was refused).

use std::path::{Path, PathBuf};

use super::plan::input_name;
use super::progress::Bar;
use super::{emit, report};
use crate::config::Config;
use crate::engine;
use crate::error::Result;
use crate::exit;
use crate::inbox;
use crate::land::{self, RunStatus};
use crate::page::{Pager, textfile};
use crate::plan::DecideOptions;

/// `wharf run`'s flags.
pub struct RunOptions {
    /// The guards the operator lifts for this run (§5.9, §5.10), and `--reland` (§5.4).
    pub options: DecideOptions,
    pub metrics_file: Option<PathBuf>,
}

pub fn run(config: &Config, input: Option<&Path>, flags: &RunOptions, json: bool) -> Result<u8> {
    let pager = Pager::new(config);
    let worst = land_all(config, input, flags.options, json, &pager);
    if let Some(path) = &flags.metrics_file {
        pager.settle();
        // Read back as late as can be, so a run that overlapped this one is counted too.
        if let Err(why) = textfile::carry_over(pager.metrics(), path) {
            super::say(&format!("wharf: --metrics-file {why}"));
        }
        textfile::write(pager.metrics(), path)?;
    }
    pager.finish();
    worst
}

fn land_all(
    config: &Config,
    input: Option<&Path>,
    options: DecideOptions,
    json: bool,
    pager: &Pager,
) -> Result<u8> {
    let paths = match input {
        Some(path) => vec![path.to_owned()],
        None => inbox::closed(&config.inbox, &config.set_marker)?
            .into_iter()
            .map(|e| e.path)
            .collect(),
    };
    if paths.is_empty() && !json {
        emit(&format!("no closed input in {}", config.inbox.display()))?;
    }
    let mut engine = engine::open(config)?;
    let mut worst = exit::SUCCESS;
    for path in &paths {
        let mut bar = Bar::new(&input_name(path), json);
        let started = land::Started::now();
        let landed = land::run(config, engine.as_mut(), path, options, &mut |p| {
            bar.update(p)
        });
        bar.clear();
        match &landed {
            Ok(outcome) => pager.landed(outcome),
            Err(e) if e.is_busy() => pager.busy(path),
            Err(e) => pager.failed(path, e, started),
        }
        let code = match landed {
            Ok(outcome) => {
                if json {
                    emit(&report::outcome_json(&outcome).to_string())?;
                } else {
                    emit(&report::plan_text(&outcome.plan, outcome.status.code()))?;
                }
                if outcome.status == RunStatus::Refused {
                    exit::REFUSED
                } else {
                    exit::SUCCESS
                }
            }
            // The product's lock, or a lost race for the table's next version (§12.2).
            Err(e) if e.is_busy() => {
                if json {
                    emit(&report::busy_json(path, &e).to_string())?;
                }
                super::say(&format!("wharf: {e}"));
                return Ok(exit::BUSY);
            }
            Err(e) if input.is_none() => {
                super::say(&format!("wharf: {e}"));
                exit::ERROR
            }
            Err(e) => return Err(e),
        };
        worst = more_severe(worst, code);
    }
    Ok(worst)
}

/// Error outranks refusal outranks success.
fn more_severe(a: u8, b: u8) -> u8 {
    let rank = |code| match code {
        exit::ERROR => 2,
        exit::REFUSED => 1,
        _ => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}
