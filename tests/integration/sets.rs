//! CONTRACT.md §11 landed for real: a folder of parts is one input (its rows, counts and
//! findings those of its parts concatenated), it lands only once its marker exists, its
//! identity follows its parts, a bad layout writes nothing, and `.gz` / `.zst` inputs read
//! as their plain bytes would.

use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::kit::{Product, event, statuses};

/// Lines with retries, ties on instant (arrival decides), a tiebreak, a reject and a
/// blank: splitting them anywhere must not change what lands.
fn lines() -> Vec<String> {
    crate::kit::tricky_lines()
}

fn text(lines: &[String]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

/// Writes inbox folder `name` with `parts` and, when `closed`, the marker.
fn write_set(product: &Product, name: &str, parts: &[(&str, &[u8])], closed: bool) -> PathBuf {
    let dir = product.path().join("inbox").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for (part, bytes) in parts {
        std::fs::write(dir.join(part), bytes).unwrap();
    }
    if closed {
        std::fs::write(dir.join("_SUCCESS"), b"").unwrap();
    }
    dir
}

/// `lines` cut at `cuts` into parts `part-00000.jsonl`, … (equal cuts make empty parts).
fn split(lines: &[String], cuts: &[usize]) -> Vec<(String, Vec<u8>)> {
    let mut cuts: Vec<usize> = cuts.iter().map(|&c| c.min(lines.len())).collect();
    cuts.sort_unstable();
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(lines.len());
    bounds
        .windows(2)
        .enumerate()
        .map(|(i, w)| (format!("part-{i:05}.jsonl"), text(&lines[w[0]..w[1]])))
        .collect()
}

/// What a plan says, minus the input's name and hash.
fn essence(plan: &Value) -> Value {
    serde_json::json!({
        "action": plan["action"], "reason": plan["reason"],
        "counts": plan["counts"], "dates": plan["dates"],
    })
}

/// Plans and lands `parts` as a set and their concatenation as one file, and checks the
/// two agree: plan, rows, and each reject on the same line of the concatenation.
fn set_equals_file(parts: &[(String, Vec<u8>)]) {
    let whole: Vec<u8> = parts.iter().flat_map(|(_, b)| b.clone()).collect();
    let (as_set, as_file) = (Product::with_settings(""), Product::with_settings(""));
    let borrowed: Vec<(&str, &[u8])> = parts.iter().map(|(n, b)| (n.as_str(), &b[..])).collect();
    let dir = write_set(&as_set, "2024-03-01", &borrowed, true);
    let file = as_file.input_bytes("2024-03-01.jsonl", &whole);
    let (set_plan, file_plan) = (as_set.plan_json(&dir), as_file.plan_json(&file));
    assert_eq!(set_plan.code, 0, "{}", set_plan.stderr);
    assert_eq!(essence(&set_plan.json()), essence(&file_plan.json()));
    assert_eq!(as_set.run_json(&dir).code, 0);
    assert_eq!(as_file.run_json(&file).code, 0);
    assert_eq!(as_set.snapshot().rows, as_file.snapshot().rows);
    // Each reject sits on (part, line); the same line of the concatenation.
    let first_line = |part: &str| -> u64 {
        let before = parts.iter().take_while(|(n, _)| n != part);
        before
            .map(|(_, b)| b.iter().filter(|&&c| c == b'\n').count() as u64)
            .sum()
    };
    let located: Vec<u64> = as_set
        .rejects(set_plan.json()["input_sha256"].as_str().unwrap())
        .iter()
        .map(|r| first_line(r["file"].as_str().unwrap()) + r["line"].as_u64().unwrap())
        .collect();
    let lines: Vec<u64> = as_file
        .rejects(file_plan.json()["input_sha256"].as_str().unwrap())
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(located, lines);
}

#[test]
fn sets_of_one_two_and_many_parts_land_the_concatenated_file() {
    let lines = lines();
    set_equals_file(&split(&lines, &[]));
    set_equals_file(&split(&lines, &[5]));
    let every: Vec<usize> = (1..lines.len()).collect();
    set_equals_file(&split(&lines, &every));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn any_split_lands_as_the_concatenated_file(cuts in prop::collection::vec(0usize..=13, 0..6)) {
        set_equals_file(&split(&lines(), &cuts));
    }
}

#[test]
fn arrival_order_across_parts_decides_ties() {
    let product = Product::with_settings("");
    let first = text(&[event("e1", 1, "IN_PART_A", "2024-03-01T10:00:00Z")]);
    let second = text(&[event("e2", 1, "IN_PART_B", "2024-03-01T10:00:00Z")]);
    // Byte order of names, not creation order: `b` is written first and still comes last.
    let dir = write_set(
        &product,
        "set",
        &[("b.jsonl", &second), ("a.jsonl", &first)],
        true,
    );
    let ran = product.run_json(&dir);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.json()["counts"]["ties_by_arrival"], 1);
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "IN_PART_B".into())]
    );
}

/// §11.3 computed here from the parts on disk.
fn identity_of(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('_') && !n.starts_with('.'))
        .collect();
    names.sort();
    let mut text = Vec::new();
    for name in names {
        let sha = Sha256::digest(std::fs::read(dir.join(&name)).unwrap());
        text.extend(format!("{name}\0{sha:x}\n").into_bytes());
    }
    format!("{:x}", Sha256::digest(&text))
}

#[test]
fn identity_follows_every_part_and_the_checkpoint_lists_them() {
    let product = Product::with_settings("");
    let a = text(&[event("e1", 1, "A", "2024-03-01T10:00:00Z")]);
    let b = text(&[event("e2", 2, "B", "2024-03-01T10:00:00Z")]);
    let dir = write_set(&product, "set", &[("a.jsonl", &a), ("b.jsonl", &b)], true);
    let mut seen = Vec::new();
    let mut land = |want: &str| {
        let ran = product.run_json(&dir);
        assert_eq!(ran.json()["action"], want, "{}", ran.stderr);
        let checkpoint = product.checkpoint("set").unwrap();
        assert_eq!(checkpoint["input_sha256"], identity_of(&dir).as_str());
        seen.push(identity_of(&dir));
        checkpoint
    };
    let checkpoint = land("published");
    let parts = checkpoint["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[1]["name"], "b.jsonl");
    assert_eq!(parts[1]["size"], b.len());
    assert_eq!(
        parts[1]["sha256"],
        format!("{:x}", Sha256::digest(&b)).as_str()
    );
    land("skipped");
    std::fs::write(
        dir.join("b.jsonl"),
        text(&[event("e3", 2, "B2", "2024-03-01T11:00:00Z")]),
    )
    .unwrap();
    land("published");
    std::fs::write(
        dir.join("c.jsonl"),
        text(&[event("e4", 3, "C", "2024-03-01T11:00:00Z")]),
    )
    .unwrap();
    land("published");
    std::fs::remove_file(dir.join("a.jsonl")).unwrap();
    land("published");
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(2, "B2".into()), (3, "C".into())]
    );
    seen.dedup();
    assert_eq!(seen.len(), 4, "each change is a new identity: {seen:?}");
    let history = product.wharf(&["history", "--json"]);
    let last: Value = serde_json::from_str(history.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["parts"], serde_json::json!(["b.jsonl", "c.jsonl"]));
}

/// `wharf status` lists the parts of each set that owns a date, once, after the dates:
/// name (sanitized), size and short hash of the first 20, then how many more; a date
/// still owned by an earlier landing of the same name shows no parts (they are not its).
#[test]
fn status_lists_the_parts_of_the_set_that_owns_each_date() {
    let product = Product::with_settings("");
    // 25 parts, one event each: the first 12 on March 1st, the rest on the 2nd; the
    // first part's name holds a terminal escape.
    let mut named: Vec<(String, Vec<u8>)> = (0..25)
        .map(|i| {
            let day = if i < 12 { "01" } else { "02" };
            let at = format!("2024-03-{day}T10:00:00Z");
            let part = text(&[event(&format!("e{i}"), i, "A", &at)]);
            (format!("part-{i:05}.jsonl"), part)
        })
        .collect();
    named[0].0 = "part-00000\x1b[2J.jsonl".to_owned();
    let borrowed: Vec<(&str, &[u8])> = named.iter().map(|(n, b)| (n.as_str(), &b[..])).collect();
    let dir = write_set(&product, "day", &borrowed, true);
    assert_eq!(product.run_json(&dir).code, 0);
    let set_sha = identity_of(&dir);

    let status = product.wharf(&["status"]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    let out = &status.stdout;
    assert!(
        !out.contains('\x1b'),
        "a part's name steered the terminal: {out}"
    );
    let heading = format!("day ({}): set of 25 parts, ", &set_sha[..12]);
    assert_eq!(
        out.matches(&heading).count(),
        1,
        "once for both dates: {out}"
    );
    assert_eq!(out.matches("  set of 25 parts").count(), 2, "{out}");
    let (name, bytes) = &named[19];
    let sha = format!("{:x}", Sha256::digest(bytes));
    let line = out.lines().find(|l| l.contains(name.as_str())).unwrap();
    assert!(
        line.contains(&format!(" {} bytes  {}", bytes.len(), &sha[..12])),
        "{line}"
    );
    // The one sanitiser's mark for ESC (console::sanitize).
    assert!(out.contains("part-00000␛[2J.jsonl"), "{out}");
    assert!(
        !out.contains("part-00020.jsonl"),
        "only the first 20: {out}"
    );
    assert!(out.contains("… and 5 more"), "{out}");
    let json = product.wharf(&["status", "--json"]).json();
    let listed = json["dates"][0]["owner_parts"].as_array().unwrap();
    assert_eq!(listed.len(), 25, "--json lists them all");

    // The set again with March 2nd only: March 1st stays the first landing's, whose
    // parts the checkpoint no longer records.
    for (name, _) in &named[..12] {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    assert_eq!(product.run_json(&dir).code, 0);
    let out = product.wharf(&["status"]).stdout;
    let day = |date: &str| out.lines().find(|l| l.contains(date)).unwrap().to_owned();
    assert!(
        day("event_date=2024-03-01").ends_with(&format!("({})", &set_sha[..12])),
        "{out}"
    );
    assert!(
        day("event_date=2024-03-02").ends_with("  set of 13 parts"),
        "{out}"
    );
    assert!(out.contains(": set of 13 parts, "), "{out}");
}

/// Everything the product wrote outside its inbox.
fn written(product: &Product) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["lake", "state", "quarantine"]
        .iter()
        .flat_map(|d| product.tree(d).into_keys())
        .collect();
    out.sort();
    out
}

#[test]
fn an_open_set_is_never_planned_or_landed() {
    let product = Product::with_settings("");
    let part = text(&[event("e1", 1, "A", "2024-03-01T10:00:00Z")]);
    let dir = write_set(&product, "set", &[("part-0.jsonl", &part)], false);
    for verb in ["plan", "run"] {
        let ran = product.wharf(&[verb, dir.to_str().unwrap()]);
        assert_eq!(ran.code, 2, "{verb}: {}", ran.stderr);
        assert!(ran.stderr.contains("_SUCCESS"), "{}", ran.stderr);
    }
    let whole = product.wharf(&["run"]);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    assert!(written(&product).is_empty(), "{:?}", written(&product));
    std::fs::write(dir.join("_SUCCESS"), b"written by the job").unwrap();
    assert_eq!(product.wharf(&["run"]).code, 0);
    assert_eq!(statuses(&product.rows("2024-03-01")), [(1, "A".into())]);
}

#[test]
fn the_whole_inbox_lands_files_and_sets_oldest_first() {
    let product = Product::with_settings("");
    let at = |status: &str| text(&[event(status, 1, status, "2024-03-01T10:00:00Z")]);
    let (old, new) = (at("OLD"), at("NEW"));
    let dir = write_set(&product, "set", &[("p.jsonl", &old)], true);
    let marker = std::fs::File::options()
        .write(true)
        .open(dir.join("_SUCCESS"))
        .unwrap();
    marker
        .set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1))
        .unwrap();
    product.input_bytes("later.jsonl", &new);
    let ran = product.wharf(&["run"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(statuses(&product.rows("2024-03-01")), [(1, "NEW".into())]);
    assert_eq!(product.owners()["2024-03-01"], "later.jsonl");
    assert!(product.checkpoint("set").is_some());
}

#[test]
fn hidden_files_the_marker_and_underscore_folders_are_not_parts() {
    let product = Product::with_settings("");
    let good = text(&[event("e1", 1, "A", "2024-03-01T10:00:00Z")]);
    let dir = write_set(
        &product,
        "set",
        &[("part-0.jsonl", &good), (".part-1.crc", b"junk")],
        true,
    );
    std::fs::write(dir.join("_SUCCESS"), b"not json either").unwrap();
    std::fs::create_dir(dir.join("_temporary")).unwrap();
    std::fs::write(dir.join("_temporary").join("x"), b"junk").unwrap();
    let plan = product.plan_json(&dir).json();
    assert_eq!(plan["counts"]["lines"], 1);
    assert_eq!(plan["parts"].as_array().unwrap().len(), 1);
    assert_eq!(plan["parts"][0]["name"], "part-0.jsonl");
}

/// Puts a bad entry in a set's folder.
type Spoil = fn(&Path);

#[test]
fn each_bad_layout_refuses_naming_the_entry_with_nothing_written() {
    let good = text(&[event("e1", 1, "A", "2024-03-01T10:00:00Z")]);
    let layouts: [(&str, Spoil); 3] = [
        ("link.jsonl", |dir| {
            std::os::unix::fs::symlink(dir.join("part-0.jsonl"), dir.join("link.jsonl")).unwrap()
        }),
        ("sub", |dir| std::fs::create_dir(dir.join("sub")).unwrap()),
        ("fifo.jsonl", |dir| {
            let made = std::process::Command::new("mkfifo")
                .arg(dir.join("fifo.jsonl"))
                .status();
            assert!(made.unwrap().success());
        }),
    ];
    for (entry, spoil) in layouts {
        let product = Product::with_settings("");
        let dir = write_set(&product, "set", &[("part-0.jsonl", &good)], true);
        spoil(&dir);
        for args in [
            vec!["run", dir.to_str().unwrap()],
            vec!["run"],
            vec!["plan", dir.to_str().unwrap()],
        ] {
            let ran = product.wharf(&args);
            assert_ne!(ran.code, 0, "{entry} {args:?}");
            assert!(ran.stderr.contains(entry), "{entry}: {}", ran.stderr);
        }
        assert!(
            written(&product).is_empty(),
            "{entry}: {:?}",
            written(&product)
        );
    }
}

#[test]
fn an_unreadable_part_refuses_with_nothing_written() {
    use std::os::unix::fs::PermissionsExt;
    let product = Product::with_settings("");
    let good = text(&[event("e1", 1, "A", "2024-03-01T10:00:00Z")]);
    let dir = write_set(
        &product,
        "set",
        &[("a.jsonl", &good), ("b.jsonl", &good)],
        true,
    );
    let locked = dir.join("b.jsonl");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&locked).is_ok() {
        eprintln!("skipped: this user reads files whatever their mode (root)");
        return;
    }
    let ran = product.wharf(&["run", dir.to_str().unwrap()]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(ran.stderr.contains("b.jsonl"), "{}", ran.stderr);
    assert!(written(&product).iter().all(|p| p.ends_with(".lock")));
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

#[test]
fn gzip_and_zstd_plan_and_land_as_the_plain_bytes() {
    let lines = lines();
    let plain = Product::with_settings("");
    let file = plain.input_bytes("day.jsonl", &text(&lines));
    let want = essence(&plain.plan_json(&file).json());
    assert_eq!(plain.run_json(&file).code, 0);
    let rows = plain.snapshot().rows;
    for (ending, encode) in [(".gz", gzip as fn(&[u8]) -> Vec<u8>), (".zst", zstd)] {
        let product = Product::with_settings("");
        let stored = encode(&text(&lines));
        let file = product.input_bytes(&format!("day.jsonl{ending}"), &stored);
        let plan = product.plan_json(&file).json();
        assert_eq!(essence(&plan), want, "{ending}");
        assert_eq!(
            plan["input_sha256"],
            format!("{:x}", Sha256::digest(&stored)).as_str()
        );
        assert_eq!(product.run_json(&file).code, 0, "{ending}");
        assert_eq!(product.snapshot().rows, rows, "{ending}");
        // The same bytes as parts: one compressed, one plain, one compressed.
        let set = Product::with_settings("");
        let parts = split(&lines, &[4, 9]);
        let named: Vec<(String, Vec<u8>)> = parts
            .iter()
            .enumerate()
            .map(|(i, (n, b))| {
                if i == 1 {
                    (n.clone(), b.clone())
                } else {
                    (format!("{n}{ending}"), encode(b))
                }
            })
            .collect();
        let borrowed: Vec<(&str, &[u8])> =
            named.iter().map(|(n, b)| (n.as_str(), &b[..])).collect();
        let dir = write_set(&set, "day", &borrowed, true);
        assert_eq!(essence(&set.plan_json(&dir).json()), want, "{ending} parts");
        assert_eq!(set.run_json(&dir).code, 0);
        assert_eq!(set.snapshot().rows, rows, "{ending} parts");
    }
}

#[test]
fn a_truncated_gz_names_the_file_and_offset_with_nothing_written() {
    let product = Product::with_settings("");
    let stored = gzip(&text(&lines()).repeat(50));
    let cut = &stored[..stored.len() - 20];
    let file = product.input_bytes("day.jsonl.gz", cut);
    let ran = product.wharf(&["run", file.to_str().unwrap()]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(ran.stderr.contains("day.jsonl.gz"), "{}", ran.stderr);
    assert!(
        ran.stderr.contains(&format!("at byte {}", cut.len())),
        "{}",
        ran.stderr
    );
    // As a part too, in a set.
    let dir = write_set(
        &product,
        "set",
        &[("a.jsonl", &text(&lines())), ("b.jsonl.gz", cut)],
        true,
    );
    let ran = product.wharf(&["run", dir.to_str().unwrap()]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(ran.stderr.contains("b.jsonl.gz"), "{}", ran.stderr);
    assert!(
        written(&product).iter().all(|p| p.ends_with(".lock")),
        "{:?}",
        written(&product)
    );
}

/// Where each block of zstd frame `stored` starts, and whether it is compressed (a raw or
/// RLE block has no entropy coding to damage): the frame header's size from its
/// descriptor, then the 3-byte block headers.
fn zstd_blocks(stored: &[u8]) -> Vec<(usize, bool)> {
    let descriptor = stored[4];
    let single_segment = descriptor & 0x20 != 0;
    let content_size = [usize::from(single_segment), 2, 4, 8][usize::from(descriptor >> 6)];
    let dictionary = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let mut at = 5 + usize::from(!single_segment) + dictionary + content_size;
    let mut blocks = Vec::new();
    loop {
        let header = u32::from_le_bytes([stored[at], stored[at + 1], stored[at + 2], 0]);
        let (last, kind, size) = (header & 1 == 1, (header >> 1) & 3, (header >> 3) as usize);
        blocks.push((at, kind == 2));
        at += 3 + if kind == 1 { 1 } else { size };
        if last {
            return blocks;
        }
    }
}

/// A `.zst` whose bytes are damaged mid-stream (a compressed block's content overwritten,
/// the frame otherwise whole): an input error (exit 2) naming the file and a byte offset
/// inside the damaged block, not the file's end; nothing published, no checkpoint. As a
/// part of a set too.
#[test]
fn a_damaged_zst_names_the_file_and_the_offset_with_nothing_written() {
    let product = Product::with_settings("");
    let plain: Vec<u8> = crate::kit::Events::new(20_000)
        .lines()
        .iter()
        .flat_map(|l| [&l[..], b"\n"].concat())
        .collect();
    let mut stored = zstd(&plain);
    let blocks = zstd_blocks(&stored);
    assert!(blocks.len() > 4, "{} blocks", blocks.len());
    let middle = blocks.len() / 2;
    let (start, end) = (blocks[middle..].iter())
        .zip(&blocks[middle + 1..])
        .find(|((_, compressed), _)| *compressed)
        .map(|((start, _), (next, _))| (*start, *next))
        .expect("a compressed block past the middle");
    let damaged = start + 3..start + 67;
    assert!(damaged.end < end, "a block of more than 64 bytes");
    stored[damaged.clone()].fill(0xFF);
    let offset = |stderr: &str| -> usize {
        let at = stderr
            .find("does not decode as zstd at byte ")
            .expect(stderr);
        let digits = &stderr[at + 32..];
        let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().expect(stderr)
    };

    let file = product.input_bytes("day.jsonl.zst", &stored);
    let ran = product.wharf(&["run", file.to_str().unwrap()]);
    assert_eq!(ran.code, 2, "an input error (§8): {}", ran.stderr);
    assert!(ran.stderr.contains("day.jsonl.zst"), "{}", ran.stderr);
    let at = offset(&ran.stderr);
    // zstd decodes a block whole: the offset is in the damaged block, not a read before.
    assert!(
        (start..end).contains(&at),
        "byte {at}: the damaged block is {start}..{end}, damaged {damaged:?}"
    );
    assert!(!ran.stderr.contains("truncated"), "{}", ran.stderr);
    assert!(product.checkpoint("day.jsonl.zst").is_none());

    // As a part, after a plain one: the part is named, at the same stored offset.
    let dir = write_set(
        &product,
        "set",
        &[("a.jsonl", &text(&lines())), ("b.jsonl.zst", &stored)],
        true,
    );
    let ran = product.wharf(&["run", dir.to_str().unwrap()]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(ran.stderr.contains("b.jsonl.zst"), "{}", ran.stderr);
    assert_eq!(offset(&ran.stderr), at, "{}", ran.stderr);
    assert!(product.checkpoint("set").is_none());
    assert!(
        written(&product).iter().all(|p| p.ends_with(".lock")),
        "{:?}",
        written(&product)
    );
}

#[test]
fn memory_stays_bounded_whatever_the_compression_ratio() {
    let product = Product::with_settings("");
    // 64 MiB of one repeated line, then one line of 960 MiB: 1 GiB decoded, a few
    // hundred KB stored.
    let line = event("e1", 1, "A", "2024-03-01T10:00:00Z") + "\n";
    let mut encoder = zstd::Encoder::new(Vec::new(), 3).unwrap();
    let block = line.repeat((1 << 20) / line.len());
    for _ in 0..64 {
        encoder.write_all(block.as_bytes()).unwrap();
    }
    let long = vec![b'x'; 1 << 20];
    for _ in 0..960 {
        encoder.write_all(&long).unwrap();
    }
    let stored = encoder.finish().unwrap();
    assert!(stored.len() < 4 << 20, "{}", stored.len());
    let file = product.input_bytes("big.jsonl.zst", &stored);
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "maxrss_kb=%M"])
        .arg(env!("CARGO_BIN_EXE_wharf"))
        .arg("--config")
        .arg(&product.config)
        .args(["plan", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["counts"]["by_reason"]["line_too_long"], 1, "{stderr}");
    let kb: u64 = stderr
        .rsplit("maxrss_kb=")
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    eprintln!("peak RSS {kb} KB for 1 GiB decoded");
    assert!(kb < 256 * 1024, "peak RSS {kb} KB for 1 GiB decoded");
}

#[test]
fn a_closed_set_with_no_parts_is_an_empty_input() {
    let product = Product::with_settings("");
    let dir = write_set(&product, "nothing", &[(".hidden", b"junk")], true);
    let ran = product.run_json(&dir);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    assert_eq!(ran.json()["reason"], "empty_input");
    assert_eq!(ran.json()["counts"]["lines"], 0);
    assert!(product.dates().is_empty());
}
