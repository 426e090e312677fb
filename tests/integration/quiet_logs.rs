//! A failed delivery's log line names a URL by its scheme, host and port and a hook by
//! its program: a webhook answering 500, a lineage endpoint refusing the connection and
//! an alert command exiting 7, each configured with secrets in the URL's user-info, path
//! and query or in the command's arguments; no secret in stdout, stderr, `--json` or
//! any file the product's folder holds afterwards (run log, quarantine, metrics, state).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::mpsc::{Receiver, channel};

use crate::kit::{Product, event};

const SECRETS: [&str; 6] = [
    "hookPATH5ecret",
    "hookQUERY5ecret",
    "lineageUSER5ecret",
    "lineagePATH5ecret",
    "lineageQUERY5ecret",
    "hookARGV5ecret",
];

/// A server answering every request `500`; each request's first line is sent on.
fn failing_server() -> (u16, Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut first = String::new();
            let _ = BufReader::new(stream.try_clone().unwrap()).read_line(&mut first);
            let _ = tx.send(first);
            let _ = stream.write_all(
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    (port, rx)
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every file under `dir` but the config, by path, as text.
fn every_file(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            every_file(&path, out);
        } else if path.file_name().is_some_and(|n| n != "wharf.toml") {
            let bytes = fs::read(&path).unwrap();
            out.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into(),
            ));
        }
    }
}

#[test]
fn a_failed_hook_webhook_or_lineage_post_logs_no_secret() {
    let (hook_port, requests) = failing_server();
    let lineage_port = closed_port();
    let [
        hook_path,
        hook_query,
        user,
        lineage_path,
        lineage_query,
        argv,
    ] = SECRETS;
    let product = Product::with_settings(&format!(
        "lineage = \"http://{user}:pw@127.0.0.1:{lineage_port}/api/{lineage_path}/lineage?api_key={lineage_query}\"\n\
         [alerts]\n\
         webhook = \"http://127.0.0.1:{hook_port}/services/{hook_path}?token={hook_query}\"\n\
         command = [\"sh\", \"-c\", \"exit 7\", \"{argv}\"]\ntimeout = \"5s\""
    ));
    let at = "2024-03-01T10:00:00Z";
    product.input("a-fine.jsonl", &[&event("e1", 1, "P", at)]);
    product.input("b-leaky.jsonl", &[r#"{"event_id":"e2","order_id":2,"status":"P","updated_at":"2024-03-01T10:00:00Z","email":"x"}"#]);
    product.input("c-broken.jsonl", &[&event("e3", 3, "P", at)]);
    fs::create_dir_all(product.state.join("checkpoints")).unwrap();
    fs::write(
        product.state.join("checkpoints/c-broken.jsonl.json"),
        "{not json",
    )
    .unwrap();
    let metrics = product.path().join("wharf.prom");
    let json = product.wharf(&["run", "--json", "--metrics-file", metrics.to_str().unwrap()]);
    let text = product.wharf(&["run"]);
    assert_eq!(
        (json.code, text.code),
        (1, 1),
        "{}{}",
        json.stderr,
        text.stderr
    );

    let mut outputs = vec![
        ("run --json stdout".to_owned(), json.stdout.clone()),
        ("run --json stderr".to_owned(), json.stderr.clone()),
        ("run stdout".to_owned(), text.stdout.clone()),
        ("run stderr".to_owned(), text.stderr.clone()),
    ];
    every_file(product.path(), &mut outputs);
    let names: Vec<&str> = outputs.iter().map(|(n, _)| n.as_str()).collect();
    for file in ["runs.jsonl", "summary.json", "wharf.prom"] {
        assert!(
            names.iter().any(|n| n.ends_with(file)),
            "no {file} in {names:?}"
        );
    }
    for (name, text) in &outputs {
        for secret in SECRETS {
            assert!(!text.contains(secret), "{name} carries {secret}:\n{text}");
        }
    }
    // Each hook failed and said so, naming it by its origin or program.
    let webhook = format!("POST http://127.0.0.1:{hook_port}: the server answered 500");
    let lineage = format!("POST http://127.0.0.1:{lineage_port}: the request failed");
    for stderr in [&json.stderr, &text.stderr] {
        for says in [
            webhook.as_str(),
            lineage.as_str(),
            "to command `sh`: it failed",
        ] {
            assert!(stderr.contains(says), "{says:?} not in {stderr}");
        }
    }
    // The webhook got the alerts (refused and error, twice), and was asked by path.
    let asked: Vec<String> = requests.try_iter().collect();
    assert_eq!(asked.len(), 4, "{asked:?}");
    assert!(
        asked[0].contains(hook_path) && asked[0].contains(hook_query),
        "{asked:?}"
    );
}
