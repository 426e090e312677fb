//! Test failpoints: with `WHARF_FAILPOINT=<name>` in the environment, the process aborts
//! at that step boundary, as a crash would, so tests can prove a rerun converges.
//! Names: `after_lock`, `after_quarantine`, `after_stage`, `after_swap_1` (after the
//! first date's swap, and so on), `after_swaps`, `after_manifest`, `after_checkpoint`.

/// Aborts the process if the environment names this failpoint.
pub fn hit(name: &str) {
    if std::env::var_os("WHARF_FAILPOINT").is_some_and(|wanted| wanted == name) {
        eprintln!("wharf: stopping at failpoint {name}");
        std::process::abort();
    }
}
