//! Renders the console's screens to HTML, colours included, for `scripts/screenshots.sh`
//! to photograph with headless Chromium. The screens come from the real program: the
//! console's runtime driven by intents over a copy of the samples, drawn by its own view
//! into a `TestBackend` buffer.
//!
//! `cargo run --example console_screenshots -- OUT_DIR [THEME]` writes `OUT_DIR/NAME.html`
//! for each screen and prints `NAME WIDTH_PX HEIGHT_PX` lines.

#[path = "../tests/kit/fixture.rs"]
mod fixture;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use wharf::config::Config;
use wharf::console::app::View;
use wharf::console::{Console, Intent, Msg, theme};

const COLS: u16 = 150;
const ROWS: u16 = 40;
const CELL_W: f64 = 8.43;
const CELL_H: u32 = 16;

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .expect("usage: console_screenshots OUT_DIR [THEME]");
    let theme_name = args.next().unwrap_or_else(|| "dark".into());
    let out = Path::new(&out);
    std::fs::create_dir_all(out).expect("create the output folder");
    let work = tempdir();
    let config = Config::load(&fixture::copy_samples(&work)).expect("sample config");
    let theme = theme::embedded(&theme_name);
    let (fg, bg) = (theme.text.fg, theme.text.bg);
    let mut c = Console::new(config, theme, Vec::new());
    c.step(Msg::Resize(COLS, ROWS));
    settle(&mut c);
    let shoot = |c: &mut Console, name: &str, intents: Vec<Intent>| {
        for intent in intents {
            c.step(intent);
            settle(c);
        }
        let mut terminal = Terminal::new(TestBackend::new(COLS, ROWS)).expect("terminal");
        c.draw(&mut terminal).expect("draw");
        let html = to_html(terminal.backend().buffer(), fg, bg);
        std::fs::write(out.join(format!("{name}.html")), html).expect("write html");
        let width = (f64::from(COLS) * CELL_W).ceil() as u32 + 24;
        println!("{name} {width} {}", u32::from(ROWS) * CELL_H + 24);
    };
    shoot(&mut c, "inbox-plan", vec![Intent::Down]);
    shoot(
        &mut c,
        "raw",
        vec![Intent::NextPane, Intent::NextPane, Intent::NextMark],
    );
    shoot(&mut c, "ranked", vec![Intent::NextPane]);
    let to_plan = vec![
        Intent::PrevPane,
        Intent::PrevPane,
        Intent::Back,
        Intent::Top,
        Intent::Run,
    ];
    shoot(&mut c, "confirmation", to_plan);
    c.step(Intent::Confirm);
    settle(&mut c);
    shoot(
        &mut c,
        "refusal",
        vec![Intent::Back, Intent::Bottom, Intent::Run],
    );
    c.step(Intent::Confirm);
    settle(&mut c);
    fixture::write_input(&work, "04-late-fix.jsonl", fixture::LATE_FIX.as_bytes(), 9);
    // The late fix's day beside the published one, then what it would change.
    shoot(
        &mut c,
        "day",
        vec![Intent::Back, Intent::Reload, Intent::Bottom],
    );
    shoot(&mut c, "changes", vec![Intent::PrevPane]);
    let mut shrink = vec![
        Intent::PrevPane,
        Intent::PrevPane,
        Intent::PrevPane,
        Intent::Back,
        Intent::Run,
    ];
    shrink.extend("shr".chars().map(Intent::Input));
    shoot(&mut c, "shrink", shrink);
    for intent in "ink"
        .chars()
        .map(Intent::Input)
        .chain([Intent::Submit, Intent::Back])
    {
        c.step(intent);
        settle(&mut c);
    }
    shoot(
        &mut c,
        "quarantine",
        vec![Intent::Show(View::Quarantine), Intent::Down],
    );
    shoot(&mut c, "quarantine-line", vec![Intent::Open, Intent::Open]);
    let history = vec![
        Intent::Back,
        Intent::Back,
        Intent::Show(View::History),
        Intent::NextPane,
    ];
    shoot(&mut c, "history", history);
    shoot(
        &mut c,
        "help",
        vec![Intent::Show(View::Inbox), Intent::Help],
    );
    // Every product on one screen: the samples as landed above, and a second product
    // with nothing landed yet.
    let second = work.join("payments");
    std::fs::create_dir_all(&second).expect("a second product's folder");
    let second = fixture::copy_samples(&second);
    let text = std::fs::read_to_string(&second).expect("its config");
    std::fs::write(
        &second,
        text.replace("product = \"orders\"", "product = \"payments\""),
    )
    .expect("rename the second product");
    let files = [work.join("wharf.toml"), second];
    let entries = wharf::console::open::entries(&files, &Ok);
    let mut products = Console::products(entries, theme::embedded(&theme_name), Vec::new());
    products.step(Msg::Resize(COLS, ROWS));
    settle(&mut products);
    shoot(&mut products, "products", Vec::new());
    let _ = std::fs::remove_dir_all(&work);
}

fn settle(console: &mut Console) {
    assert!(
        console.settle(Duration::from_secs(30)),
        "workers did not finish"
    );
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wharf-screens-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp folder");
    dir
}

/// The buffer as an HTML page: one `<span>` per run of equally styled cells. The
/// backgrounds are one layer and the text another on top of it, so no row's background
/// can cover the underscore that hangs just below the row above.
fn to_html(buffer: &Buffer, fg: Option<Color>, bg: Option<Color>) -> String {
    let base_fg = css(fg.unwrap_or(Color::Gray), true);
    let base_bg = css(bg.unwrap_or(Color::Rgb(15, 17, 26)), false);
    let mut html = format!(
        "<!doctype html><meta charset=utf-8><style>body{{margin:0;padding:12px;background:{base_bg}}}\
         main{{position:relative;font:14px 'DejaVu Sans Mono',monospace;color:{base_fg}}}\
         section+section{{position:absolute;top:0;left:0}}section:first-child{{color:transparent}}\
         div{{height:{CELL_H}px;line-height:{CELL_H}px;white-space:pre}}</style><main>"
    );
    for layer in [Layer::Background, Layer::Text] {
        html.push_str("<section>");
        for y in 0..buffer.area.height {
            html.push_str("<div>");
            let mut run = String::new();
            let mut style = String::new();
            for x in 0..buffer.area.width {
                let cell = &buffer[(x, y)];
                let css_style = cell_css(cell, layer);
                if css_style != style {
                    flush(&mut html, &run, &style);
                    run.clear();
                    style = css_style;
                }
                run.push_str(cell.symbol());
            }
            flush(&mut html, &run, &style);
            html.push_str("</div>");
        }
        html.push_str("</section>");
    }
    html.push_str("</main>");
    html
}

#[derive(Clone, Copy, PartialEq)]
enum Layer {
    Background,
    Text,
}

/// A cell's CSS in one layer: its background, or its colour and font.
fn cell_css(cell: &ratatui::buffer::Cell, layer: Layer) -> String {
    let (mut fg, mut bg) = (cell.fg, cell.bg);
    if cell.modifier.contains(Modifier::REVERSED) {
        std::mem::swap(&mut fg, &mut bg);
    }
    let mut out = String::new();
    if layer == Layer::Background {
        if bg != Color::Reset {
            let _ = write!(out, "background:{};", css(bg, false));
        }
        return out;
    }
    if fg != Color::Reset {
        let _ = write!(out, "color:{};", css(fg, true));
    }
    for (flag, rule) in [
        (Modifier::BOLD, "font-weight:bold;"),
        (Modifier::DIM, "opacity:.6;"),
        (Modifier::ITALIC, "font-style:italic;"),
        (Modifier::UNDERLINED, "text-decoration:underline;"),
    ] {
        if cell.modifier.contains(flag) {
            out.push_str(rule);
        }
    }
    out
}

fn flush(html: &mut String, run: &str, style: &str) {
    if run.is_empty() {
        return;
    }
    let escaped = run
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let _ = write!(html, "<span style=\"{style}\">{escaped}</span>");
}

/// A colour as CSS; the 16 named colours as xterm draws them.
fn css(color: Color, foreground: bool) -> String {
    let named = |i: usize| -> &'static str {
        [
            "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
            "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
        ][i]
    };
    match color {
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Reset if foreground => "inherit".into(),
        Color::Reset => "transparent".into(),
        Color::Black => named(0).into(),
        Color::Red => named(1).into(),
        Color::Green => named(2).into(),
        Color::Yellow => named(3).into(),
        Color::Blue => named(4).into(),
        Color::Magenta => named(5).into(),
        Color::Cyan => named(6).into(),
        Color::Gray => named(7).into(),
        Color::DarkGray => named(8).into(),
        Color::LightRed => named(9).into(),
        Color::LightGreen => named(10).into(),
        Color::LightYellow => named(11).into(),
        Color::LightBlue => named(12).into(),
        Color::LightMagenta => named(13).into(),
        Color::LightCyan => named(14).into(),
        Color::White => named(15).into(),
        Color::Indexed(i) if i < 16 => named(usize::from(i)).into(),
        Color::Indexed(i) => format!("var(--c{i}, #888)"),
    }
}
