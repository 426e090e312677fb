//! The lake's seam holds: no code outside `land/` (and `config/`, which parses the
//! format) names a format's variant or reaches into a format's home, so every question
//! about hive folders or a Delta table goes through [`super::root::PublishRoot`]. Only
//! an engine, which writes a table's files by their URLs, may ask for the table's URL.

use std::path::{Path, PathBuf};

/// What only the lake's home may write: a format's variant or module.
const FORMAT_NAMES: [&str; 7] = [
    "Lake::Hive",
    "Lake::Delta",
    "PublishRoot::Hive",
    "PublishRoot::Delta",
    "TableFormat",
    "land::hive",
    "land::delta",
];

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a line, without a comment (a doc link may name a home).
fn code(line: &str) -> &str {
    if line.trim_start().starts_with("//") {
        return "";
    }
    line.split_once(" // ").map_or(line, |(code, _)| code)
}

/// Each line of `src/` outside `land/` and `config/` that names one of `names`, as
/// `file:line: text`; `table_url()` too outside `engine/`.
fn offenders(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap_or(&file);
        if relative.starts_with("land") || relative.starts_with("config") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let engine = relative.starts_with("engine");
        for (n, line) in text.lines().enumerate() {
            let code = code(line);
            let named = FORMAT_NAMES.iter().any(|name| code.contains(name));
            if named || (!engine && code.contains("table_url()")) {
                found.push(format!(
                    "src/{}:{}: {}",
                    relative.display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    found
}

#[test]
fn no_code_outside_the_lake_branches_on_its_format() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = offenders(&src);
    assert!(
        found.is_empty(),
        "these lines ask which format the lake has; ask land::root::PublishRoot instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_finds_a_format_named_outside_the_lake() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("land/root.rs", "Lake::Delta { .. } => {}\n");
    write("config/lake.rs", "Lake::Hive(_) => {}\n");
    write("engine/spark/uri.rs", "config.lake.table_url()\n");
    write(
        "console/load.rs",
        "// Lake::Hive in a comment\nlet x = 1;\n",
    );
    assert!(
        offenders(dir.path()).is_empty(),
        "{:?}",
        offenders(dir.path())
    );
    write(
        "cli/status.rs",
        "let a = 1;\nif matches!(config.lake, Lake::Delta { .. }) {}\n",
    );
    write(
        "console/landed.rs",
        "if config.lake.table_url().is_some() {}\n",
    );
    assert_eq!(
        offenders(dir.path()),
        [
            "src/cli/status.rs:2: if matches!(config.lake, Lake::Delta { .. }) {}",
            "src/console/landed.rs:1: if config.lake.table_url().is_some() {}",
        ]
    );
}
