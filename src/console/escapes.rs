//! An input whose name, field names and values carry terminal escape sequences (ESC, an
//! OSC 52 clipboard write, a one-byte C1 CSI, a bidi override) renders inert on every
//! screen it reaches: no control character in any cell, the tampering visible as `␛` /
//! `�`, and the bytes a real terminal backend writes hold no OSC and no BEL.

use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

use super::app::View;
use super::msg::{Intent, Msg};
use super::runtime::Console;
use super::sanitize::ESC_MARK;
use super::theme;
use crate::config::Config;

use super::fixture;

const NAME: &str = "evil\u{1b}]52;c;ZXZpbA==\u{7}\u{9b}31m\u{202e}.jsonl";

fn hostile_input() -> Vec<u8> {
    let ts = "\"updated_at\":\"2024-03-01T10:00:00Z\"";
    let mut bytes = Vec::new();
    // Valid JSON whose decoded values hold ESC, OSC 52, BEL, C1 CSI and a bidi override.
    bytes.extend(format!("{{\"event_id\":\"e\\u001b]52;c;ZXZpbA==\\u0007\",\"order_id\":1,\"status\":\"\\u001b[31mRED\\u009b\",{ts},\"city\":\"\\u202egnp.exe\"}}\n").as_bytes());
    // Raw control bytes inside a string: malformed JSON, shown as a raw line.
    bytes.extend(
        format!(
            "{{\"event_id\":\"x\u{1b}]52;c;QUJD\u{7}\",\"order_id\":2,\"status\":\"S\",{ts}}}\n"
        )
        .as_bytes(),
    );
    // An unknown field whose name is an escape sequence: a breach naming that field.
    bytes.extend(
        format!("{{\"event_id\":\"u\",\"order_id\":3,\"status\":\"S\",{ts},\"\\u001b[2Jx\":1}}\n")
            .as_bytes(),
    );
    bytes
}

/// Draws the console; fails on any control character in a cell. Returns the text.
fn inert_screen(console: &mut Console, what: &str) -> String {
    let mut text = String::new();
    for (width, height) in [(80, 24), (160, 48)] {
        console.step(Msg::Resize(width, height));
        let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
        console.draw(&mut terminal).expect("draw");
        for cell in terminal.backend().buffer().content() {
            let symbol = cell.symbol();
            assert!(
                !symbol.chars().any(char::is_control),
                "{what}: control character in {symbol:?}"
            );
            text.push_str(symbol);
        }
    }
    let written = Shared::default();
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(written.clone()),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, 160, 48)),
        },
    )
    .expect("terminal");
    console.draw(&mut terminal).expect("draw");
    let bytes = written.0.lock().expect("lock").clone();
    for (i, b) in bytes.iter().enumerate() {
        assert_ne!(*b, 0x07, "{what}: BEL written");
        if *b == 0x1b {
            assert_eq!(
                bytes.get(i + 1),
                Some(&b'['),
                "{what}: an escape that is not the backend's own CSI"
            );
        }
    }
    assert!(
        !String::from_utf8_lossy(&bytes).contains('\u{9b}'),
        "{what}: C1 CSI written"
    );
    text
}

/// The bytes a real backend writes, kept to look at.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn settle(console: &mut Console) {
    assert!(
        console.settle(std::time::Duration::from_secs(20)),
        "workers did not finish"
    );
}

#[test]
fn escape_sequences_in_names_and_values_render_inert() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = fixture::copy_samples(dir.path());
    fixture::write_input(dir.path(), NAME, &hostile_input(), 9);
    let config = Config::load(&config).expect("config");
    let mut c = Console::new(config, theme::embedded("dark"), Vec::new());
    settle(&mut c);
    c.step(Intent::Bottom);
    settle(&mut c);
    let name = c.app.current().map(|r| r.entry.name.clone());
    assert_eq!(
        name.as_deref(),
        Some(NAME),
        "the hostile input is the newest"
    );

    let mut seen = String::new();
    seen += &inert_screen(&mut c, "inbox and plan");
    for (what, intent) in [
        ("raw", Intent::NextPane),
        ("raw", Intent::NextPane),
        ("raw line 2", Intent::Down),
        ("ranked", Intent::NextPane),
    ] {
        c.step(intent);
        settle(&mut c);
        seen += &inert_screen(&mut c, what);
    }
    for (what, intent) in [("refusal", Intent::Run), ("result", Intent::Confirm)] {
        c.step(intent);
        settle(&mut c);
        seen += &inert_screen(&mut c, what);
    }
    for (what, intent) in [
        ("quarantine", Intent::Back),
        ("quarantine", Intent::Show(View::Quarantine)),
        ("rejects", Intent::Open),
        ("raw line", Intent::Open),
        ("history", Intent::Show(View::History)),
    ] {
        c.step(intent);
        settle(&mut c);
        seen += &inert_screen(&mut c, what);
    }
    assert!(
        seen.contains(ESC_MARK),
        "the escapes show as {ESC_MARK}, so they went through the sanitizer"
    );
    assert!(
        seen.contains("]52;c;ZXZpbA=="),
        "the payload is shown as plain text"
    );
    assert!(seen.contains("gnp.exe"), "the ranked fields were drawn");
}
