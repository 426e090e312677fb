//! A compact byte encoding of one accepted record, for the hot path: the classifying
//! threads write records into one buffer per chunk instead of one allocation per line,
//! and the ranking keeps each key's best record as a few dozen bytes.
//!
//! Fields follow in declared order, each a tag byte and its payload:
//! `0` null · `1` int (i64 LE) · `2` string (u32 LE length, UTF-8 bytes) ·
//! `3` timestamp (i64 LE seconds, u32 LE nanoseconds) · `4` float (f64 bits, u64 LE) ·
//! `5` false · `6` true.
//!
//! The encoding is canonical: two records are equal exactly when their encodings are, and
//! two values are equal exactly when their field encodings are. So a record's fingerprint
//! is a hash of its bytes, and keys and event ids compare as bytes.

use compact_str::CompactString;

use super::classify::{Record, Value};
use super::timestamp::Instant;

const NULL: u8 = 0;
const INT: u8 = 1;
const STR: u8 = 2;
const TS: u8 = 3;
const FLOAT: u8 = 4;
const FALSE: u8 = 5;
const TRUE: u8 = 6;

/// Appends `value`'s encoding to `out`.
pub fn push_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(NULL),
        Value::Int(n) => push_int(out, *n),
        Value::Str(s) => push_str(out, s.as_bytes()),
        Value::Ts(t) => push_ts(out, *t),
        Value::Float(bits) => {
            out.push(FLOAT);
            out.extend_from_slice(&bits.to_le_bytes());
        }
        Value::Bool(b) => out.push(if *b { TRUE } else { FALSE }),
    }
}

pub fn push_null(out: &mut Vec<u8>) {
    out.push(NULL);
}

pub fn push_int(out: &mut Vec<u8>, n: i64) {
    out.push(INT);
    out.extend_from_slice(&n.to_le_bytes());
}

/// `text` must be UTF-8 (it is checked again only when decoded).
pub fn push_str(out: &mut Vec<u8>, text: &[u8]) {
    out.push(STR);
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text);
}

pub fn push_ts(out: &mut Vec<u8>, instant: Instant) {
    out.push(TS);
    out.extend_from_slice(&instant.secs().to_le_bytes());
    out.extend_from_slice(&instant.nanos().to_le_bytes());
}

/// Appends the encoding of every value of `record`.
pub fn push_record(out: &mut Vec<u8>, record: &Record) {
    record.iter().for_each(|v| push_value(out, v));
}

/// The encoded length of the field that starts `bytes`.
pub fn field_len(bytes: &[u8]) -> usize {
    match bytes[0] {
        INT | FLOAT => 9,
        STR => 5 + u32::from_le_bytes(array(&bytes[1..])) as usize,
        TS => 13,
        _ => 1,
    }
}

/// The offset just past the first `fields` fields of the encoded record that starts
/// `bytes` (which may run on past it): with all its fields, the record's length.
pub fn record_len(bytes: &[u8], fields: usize) -> usize {
    (0..fields).fold(0, |at, _| at + field_len(&bytes[at..]))
}

/// Bytes `start..end` of field `index` of the encoded record that starts `bytes`.
pub fn field_range(bytes: &[u8], index: usize) -> (usize, usize) {
    let start = record_len(bytes, index);
    (start, start + field_len(&bytes[start..]))
}

/// The start offset of each field of an encoded record, and its end, into `starts`
/// (`fields + 1` offsets).
pub fn offsets(bytes: &[u8], fields: usize, starts: &mut Vec<u32>) {
    starts.clear();
    let mut at = 0;
    for _ in 0..fields {
        starts.push(at as u32);
        at += field_len(&bytes[at..]);
    }
    starts.push(at as u32);
}

/// The value an encoded field holds.
pub fn decode_value(field: &[u8]) -> Value {
    match field[0] {
        INT => Value::Int(i64::from_le_bytes(array(&field[1..]))),
        // Written from checked UTF-8: from_utf8 gives from_utf8_lossy's answer at a
        // fraction of its cost.
        STR => Value::Str(match std::str::from_utf8(&field[5..]) {
            Ok(text) => CompactString::new(text),
            Err(_) => CompactString::from_utf8_lossy(&field[5..]),
        }),
        TS => Value::Ts(Instant::from_parts(
            i64::from_le_bytes(array(&field[1..])),
            u32::from_le_bytes(array(&field[9..])),
        )),
        FLOAT => Value::Float(u64::from_le_bytes(array(&field[1..]))),
        FALSE => Value::Bool(false),
        TRUE => Value::Bool(true),
        _ => Value::Null,
    }
}

/// The integer an encoded field holds, if it is an int.
pub fn int(field: &[u8]) -> Option<i64> {
    (field[0] == INT).then(|| i64::from_le_bytes(array(&field[1..])))
}

/// The float an encoded field holds, if it is a float.
pub fn float(field: &[u8]) -> Option<f64> {
    (field[0] == FLOAT).then(|| f64::from_bits(u64::from_le_bytes(array(&field[1..]))))
}

/// The boolean an encoded field holds, if it is a bool.
pub fn boolean(field: &[u8]) -> Option<bool> {
    match field[0] {
        TRUE => Some(true),
        FALSE => Some(false),
        _ => None,
    }
}

/// The text an encoded field holds, if it is a string.
pub fn str_bytes(field: &[u8]) -> Option<&[u8]> {
    (field[0] == STR).then(|| &field[5..])
}

/// Whether an encoded field is null (absent).
pub fn is_null(field: &[u8]) -> bool {
    field[0] == NULL
}

/// The instant an encoded field holds, if it is a timestamp.
pub fn instant(field: &[u8]) -> Option<Instant> {
    (field[0] == TS).then(|| {
        Instant::from_parts(
            i64::from_le_bytes(array(&field[1..])),
            u32::from_le_bytes(array(&field[9..])),
        )
    })
}

/// The record an encoding of `fields` values holds.
pub fn decode(bytes: &[u8], fields: usize) -> Record {
    let mut at = 0;
    (0..fields)
        .map(|_| {
            let len = field_len(&bytes[at..]);
            let value = decode_value(&bytes[at..at + len]);
            at += len;
            value
        })
        .collect()
}

fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::Int),
            any::<f64>().prop_map(Value::float),
            any::<bool>().prop_map(Value::Bool),
            ".{0,40}".prop_map(|s| Value::Str(s.into())),
            (any::<i64>(), 0u32..1_000_000_000)
                .prop_map(|(s, n)| Value::Ts(Instant::from_parts(s, n))),
        ]
    }

    proptest! {
        #[test]
        fn records_round_trip_and_offsets_find_every_field(values in prop::collection::vec(value(), 0..12)) {
            let record: Record = values.into_iter().collect();
            let mut bytes = Vec::new();
            push_record(&mut bytes, &record);
            prop_assert_eq!(&decode(&bytes, record.len()), &record);
            let mut starts = Vec::new();
            offsets(&bytes, record.len(), &mut starts);
            prop_assert_eq!(starts.last().copied(), Some(bytes.len() as u32));
            for (i, v) in record.iter().enumerate() {
                let field = &bytes[starts[i] as usize..starts[i + 1] as usize];
                prop_assert_eq!(&decode_value(field), v);
                prop_assert_eq!(int(field), v.int());
                prop_assert_eq!(instant(field), v.instant());
                prop_assert_eq!(is_null(field), *v == Value::Null);
                let text = match v { Value::Str(s) => Some(s.as_bytes()), _ => None };
                prop_assert_eq!(str_bytes(field), text);
            }
        }

        #[test]
        fn equal_encodings_are_equal_values(a in value(), b in value()) {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            push_value(&mut x, &a);
            push_value(&mut y, &b);
            prop_assert_eq!(x == y, a == b);
        }
    }
}
