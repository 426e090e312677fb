//! The parallel form of [`input::scan_input`]: one reader thread reads and hashes the
//! bytes of each part in turn (decoding compressed ones) and splits them into lines (the same [`input::Splitter`] rules), packing whole lines into
//! chunks; worker threads map every line of a chunk (classification, in practice); the
//! calling thread receives the results in line order. Memory is bounded by the chunks in
//! flight, not by the file.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::contract::LineBytes;
use crate::error::{Error, Result};
use crate::input::{self, Input, PartDigest, PartReader, Splitter};

/// Bytes of lines packed into one chunk before it is handed to a worker.
const CHUNK_BYTES: usize = 1 << 20;
/// Lines packed into one chunk at most: a batch costs memory per line (a reject's
/// finding), and a megabyte of two-byte lines would be half a million of them.
const CHUNK_LINES: usize = 16 << 10;
/// Bytes one read takes: small enough that the hash and the splitter find them in cache.
const READ_BYTES: usize = 128 << 10;
/// Chunks in flight between the stages, per stage.
const IN_FLIGHT: usize = 4;

/// Whole lines, copied out of the read buffer.
struct Chunk {
    seq: u64,
    bytes: Vec<u8>,
    /// (line number, start, end) into `bytes`; `None` range for a too-long line.
    lines: Vec<(u64, Option<(u32, u32)>)>,
    /// Bytes of the input read when this chunk was sealed.
    read: u64,
}

/// One chunk's result.
struct Mapped<B> {
    seq: u64,
    batch: B,
    read: u64,
}

/// The lines of one chunk, in order, for a chunk mapper (see [`scan_input`]).
pub struct Lines<'a> {
    chunk: &'a Chunk,
}

impl Lines<'_> {
    /// Each line's number and bytes.
    pub fn iter(&self) -> impl Iterator<Item = (u64, LineBytes<'_>)> {
        self.chunk.lines.iter().map(|(number, range)| match range {
            Some((start, end)) => (
                *number,
                LineBytes::Kept(&self.chunk.bytes[*start as usize..*end as usize]),
            ),
            None => (*number, LineBytes::TooLong),
        })
    }

    pub fn len(&self) -> usize {
        self.chunk.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunk.lines.is_empty()
    }
}

/// Where the reader stage gets bytes: decoded bytes out, and at the end the SHA-256 of
/// the bytes as stored (they differ for a compressed part, §11.5).
pub trait Source {
    /// The next bytes into `buf`, `None` at the end.
    fn read_some(&mut self, buf: &mut [u8]) -> Result<Option<usize>>;
    /// Stored bytes read so far.
    fn stored_read(&self) -> u64;
    /// The stored bytes' SHA-256 once all are read.
    fn finish(self) -> Result<String>;
}

impl Source for PartReader<'_> {
    fn read_some(&mut self, buf: &mut [u8]) -> Result<Option<usize>> {
        PartReader::read_some(self, buf)
    }
    fn stored_read(&self) -> u64 {
        PartReader::stored_read(self)
    }
    fn finish(self) -> Result<String> {
        PartReader::finish(self)
    }
}

/// Any reader, as stored: what is read is what is hashed.
pub struct Hashed<'p, R> {
    reader: R,
    source: &'p Path,
    hasher: Sha256,
    read: u64,
}

impl<'p, R: Read> Hashed<'p, R> {
    pub fn new(reader: R, source: &'p Path) -> Self {
        Hashed {
            reader,
            source,
            hasher: Sha256::new(),
            read: 0,
        }
    }
}

impl<R: Read> Source for Hashed<'_, R> {
    fn read_some(&mut self, buf: &mut [u8]) -> Result<Option<usize>> {
        let n = input::read_some(&mut self.reader, buf, self.source)?;
        if let Some(n) = n {
            self.hasher.update(&buf[..n]);
            self.read += n as u64;
        }
        Ok(n)
    }
    fn stored_read(&self) -> u64 {
        self.read
    }
    fn finish(self) -> Result<String> {
        Ok(input::hex(&self.hasher.finalize()))
    }
}

/// Reads `reader` once with `threads` workers applying `map` to each line; `sink` gets
/// the results in line order. `progress` gets the bytes read and returns `false` to
/// cancel. Returns the SHA-256 as lowercase hex.
pub fn scan<R, T, M>(
    reader: R,
    source: &Path,
    max_line_bytes: usize,
    threads: usize,
    map: &M,
    progress: &mut dyn FnMut(u64) -> bool,
    sink: impl FnMut(T),
) -> Result<String>
where
    R: Read + Send,
    T: Send,
    M: Fn(u64, LineBytes<'_>) -> T + Sync,
{
    let mut reader = Some(Hashed::new(reader, source));
    let open = move |_: usize| reader.take().ok_or_else(|| Error::internal("read twice"));
    let read = scan_sources(
        1,
        open,
        max_line_bytes,
        threads,
        &per_line(map),
        progress,
        each(sink),
    )?;
    Ok(read
        .into_iter()
        .next()
        .map(|(sha, _)| sha)
        .unwrap_or_default())
}

/// [`scan_input`] with `map` applied to each line, and `sink` getting each result.
pub fn scan_input_lines<T, M>(
    input: &Input,
    max_line_bytes: usize,
    threads: usize,
    map: &M,
    progress: &mut dyn FnMut(u64) -> bool,
    sink: impl FnMut(T),
) -> Result<Vec<PartDigest>>
where
    T: Send,
    M: Fn(u64, LineBytes<'_>) -> T + Sync,
{
    scan_input(
        input,
        max_line_bytes,
        threads,
        &per_line(map),
        progress,
        each(sink),
    )
}

fn per_line<T, M>(map: &M) -> impl Fn(Lines<'_>) -> Vec<T> + Sync + '_
where
    M: Fn(u64, LineBytes<'_>) -> T + Sync,
    T: Send,
{
    move |lines: Lines<'_>| {
        lines
            .iter()
            .map(|(number, line)| map(number, line))
            .collect()
    }
}

fn each<T>(mut sink: impl FnMut(T)) -> impl FnMut(Vec<T>) {
    move |items: Vec<T>| items.into_iter().for_each(&mut sink)
}

/// Reads every part of `input` once, in part order, a chunk at a time: `map` turns one
/// chunk's lines into a batch on a worker, and `sink` gets the batches in line order.
/// Each part is split on its own (its BOM, its last line) and its lines are numbered on
/// from the previous part's (§11.4), so arrival order is (part order, line). Returns each
/// part's digest.
pub fn scan_input<B, M>(
    input: &Input,
    max_line_bytes: usize,
    threads: usize,
    map: &M,
    progress: &mut dyn FnMut(u64) -> bool,
    sink: impl FnMut(B),
) -> Result<Vec<PartDigest>>
where
    B: Send,
    M: Fn(Lines<'_>) -> B + Sync,
{
    // Each part's decoder opens when its turn comes, so a set of many parts holds one.
    let open = |i: usize| PartReader::new(&input.parts[i]);
    let read = scan_sources(
        input.parts.len(),
        open,
        max_line_bytes,
        threads,
        map,
        progress,
        sink,
    )?;
    Ok(input::digests(input, read))
}

/// The stages over `count` sources, opened in turn by `open`: each source's SHA-256 and
/// line count, in order.
fn scan_sources<S, B, M>(
    count: usize,
    open: impl FnMut(usize) -> Result<S> + Send,
    max_line_bytes: usize,
    threads: usize,
    map: &M,
    progress: &mut dyn FnMut(u64) -> bool,
    mut sink: impl FnMut(B),
) -> Result<Vec<(String, u64)>>
where
    S: Source,
    B: Send,
    M: Fn(Lines<'_>) -> B + Sync,
{
    let cancelled = AtomicBool::new(false);
    let spare: Mutex<Vec<Chunk>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let (chunk_tx, chunk_rx) = sync_channel::<Chunk>(IN_FLIGHT);
        let (mapped_tx, mapped_rx) = sync_channel::<Mapped<B>>(IN_FLIGHT);
        let cancelled = &cancelled;
        // Mapped chunks go back to the reader, so their buffers are reused.
        let spare = &spare;
        let reader = Reader {
            max_line_bytes,
            chunks: chunk_tx,
            spare,
            cancelled,
        };
        let reading = scope.spawn(move || reader.read(count, open));
        let chunk_rx = Arc::new(Mutex::new(chunk_rx));
        for _ in 0..threads.max(1) {
            let (rx, tx) = (Arc::clone(&chunk_rx), mapped_tx.clone());
            scope.spawn(move || map_chunks(&rx, &tx, spare, map));
        }
        drop(mapped_tx);
        let delivered = deliver(&mapped_rx, progress, &mut sink);
        if delivered.is_err() {
            cancelled.store(true, Ordering::Relaxed);
        }
        drop(mapped_rx);
        let read = reading
            .join()
            .unwrap_or_else(|_| Err(Error::internal("the input's reader thread panicked")));
        delivered?;
        read
    })
}

/// Receives mapped chunks, reorders them by sequence and hands their batches to `sink`.
fn deliver<B>(
    mapped: &Receiver<Mapped<B>>,
    progress: &mut dyn FnMut(u64) -> bool,
    sink: &mut impl FnMut(B),
) -> Result<()> {
    let mut waiting: BTreeMap<u64, Mapped<B>> = BTreeMap::new();
    let mut next = 0u64;
    for chunk in mapped {
        waiting.insert(chunk.seq, chunk);
        while let Some(chunk) = waiting.remove(&next) {
            next += 1;
            sink(chunk.batch);
            if !progress(chunk.read) {
                return Err(Error::Cancelled);
            }
        }
    }
    Ok(())
}

fn map_chunks<B, M>(
    chunks: &Mutex<Receiver<Chunk>>,
    out: &SyncSender<Mapped<B>>,
    spare: &Mutex<Vec<Chunk>>,
    map: &M,
) where
    M: Fn(Lines<'_>) -> B,
{
    loop {
        let next = match chunks.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(chunk) = next else { return };
        let batch = map(Lines { chunk: &chunk });
        let (seq, read) = (chunk.seq, chunk.read);
        if let Ok(mut spare) = spare.lock() {
            spare.push(chunk);
        }
        if out.send(Mapped { seq, batch, read }).is_err() {
            return;
        }
    }
}

/// The reader stage: read, split and pack chunks, source after source.
struct Reader<'s> {
    max_line_bytes: usize,
    chunks: SyncSender<Chunk>,
    spare: &'s Mutex<Vec<Chunk>>,
    cancelled: &'s AtomicBool,
}

impl Reader<'_> {
    fn read<S: Source>(
        self,
        count: usize,
        mut open: impl FnMut(usize) -> Result<S>,
    ) -> Result<Vec<(String, u64)>> {
        let mut buf = vec![0u8; READ_BYTES];
        let mut chunk = Chunk {
            seq: 0,
            bytes: Vec::with_capacity(CHUNK_BYTES + 4096),
            lines: Vec::new(),
            read: 0,
        };
        let mut digests = Vec::with_capacity(count);
        let (mut before, mut done) = (0u64, 0u64);
        for i in 0..count {
            let mut source = open(i)?;
            let mut splitter = Splitter::numbered_after(self.max_line_bytes, before);
            loop {
                if self.cancelled.load(Ordering::Relaxed) {
                    return Err(Error::Cancelled);
                }
                let Some(n) = source.read_some(&mut buf)? else {
                    break;
                };
                let read = done + source.stored_read();
                let mut sent = true;
                splitter.feed(&buf[..n], &mut |number, line| {
                    pack(&mut chunk, number, line);
                    if chunk.lines.len() >= CHUNK_LINES {
                        sent &= self.seal(&mut chunk, read);
                    }
                });
                if !sent || (chunk.bytes.len() >= CHUNK_BYTES && !self.seal(&mut chunk, read)) {
                    return Err(Error::Cancelled);
                }
            }
            splitter.finish(&mut |number, line| pack(&mut chunk, number, line));
            done += source.stored_read();
            digests.push((source.finish()?, splitter.last_line() - before));
            before = splitter.last_line();
        }
        if !chunk.lines.is_empty() && !self.seal(&mut chunk, done) {
            return Err(Error::Cancelled);
        }
        Ok(digests)
    }

    /// Sends `chunk` on, `read` stored bytes in, and starts the next in a spare one.
    fn seal(&self, chunk: &mut Chunk, read: u64) -> bool {
        let reused = self.spare.lock().ok().and_then(|mut s| s.pop());
        let next = match reused {
            Some(mut old) => {
                old.bytes.clear();
                old.lines.clear();
                Chunk {
                    seq: chunk.seq + 1,
                    read: 0,
                    ..old
                }
            }
            None => Chunk {
                seq: chunk.seq + 1,
                bytes: Vec::with_capacity(CHUNK_BYTES + 4096),
                lines: Vec::with_capacity(chunk.lines.len()),
                read: 0,
            },
        };
        let mut sealed = std::mem::replace(chunk, next);
        sealed.read = read;
        self.chunks.send(sealed).is_ok()
    }
}

fn pack(chunk: &mut Chunk, number: u64, line: LineBytes<'_>) {
    match line {
        LineBytes::Kept(bytes) => {
            let start = chunk.bytes.len() as u32;
            chunk.bytes.extend_from_slice(bytes);
            chunk
                .lines
                .push((number, Some((start, chunk.bytes.len() as u32))));
        }
        LineBytes::TooLong => chunk.lines.push((number, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The hash and the numbered lines (`None` for a too-long one).
    type Scanned = (String, Vec<(u64, Option<Vec<u8>>)>);

    fn sequential(data: &[u8], max: usize) -> Scanned {
        let mut lines = Vec::new();
        let sha = input::scan(
            &mut &data[..],
            Path::new("x"),
            max,
            &mut |_| true,
            |n, l| {
                lines.push((
                    n,
                    match l {
                        LineBytes::Kept(b) => Some(b.to_vec()),
                        LineBytes::TooLong => None,
                    },
                ))
            },
        )
        .unwrap();
        (sha, lines)
    }

    fn parallel(data: &[u8], max: usize, threads: usize) -> Scanned {
        let map = |n: u64, l: LineBytes<'_>| {
            (
                n,
                match l {
                    LineBytes::Kept(b) => Some(b.to_vec()),
                    LineBytes::TooLong => None,
                },
            )
        };
        let mut lines = Vec::new();
        let sha = scan(
            data,
            Path::new("x"),
            max,
            threads,
            &map,
            &mut |_| true,
            |item| lines.push(item),
        )
        .unwrap();
        (sha, lines)
    }

    proptest! {
        #[test]
        fn parallel_scan_equals_the_sequential_one(
            lines in prop::collection::vec(prop::collection::vec(prop_oneof![Just(b'a'), Just(b'\r'), Just(0xEF), Just(b' ')], 0..40), 0..60),
            max in 1usize..30,
            threads in 1usize..4,
        ) {
            let data = lines.join(&b"\n"[..]);
            prop_assert_eq!(parallel(&data, max, threads), sequential(&data, max));
        }
    }

    #[test]
    fn many_chunks_arrive_in_order() {
        let data: Vec<u8> = (0..300_000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let (sha, lines) = parallel(&data, 100, 3);
        assert_eq!((sha, lines.clone()), sequential(&data, 100));
        assert_eq!(lines.len(), 300_000);
        assert_eq!(lines[299_999].1.as_deref(), Some(&b"299999"[..]));
    }

    #[test]
    fn cancelling_stops_with_cancelled() {
        let data = vec![b'x'; 5 << 20];
        let map = |n: u64, _: LineBytes<'_>| n;
        let result = scan(
            &data[..],
            Path::new("x"),
            10,
            2,
            &map,
            &mut |_| false,
            |_| {},
        );
        assert!(matches!(result, Err(Error::Cancelled)));
    }
}
