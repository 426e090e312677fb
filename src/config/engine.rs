//! The config's `[engine]` section: which [`EngineKind`] does the row work and, for
//! Spark, the Spark Connect `remote` (`sc://host:15002`, with the client's `;token=…`
//! and `;use_ssl=true` parameters). `--engine` and `--remote` override it through
//! [`EngineConfig::overridden`], validated by the same rules as the file.

use serde::Deserialize;

/// Which engine does the row work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineKind {
    /// This machine: `crate::engine::local`.
    #[default]
    Local,
    /// A Spark cluster through Spark Connect (the `spark` cargo feature).
    Spark,
}

/// The validated `[engine]` section: `remote` is `Some` whenever `kind` is Spark.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineConfig {
    pub kind: EngineKind,
    /// The Spark Connect connection string, parameters included (they may hold a token:
    /// show it through [`shown_remote`]).
    pub remote: Option<String>,
    /// The scheme the cluster's executors address an `s3://` Delta table by: `s3a`
    /// (Hadoop's S3A, the default) or `s3` (EMRFS, Databricks). See [`Self::s3_scheme`].
    pub s3_scheme: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEngine {
    kind: Option<String>,
    remote: Option<String>,
    s3_scheme: Option<String>,
}

impl RawEngine {
    pub(super) fn validate(self) -> Result<EngineConfig, String> {
        if let Some(scheme) = self.s3_scheme.as_deref()
            && !matches!(scheme, "s3a" | "s3")
        {
            return Err(format!(
                "engine s3_scheme = {scheme:?} is not one a Spark cluster writes S3 with; \
                 use \"s3a\" (Hadoop's S3A) or \"s3\" (EMRFS, Databricks)"
            ));
        }
        let base = EngineConfig {
            s3_scheme: self.s3_scheme,
            ..EngineConfig::default()
        };
        base.overridden(self.kind.as_deref(), self.remote.as_deref())
    }
}

impl EngineConfig {
    /// This config with `kind` and `remote` replaced where given (the `--engine` and
    /// `--remote` flags), checked as the file's `[engine]` is.
    pub fn overridden(&self, kind: Option<&str>, remote: Option<&str>) -> Result<Self, String> {
        let kind = match kind {
            None => self.kind,
            Some("local") => EngineKind::Local,
            Some("spark") => EngineKind::Spark,
            Some(other) => {
                return Err(format!(
                    "engine kind = {other:?} is not an engine; use \"local\" or \"spark\""
                ));
            }
        };
        let remote = match remote {
            Some(remote) => Some(check_remote(remote)?),
            None => self.remote.clone(),
        };
        if kind == EngineKind::Spark {
            if !cfg!(feature = "spark") {
                return Err(
                    "engine kind = \"spark\", but this wharf was built without Spark: \
                     cargo build --features spark (or set [engine] kind = \"local\")"
                        .to_owned(),
                );
            }
            if remote.is_none() {
                return Err(
                    "engine kind = \"spark\" needs the Spark Connect server: set \
                     [engine] remote = \"sc://host:15002\" or pass --remote"
                        .to_owned(),
                );
            }
        }
        Ok(EngineConfig {
            kind,
            remote,
            s3_scheme: self.s3_scheme.clone(),
        })
    }

    /// The scheme a Spark cluster's executors write an `s3://` table with.
    pub fn s3_scheme(&self) -> &str {
        self.s3_scheme.as_deref().unwrap_or("s3a")
    }

    /// What the console and the run log call the configured engine: `local`, or
    /// `spark sc://host:port` (never the connection string's parameters).
    pub fn describe(&self) -> String {
        match (self.kind, &self.remote) {
            (EngineKind::Spark, Some(remote)) => format!("spark {}", shown_remote(remote)),
            (EngineKind::Spark, None) => "spark".to_owned(),
            (EngineKind::Local, _) => "local".to_owned(),
        }
    }
}

/// `remote` without its `;name=value` parameters (a token among them) or a trailing `/`.
pub fn shown_remote(remote: &str) -> &str {
    let head = remote.split(';').next().unwrap_or_default();
    head.strip_suffix('/').unwrap_or(head)
}

/// A Spark Connect connection string: `sc://host[:port][/][;name=value…]`.
fn check_remote(remote: &str) -> Result<String, String> {
    let fix = "write it as sc://host:15002 (parameters as ;token=…;use_ssl=true)";
    let Some(rest) = remote.strip_prefix("sc://") else {
        return Err(format!(
            "engine remote {:?} is not a Spark Connect address; {fix}",
            shown_remote(remote)
        ));
    };
    let mut parts = rest.split(';');
    let authority = parts.next().unwrap_or_default().trim_end_matches('/');
    let host = authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host);
    if host.is_empty() || authority.contains('/') || remote.chars().any(char::is_whitespace) {
        return Err(format!(
            "engine remote {:?} names no host; {fix}",
            shown_remote(remote)
        ));
    }
    if let Some((_, port)) = authority.rsplit_once(':')
        && !authority.ends_with(']')
        && port.parse::<u16>().is_err()
    {
        return Err(format!(
            "engine remote {:?} has port {port:?}, not a number; {fix}",
            shown_remote(remote)
        ));
    }
    // A parameter's value may be a secret: name the parameter, never its value.
    for (index, param) in parts.enumerate() {
        if !param.contains('=') {
            return Err(format!(
                "engine remote {:?}: parameter {} is not name=value; {fix}",
                shown_remote(remote),
                index + 1
            ));
        }
    }
    Ok(remote.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_is_shown_without_its_parameters() {
        assert_eq!(shown_remote("sc://h:15002/;token=secret"), "sc://h:15002");
        assert_eq!(shown_remote("sc://h:15002"), "sc://h:15002");
        let config = EngineConfig {
            kind: EngineKind::Spark,
            remote: Some("sc://h:15002/;token=secret;use_ssl=true".into()),
            s3_scheme: None,
        };
        assert_eq!(config.describe(), "spark sc://h:15002");
        assert_eq!(EngineConfig::default().describe(), "local");
    }

    #[test]
    fn wrong_remotes_are_refused_naming_the_fix_and_never_a_secret() {
        let base = EngineConfig::default();
        for bad in [
            "http://h:15002",
            "sc://",
            "sc://:15002",
            "sc://h:port",
            "sc://h:15002/;token",
            "sc://h/x:1",
        ] {
            let err = base.overridden(None, Some(bad)).expect_err(bad);
            assert!(err.contains("sc://host:15002"), "{bad}: {err}");
        }
        let err = base
            .overridden(None, Some("grpc://h:1;token=hunter2"))
            .expect_err("not sc://");
        assert!(!err.contains("hunter2"), "{err}");
        for good in [
            "sc://h",
            "sc://h:15002",
            "sc://h:15002/;token=t;use_ssl=true",
        ] {
            let ok = base.overridden(None, Some(good)).expect(good);
            assert_eq!(ok.remote.as_deref(), Some(good));
            assert_eq!(ok.kind, EngineKind::Local);
        }
    }

    #[test]
    fn a_kind_is_local_or_spark_and_spark_needs_a_remote_and_the_feature() {
        let base = EngineConfig::default();
        let err = base
            .overridden(Some("duckdb"), None)
            .expect_err("no such kind");
        assert!(err.contains("\"local\" or \"spark\""), "{err}");
        let spark = base.overridden(Some("spark"), Some("sc://h:15002"));
        if cfg!(feature = "spark") {
            assert_eq!(spark.expect("spark").kind, EngineKind::Spark);
            let err = base.overridden(Some("spark"), None).expect_err("no remote");
            assert!(err.contains("remote"), "{err}");
        } else {
            let err = spark.expect_err("built without spark");
            assert!(err.contains("cargo build --features spark"), "{err}");
        }
        let local = base.overridden(Some("local"), None).expect("local");
        assert_eq!(local, EngineConfig::default());
    }
}
