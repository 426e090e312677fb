//! The product's TOML config (CONTRACT.md, "The config file"): [`Config::load`] reads it,
//! resolves relative paths against the config file's folder and validates it, so every
//! other module can trust a [`Config`]. Every message names the field and the fix.
//! [`engine`] is its `[engine]` section.

pub mod engine;
pub mod inbox;
pub mod lake;
pub mod paging;
mod rules;
mod state;

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::contract::{Field, FieldType, Schema, UnknownFields};
use crate::error::{Error, Result};
pub use engine::{EngineConfig, EngineKind};
pub use lake::Lake;
pub use paging::{Alerts, LineageTarget, Paging};

/// How a publish treats the dates it writes (CONTRACT.md §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// An input restates its dates completely.
    Replace,
    /// Incremental micro-batches: the latest row per key across batches.
    Merge,
}

/// One product's validated config, paths absolute.
#[derive(Clone, Debug)]
pub struct Config {
    pub path: PathBuf,
    pub product: String,
    pub inbox: PathBuf,
    /// `publish_root` and `table_format`: hive folders or a Delta table (§12); an `s3://`
    /// publish root is a Delta table.
    pub lake: Lake,
    pub quarantine_root: PathBuf,
    pub state_root: PathBuf,
    pub max_rejected_lines: u64,
    pub max_dates: usize,
    pub max_shrink: f64,
    /// Replace mode: refuse a date growing past this many times its rows (0: off, §5.10).
    pub max_growth: f64,
    pub files_per_date: usize,
    /// Merge mode: rows per file within a date, split by key range (§10.4).
    pub target_file_rows: u64,
    pub publish_empty: bool,
    pub keep_generations: usize,
    pub max_line_bytes: usize,
    pub write_mode: WriteMode,
    /// A Delta checkpoint is written every this many commits.
    pub delta_checkpoint_interval: u64,
    /// The file that closes a set in the inbox (§11.1).
    pub set_marker: String,
    /// How `watch` lists an S3 inbox (`poll`, `rescan`, §13.2).
    pub listing: inbox::Listing,
    pub schema: Schema,
    /// `mostly` by field name (§1.2): a share of lines that must keep each of its rules.
    pub mostly: Vec<(String, f64)>,
    /// Which engine does the row work (`[engine]`).
    pub engine: EngineConfig,
    /// Freshness, alerts and lineage (`max_silence`, `lineage`, `lineage_namespace`,
    /// `[alerts]`).
    pub paging: Paging,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    product: String,
    inbox: Option<String>,
    publish_root: Option<String>,
    quarantine_root: Option<String>,
    state_root: Option<String>,
    #[serde(default = "defaults::max_rejected_lines")]
    max_rejected_lines: i64,
    #[serde(default = "defaults::max_dates")]
    max_dates: i64,
    #[serde(default = "defaults::max_shrink")]
    max_shrink: f64,
    #[serde(default)]
    max_growth: f64,
    #[serde(default = "defaults::one")]
    files_per_date: i64,
    #[serde(default = "defaults::target_file_rows")]
    target_file_rows: i64,
    #[serde(default)]
    publish_empty: bool,
    #[serde(default = "defaults::keep_generations")]
    keep_generations: i64,
    #[serde(default = "defaults::max_line_bytes")]
    max_line_bytes: i64,
    #[serde(default = "defaults::write_mode")]
    write_mode: String,
    table_format: Option<String>,
    #[serde(default = "defaults::delta_checkpoint_interval")]
    delta_checkpoint_interval: i64,
    #[serde(default = "defaults::set_marker")]
    set_marker: String,
    schema: RawSchema,
    #[serde(default)]
    engine: engine::RawEngine,
    max_silence: Option<String>,
    lineage: Option<String>,
    lineage_namespace: Option<String>,
    alerts: Option<paging::RawAlerts>,
    poll: Option<String>,
    rescan: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSchema {
    key: String,
    order_by: String,
    tiebreak: Option<String>,
    event_id: String,
    partition_by_date_of: String,
    #[serde(default)]
    prohibited: Vec<String>,
    #[serde(default = "defaults::unknown_fields")]
    unknown_fields: String,
    #[serde(default = "defaults::rescue_column")]
    rescue_column: String,
    fields: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawField {
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    required: bool,
    one_of: Option<Vec<toml::Value>>,
    min: Option<toml::Value>,
    max: Option<toml::Value>,
    on_violation: Option<String>,
    mostly: Option<f64>,
}

mod defaults {
    pub fn max_rejected_lines() -> i64 {
        100
    }
    pub fn max_dates() -> i64 {
        2
    }
    pub fn max_shrink() -> f64 {
        0.5
    }
    pub fn one() -> i64 {
        1
    }
    pub fn target_file_rows() -> i64 {
        1_000_000
    }
    pub fn keep_generations() -> i64 {
        3
    }
    pub fn max_line_bytes() -> i64 {
        1_048_576
    }
    pub fn delta_checkpoint_interval() -> i64 {
        10
    }
    pub fn set_marker() -> String {
        crate::input::SET_MARKER.into()
    }
    pub fn write_mode() -> String {
        "replace".into()
    }
    pub fn unknown_fields() -> String {
        "breach".into()
    }
    pub fn rescue_column() -> String {
        "_rescued".into()
    }
}

impl Config {
    /// Reads, resolves and validates the config at `path`.
    pub fn load(path: &Path) -> Result<Config> {
        let fail = |message: String| Error::Config {
            path: path.to_owned(),
            message,
        };
        if path.as_os_str().is_empty() {
            return Err(fail("the config path is empty; pass --config FILE".into()));
        }
        let text = std::fs::read_to_string(path).map_err(|e| {
            fail(format!(
                "cannot read it ({e}); pass --config with the product's TOML file"
            ))
        })?;
        let absolute = std::path::absolute(path)
            .map_err(|e| fail(format!("cannot resolve the path ({e})")))?;
        let folder = absolute.parent().unwrap_or(Path::new("/")).to_owned();
        Config::parse(&text, &absolute, &folder)
    }

    /// Parses and validates config `text`; relative paths resolve against `folder`.
    pub fn parse(text: &str, path: &Path, folder: &Path) -> Result<Config> {
        let fail = |message: String| Error::Config {
            path: path.to_owned(),
            message,
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| fail(one_line(&e.to_string())))?;
        let mut config = validate(raw, folder).map_err(fail)?;
        config.path = path.to_owned();
        Ok(config)
    }

    /// This config as a run starting at `start` reads it: value rules relative to the
    /// run's start (`now+10m`, §1.2) resolved once, so every line of the run meets the
    /// same bound, on either engine.
    pub fn at_start(&self, start: std::time::SystemTime) -> Config {
        if !self.schema.has_rules() {
            return self.clone();
        }
        let since = |t: std::time::SystemTime| match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => crate::contract::Instant::from_parts(d.as_secs() as i64, d.subsec_nanos()),
            Err(_) => crate::contract::Instant::from_parts(0, 0),
        };
        let mut config = self.clone();
        config.schema = self.schema.at(since(start));
        config
    }

    /// The checkpoint file of input `name` (CONTRACT.md §7).
    pub fn checkpoint_path(&self, name: &str) -> PathBuf {
        self.state_root
            .join("checkpoints")
            .join(format!("{name}.json"))
    }
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn validate(raw: RawConfig, folder: &Path) -> std::result::Result<Config, String> {
    let product = raw.product.trim().to_owned();
    if product.is_empty() || product.contains(['/', '\\']) || product.chars().any(char::is_control)
    {
        return Err(format!(
            "product = {:?} must be a plain non-empty name (no slashes or control characters)",
            raw.product
        ));
    }
    let root = |value: Option<String>, default: String| resolve(folder, &value.unwrap_or(default));
    for (name, value) in [
        ("inbox", &raw.inbox),
        ("publish_root", &raw.publish_root),
        ("quarantine_root", &raw.quarantine_root),
        ("state_root", &raw.state_root),
    ] {
        if value.as_deref().is_some_and(has_credentials) {
            // Not quoted: what stands before the '@' is a credential.
            return Err(format!(
                "{name} has credentials in its URL (before '@'), where they would be \
                 printed and logged with it; remove them and set AWS_ACCESS_KEY_ID and \
                 AWS_SECRET_ACCESS_KEY in the environment"
            ));
        }
    }
    let inbox = inbox::location(raw.inbox, |v| resolve(folder, v))?; // §13
    let listing = inbox::listing(raw.poll.as_deref(), raw.rescan.as_deref())?;
    let lake = lake::parse(folder, raw.publish_root, raw.table_format, &product)?;
    let publish_root = lake.publish_root().to_owned();
    let s3_table = lake.table_url().is_some_and(|u| u.starts_with("s3://"));
    let place = |name: &str, value: Option<String>, default: String| match state::location(
        name,
        value.as_deref(),
        s3_table,
    )? {
        Some(url) => Ok::<_, String>(url),
        None => Ok(root(value, default)),
    };
    let quarantine_root = place(
        "quarantine_root",
        raw.quarantine_root,
        format!("quarantine/{product}"),
    )?;
    let state_root = place("state_root", raw.state_root, format!("state/{product}"))?;
    state::check_apart(&[
        ("inbox", &inbox),
        ("publish_root", &publish_root),
        ("quarantine_root", &quarantine_root),
        ("state_root", &state_root),
    ])?;
    if lake.local_folder().is_some() {
        check_disjoint(&[
            ("publish_root", &publish_root),
            ("quarantine_root", &quarantine_root),
            ("state_root", &state_root),
        ])?;
        check_disjoint(&[("inbox", &inbox), ("publish_root", &publish_root)])?;
    } else {
        // An S3 table shares no file system with the local roots, which must still be
        // apart from one another.
        check_disjoint(&[
            ("quarantine_root", &quarantine_root),
            ("state_root", &state_root),
        ])?;
        if inbox::on_s3(&inbox) {
            check_disjoint(&[("inbox", &inbox), ("publish_root", &publish_root)])?;
        }
    }
    // Wharf's own files in the inbox would be listed as inputs and refused on every run.
    check_disjoint(&[("inbox", &inbox), ("state_root", &state_root)])?;
    check_disjoint(&[("inbox", &inbox), ("quarantine_root", &quarantine_root)])?;
    let delta_checkpoint_interval =
        at_least_one("delta_checkpoint_interval", raw.delta_checkpoint_interval)?;

    let at_least = |name: &str, value: i64, min: i64| -> std::result::Result<i64, String> {
        if value < min {
            Err(format!("{name} = {value} must be at least {min}"))
        } else {
            Ok(value)
        }
    };
    let max_rejected_lines = at_least("max_rejected_lines", raw.max_rejected_lines, 0)? as u64;
    let max_dates = at_least("max_dates", raw.max_dates, 1)? as usize;
    let files_per_date = at_least("files_per_date", raw.files_per_date, 1)? as usize;
    let target_file_rows = at_least("target_file_rows", raw.target_file_rows, 1)? as u64;
    let keep_generations = at_least("keep_generations", raw.keep_generations, 1)? as usize;
    let max_line_bytes = at_least("max_line_bytes", raw.max_line_bytes, 1)? as usize;
    if max_line_bytes > MAX_LINE_BYTES {
        return Err(format!(
            "max_line_bytes = {max_line_bytes} is above {MAX_LINE_BYTES} (16 MiB): a kept line \
             is held and parsed whole, in every chunk in flight; an event line is far shorter"
        ));
    }
    if !(0.0..=1.0).contains(&raw.max_shrink) {
        return Err(format!(
            "max_shrink = {} must be a share between 0.0 and 1.0 (0.5 refuses losing more than half a date)",
            raw.max_shrink
        ));
    }
    if !(raw.max_growth == 0.0 || raw.max_growth >= 1.0) || !raw.max_growth.is_finite() {
        return Err(format!(
            "max_growth = {} must be 0.0 (off) or a factor of at least 1.0 (3.0 refuses a date growing past three times its rows)",
            raw.max_growth
        ));
    }
    let write_mode = match raw.write_mode.as_str() {
        "replace" => WriteMode::Replace,
        "merge" => WriteMode::Merge,
        other => {
            return Err(format!(
                "write_mode = {other:?} is not a mode; use \"replace\" or \"merge\""
            ));
        }
    };
    let engine = raw.engine.validate()?;
    let paging = paging::validate(
        raw.max_silence.as_deref(),
        raw.lineage.as_deref(),
        raw.lineage_namespace.as_deref(),
        raw.alerts,
        folder,
    )?;
    let (schema, mostly) = validate_schema(raw.schema)?;
    Ok(Config {
        path: folder.to_owned(),
        product,
        inbox,
        lake,
        quarantine_root,
        state_root,
        max_rejected_lines,
        max_dates,
        max_shrink: raw.max_shrink,
        max_growth: raw.max_growth,
        files_per_date,
        target_file_rows,
        publish_empty: raw.publish_empty,
        keep_generations,
        max_line_bytes,
        write_mode,
        delta_checkpoint_interval,
        set_marker: valid_marker(raw.set_marker)?,
        listing,
        schema,
        mostly,
        engine,
        paging,
    })
}

/// A marker is one plain file name (§11.1).
fn valid_marker(marker: String) -> std::result::Result<String, String> {
    if marker.is_empty() || marker.contains(['/', '\0']) || marker == "." || marker == ".." {
        return Err(format!(
            "set_marker = {marker:?} must be one file name, such as \"_SUCCESS\""
        ));
    }
    Ok(marker)
}

type Mostly = Vec<(String, f64)>;

fn validate_schema(raw: RawSchema) -> std::result::Result<(Schema, Mostly), String> {
    let mut fields = Vec::with_capacity(raw.fields.len());
    let mut mostly = Vec::new();
    for (name, value) in raw.fields {
        let field: RawField = value.try_into().map_err(|e: toml::de::Error| {
            format!(
                "schema.fields.{name}: {}; write it as {{ type = \"string\", required = true }}",
                one_line(e.message())
            )
        })?;
        let ty = match field.ty.as_str() {
            "string" => FieldType::String,
            "int" => FieldType::Int,
            "timestamp" => FieldType::Timestamp,
            other => {
                return Err(format!(
                    "schema.fields.{name}: type {other:?} is not a type; use \"string\", \"int\" or \"timestamp\""
                ));
            }
        };
        if let Some(share) = field.mostly {
            mostly.push((name.clone(), share));
        }
        let rules = rules::of(&name, ty, &field)?;
        let mut declared = Field::new(name, ty, field.required);
        declared.rules = rules.map(Box::new);
        fields.push(declared);
    }
    if fields.is_empty() {
        return Err("[schema.fields] declares no field; declare at least the key, order_by, event_id and date fields".into());
    }
    let role = |role: &str, name: &str, types: &[FieldType], required: bool| {
        let Some(index) = fields.iter().position(|f| f.name == name) else {
            return Err(format!(
                "schema.{role} = {name:?} is not declared in [schema.fields]; declare it or name a declared field"
            ));
        };
        let field = &fields[index];
        if !types.contains(&field.ty) {
            let wanted: Vec<&str> = types.iter().map(|t| t.name()).collect();
            return Err(format!(
                "schema.{role} = {name:?} has type {}; it must be {}",
                field.ty,
                wanted.join(" or ")
            ));
        }
        if required && !field.required {
            return Err(format!(
                "schema.{role} = {name:?} must be declared with required = true"
            ));
        }
        Ok(index)
    };
    use FieldType::{Int, String as Text, Timestamp};
    let key = role("key", &raw.key, &[Int, Text], true)?;
    let order_by = role("order_by", &raw.order_by, &[Timestamp], true)?;
    let tiebreak = match &raw.tiebreak {
        Some(name) => Some(role("tiebreak", name, &[Int], false)?),
        None => None,
    };
    let event_id = role("event_id", &raw.event_id, &[Text, Int], true)?;
    let date_of = role(
        "partition_by_date_of",
        &raw.partition_by_date_of,
        &[Timestamp],
        true,
    )?;
    if let Some(name) = raw
        .prohibited
        .iter()
        .find(|p| fields.iter().any(|f| &f.name == *p))
    {
        return Err(format!(
            "schema.prohibited names {name:?}, which [schema.fields] declares; a field is either published or prohibited"
        ));
    }
    let unknown_fields = match raw.unknown_fields.as_str() {
        "breach" => UnknownFields::Breach,
        "reject" => UnknownFields::Reject,
        "rescue" => UnknownFields::Rescue,
        "add" => UnknownFields::Add,
        other => {
            return Err(format!(
                "schema.unknown_fields = {other:?}; use \"breach\", \"reject\", \"add\" or \"rescue\""
            ));
        }
    };
    let rescue = (unknown_fields == UnknownFields::Rescue)
        .then(|| rescue_column(&raw.rescue_column, &fields, &raw.prohibited))
        .transpose()?;
    // The rescue column is the last field: declared order is unchanged for every other.
    let rescue = rescue.map(|name| {
        fields.push(Field::new(name, FieldType::String, false));
        fields.len() - 1
    });
    let schema = Schema {
        fields,
        key,
        order_by,
        tiebreak,
        event_id,
        date_of,
        prohibited: raw.prohibited,
        unknown_fields,
        rescue,
    };
    Ok((schema, mostly))
}

/// `rescue_column`: a plain name no declared or prohibited field has.
fn rescue_column(
    name: &str,
    fields: &[Field],
    prohibited: &[String],
) -> std::result::Result<String, String> {
    if name.is_empty()
        || name
            .chars()
            .any(|c| c.is_control() || c == '"' || c == '\\')
    {
        return Err(format!(
            "schema.rescue_column = {name:?} must be a plain non-empty name, such as \"_rescued\""
        ));
    }
    if fields.iter().any(|f| f.name == name) || prohibited.iter().any(|p| p == name) {
        return Err(format!(
            "schema.rescue_column = {name:?} is a declared or prohibited field; name a column of its own"
        ));
    }
    Ok(name.to_owned())
}

fn at_least_one(name: &str, value: i64) -> std::result::Result<u64, String> {
    if value < 1 {
        return Err(format!("{name} = {value} must be at least 1"));
    }
    Ok(value as u64)
}

/// The largest `max_line_bytes` a config may set (docs/operations.md, "Hostile input").
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// Whether `value` is a URL with a user part (`scheme://user:secret@host/…`), whatever
/// the scheme's spelling (`s3://`, `S3://`, `s3a://`).
fn has_credentials(value: &str) -> bool {
    value.split_once("://").is_some_and(|(_, rest)| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority.contains('@')
    })
}

/// `value` as an absolute, lexically normalised path, relative to `folder`.
fn resolve(folder: &Path, value: &str) -> PathBuf {
    let joined = folder.join(value);
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The path with symbolic links resolved as far as it exists.
fn real(path: &Path) -> PathBuf {
    let mut existing = path.to_owned();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_owned();
            }
            _ => return path.to_owned(),
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    out.extend(rest.iter().rev());
    out
}

fn check_disjoint(roots: &[(&str, &PathBuf)]) -> std::result::Result<(), String> {
    // Roots on S3 are kept apart by [`state::check_apart`].
    let real: Vec<(&str, PathBuf)> = roots
        .iter()
        .filter(|(_, p)| !crate::s3_inbox::is_url(p))
        .map(|(n, p)| (*n, real(p)))
        .collect();
    for (i, (a, pa)) in real.iter().enumerate() {
        for (b, pb) in &real[i + 1..] {
            if pa.starts_with(pb) || pb.starts_with(pa) {
                return Err(format!(
                    "{a} ({}) and {b} ({}) overlap; they must be separate folders, neither inside the other",
                    pa.display(),
                    pb.display()
                ));
            }
        }
    }
    Ok(())
}

/// The orders product the unit tests of several modules share.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::Config;
    use std::path::Path;

    /// Order events: int key, timestamp order, int tiebreak, two optional fields and a
    /// prohibited `email`.
    pub fn orders() -> Config {
        orders_keyed_by("int")
    }

    /// [`orders`] with value rules (§1.2) on four fields, relative bounds resolved
    /// against 2040-01-01: each rule splits the lines the tests generate.
    pub fn ruled() -> Config {
        let start = std::time::UNIX_EPOCH + std::time::Duration::from_secs(2_208_988_800);
        let config = parse(&ruled_text(), "ruled").at_start(start); // 2040-01-01T00:00:00Z
        let ruled = config.schema.fields.iter().filter(|f| f.rules.is_some());
        assert_eq!(ruled.count(), 4, "every rule of the fixture took");
        config
    }

    /// [`orders`] keeping unknown fields in `_rescued` (§1.1), with [`ruled`]'s rules.
    pub fn rescuing() -> Config {
        let text = ruled_text().replace(
            "prohibited = [\"email\"]",
            "prohibited = [\"email\"]\nunknown_fields = \"rescue\"",
        );
        parse(&text, "rescuing")
    }

    fn ruled_text() -> String {
        let mut text = ORDERS.to_owned();
        for (field, rules) in [
            (
                "order_id",
                r#"required = true, min = -500000000000000000, max = 500000000000000000"#,
            ),
            (
                "status",
                r#"required = true, one_of = ["", "a", "b", "c", "d", "e", "paid"]"#,
            ),
            (
                "updated_at",
                r#"required = true, min = "2010-01-01T00:00:00Z", max = "now+3650d", on_violation = "breach""#,
            ),
            (
                "seq",
                r#"one_of = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1, -2], min = 0"#,
            ),
        ] {
            let line = text
                .lines()
                .find(|l| l.starts_with(field))
                .unwrap_or_default()
                .to_owned();
            let ruled = match line.split_once("required = true") {
                Some((head, tail)) => format!("{head}{rules}{tail}"),
                None => line.replace(" }", &format!(", {rules} }}")),
            };
            text = text.replace(&line, &ruled);
        }
        text
    }

    fn parse(text: &str, what: &str) -> Config {
        match Config::parse(text, Path::new("/w.toml"), Path::new("/")) {
            Ok(config) => config,
            Err(e) => panic!("the {what} fixture parses: {e}"),
        }
    }

    /// [`orders`] publishing to the Delta table at `url` (taken as given, unparsed).
    pub fn on_table(url: &str) -> Config {
        let mut config = orders();
        config.lake = super::Lake::Delta {
            url: url.to_owned(),
            root: url.into(),
        };
        config
    }

    /// [`orders`] with its key `order_id` of field type `key_type`.
    pub fn orders_keyed_by(key_type: &str) -> Config {
        let text = ORDERS.replace(
            r#"order_id   = { type = "int""#,
            &format!(r#"order_id   = {{ type = "{key_type}""#),
        );
        parse(&text, "orders")
    }

    const ORDERS: &str = r#"
product = "orders"
[schema]
key = "order_id"
order_by = "updated_at"
tiebreak = "seq"
event_id = "event_id"
partition_by_date_of = "updated_at"
prohibited = ["email"]
[schema.fields]
event_id   = { type = "string",    required = true }
order_id   = { type = "int",       required = true }
status     = { type = "string",    required = true }
updated_at = { type = "timestamp", required = true }
seq        = { type = "int" }
city       = { type = "string" }
"#;
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"
[schema]
key = "order_id"
order_by = "updated_at"
tiebreak = "seq"
event_id = "event_id"
partition_by_date_of = "updated_at"
prohibited = ["email"]

[schema.fields]
event_id   = { type = "string",    required = true }
order_id   = { type = "int",       required = true }
updated_at = { type = "timestamp", required = true }
seq        = { type = "int" }
"#;

    fn parse(head: &str, schema: &str) -> Result<Config> {
        Config::parse(
            &format!("{head}\n{schema}"),
            Path::new("/cfg/w.toml"),
            Path::new("/cfg"),
        )
    }

    fn message(head: &str, schema: &str) -> String {
        parse(head, schema).expect_err("invalid").to_string()
    }

    #[test]
    fn a_set_marker_is_one_file_name() {
        let config = parse(r#"product = "orders""#, SCHEMA).unwrap();
        assert_eq!(config.set_marker, "_SUCCESS");
        let done = parse("product = \"orders\"\nset_marker = \"DONE\"", SCHEMA).unwrap();
        assert_eq!(done.set_marker, "DONE");
        for bad in ["", "a/b", ".."] {
            let head = format!("product = \"orders\"\nset_marker = {bad:?}");
            assert!(message(&head, SCHEMA).contains("set_marker"), "{bad:?}");
        }
    }

    #[test]
    fn defaults_and_relative_paths() {
        let config = parse(r#"product = "orders""#, SCHEMA).unwrap();
        assert_eq!(config.lake, Lake::Hive("/cfg/lake/orders".into()));
        assert_eq!(config.state_root, Path::new("/cfg/state/orders"));
        assert_eq!(config.inbox, Path::new("/cfg/inbox"));
        assert_eq!((config.max_rejected_lines, config.max_dates), (100, 2));
        assert_eq!(config.max_line_bytes, 1_048_576);
        assert_eq!(config.write_mode, WriteMode::Replace);
        let names: Vec<&str> = config
            .schema
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["event_id", "order_id", "updated_at", "seq"],
            "declared order kept"
        );
        assert_eq!(config.schema.tiebreak, Some(3));
    }

    #[test]
    fn nested_roots_are_refused() {
        let head = "product = \"o\"\npublish_root = \"lake\"\nstate_root = \"lake/_state\"";
        let text = message(head, SCHEMA);
        assert!(
            text.contains("publish_root") && text.contains("state_root"),
            "{text}"
        );
        let head = "product = \"o\"\nquarantine_root = \"q\"\nstate_root = \"q/../q/s\"";
        assert!(message(head, SCHEMA).contains("overlap"));
    }

    #[test]
    fn roles_must_be_declared_and_typed() {
        let undeclared = SCHEMA.replace(r#"tiebreak = "seq""#, r#"tiebreak = "sequence""#);
        assert!(message("product = \"o\"", &undeclared).contains("schema.tiebreak = \"sequence\""));
        let wrong = SCHEMA.replace(r#"order_by = "updated_at""#, r#"order_by = "seq""#);
        assert!(message("product = \"o\"", &wrong).contains("must be timestamp"));
        let bad_type = SCHEMA.replace(
            r#"seq        = { type = "int" }"#,
            r#"seq = { type = "float" }"#,
        );
        assert!(message("product = \"o\"", &bad_type).contains("\"float\" is not a type"));
        let overlap = SCHEMA.replace(r#"prohibited = ["email"]"#, r#"prohibited = ["seq"]"#);
        assert!(message("product = \"o\"", &overlap).contains("prohibited"));
    }

    #[test]
    fn publish_root_may_be_a_delta_table_on_s3_or_a_local_path() {
        let s3 = parse(
            "product = \"o\"\npublish_root = \"s3://b/lake/o\"\ntable_format = \"delta\"",
            SCHEMA,
        )
        .unwrap();
        assert_eq!(s3.lake.table_url(), Some("s3://b/lake/o/"));
        assert_eq!(s3.lake.local_folder(), None);
        assert_eq!(s3.delta_checkpoint_interval, 10);
        let local = parse("product = \"o\"\ntable_format = \"delta\"", SCHEMA).unwrap();
        assert_eq!(
            local.lake,
            Lake::Delta {
                url: "file:///cfg/lake/o/".to_owned(),
                root: "/cfg/lake/o".into()
            }
        );
        let hive = parse("product = \"o\"", SCHEMA).unwrap();
        assert_eq!(hive.lake, Lake::Hive("/cfg/lake/o".into()));
        assert_eq!(hive.lake.table_url(), None);
        for (head, wanted) in [
            (
                "publish_root = \"s3://b/lake/o\"",
                "table_format = \"delta\"",
            ),
            (
                "publish_root = \"s3://b\"\ntable_format = \"delta\"",
                "s3://bucket/prefix",
            ),
            ("table_format = \"iceberg\"", "not a format"),
            (
                "state_root = \"s3://b/state\"",
                "requires a Delta table on S3",
            ),
            (
                "publish_root = \"gs://b/o\"\ntable_format = \"delta\"",
                "only local paths",
            ),
            ("[engine]\ns3_scheme = \"gs\"", "s3_scheme"),
            (
                "table_format = \"delta\"\ndelta_checkpoint_interval = 0",
                "delta_checkpoint_interval",
            ),
        ] {
            let text = message(&format!("product = \"o\"\n{head}"), SCHEMA);
            assert!(text.contains(wanted), "{head}: {text}");
        }
    }

    #[test]
    fn credentials_in_an_s3_url_are_refused_unquoted() {
        let text = message(
            "product = \"o\"\npublish_root = \"s3://AKIAX:s3cr3t@b/lake/o\"\ntable_format = \"delta\"",
            SCHEMA,
        );
        assert!(text.contains("AWS_SECRET_ACCESS_KEY"), "{text}");
        assert!(
            !text.contains("s3cr3t") && !text.contains("AKIAX"),
            "{text}"
        );
        for field in ["inbox", "state_root", "quarantine_root", "publish_root"] {
            for url in [
                "s3://AKIAX:s3cr3t@b/x",
                "S3://AKIAX:s3cr3t@b/x",
                "s3a://AKIAX:s3cr3t@b/x",
                "https://AKIAX:s3cr3t@host",
            ] {
                let text = message(&format!("product = \"o\"\n{field} = \"{url}\""), SCHEMA);
                assert!(
                    text.contains(field) && text.contains("credentials"),
                    "{text}"
                );
                assert!(
                    !text.contains("s3cr3t") && !text.contains("AKIAX"),
                    "{text}"
                );
            }
        }
        assert!(!has_credentials("lake/o@2024"), "a path with '@' is no URL");
        assert!(!has_credentials("s3://b/prefix/a@b"), "'@' past the host");
    }

    #[test]
    fn a_url_for_a_local_root_is_refused_naming_it() {
        for field in ["state_root", "quarantine_root"] {
            let text = message(&format!("product = \"o\"\n{field} = \"s3://b/x\""), SCHEMA);
            assert!(
                text.contains(&format!("{field} = \"s3://b/x\" is on S3")),
                "{text}"
            );
            let text = message(&format!("product = \"o\"\n{field} = \"gs://b/x\""), SCHEMA);
            assert!(
                text.contains(&format!("{field} = \"gs://b/x\" is a URL")),
                "{text}"
            );
        }
    }

    #[test]
    fn state_and_quarantine_go_on_s3_only_beside_a_delta_table_on_s3() {
        let table = "publish_root = \"s3://b/lake/o\"\ntable_format = \"delta\"";
        let head = format!(
            "product = \"o\"\n{table}\nstate_root = \"s3://b/state/o\"\n\
             quarantine_root = \"s3://b/q/o/\""
        );
        let config = parse(&head, SCHEMA).expect("S3 roots beside an S3 table");
        assert_eq!(config.state_root, Path::new("s3://b/state/o/"));
        assert_eq!(config.quarantine_root, Path::new("s3://b/q/o/"));
        for local in ["", "publish_root = \"lake/o\"\ntable_format = \"delta\""] {
            let text = message(
                &format!("product = \"o\"\n{local}\nquarantine_root = \"s3://b/q\""),
                SCHEMA,
            );
            assert!(
                text.contains("quarantine_root") && text.contains("requires a Delta table on S3"),
                "{text}"
            );
        }
        for overlap in ["s3://b/lake/o/state", "s3://b/lake"] {
            let text = message(
                &format!("product = \"o\"\n{table}\nstate_root = \"{overlap}\""),
                SCHEMA,
            );
            assert!(
                text.contains("state_root") && text.contains("overlap"),
                "{text}"
            );
        }
    }

    #[test]
    fn state_or_quarantine_inside_the_inbox_is_refused() {
        for head in [
            "state_root = \"inbox/state\"",
            "quarantine_root = \"inbox/q\"",
            "inbox = \"state/orders/in\"\nstate_root = \"state/orders\"",
        ] {
            let text = message(&format!("product = \"orders\"\n{head}"), SCHEMA);
            assert!(
                text.contains("inbox") && text.contains("overlap"),
                "{head}: {text}"
            );
        }
    }

    #[test]
    fn max_line_bytes_is_capped() {
        assert!(
            parse(
                &format!("product = \"o\"\nmax_line_bytes = {MAX_LINE_BYTES}"),
                SCHEMA
            )
            .is_ok()
        );
        let text = message(
            &format!("product = \"o\"\nmax_line_bytes = {}", MAX_LINE_BYTES + 1),
            SCHEMA,
        );
        assert!(
            text.contains("max_line_bytes") && text.contains("16 MiB"),
            "{text}"
        );
    }

    #[test]
    fn value_rules_must_fit_their_field() {
        let with = |seq: &str| SCHEMA.replace(r#"seq        = { type = "int" }"#, seq);
        for (seq, wanted) in [
            (
                r#"seq = { type = "int", one_of = ["a"] }"#,
                "must list integers",
            ),
            (r#"seq = { type = "int", one_of = [] }"#, "is empty"),
            (
                r#"seq = { type = "int", min = "now" }"#,
                "must be an integer",
            ),
            (
                r#"seq = { type = "string", min = 1 }"#,
                "takes one_of, not min",
            ),
            (
                r#"seq = { type = "timestamp", one_of = ["x"] }"#,
                "not one_of",
            ),
            (
                r#"seq = { type = "timestamp", max = "now+10x" }"#,
                "now+10m",
            ),
            (
                r#"seq = { type = "int", min = 0, on_violation = "drop" }"#,
                "on_violation",
            ),
            (r#"seq = { type = "int", min = 0, mostly = 1.5 }"#, "mostly"),
            (r#"seq = { type = "int", mostly = 0.9 }"#, "no rule"),
        ] {
            let text = message("product = \"o\"", &with(seq));
            assert!(
                text.contains(wanted) && text.contains("seq"),
                "{seq}: {text}"
            );
        }
        let config = parse(
            "product = \"o\"",
            &with(r#"seq = { type = "int", one_of = [1, 2], max = 5, mostly = 0.99 }"#),
        )
        .unwrap();
        assert_eq!(config.mostly, [("seq".to_owned(), 0.99)]);
        let seq = config.schema.index_of("seq").unwrap();
        assert!(config.schema.fields[seq].rules.is_some());
    }

    #[test]
    fn caps_must_be_positive() {
        for (head, field) in [
            ("max_dates = 0", "max_dates"),
            ("files_per_date = -1", "files_per_date"),
            ("target_file_rows = 0", "target_file_rows"),
            ("max_line_bytes = 0", "max_line_bytes"),
            ("keep_generations = 0", "keep_generations"),
            ("max_rejected_lines = -5", "max_rejected_lines"),
            ("max_shrink = 1.5", "max_shrink"),
            ("max_growth = 0.5", "max_growth"),
            ("max_growth = -1.0", "max_growth"),
            ("write_mode = \"upsert\"", "write_mode"),
            ("typo_field = 1", "typo_field"),
        ] {
            let text = message(&format!("product = \"o\"\n{head}"), SCHEMA);
            assert!(text.contains(field), "{head}: {text}");
        }
    }
}
