//! Reading an S3 inbox through a network that fails (CONTRACT.md §13.3), via the test's
//! fault proxy in front of SeaweedFS: 503 SlowDown answers and connections cut mid-GET
//! cost retries and resumed range requests, never a wrong landing; an object replaced
//! while it is read lands nothing.

use std::sync::atomic::Ordering;

use super::fault_proxy::{FaultProxy, Faults};
use super::kit::product::{Product, Ran};
use super::s3_env;
use super::s3_inbox::{fresh_prefix, lines, s3_product};
use super::{Root, port};

/// About 1.3 MB of events on 2024-03-09, keys repeating so ranking has work to do.
fn big(tag: &str) -> Vec<u8> {
    let events: Vec<String> = (0..12_000)
        .map(|i| {
            format!(
                r#"{{"event_id":"{tag}-{i}","order_id":{},"status":"PAID","updated_at":"2024-03-09T{:02}:{:02}:{:02}Z"}}"#,
                i % 3000,
                i / 3600 % 24,
                i / 60 % 60,
                i % 60
            )
        })
        .collect();
    lines(&events.iter().map(String::as_str).collect::<Vec<_>>())
}

/// `wharf run URL --json` through the proxy.
fn run_through(product: &Product, proxy: &FaultProxy, url: &str) -> Ran {
    let mut cmd = product.cmd(&["run", url, "--json"]);
    s3_env(&mut cmd).env("AWS_ENDPOINT_URL", proxy.endpoint());
    cmd.output().unwrap().into()
}

fn lake(product: &Product) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut tree = product.tree("lake");
    tree.retain(|p, _| !p.to_string_lossy().contains("wharf-owner"));
    tree
}

#[test]
fn slowdowns_and_cut_connections_cost_retries_never_a_wrong_landing() {
    let prefix = fresh_prefix("faults");
    let bucket = Root::s3(&prefix);
    let bytes = big("f");
    bucket.put("big.jsonl", &bytes);
    let faults = Faults::default();
    faults.slowdowns.store(2, Ordering::SeqCst);
    faults.cuts.store(3, Ordering::SeqCst);
    faults.cut_after.store(200 << 10, Ordering::SeqCst);
    let proxy = FaultProxy::start(port(), faults);
    let product = s3_product(&prefix, "");
    let ran = run_through(&product, &proxy, &format!("s3://wharf/{prefix}/big.jsonl"));
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.json()["action"], "published");
    let f = &proxy.faults;
    assert_eq!(
        f.slowed.load(Ordering::SeqCst),
        2,
        "both slowdowns answered"
    );
    assert_eq!(f.cut.load(Ordering::SeqCst), 3, "every cut made");
    assert!(
        f.gets.load(Ordering::SeqCst) >= 6,
        "each fault cost a request"
    );

    let local = Product::new();
    let path = local.input_bytes("big.jsonl", &bytes);
    local.land(&path);
    assert!(lake(&product) == lake(&local), "the lakes differ");
    assert_eq!(
        product.checkpoint("big.jsonl").unwrap()["input_sha256"],
        local.checkpoint("big.jsonl").unwrap()["input_sha256"]
    );
}

#[test]
fn an_object_replaced_mid_read_lands_nothing() {
    let prefix = fresh_prefix("replaced");
    let bucket = Root::s3(&prefix);
    bucket.put("big.jsonl", &big("old"));
    let faults = Faults::default();
    faults.cuts.store(1, Ordering::SeqCst);
    faults.cut_after.store(300 << 10, Ordering::SeqCst);
    // The producer replaces the object (same size, other bytes) while Wharf reads it.
    let replacer = prefix.clone();
    *faults.before_cut.lock().unwrap() = Some(Box::new(move || {
        Root::s3(&replacer).put("big.jsonl", &big("new"));
    }));
    let proxy = FaultProxy::start(port(), faults);
    let product = s3_product(&prefix, "");
    let ran = run_through(&product, &proxy, &format!("s3://wharf/{prefix}/big.jsonl"));
    assert_eq!(proxy.faults.cut.load(Ordering::SeqCst), 1);
    assert_ne!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains("changed while it was read"),
        "{}",
        ran.stderr
    );
    assert!(lake(&product).is_empty(), "something was published");
    assert!(product.checkpoint("big.jsonl").is_none());
    assert!(product.tree("quarantine").is_empty());
}
