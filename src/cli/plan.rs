//! `wharf plan INPUT`: what a run would do, without writing anything.

use std::path::Path;

use super::progress::Bar;
use super::{emit, report};
use crate::config::Config;
use crate::engine;
use crate::error::Result;
use crate::exit;
use crate::land;
use crate::plan::{Action, DecideOptions};

pub fn plan(config: &Config, input: &Path, options: DecideOptions, json: bool) -> Result<u8> {
    let mut engine = engine::open_for_plan(config)?;
    let mut bar = Bar::new(&input_name(input), json);
    let plan = land::plan_input(config, engine.as_mut(), input, options, &mut |p| {
        bar.update(p)
    });
    bar.clear();
    let plan = plan?;
    if json {
        emit(&report::plan_json(&plan).to_string())?;
    } else {
        let verb = match plan.action {
            Action::Publish => "would publish",
            Action::Skip => "would skip: already landed",
            Action::Refuse => "would refuse",
        };
        emit(&report::plan_text(&plan, verb))?;
    }
    Ok(if plan.action == Action::Refuse {
        exit::REFUSED
    } else {
        exit::SUCCESS
    })
}

/// The file name of `path`, as the progress line names the input.
pub(super) fn input_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| path.display().to_string(), crate::input::name_of)
}
