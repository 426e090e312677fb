//! The operator console (`wharf console`): see what a landing will do, then do it.
//!
//! One model, messages, and a view that cannot mutate (STYLE.md):
//! - [`app::App`] is the whole state; [`keymap`] turns keys into [`msg::Intent`]s;
//!   [`update::update`] is the only place the App changes, applying [`msg::Msg`]s and
//!   returning [`msg::Effect`]s; [`view::view`] draws `&App`.
//! - [`runtime::Console`] carries out effects: reads on reader threads, long work (hashing,
//!   planning, landing, restoring, indexing, ranking) on [`workers`] threads reporting
//!   over the one event channel that also carries terminal input and the inbox watcher.
//! - Everything it decides comes from the core: `land::plan_input`, `land::run`,
//!   `land::restore::restore`; [`ranked`] and [`raw`] only re-read an input with the
//!   core's `input::scan` / `contract::classify` to show what the plan does not keep, and
//!   [`changes`] is `land::preview` with `diff`, as `wharf diff` uses them; [`landed`]
//!   diffs a past landing's two generations (`PublishRoot::past_landing`) into the same model.
//! - Opened with several configs ([`open`]), it starts on a Products screen
//!   ([`products`], summaries read by [`summary`]); `Enter` shows one product as above.
//! - Strings from files are drawn through [`sanitize::clean`]; prohibited values are
//!   masked by [`mask`] before any line is shown. Themes: [`theme`].

pub mod app;
pub mod bindings;
pub mod changes;
pub mod keymap;
pub mod landed;
pub mod lines;
pub mod load;
pub mod mask;
pub mod msg;
pub mod open;
pub mod products;
pub mod ranked;
pub mod raw;
pub mod runtime;
pub mod sanitize;
pub mod summary;
pub mod theme;
pub mod update;
pub mod view;
pub mod workers;

#[cfg(test)]
mod escapes;
#[cfg(test)]
#[path = "../../tests/kit/fixture.rs"]
mod fixture;
#[cfg(test)]
mod module_graph;
#[cfg(test)]
mod snapshots;

use std::io::Stdout;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub use msg::{Intent, Msg};
pub use runtime::{Console, Incoming, event_loop};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::exit;

/// Runs the console over one product until the operator quits. The terminal is
/// restored on quit, on an error and on a panic.
pub fn run(config: &Config, theme: Option<&str>) -> Result<u8> {
    let (theme, warnings) = theme::resolve(theme, &|name| std::env::var(name).ok());
    run_console(Console::new(config.clone(), theme, warnings))
}

/// Runs the console over several products, opening on the Products screen.
pub fn run_products(entries: Vec<products::ProductEntry>, theme: Option<&str>) -> Result<u8> {
    let (theme, warnings) = theme::resolve(theme, &|name| std::env::var(name).ok());
    run_console(Console::products(entries, theme, warnings))
}

fn run_console(mut console: Console) -> Result<u8> {
    if let Err(e) = console.watch() {
        console
            .app
            .warn(format!("the inbox is not watched ({e}); R reads it again"));
    }
    let mut terminal = enter()?;
    let restore_guard = Restore;
    let (width, height) = crossterm::terminal::size().unwrap_or((80, 24));
    console.step(Msg::Resize(width, height));
    let stop = Arc::new(AtomicBool::new(false));
    spawn_input(console.sender(), stop.clone())?;
    let result = event_loop(&mut terminal, &mut console, &mut |_, _| {});
    stop.store(true, Ordering::Relaxed);
    drop(terminal);
    drop(restore_guard);
    // The process ends next: freeing a ranked view of millions of rows would only delay
    // the prompt, so the model is left to the OS.
    std::mem::forget(console);
    result.map(|()| exit::SUCCESS)
}

fn terminal_error(action: &'static str, e: std::io::Error) -> Error {
    Error::io(
        std::path::Path::new("<terminal>"),
        action,
        "run the console in an interactive terminal",
        e,
    )
}

/// Raw mode, the alternate screen, and a panic hook that restores both first.
fn enter() -> Result<Terminal<CrosstermBackend<Stdout>>> {
    install_panic_hook();
    enable_raw_mode().map_err(|e| terminal_error("enter raw mode", e))?;
    if let Err(e) = execute!(std::io::stdout(), EnterAlternateScreen) {
        restore();
        return Err(terminal_error("enter the alternate screen", e));
    }
    Terminal::new(CrosstermBackend::new(std::io::stdout())).map_err(|e| {
        restore();
        terminal_error("set up the terminal", e)
    })
}

/// Leaves the alternate screen and raw mode; safe to call twice.
fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Restores the terminal when dropped (normal exit and errors).
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        restore();
    }
}

/// A panic on the UI thread restores the terminal before the message prints. A worker's
/// panic is caught by the runtime and shown in the console, so it must not print over
/// the screen.
fn install_panic_hook() {
    let ui = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == ui {
            restore();
            previous(info);
        }
    }));
}

/// Reads terminal events on a thread into the console's channel.
fn spawn_input(tx: std::sync::mpsc::Sender<Incoming>, stop: Arc<AtomicBool>) -> Result<()> {
    std::thread::Builder::new()
        .name("wharf-input".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match crossterm::event::poll(Duration::from_millis(100)) {
                    Ok(true) => match crossterm::event::read() {
                        Ok(event) => {
                            let read = Incoming::Read(event, std::time::Instant::now());
                            if tx.send(read).is_err() {
                                break;
                            }
                        }
                        Err(_) => break,
                    },
                    Ok(false) => {}
                    Err(_) => break,
                }
            }
        })
        .map(|_| ())
        .map_err(|e| terminal_error("start the input thread", e))
}
