//! PURE. Value rules on declared fields (CONTRACT.md §1.2): `one_of` and `min`/`max`,
//! each broken line a reject or a file breach. [`FieldRules`] holds one field's rules;
//! a timestamp bound relative to the run's start (`"now+10m"`) is a [`Bound::FromStart`]
//! until [`FieldRules::at`] is given that start: this module never reads the clock.
//!
//! A field has at most two rules, [`Rule::OneOf`] and [`Rule::Range`] (its `min` and
//! `max` together); counts, shares and reports name them `field.one_of` and
//! `field.range`.

use super::LineReason;
use super::classify::Value;
use super::timestamp::{self, Instant};

/// One bound of a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Int(i64),
    At(Instant),
    /// Seconds from the run's start, unresolved ([`FieldRules::at`] resolves it).
    FromStart(i64),
}

/// The values a field may hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OneOf {
    Strs(Vec<String>),
    Ints(Vec<i64>),
}

/// One field's value rules.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldRules {
    pub one_of: Option<OneOf>,
    pub min: Option<Bound>,
    pub max: Option<Bound>,
    /// `on_violation = "breach"`: a broken rule refuses the file instead of the line.
    pub breach: bool,
}

/// A rule of one field, as counts and reports name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    OneOf,
    /// `min` and `max` together.
    Range,
}

impl Rule {
    /// The line reason a broken rule carries.
    pub fn reason(self) -> LineReason {
        match self {
            Rule::OneOf => LineReason::ValueNotAllowed,
            Rule::Range => LineReason::OutOfRange,
        }
    }

    /// The rule a line reason names, for a reason that is a broken rule.
    pub fn of_reason(reason: LineReason) -> Option<Rule> {
        match reason {
            LineReason::ValueNotAllowed => Some(Rule::OneOf),
            LineReason::OutOfRange => Some(Rule::Range),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Rule::OneOf => "one_of",
            Rule::Range => "range",
        }
    }
}

/// `field.rule`, how counts, shares and reports name a rule.
pub fn rule_name(field: &str, rule: Rule) -> String {
    format!("{field}.{}", rule.name())
}

impl FieldRules {
    /// These rules with every bound relative to the run's start resolved against `start`.
    pub fn at(&self, start: Instant) -> FieldRules {
        let resolve = |bound: Option<Bound>| match bound {
            Some(Bound::FromStart(secs)) => Some(Bound::At(Instant::from_parts(
                start.secs().saturating_add(secs),
                start.nanos(),
            ))),
            other => other,
        };
        FieldRules {
            one_of: self.one_of.clone(),
            min: resolve(self.min),
            max: resolve(self.max),
            breach: self.breach,
        }
    }

    /// Whether a typed non-null value is one `one_of` allows (true without a `one_of`).
    pub fn allows(&self, value: &Value) -> bool {
        match (value, &self.one_of) {
            (Value::Str(s), Some(OneOf::Strs(_))) => self.allows_str(s.as_bytes()),
            (Value::Int(n), Some(OneOf::Ints(_))) => self.allows_int(*n),
            _ => true,
        }
    }

    /// [`FieldRules::allows`] of a string's bytes.
    pub fn allows_str(&self, text: &[u8]) -> bool {
        match &self.one_of {
            Some(OneOf::Strs(allowed)) => allowed.iter().any(|a| a.as_bytes() == text),
            _ => true,
        }
    }

    /// [`FieldRules::allows`] of an int.
    pub fn allows_int(&self, n: i64) -> bool {
        match &self.one_of {
            Some(OneOf::Ints(allowed)) => allowed.contains(&n),
            _ => true,
        }
    }

    /// Whether a typed non-null value lies within `min` and `max` (inclusive).
    pub fn in_range(&self, value: &Value) -> bool {
        match value {
            Value::Int(n) => self.int_in_range(*n),
            Value::Ts(t) => self.instant_in_range(*t),
            _ => true,
        }
    }

    pub fn int_in_range(&self, n: i64) -> bool {
        let within = |bound: Option<Bound>, ok: fn(i64, i64) -> bool| match bound {
            Some(Bound::Int(b)) => ok(n, b),
            _ => true,
        };
        within(self.min, |n, b| n >= b) && within(self.max, |n, b| n <= b)
    }

    /// An unresolved relative bound holds nothing back: every classifying path resolves
    /// the schema at the run's start first ([`super::Schema::at`]).
    pub fn instant_in_range(&self, t: Instant) -> bool {
        let within = |bound: Option<Bound>, ok: fn(Instant, Instant) -> bool| match bound {
            Some(Bound::At(b)) => ok(t, b),
            _ => true,
        };
        within(self.min, |t, b| t >= b) && within(self.max, |t, b| t <= b)
    }

    /// The first rule `value` breaks in the contract's order (one_of before range).
    pub fn broken(&self, value: &Value) -> Option<Rule> {
        if !self.allows(value) {
            Some(Rule::OneOf)
        } else if !self.in_range(value) {
            Some(Rule::Range)
        } else {
            None
        }
    }
}

/// A timestamp bound as the config writes it: an RFC 3339 instant, or `now±N` with a
/// unit `s`, `m`, `h` or `d` (relative to the run's start).
pub fn parse_timestamp_bound(text: &str) -> Result<Bound, String> {
    if let Some(rest) = text.strip_prefix("now") {
        let (sign, amount) = match rest.as_bytes().first() {
            Some(b'+') => (1, &rest[1..]),
            Some(b'-') => (-1, &rest[1..]),
            None => return Ok(Bound::FromStart(0)),
            _ => return Err(relative_help(text)),
        };
        let unit = match amount.chars().last() {
            Some('s') => 1,
            Some('m') => 60,
            Some('h') => 3600,
            Some('d') => 86_400,
            _ => return Err(relative_help(text)),
        };
        let digits = &amount[..amount.len() - 1];
        let n: i64 = digits.parse().map_err(|_| relative_help(text))?;
        if n < 0 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(relative_help(text));
        }
        return n
            .checked_mul(unit)
            .map(|secs| Bound::FromStart(sign * secs))
            .ok_or_else(|| relative_help(text));
    }
    timestamp::parse(text)
        .map(Bound::At)
        .map_err(|_| relative_help(text))
}

fn relative_help(text: &str) -> String {
    format!(
        "{text:?} is not a timestamp bound; write an RFC 3339 instant with an offset (\"2024-01-01T00:00:00Z\") or one relative to the run's start (\"now+10m\", \"now-400d\"; units s, m, h, d)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(text: &str) -> Instant {
        timestamp::parse(text).expect("an instant")
    }

    #[test]
    fn relative_bounds_resolve_against_the_start_given() {
        assert_eq!(parse_timestamp_bound("now+10m"), Ok(Bound::FromStart(600)));
        assert_eq!(
            parse_timestamp_bound("now-400d"),
            Ok(Bound::FromStart(-400 * 86_400))
        );
        for bad in [
            "now+",
            "now+10",
            "now*3d",
            "now+-3d",
            "tomorrow",
            "now+99999999999999999d",
        ] {
            assert!(parse_timestamp_bound(bad).is_err(), "{bad}");
        }
        let rules = FieldRules {
            max: Some(Bound::FromStart(600)),
            ..FieldRules::default()
        };
        let start = ts("2024-03-01T10:00:00Z");
        let resolved = rules.at(start);
        assert!(resolved.instant_in_range(ts("2024-03-01T10:10:00Z")));
        assert!(!resolved.instant_in_range(ts("2024-03-01T10:10:00.000000001Z")));
        // Another start, another verdict: the start is an input, not the clock.
        assert!(
            rules
                .at(ts("2024-03-02T00:00:00Z"))
                .instant_in_range(ts("2024-03-01T10:11:00Z"))
        );
    }

    /// §1's table: value rules come after every type check, one_of over all fields
    /// before any range; `on_violation = "breach"` makes the line a breach.
    #[test]
    fn rules_classify_in_the_contract_s_order() {
        use crate::contract::{LineBytes, Outcome, classify};
        let schema = crate::config::fixtures::ruled().schema;
        let outcome = |extra: &str, at: &str| {
            let line = format!(r#"{{"event_id":"e1","order_id":7,"updated_at":"{at}"{extra}}}"#);
            match classify(LineBytes::Kept(line.as_bytes()), &schema) {
                Outcome::Accepted(_) => ("accepted", String::new()),
                Outcome::Rejected(i) => (
                    "reject",
                    format!("{} {}", i.reason, i.field.unwrap_or_default()),
                ),
                Outcome::Breach(i) => (
                    "breach",
                    format!("{} {}", i.reason, i.field.unwrap_or_default()),
                ),
                Outcome::Blank => ("blank", String::new()),
            }
        };
        let ok = "2024-03-01T10:00:00Z";
        let cases = [
            (r#","status":"paid""#, ok, ("accepted", "")),
            (r#","status":"paid","seq":null"#, ok, ("accepted", "")),
            (
                r#","status":"zzz""#,
                ok,
                ("reject", "value_not_allowed status"),
            ),
            // status's one_of is checked before seq's range, though seq is declared later
            // and breaks its range only: one_of over every field first.
            (
                r#","status":"zzz","seq":-1"#,
                ok,
                ("reject", "value_not_allowed status"),
            ),
            (
                r#","status":"paid","seq":-1"#,
                ok,
                ("reject", "out_of_range seq"),
            ),
            (
                r#","status":"paid","seq":11"#,
                ok,
                ("reject", "value_not_allowed seq"),
            ),
            (
                r#","status":"zzz","seq":"x""#,
                ok,
                ("reject", "bad_type seq"),
            ),
            (
                r#","status":"paid""#,
                "2009-12-31T23:59:59Z",
                ("breach", "out_of_range updated_at"),
            ),
            // now+3650d from 2040-01-01 is 2049-12-29T00:00:00Z.
            (
                r#","status":"paid""#,
                "2049-12-29T00:00:00Z",
                ("accepted", ""),
            ),
            (
                r#","status":"paid""#,
                "2049-12-29T00:00:00.000001Z",
                ("breach", "out_of_range updated_at"),
            ),
            (
                r#","status":"zzz""#,
                "2009-12-31T23:59:59Z",
                ("reject", "value_not_allowed status"),
            ),
        ];
        for (extra, at, (kind, what)) in cases {
            assert_eq!(outcome(extra, at), (kind, what.to_owned()), "{extra} {at}");
        }
    }

    #[test]
    fn one_of_comes_before_range() {
        let rules = FieldRules {
            one_of: Some(OneOf::Ints(vec![1, 50])),
            min: Some(Bound::Int(10)),
            max: Some(Bound::Int(20)),
            breach: false,
        };
        assert_eq!(rules.broken(&Value::Int(2)), Some(Rule::OneOf));
        assert_eq!(rules.broken(&Value::Int(50)), Some(Rule::Range));
        assert_eq!(rules.broken(&Value::Int(1)), Some(Rule::Range));
        let open = FieldRules {
            min: Some(Bound::Int(10)),
            ..FieldRules::default()
        };
        assert_eq!(open.broken(&Value::Int(10)), None);
        assert_eq!(open.broken(&Value::Null), None);
    }
}
