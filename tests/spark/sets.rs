//! CONTRACT.md §11 on Spark: the driver reads a set part by part, numbering each line on
//! through the parts exactly as the local engine numbers it, and hands Spark the accepted
//! records, so plans, rows and quarantine are the local engine's; `.gz` and `.zst` parts
//! alike, and a part named for another codec is read as stored. A truncated `.gz` is an
//! input error: nothing is written.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use wharf::engine::spark::SparkEngine;
use wharf::plan::Action;

use crate::engines::{self, assert_census_matches};
use crate::kit::{Product, event};

/// Lines with retries, ties on instant (arrival decides), a tiebreak, rejects late in the
/// input and a blank: cut anywhere, the set must land as the local engine lands it.
fn lines() -> Vec<String> {
    let mut lines = crate::kit::tricky_lines();
    // Keys 10..17 tie on their instant over and over: the last arrival wins each.
    for i in 0..40 {
        let status = "s".repeat(1 + i % 13);
        lines.push(event(
            &format!("g{i}"),
            10 + (i as i64 % 8),
            &status,
            "2024-03-01T12:00:00Z",
        ));
    }
    lines.push("{\"broken\":".to_owned());
    lines.push(event("e1", 1, "PENDING", "2024-03-01T10:00:00Z"));
    lines
}

/// A set's parts: (name, bytes), in order.
type Parts = Vec<(String, Vec<u8>)>;

/// `lines` cut before each index of `cuts` into `part-00000.jsonl`, …
fn split(lines: &[String], cuts: &[usize]) -> Parts {
    let mut bounds = vec![0];
    bounds.extend(cuts.iter().map(|&c| c.min(lines.len())));
    bounds.push(lines.len());
    bounds
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            let text: Vec<u8> = lines[w[0]..w[1]]
                .iter()
                .flat_map(|l| format!("{l}\n").into_bytes())
                .collect();
            (format!("part-{i:05}.jsonl"), text)
        })
        .collect()
}

/// Writes inbox folder `name` with `parts` and its marker.
fn write_set(product: &Product, name: &str, parts: &[(String, Vec<u8>)]) -> PathBuf {
    let dir = product.path().join("inbox").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for (part, bytes) in parts {
        std::fs::write(dir.join(part), bytes).unwrap();
    }
    std::fs::write(dir.join("_SUCCESS"), b"").unwrap();
    dir
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Plans `input` with both engines and compares: counts, findings, dates, parts, and each
/// finding's (part, line); then the staged rows when the plan publishes.
fn both_engines_agree(product: &Product, input: &Path) {
    let config = engines::config(product.path());
    let (plan, mut local_engine) = engines::local_plan(&config, input);
    let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    let census = engines::spark_census(&mut engine, &config, input);
    assert!(!census.unranked, "the set reached Spark");
    assert_census_matches(&census, &plan, "census");
    assert_eq!(census.parts, plan.parts, "parts");
    let located = |parts, findings: &[wharf::plan::LineFinding]| -> Vec<(Option<String>, u64)> {
        findings
            .iter()
            .map(|f| {
                let (part, line) = wharf::input::locate(parts, f.line);
                (part.map(str::to_owned), line)
            })
            .collect()
    };
    assert_eq!(
        located(&census.parts, &census.findings),
        located(&plan.parts, &plan.findings),
        "findings by (part, line)"
    );
    if plan.action == Action::Publish {
        let local = engines::staged_rows(
            &mut local_engine,
            &config,
            &plan,
            &product.path().join("local"),
        );
        let staging = product.path().join("lake/.staging");
        let spark = engines::staged_rows(&mut engine, &config, &plan, &staging);
        assert_eq!(spark, local, "staged rows, file by file");
    }
}

fn product() -> Product {
    Product::with_settings("max_rejected_lines = 10")
}

#[test]
fn sets_of_one_two_and_many_parts_number_lines_as_the_local_engine() {
    let _server = engines::server();
    let lines = lines();
    let every: Vec<usize> = (1..lines.len()).collect();
    // Retries (lines 1 and 3), a tie (5 and 7) and the reject (6) each across an edge.
    for cuts in [vec![], vec![3], vec![2, 6, 6, 20, 41], every] {
        let product = product();
        let parts = split(&lines, &cuts);
        let dir = write_set(&product, "2024-03-01", &parts);
        both_engines_agree(&product, &dir);
    }
}

/// Each part is split on its own (§11.4): a BOM at a later part's start is skipped, a part
/// ending without `\n` ends its line there, and CRLF lines lose their `\r`.
#[test]
fn each_part_keeps_its_own_bom_last_line_and_carriage_returns() {
    let _server = engines::server();
    let product = product();
    let lines = lines();
    let mut parts = split(&lines, &[10, 20, 30]);
    parts[1].1.insert(0, 0xEF);
    parts[1].1.splice(1..1, [0xBB, 0xBF]);
    parts[2].1.pop();
    parts[3].1 = String::from_utf8(parts[3].1.clone())
        .unwrap()
        .replace('\n', "\r\n")
        .into_bytes();
    parts.insert(2, ("part-00001b.jsonl".to_owned(), Vec::new()));
    let dir = write_set(&product, "2024-03-01", &parts);
    both_engines_agree(&product, &dir);
}

/// A closed set with no parts, or with only an empty part, is an empty input (§5.8) on
/// both engines alike.
#[test]
fn a_set_with_no_lines_is_an_empty_input_on_both_engines() {
    let _server = engines::server();
    for parts in [
        Vec::new(),
        vec![("part-00000.jsonl".to_owned(), Vec::new())],
    ] {
        let product = product();
        let dir = write_set(&product, "2024-03-01", &parts);
        both_engines_agree(&product, &dir);
    }
}

/// A contradiction between parts is a conflict on its (part, line), as the local engine
/// finds it; the set is refused alike. (e9 is still its key's best when contradicted, so
/// both engines name the field: see parity's conflict across keys for when they differ.)
#[test]
fn a_conflict_across_parts_is_found_on_its_part_and_line() {
    let _server = engines::server();
    let product = product();
    let mut lines = lines();
    lines.push(event("e9", 4, "CONTRADICTS", "2024-03-02T00:00:00Z"));
    let dir = write_set(&product, "2024-03-01", &split(&lines, &[20]));
    both_engines_agree(&product, &dir);
}

/// A `.gz` file, and a set of `.gz` parts beside a plain one, every line numbered as the
/// local engine numbers it. One part holds two gzip members, as concatenating sinks write.
#[test]
fn a_gz_file_and_a_set_of_gz_parts_number_lines_as_the_local_engine() {
    let _server = engines::server();
    let lines = lines();
    let product = product();
    let whole: Vec<u8> = split(&lines, &[]).remove(0).1;
    let file = product.input_bytes("2024-03-01.jsonl.gz", &gzip(&whole));
    both_engines_agree(&product, &file);

    let product = self::product();
    let mut parts = split(&lines, &[7, 30]);
    let (first, second) = parts[0].1.split_at(100);
    let members = [gzip(first), gzip(second)].concat();
    parts[0] = ("part-00000.jsonl.gz".to_owned(), members);
    parts[2].0.push_str(".gz");
    parts[2].1 = gzip(&parts[2].1);
    let dir = write_set(&product, "2024-03-01", &parts);
    both_engines_agree(&product, &dir);
}

/// Names Hadoop would glob are read as themselves: `part[01].jsonl` beside `part0.jsonl`
/// and `part1.jsonl`, which that pattern matches, in a set whose own name globs too (the
/// driver reads them; Spark never sees the input's names).
#[test]
fn glob_characters_in_part_and_set_names_read_one_file_each() {
    let _server = engines::server();
    let product = product();
    let lines = lines();
    let mut parts = split(&lines, &[10, 25]);
    for (part, name) in parts
        .iter_mut()
        .zip(["part0.jsonl", "part1.jsonl", "part[01].jsonl"])
    {
        part.0 = name.to_owned();
    }
    parts.push(("p{a,b}*?.jsonl".to_owned(), split(&lines, &[]).remove(0).1));
    let dir = write_set(&product, "2024-03-01[x]", &parts);
    both_engines_agree(&product, &dir);
}

/// `wharf run SET --engine spark` against `wharf run SET`: the same plan, the same rows
/// published and the same quarantine, each reject on its part and line.
#[test]
fn a_set_lands_through_the_cli_as_on_the_local_engine() {
    let _server = engines::server();
    let (local, spark) = (product(), product());
    let parts = split(&lines(), &[2, 6, 30]);
    let (a, b) = (
        write_set(&local, "2024-03-01", &parts),
        write_set(&spark, "2024-03-01", &parts),
    );
    let on_local = local.run_json(&a);
    let remote = engines::remote();
    let on_spark = spark.wharf(&[
        "run",
        b.to_str().unwrap(),
        "--json",
        "--engine",
        "spark",
        "--remote",
        &remote,
    ]);
    assert_eq!(on_local.code, 0, "{}", on_local.stderr);
    assert_eq!(on_spark.code, 0, "{}", on_spark.stderr);
    let (plan_local, plan_spark) = (on_local.json(), on_spark.json());
    for field in ["action", "counts", "dates", "parts", "input_sha256"] {
        assert_eq!(plan_local[field], plan_spark[field], "{field}");
    }
    assert_eq!(local.snapshot().rows, spark.snapshot().rows);
    let sha = plan_local["input_sha256"].as_str().unwrap();
    let (rejects_local, rejects_spark) = (local.rejects(sha), spark.rejects(sha));
    assert_eq!(rejects_local, rejects_spark, "quarantine");
    let at: Vec<(&Value, &Value)> = rejects_spark
        .iter()
        .map(|r| (&r["file"], &r["line"]))
        .collect();
    assert_eq!(
        at,
        [
            (&Value::from("part-00001.jsonl"), &Value::from(4)),
            (&Value::from("part-00003.jsonl"), &Value::from(24)),
        ],
        "rejects on (part, line)"
    );
}

/// Runs `wharf run INPUT --engine spark` and returns its exit code and stderr.
fn spark_run(product: &Product, input: &Path) -> (Option<i32>, String) {
    let remote = engines::remote();
    let out = product
        .cmd(&["run", "--engine", "spark", "--remote", &remote])
        .arg(input)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Nothing in the lake, the quarantine or the checkpoints.
fn assert_nothing_written(product: &Product) {
    for root in ["lake", "quarantine", "state/orders/checkpoints"] {
        let tree = product.tree(root);
        assert!(tree.is_empty(), "{root}: {:?}", tree.keys());
    }
}

/// `.zst` lands on Spark as on the local engine, alone or as a part: the driver decodes
/// it and Spark reads only the handed-over rows. A part named for a codec Wharf does not
/// decode (`.bz2`) is read as stored on both engines, as §11.5 says.
#[test]
fn zst_parts_and_other_codecs_names_land_as_on_the_local_engine() {
    let _server = engines::server();
    let plain = split(&lines(), &[]).remove(0).1;
    let zst = zstd::encode_all(&plain[..], 3).unwrap();
    let product = self::product();
    let file = product.input_bytes("day.jsonl.zst", &zst);
    both_engines_agree(&product, &file);
    let product = self::product();
    let parts = vec![
        ("a.jsonl".to_owned(), plain.clone()),
        ("b.jsonl.zst".to_owned(), zst),
        ("c.jsonl.bz2".to_owned(), plain),
    ];
    let dir = write_set(&product, "set", &parts);
    both_engines_agree(&product, &dir);
}

/// A truncated `.gz`, alone or as a part, is an input error naming the file and the
/// byte where it stops, found by the driver before any Spark job; nothing is written.
#[test]
fn a_truncated_gz_is_an_input_error_naming_the_file() {
    let _server = engines::server();
    let gz = gzip(&split(&lines(), &[]).remove(0).1);
    let cut = &gz[..gz.len() / 2];
    for in_a_set in [false, true] {
        let product = product();
        let input = if in_a_set {
            let parts = [
                ("a.jsonl".to_owned(), b"{}\n".to_vec()),
                ("b.jsonl.gz".to_owned(), cut.to_vec()),
            ];
            write_set(&product, "2024-03-01", &parts)
        } else {
            product.input_bytes("b.jsonl.gz", cut)
        };
        let (code, stderr) = spark_run(&product, &input);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("b.jsonl.gz") && stderr.contains(&format!("byte {}", cut.len())),
            "{stderr}"
        );
        assert_nothing_written(&product);
    }
}
