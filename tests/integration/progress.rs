//! The progress bar of `wharf run` / `wharf plan`: no byte of it when stderr is piped or
//! with `--json`; on a pseudo-terminal the bar shows its phases, and stdout's report and
//! the published rows are exactly those of a run without one.

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

use crate::kit::Product;
use crate::watching::{events, events_from};

/// Events in the input: enough that reading it in a debug build spans many redraws.
const EVENTS: usize = 40_000;

fn large_input(product: &Product) -> std::path::PathBuf {
    let lines = [
        events("p", EVENTS / 2, "2024-03-01", "P"),
        events_from("q", EVENTS / 2 + 1, EVENTS / 2, "2024-03-02", "Q"),
    ]
    .concat();
    product.input(
        "large.jsonl",
        &lines.iter().map(String::as_str).collect::<Vec<_>>(),
    )
}

/// `wharf <args> --config <product>` with stdout and stderr piped.
fn piped(product: &Product, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(args)
        .arg("--config")
        .arg(&product.config)
        .output()
        .unwrap()
}

/// Runs `wharf <args> --config <product>` with stderr on a new pseudo-terminal (120
/// columns) and stdout piped; returns (stdout, everything written to the terminal).
fn on_terminal(product: &Product, args: &[&str]) -> (Output, Vec<u8>) {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = File::options()
        .read(true)
        .write(true)
        .open(Path::new(name.to_str().unwrap()))
        .unwrap();
    let size = Winsize {
        ws_row: 40,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    tcsetwinsize(&slave, size).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(args)
        .arg("--config")
        .arg(&product.config)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(OwnedFd::from(slave)))
        .spawn()
        .unwrap();
    // Read the terminal while the child writes, so a full pty buffer never blocks it;
    // the read ends (EIO) once the child, the last holder of the slave side, exits.
    let reader = std::thread::spawn(move || {
        let mut master = File::from(master);
        let mut screen = Vec::new();
        let mut buffer = [0u8; 4096];
        while let Ok(n) = master.read(&mut buffer) {
            if n == 0 {
                break;
            }
            screen.extend_from_slice(&buffer[..n]);
        }
        screen
    });
    let output = child.wait_with_output().unwrap();
    (output, reader.join().unwrap())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn piped_stderr_carries_no_progress() {
    let product = Product::with_settings("");
    let input = large_input(&product);
    for args in [
        ["plan", input.to_str().unwrap()],
        ["run", input.to_str().unwrap()],
    ] {
        let out = piped(&product, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(out.stderr, b"", "{args:?}: stderr {:?}", text(&out.stderr));
        assert!(text(&out.stdout).contains("large.jsonl"));
    }
    assert_eq!(product.rows("2024-03-01").len(), EVENTS / 2);
}

#[test]
fn a_terminal_shows_the_bar_and_the_report_and_rows_stay_intact() {
    let reference = Product::with_settings("");
    let expected = piped(
        &reference,
        &["run", large_input(&reference).to_str().unwrap()],
    );
    let product = Product::with_settings("");
    let input = large_input(&product);
    let (out, screen) = on_terminal(&product, &["run", input.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&screen));
    assert_eq!(
        out.stdout, expected.stdout,
        "the report is the same on a terminal"
    );
    let screen = text(&screen);
    for shown in ["large.jsonl", "reading", "%", "iB/", "iB/s", "ETA"] {
        assert!(
            screen.contains(shown),
            "{shown:?} not on the terminal: {screen:?}"
        );
    }
    assert!(
        screen.contains("event_date="),
        "no staging or swapping phase: {screen:?}"
    );
    for date in ["2024-03-01", "2024-03-02"] {
        assert_eq!(product.rows(date), reference.rows(date), "{date}");
    }
}

#[test]
fn json_on_a_terminal_draws_nothing() {
    let product = Product::with_settings("");
    let input = large_input(&product);
    let (out, screen) = on_terminal(&product, &["plan", input.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(screen, b"", "{:?}", text(&screen));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["counts"]["lines"], EVENTS);
}

#[test]
fn a_file_with_conflicts_says_it_is_read_twice() {
    let product = Product::with_settings("");
    let mut lines = events("c", EVENTS, "2024-03-01", "C");
    // The last event reuses the first's id with other fields: a conflict.
    let first_id = r#""event_id":"c-1""#;
    let last = lines.len() - 1;
    lines[last] = lines[last].replace(&format!(r#""event_id":"c-{EVENTS}""#), first_id);
    let input = product.input(
        "conflicts.jsonl",
        &lines.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let (out, screen) = on_terminal(&product, &["plan", input.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("conflict"),
        "{}",
        text(&out.stdout)
    );
    let screen = text(&screen);
    assert!(
        screen.contains("re-reading (conflicts found)"),
        "{screen:?}"
    );
}
