//! A declared field's value rules in the config (CONTRACT.md §1.2): `one_of`, `min`,
//! `max`, `on_violation`, `mostly`, checked against the field's type so a rule that can
//! never apply is refused at load time with the fix.

use super::RawField;
use crate::contract::FieldType;
use crate::contract::rules::{Bound, FieldRules, OneOf, parse_timestamp_bound};

/// The rules of field `name` of type `ty`, `None` when it has none.
pub(super) fn of(
    name: &str,
    ty: FieldType,
    field: &RawField,
) -> std::result::Result<Option<FieldRules>, String> {
    let at = |key: &str| format!("schema.fields.{name}.{key}");
    let breach = match field.on_violation.as_deref() {
        None | Some("reject") => false,
        Some("breach") => true,
        Some(other) => {
            return Err(format!(
                "{} = {other:?}; use \"reject\" (the line) or \"breach\" (the file)",
                at("on_violation")
            ));
        }
    };
    if let Some(share) = field.mostly
        && !(share > 0.0 && share <= 1.0)
    {
        return Err(format!(
            "{} = {share} must be a share above 0.0 and at most 1.0 (0.99: refuse when more than 1% of lines break a rule)",
            at("mostly")
        ));
    }
    let one_of = match &field.one_of {
        None => None,
        Some(values) => Some(one_of(&at("one_of"), ty, values)?),
    };
    let bound = |key: &str, value: &Option<toml::Value>| match value {
        None => Ok(None),
        Some(value) => bound(&at(key), ty, value).map(Some),
    };
    let rules = FieldRules {
        one_of,
        min: bound("min", &field.min)?,
        max: bound("max", &field.max)?,
        breach,
    };
    if rules == FieldRules::default() {
        if field.on_violation.is_some() || field.mostly.is_some() {
            return Err(format!(
                "schema.fields.{name} sets on_violation or mostly but no rule; add one_of, min or max"
            ));
        }
        return Ok(None);
    }
    Ok(Some(rules))
}

fn one_of(at: &str, ty: FieldType, values: &[toml::Value]) -> std::result::Result<OneOf, String> {
    if values.is_empty() {
        return Err(format!("{at} is empty; list the values the field may hold"));
    }
    match ty {
        FieldType::String => values
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .map(OneOf::Strs)
            .ok_or_else(|| format!("{at} must list strings, as the field is a string")),
        FieldType::Int => values
            .iter()
            .map(toml::Value::as_integer)
            .collect::<Option<Vec<_>>>()
            .map(OneOf::Ints)
            .ok_or_else(|| format!("{at} must list integers, as the field is an int")),
        FieldType::Timestamp => Err(format!(
            "{at}: a timestamp field takes min and max, not one_of"
        )),
        FieldType::Float | FieldType::Bool => Err(format!("{at}: a {ty} field takes no rules")),
    }
}

fn bound(at: &str, ty: FieldType, value: &toml::Value) -> std::result::Result<Bound, String> {
    match (ty, value) {
        (FieldType::Int, toml::Value::Integer(n)) => Ok(Bound::Int(*n)),
        (FieldType::Int, _) => Err(format!("{at} must be an integer, as the field is an int")),
        (FieldType::Timestamp, toml::Value::String(text)) => {
            parse_timestamp_bound(text).map_err(|e| format!("{at}: {e}"))
        }
        (FieldType::Timestamp, _) => Err(format!(
            "{at} must be a string: an RFC 3339 instant or \"now+10m\""
        )),
        (FieldType::String, _) => Err(format!("{at}: a string field takes one_of, not min or max")),
        (FieldType::Float | FieldType::Bool, _) => {
            Err(format!("{at}: a {ty} field takes no rules"))
        }
    }
}
