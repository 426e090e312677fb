//! The console's own read of an input, with the plan's own functions: every line
//! classified by `Batch::classify` on every core, every accepted event logged in an
//! `EventLog` (spilling to an unnamed temporary file, as a landing's does), then §2
//! resolved by `EventLog::collapse`, which also names the line each retry or conflict
//! repeats. The plan reads the same way and keeps less; nothing here adds work to it.

use std::path::Path;

use crate::config::Config;
use crate::engine::local::events::BUCKET_RECORDS;
use crate::engine::local::scratch::FileScratch;
use crate::engine::local::{Collapsed, EventLog};
use crate::error::Result;
use crate::input;
use crate::pipeline;
use crate::plan::{Batch, EventFacts};

/// Reads `path`, giving `each` every accepted event in line order, and returns what §2
/// made of them. `progress(bytes, total)` returns `false` to cancel.
pub fn read(
    config: &Config,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64) -> bool,
    mut each: impl FnMut(EventFacts<'_>),
) -> Result<Collapsed> {
    let opened = input::open(path, &config.set_marker)?;
    let total = opened.size;
    let scratch_dir = std::env::temp_dir();
    let mut log = EventLog::new(Box::new(FileScratch::in_dir(&scratch_dir)), BUCKET_RECORDS);
    let schema = &config.schema;
    let classify = |lines: pipeline::Lines<'_>| {
        let mut batch = Batch::default();
        for (line, bytes) in lines.iter() {
            batch.classify(line, bytes, schema);
        }
        batch
    };
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    pipeline::scan_input(
        &opened,
        config.max_line_bytes,
        threads,
        &classify,
        &mut |bytes| progress(bytes, total),
        |batch: Batch| {
            log.push_batch(&batch);
            batch.accepted_events().for_each(&mut each);
        },
    )?;
    log.collapse(threads)
        .map_err(|e| FileScratch::error(&scratch_dir, e))
}
