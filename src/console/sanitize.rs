//! [`clean`]: every string that comes from a file (input names, field names, event ids,
//! values, reasons, error messages quoting them) goes through it before it is drawn, so a
//! file cannot steer the operator's terminal.
//!
//! ESC becomes `␛`, every other control character (C0, DEL, C1 such as the one-byte CSI
//! `U+009B`) becomes `�`, and the Unicode bidirectional overrides and isolates (which can
//! make a name read backwards) become `�` too. A tab becomes a space. What is left is
//! printable: an OSC 52 payload such as `ESC ] 52 ; c ; …  BEL` is shown as the harmless
//! text `␛]52;c;…�`, visibly tampered with.

use std::borrow::Cow;

/// What ESC is drawn as.
pub const ESC_MARK: char = '␛';
/// What any other control or bidi formatting character is drawn as.
pub const CONTROL_MARK: char = '\u{FFFD}';

/// `text` with nothing left that a terminal would interpret.
pub fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_replacing) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(replace).collect())
}

/// The last guard of every line Wharf writes to stdout or stderr: each control character
/// left but newline (C0, DEL, C1) as the JSON escape `\u00XX`. In a JSON document,
/// where serde_json leaves DEL and C1 raw inside strings, the value is unchanged; in a
/// report, the escape is inert text.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `clean`, then cut to at most `max` characters (with `…` when cut).
pub fn clean_cut(text: &str, max: usize) -> String {
    let cleaned = clean(text);
    if cleaned.chars().count() <= max {
        return cleaned.into_owned();
    }
    let mut out: String = cleaned.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `clean`, then cut to at most `max` characters keeping the end (with `…` first when
/// cut): a set's part names differ at the end (`part-00007.jsonl:12`).
pub fn clean_cut_left(text: &str, max: usize) -> String {
    let cleaned = clean(text);
    let count = cleaned.chars().count();
    if count <= max {
        return cleaned.into_owned();
    }
    let skip = count - max.saturating_sub(1);
    let mut out = String::from(if max > 0 { "…" } else { "" });
    out.extend(cleaned.chars().skip(skip));
    out
}

fn needs_replacing(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

fn replace(c: char) -> char {
    match c {
        '\u{1b}' => ESC_MARK,
        '\t' => ' ',
        c if needs_replacing(c) => CONTROL_MARK,
        c => c,
    }
}

/// The bidirectional embeddings, overrides, isolates and marks (Trojan Source).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_guard_escapes_controls_as_json_does() {
        assert_eq!(escape_controls("a\nb"), "a\nb");
        assert_eq!(
            escape_controls("x\u{9b}y\u{1b}\t\u{7f}"),
            "x\\u009by\\u001b\\u0009\\u007f"
        );
        let json = serde_json::json!({ "v": "a\u{9b}\u{85}b" }).to_string();
        let escaped = escape_controls(&json);
        let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back["v"], "a\u{9b}\u{85}b");
        assert!(!escaped.chars().any(char::is_control));
    }

    #[test]
    fn escape_sequences_become_visible_marks() {
        let osc52 = "a\u{1b}]52;c;ZXZpbA==\u{7}b";
        assert_eq!(clean(osc52), "a␛]52;c;ZXZpbA==\u{FFFD}b");
        assert_eq!(clean("x\u{9b}31m\u{7f}y"), "x\u{FFFD}31m\u{FFFD}y");
        assert_eq!(clean("tab\there\r\n"), "tab here\u{FFFD}\u{FFFD}");
        assert_eq!(clean("abc\u{202E}gpj.exe"), "abc\u{FFFD}gpj.exe");
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(clean("plain ünïcode ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn cut_counts_characters() {
        assert_eq!(clean_cut("abcdef", 4), "abc…");
        assert_eq!(clean_cut("ab", 4), "ab");
        assert_eq!(clean_cut("\u{1b}bcdef", 3), "␛b…");
        assert_eq!(clean_cut_left("part-00007.jsonl:12", 10), "….jsonl:12");
        assert_eq!(clean_cut_left("p\u{1b}:1", 10), "p␛:1");
        assert_eq!(clean_cut_left("abc", 0), "");
    }
}
