//! The console with its state root on S3 (CONTRACT.md §13.4): its snapshot reads the
//! checkpoints, what became of them, the run log and the partitions from the state
//! objects, lists a new input as new, and writes nothing, locally or on S3.
//!
//! The console takes the store's settings from its process's environment, so the test
//! runs its body in a child process of this test binary, given that environment.

use std::collections::BTreeSet;
use std::process::Command;

use wharf::config::Config;

use super::{Machine, name, prefix};
use crate::s3_env;

const CHILD: &str = "WHARF_TEST_CONSOLE_STATE";
const NAME: &str = "s3_state::console::the_console_reads_its_state_from_s3_and_writes_none";

#[test]
fn the_console_reads_its_state_from_s3_and_writes_none() {
    if let Some(config) = std::env::var_os(CHILD) {
        return snapshot_in_child(&Config::load(std::path::Path::new(&config)).unwrap());
    }
    let m = Machine::new(&prefix("console"));
    for i in 1..=3 {
        m.put(i);
        let ran = m.run(&name(i));
        assert_eq!(ran.code, 0, "{}: {}{}", name(i), ran.stdout, ran.stderr);
    }
    m.put(4);
    let objects = |m: &Machine| -> BTreeSet<String> {
        [&m.s3.table, &m.s3.state, &m.s3.quarantine]
            .iter()
            .flat_map(|root| root.objects())
            .collect()
    };
    let before = objects(&m);
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([NAME, "--exact", "--nocapture"])
        .env(CHILD, &m.product.config);
    let out = s3_env(&mut cmd).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran the body: {text}");
    assert_eq!(objects(&m), before, "looking wrote no object");
    m.assert_nothing_local();
}

/// The body, in the child: what the console's snapshot read.
fn snapshot_in_child(config: &Config) {
    let snapshot = wharf::console::load::snapshot(config);
    assert!(snapshot.problems.is_empty(), "{:?}", snapshot.problems);
    let landed: Vec<&str> = snapshot
        .checkpoints
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    let want: Vec<String> = (1..=3).map(name).collect();
    assert_eq!(landed, want, "the three landed, not {}", name(4));
    for (input, sha) in &snapshot.checkpoints {
        assert_eq!(
            sha.len(),
            64,
            "{input}: a sha256 from its checkpoint object"
        );
    }
    let standing: Vec<&str> = snapshot.standing.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(standing, want);
    let runs: Vec<&str> = snapshot
        .runs
        .iter()
        .map(|r| r.input_name.as_str())
        .collect();
    assert_eq!(runs, want, "one run record per landing, oldest first");
    assert_eq!(snapshot.partitions.len(), 3, "{:?}", snapshot.partitions);
    let listed: Vec<&str> = snapshot.inbox.iter().map(|e| e.name.as_str()).collect();
    assert!(listed.contains(&name(4).as_str()), "{listed:?}");
}
