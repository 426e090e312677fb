//! Test-only hooks, read from the environment (no cargo feature), inert when unset. Each
//! variable is read once per process; when it is unset a check is one atomic load.
//!
//! - [`hit`]: with `WHARF_FAILPOINT=<name>`, the process aborts at that step boundary,
//!   as a crash would, so tests can prove a rerun converges. Names: `after_lock`,
//!   `after_quarantine`, `after_stage`, `after_swap_1` (after the first date's swap, and
//!   so on), `after_swaps`, `after_manifest`, `after_checkpoint`, and `between_renames`
//!   (inside the first two-rename swap, when the date is briefly absent).
//! - [`hit`] also pauses: with `WHARF_PAUSE=<name>:<file>`, the first time the process
//!   reaches failpoint `name` it creates `<file>` and waits until the file is removed
//!   (at most [`PAUSE_LIMIT`]), so a test can have another process act at exactly that
//!   step, e.g. commit the Delta table's next version first (a lost commit race). The
//!   Delta landing's points are `after_upload` and `after_trash`, between planning
//!   against a version and committing the next, then `after_commit` and
//!   `before_vacuum` (the trash record pruned, its files not yet deleted).
//! - [`fault`]: with `WHARF_FAULT=<op>:<errno>[:<nth>]` (`op` ∈ `write`, `fsync`,
//!   `rename`; `errno` ∈ `EIO`, `ENOSPC`; `nth` defaults to 1), the nth call of that kind
//!   in the process fails with that OS error, as a failing disk or a full one would.
//!   The I/O helpers ([`atomic`](super::atomic), the Parquet writer, the swap,
//!   the trash, the run log) ask before each such call.
//! - [`exchange_disabled`]: with `WHARF_SWAP=two_renames`, the swap behaves as on a file
//!   system or kernel without `renameat2(RENAME_EXCHANGE)` (some network mounts, macOS)
//!   and takes its two-rename fallback, so tests run that path too.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest a `WHARF_PAUSE` waits: a test that forgot to release it does not leave a
/// process behind for ever.
pub const PAUSE_LIMIT: Duration = Duration::from_secs(300);

/// Aborts the process if the environment names this failpoint; pauses there the first
/// time if `WHARF_PAUSE` names it.
pub fn hit(name: &str) {
    static WANTED: OnceLock<Option<OsString>> = OnceLock::new();
    let wanted = WANTED.get_or_init(|| std::env::var_os("WHARF_FAILPOINT"));
    if wanted.as_ref().is_some_and(|wanted| wanted == name) {
        eprintln!("wharf: stopping at failpoint {name}");
        std::process::abort();
    }
    pause(name);
}

/// `WHARF_PAUSE=<name>:<file>`: see the module's doc.
fn pause(name: &str) {
    static WANTED: OnceLock<Option<(String, PathBuf)>> = OnceLock::new();
    static PAUSED: AtomicBool = AtomicBool::new(false);
    let wanted = WANTED.get_or_init(|| {
        let spec = std::env::var("WHARF_PAUSE").ok()?;
        let parsed = spec
            .split_once(':')
            .filter(|(point, file)| !point.is_empty() && !file.is_empty())
            .map(|(point, file)| (point.to_owned(), PathBuf::from(file)));
        if parsed.is_none() {
            eprintln!("wharf: ignoring WHARF_PAUSE={spec:?} (want <failpoint>:<file>)");
        }
        parsed
    });
    let Some((point, file)) = wanted else {
        return;
    };
    if point != name || PAUSED.swap(true, Ordering::Relaxed) {
        return;
    }
    if let Err(e) = std::fs::write(file, std::process::id().to_string()) {
        eprintln!(
            "wharf: not pausing at {name}: cannot create {}: {e}",
            file.display()
        );
        return;
    }
    eprintln!(
        "wharf: paused at {name} until {} is removed",
        file.display()
    );
    let deadline = Instant::now() + PAUSE_LIMIT;
    while file.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `WHARF_SWAP=two_renames` asks the swap to skip the atomic exchange.
pub fn exchange_disabled() -> bool {
    static DISABLED: OnceLock<bool> = OnceLock::new();
    *DISABLED.get_or_init(|| {
        let setting = std::env::var_os("WHARF_SWAP");
        let disabled = setting.as_ref().is_some_and(|s| s == "two_renames");
        if let (Some(setting), false) = (&setting, disabled) {
            eprintln!("wharf: ignoring WHARF_SWAP={setting:?} (want two_renames)");
        }
        disabled
    })
}

/// A kind of I/O call a fault can be injected into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Writing a file's bytes (a state file, a Parquet file, the run log), or putting a
    /// file into the trash (a hard link, or a copy).
    Write,
    /// fsync of a file or a folder.
    Fsync,
    /// A rename or an exchange.
    Rename,
}

/// The parsed `WHARF_FAULT`.
#[derive(Debug)]
struct Fault {
    op: Op,
    errno: i32,
    nth: u64,
    calls: AtomicU64,
}

/// `EIO` and `ENOSPC` as Linux numbers them (no libc dependency for two constants).
const EIO: i32 = 5;
const ENOSPC: i32 = 28;

fn parse(spec: &str) -> Option<Fault> {
    let mut parts = spec.split(':');
    let op = match parts.next()? {
        "write" => Op::Write,
        "fsync" => Op::Fsync,
        "rename" => Op::Rename,
        _ => return None,
    };
    let errno = match parts.next()? {
        "EIO" => EIO,
        "ENOSPC" => ENOSPC,
        _ => return None,
    };
    let nth = match parts.next() {
        Some(n) => n.parse().ok().filter(|n| *n >= 1)?,
        None => 1,
    };
    parts.next().is_none().then_some(Fault {
        op,
        errno,
        nth,
        calls: AtomicU64::new(0),
    })
}

fn configured() -> Option<&'static Fault> {
    static FAULT: OnceLock<Option<Fault>> = OnceLock::new();
    FAULT
        .get_or_init(|| {
            let spec = std::env::var("WHARF_FAULT").ok()?;
            let fault = parse(&spec);
            if fault.is_none() {
                eprintln!("wharf: ignoring WHARF_FAULT={spec:?} (want <op>:<errno>[:<nth>])");
            }
            fault
        })
        .as_ref()
}

/// Call before an I/O call of kind `op`: `Err` when `WHARF_FAULT` says this one fails.
pub fn fault(op: Op) -> std::io::Result<()> {
    let Some(fault) = configured() else {
        return Ok(());
    };
    if fault.op == op && fault.calls.fetch_add(1, Ordering::Relaxed) + 1 == fault.nth {
        eprintln!("wharf: WHARF_FAULT injected {op:?} error {}", fault.errno);
        return Err(std::io::Error::from_raw_os_error(fault.errno));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_spec() {
        let f = parse("fsync:EIO:3").unwrap();
        assert_eq!((f.op, f.errno, f.nth), (Op::Fsync, EIO, 3));
        let f = parse("rename:ENOSPC").unwrap();
        assert_eq!((f.op, f.errno, f.nth), (Op::Rename, ENOSPC, 1));
        for bad in [
            "",
            "read:EIO",
            "write:EPERM",
            "write:EIO:0",
            "write:EIO:x",
            "write:EIO:1:2",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
        let e = std::io::Error::from_raw_os_error(ENOSPC);
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
    }
}
