//! The inputs waiting in the inbox, for `wharf_inputs_waiting` and `wharf_waiting_bytes`:
//! closed inputs with no checkpoint under their name. A refused input counts until it is
//! landed or taken out of the inbox: it still waits for someone.

use crate::config::Config;
use crate::inbox;

/// (inputs, bytes) waiting; `None` when the inbox cannot be listed (the watch reports it).
pub fn count(config: &Config) -> Option<(u64, u64)> {
    let entries = inbox::closed(&config.inbox, &config.set_marker).ok()?;
    // The state root's checkpoints, listed once (a local folder or an S3 prefix).
    let state = crate::store::state_store::StateStore::state(config).ok()?;
    let landed = state.list("checkpoints", "list the checkpoints").ok()?;
    let waiting = entries
        .iter()
        .filter(|e| landed.binary_search(&format!("{}.json", e.name)).is_err());
    Some(waiting.fold((0, 0), |(n, bytes), e| (n + 1, bytes + e.size)))
}
