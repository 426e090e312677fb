//! Two products' `wharf run --metrics-file` textfiles in one folder, served by Debian's
//! `prometheus-node-exporter` (its textfile collector alone, on loopback, started and
//! killed by its pid on every exit path, [`Server`]'s drop): the scrape has no collector
//! error and both products' series. Two real scrapes of it (after a refusal, an error
//! and a publish, then after a later publish) become the input series of a `promtool
//! test rules` file for docs/alerts.yml: each rule fires and clears as the file says,
//! the silence rule from the textfiles alone.
//!
//! Without the binaries the test skips loudly, unless `CI=true`: there it fails.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::kit::{Product, event, schema};
use crate::prometheus::{Server, free_port, get, promtool, repo, tool, watch_with_metrics};

fn good(id: &str, order: i64) -> String {
    event(id, order, "A", "2024-03-01T10:00:00Z")
}

/// A product named `name` with `max_silence`.
fn product(name: &str, max_silence: &str) -> Product {
    Product::with_config(&format!(
        "product = \"{name}\"\nmax_silence = \"{max_silence}\"\n{}",
        schema()
    ))
}

/// Lands `lines` as `input` with `--metrics-file`; `broken` plants a corrupt checkpoint
/// first (an error).
fn land(product: &Product, input: &str, lines: &[String], file: &Path, broken: bool) {
    if broken {
        let checkpoints = product.state.join("checkpoints");
        fs::create_dir_all(&checkpoints).unwrap();
        fs::write(checkpoints.join(format!("{input}.json")), "{not json").unwrap();
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let path = product.input(input, &lines);
    let out = product
        .cmd(&["run", path.to_str().unwrap(), "--metrics-file"])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
}

/// GET `/metrics` over HTTP/1.0 (so the body is not chunked), or `None` while refused.
fn scrape(addr: &str) -> Option<String> {
    let mut stream = TcpStream::connect(addr).ok()?;
    write!(stream, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.0 200").then(|| body.to_owned())
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// The `wharf_` samples of a scrape, each as Prometheus stores it: the target's `job`
/// and `instance` added.
fn wharf_series(scrape: &str, instance: &str) -> BTreeMap<String, f64> {
    let mut series = BTreeMap::new();
    for line in scrape.lines().filter(|l| l.starts_with("wharf_")) {
        let (name_labels, value) = line.rsplit_once(' ').unwrap();
        let (name, labels) = name_labels.split_once('{').unwrap();
        let key = format!("{name}{{job=\"node\",instance=\"{instance}\",{labels}");
        series.insert(key, value.parse().unwrap());
    }
    series
}

#[test]
fn node_exporter_serves_two_products_and_the_rules_page_from_its_scrapes() {
    let tools = (
        tool(
            &["prometheus-node-exporter", "node_exporter"],
            "prometheus-node-exporter",
        ),
        tool(&["promtool"], "prometheus (Debian), which ships promtool"),
    );
    let (Some(node_exporter), Some(promtool_bin)) = tools else {
        return;
    };
    let orders = product("orders", "1h");
    let billing = product("billing", "2h");
    let dir = orders.path().join("textfiles");
    fs::create_dir_all(&dir).unwrap();
    let (orders_file, billing_file) = (dir.join("orders.prom"), dir.join("billing.prom"));
    land(&billing, "b.jsonl", &[good("e1", 1)], &billing_file, false);
    land(&orders, "a.jsonl", &[good("e1", 1)], &orders_file, false);
    let leaky = r#"{"event_id":"e2","order_id":2,"status":"A","updated_at":"2024-03-01T10:00:00Z","email":"x"}"#;
    land(
        &orders,
        "leaky.jsonl",
        &[leaky.to_owned()],
        &orders_file,
        false,
    );
    land(
        &orders,
        "broken.jsonl",
        &[good("e3", 3)],
        &orders_file,
        true,
    );
    land(&orders, "c.jsonl", &[good("e4", 4)], &orders_file, false);

    let addr = format!("127.0.0.1:{}", free_port());
    // Outside the collector's folder: it reads every *.prom there.
    let log = orders.path().join("node_exporter.log");
    let _node = Server(
        Command::new(node_exporter)
            .args(["--collector.disable-defaults", "--collector.textfile"])
            .arg(format!("--collector.textfile.directory={}", dir.display()))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let first = loop {
        if let Some(text) = scrape(&addr) {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "node_exporter at {addr} never answered"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let first_at = unix_now();
    assert!(first.contains("node_textfile_scrape_error 0"), "{first}");
    for product in ["orders", "billing"] {
        let build = format!("wharf_build_info{{product=\"{product}\",version=");
        let landings =
            format!("wharf_landings_total{{action=\"published\",product=\"{product}\"}} ");
        assert!(
            first.contains(&build) && first.contains(&landings),
            "{product}: {first}"
        );
    }
    // A later publish of orders alone, then the second scrape.
    land(&orders, "d.jsonl", &[good("e5", 5)], &orders_file, false);
    let second = scrape(&addr).unwrap();
    let second_at = unix_now();
    assert!(second.contains("node_textfile_scrape_error 0"), "{second}");
    // A collision (two products' series alike) is no collector error: node_exporter logs
    // it on every scrape and drops the series.
    let logged = fs::read_to_string(&log).unwrap();
    assert!(!logged.contains("level=error"), "{logged}");

    let mut rules_test = rules_test(
        &wharf_series(&first, &addr),
        first_at,
        &wharf_series(&second, &addr),
        second_at,
        &addr,
    );
    rules_test.push_str(&watch_group());
    let path = dir.join("alerts_test.yml");
    fs::write(&path, &rules_test).unwrap();
    promtool(
        &promtool_bin,
        &["test", "rules", path.to_str().unwrap()],
        None,
    );
}

/// Scrapes of a real `wharf watch --metrics`: while another process holds the
/// product's lock (busy, and silent past its 2 s `max_silence` as it never published),
/// then once the lock is let go and the input published.
fn watch_scrapes() -> (String, String) {
    let product = product("orders", "2s");
    fs::create_dir_all(&product.state).unwrap();
    let lock = product.state.join(".lock");
    fs::write(&lock, "").unwrap();
    // The lock held by this process, as another run would hold it; let go when dropped.
    let holder = fs::File::open(&lock).unwrap();
    rustix::fs::flock(&holder, rustix::fs::FlockOperation::LockExclusive).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    product.input("a.jsonl", &[&good("e1", 1)]);
    let (_watch, addr) = watch_with_metrics(&product);
    let busy = wait_for(&addr, |text| {
        series_value(text, "wharf_busy_seconds{product=\"orders\"}") > 0.0
            && series_value(text, "wharf_freshness_breach{product=\"orders\"}") == 1.0
    });
    drop(holder);
    let published = wait_for(&addr, |text| {
        text.contains("wharf_landings_total{product=\"orders\",action=\"published\"} 1")
            && series_value(text, "wharf_busy_seconds{product=\"orders\"}") == 0.0
    });
    (busy, published)
}

fn series_value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN)
}

/// The watch's `/metrics` once `ready` holds of it.
fn wait_for(addr: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = get(addr, "/metrics");
        if ready(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "the watch never got there: {text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A second test group from the watch's scrapes: the busy one from minute 0 to 29, its
/// `wharf_busy_seconds` growing a minute a minute (the gauge counts the spell), the
/// published one from minute 30. `WharfBusy` fires past 15 minutes and clears at the
/// publish; `WharfSilent` fires from the watch's breach gauge alone.
fn watch_group() -> String {
    let (busy, published) = watch_scrapes();
    let instance = "127.0.0.1:9464";
    let key = |line: &str| {
        let (name, labels) = line.split_once('{').unwrap();
        format!("{name}{{job=\"wharf\",instance=\"{instance}\",{labels}")
    };
    let mut series = String::new();
    for line in busy.lines().filter(|l| l.starts_with("wharf_")) {
        let (head, value) = line.rsplit_once(' ').unwrap();
        let step = if head.starts_with("wharf_busy_seconds") {
            60
        } else {
            0
        };
        let later = published
            .lines()
            .find_map(|l| l.strip_prefix(head)?.strip_prefix(' '))
            .map_or_else(|| "_".to_owned(), |v| format!("{v}+0x30"));
        writeln!(
            series,
            "      - series: '{}'\n        values: '{value}+{step}x29 {later}'",
            key(head)
        )
        .unwrap();
    }
    let target = format!("job: wharf, instance: \"{instance}\"");
    let busy_alert = |minutes: &str| {
        format!(
            "          - exp_labels: {{alertname: WharfBusy, severity: ticket, product: orders, {target}}}\n            \
               exp_annotations:\n              summary: \"orders has been busy for {minutes}\"\n              \
               description: \"Another wharf run holds the product's lock, or another writer keeps committing the table first.\""
        )
    };
    let spell = series_value(&busy, "wharf_busy_seconds{product=\"orders\"}");
    // `humanizeDuration` of the spell at minute 20, to the whole second.
    let at_20 = (spell + 1200.0) as u64;
    let fired = busy_alert(&format!("{}m {}s", at_20 / 60, at_20 % 60));
    format!(
        "  - interval: 1m\n    input_series:\n{series}    alert_rule_test:\n\
         \x20     - eval_time: 10m\n        alertname: WharfBusy\n        exp_alerts: []\n\
         \x20     - eval_time: 20m\n        alertname: WharfBusy\n        exp_alerts:\n{fired}\n\
         \x20     - eval_time: 35m\n        alertname: WharfBusy\n        exp_alerts: []\n\
         \x20     - eval_time: 10m\n        alertname: WharfSilent\n        exp_alerts:\n\
         \x20         - exp_labels: {{alertname: WharfSilent, severity: page, product: orders, {target}}}\n\
         \x20           exp_annotations:\n\
         \x20             summary: \"orders has not published for longer than its max_silence\"\n\
         \x20             description: \"The feed may have stopped arriving, the scheduler stopped running wharf, or every delivery is being refused. `wharf status` shows the last publish.\"\n"
    )
}

/// The minute of the test's clock (which starts at 0) the second scrape is shown at.
const SECOND_AT_MINUTE: u64 = 130;
const LAST_MINUTE: u64 = 200;

/// A `promtool test rules` file: the first scrape's series from minute 0 to 129, the
/// second's from 130 on. A timestamp becomes seconds on the test's clock: one the first
/// scrape has is its age then, counted back from 0; one only the second has (a new
/// event) is counted back from minute 130. Everything else is the scrape's verbatim.
fn rules_test(
    first: &BTreeMap<String, f64>,
    first_at: f64,
    second: &BTreeMap<String, f64>,
    second_at: f64,
    instance: &str,
) -> String {
    let moved = |key: &str, v: f64, at: f64, to: f64| match key.contains("_timestamp_seconds{") {
        true => v - at + to,
        false => v,
    };
    let mut series = String::new();
    let keys: std::collections::BTreeSet<&String> = first.keys().chain(second.keys()).collect();
    for key in keys {
        let before = first.get(key.as_str());
        let after = second.get(key.as_str()).map(|v| match before == Some(v) {
            true => moved(key, *v, first_at, 0.0),
            false => moved(key, *v, second_at, (SECOND_AT_MINUTE * 60) as f64),
        });
        let before = before.map(|v| moved(key, *v, first_at, 0.0));
        let run = |v: Option<f64>, n: u64| match v {
            Some(v) => format!("{v}+0x{}", n - 1),
            None => vec!["_"; n as usize].join(" "),
        };
        let values = format!(
            "{} {}",
            run(before, SECOND_AT_MINUTE),
            run(after, LAST_MINUTE - SECOND_AT_MINUTE + 1)
        );
        writeln!(
            series,
            "      - series: '{key}'\n        values: '{values}'"
        )
        .unwrap();
    }
    // `up` is Prometheus's own series for a scrape of `wharf watch --metrics`: up, down
    // from minute 20 to 49, up again, gone from discovery from 80 to 149, back at 150.
    let up = format!(
        "{} {} {} {} {}",
        "1+0x19",
        "0+0x29",
        "1+0x29",
        vec!["_"; 70].join(" "),
        "1+0x50"
    );
    writeln!(
        series,
        "      - series: 'up{{job=\"wharf\",instance=\"127.0.0.1:9464\"}}'\n        values: '{up}'"
    )
    .unwrap();
    let rules = repo().join("docs/alerts.yml");
    format!(
        "rule_files:\n  - {}\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n{series}    alert_rule_test:\n{}",
        rules.display(),
        expectations(instance)
    )
}

/// What each rule should say when: (minute, alert, expected alerts as YAML).
fn expectations(instance: &str) -> String {
    let target = format!("job: node, instance: \"{instance}\"");
    let refusal = format!(
        "- exp_labels: {{alertname: WharfRefusal, severity: page, product: orders, input: leaky.jsonl, reason: prohibited_field, {target}}}\n  \
           exp_annotations:\n    summary: \"orders: input leaky.jsonl was refused (prohibited_field)\"\n    \
           description: \"Nothing of leaky.jsonl was published. See `wharf quarantine` and `wharf history` for the product orders, or open `wharf console`.\""
    );
    let error = format!(
        "- exp_labels: {{alertname: WharfLandingError, severity: page, product: orders, input: broken.jsonl, reason: error, {target}}}\n  \
           exp_annotations:\n    summary: \"orders: landing broken.jsonl failed with an error\"\n    \
           description: \"The watch logs the error and retries at its next rescan. `wharf history` and the watch's or the cron job's log say why.\""
    );
    let silent = |product: &str| {
        format!(
            "- exp_labels: {{alertname: WharfSilent, severity: page, product: {product}, {target}}}\n  \
               exp_annotations:\n    summary: \"{product} has not published for longer than its max_silence\"\n    \
               description: \"The feed may have stopped arriving, the scheduler stopped running wharf, or every delivery is being refused. `wharf status` shows the last publish.\""
        )
    };
    let scrape_failing = "- exp_labels: {alertname: WharfMetricsAbsent, severity: page, job: wharf, instance: \"127.0.0.1:9464\"}\n  \
           exp_annotations:\n    summary: \"wharf watch at 127.0.0.1:9464 cannot be scraped\"";
    let vanished = "- exp_labels: {alertname: WharfTargetAbsent, severity: page, job: wharf}\n  \
           exp_annotations:\n    summary: \"no wharf watch target is being scraped (job wharf has vanished)\"";
    let both_silent = format!("{}\n{}", silent("billing"), silent("orders"));
    let cases: Vec<(u64, &str, String)> = vec![
        // The refusal and the error page for an hour, though a publish came after them.
        (5, "WharfRefusal", refusal.clone()),
        (5, "WharfLandingError", error.clone()),
        (5, "WharfSilent", String::new()),
        (59, "WharfRefusal", refusal),
        (62, "WharfRefusal", String::new()),
        (62, "WharfLandingError", String::new()),
        // No run since: each product's own max_silence (1h, 2h), from the textfile.
        (62, "WharfSilent", silent("orders")),
        (125, "WharfSilent", both_silent),
        // orders published again (the second scrape): its silence clears, billing's not;
        // the old refusal does not page again.
        (135, "WharfSilent", silent("billing")),
        (135, "WharfRefusal", String::new()),
        (24, "WharfMetricsAbsent", String::new()),
        (30, "WharfMetricsAbsent", scrape_failing.to_owned()),
        (55, "WharfMetricsAbsent", String::new()),
        (88, "WharfTargetAbsent", String::new()),
        (100, "WharfTargetAbsent", vanished.to_owned()),
        (155, "WharfTargetAbsent", String::new()),
    ];
    let mut text = String::new();
    for (minute, alert, alerts) in cases {
        write!(
            text,
            "      - eval_time: {minute}m\n        alertname: {alert}\n        exp_alerts:"
        )
        .unwrap();
        if alerts.is_empty() {
            text.push_str(" []\n");
            continue;
        }
        text.push('\n');
        for line in alerts.lines() {
            writeln!(text, "          {line}").unwrap();
        }
    }
    text
}
