//! The console's modules import one another without a loop: this test reads every
//! `src/console/**.rs`, builds the graph of the module paths each file names (its `use`
//! trees and the paths in its code that start with `super::`, `self::`,
//! `crate::console::` or one of its own child modules), and fails on any cycle, naming
//! it. A parent that calls its child and a child that uses its parent's items count as a
//! cycle too: shared pieces belong in a module of their own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module path below `crate::console`: `[]` is `console/mod.rs`, `["view", "inbox"]`
/// is `console/view/inbox.rs`.
type Module = Vec<String>;

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of `source` that paths are made of; comments, strings, chars, lifetimes
/// and whitespace are dropped, so a doc link or a message naming a module is no edge.
fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i = block_comment_end(&chars, i);
        } else if c == '"' {
            i = string_end(&chars, i + 1);
        } else if c == 'r' && matches!(next, Some('"' | '#')) && raw_string(&chars, i + 1) {
            i = raw_string_end(&chars, i + 1);
        } else if c == 'b' && next == Some('"') {
            i = string_end(&chars, i + 2);
        } else if c == '\'' {
            i = quote_end(&chars, i);
        } else if c == ':' && next == Some(':') {
            out.push(Token::PathSep);
            i += 2;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

fn block_comment_end(chars: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i + 1 < chars.len() {
        match (chars[i], chars[i + 1]) {
            ('/', '*') => {
                depth += 1;
                i += 2;
            }
            ('*', '/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    chars.len()
}

/// The index after the closing quote of a string whose body starts at `i`.
fn string_end(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    chars.len()
}

/// Whether `r` followed by `chars[i..]` opens a raw string (`r"`, `r#"`, `r##"`…).
fn raw_string(chars: &[char], mut i: usize) -> bool {
    while chars.get(i) == Some(&'#') {
        i += 1;
    }
    chars.get(i) == Some(&'"')
}

fn raw_string_end(chars: &[char], mut i: usize) -> usize {
    let mut hashes = 0;
    while chars[i] == '#' {
        hashes += 1;
        i += 1;
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        i += 1;
    }
    chars.len()
}

/// Past a char literal (`'x'`, `'\n'`, `'\u{1b}'`) or a lifetime's quote (`'a`).
fn quote_end(chars: &[char], i: usize) -> usize {
    match (chars.get(i + 1), chars.get(i + 2)) {
        (Some('\\'), _) => {
            let mut j = i + 2;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            j + 1
        }
        (Some(_), Some('\'')) => i + 3,
        _ => i + 1,
    }
}

/// One path a file names, with how deep in inline modules (`mod tests { … }`) it is.
#[derive(Debug, PartialEq)]
struct Named {
    segments: Vec<String>,
    inline_depth: usize,
}

/// The child modules a file declares (`mod x;`) and every path it names.
fn scan(source: &str) -> (Vec<String>, Vec<Named>) {
    let tokens = tokens(source);
    let ident = |i: usize| match tokens.get(i) {
        Some(Token::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    let (mut children, mut named) = (Vec::new(), Vec::new());
    // Brace depth, and the depths at which inline modules opened.
    let (mut depth, mut inline) = (0usize, Vec::new());
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
            }
            Token::Ident(word) if word == "mod" => {
                if let Some(name) = ident(i + 1) {
                    match tokens.get(i + 2) {
                        Some(Token::Punct(';')) if inline.is_empty() => {
                            children.push(name.to_owned());
                        }
                        Some(Token::Punct('{')) => inline.push(depth),
                        _ => {}
                    }
                }
            }
            Token::Ident(word) if word == "use" => {
                let end = (i..tokens.len())
                    .find(|&j| tokens[j] == Token::Punct(';'))
                    .unwrap_or(tokens.len());
                let mut paths = Vec::new();
                use_tree(&tokens[i + 1..end], Vec::new(), &mut paths);
                named.extend(paths.into_iter().map(|segments| Named {
                    segments,
                    inline_depth: inline.len(),
                }));
                i = end;
                continue;
            }
            Token::Ident(first) if tokens.get(i + 1) == Some(&Token::PathSep) => {
                let after_sep = i > 0 && tokens[i - 1] == Token::PathSep;
                if !after_sep {
                    let mut segments = vec![first.clone()];
                    let mut j = i + 1;
                    while tokens.get(j) == Some(&Token::PathSep) {
                        let Some(next) = ident(j + 1) else { break };
                        segments.push(next.to_owned());
                        j += 2;
                    }
                    named.push(Named {
                        segments,
                        inline_depth: inline.len(),
                    });
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (children, named)
}

/// Expands a `use` tree (`a::b::{c, d::{self, e}}`, `x as y`, `p::*`) into its paths.
fn use_tree(tokens: &[Token], prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    let mut i = 0;
    loop {
        match tokens.get(i) {
            // `{self, …}`: the prefix itself.
            Some(Token::Ident(s)) if s == "self" && !path.is_empty() => {}
            Some(Token::Ident(s)) if s == "as" => break,
            Some(Token::Ident(s)) => path.push(s.clone()),
            Some(Token::Punct('{')) => {
                let mut depth = 0;
                let mut start = i + 1;
                for j in i..tokens.len() {
                    match tokens[j] {
                        Token::Punct('{') => depth += 1,
                        Token::Punct('}') => {
                            depth -= 1;
                            if depth == 0 {
                                use_tree(&tokens[start..j], path.clone(), out);
                                return;
                            }
                        }
                        Token::Punct(',') if depth == 1 => {
                            use_tree(&tokens[start..j], path.clone(), out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            Some(Token::PathSep) | Some(Token::Punct('*')) => {}
            _ => break,
        }
        i += 1;
    }
    if !path.is_empty() {
        out.push(path);
    }
}

/// The module a path in `from` (`inline_depth` inline modules deep) names, if it is in
/// the console: the longest prefix of it that is a known module.
fn resolve(
    from: &Module,
    children: &[String],
    named: &Named,
    known: &BTreeSet<Module>,
) -> Option<Module> {
    let segments = &named.segments;
    let mut at: Vec<String> = from.clone();
    at.extend((0..named.inline_depth).map(|_| "{inline}".to_owned()));
    let (mut path, rest) = match segments.first().map(String::as_str) {
        Some("crate") if segments.get(1).map(String::as_str) == Some("console") => {
            (Vec::new(), &segments[2..])
        }
        Some("super") => {
            let supers = segments.iter().take_while(|s| *s == "super").count();
            (
                at[..at.len().checked_sub(supers)?].to_vec(),
                &segments[supers..],
            )
        }
        Some("self") => (at, &segments[1..]),
        Some(first) if named.inline_depth == 0 && children.iter().any(|c| c == first) => {
            (at, &segments[..])
        }
        _ => return None,
    };
    if path.iter().any(|s| s == "{inline}") {
        return Some(from.clone());
    }
    let mut target = path.clone();
    for segment in rest {
        path.push(segment.clone());
        if known.contains(&path) {
            target = path.clone();
        }
    }
    Some(target)
}

/// The module graph of `files` (module path, source): who names whom.
fn graph(files: &[(Module, String)]) -> BTreeMap<Module, BTreeSet<Module>> {
    let scanned: Vec<_> = files.iter().map(|(m, s)| (m, scan(s))).collect();
    let mut known: BTreeSet<Module> = files.iter().map(|(m, _)| m.clone()).collect();
    for (module, (children, _)) in &scanned {
        for child in children {
            let mut path = (*module).clone();
            path.push(child.clone());
            known.insert(path);
        }
    }
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, (children, named)) in &scanned {
        let out = edges.entry((*module).clone()).or_default();
        for n in named {
            if let Some(target) = resolve(module, children, n, &known)
                && &target != *module
            {
                out.insert(target);
            }
        }
    }
    edges
}

/// A cycle of `graph`, as the modules round it, if there is one.
fn cycle(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        node: &Module,
        graph: &BTreeMap<Module, BTreeSet<Module>>,
        done: &mut BTreeSet<Module>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        if let Some(at) = stack.iter().position(|m| m == node) {
            let mut found = stack[at..].to_vec();
            found.push(node.clone());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, done, stack) {
                return Some(found);
            }
        }
        stack.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

fn name(module: &Module) -> String {
    std::iter::once("console")
        .chain(module.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::")
}

/// Every `.rs` file under `dir`, as (module path, source).
fn sources(dir: &Path, module: &Module, out: &mut Vec<(Module, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read the console's sources")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let mut child = module.clone();
        child.push(stem.to_owned());
        if path.is_dir() {
            sources(&path, &child, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let source = std::fs::read_to_string(&path).expect("read a source");
            out.push((if stem == "mod" { module.clone() } else { child }, source));
        }
    }
}

fn module(path: &str) -> Module {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn no_console_module_imports_another_round_a_loop() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/console");
    let mut files = Vec::new();
    sources(&root, &Vec::new(), &mut files);
    let graph = graph(&files);
    // The scan sees the console's real wiring (so an empty graph cannot pass).
    for (from, to) in [
        ("runtime", "update"),
        ("update", "update::inbox"),
        ("update::dialog", "update::inbox"),
        ("view::lists", "view::widgets"),
        ("view::lists", "sanitize"),
        ("runtime", "summary"),
        ("update", "update::products"),
        ("view::products", "products"),
    ] {
        assert!(
            graph[&module(from)].contains(&module(to)),
            "{from} → {to} not seen"
        );
    }
    if let Some(found) = cycle(&graph) {
        let names: Vec<String> = found.iter().map(name).collect();
        panic!("console modules import each other: {}", names.join(" → "));
    }
}

#[test]
fn the_scan_finds_each_kind_of_loop() {
    let file = |m: &str, s: &str| (module(m), s.to_owned());
    let loops = [
        vec![
            file("a", "use super::b::{self, Thing};"),
            file("b", "use crate::console::a::run as go;"),
        ],
        vec![
            file("a", "fn f() { super::b::g(); }"),
            file("b", "fn g() { let _ = crate::console::c::X; }"),
            file("c", "use super::{d, a::Y};"),
            file("d", ""),
        ],
        vec![
            file("v", "mod w;\nfn f() { w::draw(); }"),
            file("v::w", "use super::{text, bar};"),
        ],
    ];
    for files in &loops {
        assert!(cycle(&graph(files)).is_some(), "missed in {files:?}");
    }
    let clean = [
        file("", "mod a;\npub use a::Thing;"),
        file(
            "a",
            "//! see [`super::b`]\nuse super::b::X;\nconst S: &str = \"super::c::x\";\n#[cfg(test)]\nmod tests {\n    use super::*;\n}",
        ),
        file(
            "b",
            "use crate::plan::Action;\nuse std::fmt;\nfn f<'a>(c: char) -> bool { c == '{' }",
        ),
        file("c", "use super::a::X;"),
    ];
    let graph = graph(&clean);
    assert_eq!(cycle(&graph), None, "{graph:?}");
    assert_eq!(graph[&module("")], BTreeSet::from([module("a")]));
    assert_eq!(graph[&module("b")], BTreeSet::new());
}

/// The console reads through `plan`, `land` and the `Engine` trait (and the engine's
/// public reads), never a local engine's internals: no file outside its tests names
/// `engine::local` or `LocalEngine`, so the Spark engine's users get the same tabs.
#[test]
fn the_console_never_names_the_local_engines_internals() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/console");
    let mut files = Vec::new();
    sources(&root, &Vec::new(), &mut files);
    let test_only = ["tests", "escapes", "module_graph", "snapshots"];
    let mut checked = 0;
    for (module, source) in &files {
        if module
            .last()
            .is_some_and(|m| test_only.contains(&m.as_str()))
        {
            continue;
        }
        checked += 1;
        let tokens = tokens(source);
        for (i, token) in tokens.iter().enumerate() {
            let ident = |at: usize, want: &str| matches!(tokens.get(at), Some(Token::Ident(s)) if s == want);
            let local = ident(i, "engine")
                && tokens.get(i + 1) == Some(&Token::PathSep)
                && ident(i + 2, "local");
            assert!(
                !local && *token != Token::Ident("LocalEngine".into()),
                "{} names the local engine's internals",
                name(module)
            );
        }
    }
    assert!(checked > 20, "the console's files were read: {checked}");
}
