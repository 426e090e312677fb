//! `wharf restore DATE --yes`: bring back a date's previous generation.

use super::emit;
use crate::config::Config;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::exit;
use crate::land::restore::restore as restore_date;

pub fn restore(config: &Config, date: &str, yes: bool, json: bool) -> Result<u8> {
    let date = Date::parse(date)
        .ok_or_else(|| Error::Usage(format!("{date:?} is not a date; write it as YYYY-MM-DD")))?;
    if !yes {
        return Err(Error::Usage(format!(
            "restore replaces the live partition event_date={date} with its previous generation; add --yes to confirm"
        )));
    }
    let restored = restore_date(config, date)?;
    if json {
        emit(&serde_json::json!({
            "action": "restored", "event_date": restored.date, "rows": restored.rows, "owner": restored.owner,
        }).to_string())?;
    } else {
        emit(&format!(
            "restored event_date={}: {} rows from {}",
            restored.date,
            restored.rows,
            super::report::inert(restored.owner.as_deref().unwrap_or("an unknown owner"))
        ))?;
    }
    Ok(exit::SUCCESS)
}
