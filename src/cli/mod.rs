//! The headless CLI for schedulers: one module per subcommand, `--json` everywhere,
//! exit codes from [`crate::exit`] (CONTRACT.md §8).

mod console;
mod diff;
mod history;
mod plan;
mod progress;
mod quarantine;
pub mod report;
mod restore;
mod run;
mod status;
mod watch;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::exit;
use crate::plan::DecideOptions;

/// Wharf lands closed JSONL event files into a Hive-partitioned Parquet dataset safely.
#[derive(Parser, Debug)]
#[command(name = "wharf", version, about)]
pub struct Cli {
    /// The product's config file [default: wharf.toml]. `console` takes it more than
    /// once, one product each.
    #[arg(long, short, global = true, value_name = "CONFIG", action = clap::ArgAction::Append)]
    pub config: Vec<PathBuf>,
    /// Print JSON on stdout instead of a report: one object (`watch`: one per outcome, a line each).
    #[arg(long, global = true)]
    pub json: bool,
    /// Say more about an error where there is more (a schema difference: both schemas
    /// whole), on stderr and in the `--json` error's `detail`.
    #[arg(long, global = true)]
    pub verbose: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show what landing INPUT would do, without writing anything.
    Plan {
        input: PathBuf,
        /// Plan as if the operator allowed dates to shrink beyond max_shrink.
        #[arg(long)]
        allow_shrink: bool,
        /// Plan as if the operator allowed dates to grow beyond max_growth.
        #[arg(long)]
        allow_growth: bool,
        /// Plan INPUT's bytes as a new input even if they have landed (a skip otherwise).
        #[arg(long)]
        reland: bool,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Show what landing INPUT would change, key by key, without writing anything.
    ///
    /// Per date the landing writes: keys inserted, removed and updated (each changed
    /// field as before → after) and the unchanged count, against the partition published
    /// now (merge mode: the merged date). With --json, one line per changed key:
    /// {"event_date","key","change","before","after"}. Exit codes as `plan`.
    Diff {
        input: PathBuf,
        /// Only this date, YYYY-MM-DD.
        #[arg(long, value_name = "DATE")]
        date: Option<String>,
        /// Diff as if the operator allowed dates to shrink beyond max_shrink.
        #[arg(long)]
        allow_shrink: bool,
        /// Diff as if the operator allowed dates to grow beyond max_growth.
        #[arg(long)]
        allow_growth: bool,
        /// Diff a landing of INPUT's bytes even if they have landed (a skip otherwise).
        #[arg(long)]
        reland: bool,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Land INPUT, or every closed input in the inbox, oldest first.
    ///
    /// An input whose checkpoint holds its bytes' SHA-256 has landed: it is skipped,
    /// whatever happened to its dates since. Landing those bytes again is an operator's
    /// act: `wharf run INPUT --reland`, planned and guarded like a new input.
    Run {
        input: Option<PathBuf>,
        /// Publish even where a date would lose more than max_shrink of its rows.
        #[arg(long)]
        allow_shrink: bool,
        /// Publish even where a date would grow past max_growth times its rows.
        #[arg(long)]
        allow_growth: bool,
        /// Write Prometheus metrics to PATH for node_exporter's textfile collector
        /// (atomically; counters and the last publish carry over from the previous file).
        #[arg(long, value_name = "PATH")]
        metrics_file: Option<PathBuf>,
        /// Land INPUT's bytes again although they have landed (needs INPUT).
        #[arg(long, requires = "input")]
        reland: bool,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// The published dates, their owners and rows.
    Status,
    /// The run log, newest last; with RUN_ID, only that landing (a prefix is enough).
    History {
        /// A run id from an alert, a lineage event or a file's metadata.
        #[arg(value_name = "RUN_ID")]
        run_id: Option<String>,
        /// Show only the last N runs.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// List quarantined inputs, or one input's rejects by hash (a prefix is enough).
    Quarantine { hash: Option<String> },
    /// Bring back DATE's previous generation from the trash.
    Restore {
        /// The date, YYYY-MM-DD.
        date: String,
        /// Confirm: replace the live partition with the previous generation.
        #[arg(long)]
        yes: bool,
    },
    /// Land each closed input as it is renamed into the inbox, until SIGTERM or Ctrl-C.
    ///
    /// Wakes on the inbox's file-system events and rescans it at start and every
    /// --rescan seconds (events can be lost); an S3 inbox, which has no events, is listed
    /// every --poll seconds after its last key and in full every --rescan seconds, each
    /// flag winning over the config's `poll` and `rescan` when given. Each input lands as
    /// `wharf run` lands it,
    /// under the product's lock; when another run holds it, the input is tried again a
    /// second later. A landed file is not read again until it changes. Prints one line
    /// per outcome (with --json, the object `wharf run --json` prints). SIGTERM or
    /// Ctrl-C lets the current landing finish, then exits 0; a second one stops at once.
    Watch {
        /// List the inbox again at least every SECS seconds, whatever the events say
        /// [default: 10]. On an S3 inbox: list every key every SECS seconds (the
        /// reconcile, which finds a key sorting before the last one seen); given, it wins
        /// over the config's `rescan` [default there: 10m].
        #[arg(long, value_name = "SECS",
              value_parser = clap::value_parser!(u64).range(1..))]
        rescan: Option<u64>,
        /// S3 inbox only: list the keys after the last one seen every SECS seconds; given,
        /// it wins over the config's `poll` [default there: 2s]. A local inbox wakes on
        /// file-system events, so there it is a usage error.
        #[arg(long, value_name = "SECS",
              value_parser = clap::value_parser!(u64).range(1..))]
        poll: Option<u64>,
        /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9464).
        #[arg(long, value_name = "ADDR")]
        metrics: Option<String>,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// The operator console. With several products (--config given more than once, or
    /// --configs), it opens on a Products screen, one row per product.
    Console {
        /// A theme name (dark, light, high-contrast) or a path to a theme file.
        #[arg(long)]
        theme: Option<String>,
        /// A folder of product configs: every *.toml in it, by name, one product each.
        #[arg(long, value_name = "DIR")]
        configs: Option<PathBuf>,
        #[command(flatten)]
        engine: EngineArgs,
    },
}

/// `--engine` and `--remote`: the config's `[engine]`, overridden for one command.
#[derive(clap::Args, Debug, Default)]
pub struct EngineArgs {
    /// The engine that does the row work (overrides the config's engine kind).
    #[arg(long, value_name = "KIND", value_parser = ["local", "spark"])]
    pub engine: Option<String>,
    /// The Spark Connect server, sc://host:15002 (overrides the config's engine remote).
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
}

impl EngineArgs {
    /// `config` with these flags over its `[engine]`.
    pub(crate) fn apply(&self, mut config: Config) -> Result<Config> {
        config.engine = config
            .engine
            .overridden(self.engine.as_deref(), self.remote.as_deref())
            .map_err(|message| Error::Usage(format!("--engine/--remote: {message}")))?;
        Ok(config)
    }
}

/// Parses the command line, runs it and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Arguments are quoted back: a name with escapes in it stays inert.
            let text = e.render().to_string();
            let text = text.trim_end();
            if e.use_stderr() {
                say(text);
            } else {
                let _ = emit(text);
            }
            return ExitCode::from(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::SUCCESS
            });
        }
    };
    let (json, verbose) = (cli.json, cli.verbose);
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let code = e.exit_code();
            let more = e.verbose().filter(|_| verbose);
            if json {
                let mut object = serde_json::json!({ "error": e.to_string(), "exit_code": code });
                if let Some(more) = more {
                    object["detail"] = more.into();
                }
                let _ = emit(&object.to_string());
            }
            say(&format!("wharf: {e}"));
            if let Some(more) = more {
                say(&format!("wharf: {more}"));
            }
            ExitCode::from(code)
        }
    }
}

fn dispatch(cli: Cli) -> Result<u8> {
    let config = || Config::load(&one_config(&cli.config)?);
    match cli.command {
        Command::Plan {
            input,
            allow_shrink,
            allow_growth,
            reland,
            engine,
        } => {
            let options = guards(allow_shrink, allow_growth, reland);
            plan::plan(&engine.apply(config()?)?, &input, options, cli.json)
        }
        Command::Diff {
            input,
            date,
            allow_shrink,
            allow_growth,
            reland,
            engine,
        } => {
            let config = engine.apply(config()?)?;
            let options = guards(allow_shrink, allow_growth, reland);
            diff::diff(&config, &input, date.as_deref(), options, cli.json)
        }
        Command::Run {
            input,
            allow_shrink,
            allow_growth,
            reland,
            metrics_file,
            engine,
        } => {
            let config = engine.apply(config()?)?;
            let options = run::RunOptions {
                options: guards(allow_shrink, allow_growth, reland),
                metrics_file,
            };
            run::run(&config, input.as_deref(), &options, cli.json)
        }
        Command::Status => status::status(&config()?, cli.json),
        Command::History { run_id, limit } => {
            history::history(&config()?, run_id.as_deref(), limit, cli.json)
        }
        Command::Quarantine { hash } => {
            quarantine::quarantine(&config()?, hash.as_deref(), cli.json)
        }
        Command::Restore { date, yes } => restore::restore(&config()?, &date, yes, cli.json),
        Command::Watch {
            rescan,
            poll,
            metrics,
            engine,
        } => watch::watch(
            engine.apply(config()?)?,
            watch::Flags { rescan, poll },
            metrics.as_deref(),
            cli.json,
        ),
        Command::Console {
            theme,
            configs,
            engine,
        } => console::console(&cli.config, configs.as_deref(), theme.as_deref(), &engine),
    }
}

/// What `--allow-shrink` and `--allow-growth` allow for one run (§5.9–10), and whether
/// `--reland` lands landed bytes again (§5.4).
fn guards(allow_shrink: bool, allow_growth: bool, reland: bool) -> DecideOptions {
    DecideOptions {
        allow_shrink,
        allow_growth,
        reland,
    }
}

/// The one config a command other than `console` reads: `--config`, or `wharf.toml`.
fn one_config(given: &[PathBuf]) -> Result<PathBuf> {
    match given {
        [] => Ok(PathBuf::from(DEFAULT_CONFIG)),
        [one] => Ok(one.clone()),
        many => Err(Error::Usage(format!(
            "--config is given {} times; only `wharf console` opens more than one product",
            many.len()
        ))),
    }
}

/// The config read when `--config` is not given.
const DEFAULT_CONFIG: &str = "wharf.toml";

/// Writes `message` and a newline to stderr, each line through the one sanitiser
/// ([`crate::console::sanitize::clean`]): an error quotes names and paths from the inbox
/// and the config.
pub fn say(message: &str) {
    let lines: Vec<_> = message
        .lines()
        .map(crate::console::sanitize::clean)
        .collect();
    eprintln!("{}", lines.join("\n"));
}

/// Writes `text` and a newline to stdout, a closed pipe not being an error. Controls left
/// in it but newlines are escaped ([`crate::console::sanitize::escape_controls`]).
pub fn emit(text: &str) -> Result<()> {
    let text = crate::console::sanitize::escape_controls(text);
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io(
            std::path::Path::new("<stdout>"),
            "write",
            "check the output stream",
            e,
        )),
        _ => Ok(()),
    }
}
