//! `GET /metrics` over HTTP/1.1 for Prometheus, on a thread of its own. One route, no
//! keep-alive, no TLS: a std::net responder is the whole of it (a server crate would
//! bring a second async stack for a single GET). Reads and writes time out, so a client
//! that stalls holds the thread for seconds at most, and never a landing.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use super::metrics::Metrics;
use crate::error::{Error, Result};

const IO_TIMEOUT: Duration = Duration::from_secs(5);
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Binds `addr` and answers scrapes from a background thread; returns the bound address
/// (port 0 picks one).
pub fn serve(addr: &str, metrics: Metrics) -> Result<SocketAddr> {
    let fail = |e: std::io::Error| {
        Error::Usage(format!(
            "--metrics {addr}: cannot listen there ({e}); give a free HOST:PORT such as 127.0.0.1:9464"
        ))
    };
    let listener = TcpListener::bind(addr).map_err(fail)?;
    let bound = listener.local_addr().map_err(fail)?;
    std::thread::Builder::new()
        .name("wharf-metrics".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = answer(stream, &metrics);
            }
        })
        .map_err(fail)?;
    Ok(bound)
}

fn answer(mut stream: TcpStream, metrics: &Metrics) -> std::io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers, to the blank line: a client may wait for its request to be read.
    let mut header = String::new();
    while reader.read_line(&mut header)? > 2 {
        header.clear();
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, kind, body) = match (method, path) {
        ("GET", "/metrics") => ("200 OK", PROMETHEUS_TEXT, metrics.encode()),
        ("GET", _) => (
            "404 Not Found",
            "text/plain",
            "wharf serves /metrics\n".to_owned(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "GET /metrics\n".to_owned(),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}
