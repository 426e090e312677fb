use std::io::Write;
use std::path::Path;

use super::*;
use crate::input::SET_MARKER;

/// Lines of varied lengths, `tag` in each, ending with `\n` unless `open_end`.
fn text(tag: &str, lines: usize, open_end: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..lines {
        out.extend(format!("{tag}{i}{}", "x".repeat(i * 37 % 300)).into_bytes());
        if i % 7 == 3 {
            out.push(b'\r');
        }
        if !open_end || i + 1 < lines {
            out.push(b'\n');
        }
    }
    out
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

/// The lines a landing reads from `path`: the input's own splitter, `\r` stripped.
fn landed_lines(path: &Path) -> Vec<Vec<u8>> {
    let input = input::open(path, SET_MARKER).unwrap();
    let mut out = Vec::new();
    input::scan_input(&input, 1 << 20, &mut |_| true, |n, line| {
        assert_eq!(n as usize, out.len() + 1);
        match line {
            crate::contract::LineBytes::Kept(b) => out.push(b.to_vec()),
            crate::contract::LineBytes::TooLong => panic!("no line is too long here"),
        }
    })
    .unwrap();
    out
}

/// `index`'s lines, all at once and one at a time, `\r` stripped as §1 does.
fn read_back(index: &LineIndex) -> Vec<Vec<u8>> {
    let strip = |l: ReadLine| {
        assert!(l.complete(), "line {}", l.number);
        l.bytes.strip_suffix(b"\r").unwrap_or(&l.bytes).to_vec()
    };
    let numbers: Vec<u64> = (1..=index.lines()).collect();
    let mut all = Vec::new();
    index
        .read(&numbers, 1 << 20, &mut |l| all.push(strip(l)))
        .unwrap();
    for (i, line) in all.iter().enumerate() {
        let one = index.read_line(i as u64 + 1, 1 << 20).unwrap();
        assert_eq!(&strip(one), line, "line {} alone", i + 1);
    }
    all
}

fn both(path: &Path) -> [LineIndex; 2] {
    [
        LineIndex::build(path, SET_MARKER, &mut |_, _| true).unwrap(),
        LineIndex::sparse(path, SET_MARKER, &mut |_, _| true).unwrap(),
    ]
}

/// A set of plain, empty, unterminated, gzip and zstd parts reads back the lines a
/// landing reads, numbered on through the parts, each part's own BOM left out.
#[test]
fn a_set_reads_back_as_the_concatenation_of_its_parts() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("day");
    std::fs::create_dir(&set).unwrap();
    let mut a = b"\xEF\xBB\xBF".to_vec();
    a.extend(text("a", 150, false));
    let parts: [(&str, Vec<u8>, Vec<u8>); 6] = [
        ("p0.jsonl", a.clone(), a),
        ("p1.jsonl", Vec::new(), Vec::new()),
        ("p2.jsonl", text("c", 70, true), text("c", 70, true)),
        (
            "p3.jsonl.gz",
            gzip(&text("d", 200, false)),
            text("d", 200, false),
        ),
        ("p4.zst", zstd(&text("e", 90, true)), text("e", 90, true)),
        ("p5.jsonl.gz", gzip(b""), Vec::new()),
    ];
    let mut want = Vec::new();
    for (name, stored, plain) in &parts {
        std::fs::write(set.join(name), stored).unwrap();
        // Each part split on its own: its BOM, its last line without `\n`.
        let plain = plain.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(plain);
        let mut lines: Vec<Vec<u8>> = plain
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
            .collect();
        if plain.is_empty() || plain.ends_with(b"\n") {
            lines.pop();
        }
        want.extend(lines);
    }
    std::fs::write(set.join(SET_MARKER), b"").unwrap();
    assert_eq!(
        landed_lines(&set),
        want,
        "the splitter agrees with the test"
    );
    for index in both(&set) {
        assert!(index.is_set() && index.compressed());
        assert_eq!(index.lines(), 510);
        assert_eq!(read_back(&index), want);
        assert_eq!(index.line_ref(1), "p0.jsonl:1");
        assert_eq!(index.line_ref(150), "p0.jsonl:150");
        // p1 is empty: the next line is p2's first.
        assert_eq!(index.line_ref(151), "p2.jsonl:1");
        assert_eq!(index.line_ref(221), "p3.jsonl.gz:1");
        assert_eq!(index.line_ref(510), "p4.zst:90");
        assert_eq!(index.locate(220), (Some("p2.jsonl"), 70));
        // Lines scattered over the parts, in one read.
        let picked = [3, 149, 151, 220, 300, 421, 509];
        let mut got = Vec::new();
        index
            .read(&picked, 5, &mut |l| got.push((l.number, l.bytes)))
            .unwrap();
        let cut = |n: u64| want[n as usize - 1].iter().take(5).copied().collect();
        let expected: Vec<(u64, Vec<u8>)> = picked.iter().map(|&n| (n, cut(n))).collect();
        assert_eq!(got, expected);
        assert!(index.read_line(511, 10).is_err());
    }
}

/// A single compressed file reads back as its decoded text does, plain file numbers.
#[test]
fn a_compressed_file_reads_back_as_its_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let plain = text("z", 500, true);
    let plain_path = dir.path().join("f.jsonl");
    std::fs::write(&plain_path, &plain).unwrap();
    let want = landed_lines(&plain_path);
    assert_eq!(want.len(), 500);
    for (name, stored) in [("f.jsonl.gz", gzip(&plain)), ("f.jsonl.zst", zstd(&plain))] {
        let path = dir.path().join(name);
        std::fs::write(&path, stored).unwrap();
        for index in both(&path) {
            assert!(!index.is_set() && index.compressed(), "{name}");
            assert_eq!(read_back(&index), want, "{name}");
            assert_eq!(index.line_ref(500), "500");
            assert_eq!(index.locate(42), (None, 42));
        }
    }
}

/// Counting agrees with §1 on the edges: nothing, a BOM alone, a last line without `\n`,
/// and long lines are cut to the bytes kept but measured whole.
#[test]
fn lines_are_numbered_as_the_contract_splits_them() {
    let dir = tempfile::tempdir().unwrap();
    for (data, lines) in [
        (&b""[..], 0),
        (b"\xEF\xBB\xBF", 0),
        (b"\xEF\xBB\xBF\n", 1),
        (b"\xEF\xBB", 1),
        (b"a", 1),
        (b"a\n", 1),
        (b"a\n\nb", 3),
        (b"a\r\nb\r\n", 2),
    ] {
        let path = dir.path().join("f.jsonl");
        std::fs::write(&path, data).unwrap();
        for index in both(&path) {
            assert_eq!(index.lines(), lines, "{data:?}");
            assert_eq!(landed_lines(&path).len() as u64, lines, "{data:?}");
        }
    }
    let path = dir.path().join("long.jsonl.gz");
    std::fs::write(
        &path,
        gzip(&[vec![b'y'; 100_000], b"\nend".to_vec()].concat()),
    )
    .unwrap();
    let [index, _] = both(&path);
    let long = index.read_line(1, 10).unwrap();
    assert_eq!(
        (long.bytes.len(), long.len, long.complete()),
        (10, 100_000, false)
    );
    assert_eq!(index.read_line(2, 10).unwrap().bytes, b"end");
}

/// A part that changed since it was indexed is read no more.
#[test]
fn a_changed_part_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.jsonl");
    std::fs::write(&path, b"a\nb\n").unwrap();
    let [index, _] = both(&path);
    std::fs::write(&path, b"a\n").unwrap();
    let message = index.read_line(2, 10).unwrap_err().to_string();
    assert!(message.contains("changed since"), "{message}");
}
