//! A test-only TCP proxy between Wharf and the S3 server that misbehaves as networks and
//! S3 do: it answers an object GET with `503 SlowDown`, or cuts a connection after part
//! of an object's bytes went through (optionally calling a hook first, e.g. to replace
//! the object mid-read). Everything else passes through untouched.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What the proxy does to object GETs, and what it did.
#[derive(Default)]
pub struct Faults {
    /// Object GETs still to answer with 503 SlowDown.
    pub slowdowns: AtomicUsize,
    /// Object GETs still to cut after `cut_after` bytes of their response.
    pub cuts: AtomicUsize,
    pub cut_after: AtomicUsize,
    /// Done so far.
    pub slowed: AtomicUsize,
    pub cut: AtomicUsize,
    /// Object GETs seen, and those asking for a range.
    pub gets: AtomicUsize,
    pub ranged: AtomicUsize,
    /// Called once, just before the first cut.
    pub before_cut: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

/// A running proxy to `127.0.0.1:upstream`; it lives as long as the test process.
pub struct FaultProxy {
    pub port: u16,
    pub faults: Arc<Faults>,
}

impl FaultProxy {
    pub fn start(upstream: u16, faults: Faults) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let faults = Arc::new(faults);
        let shared = faults.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let faults = shared.clone();
                std::thread::spawn(move || serve(client, upstream, &faults));
            }
        });
        FaultProxy { port, faults }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Whether `request` starts an object GET (a listing carries a query string).
fn object_get(request: &[u8]) -> bool {
    let line = request.split(|b| *b == b'\r').next().unwrap_or_default();
    line.starts_with(b"GET ") && !line.contains(&b'?')
}

/// Takes one from `counter` if it is above zero.
fn take(counter: &AtomicUsize) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

/// S3's answer to too many requests.
fn slow_down() -> String {
    let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
                <Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
    format!(
        "HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

fn serve(mut client: TcpStream, upstream: u16, faults: &Arc<Faults>) {
    let Ok(mut server) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    let armed = Arc::new(AtomicBool::new(false));
    let (mut from_server, mut to_client) =
        (server.try_clone().unwrap(), client.try_clone().unwrap());
    let (faults_back, armed_back) = (faults.clone(), armed.clone());
    let back = std::thread::spawn(move || {
        let mut buf = vec![0u8; 16 << 10];
        let mut since_armed = 0usize;
        loop {
            let n = match from_server.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if armed_back.load(Ordering::SeqCst) {
                let limit = faults_back.cut_after.load(Ordering::SeqCst);
                let room = limit.saturating_sub(since_armed).min(n);
                let _ = to_client.write_all(&buf[..room]);
                since_armed += room;
                if since_armed >= limit {
                    if let Some(hook) = faults_back.before_cut.lock().unwrap().take() {
                        hook();
                    }
                    faults_back.cut.fetch_add(1, Ordering::SeqCst);
                    let _ = to_client.shutdown(Shutdown::Both);
                    let _ = from_server.shutdown(Shutdown::Both);
                    break;
                }
                continue;
            }
            if to_client.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let mut buf = vec![0u8; 16 << 10];
    loop {
        let n = match client.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if object_get(&buf[..n]) {
            faults.gets.fetch_add(1, Ordering::SeqCst);
            let head = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
            if head.contains("\r\nrange: bytes=") {
                faults.ranged.fetch_add(1, Ordering::SeqCst);
            }
            if take(&faults.slowdowns) {
                faults.slowed.fetch_add(1, Ordering::SeqCst);
                let _ = client.write_all(slow_down().as_bytes());
                let _ = client.shutdown(Shutdown::Both);
                break;
            }
            if take(&faults.cuts) {
                armed.store(true, Ordering::SeqCst);
            }
        }
        if server.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = server.shutdown(Shutdown::Both);
    let _ = back.join();
}
