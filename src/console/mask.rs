//! [`masked_line`]: a raw input line as the console may show it, with the values of
//! prohibited fields replaced by [`HIDDEN`]. Never the value itself, on any screen.
//!
//! Where the line parses as a JSON object (the contract's own strict parser), each
//! top-level member whose decoded name is a prohibited name (case-insensitively, so
//! `"em\u0061il"` and `"Email"` count) has its value's bytes replaced, duplicates
//! included; a nested object or array that mentions a prohibited name (or holds a
//! `\u` escape that could spell one) is hidden whole. A line that does not parse (or was
//! cut because it is long) cannot be taken apart safely, so it is hidden whole when it
//! mentions a prohibited name or holds a `\u` escape, and shown otherwise.

use crate::contract::json::{self, Parsed};

/// What a hidden value is drawn as.
pub const HIDDEN: &str = "‹hidden›";
/// What a hidden line is drawn as.
pub const HIDDEN_LINE: &str =
    "‹line hidden: it does not parse and may carry a prohibited field's value›";

/// The line `bytes` with prohibited values hidden. `complete` is false when `bytes` is
/// only the start of a longer line. The result is not yet [`super::sanitize::clean`]ed.
pub fn masked_line(bytes: &[u8], complete: bool, prohibited: &[String]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let whole_utf8 = matches!(text, std::borrow::Cow::Borrowed(_));
    if complete
        && whole_utf8
        && let Parsed::Object(members) = json::parse_object(&text)
    {
        let base = text.as_ptr() as usize;
        let mut spans: Vec<(usize, usize)> = members
            .iter()
            .filter(|(name, raw)| {
                is_prohibited(name, prohibited)
                    || (raw.get().starts_with(['{', '[']) && mentions(raw.get(), prohibited))
            })
            .map(|(_, raw)| {
                let start = raw.get().as_ptr() as usize - base;
                (start, start + raw.get().len())
            })
            .collect();
        spans.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in spans {
            out.push_str(&text[at..start]);
            out.push_str(HIDDEN);
            at = end;
        }
        out.push_str(&text[at..]);
        return out;
    }
    if mentions(&text, prohibited) {
        HIDDEN_LINE.to_owned()
    } else {
        text.into_owned()
    }
}

fn is_prohibited(name: &str, prohibited: &[String]) -> bool {
    prohibited.iter().any(|p| p.eq_ignore_ascii_case(name))
}

/// Whether `text` might name a prohibited field: the name in any case, or a `\u` escape.
fn mentions(text: &str, prohibited: &[String]) -> bool {
    if text.contains("\\u") {
        return true;
    }
    let lower = text.to_ascii_lowercase();
    prohibited
        .iter()
        .any(|p| lower.contains(&p.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(line: &str) -> String {
        let prohibited = vec!["email".to_owned(), "payment_token".to_owned()];
        masked_line(line.as_bytes(), true, &prohibited)
    }

    #[test]
    fn prohibited_values_are_replaced_and_the_rest_kept() {
        assert_eq!(
            mask(r#"{"event_id":"x2","email":"a@example.com","status":"PAID"}"#),
            r#"{"event_id":"x2","email":‹hidden›,"status":"PAID"}"#
        );
        let twice = mask(r#"{"email":"a@x","email" : {"n":"b@x"}, "Email":null}"#);
        assert!(!twice.contains("a@x") && !twice.contains("b@x"), "{twice}");
        assert_eq!(twice.matches(HIDDEN).count(), 3, "{twice}");
    }

    #[test]
    fn escaped_and_nested_names_are_caught() {
        let escaped = mask(r#"{"em\u0061il":"a@example.com","order_id":1}"#);
        assert_eq!(escaped, r#"{"em\u0061il":‹hidden›,"order_id":1}"#);
        let nested = mask(r#"{"city":{"contact":{"email":"a@x"}},"order_id":1}"#);
        assert_eq!(nested, r#"{"city":‹hidden›,"order_id":1}"#);
    }

    #[test]
    fn unparsable_lines_are_hidden_when_they_could_hold_a_value() {
        assert_eq!(mask(r#"{"email":"a@x", oops"#), HIDDEN_LINE);
        assert_eq!(mask(r#"[{"email":"a@x"}]"#), HIDDEN_LINE);
        assert_eq!(mask("not json at all"), "not json at all");
        let cut = masked_line(br#"{"order_id":1,"email":"a@exa"#, false, &["email".into()]);
        assert_eq!(cut, HIDDEN_LINE);
        let bad_utf8 = masked_line(b"{\"email\":\"\xff\"}", true, &["email".into()]);
        assert_eq!(bad_utf8, HIDDEN_LINE);
    }
}
