//! Two machines sharing one S3 state root and table (CONTRACT.md §13.4): no run lock,
//! the Delta commit decides. Racing `run`s and `watch`es land every input exactly once,
//! a lost landing writes no state of its own and takes its uploads back, and a
//! landing's clean-up never takes another machine's uploads in flight.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Machine, Paused, alone, line, name, prefix, under};
/// Runs `wharf run` on both machines at once; their exit codes.
fn race(a: &Machine, b: &Machine) -> Vec<i32> {
    let children: Vec<std::process::Child> = [a, b]
        .iter()
        .map(|m| {
            m.cmd(&["run"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            let code = out.status.code().unwrap_or(-1);
            assert!(
                code == 0 || code == 4,
                "neither landed nor busy: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            code
        })
        .collect()
}

#[test]
fn two_machines_racing_on_one_s3_state_and_table_land_every_input_exactly_once() {
    let p = prefix("race");
    let (a, b) = (Machine::new(&p), Machine::new(&p));
    let s3 = &a.s3;
    let mut busy = 0;
    let per_round = 3;
    // Three rounds of three inputs: each round's two machines contend for the same ones.
    for round in 0..3 {
        let inputs: Vec<usize> = (1..=per_round).map(|k| round * per_round + k).collect();
        for &i in &inputs {
            a.put(i);
            b.put(i);
        }
        busy += race(&a, &b).iter().filter(|c| **c == 4).count();
        // Each machine reruns until it is not busy: then it has nothing left to do.
        for m in [&a, &b] {
            let mut ran = m.wharf(&["run"]);
            for _ in 0..3 {
                if ran.code != 4 {
                    break;
                }
                busy += 1;
                ran = m.wharf(&["run"]);
            }
            assert_eq!(ran.code, 0, "round {round}: {}{}", ran.stdout, ran.stderr);
        }
        let landed = round * per_round + per_round;
        // Every input landed exactly once, and the table is each landed alone.
        let names: Vec<String> = s3.landings().into_iter().map(|(_, n, _)| n).collect();
        let expected: Vec<String> = (1..=landed).map(name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(sorted, expected, "round {round}: landings {names:?}");
        assert_eq!(s3.rows(), alone(1..=landed), "round {round}");
        // The state names only what committed: one checkpoint per landing, at its
        // version, and one `published` run per input across both machines.
        for (version, input, sha) in s3.landings() {
            let checkpoint = s3.checkpoint(&input).expect("a checkpoint");
            assert_eq!(
                (
                    &checkpoint["table_version"],
                    checkpoint["input_sha256"].as_str()
                ),
                (&Value::from(version), Some(sha.as_str())),
                "{input}"
            );
        }
        let checkpoints = under(&s3.state, "checkpoints/").len();
        assert_eq!(checkpoints, landed, "round {round}");
        let mut published: BTreeMap<String, usize> = BTreeMap::new();
        for run in s3.runs().iter().filter(|r| r["action"] == "published") {
            *published
                .entry(run["input_name"].as_str().unwrap().into())
                .or_default() += 1;
        }
        // (A landing that committed but lost a state write afterwards is busy, with no
        // `published` record; its commit names its run.)
        assert!(published.values().all(|n| *n == 1), "{published:?}");
        // A lost landing took its uploads back: every data object is live.
        let data = under(&s3.table, "event_date=");
        assert_eq!(data, s3.table.live_files(), "round {round}");
        // Every quarantine entry was written by the run that committed its input: a
        // landing whose commit lost wrote none. (One that committed but lost a state
        // write afterwards wrote none either.)
        let summaries = s3.summaries();
        let run_ids = s3.run_ids();
        assert!(summaries.len() <= landed, "round {round}");
        for (input, summary) in &summaries {
            assert_eq!(
                summary["run_id"].as_str(),
                run_ids.get(input).map(String::as_str),
                "{input}"
            );
        }
    }
    assert!(busy > 0, "the machines never contended");
    a.assert_nothing_local();
    b.assert_nothing_local();
}

/// A running `wharf watch`, killed if the test ends before [`Watch::stop`].
struct Watch(std::process::Child);

impl Watch {
    /// `wharf watch` on machine `m`, its output discarded. Its scratch folder (`TMPDIR`,
    /// where the one-watch lock is) is its own, as another machine's would be.
    fn start(m: &Machine) -> Watch {
        let child = m
            .cmd(&["watch"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Watch(child)
    }

    /// SIGTERM, and waits for it to end.
    fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(self.0.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.0.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "wharf watch did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn two_watches_sharing_s3_state_land_each_input_once() {
    let p = prefix("watch");
    let (a, b) = (Machine::new(&p), Machine::new(&p));
    let s3 = &a.s3;
    let watches = [Watch::start(&a), Watch::start(&b)];
    for i in 1..=4 {
        // Renamed into each inbox whole, as a producer closes a delivery.
        for m in [&a, &b] {
            let hidden = m.product.path().join("inbox").join(format!(".{}", name(i)));
            std::fs::write(&hidden, format!("{}\n", line(i))).unwrap();
            std::fs::rename(&hidden, m.product.path().join("inbox").join(name(i))).unwrap();
        }
    }
    // Both machines have taken every input: one published it, the other skipped it.
    let deadline = Instant::now() + Duration::from_secs(90);
    let settled = || {
        let runs = s3.runs();
        (1..=4).all(|i| {
            let of = |action: &str| {
                runs.iter()
                    .filter(|r| r["input_name"] == name(i).as_str() && r["action"] == action)
                    .count()
            };
            of("published") >= 1 && of("published") + of("skipped") >= 2
        })
    };
    while !settled() {
        assert!(
            Instant::now() < deadline,
            "the watches never settled: {:?}",
            s3.runs()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    for watch in watches {
        watch.stop();
    }
    let mut landed: Vec<String> = s3.landings().into_iter().map(|(_, n, _)| n).collect();
    landed.sort();
    assert_eq!(
        landed,
        (1..=4).map(name).collect::<Vec<_>>(),
        "each landed once"
    );
    assert_eq!(s3.rows(), alone(1..=4));
    a.assert_nothing_local();
    b.assert_nothing_local();
}

#[test]
fn another_machines_uploads_in_flight_are_never_taken_for_a_crash() {
    let p = prefix("inflight");
    let (a, b) = (Machine::new(&p), Machine::new(&p));
    let s3 = &a.s3;
    a.put(1);
    assert_eq!(a.run(&name(1)).code, 0);
    // `b` uploads and pauses before its commit; its pending record names the uploads.
    b.put(2);
    let input = b.product.path().join("inbox").join(name(2));
    let paused = Paused::start(
        &b,
        &["run", input.to_str().unwrap(), "--json"],
        "after_upload",
    );
    let live = s3.table.live_files();
    let uploads: BTreeSet<String> = under(&s3.table, "event_date=")
        .difference(&live)
        .cloned()
        .collect();
    assert!(!uploads.is_empty(), "b uploaded before its commit");
    // `a` lands meanwhile: its clean-up leaves `b`'s uploads, which may yet commit.
    a.put(3);
    assert_eq!(a.run(&name(3)).code, 0);
    assert!(
        uploads.is_subset(&under(&s3.table, "event_date=")),
        "a deleted b's uploads in flight"
    );
    // `b` finds the version taken: busy, and it takes its own uploads back.
    let lost = paused.release();
    assert_eq!(lost.code, 4, "{}{}", lost.stdout, lost.stderr);
    assert_eq!(under(&s3.table, "event_date="), s3.table.live_files());
    let rerun = b.run(&name(2));
    assert_eq!(rerun.code, 0, "{}{}", rerun.stdout, rerun.stderr);
    assert_eq!(s3.rows(), alone(1..=3));
}
