//! PURE. Whether a Delta table's schema is the one the config's fields make
//! ([`super::table_schema`]), and where it is not, each differing column with both its
//! types in one line ([`differences`]), with advice the operator can follow ([`advice`]).
//! A NOT NULL column is the config's when its field is required or is the date partition
//! (every landed row has a value); for an optional field it is a difference naming both,
//! since a landing would write its nulls.

use delta_kernel::schema::{StructField, StructType};

use crate::config::Config;
use crate::land::columns::AddedColumn;

/// Each column where `table` differs from `wanted` (the config's table schema), in
/// column order: a table's column the config lacks (unless the lake added it, §1.1), a
/// config's column the table lacks (unless the landing adds it), or one whose type or
/// nullability differs. Empty when the table is the config's.
pub fn differences(
    table: &StructType,
    wanted: &StructType,
    config: &Config,
    history: &[AddedColumn],
) -> Vec<String> {
    let field = |name: &str| config.schema.fields.iter().find(|f| f.name == name);
    let mut out = Vec::new();
    for column in table.fields() {
        let name = column.name().as_str();
        match wanted.field(name) {
            None if history.iter().any(|c| c.name == name) => {}
            None => out.push(format!(
                "`{name}`: in the table ({}), not in the config",
                described(column)
            )),
            Some(want) if want.data_type() != column.data_type() => out.push(format!(
                "`{name}`: table {} vs config {}",
                described(column),
                config_type(want, field(name).map(|f| f.ty.name()))
            )),
            // The date partition and a required field always have a value.
            Some(_) if !column.is_nullable() && field(name).is_some_and(|f| !f.required) => {
                out.push(format!(
                    "`{name}`: table {} vs config optional {} (a landing would write nulls \
                     into a NOT NULL column)",
                    described(column),
                    field(name).map_or("", |f| f.ty.name())
                ));
            }
            Some(_) => {}
        }
    }
    for want in wanted.fields() {
        let added = field(want.name()).is_some_and(|f| f.added);
        if table.field(want.name()).is_none() && !added {
            out.push(format!(
                "`{}`: in the config ({}), not in the table",
                want.name(),
                config_type(want, field(want.name()).map(|f| f.ty.name()))
            ));
        }
    }
    out
}

/// A table's column type as Delta names it, with NOT NULL when it is.
fn described(column: &StructField) -> String {
    let null = if column.is_nullable() {
        ""
    } else {
        " NOT NULL"
    };
    format!("{}{null}", column.data_type())
}

/// A config's field type and the Delta type Wharf writes it as.
fn config_type(want: &StructField, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("{name} ({})", want.data_type()),
        None => format!("the date partition ({})", want.data_type()),
    }
}

/// What the operator can do about `differences`: declare the table's extra columns, when
/// that is all they are, else land into a table whose columns are the config's.
pub fn advice(differences: &[String]) -> &'static str {
    if differences.iter().all(|d| d.contains("not in the config")) {
        "nothing was written. Declare those columns in the config's [schema.fields] \
         (string, int for long, timestamp, float for double, bool for boolean), or point \
         publish_root at this product's own table (or a new path, where the first landing \
         creates one)"
    } else {
        "nothing was written. Wharf never changes a table's schema and writes each field as \
         the type shown for the config: point publish_root at this product's own table (or \
         a new path, where the first landing creates one), or, where the table's column \
         is one the config can declare, change that field's type or `required` to match"
    }
}
