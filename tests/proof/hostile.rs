//! Hostile input: proptest over the classifier and the line reader with arbitrary bytes
//! (no panic; the reader matches a model of CONTRACT.md §1 whatever the read sizes),
//! exact reason codes for a 10 MB line, 1,000-deep nesting, NUL, a BOM mid-file,
//! invalid UTF-8 and 400-digit numbers (with memory bounded), file names with spaces,
//! quotes, newlines and escape sequences, and a symbolic link in the inbox.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use wharf::config::Config;
use wharf::contract::{LineBytes, Outcome, classify};

use crate::common::{self, Product};

mod escapes;
mod limits;
mod memory;
mod modes;
mod names;
mod swap;

fn config() -> Config {
    Config::parse(common::CONFIG, Path::new("wharf.toml"), Path::new("/tmp")).unwrap()
}

/// Bytes biased towards JSON and the schema's names, so the deep checks are reached.
fn jsonish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"{".to_vec()),
        Just(b"}".to_vec()),
        Just(b"[".to_vec()),
        Just(b"]".to_vec()),
        Just(b"\"".to_vec()),
        Just(b":".to_vec()),
        Just(b",".to_vec()),
        Just(b"\"event_id\":\"e1\"".to_vec()),
        Just(b"\"order_id\":".to_vec()),
        Just(b"\"status\":\"PAID\"".to_vec()),
        Just(b"\"updated_at\":\"2024-03-01T10:00:00Z\"".to_vec()),
        Just(b"\"updated_at\":\"2024-02-30 24:00:60+23:59\"".to_vec()),
        Just(b"\"seq\":".to_vec()),
        Just(b"\"email\":null".to_vec()),
        Just(b"null".to_vec()),
        Just(b"\\u0000".to_vec()),
        Just(b"\\ud800".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"\xff".to_vec()),
        "-?[0-9]{1,30}(\\.[0-9]{0,5})?([eE][+-]?[0-9]{1,4})?".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..8),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 3000,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/proof/proptest-regressions.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn classify_never_panics_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let config = config();
        let first = classify(LineBytes::Kept(&bytes), &config.schema);
        prop_assert_eq!(first, classify(LineBytes::Kept(&bytes), &config.schema));
    }

    #[test]
    fn classify_never_panics_on_json_like_bytes(bytes in jsonish()) {
        let config = config();
        let first = classify(LineBytes::Kept(&bytes), &config.schema);
        prop_assert_eq!(first, classify(LineBytes::Kept(&bytes), &config.schema));
    }

    #[test]
    fn the_line_reader_matches_the_model_whatever_the_read_sizes(
        pieces in prop::collection::vec(prop_oneof![
            Just(b"\n".to_vec()), Just(b"\r".to_vec()), Just(b"\r\n".to_vec()),
            Just(b"\xEF\xBB\xBF".to_vec()), Just(b"ab".to_vec()), Just(b"\xff".to_vec()),
            Just(b"xxxxxxxxxxxxxxx".to_vec()), prop::collection::vec(any::<u8>(), 0..6),
        ], 0..40),
        max in 1usize..24,
        reads in prop::collection::vec(1usize..20, 1..8),
    ) {
        let data = pieces.concat();
        let mut reader = Chunked { data: &data, sizes: &reads, turn: 0 };
        let mut got = Vec::new();
        let sha = wharf::input::scan(&mut reader, Path::new("x"), max, &mut |_| true, |n, line| {
            got.push((n, match line {
                LineBytes::Kept(b) => Some(b.to_vec()),
                LineBytes::TooLong => None,
            }));
        }).unwrap();
        prop_assert_eq!(got, model_lines(&data, max));
        let mut whole = Vec::new();
        let mut one_read = &data[..];
        wharf::input::scan(&mut one_read, Path::new("x"), max, &mut |_| true, |_, _| {})
            .map(|s| whole.push(s)).unwrap();
        prop_assert_eq!(&whole[0], &sha);
    }
}

/// A reader that returns at most `sizes[turn % len]` bytes per read.
struct Chunked<'a> {
    data: &'a [u8],
    sizes: &'a [usize],
    turn: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.sizes[self.turn % self.sizes.len()]
            .min(buf.len())
            .min(self.data.len());
        self.turn += 1;
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// CONTRACT.md §1 as plainly as possible: split on `\n` (no line after a final `\n`),
/// skip a BOM at the very start of the file, strip one trailing `\r`, and a line longer
/// than `max` bytes is too long.
fn model_lines(data: &[u8], max: usize) -> Vec<(u64, Option<Vec<u8>>)> {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let mut pieces: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    if pieces.last().is_some_and(|p| p.is_empty()) {
        pieces.pop();
    }
    pieces
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let kept = (line.len() <= max).then(|| line.to_vec());
            (i as u64 + 1, kept)
        })
        .collect()
}

#[test]
fn a_first_line_of_exactly_max_bytes_after_a_bom_is_kept_whatever_the_read_sizes() {
    // The BOM is not part of the line (§1), so it must not count towards its length.
    let data = b"\xEF\xBB\xBF12345\n";
    for step in [1, 2, 3, 4, 100] {
        let mut reader = Chunked {
            data,
            sizes: &[step],
            turn: 0,
        };
        let mut got = Vec::new();
        wharf::input::scan(&mut reader, Path::new("x"), 5, &mut |_| true, |_, line| {
            got.push(matches!(line, LineBytes::Kept(b"12345")));
        })
        .unwrap();
        assert_eq!(got, [true], "read size {step}");
    }
}

#[test]
fn a_file_holding_only_a_bom_has_no_line() {
    for step in [1, 2, 3] {
        let mut reader = Chunked {
            data: b"\xEF\xBB\xBF",
            sizes: &[step],
            turn: 0,
        };
        let mut lines = 0;
        wharf::input::scan(&mut reader, Path::new("x"), 1, &mut |_| true, |_, _| {
            lines += 1
        })
        .unwrap();
        assert_eq!(lines, 0, "read size {step}");
    }
}

const TS: &str = "2024-03-01T10:00:00Z";

fn valid(id: u32) -> Vec<u8> {
    format!(r#"{{"event_id":"v{id}","order_id":{id},"status":"PAID","updated_at":"{TS}"}}"#)
        .into_bytes()
}

/// A reason code and the field it names, if any.
type Expected = Option<(&'static str, Option<&'static str>)>;

/// The hostile lines, each with the reason (and field) it must get.
fn hostile_lines() -> Vec<(Vec<u8>, Expected)> {
    let digits = "9".repeat(400);
    let with = |field: &str, value: &str| {
        format!(
            r#"{{"event_id":"h","order_id":7,"status":"PAID","updated_at":"{TS}","{field}":{value}}}"#
        )
        .into_bytes()
    };
    let mut ten_mb = br#"{"event_id":"big","order_id":8,"status":""#.to_vec();
    ten_mb.extend(std::iter::repeat_n(b'x', 10 << 20));
    ten_mb.extend_from_slice(format!(r#"","updated_at":"{TS}"}}"#).as_bytes());
    let deep = |open: &str, close: &str| {
        let mut line = br#"{"event_id":"d","order_id":"#.to_vec();
        line.extend(open.repeat(1000).into_bytes());
        line.extend(close.repeat(1000).into_bytes());
        line.extend_from_slice(format!(r#","status":"PAID","updated_at":"{TS}"}}"#).as_bytes());
        line
    };
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(valid(90));
    let mut nul_raw = valid(91);
    nul_raw.insert(30, 0);
    vec![
        (valid(1), None),
        (ten_mb, Some(("line_too_long", None))),
        (deep("[", "]"), Some(("malformed_json", None))),
        (deep(r#"{"a":"#, "}"), Some(("malformed_json", None))),
        (b"\0".to_vec(), Some(("malformed_json", None))),
        (nul_raw, Some(("malformed_json", None))),
        (
            format!(r#"{{"event_id":"n","order_id":92,"status":"A\u0000B","updated_at":"{TS}"}}"#)
                .into_bytes(),
            None,
        ),
        (bom, Some(("malformed_json", None))),
        (
            b"{\"event_id\":\"u\",\"status\":\"\xc3\x28\"}".to_vec(),
            Some(("invalid_utf8", None)),
        ),
        (b"\xed\xa0\x80".to_vec(), Some(("invalid_utf8", None))),
        (with("seq", &digits), Some(("bad_type", Some("seq")))),
        (
            with("seq", &format!("-{digits}")),
            Some(("bad_type", Some("seq"))),
        ),
        (
            with("seq", &format!("1.{digits}")),
            Some(("bad_type", Some("seq"))),
        ),
        (
            with("seq", &format!("1e{digits}")),
            Some(("bad_type", Some("seq"))),
        ),
        (with("city", &digits), Some(("bad_type", Some("city")))),
        (
            format!(
                r#"{{"event_id":"k","order_id":{digits},"status":"PAID","updated_at":"{TS}"}}"#
            )
            .into_bytes(),
            Some(("bad_type", Some("order_id"))),
        ),
        (
            with("seq", "9223372036854775808"),
            Some(("bad_type", Some("seq"))),
        ),
        (with("seq", "-9223372036854775808"), None),
        (valid(2), None),
    ]
}

/// Peak RSS in KiB of `cmd` under GNU time, `None` where /usr/bin/time is missing.
fn peak_rss_kib(product: &Product, args: &[&str], input: &Path) -> Option<u64> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "PEAK_RSS_KIB %M", env!("CARGO_BIN_EXE_wharf")])
        .arg("--config")
        .arg(&product.config)
        .args(args)
        .arg(input)
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("PEAK_RSS_KIB ")?.trim().parse().ok())
}

#[test]
fn hostile_lines_get_exact_reason_codes_with_memory_bounded() {
    let cases = hostile_lines();
    let product = Product::new();
    let input = product.path().join("hostile.jsonl");
    let mut bytes = Vec::new();
    for (line, _) in &cases {
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
    }
    fs::write(&input, &bytes).unwrap();

    // Direct classification of every line but the too-long one agrees with the CLI.
    let config = config();
    for (index, (line, want)) in cases.iter().enumerate() {
        if line.len() > config.max_line_bytes {
            continue;
        }
        let got = match classify(LineBytes::Kept(line), &config.schema) {
            Outcome::Accepted(_) => None,
            Outcome::Rejected(issue) | Outcome::Breach(issue) => {
                Some((issue.reason.code(), issue.field))
            }
            Outcome::Blank => panic!("line {} is not blank", index + 1),
        };
        let want = want.map(|(r, f)| (r, f.map(str::to_owned)));
        assert_eq!(got, want, "line {}", index + 1);
    }

    let out = product.land(&input);
    assert!(String::from_utf8_lossy(&out.stdout).contains("published"));
    let sha = common::read_json(&product.state.join("checkpoints/hostile.jsonl.json")).unwrap()
        ["input_sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    let rejects = fs::read_to_string(product.quarantine.join(&sha).join("rejects.jsonl")).unwrap();
    let got: BTreeMap<u64, (String, Option<String>)> = rejects
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let field = v["field"].as_str().map(str::to_owned);
            (
                v["line"].as_u64().unwrap(),
                (v["reason"].as_str().unwrap().to_owned(), field),
            )
        })
        .collect();
    let want: BTreeMap<u64, (String, Option<String>)> = cases
        .iter()
        .enumerate()
        .filter_map(|(i, (_, w))| {
            w.map(|(r, f)| (i as u64 + 1, (r.to_owned(), f.map(str::to_owned))))
        })
        .collect();
    assert_eq!(got, want);
    let rows = product.snapshot().row_count();
    assert_eq!(rows, 4, "v1, v2, the escaped NUL and the i64::MIN seq line");

    // Memory: the 10 MB line is never buffered whole.
    let small = product.path().join("small.jsonl");
    fs::write(&small, [valid(1), b"\n".to_vec()].concat()).unwrap();
    if let (Some(base), Some(big)) = (
        peak_rss_kib(&product, &["plan"], &small),
        peak_rss_kib(&product, &["plan"], &input),
    ) {
        eprintln!("peak RSS: small input {base} KiB, 10 MB line {big} KiB");
        assert!(
            big < base + 6 * 1024,
            "the 10 MB line was buffered: {big} KiB"
        );
    } else {
        eprintln!("SKIPPED the memory bound: /usr/bin/time is not available");
    }
}

#[test]
fn hostile_file_names_land_and_print_inert() {
    let names = [
        "with space.jsonl",
        "quote\"d 'name'.jsonl",
        "new\nline.jsonl",
        "esc\x1b[31mred\x1b[0m\x07.jsonl",
        "tab\tand\\backslash.jsonl",
        "--json.jsonl",
        "ünï códe ✓.jsonl",
    ];
    let product = Product::new();
    for (index, name) in names.iter().enumerate() {
        let input = product.path().join("inbox").join(name);
        fs::write(&input, [valid(100 + index as u32), b"\n".to_vec()].concat()).unwrap();
        let out = product
            .cmd(&["--json", "run"])
            .arg(&input)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name:?}: {}",
            common::text(&out)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["action"], "published", "{name:?}");
        assert_eq!(json["input_name"], *name);
        assert_eq!(product.checkpoint(name).unwrap()["input_name"], *name);
        assert_eq!(product.owners()["2024-03-01"], *name);

        let out = product.cmd(&["run"]).arg(&input).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("skipped"), "{name:?}: {text}");
        assert!(
            !text.contains('\x1b') && !text.contains('\x07') && text.lines().count() >= 2,
            "{name:?}: control characters reached the terminal: {text:?}"
        );
    }
    for args in [&["history"][..], &["status"], &["quarantine"]] {
        let out = product.cmd(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            common::text(&out)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.contains('\x1b') && !text.contains('\x07'),
            "{args:?}: {text:?}"
        );
    }
}

#[test]
fn a_long_file_name_lands_or_is_refused_before_anything_is_written() {
    // A checkpoint is `<name>.json` (CONTRACT.md §7) and a file name holds at most 255
    // bytes, so names of 251–255 bytes cannot be landed as given: a usage error (2)
    // saying so and what to do, before anything is written.
    let product = Product::new();
    let old = product.path().join("inbox/old.jsonl");
    fs::write(&old, [valid(1), b"\n".to_vec()].concat()).unwrap();
    product.land(&old);
    for length in [200usize, 235, 245, 250, 251, 253, 255] {
        let name = format!("{}.jsonl", "n".repeat(length - 6));
        let input = product.path().join("inbox").join(&name);
        fs::write(&input, [valid(length as u32), b"\n".to_vec()].concat()).unwrap();
        let before = (
            common::tree(&product.publish),
            common::tree(&product.state),
            common::tree(&product.quarantine),
        );
        let out = product.run(&input);
        if length + ".json".len() <= 255 {
            assert_eq!(
                out.status.code(),
                Some(0),
                "{length}: {}",
                common::text(&out)
            );
            assert_eq!(product.owners()["2024-03-01"], name, "{length}");
            assert!(
                product.checkpoint(&name).is_some(),
                "{length}: no checkpoint"
            );
            let again = product.run(&input);
            let text = String::from_utf8_lossy(&again.stdout);
            assert!(text.contains("skipped"), "{length}: rerun {text}");
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(2),
            "{length}: {}",
            common::text(&out)
        );
        let message = String::from_utf8_lossy(&out.stderr).to_lowercase();
        assert!(
            message.contains(&input.display().to_string().to_lowercase()),
            "{length}: names the input: {message}"
        );
        assert!(
            message.contains(".json") && message.contains("255") && message.contains("rename"),
            "{length}: says why and what to do: {message}"
        );
        assert!(!message.contains("permissions"), "{length}: {message}");
        let after = (
            common::tree(&product.publish),
            common::tree(&product.state),
            common::tree(&product.quarantine),
        );
        assert!(before == after, "{length}: refused after writing something");
    }
}

#[test]
fn a_symlink_in_the_inbox_pointing_outside_is_ignored() {
    let product = Product::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("secret.jsonl");
    fs::write(&target, [valid(1), b"\n".to_vec()].concat()).unwrap();
    std::os::unix::fs::symlink(&target, product.path().join("inbox/link.jsonl")).unwrap();
    std::os::unix::fs::symlink(outside.path(), product.path().join("inbox/dir-link")).unwrap();
    for json in [false, true] {
        let mut cmd = product.cmd(if json { &["--json", "run"] } else { &["run"] });
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", common::text(&out));
        if !json {
            assert!(String::from_utf8_lossy(&out.stdout).contains("no closed input"));
        }
    }
    assert!(product.snapshot().rows.is_empty(), "the link was followed");
    assert!(product.checkpoint("link.jsonl").is_none());
    assert!(!product.quarantine.exists() || product.quarantine.read_dir().unwrap().count() == 0);
    assert_eq!(
        fs::read(&target).unwrap(),
        [valid(1), b"\n".to_vec()].concat()
    );
}
