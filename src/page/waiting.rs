//! The inputs waiting in the inbox, for `wharf_inputs_waiting` and `wharf_bytes_waiting`:
//! closed inputs with no checkpoint under their name. A refused input counts until it is
//! landed or taken out of the inbox: it still waits for someone.

use crate::config::Config;
use crate::inbox;

/// (inputs, bytes) waiting; `None` when the inbox cannot be listed (the watch reports it).
pub fn count(config: &Config) -> Option<(u64, u64)> {
    let entries = inbox::closed(&config.inbox, &config.set_marker).ok()?;
    let waiting = entries
        .iter()
        .filter(|e| !config.checkpoint_path(&e.name).exists());
    Some(waiting.fold((0, 0), |(n, bytes), e| (n + 1, bytes + e.size)))
}
