//! The page end to end with real parts: Debian's Prometheus scrapes a real `wharf watch
//! --metrics`, evaluates the shipped rule file (docs/alerts.yml), and its Alertmanager
//! delivers the refusal to a webhook receiver in this test, which must name the product
//! and the refused input. Both servers run on loopback by their own pids, with data in a
//! temporary folder, and are killed on every exit path ([`Server`]'s drop). `promtool
//! check rules` and `promtool check metrics` (on a real scrape) run here too.
//!
//! Without the binaries the test skips loudly, unless `CI=true`: there it fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::kit::{Product, event};

const PATIENCE: Duration = Duration::from_secs(60);

/// A child process killed (by its pid) and reaped when dropped.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The first of `names` on PATH; without one, `None` after a loud line, or a failure
/// under `CI=true` (`install` says how to get it).
pub fn tool(names: &[&str], install: &str) -> Option<PathBuf> {
    let found = on_path(names);
    if found.is_none() {
        let message = format!("{} is not on PATH: install {install}", names[0]);
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
        eprintln!("\n!!!!! SKIPPED the part that needs it: {message} !!!!!\n");
    }
    found
}

/// `promtool check metrics` passes `text` (Prometheus's parser and its lint).
pub fn check_metrics(promtool_bin: &Path, text: &str) {
    promtool(promtool_bin, &["check", "metrics"], Some(text));
}

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

/// A loopback port for a server of these tests: the next of `WHARF_TEST_PORTS=FIRST`
/// when set (a range a shared machine reserved), else one the OS finds free.
pub fn free_port() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    if let Some(first) = std::env::var("WHARF_TEST_PORTS")
        .ok()
        .and_then(|v| v.parse::<u16>().ok())
    {
        return first + NEXT.fetch_add(1, Ordering::Relaxed);
    }
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A webhook receiver: every POSTed body, parsed, on the returned channel.
pub fn receiver() -> (u16, Receiver<Value>) {
    let listener = TcpListener::bind(("127.0.0.1", free_port())).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            if let Some(body) = read_post(stream) {
                let _ = tx.send(serde_json::from_slice(&body).unwrap_or(Value::Null));
            }
        }
    });
    (port, rx)
}

fn read_post(mut stream: TcpStream) -> Option<Vec<u8>> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut length = 0;
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        if line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    Some(body)
}

/// GET `url_path` from `addr`, the body as text.
pub fn get(addr: &str, url_path: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {url_path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default()
}

/// Starts `wharf watch --metrics 127.0.0.1:PORT`; returns it and the address it serves.
pub fn watch_with_metrics(product: &Product) -> (Server, String) {
    let mut child = product
        .cmd(&[
            "watch",
            "--rescan",
            "1",
            "--metrics",
            &format!("127.0.0.1:{}", free_port()),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Server(child);
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("wharf watch said where it serves")
            .unwrap();
        if let Some(rest) = line.strip_prefix("wharf watch: metrics at http://") {
            break rest.trim_end_matches("/metrics").to_owned();
        }
    };
    std::thread::spawn(move || lines.for_each(drop)); // keep its stderr drained
    (server, addr)
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).unwrap();
    path.to_owned()
}

pub fn promtool(promtool: &Path, args: &[&str], stdin: Option<&str>) {
    let mut child = Command::new(promtool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn prometheus_pages_a_refusal_through_alertmanager() {
    let tools = (
        on_path(&["prometheus"]),
        on_path(&["prometheus-alertmanager", "alertmanager"]),
        on_path(&["promtool"]),
    );
    let (Some(prometheus), Some(alertmanager), Some(promtool_bin)) = tools else {
        let message = "prometheus, prometheus-alertmanager and promtool are not on PATH \
                       (Debian: apt-get install prometheus prometheus-alertmanager)";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
        eprintln!(
            "\n!!!!! SKIPPED prometheus_pages_a_refusal_through_alertmanager: {message} !!!!!\n"
        );
        return;
    };
    let rules = repo().join("docs/alerts.yml");
    promtool(
        &promtool_bin,
        &["check", "rules", rules.to_str().unwrap()],
        None,
    );

    let product = Product::with_settings("");
    let leak = r#"{"event_id":"e2","order_id":2,"status":"A","updated_at":"2024-03-01T10:00:00Z","email":"x"}"#;
    product.input(
        "leaky-export.jsonl",
        &[&event("e1", 1, "A", "2024-03-01T10:00:00Z"), leak],
    );
    let (_wharf, wharf_addr) = watch_with_metrics(&product);
    let scrape = get(&wharf_addr, "/metrics");
    assert!(scrape.contains("wharf_build_info"), "{scrape}");
    poll_text(&wharf_addr, "wharf_last_refusal_timestamp_seconds{");
    promtool(
        &promtool_bin,
        &["check", "metrics"],
        Some(&get(&wharf_addr, "/metrics")),
    );

    let dir = product.path().join("paging");
    std::fs::create_dir_all(&dir).unwrap();
    let (hook_port, delivered) = receiver();
    let am_port = free_port();
    let am_config = write(
        &dir.join("alertmanager.yml"),
        &format!(
            "route:\n  receiver: test\n  group_by: [alertname, product]\n  group_wait: 0s\n  \
             group_interval: 1s\n  repeat_interval: 1h\nreceivers:\n  - name: test\n    \
             webhook_configs:\n      - url: http://127.0.0.1:{hook_port}/\n"
        ),
    );
    let _am = Server(
        Command::new(alertmanager)
            .arg(format!("--config.file={}", am_config.display()))
            .arg(format!("--storage.path={}", dir.join("am").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{am_port}"))
            .arg("--cluster.listen-address=")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let prom_config = write(
        &dir.join("prometheus.yml"),
        &format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {}\n\
             alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['127.0.0.1:{am_port}']\n\
             scrape_configs:\n  - job_name: wharf\n    static_configs:\n      - targets: ['{wharf_addr}']\n",
            rules.display()
        ),
    );
    let _prometheus = Server(
        Command::new(prometheus)
            .arg(format!("--config.file={}", prom_config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("prom").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{}", free_port()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    let alert = wait_for_alert(&delivered, "WharfRefusal");
    assert_eq!(alert["labels"]["product"], "orders", "{alert}");
    assert_eq!(alert["labels"]["input"], "leaky-export.jsonl", "{alert}");
    assert_eq!(alert["labels"]["reason"], "prohibited_field", "{alert}");
    let summary = alert["annotations"]["summary"].as_str().unwrap_or("");
    assert!(
        summary.contains("leaky-export.jsonl") && summary.contains("orders"),
        "{summary}"
    );
    // The refusal published nothing.
    assert!(product.dates().is_empty());
}

/// Polls wharf's `/metrics` until it holds `needle`.
fn poll_text(addr: &str, needle: &str) {
    let deadline = Instant::now() + PATIENCE;
    while !get(addr, "/metrics").contains(needle) {
        assert!(Instant::now() < deadline, "no {needle} in wharf's metrics");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The first firing alert named `name` Alertmanager delivers.
fn wait_for_alert(delivered: &Receiver<Value>, name: &str) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(body) = delivered.recv_timeout(left) else {
            panic!("Alertmanager delivered no {name} alert within {PATIENCE:?}");
        };
        let alerts = body["alerts"].as_array().cloned().unwrap_or_default();
        if let Some(alert) = alerts
            .into_iter()
            .find(|a| a["labels"]["alertname"] == name && a["status"] == "firing")
        {
            return alert;
        }
    }
}
