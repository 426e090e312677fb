//! An S3 inbox on the Spark engine (CONTRACT.md §13): the driver reads the object, or a
//! set's parts, through the same reader the local engine uses (hash, decode, classify)
//! and hands Spark the accepted records, so a set and a gzip put in a bucket land as the
//! local engine lands the same files from a local inbox. Against the S3 server at
//! `WHARF_S3_PORT` (tests/s3/server.sh).

use std::io::Write;

use object_store::ObjectStoreExt;
use object_store::path::Path as StorePath;

use crate::engines;
use crate::kit::{Product, Ran};
use crate::landing::agreed;

fn port() -> String {
    std::env::var("WHARF_S3_PORT").unwrap_or_else(|_| "18300".to_owned())
}

/// Puts `bytes` at `key` in the test bucket.
fn put(key: &str, bytes: &[u8]) {
    let (store, runtime) = crate::delta::test_bucket(&port());
    runtime
        .block_on(store.put(&StorePath::from(key), bytes.to_vec().into()))
        .unwrap();
}

fn text(lines: &[String]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

#[test]
fn a_set_and_a_gzip_from_a_bucket_land_as_the_local_engine_lands_them() {
    let _server = engines::server();
    let prefix = format!("spark-inbox-{}", std::process::id());
    let lines = crate::kit::tricky_lines();
    let half = lines.len() / 2;
    let parts = [text(&lines[..half]), text(&lines[half..])];
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&text(&lines)).unwrap();
    let gz = gz.finish().unwrap();

    let spark = Product::with_settings(&format!("inbox = \"s3://wharf/{prefix}/\""));
    let local = Product::new();
    let set = local.path().join("inbox/01-set");
    std::fs::create_dir_all(&set).unwrap();
    for (i, bytes) in parts.iter().enumerate() {
        put(&format!("{prefix}/01-set/part-{i:05}.jsonl"), bytes);
        std::fs::write(set.join(format!("part-{i:05}.jsonl")), bytes).unwrap();
    }
    put(&format!("{prefix}/01-set/_SUCCESS"), b"");
    std::fs::write(set.join("_SUCCESS"), b"").unwrap();
    put(&format!("{prefix}/02-late.jsonl.gz"), &gz);
    let late = local.input_bytes("02-late.jsonl.gz", &gz);

    for (name, path) in [("01-set", set), ("02-late.jsonl.gz", late)] {
        let url = format!("s3://wharf/{prefix}/{name}");
        let remote = engines::remote();
        let mut cmd = spark.cmd(&[
            "run", &url, "--json", "--engine", "spark", "--remote", &remote,
        ]);
        cmd.env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", port()))
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", "wharf-test-access")
            .env("AWS_SECRET_ACCESS_KEY", "wharf-test-secret-5e7a1c");
        let on_spark: Ran = cmd.output().unwrap().into();
        let on_local = local.run_json(&path);
        assert_eq!(on_spark.code, on_local.code, "{name}: {}", on_spark.stderr);
        assert_eq!(agreed(&on_spark.json()), agreed(&on_local.json()), "{name}");
        assert_eq!(
            on_spark.json()["input_sha256"],
            on_local.json()["input_sha256"]
        );
    }
    assert_eq!(spark.snapshot().rows, local.snapshot().rows);
    assert!(!spark.snapshot().rows.is_empty());
}
