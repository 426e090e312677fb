//! An inbox on S3 (CONTRACT.md §13), against the SeaweedFS bucket: the same deliveries
//! put in an S3 inbox and in a local inbox land the same lake, state and quarantine; a
//! set lands only once its marker exists; an object that changes while it is read lands
//! nothing.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use object_store::ObjectStoreExt;
use object_store::path::Path as StorePath;
use serde_json::Value;

use super::kit::product::{Product, Ran, schema};
use super::{DAY, Root, s3_env};

/// A fresh prefix of the bucket for one test.
pub fn fresh_prefix(test: &str) -> String {
    format!("inbox-{test}-{}", &uuid_like()[..12])
}

fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{:x}{:x}", nanos, std::process::id())
}

impl Root {
    /// Puts `bytes` at `relative` under the root.
    pub fn put(&self, relative: &str, bytes: &[u8]) {
        // The key as written (`Path::from` would escape a `~`).
        let path = StorePath::parse(format!("{}/{relative}", self.prefix)).unwrap();
        self.runtime
            .block_on(self.store.put(&path, bytes.to_vec().into()))
            .unwrap();
    }
}

/// A product whose inbox is `s3://wharf/<prefix>/`, a local hive lake and `settings`.
pub fn s3_product(prefix: &str, settings: &str) -> Product {
    Product::with_config(&format!(
        "product = \"orders\"\ninbox = \"s3://wharf/{prefix}/\"\n{settings}\n{}",
        schema()
    ))
}

/// `wharf ARGS` for `product`, with the S3 environment.
pub fn wharf_s3(product: &Product, args: &[&str]) -> Ran {
    let mut cmd = product.cmd(args);
    s3_env(&mut cmd);
    cmd.output().unwrap().into()
}

pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

pub fn lines(list: &[&str]) -> Vec<u8> {
    let mut text = list.join("\n");
    text.push('\n');
    text.into_bytes()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn event(id: &str, order: u32, status: &str, at: &str) -> String {
    format!(r#"{{"event_id":"{id}","order_id":{order},"status":"{status}","updated_at":"{at}"}}"#)
}

/// The deliveries of the parity test: a file with a rejected line, a set of two parts
/// and a gzip (a `~` in its name, which object stores' path types like to escape), each
/// on its own date; by name (a set's parts under `name/`).
fn deliveries() -> Vec<(String, Vec<u8>)> {
    let day2: Vec<String> = (0..6)
        .map(|i| event(&format!("s{i}"), 200 + i, "PAID", "2024-03-02T09:00:00Z"))
        .collect();
    let day3: Vec<String> = (0..50)
        .map(|i| {
            event(
                &format!("g{i}"),
                300 + i % 7,
                "SHIPPED",
                "2024-03-03T10:00:00Z",
            )
        })
        .collect();
    let mut first = DAY.to_vec();
    first.push(
        r#"{"event_id":"bad","order_id":"x","status":"PAID","updated_at":"2024-03-01T12:00:00Z"}"#,
    );
    vec![
        ("01-day.jsonl".into(), lines(&first)),
        ("02-batch/part-0000.jsonl".into(), lines(&refs(&day2[..3]))),
        ("02-batch/part-0001.jsonl".into(), lines(&refs(&day2[3..]))),
        ("02-batch/_SUCCESS".into(), Vec::new()),
        ("03-late~1.jsonl.gz".into(), gzip(&lines(&refs(&day3)))),
    ]
}

/// `value` with what differs between two landings of the same bytes (times, durations,
/// run ids, the product's folder) masked, and the S3 stamp removed.
fn masked(value: &Value, folder: &Path) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "object")
                .map(|(k, v)| {
                    let hidden = [
                        "time",
                        "duration_ms",
                        "run_id",
                        "last_publish",
                        "age_seconds",
                    ]
                    .contains(&k.as_str())
                        || k.ends_with("_at");
                    let v = if hidden {
                        Value::Null
                    } else {
                        masked(v, folder)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| masked(v, folder)).collect()),
        Value::String(s) => Value::String(s.replace(folder.to_str().unwrap(), "<product>")),
        other => other.clone(),
    }
}

/// A JSON document, or JSON lines, masked.
fn json_lines(text: &str, folder: &Path) -> Vec<Value> {
    if let Ok(whole) = serde_json::from_str::<Value>(text) {
        return vec![masked(&whole, folder)];
    }
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let parsed = serde_json::from_str(l).unwrap_or_else(|_| Value::String(l.into()));
            masked(&parsed, folder)
        })
        .collect()
}

/// Every file under `root` with its bytes, JSON documents masked.
fn documents(root: &Path, folder: &Path) -> BTreeMap<String, Vec<Value>> {
    super::kit::tree(root)
        .into_iter()
        // A lock, and the random token that claims the lake: each product's own.
        .filter(|(p, _)| !p.to_string_lossy().contains(".lock"))
        .filter(|(p, _)| !p.ends_with("owner-token"))
        .map(|(p, bytes)| {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            (p.display().to_string(), json_lines(&text, folder))
        })
        .collect()
}

#[test]
fn an_s3_inbox_lands_what_a_local_inbox_lands() {
    let prefix = fresh_prefix("parity");
    let bucket = Root::s3(&prefix);
    let s3 = s3_product(&prefix, "");
    let local = Product::new();
    for (name, bytes) in deliveries() {
        bucket.put(&name, &bytes);
        let path = local.path().join("inbox").join(&name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    // Oldest first in both: one input at a time, in name order.
    for name in ["01-day.jsonl", "02-batch", "03-late~1.jsonl.gz"] {
        let url = format!("s3://wharf/{prefix}/{name}");
        let path = local.path().join("inbox").join(name);
        for verb in ["plan", "diff"] {
            let a = wharf_s3(&s3, &[verb, &url, "--json"]);
            let b = local.wharf(&[verb, path.to_str().unwrap(), "--json"]);
            assert_eq!((a.code, verb), (b.code, verb), "{name}: {}", a.stderr);
            assert_eq!(
                json_lines(&a.stdout, s3.path()),
                json_lines(&b.stdout, local.path()),
                "{verb} {name}"
            );
        }
        let from_s3 = wharf_s3(
            &s3,
            &["run", &format!("s3://wharf/{prefix}/{name}"), "--json"],
        );
        let from_disk = local.wharf(&[
            "run",
            local.path().join("inbox").join(name).to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(
            from_s3.code, from_disk.code,
            "{name}: {}{}",
            from_s3.stdout, from_s3.stderr
        );
        assert_eq!(
            masked(&from_s3.json(), s3.path()),
            masked(&from_disk.json(), local.path()),
            "{name}"
        );
    }
    // The lake byte for byte (but the owner file, which names each product's own state
    // root); state and quarantine but for times and the S3 stamp.
    let lake = |p: &Product| {
        let mut tree = p.tree("lake");
        tree.retain(|path, _| !path.to_string_lossy().contains("wharf-owner"));
        tree
    };
    assert_eq!(lake(&s3).len(), 3);
    assert!(lake(&s3) == lake(&local), "the lakes differ");
    for root in ["state", "quarantine"] {
        assert_eq!(
            documents(&s3.path().join(root), s3.path()),
            documents(&local.path().join(root), local.path()),
            "{root}"
        );
    }
    let checkpoint = s3.checkpoint("02-batch").unwrap();
    assert!(
        checkpoint["object"]["etag"]
            .as_str()
            .unwrap()
            .starts_with("set-")
    );
    for args in [
        &["status", "--json"][..],
        &["history", "--json"],
        &["quarantine", "--json"],
    ] {
        let a = wharf_s3(&s3, args);
        let b = local.wharf(args);
        assert_eq!(a.code, b.code, "{args:?}: {}", a.stderr);
        assert_eq!(
            json_lines(&a.stdout, s3.path()),
            json_lines(&b.stdout, local.path()),
            "{args:?}"
        );
    }
    // Discovery over the bucket: every input is a skip now, in both.
    let again = wharf_s3(&s3, &["run", "--json"]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(
        again.stdout.matches("\"skipped\"").count(),
        3,
        "{}",
        again.stdout
    );
}

#[test]
fn a_refused_or_unreachable_inbox_names_the_url_and_never_a_secret() {
    let prefix = fresh_prefix("denied");
    Root::s3(&prefix).put("day.jsonl", &lines(&DAY));
    let product = s3_product(&prefix, "");
    let url = format!("s3://wharf/{prefix}/day.jsonl");
    for (variable, value) in [
        ("AWS_SECRET_ACCESS_KEY", "wrong-secret-7f3a9c"),
        ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
    ] {
        for args in [&["run", url.as_str()][..], &["run"], &["status"]] {
            let mut cmd = product.cmd(args);
            s3_env(&mut cmd).env(variable, value);
            let ran: Ran = cmd.output().unwrap().into();
            let all = format!("{}{}", ran.stdout, ran.stderr);
            if args == ["status"] {
                assert!(!all.contains("wharf-test-secret"), "{all}");
                continue;
            }
            assert_eq!(ran.code, 1, "{variable} {args:?}: {all}");
            assert!(all.contains(&format!("s3://wharf/{prefix}/")), "{all}");
            assert!(
                all.contains("AWS_ENDPOINT_URL"),
                "names what to check: {all}"
            );
            for secret in ["wharf-test-secret", "wrong-secret-7f3a9c"] {
                assert!(!all.contains(secret), "{variable}: {all}");
            }
        }
    }
    assert!(product.tree("lake").is_empty());
    assert!(product.checkpoint("day.jsonl").is_none());
}

/// §12.5 with §13.3: a new machine's state root rebuilds an object's checkpoint from a
/// Delta table's log, which records no ETag; the skip then stamps it, so `watch` tells
/// the object landed from the listing instead of reading it at every reconcile.
#[test]
fn a_checkpoint_rebuilt_from_the_log_takes_the_objects_stamp_at_its_skip() {
    let prefix = fresh_prefix("restamp");
    let bucket = Root::s3(&prefix);
    let s3 = s3_product(&prefix, "table_format = \"delta\"");
    let (name, bytes) = deliveries().remove(0);
    bucket.put(&name, &bytes);
    let url = format!("s3://wharf/{prefix}/{name}");
    let first = wharf_s3(&s3, &["run", &url, "--json"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let landed = s3.checkpoint(&name).unwrap();
    let stamp = landed["object"].clone();
    assert!(stamp["etag"].is_string(), "{stamp}");
    let lake = s3.tree("lake");

    std::fs::remove_dir_all(&s3.state).unwrap(); // a new machine
    let plan = wharf_s3(&s3, &["plan", &url, "--json"]);
    assert_eq!(plan.json()["action"], "skip", "{}", plan.stderr);
    assert!(s3.checkpoint(&name).is_none(), "plan writes no state");
    let again = wharf_s3(&s3, &["run", &url, "--json"]);
    assert_eq!(again.json()["action"], "skipped", "{}", again.stderr);
    assert_eq!(s3.tree("lake"), lake, "the skip wrote nothing to the lake");
    let rebuilt = s3.checkpoint(&name).unwrap();
    assert_eq!(
        rebuilt["object"], stamp,
        "the skip stamps the rebuilt checkpoint"
    );
    assert_eq!(rebuilt["input_sha256"], landed["input_sha256"]);
    assert_eq!(rebuilt["table_version"], landed["table_version"]);
}
