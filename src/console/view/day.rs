//! The Plan tab's picture of each day: the rows a landing would leave on a date by UTC
//! hour, above the rows published there now, on one scale, so a fragment that covers two
//! hours of a full day shows at a glance beside the shrink guard's numbers.

use ratatui::style::Style;
use ratatui::symbols::bar::NINE_LEVELS;
use ratatui::text::{Line, Span};

use super::widgets::text;
use crate::console::app::{App, Loading};
use crate::plan::{DatePlan, Plan};

/// Dates drawn at most: a plan refused for spanning many dates would push the counts
/// out of sight.
const MOST_DATES: usize = 4;

/// Where the bars start: `    published  `.
const LABEL: usize = 15;

/// The picture's lines for `plan` in a pane `width` columns wide; none when the engine
/// did not count hours, or there is no room for one column an hour.
pub fn lines(app: &App, plan: &Plan, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    if !plan.dates.iter().any(|d| d.by_hour.is_some()) || width < LABEL + 24 {
        return Vec::new();
    }
    // Columns an hour: wider panes stretch the bars, up to four columns.
    let per_hour = ((width - LABEL) / 24).clamp(1, 4);
    let after = if plan.dates.iter().any(|d| d.merge.is_some()) {
        "merged"
    } else {
        "input"
    };
    let mut lines = vec![
        Line::default(),
        Line::from(vec![
            Span::styled("Day by hour (UTC)  ", t.title),
            Span::styled("█", t.new),
            Span::styled(format!(" {after}  "), t.muted),
            Span::styled("█", t.landed),
            Span::styled(" published now", t.muted),
        ]),
    ];
    for date in plan.dates.iter().take(MOST_DATES) {
        lines.extend(date_lines(app, date, per_hour, after));
    }
    if plan.dates.len() > MOST_DATES {
        lines.push(Line::styled(
            format!("  … {} more dates", plan.dates.len() - MOST_DATES),
            t.muted,
        ));
    }
    lines
}

/// A date's axis, its bars after the landing and its bars published now.
fn date_lines(app: &App, date: &DatePlan, per_hour: usize, after: &str) -> Vec<Line<'static>> {
    let t = &app.theme;
    let Some(hours) = date.by_hour else {
        return Vec::new();
    };
    let published = match (date.rows_before, &app.inbox.published_hours) {
        (None, _) => Err(("new date: nothing published".to_owned(), t.muted)),
        (Some(_), Loading::Ready(by_date)) => by_date
            .get(&date.event_date)
            .copied()
            .ok_or_else(|| ("not read".to_owned(), t.muted)),
        (Some(_), Loading::Failed(error)) => Err((format!("✗ {error}"), t.error)),
        (Some(_), _) => Err(("reading…".to_owned(), t.pending)),
    };
    let most = hours
        .iter()
        .chain(published.iter().flatten())
        .copied()
        .max()
        .unwrap_or(0);
    let label =
        |name: &str| Span::styled(format!("    {name:<width$}", width = LABEL - 4), t.muted);
    let published = match published {
        Ok(now) => bars(&now, most, per_hour, t.landed, t.muted),
        Err((why, style)) => vec![text(&why, style)],
    };
    vec![
        Line::from(vec![
            Span::styled(
                format!(
                    "  {:<width$}",
                    date.event_date.to_string(),
                    width = LABEL - 2
                ),
                t.text,
            ),
            Span::styled(axis(per_hour), t.muted),
        ]),
        Line::from(
            [
                vec![label(after)],
                bars(&hours, most, per_hour, t.new, t.muted),
            ]
            .concat(),
        ),
        Line::from([vec![label("published")], published].concat()),
    ]
}

/// One bar an hour, `per_hour` columns wide, scaled to `most`: an hour with any row
/// shows at least the lowest bar, an hour with none a dot.
fn bars(
    hours: &[u64; 24],
    most: u64,
    per_hour: usize,
    style: Style,
    empty: Style,
) -> Vec<Span<'static>> {
    hours
        .iter()
        .map(|&n| {
            if n == 0 || most == 0 {
                return Span::styled("·".repeat(per_hour), empty);
            }
            let level = (n * 8).div_ceil(most).clamp(1, 8) as usize;
            Span::styled(level_symbol(level).repeat(per_hour), style)
        })
        .collect()
}

fn level_symbol(level: usize) -> &'static str {
    match level {
        1 => NINE_LEVELS.one_eighth,
        2 => NINE_LEVELS.one_quarter,
        3 => NINE_LEVELS.three_eighths,
        4 => NINE_LEVELS.half,
        5 => NINE_LEVELS.five_eighths,
        6 => NINE_LEVELS.three_quarters,
        7 => NINE_LEVELS.seven_eighths,
        _ => NINE_LEVELS.full,
    }
}

/// The hours 0, 6, 12 and 18 above their bars.
fn axis(per_hour: usize) -> String {
    let mut axis = vec![' '; 24 * per_hour];
    for hour in [0, 6, 12, 18] {
        for (i, c) in hour.to_string().chars().enumerate() {
            axis[hour * per_hour + i] = c;
        }
    }
    axis.into_iter().collect::<String>().trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_marks_every_sixth_hour_above_its_bar() {
        assert_eq!(axis(1), "0     6     12    18");
        assert_eq!(&axis(2)[24..26], "12");
    }

    #[test]
    fn any_row_shows_and_the_fullest_hour_is_full() {
        let mut hours = [0; 24];
        hours[10] = 1;
        hours[11] = 800;
        let spans = bars(&hours, 800, 1, Style::new(), Style::new());
        let drawn: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(drawn.chars().nth(10), Some('▁'), "{drawn}");
        assert_eq!(drawn.chars().nth(11), Some('█'), "{drawn}");
        assert_eq!(drawn.chars().next(), Some('·'), "{drawn}");
    }
}
