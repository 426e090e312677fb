//! SIGKILL `wharf run` at random moments while it lands a generated file (10k events,
//! two dates: small, as every kill is followed by a full rerun) over a published version of the same dates. After every kill: each
//! partition readable and exactly old or exactly new, state parses, no stray entry
//! visible to readers; then a rerun converges to the uninterrupted result (rows and
//! Parquet bytes). Runs on both swap paths; `WHARF_KILLS=N` asks for N kills on each
//! (default 25); `WHARF_KILL_SEED` changes the moments. On the two-rename path a kill
//! between its renames leaves the date absent: then the old generation must be whole in
//! the trash, the other date old or new, and the rerun converge all the same.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, Dataset, Product, Rng};
use crate::swap_path::{self, Exchange, SwapPath, TwoRenames};

const ROOTS: [&str; 3] = ["lake", "state", "quarantine"];

fn copy_roots(from: &Path, to: &Path) {
    for root in ROOTS {
        let _ = std::fs::remove_dir_all(to.join(root));
        if from.join(root).exists() {
            let ok = Command::new("cp")
                .arg("-a")
                .arg(from.join(root))
                .arg(to)
                .status()
                .unwrap();
            assert!(ok.success());
        }
    }
}

/// Runs `wharf run new` once, uninterrupted, polling for the moment staging appears;
/// returns (the run's wall time, when staging first showed). Only used to spread the
/// kill moments; nothing is asserted on time.
fn measure(path: SwapPath, product: &Product, input: &Path) -> (Duration, Duration) {
    let started = Instant::now();
    let mut child = path
        .cmd(product, &["run"])
        .arg(input)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let staging = product.staging();
    let mut staged_at = None;
    loop {
        if staged_at.is_none() && staging.exists() {
            staged_at = Some(started.elapsed());
        }
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    let total = started.elapsed();
    (total, staged_at.unwrap_or(total * 3 / 4))
}

/// Where in a run a kill is aimed.
#[derive(Clone, Copy)]
enum Phase {
    Anywhere,
    Writing,
    Swapping,
}

/// The inode of `path`, `None` when absent.
fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

/// After a kill: per date, whether it is new (see [`common::check_invariants`]); a date
/// absent (only between the fallback's two renames) counts as not new, once its old
/// generation is checked whole in the trash.
fn check_after_kill(fallback: bool, work: &Product, old: &Dataset, new: &Dataset) -> Vec<bool> {
    let now = work.snapshot();
    let absent: Vec<&String> = old
        .rows
        .keys()
        .filter(|d| !now.rows.contains_key(*d))
        .collect();
    let [date] = absent.as_slice() else {
        assert!(absent.is_empty(), "dates absent: {absent:?}");
        return common::check_invariants(work, old, new);
    };
    assert!(fallback, "{date} absent after an exchange");
    assert!(
        swap_path::newest_in_trash(work, date) == swap_path::files_of(&old.files, date),
        "{date} is absent and its old generation is not whole in the trash"
    );
    let rest = (swap_path::without(old, date), swap_path::without(new, date));
    let mut dates = common::check_invariants(work, &rest.0, &rest.1);
    let at = old.rows.keys().position(|d| d == *date).unwrap();
    dates.insert(at, false);
    dates
}

#[test]
fn sigkill_at_random_moments_never_damages_a_day_and_reruns_converge() {
    kill_loop(Exchange);
}

#[test]
fn sigkill_at_random_moments_on_the_two_rename_swap() {
    kill_loop(TwoRenames);
}

fn kill_loop(path: SwapPath) {
    let kills_wanted: u32 = std::env::var("WHARF_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25);
    let seed: u64 = std::env::var("WHARF_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20240301);
    let inputs = tempfile::tempdir().unwrap();
    let (old_input, new_input) = (
        inputs.path().join("old.jsonl"),
        inputs.path().join("new.jsonl"),
    );
    common::generate(&old_input, 10_000, 2, 21);
    common::generate(&new_input, 10_000, 2, 22);

    // The template: the old version published. The reference: then the new one.
    let template = Product::new();
    template.land(&old_input);
    let old = template.snapshot();
    // Three uninterrupted runs; the longest phases (one run on a loaded machine can be
    // far off, and too short a writing phase puts every kill before the first swap).
    let reference = Product::new();
    let (mut duration, mut writes) = (Duration::ZERO, Duration::from_millis(20));
    for _ in 0..3 {
        copy_roots(template.path(), reference.path());
        let (total, staged_at) = measure(path, &reference, &new_input);
        duration = duration.max(total);
        writes = writes.max(total.saturating_sub(staged_at));
    }
    path.assert_taken(&reference, 2);
    // The machine's own path is the fallback too where it has no exchange.
    let fallback = swap_path::last_swaps(&reference).contains(&"two_renames".to_owned());
    let new = reference.snapshot();
    assert_eq!(old.rows.len(), 2);
    assert!(old.rows.keys().all(|d| old.rows[d] != new.rows[d]));

    let mut tail = (writes / 4).max(Duration::from_millis(2));
    let work = Product::new();
    let first_date = work
        .publish
        .join(format!("event_date={}", old.rows.keys().next().unwrap()));
    let mut rng = Rng::new(seed);
    let (mut kills, mut finished) = (0u32, 0u32);
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    while kills < kills_wanted {
        assert!(
            finished <= kills_wanted.max(10),
            "too many runs ended before their kill; the input is too small to spread kills"
        );
        copy_roots(template.path(), work.path());
        // A quarter of the kills at a moment in the first 90% of the run (mostly reading,
        // where a kill can only leave nothing); half once staging has appeared, anywhere in
        // the writing phase; a quarter once the first date's swap shows (its folder is
        // another inode), in the short tail of swaps, manifest and checkpoint. Phases are
        // watched on disk, so a loaded machine does not skew them.
        let phase = match rng.below(4) {
            0 => Phase::Anywhere,
            1 | 2 => Phase::Writing,
            _ => Phase::Swapping,
        };
        let span = match phase {
            Phase::Anywhere => duration.mul_f64(0.9),
            Phase::Writing => writes,
            Phase::Swapping => tail,
        };
        let at = Duration::from_micros(rng.below(span.as_micros() as u64));
        let first_inode = inode(&first_date);
        let mut child = path
            .cmd(&work, &["run"])
            .arg(&new_input)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let staging = work.staging();
        let started = |child: &mut std::process::Child| match phase {
            Phase::Anywhere => true,
            Phase::Writing => staging.exists(),
            Phase::Swapping => inode(&first_date) != first_inode,
        } || child.try_wait().unwrap().is_some();
        while !started(&mut child) {
            std::thread::sleep(Duration::from_micros(100));
        }
        std::thread::sleep(at);
        let _ = child.kill(); // SIGKILL
        let status = child.wait().unwrap();
        if status.signal() != Some(9) {
            assert!(status.success(), "an unkilled run must succeed: {status:?}");
            finished += 1;
            // Runs got faster than when measured (the load on a shared machine comes and
            // goes): aim that phase's kills earlier from now on.
            match phase {
                Phase::Anywhere => duration = duration.mul_f64(0.75),
                Phase::Writing => writes = writes.mul_f64(0.75),
                Phase::Swapping => tail = tail.mul_f64(0.75),
            }
            continue;
        }
        kills += 1;

        let dates = check_after_kill(fallback, &work, &old, &new);
        let label = format!(
            "dates new {dates:?} present {} staging {} manifest {:?} checkpoint {}",
            work.snapshot().rows.len(),
            work.staging().exists(),
            work.owners().values().next().cloned().unwrap_or_default(),
            work.checkpoint("new.jsonl").is_some(),
        );
        *seen.entry(label).or_default() += 1;

        path.land(&work, &new_input);
        common::assert_converged(&work, &new, "new.jsonl");
    }
    eprintln!(
        "kill loop ({path:?}): {kills} kills survived, {finished} runs finished before their kill \
         (run up to {duration:?}, writing up to {writes:?}); states seen after a kill:"
    );
    for (state, n) in &seen {
        eprintln!("  {n:>4}  {state}");
    }
}
