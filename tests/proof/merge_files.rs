//! Merge mode's copy-on-write by file (CONTRACT.md §10.4–5), proved on rows read back,
//! on a hive root and a local Delta table, with the local engine:
//!
//! - 50 micro-batches merged one by one publish the rows the whole day merged at once
//!   does, date by date; every key lives on exactly one date.
//! - SIGKILL during a file-level merge (at each step boundary, then at random moments;
//!   `WHARF_KILLS=N`, default 50 a format): every date reads exactly as before or after
//!   the batch, never a mix; the rerun converges to the uninterrupted result and leaves
//!   no file that neither the dataset nor the trash holds.
//!
//! Scaled down (a few thousand keys, `target_file_rows = 250`) so a debug build runs it in
//! seconds: what is proved is which files a batch rewrites, which holds at any size.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Product, Rng};
use crate::kit::{day_of_orders, event, read_rows};

type Rows = BTreeMap<String, Vec<BTreeMap<String, String>>>;

const SETTINGS: &str = "write_mode = \"merge\"\nmax_dates = 3\ntarget_file_rows = 250";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Hive,
    Delta,
}

fn product(format: Format) -> Product {
    match format {
        Format::Hive => Product::with_settings(SETTINGS),
        Format::Delta => Product::with_settings(&format!(
            "{SETTINGS}\npublish_root = \"lake/orders\"\ntable_format = \"delta\""
        )),
    }
}

/// The published rows by date, sorted, as a reader of the format sees them.
fn rows(product: &Product, format: Format) -> Rows {
    let mut out = match format {
        Format::Hive => product
            .snapshot()
            .rows
            .into_keys()
            .map(|d| {
                let rows = read_rows(&product.publish.join(format!("event_date={d}")));
                (d, rows)
            })
            .collect(),
        Format::Delta => delta_rows(&product.publish),
    };
    for day in out.values_mut() {
        day.sort();
    }
    out
}

/// The table's live files: its JSON commits replayed.
fn delta_live(table: &Path) -> BTreeSet<String> {
    let mut live = BTreeSet::new();
    for version in 0.. {
        let log = table.join(format!("_delta_log/{version:020}.json"));
        let Ok(text) = std::fs::read_to_string(log) else {
            break;
        };
        for line in text.lines() {
            let action: serde_json::Value = serde_json::from_str(line).unwrap();
            if let Some(path) = action["add"]["path"].as_str() {
                live.insert(path.to_owned());
            }
            if let Some(path) = action["remove"]["path"].as_str() {
                live.remove(path);
            }
        }
    }
    live
}

fn delta_rows(table: &Path) -> Rows {
    let dir = tempfile::tempdir().unwrap();
    let mut dates = BTreeSet::new();
    for path in delta_live(table) {
        let (date, name) = path.split_once('/').unwrap();
        let date = date.strip_prefix("event_date=").unwrap().to_owned();
        let folder = dir.path().join(&date);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(table.join(&path), folder.join(name)).unwrap();
        dates.insert(date);
    }
    dates
        .into_iter()
        .map(|d| {
            let rows = read_rows(&dir.path().join(&d));
            (d, rows)
        })
        .collect()
}

/// A batch that updates a narrow range of keys, moves a few to the next day and adds
/// keys past the last: it rewrites some files of the first day, not all.
fn batch() -> Vec<&'static str> {
    let mut lines = Vec::new();
    for key in 100..=160 {
        lines.push(event(
            &format!("u{key}"),
            key * 3,
            "RETURNED",
            "2024-03-01T23:00:00Z",
        ));
    }
    for key in 400..=410 {
        lines.push(event(
            &format!("m{key}"),
            key * 3,
            "RETURNED",
            "2024-03-02T02:00:00Z",
        ));
    }
    for key in 2000..=2100 {
        lines.push(event(
            &format!("n{key}"),
            key * 3,
            "PENDING",
            "2024-03-01T23:30:00Z",
        ));
    }
    lines.into_iter().map(|l| &*l.leak()).collect()
}

fn assert_one_date_per_key(rows: &Rows) {
    let mut seen = BTreeMap::new();
    for (date, day) in rows {
        for row in day {
            if let Some(other) = seen.insert(row["order_id"].clone(), date.clone()) {
                panic!("order {} on {other} and {date}", row["order_id"]);
            }
        }
    }
}

fn fifty_batches_equal_the_day_at_once(format: Format) {
    let lines = day_of_orders(1500, 7);
    let whole = product(format);
    let day = whole.input(
        "day.jsonl",
        &lines.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    whole.land(&day);
    let batched = product(format);
    let per = lines.len().div_ceil(50);
    for (n, chunk) in lines.chunks(per).enumerate() {
        let chunk: Vec<&str> = chunk.iter().map(String::as_str).collect();
        batched.land(&batched.input(&format!("b{n:02}.jsonl"), &chunk));
    }
    let (want, got) = (rows(&whole, format), rows(&batched, format));
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        ["2024-03-01", "2024-03-02"]
    );
    assert_eq!(got, want, "{format:?}: 50 batches and the day at once");
    assert_one_date_per_key(&got);
    assert!(want["2024-03-01"].len() > 1000, "several files a date");
}

#[test]
fn fifty_micro_batches_equal_the_day_merged_at_once_on_hive() {
    fifty_batches_equal_the_day_at_once(Format::Hive);
}

#[test]
fn fifty_micro_batches_equal_the_day_merged_at_once_on_delta() {
    fifty_batches_equal_the_day_at_once(Format::Delta);
}

/// The step boundaries of a landing a kill is aimed at, then random moments.
fn points(format: Format) -> &'static [&'static str] {
    match format {
        Format::Hive => &[
            "after_stage",
            "after_swap_1",
            "after_swap_2",
            "after_swaps",
            "after_manifest",
            "after_checkpoint",
        ],
        Format::Delta => &[
            "after_stage",
            "after_upload",
            "after_trash",
            "after_commit",
            "before_vacuum",
            "after_manifest",
            "after_checkpoint",
        ],
    }
}

fn copy_roots(from: &Path, to: &Path) {
    for root in ["lake", "state", "quarantine"] {
        let _ = std::fs::remove_dir_all(to.join(root));
        if from.join(root).exists() {
            let mut cp = Command::new("cp");
            cp.arg("-a").arg(from.join(root)).arg(to);
            assert!(cp.status().unwrap().success());
        }
    }
}

/// Kills `wharf run input` in `work`: paused at `point` (then killed there), or after
/// `delay`. Whether the kill landed before the run ended.
fn kill_run(work: &Product, input: &Path, point: Option<&str>, delay: Duration) -> bool {
    let flag = work.dir.path().join("paused");
    let _ = std::fs::remove_file(&flag);
    let mut cmd = work.cmd(&["run"]);
    cmd.arg(input).stdout(Stdio::null()).stderr(Stdio::null());
    if let Some(point) = point {
        cmd.env("WHARF_PAUSE", format!("{point}:{}", flag.display()));
    }
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    loop {
        let due = match point {
            Some(_) => flag.exists(),
            None => started.elapsed() >= delay,
        };
        if due || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = child.kill();
    let status = child.wait().unwrap();
    let _ = std::fs::remove_file(&flag);
    status.signal() == Some(9)
}

/// No file of the dataset's storage that neither the dataset nor the trash holds, and no
/// staging left.
fn assert_no_orphans(work: &Product, format: Format) {
    match format {
        Format::Hive => {
            assert!(!work.staging().exists(), "staging left after the rerun");
            work.snapshot(); // panics on a stray entry a reader would see
        }
        Format::Delta => {
            let mut held = delta_live(&work.publish);
            let trash = std::fs::read_to_string(work.state.join("delta-trash.json"))
                .map(|t| serde_json::from_str::<serde_json::Value>(&t).unwrap())
                .unwrap_or_default();
            for generations in trash["dates"]
                .as_object()
                .into_iter()
                .flat_map(|o| o.values())
            {
                for g in generations.as_array().unwrap() {
                    for f in g["files"].as_array().unwrap() {
                        held.insert(f["path"].as_str().unwrap().to_owned());
                    }
                }
            }
            let stored: BTreeSet<String> = crate::kit::tree(&work.publish)
                .into_keys()
                .map(|p| p.to_string_lossy().into_owned())
                .filter(|p| p.ends_with(".parquet") && !p.starts_with("_delta_log"))
                .collect();
            let orphans: Vec<&String> = stored.difference(&held).collect();
            assert!(orphans.is_empty(), "files nothing holds: {orphans:?}");
        }
    }
}

fn kill_loop(format: Format) {
    let kills_wanted: usize = std::env::var("WHARF_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let template = product(format);
    let base = day_of_orders(1500, 11);
    let base: Vec<&str> = base.iter().map(String::as_str).collect();
    template.land(&template.input("base.jsonl", &base));
    let old = rows(&template, format);
    let reference = product(format);
    copy_roots(template.path(), reference.path());
    let input = template.input("batch.jsonl", &batch());
    let started = Instant::now();
    let ran = reference.run_json(&input);
    let duration = started.elapsed();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let plan = ran.json();
    let day = &plan["dates"].as_array().unwrap()[0];
    let files_before = day["rows_before"].as_u64().unwrap().div_ceil(250);
    let rewritten = day["files_rewritten"].as_u64().unwrap();
    assert!(
        0 < rewritten && rewritten < files_before,
        "a partial rewrite: {day}"
    );
    let new = rows(&reference, format);
    assert_ne!(old, new);

    let work = product(format);
    let mut rng = Rng::new(20240301);
    let (mut kills, mut runs) = (0, 0);
    while kills < kills_wanted {
        runs += 1;
        assert!(
            runs < kills_wanted * 4,
            "too few runs were killed before they ended"
        );
        copy_roots(template.path(), work.path());
        let point = points(format).get(runs - 1).copied();
        let delay = Duration::from_micros(rng.below(duration.as_micros() as u64));
        if !kill_run(&work, &input, point, delay) {
            continue;
        }
        kills += 1;
        let now = rows(&work, format);
        for date in old.keys().chain(new.keys()) {
            let (was, is, will) = (old.get(date), now.get(date), new.get(date));
            assert!(
                is == was || is == will,
                "{format:?} killed at {point:?}/{delay:?}: {date} is neither before nor after"
            );
        }
        work.land(&input);
        assert_eq!(rows(&work, format), new, "{format:?}: the rerun converges");
        assert_one_date_per_key(&new);
        assert_no_orphans(&work, format);
    }
    eprintln!("merge kill loop ({format:?}): {kills} kills in {runs} runs");
}

#[test]
fn sigkill_during_file_level_merges_on_hive_leaves_each_date_before_or_after() {
    kill_loop(Format::Hive);
}

#[test]
fn sigkill_during_file_level_merges_on_delta_leaves_each_date_before_or_after() {
    kill_loop(Format::Delta);
}
