//! The declared schema of one product: its fields in declared order and the roles
//! (key, order, tiebreak, event id, date) that the contract gives some of them.
//!
//! [`Schema`] is built and validated by `config`; everything downstream indexes fields by
//! their position in [`Schema::fields`].

use std::fmt;

use super::rules::FieldRules;
use super::timestamp::Instant;

/// The JSON shape a declared field must have (CONTRACT.md, "Field types").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// A JSON string.
    String,
    /// A JSON integer that fits i64.
    Int,
    /// A JSON string holding an RFC 3339 instant with an offset.
    Timestamp,
    /// A JSON number with a fraction or exponent, as f64; only a column added by
    /// `unknown_fields = "add"` has it (§1.1).
    Float,
    /// `true` or `false`; only a column added by `unknown_fields = "add"` has it (§1.1).
    Bool,
}

impl FieldType {
    /// The name used in the config file.
    pub fn name(self) -> &'static str {
        match self {
            FieldType::String => "string",
            FieldType::Int => "int",
            FieldType::Timestamp => "timestamp",
            FieldType::Float => "float",
            FieldType::Bool => "bool",
        }
    }
}

impl FieldType {
    /// The type a config or the lake's schema history names.
    pub fn parse(name: &str) -> Option<FieldType> {
        [
            FieldType::String,
            FieldType::Int,
            FieldType::Timestamp,
            FieldType::Float,
            FieldType::Bool,
        ]
        .into_iter()
        .find(|ty| ty.name() == name)
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One declared field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub ty: FieldType,
    pub required: bool,
    /// Value rules (§1.2), when the field has any.
    pub rules: Option<Box<FieldRules>>,
    /// A column a landing added (`unknown_fields = "add"`, §1.1), not the config.
    pub added: bool,
    /// `name` has no quote, backslash or control character: JSON writes it as itself.
    plain: bool,
    /// `"name":`, how compact JSON starts this member, when `plain` (else empty).
    compact: Vec<u8>,
}

impl Field {
    pub fn new(name: String, ty: FieldType, required: bool) -> Self {
        let plain = !name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
        let compact = if plain {
            [b"\"", name.as_bytes(), b"\":"].concat()
        } else {
            Vec::new()
        };
        Field {
            name,
            ty,
            required,
            rules: None,
            added: false,
            plain,
            compact,
        }
    }

    /// The name's bytes when a JSON member name spells it byte for byte between quotes
    /// (no escape could be needed), for matching it without decoding.
    pub fn plain_name(&self) -> Option<&[u8]> {
        self.plain.then_some(self.name.as_bytes())
    }

    /// `"name":`, the bytes that start this member in compact JSON, when the name is
    /// plain ([`Field::plain_name`]).
    pub fn compact_member(&self) -> Option<&[u8]> {
        self.plain.then_some(self.compact.as_slice())
    }
}

/// What to do with a field the schema does not declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownFields {
    /// The whole file is refused.
    Breach,
    /// Only the line is rejected.
    Reject,
    /// Kept, as one JSON object a row, in the schema's rescue column (§1.1).
    Rescue,
    /// A field of one JSON type across the input becomes a new nullable column (§1.1);
    /// one that cannot (an object, an array, only nulls) refuses the file.
    Add,
}

/// The validated schema: field roles are indexes into `fields`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    pub fields: Vec<Field>,
    pub key: usize,
    pub order_by: usize,
    pub tiebreak: Option<usize>,
    pub event_id: usize,
    pub date_of: usize,
    pub prohibited: Vec<String>,
    pub unknown_fields: UnknownFields,
    /// `unknown_fields = "rescue"`: the index of the rescue column, the last field, a
    /// nullable string that no member of a line fills by name (§1.1).
    pub rescue: Option<usize>,
}

impl Schema {
    /// This schema with every value rule relative to the run's start resolved against
    /// `start` (§1.2): what classification reads during that run.
    pub fn at(&self, start: Instant) -> Schema {
        let mut schema = self.clone();
        for field in &mut schema.fields {
            if let Some(rules) = &field.rules {
                field.rules = Some(Box::new(rules.at(start)));
            }
        }
        schema
    }

    /// Whether any declared field carries a value rule.
    pub fn has_rules(&self) -> bool {
        self.fields.iter().any(|f| f.rules.is_some())
    }

    /// The index of the declared field called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Appends a nullable column the lake added (§1.1), unless a field has that name.
    pub fn add_column(&mut self, name: &str, ty: FieldType) {
        if self.index_of(name).is_none() {
            let mut field = Field::new(name.to_owned(), ty, false);
            field.added = true;
            self.fields.push(field);
        }
    }

    /// The index of the field a line's member `name` fills: a declared field, never the
    /// rescue column (a member of that name is itself unknown, and rescued).
    pub fn member_index(&self, name: &str) -> Option<usize> {
        self.index_of(name).filter(|&i| Some(i) != self.rescue)
    }

    /// The name of the field at `index`.
    pub fn name(&self, index: usize) -> &str {
        &self.fields[index].name
    }

    /// Whether the published files dictionary-encode the field at `index`: a string
    /// whose values repeat (statuses, cities, couriers), not the key or the event id. A
    /// dictionary on a column of unique values is built, overflows and is thrown away
    /// for nothing; both engines write by this one rule.
    pub fn dictionary_encoded(&self, index: usize) -> bool {
        self.fields[index].ty == FieldType::String
            && index != self.key
            && index != self.event_id
            && Some(index) != self.rescue
    }
}
