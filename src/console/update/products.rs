//! The Products screen: moving over the products, `Enter` to show one (a fresh App over
//! its config, the Products list carried over), `Esc` from a product's top level back
//! to the list, and the summaries a reader thread reports.

use super::cursor::move_cursor;
use crate::console::app::{App, View};
use crate::console::msg::{Effect, Intent};
use crate::console::products::{Summary, file_name};

/// An intent on the Products screen.
pub fn on_intent(app: &mut App, intent: Intent) -> Vec<Effect> {
    let page = app.page();
    let Some(products) = &mut app.products else {
        return Vec::new();
    };
    if move_cursor(&mut products.cursor, products.rows.len(), intent, page) {
        return Vec::new();
    }
    match intent {
        Intent::Open => return enter(app),
        Intent::Reload => return vec![Effect::Summarize],
        Intent::Show(_) | Intent::Run | Intent::Filter => {
            app.info("Enter shows the product under the cursor");
        }
        _ => {}
    }
    Vec::new()
}

/// Shows the product under the cursor, as a console opened on it alone would start.
fn enter(app: &mut App) -> Vec<Effect> {
    let Some(products) = &app.products else {
        return Vec::new();
    };
    let index = products.cursor;
    let Some(row) = products.rows.get(index) else {
        return Vec::new();
    };
    let config = match &row.entry.config {
        Ok(config) => config.clone(),
        Err(error) => {
            let text = format!("{} did not load: {error}", file_name(&row.entry.file));
            app.error(text);
            return Vec::new();
        }
    };
    let mut fresh = App::new(config, app.theme.clone());
    fresh.products = app.products.take();
    fresh.size = app.size;
    fresh.next_id = app.next_id;
    fresh.ticks = app.ticks;
    if let Some(products) = &mut fresh.products {
        products.open = Some(index);
    }
    *app = fresh;
    vec![
        Effect::Enter { product: index },
        Effect::Reload,
        Effect::Summarize,
    ]
}

/// Back to the Products screen, unless a landing or restore is running.
pub fn leave(app: &mut App) -> Vec<Effect> {
    if let Some(task) = &app.task {
        let text = format!(
            "{} is in progress; go back when it has finished",
            task.title
        );
        app.warn(text);
        return Vec::new();
    }
    app.view = View::Products;
    app.message = None;
    if let Some(products) = &mut app.products {
        products.open = None;
    }
    vec![Effect::Leave, Effect::Summarize]
}

/// Each product's fresh summary, by row.
pub fn summaries(app: &mut App, read: Result<Vec<(usize, Summary)>, String>) {
    match read {
        Ok(read) => {
            let Some(products) = &mut app.products else {
                return;
            };
            for (i, summary) in read {
                if let Some(row) = products.rows.get_mut(i) {
                    row.summary = Some(summary);
                }
            }
        }
        Err(error) => app.error(error),
    }
}
