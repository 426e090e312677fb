//! [`Courier`]: delivers alert and lineage documents on a thread of its own, in order, so
//! a landing never waits for them. Each delivery is bounded in time: the alert command
//! is killed after its timeout, a POST gives up after it. A failure costs one line on
//! stderr (naming the hook, the event and the run id, never the document), nothing else.
//! The line names a URL by its scheme, host and port and a command by its program: a
//! URL's path and query and a command's arguments may carry a token.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::cli::report::inert;

/// Where one document goes.
#[derive(Clone, Debug)]
pub enum Target {
    /// A program, the document on its stdin.
    Command(Vec<String>),
    /// An HTTP POST of the document as `application/json`.
    Post(String),
    /// One line appended to a file (NDJSON).
    Append(PathBuf),
}

struct Parcel {
    target: Target,
    body: Vec<u8>,
    /// What it is, for the log line: `alert refused run 6f…`.
    label: String,
}

/// The delivery thread; [`Courier::finish`] waits for what was sent.
pub struct Courier {
    sender: Option<Sender<Parcel>>,
    thread: Option<JoinHandle<()>>,
}

impl Courier {
    pub fn start(timeout: Duration) -> Courier {
        let (sender, parcels) = channel();
        let thread = std::thread::Builder::new()
            .name("wharf-page".into())
            .spawn(move || deliver_all(parcels, timeout))
            .map_err(|e| {
                eprintln!(
                    "wharf: cannot start the paging thread ({e}); no alert or lineage will be sent"
                )
            })
            .ok();
        Courier {
            sender: thread.as_ref().map(|_| sender),
            thread,
        }
    }

    /// Queues `body` for `target`; returns at once.
    pub fn send(&self, target: Target, body: Vec<u8>, label: String) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(Parcel {
                target,
                body,
                label,
            });
        }
    }

    /// Waits for every queued delivery (each bounded by the timeout).
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Courier {
    fn drop(&mut self) {
        self.stop();
    }
}

fn deliver_all(parcels: Receiver<Parcel>, timeout: Duration) {
    let mut http: Option<Http> = None;
    for parcel in parcels {
        // A delivery that panics is one failed delivery, not the end of paging.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            deliver(&parcel, &mut http, timeout)
        }))
        .unwrap_or_else(|_| Err("it panicked".to_owned()));
        if let Err(why) = result {
            eprintln!(
                "wharf: {} to {}: {why}; the landing is unaffected",
                parcel.label,
                describe(&parcel.target)
            );
        }
    }
}

fn deliver(parcel: &Parcel, http: &mut Option<Http>, timeout: Duration) -> Result<(), String> {
    match &parcel.target {
        Target::Command(argv) => run_command(argv, &parcel.body, timeout),
        Target::Append(path) => append(path, &parcel.body),
        Target::Post(url) => {
            let client = match http {
                Some(client) => client,
                None => http.insert(Http::new(timeout)?),
            };
            client.post(url, &parcel.body)
        }
    }
}

fn describe(target: &Target) -> String {
    match target {
        Target::Command(argv) => {
            let program = argv.first().map_or("", String::as_str);
            format!("command `{}`", inert(program))
        }
        Target::Post(url) => format!("POST {}", inert(&origin(url))),
        Target::Append(path) => inert(&path.display().to_string()),
    }
}

/// A URL's scheme, host and port only: no user-info, path, query or fragment.
fn origin(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => {
            let host = parsed.host_str().unwrap_or("");
            let port = parsed.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!("{}://{host}{port}", parsed.scheme())
        }
        Err(_) => "an unreadable URL".to_owned(),
    }
}

/// Runs `argv` with `body` on stdin; killed after `timeout`.
fn run_command(argv: &[String], body: &[u8], timeout: Duration) -> Result<(), String> {
    let Some((program, args)) = argv.split_first() else {
        return Ok(());
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start it ({e})"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that exits without reading closes the pipe: not a failure of its own.
        let _ = stdin.write_all(body);
    }
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("it failed ({status})")),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "it was still running after {} s and was killed",
                    timeout.as_secs_f64()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("cannot wait for it ({e})")),
        }
    }
}

fn append(path: &std::path::Path, body: &[u8]) -> Result<(), String> {
    let mut line = body.to_vec();
    line.push(b'\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(&line))
        .map_err(|e| format!("cannot append ({e})"))
}

/// A POSTing client on a one-thread runtime of its own (the delivery thread's).
struct Http {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl Http {
    fn new(timeout: Duration) -> Result<Http, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start an HTTP runtime ({e})"))?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| format!("cannot build an HTTP client ({e})"))?;
        Ok(Http { runtime, client })
    }

    fn post(&self, url: &str, body: &[u8]) -> Result<(), String> {
        let request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_vec());
        // Sent from inside the runtime: the client's timeout needs its timer.
        let response = self
            .runtime
            .block_on(async { request.send().await })
            .map_err(|e| {
                format!(
                    "the request failed ({})",
                    inert(&e.without_url().to_string())
                )
            })?;
        match response.status() {
            s if s.is_success() => Ok(()),
            s => Err(format!("the server answered {s}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_named_by_its_scheme_host_and_port() {
        assert_eq!(origin("https://u:p@h.example/x"), "https://h.example");
        assert_eq!(origin("https://h.example/x?token=t#f"), "https://h.example");
        assert_eq!(
            origin("http://127.0.0.1:9/hook/T0/s3cr3t"),
            "http://127.0.0.1:9"
        );
        assert_eq!(origin("http://[::1]:8080/a"), "http://[::1]:8080");
        assert_eq!(origin("not a url"), "an unreadable URL");
    }

    #[test]
    fn a_command_is_named_by_its_program() {
        let argv = ["notify".to_owned(), "--token".into(), "s3cr3t".into()];
        assert_eq!(
            describe(&Target::Command(argv.to_vec())),
            "command `notify`"
        );
    }
}
