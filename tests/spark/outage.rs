//! A Spark Connect server lost mid-run: each test starts its own server on a free port
//! with `tests/spark/server.sh`, publishes a first input with the local engine, lands a
//! second on Spark and SIGKILLs the server while that run works. The run must exit 1 with
//! an error naming the remote and the next step, and leave every published file, the
//! manifest, the trash and the first input's checkpoint as they were: staging gone, no
//! checkpoint for the second input, no `published` line for it in the run log.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::kit::{Events, Product, text};

/// Events per input: enough that Spark's jobs on local[2] run for seconds, so the kill
/// lands inside the run.
const EVENTS: usize = 300_000;

/// How long a run may take to notice the server is gone before the test calls it a hang.
const GIVE_UP: Duration = Duration::from_secs(180);

/// A server this test started; dropping it SIGKILLs it, so a failing test leaves none.
struct Server {
    port: u16,
    dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let port = free_port();
        let dir = tempfile::Builder::new()
            .prefix("wharf-spark-server-")
            .tempdir()
            .unwrap();
        let server = Server { port, dir };
        let out = server.script(&["start"]).output().unwrap();
        assert!(
            out.status.success(),
            "tests/spark/server.sh start failed: {}",
            text(&out)
        );
        server
    }

    fn remote(&self) -> String {
        format!("sc://127.0.0.1:{}", self.port)
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// SIGKILLs the server's process group and waits until it has exited.
    fn kill(&self) {
        let out = self.script(&["stop", "--kill"]).output().unwrap();
        assert!(
            out.status.success(),
            "server.sh stop failed: {}",
            text(&out)
        );
    }

    fn script(&self, args: &[&str]) -> Command {
        let mut cmd =
            Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spark/server.sh"));
        cmd.args(args)
            .arg("--port")
            .arg(self.port.to_string())
            .env("WHARF_SPARK_SERVER_DIR", self.dir.path());
        cmd
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.script(&["stop", "--kill"]).output();
    }
}

/// A port nothing listens on now (the kernel's pick, released at once).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// When, during the Spark run, the server is killed.
#[derive(Clone, Copy, Debug)]
enum KillAt {
    /// The server log shows its first job of the run: the census is on Spark.
    FirstJob,
    /// The staging folder exists: the write into it has begun.
    Staging,
}

#[test]
fn a_server_killed_during_the_census_leaves_the_lake_as_it_was() {
    lands_through_an_outage(KillAt::FirstJob);
}

#[test]
fn a_server_killed_during_the_write_leaves_the_lake_as_it_was() {
    lands_through_an_outage(KillAt::Staging);
}

fn lands_through_an_outage(kill_at: KillAt) {
    let server = Server::start();
    let product = Product::new();
    let first = product.path().join("inbox/01-first.jsonl");
    Events::new(EVENTS).days(2).seed(1).write(&first);
    product.land(&first);
    let second = product.path().join("inbox/02-second.jsonl");
    Events::new(EVENTS).days(2).seed(2).write(&second);

    let lake = product.tree("lake");
    let state = state_without_run_log(&product);
    let run_log = fs::read(product.state.join("runs.jsonl")).unwrap();
    assert!(!lake.is_empty() && product.checkpoint("01-first.jsonl").is_some());

    let mut run = spawn_spark_run(&product, &second, &server);
    wait_for(kill_at, &server, &product, &mut run.child);
    server.kill();
    let code = run.wait();
    let stderr = fs::read_to_string(&run.stderr).unwrap();
    let report = format!("{kill_at:?}: exit {code:?}\nstderr:\n{stderr}");

    assert_eq!(code, Some(1), "{report}");
    assert!(
        stderr.contains(&server.remote()),
        "the error names the remote: {report}"
    );
    assert!(
        ["again", "retry", "rerun"]
            .iter()
            .any(|w| stderr.contains(w)),
        "the error says what to do (run again once the server is back): {report}"
    );
    assert_eq!(
        product.tree("lake"),
        lake,
        "published files changed: {report}"
    );
    assert!(!product.staging().exists(), "staging left behind: {report}");
    assert!(
        product.checkpoint("02-second.jsonl").is_none(),
        "a checkpoint for the failed input: {report}"
    );
    assert_eq!(
        state_without_run_log(&product),
        state,
        "manifest, checkpoints or trash changed: {report}"
    );
    let log_after = fs::read(product.state.join("runs.jsonl")).unwrap();
    assert!(log_after.starts_with(&run_log), "the run log was rewritten");
    for line in String::from_utf8(log_after[run_log.len()..].to_vec())
        .unwrap()
        .lines()
    {
        let record: Value = serde_json::from_str(line).unwrap();
        assert_ne!(
            record["action"], "published",
            "the run log says published: {line}"
        );
    }
}

/// Every file of the product's state but the run log (which may gain a line), with its
/// bytes.
fn state_without_run_log(product: &Product) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut state = product.tree("state");
    state.retain(|path, _| !path.ends_with("runs.jsonl"));
    state
}

/// A `wharf run` on Spark in the background, its output going to files (a pipe nobody
/// reads could fill and stall it).
struct SparkRun {
    child: Child,
    stderr: PathBuf,
}

impl SparkRun {
    /// Its exit code, waiting at most [`GIVE_UP`]; a run still going then is killed and
    /// the test fails, since a lost server must end the run, never hang it.
    fn wait(&mut self) -> Option<i32> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if started.elapsed() > GIVE_UP {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let stderr = fs::read_to_string(&self.stderr).unwrap_or_default();
                panic!(
                    "wharf run still ran {GIVE_UP:?} after the server was killed\nstderr:\n{stderr}"
                );
            }
            sleep(Duration::from_millis(50));
        }
    }
}

fn spawn_spark_run(product: &Product, input: &Path, server: &Server) -> SparkRun {
    let stdout = product.path().join("spark-run.stdout");
    let stderr = product.path().join("spark-run.stderr");
    let child = product
        .cmd(&["run"])
        .arg(input)
        .args(["--engine", "spark", "--remote", &server.remote()])
        .stdin(Stdio::null())
        .stdout(fs::File::create(&stdout).unwrap())
        .stderr(fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    SparkRun { child, stderr }
}

/// Returns once `kill_at` is reached; panics if the run ends first (the input is then too
/// small for this machine, or the run failed before Spark did anything).
fn wait_for(kill_at: KillAt, server: &Server, product: &Product, run: &mut Child) {
    let started = Instant::now();
    let staging = product.staging();
    loop {
        let reached = match kill_at {
            KillAt::FirstJob => fs::read_to_string(server.log())
                .is_ok_and(|log| log.contains("DAGScheduler: Got job")),
            KillAt::Staging => staging.exists(),
        };
        if reached {
            return;
        }
        if let Some(status) = run.try_wait().unwrap() {
            let stderr = fs::read_to_string(product.path().join("spark-run.stderr")).unwrap();
            panic!("wharf run ended ({status}) before {kill_at:?} was reached\nstderr:\n{stderr}");
        }
        assert!(
            started.elapsed() < GIVE_UP,
            "{kill_at:?} not reached in {GIVE_UP:?}"
        );
        sleep(Duration::from_millis(10));
    }
}
