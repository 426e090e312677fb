//! Discovery on a large S3 inbox (bench/s3_inbox.sh runs it): fills `s3://BUCKET/PREFIX/`
//! with N small objects (once; a prefix already holding them is reused), lists it in full
//! as `watch`'s reconcile does, then puts one new object and times the cycle that finds
//! it: one listing after the last key seen. Credentials and endpoint from `AWS_*`.
//!
//!   cargo run --release --example s3_discovery -- s3://wharf/bench-100k/ 100000

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use object_store::ObjectStoreExt;
use object_store::path::Path as StorePath;
use wharf::config::inbox::Listing;
use wharf::s3_inbox::discover::Discovery;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let url = args
        .get(1)
        .cloned()
        .unwrap_or("s3://wharf/bench-100k/".into());
    let count: usize = args.get(2).map_or(Ok(100_000), |n| n.parse())?;
    let inbox = PathBuf::from(&url);
    let (bucket, prefix) = wharf::s3_inbox::locate(&inbox)?;
    let store = bucket_store(&url)?;
    let runtime = tokio::runtime::Runtime::new()?;

    let listed = runtime.block_on(async {
        let mut stream = store.list(Some(&StorePath::from(prefix.as_str())));
        let mut n = 0usize;
        while let Some(meta) = stream.next().await {
            meta?;
            n += 1;
        }
        Ok::<_, object_store::Error>(n)
    })?;
    if listed < count {
        let started = Instant::now();
        runtime.block_on(fill(&store, &prefix, listed, count))?;
        eprintln!(
            "put {} objects in {:.1} s",
            count - listed,
            started.elapsed().as_secs_f64()
        );
    }
    drop(bucket);

    let listing = Listing {
        poll: std::time::Duration::from_millis(1),
        rescan: std::time::Duration::from_secs(3600),
    };
    let mut discovery = Discovery::new(&inbox, "_SUCCESS", listing)?;
    // The reconcile of the whole inbox; every object counts as landed already.
    let started = Instant::now();
    let found = discovery.cycle(&|_| true)?;
    let full = started.elapsed();
    assert!(found.full && found.entries.is_empty());

    // One new object, with a key after every other: the next cycle lists only it.
    let name = format!("zz-new-{}.jsonl", std::process::id());
    let key = StorePath::from(format!("{prefix}/{name}"));
    runtime.block_on(store.put(&key, b"{}\n".to_vec().into()))?;
    let put = Instant::now();
    let found = discovery.cycle(&|_| false)?;
    let found_in = put.elapsed();
    assert!(!found.full);
    assert_eq!(
        found
            .entries
            .iter()
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>(),
        [name.as_str()],
        "the cycle finds the one new object"
    );
    runtime.block_on(store.delete(&key))?;
    println!(
        "objects {}  reconcile {:.2} s  new object found in {:.3} s  listings {}",
        count.max(listed),
        full.as_secs_f64(),
        found_in.as_secs_f64(),
        discovery.listings
    );
    Ok(())
}

/// The store of `url`'s bucket, from the environment.
fn bucket_store(
    url: &str,
) -> Result<Arc<dyn object_store::ObjectStore>, Box<dyn std::error::Error>> {
    let name = url
        .trim_start_matches("s3://")
        .split('/')
        .next()
        .unwrap_or_default();
    let store = object_store::aws::AmazonS3Builder::from_env()
        .with_bucket_name(name)
        .build()?;
    Ok(Arc::new(store))
}

/// Puts objects `from..to` under `prefix`, 64 at a time.
async fn fill(
    store: &Arc<dyn object_store::ObjectStore>,
    prefix: &str,
    from: usize,
    to: usize,
) -> Result<(), object_store::Error> {
    let puts = futures::stream::iter(from..to).map(|i| {
        let store = store.clone();
        let key = StorePath::from(format!("{prefix}/obj-{i:07}.jsonl"));
        async move { store.put(&key, b"{}\n".to_vec().into()).await.map(drop) }
    });
    let mut puts = puts.buffer_unordered(64);
    while let Some(done) = puts.next().await {
        done?;
    }
    Ok(())
}
