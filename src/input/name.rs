//! [`name_of`]: an input's name, byte for byte, as text. The name keys the input's
//! checkpoint (`<name>.json`) and owns its dates, so two files must never share one: a
//! lossy conversion made `c\xff.jsonl` and `c\xfe.jsonl` one input that republished on
//! every run.
//!
//! A name that is UTF-8 and holds no U+FFFD is itself (so existing checkpoints still
//! match). Any other name is escaped with U+FFFD, the character a lossy conversion shows
//! in place of a bad byte: a byte that is not UTF-8 becomes `�` and two upper-case hex
//! digits (`c\xff.jsonl` → `c�FF.jsonl`), and a U+FFFD of the name becomes `��`. Every
//! `�` of an escaped name starts an escape, and names left as they are hold none, so no
//! two names get one text.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// The escape mark; see the module's docs.
const MARK: char = '\u{FFFD}';

/// The text that names the file named `name` (injective, see the module's docs).
pub fn name_of(name: &OsStr) -> String {
    if let Some(text) = name.to_str()
        && !text.contains(MARK)
    {
        return text.to_owned();
    }
    let mut out = String::with_capacity(name.len() + 8);
    for chunk in name.as_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            out.push(c);
            if c == MARK {
                out.push(MARK);
            }
        }
        for byte in chunk.invalid() {
            out.push(MARK);
            out.push_str(&format!("{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn of(bytes: &[u8]) -> String {
        name_of(OsStr::from_bytes(bytes))
    }

    #[test]
    fn utf8_names_keep_their_form_and_others_are_escaped() {
        assert_eq!(of(b"orders 2024.jsonl"), "orders 2024.jsonl");
        assert_eq!(of("ünï ✓.jsonl".as_bytes()), "ünï ✓.jsonl");
        assert_eq!(of(b"c\xff.jsonl"), "c\u{FFFD}FF.jsonl");
        assert_eq!(of(b"c\xfe.jsonl"), "c\u{FFFD}FE.jsonl");
        assert_eq!(
            of("c\u{FFFD}FF.jsonl".as_bytes()),
            "c\u{FFFD}\u{FFFD}FF.jsonl"
        );
    }

    proptest! {
        /// Names biased towards the escape's own pieces: a bad byte, U+FFFD, hex digits.
        #[test]
        fn names_never_share_a_text(
            a in prop::collection::vec(prop::sample::select(
                vec![0xffu8, 0xfe, 0xef, 0xbf, 0xbd, b'F', b'E', b'0', b'a', 0xc3, 0xa9]), 0..10),
            b in prop::collection::vec(prop::sample::select(
                vec![0xffu8, 0xfe, 0xef, 0xbf, 0xbd, b'F', b'E', b'0', b'a', 0xc3, 0xa9]), 0..10),
        ) {
            prop_assert_eq!(of(&a) == of(&b), a == b);
        }

        #[test]
        fn arbitrary_names_never_share_a_text(
            a in prop::collection::vec(any::<u8>(), 0..16),
            b in prop::collection::vec(any::<u8>(), 0..16),
        ) {
            prop_assert_eq!(of(&a) == of(&b), a == b);
        }
    }
}
