//! The harness: the kit's [`kit::Product`] holding a copy of the samples, with a console
//! over it, driven by intents or keys, drawn after each step.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use wharf::config::Config;
use wharf::console::app::{Badge, Dialog, Finished};
use wharf::console::changes::Changes;
use wharf::console::{Console, Incoming, Intent, Msg, theme};
use wharf::contract::Value;
use wharf::land::RunStatus;

use crate::kit;

/// A console over a product's folder.
pub struct Product {
    pub folder: kit::Product,
    pub console: Console,
}

impl Product {
    /// A console over a copy of the samples, nothing landed yet.
    pub fn samples() -> Product {
        Product::samples_with("")
    }

    /// The samples with `settings` added to the top of their config.
    pub fn samples_with(settings: &str) -> Product {
        Product::samples_edited(settings, ("", ""))
    }

    /// The samples with `settings` added to the top of their config and its text `old`
    /// replaced by `new`.
    pub fn samples_edited(settings: &str, (old, new): (&str, &str)) -> Product {
        let folder = kit::Product::samples();
        let text = std::fs::read_to_string(&folder.config).expect("the samples' config");
        let text = if old.is_empty() {
            text
        } else {
            text.replace(old, new)
        };
        std::fs::write(&folder.config, format!("{settings}\n{text}")).expect("config");
        let config = Config::load(&folder.config).expect("config");
        let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
        settle(&mut console);
        Product { folder, console }
    }

    /// The samples with the first input landed, then a late fix for its date arrived in
    /// the inbox and selected: a run of it would shrink that date.
    pub fn late_fix_selected() -> Product {
        Product::late_fix_selected_with("")
    }

    /// [`Product::late_fix_selected`], `settings` added to the config.
    pub fn late_fix_selected_with(settings: &str) -> Product {
        let mut p = Product::samples_with(settings);
        p.land_selected();
        crate::fixture::write_input(
            p.folder.path(),
            "04-late-fix.jsonl",
            crate::fixture::LATE_FIX.as_bytes(),
            9,
        );
        p.step_and_draw(Intent::Reload);
        p.select("04-late-fix.jsonl");
        p
    }

    /// `rel` inside the product's folder.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.folder.path().join(rel)
    }

    /// Applies `msg`, waits for the work it started, draws; returns the screen.
    pub fn step_and_draw(&mut self, msg: impl Into<Msg>) -> String {
        self.console.step(msg);
        settle(&mut self.console);
        let mut terminal = Terminal::new(TestBackend::new(120, 36)).expect("terminal");
        self.console.draw(&mut terminal).expect("draw");
        terminal.backend().to_string()
    }

    pub fn steps(&mut self, intents: impl IntoIterator<Item = Intent>) -> String {
        intents
            .into_iter()
            .map(|c| self.step_and_draw(c))
            .last()
            .unwrap_or_default()
    }

    /// Types the word `shrink` into an open shrink confirmation, submits it, and closes
    /// the result.
    pub fn confirm_shrink(&mut self) -> String {
        self.steps(
            "shrink"
                .chars()
                .map(Intent::Input)
                .chain([Intent::Submit, Intent::Back]),
        )
    }

    /// A key through the keymap, as the terminal would send it.
    pub fn key(&mut self, code: KeyCode) -> String {
        let event = TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE));
        self.console.handle(Incoming::Terminal(event));
        self.step_and_draw(Msg::Tick)
    }

    pub fn select(&mut self, name: &str) {
        self.console.step(Intent::Top);
        while self.current() != name {
            let before = self.console.app.inbox.cursor;
            self.console.step(Intent::Down);
            assert_ne!(
                before, self.console.app.inbox.cursor,
                "{name} is not in the inbox"
            );
        }
        settle(&mut self.console);
    }

    pub fn current(&self) -> String {
        self.console
            .app
            .current()
            .map(|r| r.entry.name.clone())
            .unwrap_or_default()
    }

    pub fn badge(&self, name: &str) -> Badge {
        let row = self
            .console
            .app
            .inbox
            .rows
            .iter()
            .find(|r| r.entry.name == name);
        row.map(|r| r.badge).expect("in the inbox")
    }

    pub fn lake(&self) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
        kit::tree(&self.folder.publish)
    }

    pub fn checkpoint(&self, input: &str) -> PathBuf {
        self.folder.state.join(format!("checkpoints/{input}.json"))
    }

    /// Lands the selected input through `r`, `y`.
    pub fn land_selected(&mut self) -> RunStatus {
        self.steps([Intent::Run, Intent::Confirm]);
        let Some(Dialog::Result(Finished::Landed { status, .. })) = &self.console.app.dialog else {
            panic!("no landing result: {:?}", self.console.app.dialog);
        };
        let status = *status;
        self.step_and_draw(Intent::Back);
        status
    }
}

pub fn settle(console: &mut Console) {
    assert!(
        console.settle(Duration::from_secs(30)),
        "workers did not finish"
    );
}

pub const FIRST: &str = "01-orders-2024-03-01.jsonl";
pub const LEAKY: &str = "03-leaky-export.jsonl";

/// Each changed key a diff lists: (date, key, change, {field: [before, after]}), its
/// values as `value` writes them (the Changes tab's and the History diff's tests).
pub type Listed<T> = Vec<(String, String, String, BTreeMap<String, [T; 2]>)>;

pub fn listed_by<T>(changes: &Changes, value: impl Fn(&Value) -> T) -> Listed<T> {
    let items = changes.items.iter().enumerate().map(|(i, item)| {
        let fields = changes
            .fields_of(item)
            .into_iter()
            .map(|(f, before, after)| {
                (
                    changes.field_name(f).to_owned(),
                    [value(&before), value(&after)],
                )
            });
        (
            item.event_date.to_string(),
            changes.key_text(i).to_owned(),
            item.kind.code().to_owned(),
            fields.collect(),
        )
    });
    items.collect()
}
