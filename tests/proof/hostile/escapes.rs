//! Every error path quotes names and paths from the inbox and the config; none lets a
//! control sequence reach the terminal (issue 48): no byte below 0x20 but newline, no
//! DEL and no C1 character (U+0080–U+009F, e.g. the one-character CSI U+009B) on stdout
//! or stderr, with or without `--json`. Values in `diff --json` are escaped too.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use super::valid;
use crate::common::Product;

/// OSC 52 (the clipboard), a bell and a one-character CSI: what a hostile name carries.
const HOSTILE: &str = "x\u{1b}]52;c;QUFBQQ==\u{7}\u{9b}31m\u{7f}";

fn assert_inert(out: &Output, what: &str) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        let bad: Vec<char> = text
            .chars()
            .filter(|&c| c != '\n' && (c.is_control()))
            .collect();
        assert!(bad.is_empty(), "{what}: {stream} holds {bad:?}: {text}");
    }
}

/// `wharf <args>` with and without `--json`, each output checked, the outputs returned.
fn both(product: &Product, args: &[&str], extra: &Path, what: &str) -> Vec<Output> {
    let mut outs = Vec::new();
    for json in [false, true] {
        let mut cmd = product.cmd(&[]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.args(args).arg(extra).output().unwrap();
        assert_inert(&out, &format!("{what} (json {json})"));
        outs.push(out);
    }
    outs
}

#[test]
fn error_paths_print_no_control_character() {
    let product = Product::new();
    let inbox = product.path().join("inbox");

    // A missing input.
    let missing = inbox.join(format!("{HOSTILE}.jsonl"));
    let outs = both(&product, &["run"], &missing, "missing input");
    assert_eq!(outs[0].status.code(), Some(2));
    assert!(String::from_utf8_lossy(&outs[0].stderr).contains("no such file"));

    // A set whose part is a symbolic link, named with the escapes.
    let set = inbox.join(format!("set{HOSTILE}"));
    fs::create_dir(&set).unwrap();
    fs::write(set.join("_SUCCESS"), b"").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", set.join(format!("p{HOSTILE}.jsonl"))).unwrap();
    let outs = both(&product, &["run"], &set, "set error");
    assert!(String::from_utf8_lossy(&outs[0].stderr).contains("symbolic link"));
    fs::remove_dir_all(&set).unwrap();

    // A gzip that does not decode.
    let gz = inbox.join(format!("{HOSTILE}.jsonl.gz"));
    fs::write(&gz, b"\x1f\x8bnot gzip at all").unwrap();
    both(&product, &["run"], &gz, "decode error");
    both(&product, &["plan"], &gz, "decode error (plan)");
    fs::remove_file(&gz).unwrap();

    // A corrupt checkpoint of a landed input with such a name.
    let name = format!("{HOSTILE}.jsonl");
    let input = product.input_bytes(&name, &[valid(1), b"\n".to_vec()].concat());
    let landed = product.cmd(&["run"]).arg(&input).output().unwrap();
    assert_eq!(landed.status.code(), Some(0), "{landed:?}");
    assert_inert(&landed, "landing");
    let checkpoints = product.state.join("checkpoints");
    for entry in fs::read_dir(&checkpoints).unwrap() {
        fs::write(entry.unwrap().path(), b"{ corrupt").unwrap();
    }
    let outs = both(&product, &["run"], &input, "corrupt checkpoint");
    assert_ne!(outs[0].status.code(), Some(0));
    fs::remove_file(&input).unwrap();

    // A config path that does not exist.
    let config = product.path().join(format!("{HOSTILE}.toml"));
    for json in [&[][..], &["--json"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_wharf"))
            .args(json)
            .arg("--config")
            .arg(&config)
            .arg("status")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_inert(&out, "config path");
    }
    // An unknown argument quoted back by the argument parser.
    let out = product
        .cmd(&["run", "--no-such", HOSTILE])
        .output()
        .unwrap();
    assert_inert(&out, "argument error");
}

#[test]
fn watch_errors_print_no_control_character() {
    let product = Product::new();
    let set = product.path().join("inbox").join(format!("set{HOSTILE}"));
    fs::create_dir(&set).unwrap();
    fs::write(set.join("_SUCCESS"), b"").unwrap();
    fs::create_dir(set.join(format!("sub{HOSTILE}"))).unwrap();
    for json in [false, true] {
        let mut cmd = product.cmd(if json {
            &["--json", "watch"]
        } else {
            &["watch"]
        });
        let child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs(2));
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("subfolder"), "{json}: {stderr}");
        assert_inert(&out, &format!("watch (json {json})"));
    }
}

#[test]
fn diff_json_escapes_c1_characters_in_values() {
    let product = Product::new();
    let line = |status: &str| {
        format!(
            "{{\"event_id\":\"e1\",\"order_id\":1,\"status\":\"{status}\",\"updated_at\":\"2024-03-01T10:00:00Z\"}}\n"
        )
    };
    let old = product.input_bytes("a.jsonl", line("PAID").as_bytes());
    product.land(&old);
    let new = product.input_bytes("b.jsonl", line("P\u{9b}31m\u{85}X").as_bytes());
    let out = product.cmd(&["--json", "diff"]).arg(&new).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_inert(&out, "diff --json");
    let text = String::from_utf8(out.stdout).unwrap();
    let after: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        after
            .iter()
            .any(|v| v.to_string().contains("P\u{9b}31m\u{85}X")),
        "the value is kept, escaped: {text}"
    );
}
