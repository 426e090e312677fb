//! Nothing but codes and counts leave the input (CONTRACT.md §6.1, §6.5): inputs carry
//! distinctive values in accepted, rejected and breaching lines; after plan, run,
//! quarantine, history and status (text and `--json`), no value appears in the run log,
//! quarantine, checkpoints, manifest, trash records, stdout or stderr. Field names,
//! reason codes, counts, dates and event ids may appear; the event ids here are plain.

use std::fs;
use std::path::Path;

use crate::common::{self, Product};

/// Values that must never leave the input (other than into the published Parquet).
const SECRETS: &[&str] = &[
    "ZQXSTATUSA",
    "ZQXCOURIER",
    "ZQXCITY",
    "7770012345",
    "918273645",
    "987654321",
    "ZQXBADKEY",
    "ZQXMISSINGCITY",
    "ZQXBADTIME",
    "21:43:56",
    "ZQXMALFORMED",
    "ZQXARRAY",
    "ZQXUTF8",
    "ZQXDUPA",
    "ZQXDUPB",
    "31415926535897932384626",
    "ZQXLEAKSTATUS",
    "zqx.secret@example.com",
    "ZQX Privatename",
    "ZQXTOKEN4111",
    "ZQXCOUPON",
    "ZQXCONFLICTA",
    "ZQXCONFLICTB",
    "5550012345",
];

const TS: &str = "2024-03-01T10:00:00Z";

fn clean_input() -> Vec<u8> {
    let mut lines = vec![
        format!(
            r#"{{"event_id":"p1","order_id":7770012345,"status":"ZQXSTATUSA","updated_at":"2024-03-01T13:37:42.987654321Z","seq":918273645,"courier_id":"ZQXCOURIER","city":"ZQXCITY"}}"#
        ),
        format!(r#"{{"event_id":"p2","order_id":2,"status":"PAID","updated_at":"{TS}"}}"#),
        format!(
            r#"{{"event_id":"p3","order_id":"ZQXBADKEY","status":"PAID","updated_at":"{TS}"}}"#
        ),
        format!(
            r#"{{"event_id":"p4","order_id":5550012345,"city":"ZQXMISSINGCITY","updated_at":"{TS}"}}"#
        ),
        r#"{"event_id":"p5","order_id":5,"status":"PAID","updated_at":"ZQXBADTIME"}"#.to_owned(),
        r#"{"event_id":"p6","order_id":6,"status":"PAID","updated_at":"2024-03-01 21:43:56"}"#
            .to_owned(),
        r#"{"event_id":"p7","status":"ZQXMALFORMED",}"#.to_owned(),
        r#"["ZQXARRAY"]"#.to_owned(),
        format!(
            r#"{{"event_id":"p9","order_id":9,"status":"ZQXDUPA","status":"ZQXDUPB","updated_at":"{TS}"}}"#
        ),
        format!(
            r#"{{"event_id":"p10","order_id":10,"status":"PAID","updated_at":"{TS}","seq":31415926535897932384626}}"#
        ),
    ];
    lines.push(String::new());
    let mut bytes = lines.join("\n").into_bytes();
    bytes.extend_from_slice(b"{\"event_id\":\"p11\",\"status\":\"ZQXUTF8\xff\"}\n");
    bytes
}

fn leaky_input() -> Vec<u8> {
    let lines = [
        format!(r#"{{"event_id":"q1","order_id":1,"status":"ZQXLEAKSTATUS","updated_at":"{TS}"}}"#),
        format!(
            r#"{{"event_id":"q2","order_id":2,"status":"PAID","updated_at":"{TS}","email":"zqx.secret@example.com"}}"#
        ),
        format!(
            r#"{{"event_id":"q3","order_id":3,"status":"PAID","updated_at":"{TS}","name":"ZQX Privatename"}}"#
        ),
        format!(
            r#"{{"event_id":"q4","order_id":4,"status":"PAID","updated_at":"{TS}","payment_token":"ZQXTOKEN4111"}}"#
        ),
        format!(
            r#"{{"event_id":"q5","order_id":5,"status":"PAID","updated_at":"{TS}","coupon":"ZQXCOUPON"}}"#
        ),
        format!(r#"{{"event_id":"q6","order_id":6,"status":"ZQXCONFLICTA","updated_at":"{TS}"}}"#),
        format!(r#"{{"event_id":"q6","order_id":6,"status":"ZQXCONFLICTB","updated_at":"{TS}"}}"#),
    ];
    (lines.join("\n") + "\n").into_bytes()
}

/// Every file under `dir` except published Parquet (the trash keeps old generations).
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    common::tree(dir)
        .into_iter()
        .filter(|(p, _)| p.extension().is_none_or(|e| e != "parquet"))
        .map(|(p, b)| (p.display().to_string(), b))
        .collect()
}

fn leaks(haystack: &[u8]) -> Vec<&'static str> {
    SECRETS
        .iter()
        .filter(|s| haystack.windows(s.len()).any(|w| w == s.as_bytes()))
        .copied()
        .collect()
}

#[test]
fn no_value_leaves_the_input_except_into_the_published_rows() {
    let product = Product::new();
    let clean = product.path().join("inbox/clean.jsonl");
    let leaky = product.path().join("inbox/leaky.jsonl");
    fs::write(&clean, clean_input()).unwrap();
    fs::write(&leaky, leaky_input()).unwrap();

    let mut outputs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut run = |args: &[&str], input: Option<&Path>, want: i32| {
        for json in [false, true] {
            let mut cmd = product.cmd(if json { &["--json"] } else { &[] });
            cmd.args(args);
            if let Some(input) = input {
                cmd.arg(input);
            }
            let out = cmd.output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(want),
                "{args:?}: {}",
                common::text(&out)
            );
            let label = format!("{args:?} json={json}");
            outputs.push((format!("{label} stdout"), out.stdout));
            outputs.push((format!("{label} stderr"), out.stderr));
        }
    };
    run(&["plan"], Some(&clean), 0);
    run(&["plan"], Some(&leaky), 3);
    run(&["run"], Some(&clean), 0);
    run(&["run"], Some(&leaky), 3);
    run(&["run"], None, 3); // the inbox: a skip and a refusal
    run(&["quarantine"], None, 0);
    for entry in fs::read_dir(&product.quarantine).unwrap() {
        let hash = entry.unwrap().file_name().into_string().unwrap();
        run(&["quarantine", &hash], None, 0);
    }
    run(&["history"], None, 0);
    run(&["status"], None, 0);

    // The run did land the accepted values: the test would prove nothing otherwise.
    let published = product.snapshot();
    let rows = published
        .rows
        .values()
        .flatten()
        .cloned()
        .collect::<String>();
    assert!(rows.contains("ZQXSTATUSA") && rows.contains("7770012345"));
    let rejects = product.quarantine.read_dir().unwrap().count();
    assert_eq!(rejects, 2, "both inputs quarantined");

    let mut found = Vec::new();
    for (name, bytes) in files(&product.state)
        .into_iter()
        .chain(files(&product.quarantine))
        .chain(outputs)
    {
        assert!(!bytes.is_empty() || !name.contains("stdout") || name.contains("json=false"));
        for secret in leaks(&bytes) {
            found.push(format!("{secret} in {name}"));
        }
    }
    assert!(found.is_empty(), "values leaked:\n{}", found.join("\n"));
}
