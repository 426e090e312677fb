//! [`Theme`]: the console's styles, from `themes/*.toml`.
//!
//! The three shipped themes (dark, light, high-contrast) are embedded with
//! `include_str!`. `--theme NAME` picks one, merged under the user's
//! `$XDG_CONFIG_HOME/wharf/themes/NAME.toml` (or `~/.config/…`) when that exists;
//! `--theme PATH` reads a file and merges it over the dark default. A user file only needs
//! the styles it changes. A bad file is a warning and a fallback, never a panic.
//! `NO_COLOR` (any non-empty value) drops every colour and keeps bold / reversed etc.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const DARK: &str = include_str!("../../themes/dark.toml");
const LIGHT: &str = include_str!("../../themes/light.toml");
const HIGH_CONTRAST: &str = include_str!("../../themes/high-contrast.toml");

/// The embedded themes by name.
pub const BUILT_IN: [(&str, &str); 3] = [
    ("dark", DARK),
    ("light", LIGHT),
    ("high-contrast", HIGH_CONTRAST),
];

macro_rules! theme_struct {
    ($($role:ident),* $(,)?) => {
        /// One style per role the views draw.
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct Theme {
            /// The theme's name, for the help screen.
            pub name: String,
            $(pub $role: Style,)*
        }

        /// Every role name a theme file may set.
        pub const ROLES: &[&str] = &[$(stringify!($role)),*];

        impl Theme {
            fn from_styles(name: String, styles: &BTreeMap<String, Style>) -> Theme {
                Theme {
                    name,
                    $($role: styles.get(stringify!($role)).copied().unwrap_or_default(),)*
                }
            }

            fn map_styles(mut self, f: impl Fn(Style) -> Style) -> Theme {
                $(self.$role = f(self.$role);)*
                self
            }
        }
    };
}

theme_struct!(
    text,
    muted,
    title,
    border,
    border_focus,
    selected,
    tab_active,
    key,
    new,
    landed,
    changed,
    refused,
    ignored,
    pending,
    accepted,
    rejected,
    breach,
    blank,
    kept,
    lost,
    ok,
    warning,
    error,
    gauge,
    dialog,
    masked,
);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTheme {
    name: Option<String>,
    #[serde(default)]
    styles: BTreeMap<String, RawStyle>,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStyle {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    dim: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underline: bool,
    #[serde(default)]
    reversed: bool,
}

impl RawStyle {
    fn style(&self, role: &str) -> Result<Style, String> {
        let color = |value: &Option<String>, which: &str| {
            match value {
            None => Ok(None),
            Some(text) => text.parse::<Color>().map(Some).map_err(|_| {
                format!("styles.{role}.{which} = {text:?} is not a colour; use a name, \"#rrggbb\" or 0-255")
            }),
        }
        };
        let mut style = Style::default();
        if let Some(fg) = color(&self.fg, "fg")? {
            style = style.fg(fg);
        }
        if let Some(bg) = color(&self.bg, "bg")? {
            style = style.bg(bg);
        }
        for (on, modifier) in [
            (self.bold, Modifier::BOLD),
            (self.dim, Modifier::DIM),
            (self.italic, Modifier::ITALIC),
            (self.underline, Modifier::UNDERLINED),
            (self.reversed, Modifier::REVERSED),
        ] {
            if on {
                style = style.add_modifier(modifier);
            }
        }
        Ok(style)
    }
}

/// Parses theme `text` into its name and styles; every role must be known and valid.
fn parse(text: &str) -> Result<(Option<String>, BTreeMap<String, Style>), String> {
    let raw: RawTheme = toml::from_str(text).map_err(|e| {
        let message = e.message().to_owned();
        message.split_whitespace().collect::<Vec<_>>().join(" ")
    })?;
    let mut styles = BTreeMap::new();
    for (role, spec) in &raw.styles {
        if !ROLES.contains(&role.as_str()) {
            return Err(format!(
                "styles.{role} is not a style; the styles are {}",
                ROLES.join(", ")
            ));
        }
        styles.insert(role.clone(), spec.style(role)?);
    }
    Ok((raw.name, styles))
}

fn built_in(name: &str) -> Option<&'static str> {
    BUILT_IN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The embedded theme `name` (dark when unknown).
pub fn embedded(name: &str) -> Theme {
    let text = built_in(name).unwrap_or(DARK);
    let (parsed, styles) = parse(text).unwrap_or_default();
    Theme::from_styles(parsed.unwrap_or_else(|| name.to_owned()), &styles)
}

/// Resolves `--theme` (a name, a path or nothing) against the user's config folder and
/// `NO_COLOR`; `env` looks up environment variables. Returns the theme and the warnings
/// to show the operator.
pub fn resolve(choice: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> (Theme, Vec<String>) {
    let mut warnings = Vec::new();
    let choice = choice.unwrap_or("dark");
    let is_path = choice.contains('/') || choice.ends_with(".toml");
    let (base_name, user_file) = if is_path {
        ("dark", Some(PathBuf::from(choice)))
    } else {
        let user = user_theme_dir(env)
            .map(|dir| dir.join(format!("{choice}.toml")))
            .filter(|p| p.is_file());
        if built_in(choice).is_none() && user.is_none() {
            warnings.push(format!(
                "theme {choice:?} is neither built in (dark, light, high-contrast) nor in the user theme folder; using dark"
            ));
            ("dark", None)
        } else if built_in(choice).is_some() {
            (choice, user)
        } else {
            ("dark", user)
        }
    };
    let (_, mut styles) = parse(built_in(base_name).unwrap_or(DARK)).unwrap_or_default();
    let mut name = base_name.to_owned();
    if let Some(path) = user_file {
        match read_user(&path) {
            Ok((user_name, user_styles)) => {
                styles.extend(user_styles);
                name = user_name.unwrap_or_else(|| path.display().to_string());
            }
            Err(e) => {
                warnings.push(format!("theme {}: {e}; using {base_name}", path.display()));
            }
        }
    }
    let mut theme = Theme::from_styles(name, &styles);
    if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        theme = without_colour(theme);
    }
    (theme, warnings)
}

fn read_user(path: &Path) -> Result<(Option<String>, BTreeMap<String, Style>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it ({e})"))?;
    parse(&text)
}

/// `$XDG_CONFIG_HOME/wharf/themes`, else `$HOME/.config/wharf/themes`.
pub fn user_theme_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .filter(|v| Path::new(v).is_absolute())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")))?;
    Some(base.join("wharf").join("themes"))
}

/// The theme with every colour removed; the cursor, the active tab and the gauge are
/// reversed so they still show.
pub fn without_colour(theme: Theme) -> Theme {
    let mut plain = theme.map_styles(|style| Style::default().add_modifier(style.add_modifier));
    for style in [&mut plain.selected, &mut plain.tab_active, &mut plain.gauge] {
        *style = style.add_modifier(Modifier::REVERSED);
    }
    plain
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn embedded_themes_parse_and_set_every_role() {
        for (name, text) in BUILT_IN {
            let (parsed, styles) = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(parsed.as_deref(), Some(name));
            for role in ROLES {
                assert!(styles.contains_key(*role), "{name} lacks {role}");
            }
        }
        assert_ne!(embedded("light").text, embedded("dark").text);
    }

    #[test]
    fn a_bad_user_theme_warns_and_falls_back() {
        let dir = tempfile::tempdir().unwrap();
        let themes = dir.path().join("wharf/themes");
        std::fs::create_dir_all(&themes).unwrap();
        std::fs::write(
            themes.join("mine.toml"),
            "[styles]\nkept = { fg = \"nope\" }\n",
        )
        .unwrap();
        std::fs::write(
            themes.join("ok.toml"),
            "[styles]\nkept = { fg = \"red\" }\n",
        )
        .unwrap();
        let home = dir.path().to_string_lossy().into_owned();
        let env = move |k: &str| (k == "XDG_CONFIG_HOME").then(|| home.clone());
        let (theme, warnings) = resolve(Some("mine"), &env);
        assert_eq!(theme, embedded("dark"));
        assert!(warnings[0].contains("styles.kept.fg"), "{warnings:?}");
        let (theme, warnings) = resolve(Some("ok"), &env);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(theme.kept, Style::default().fg(Color::Red));
        assert_eq!(
            theme.text,
            embedded("dark").text,
            "unset styles come from dark"
        );
        let (_, warnings) = resolve(Some("/no/such/theme.toml"), &no_env);
        assert!(warnings[0].contains("cannot read"), "{warnings:?}");
        let (theme, warnings) = resolve(Some("solarized"), &no_env);
        assert_eq!((theme, warnings.len()), (embedded("dark"), 1));
    }

    #[test]
    fn no_color_removes_every_colour() {
        let env = |k: &str| (k == "NO_COLOR").then(|| "1".to_owned());
        let (theme, _) = resolve(Some("light"), &env);
        assert_eq!(theme.text, Style::default());
        assert_eq!(theme.title.fg, None);
        assert!(theme.selected.add_modifier.contains(Modifier::REVERSED));
        assert!(theme.kept.add_modifier.contains(Modifier::BOLD));
    }
}
