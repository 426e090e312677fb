//! PURE. The landing contract's line rules (CONTRACT.md §1): one line in, one
//! [`Outcome`] out. No file system, no clock, no environment.
//!
//! - [`timestamp`]: RFC 3339 → exact [`Instant`]; UTC [`Date`]s.
//! - [`json`]: strict parsing that keeps duplicate keys.
//! - [`classify`]: the checks in the contract's order.
//! - [`fast`]: the common accepted shape in one pass, agreeing with `classify`.
//! - [`row`]: the compact encoding of accepted records for the hot path.
//! - [`schema`]: the declared fields and their roles.
//! - [`rules`]: value rules on declared fields (§1.2).
//! - [`added`]: the columns an input adds under `unknown_fields = "add"` (§1.1).

pub mod added;
pub mod classify;
pub mod fast;
pub mod json;
pub mod row;
pub mod rules;
pub mod schema;
pub mod timestamp;

pub use classify::{LineBytes, LineIssue, Outcome, Record, Value, classify};
pub use schema::{Field, FieldType, Schema, UnknownFields};
pub use timestamp::{Date, Instant};

use serde::{Deserialize, Serialize};

/// Why a line is not accepted (rejects) or why it refuses its whole file (breaches).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineReason {
    LineTooLong,
    InvalidUtf8,
    MalformedJson,
    NotAnObject,
    ProhibitedField,
    UnknownField,
    DuplicateKey,
    MissingField,
    BadType,
    TimestampWithoutOffset,
    BadTimestamp,
    /// A value outside its field's `one_of` (§1.2).
    ValueNotAllowed,
    /// A value below its field's `min` or above its `max` (§1.2).
    OutOfRange,
    Conflict,
}

impl LineReason {
    /// Every reason, in the order above.
    pub const ALL: [LineReason; 14] = [
        LineReason::LineTooLong,
        LineReason::InvalidUtf8,
        LineReason::MalformedJson,
        LineReason::NotAnObject,
        LineReason::ProhibitedField,
        LineReason::UnknownField,
        LineReason::DuplicateKey,
        LineReason::MissingField,
        LineReason::BadType,
        LineReason::TimestampWithoutOffset,
        LineReason::BadTimestamp,
        LineReason::ValueNotAllowed,
        LineReason::OutOfRange,
        LineReason::Conflict,
    ];

    /// The reason whose code is `code`.
    pub fn from_code(code: &str) -> Option<LineReason> {
        LineReason::ALL.into_iter().find(|r| r.code() == code)
    }

    /// The contract's reason code.
    pub fn code(self) -> &'static str {
        match self {
            LineReason::LineTooLong => "line_too_long",
            LineReason::InvalidUtf8 => "invalid_utf8",
            LineReason::MalformedJson => "malformed_json",
            LineReason::NotAnObject => "not_an_object",
            LineReason::ProhibitedField => "prohibited_field",
            LineReason::UnknownField => "unknown_field",
            LineReason::DuplicateKey => "duplicate_key",
            LineReason::MissingField => "missing_field",
            LineReason::BadType => "bad_type",
            LineReason::TimestampWithoutOffset => "timestamp_without_offset",
            LineReason::BadTimestamp => "bad_timestamp",
            LineReason::ValueNotAllowed => "value_not_allowed",
            LineReason::OutOfRange => "out_of_range",
            LineReason::Conflict => "conflict",
        }
    }
}

impl std::fmt::Display for LineReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}
