//! The common case of [`classify`](fn@super::classify), in one pass and without allocating:
//! a line that is one flat object of declared fields, each of its declared type, with no
//! escapes. [`accept`] either proves the line accepted and appends its [`row`] encoding,
//! or declines, and the caller classifies the line the full way, which names the reason.
//!
//! Declining is always safe; accepting must agree with `classify` exactly (same values),
//! which a differential property test checks on generated and mutated lines.

use super::row;
use super::rules::FieldRules;
use super::schema::{Field, FieldType, Schema};
use super::timestamp::{self, DayCache, Instant};

/// One declared field's value as the fast path found it.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Absent,
    Null,
    Int(i64),
    /// A string's body: `start..end` in the line, no escapes, valid UTF-8.
    Str(u32, u32),
    Ts(Instant),
}

/// Memory [`accept`] reuses from line to line: one slot per declared field, and the
/// last date a timestamp had.
#[derive(Debug, Default)]
pub struct Slots {
    slots: Vec<Slot>,
    days: DayCache,
}

/// Appends the row encoding of `line` to `out` and returns `true` when the line is
/// accepted by the fast path; returns `false` (leaving `out` as it was) otherwise. On
/// `true`, `starts` holds where each field's encoding starts in the record, then its end
/// (what [`row::offsets`] would find).
pub fn accept(
    line: &[u8],
    schema: &Schema,
    slots: &mut Slots,
    out: &mut Vec<u8>,
    starts: &mut Vec<u32>,
) -> bool {
    let Slots { slots, days } = slots;
    slots.clear();
    slots.resize(schema.fields.len(), Slot::Absent);
    if scan(line, schema, slots, days).is_none() {
        return false;
    }
    for (field, slot) in schema.fields.iter().zip(slots.iter()) {
        if field.required && matches!(slot, Slot::Absent | Slot::Null) {
            return false;
        }
        // A broken value rule (§1.2): the full path names the rule and its field.
        if field
            .rules
            .as_deref()
            .is_some_and(|r| !holds(r, *slot, line))
        {
            return false;
        }
    }
    // At most 13 bytes a field beside the strings' bytes, which are the line's.
    out.reserve(line.len() + 13 * slots.len());
    let base = out.len();
    starts.clear();
    for slot in slots.iter() {
        starts.push((out.len() - base) as u32);
        match *slot {
            Slot::Absent | Slot::Null => row::push_null(out),
            Slot::Int(n) => row::push_int(out, n),
            Slot::Str(start, end) => row::push_str(out, &line[start as usize..end as usize]),
            Slot::Ts(instant) => row::push_ts(out, instant),
        }
    }
    starts.push((out.len() - base) as u32);
    true
}

/// Whether `slot` keeps `rules` (a null or absent value breaks none).
fn holds(rules: &FieldRules, slot: Slot, line: &[u8]) -> bool {
    match slot {
        Slot::Absent | Slot::Null => true,
        Slot::Int(n) => rules.allows_int(n) && rules.int_in_range(n),
        Slot::Str(start, end) => rules.allows_str(&line[start as usize..end as usize]),
        Slot::Ts(instant) => rules.instant_in_range(instant),
    }
}

/// Fills `slots` from the line's members; `None` declines the line.
fn scan(line: &[u8], schema: &Schema, slots: &mut [Slot], days: &mut DayCache) -> Option<()> {
    let mut at = skip_ws(line, 0);
    if line.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_ws(line, at + 1);
    if line.get(at) == Some(&b'}') {
        return end(line, at + 1);
    }
    let mut guess = 0;
    loop {
        let (index, value_at) = match compact_member(line, at, schema, guess) {
            Some(found) => found,
            None => {
                let (index, end_of_key) = member_name(line, at, schema, guess)?;
                let colon = skip_ws(line, end_of_key + 1);
                if line.get(colon) != Some(&b':') {
                    return None;
                }
                (index, colon + 1)
            }
        };
        if !matches!(slots[index], Slot::Absent) || Some(index) == schema.rescue {
            // A duplicate key, or a member named as the rescue column (itself rescued):
            // the full path classifies it.
            return None;
        }
        guess = index + 1;
        let at_value = skip_ws(line, value_at);
        let next = value(
            line,
            at_value,
            schema.fields[index].ty,
            &mut slots[index],
            days,
        )?;
        // Compact JSON puts the separator right after the value.
        let separator = match line.get(next) {
            Some(b',' | b'}') => next,
            _ => skip_ws(line, next),
        };
        match line.get(separator)? {
            b',' => at = skip_ws(line, separator + 1),
            b'}' => return end(line, separator + 1),
            _ => return None,
        }
    }
}

/// The guessed field and where its value may start, when its member starts at `at`
/// exactly as compact JSON writes it (`"name":`): one compare, where reading the name,
/// then the colon and the spaces around it took several steps.
#[inline(always)]
fn compact_member(line: &[u8], at: usize, schema: &Schema, guess: usize) -> Option<(usize, usize)> {
    let member = schema.fields.get(guess)?.compact_member()?;
    let end = at + member.len();
    line.get(at..end)
        .is_some_and(|bytes| same(bytes, member))
        .then_some((guess, end))
}

/// Only whitespace may follow the closing brace.
fn end(line: &[u8], at: usize) -> Option<()> {
    (skip_ws(line, at) == line.len()).then_some(())
}

fn skip_ws(line: &[u8], mut at: usize) -> usize {
    while matches!(line.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The declared field named by the string whose quote is at `at`, and the offset of its
/// closing quote. Field `guess` is tried first, and byte for byte when its name is plain:
/// lines tend to keep the declared order, and a plain name between quotes is exactly the
/// string [`string_body`] would read.
fn member_name(line: &[u8], at: usize, schema: &Schema, guess: usize) -> Option<(usize, usize)> {
    if let Some(name) = schema.fields.get(guess).and_then(Field::plain_name) {
        let end = at + 1 + name.len();
        if line.get(at) == Some(&b'"')
            && line.get(at + 1..end).is_some_and(|bytes| same(bytes, name))
            && line.get(end) == Some(&b'"')
        {
            return Some((guess, end));
        }
    }
    let (start, end) = string_body(line, at)?;
    let name = &line[start..end];
    let index = schema
        .fields
        .iter()
        .position(|f| same(f.name.as_bytes(), name))?;
    Some((index, end))
}

/// `a == b`, without a call to `memcmp` for the short slices names are (the call cost
/// more than the compare): two overlapping loads cover 4 to 16 bytes.
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    let u32_at = |s: &[u8], i: usize| {
        s.get(i..i + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    let u64_at = |s: &[u8], i: usize| {
        s.get(i..i + 8)
            .and_then(|w| w.try_into().ok())
            .map(u64::from_le_bytes)
    };
    match len {
        0..4 => a.iter().zip(b).all(|(x, y)| x == y),
        4..8 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, len - 4) == u32_at(b, len - 4),
        8..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, len - 8) == u64_at(b, len - 8),
        _ => a == b,
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` (little-endian) that ends a plain string body: a
/// quote, a backslash or a control character. Exact at the lowest such byte; bytes above
/// it may be flagged falsely (a borrow), so only the lowest is used.
fn stops(word: u64) -> u64 {
    let below = |n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGH_BITS;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH_BITS;
    zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\'))) | below(0x20)
}

/// The body of the string whose quote is at `at`: `(start, end)` with `end` on the
/// closing quote. Declines escapes and raw control characters; checks UTF-8. Eight bytes
/// a step ([`stops`]), then byte by byte for the last few of the line.
#[inline(always)]
fn string_body(line: &[u8], at: usize) -> Option<(usize, usize)> {
    if line.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    let mut high = 0u64;
    let mut i = start;
    while let Some(bytes) = line.get(i..i + 8) {
        let word = u64::from_le_bytes(bytes.try_into().ok()?);
        let found = stops(word);
        if found != 0 {
            let before = found.trailing_zeros() as usize / 8;
            high |= word & ((1u64 << (before * 8)) - 1);
            i += before;
            return body_end(line, start, i, high);
        }
        high |= word;
        i += 8;
    }
    loop {
        let b = *line.get(i)?;
        if b == b'"' || b == b'\\' || b < 0x20 {
            return body_end(line, start, i, high);
        }
        high |= u64::from(b);
        i += 1;
    }
}

/// A body `start..end` that stopped at `line[end]`: a string only if that is its closing
/// quote; `high` has the high bits of its bytes, so UTF-8 is checked only when needed.
#[inline(always)]
fn body_end(line: &[u8], start: usize, end: usize, high: u64) -> Option<(usize, usize)> {
    if line[end] != b'"' {
        return None;
    }
    if high & HIGH_BITS != 0 && std::str::from_utf8(&line[start..end]).is_err() {
        return None;
    }
    Some((start, end))
}

/// Reads the value at `at` for a field of type `ty` into `slot`; returns the offset just
/// past it. (Returned with the offset, the slot would go through memory and stall store
/// forwarding on the fast path's hottest instruction.)
#[inline(always)]
fn value(
    line: &[u8],
    at: usize,
    ty: FieldType,
    slot: &mut Slot,
    days: &mut DayCache,
) -> Option<usize> {
    let (value, next) = match (line.get(at)?, ty) {
        (b'n', _) => (line.get(at..at + 4)? == b"null").then_some((Slot::Null, at + 4))?,
        (b'-' | b'0'..=b'9', FieldType::Int) => integer(line, at)?,
        (b'"', FieldType::String) => {
            let (start, end) = string_body(line, at)?;
            (Slot::Str(start as u32, end as u32), end + 1)
        }
        (b'"', FieldType::Timestamp) => {
            let (start, end) = string_body(line, at)?;
            let instant = timestamp::parse_bytes_cached(&line[start..end], days).ok()?;
            (Slot::Ts(instant), end + 1)
        }
        _ => return None,
    };
    *slot = value;
    Some(next)
}

/// A JSON integer (`-?(0|[1-9][0-9]*)`, no fraction or exponent) that fits i64.
#[inline(always)]
fn integer(line: &[u8], at: usize) -> Option<(Slot, usize)> {
    let negative = line[at] == b'-';
    let first = at + usize::from(negative);
    let mut i = first;
    let mut magnitude: u64 = 0;
    while let Some(&d @ b'0'..=b'9') = line.get(i) {
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(d - b'0'))?;
        i += 1;
    }
    let digits = i - first;
    if digits == 0 || (digits > 1 && line[first] == b'0') {
        return None;
    }
    if matches!(line.get(i), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    let n = if negative {
        0i64.checked_sub_unsigned(magnitude)?
    } else {
        i64::try_from(magnitude).ok()?
    };
    Some((Slot::Int(n), i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{LineBytes, Outcome, classify};
    use proptest::prelude::*;

    fn schema() -> Schema {
        crate::config::fixtures::orders().schema
    }

    /// The fast path's verdict and encoding, or `None` when it declines.
    fn fast(line: &[u8], schema: &Schema) -> Option<Vec<u8>> {
        let mut out = vec![0xAA]; // what was there before must stay
        let mut starts = vec![7];
        let accepted = accept(line, schema, &mut Slots::default(), &mut out, &mut starts);
        assert!(
            accepted || out == [0xAA],
            "a declined line appended nothing"
        );
        let record = out.split_off(1);
        if accepted {
            let mut offsets = Vec::new();
            row::offsets(&record, schema.fields.len(), &mut offsets);
            assert_eq!(starts, offsets, "the field offsets of {record:?}");
        }
        accepted.then_some(record)
    }

    /// The full path's encoding of an accepted line.
    fn full(line: &[u8], schema: &Schema) -> Option<Vec<u8>> {
        match classify(LineBytes::Kept(line), schema) {
            Outcome::Accepted(record) => {
                let mut out = Vec::new();
                row::push_record(&mut out, &record);
                Some(out)
            }
            _ => None,
        }
    }

    /// A member `"name":value`, the value valid four times in five.
    fn member(
        name: &'static str,
        valid: &'static str,
        odd: &'static [&'static str],
    ) -> BoxedStrategy<String> {
        let odd = prop::sample::select(odd).prop_map(str::to_owned);
        prop_oneof![4 => valid.prop_map(|v| v), 1 => odd]
            .prop_map(move |value| format!(r#""{name}":{value}"#))
            .boxed()
    }

    /// Order-event lines, mostly accepted: every declared field (optional ones sometimes
    /// left out), odd values one time in five, shuffled, odd spacing, sometimes an extra
    /// or repeated member or trailing text.
    fn line() -> impl Strategy<Value = String> {
        let members = (
            member(
                "event_id",
                r#""e[0-9a-z]{1,6}""#,
                &[
                    r#""é\n""#,
                    "12",
                    "\"a\u{1}\"",
                    "null",
                    r#""a\"b""#,
                    r#""€""#,
                ],
            ),
            member(
                "order_id",
                "-?[1-9][0-9]{0,18}",
                &[
                    "-0",
                    "0",
                    "01",
                    "00",
                    "1.0",
                    "1e3",
                    r#""7""#,
                    "null",
                    "9223372036854775807",
                    "9223372036854775808",
                    "-9223372036854775808",
                    "-9223372036854775809",
                    "-",
                    "1x",
                ],
            ),
            member(
                "status",
                r#""[a-z]{0,8}""#,
                &[
                    "null",
                    "{}",
                    "[1]",
                    r#""ü€""#,
                    r#""a\"b""#,
                    "true",
                    r#""\ud800""#,
                    "nul",
                    "\"\u{7f}\"",
                ],
            ),
            member(
                "updated_at",
                r#""20[0-9]{2}-0[1-9]-[0-2][1-9][T ][01][0-9]:[0-5][0-9]:[0-5][0-9](\.[0-9]{1,12})?(Z|[+-]0[0-9]:[0-5][0-9])""#,
                &[
                    r#""2024-03-01T10:00:00""#,
                    r#""2024-02-30T10:00:00Z""#,
                    r#""2016-12-31T23:59:60Z""#,
                    r#""2024-03-01T23:59:60Z""#,
                    r#""2024-03-01t10:00:00z""#,
                    "1709287200",
                    r#""2024-03-01T10:00:00.Z""#,
                    r#""2024-03-01T10:00:00+24:00""#,
                ],
            ),
            prop::option::of(member(
                "seq",
                "-?[0-9]{1,3}",
                &["null", r#""1""#, "1.5", "99999999999999999999"],
            )),
            prop::option::of(member(
                "city",
                r#""[A-Za-z ]{0,10}""#,
                &["null", "1", r#""Köln""#],
            )),
            prop::option::of(prop::sample::select(
                &[
                    r#""email":"x""#,
                    r#""other":1"#,
                    r#""_rescued":"x""#,
                    r#""other":{"a": [1, "b"]}"#,
                    r#""st\u0061tus":"a""#,
                    r#""status":"again""#,
                    r#""seq":1"#,
                ][..],
            )),
        );
        (
            members,
            "[ \t]{0,2}",
            prop_oneof![8 => Just(""), 1 => Just(" "), 1 => Just("x"), 1 => Just(","), 1 => Just("}")],
        )
            .prop_flat_map(|((e, o, s, u, q, c, extra), space, tail)| {
                let mut all = vec![e, o, s, u];
                all.extend(q);
                all.extend(c);
                all.extend(extra.map(str::to_owned));
                (Just(all).prop_shuffle(), Just(space), Just(tail))
            })
            .prop_map(|(members, space, tail)| {
                format!("{space}{{{}}}{space}{tail}", members.join(&format!(",{space}")))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn the_fast_path_accepts_exactly_what_classify_accepts(line in line()) {
            let schema = schema();
            let full = full(line.as_bytes(), &schema);
            match fast(line.as_bytes(), &schema) {
                Some(encoded) => prop_assert_eq!(Some(encoded), full, "{}", line),
                // Declining is only allowed where classify's full parse is needed: a
                // line it accepts has no escapes in the generator, so it must be fast.
                None => prop_assert!(full.is_none() || line.contains('\\'), "declined {}", line),
            }
        }

        /// The same with value rules (§1.2) on four fields: the fast path declines
        /// every line breaking one, and accepts the rest exactly as classify does.
        #[test]
        fn with_value_rules_the_fast_path_agrees_with_classify(line in line()) {
            let schema = crate::config::fixtures::ruled().schema;
            let full = full(line.as_bytes(), &schema);
            match fast(line.as_bytes(), &schema) {
                Some(encoded) => prop_assert_eq!(Some(encoded), full, "{}", line),
                None => prop_assert!(full.is_none() || line.contains('\\'), "declined {}", line),
            }
        }

        /// The same keeping unknown fields (§1.1): a line with one is classified the
        /// full way, which rescues it; the rest agree.
        #[test]
        fn rescuing_the_fast_path_agrees_with_classify(line in line()) {
            let schema = crate::config::fixtures::rescuing().schema;
            let full = full(line.as_bytes(), &schema);
            if let Some(encoded) = fast(line.as_bytes(), &schema) {
                prop_assert_eq!(Some(encoded), full, "{}", line);
            }
        }

        #[test]
        fn any_bytes_never_panic_or_disagree(bytes in prop::collection::vec(any::<u8>(), 0..120)) {
            let schema = schema();
            if let Some(encoded) = fast(&bytes, &schema) {
                prop_assert_eq!(Some(encoded), full(&bytes, &schema));
            }
        }
    }

    #[test]
    fn the_common_shapes_take_the_fast_path() {
        let schema = schema();
        for line in [
            r#"{"event_id":"e1","order_id":7,"status":"paid","updated_at":"2024-03-01T10:00:00Z"}"#,
            r#"{"event_id":"e1","order_id":-7,"status":"","updated_at":"2024-03-01T10:00:00.123456789+05:30","seq":3,"city":"Köln"}"#,
            r#" { "city" : null , "updated_at":"2024-03-01 10:00:00z","status":"a","order_id":0,"event_id":"e" } "#,
            r#"{"event_id":"e1","order_id":-9223372036854775808,"status":"s","updated_at":"2016-12-31T23:59:60Z","seq":9223372036854775807}"#,
        ] {
            let encoded = fast(line.as_bytes(), &schema);
            assert!(encoded.is_some(), "fast path declined {line}");
            assert_eq!(encoded, full(line.as_bytes(), &schema), "{line}");
        }
    }

    /// A declared name that JSON cannot spell as itself is never matched byte for byte:
    /// written raw it is not that name (or not JSON), escaped it is.
    #[test]
    fn names_with_quotes_or_backslashes_are_matched_as_json_reads_them() {
        for name in ["st\"atus", "st\\atus", "st\tatus"] {
            let mut schema = schema();
            let index = schema.index_of("status").unwrap();
            schema.fields[index] = Field::new(name.to_owned(), FieldType::String, true);
            let escaped = serde_json::to_string(name).unwrap();
            let raw = format!("\"{name}\"");
            for member in [escaped, raw] {
                let line = format!(
                    r#"{{"event_id":"e1","order_id":7,{member}:"paid","updated_at":"2024-03-01T10:00:00Z"}}"#
                );
                // Declining is always allowed (the escaped name needs the full path);
                // accepting must agree with it.
                if let Some(encoded) = fast(line.as_bytes(), &schema) {
                    assert_eq!(Some(encoded), full(line.as_bytes(), &schema), "{line}");
                }
            }
        }
    }

    #[test]
    fn same_compares_every_byte_at_every_length() {
        for len in 0..40 {
            let a: Vec<u8> = (0..len as u8).map(|i| b'a' + i % 26).collect();
            assert!(same(&a, &a.clone()));
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same(&a, &b), "{len} {at}");
            }
            assert!(!same(&a, &a[..len.saturating_sub(1)]) || len == 0);
        }
    }

    /// Strings of every length around the eight-byte steps, with a stop at every offset.
    #[test]
    fn string_bodies_stop_at_the_first_quote_backslash_or_control_byte() {
        for len in 0..24 {
            let body = "a".repeat(len);
            let line = format!("\"{body}\"x");
            assert_eq!(
                string_body(line.as_bytes(), 0),
                Some((1, 1 + len)),
                "{line}"
            );
            for stop in ["\\", "\u{1}", "\u{1f}", "\n"] {
                for at in 0..len {
                    let line = format!("\"{}{stop}{}\"", &body[..at], &body[at..]);
                    assert_eq!(string_body(line.as_bytes(), 0), None, "{line:?}");
                }
            }
            for at in 0..len {
                let line = format!("\"{}é\u{7f}{}\"", &body[..at], &body[at..]);
                assert_eq!(string_body(line.as_bytes(), 0), Some((1, line.len() - 1)));
                let mut bad = line.clone().into_bytes();
                bad[1 + at] = 0xC3; // a lead byte before an ASCII one
                bad[2 + at] = b'a';
                assert_eq!(string_body(&bad, 0), None, "{bad:?}");
            }
        }
        assert_eq!(string_body(b"\"abcdefghij", 0), None, "unterminated");
    }

    #[test]
    fn everything_the_contract_rejects_is_declined() {
        let schema = schema();
        for line in [
            r#"{"event_id":"e1","order_id":7,"status":"paid"}"#,
            r#"{"event_id":"e1","order_id":7,"status":"paid","updated_at":"2024-03-01T10:00:00"}"#,
            r#"{"event_id":"e1","order_id":7,"order_id":7,"status":"paid","updated_at":"2024-03-01T10:00:00Z"}"#,
            r#"{"event_id":"e1","order_id":9223372036854775808,"status":"p","updated_at":"2024-03-01T10:00:00Z"}"#,
            r#"{"event_id":"e1","order_id":7,"status":"p","updated_at":"2024-03-01T10:00:00Z","email":"x"}"#,
            r#"{"event_id":"e1","order_id":7,"status":"p","updated_at":"2024-03-01T10:00:00Z"} x"#,
            r#"{"event_id":"e1","order_id":7,"status":"p","updated_at":"2024-03-01T10:00:00Z",}"#,
            "{\"event_id\":\"e\u{1}\",\"order_id\":7,\"status\":\"p\",\"updated_at\":\"2024-03-01T10:00:00Z\"}",
            "",
            "   ",
        ] {
            assert_eq!(fast(line.as_bytes(), &schema), None, "{line}");
        }
        let invalid_utf8 = b"{\"event_id\":\"\xff\",\"order_id\":7,\"status\":\"p\",\"updated_at\":\"2024-03-01T10:00:00Z\"}";
        assert_eq!(fast(invalid_utf8, &schema), None);
    }
}
