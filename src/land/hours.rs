//! EFFECTS, reads only. The rows published now on some dates, by UTC hour of the day:
//! the console draws them beside a plan's own hours, so a fragment that would replace a
//! whole day shows at a glance.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::contract::Date;
use crate::error::Result;
use crate::land::root::PublishRoot;
use crate::store::dataset::Dataset;

/// Each of `dates` by hour as published now (a date not published: all zero), read
/// from the hive folders or the Delta table's current version; `cancelled` stops between
/// dates (what was read so far is returned).
pub fn published_by_hour(
    config: &Config,
    dates: &[Date],
    cancelled: &dyn Fn() -> bool,
) -> Result<BTreeMap<Date, [u64; 24]>> {
    let root = PublishRoot::open(config)?;
    root.with_dataset(config, |dataset| by_hour(dataset, config, dates, cancelled))
}

fn by_hour(
    dataset: &dyn Dataset,
    config: &Config,
    dates: &[Date],
    cancelled: &dyn Fn() -> bool,
) -> Result<BTreeMap<Date, [u64; 24]>> {
    let mut hours = BTreeMap::new();
    for &date in dates {
        if cancelled() {
            break;
        }
        hours.insert(date, dataset.rows_by_hour(date, &config.schema)?);
    }
    Ok(hours)
}
