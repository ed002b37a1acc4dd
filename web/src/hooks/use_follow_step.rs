//! Keeps the current step in view in the compare view's diagrams and a short run's log, and
//! brings a chosen finding's mark into view.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};
use yew::prelude::*;

use super::use_window::measure;
use crate::viz::history::Highlight;
use crate::viz::run::TrackRef;
use crate::viz::state::Viz;
use crate::viz::window::{below_cover, reveal_x, row_on_screen, Focus, View};
use fencelab_core::picture::layout::{Fit, LONG_RUN, ROW};

/// Roughly how tall the lane headers are above a diagram's drawing, inside its scrolling box.
pub const HEADS: f64 = 70.0;

/// The scrolling boxes that follow the current step.
#[derive(Clone, Default, PartialEq)]
pub struct FollowRefs {
    /// The diagram's box in single mode.
    pub diagram: NodeRef,
    /// The log's list.
    pub log: NodeRef,
    /// The two diagrams' boxes in compare mode.
    pub compare: (NodeRef, NodeRef),
}

/// A compare-mode diagram to keep in view: its box, the current row, the current lanes.
type Follow = (NodeRef, f64, Option<(f64, f64)>);

/// Scrolls `container` to where `to` moves its view, as the page has it now.
fn scroll(container: &Element, to: impl FnOnce(View) -> View) {
    let view = measure(container);
    if view.height <= 0.0 {
        return;
    }
    let moved = to(view);
    if moved.top != view.top {
        container.set_scroll_top(moved.top as i32);
    }
    if moved.left != view.left {
        container.set_scroll_left(moved.left as i32);
    }
}

/// Scrolls the boxes that [`use_window`](super::use_window) does not move to the current step
/// whenever the reader moves or the run changes: the compare view's two diagrams, and the log of
/// a short run, whose rows wrap, so their places come from the page.
#[hook]
pub fn use_follow_step(state: &Viz, refs: &FollowRefs) {
    let log_ref = refs.log.clone();
    let track = state.track();
    let short = track.len() <= LONG_RUN;
    let compared: Vec<Follow> = state
        .compare()
        .into_iter()
        .flat_map(|c| [(&c.left, &refs.compare.0), (&c.right, &refs.compare.1)])
        .filter_map(|(side, node)| {
            let run = side.run.as_ref().ok()?;
            let x = side.position.checked_sub(1).and_then(|s| run.layout.focus_x(s));
            Some((node.clone(), run.layout.now_y(side.position), x))
        })
        .collect();
    let cursor = state.cursor();
    let position = state.position;
    let moved = use_mut_ref(|| false);
    use_effect_with((state.position, track.clone(), cursor), move |_| {
        // The page moves with the first diagram once the reader moves (not when compare opens),
        // as it does for the single diagram (`use_step_on_screen`).
        let follow_page = std::mem::replace(&mut *moved.borrow_mut(), !compared.is_empty());
        for (i, (node, y, x)) in compared.into_iter().enumerate() {
            if let Some(diagram) = node.cast::<Element>() {
                let content = f64::from(diagram.scroll_width());
                let (y, margin) = (y + HEADS, ROW * 2.5);
                scroll(&diagram, |view| {
                    let view = view.follow(y, margin);
                    x.map_or(view, |x| view.follow_x(x, content))
                });
                if i == 0 && follow_page {
                    row_in_window(&diagram, y, margin);
                }
            }
        }
        let Some(log) = log_ref.cast::<Element>().filter(|_| short) else { return };
        let selector = format!(".entry[data-step=\"{}\"]", position.saturating_sub(1));
        let current = log.query_selector(&selector).ok().flatten();
        if let Some(entry) = current.and_then(|e| e.dyn_into::<HtmlElement>().ok()) {
            scroll(&log, |view| view.follow(f64::from(entry.offset_top()), 40.0));
        }
    });
}

/// Brings the chosen finding into view each time a finding is chosen (`choice` counts the
/// choices): inside the diagram's box, its own mark at the middle of the rows and, sideways,
/// with its witness (`highlight` in `track`, its lanes as `fit` stretches them); then on the
/// page, the box
/// just below the sticky player, so the lane headers name the lanes (on a narrow screen the
/// findings list may sit below the diagram).
#[hook]
pub fn use_show_chosen(
    diagram: NodeRef,
    choice: usize,
    track: TrackRef,
    highlight: Highlight,
    fit: Fit,
) {
    use_effect_with(choice, move |choice| {
        if *choice == 0 {
            return;
        }
        let Some(container) = diagram.cast::<Element>() else { return };
        let Some(window) = web_sys::window() else { return };
        let viewport = viewport(&window);
        // Moving the page may stick the player, so twice.
        for _ in 0..2 {
            let outer = container.get_bounding_client_rect();
            let shift = below_cover(cover(&window), viewport, outer.top(), outer.height());
            if shift != 0.0 {
                window.scroll_by_with_x_and_y(0.0, shift);
            }
        }
        let cover = cover(&window);
        let width = f64::from(container.client_width());
        let lanes = &track.diagram.lanes;
        let xs: Vec<f64> = track
            .layout
            .witness_xs(&highlight.steps, lanes)
            .into_iter()
            .map(|x| fit.x(x))
            .collect();
        let own = highlight.finding.and_then(|f| track.layout.finding_x(f)).map(|x| fit.x(x));
        if let Some(left) = reveal_x(&xs, own, width, fit.width()) {
            container.set_scroll_left(left as i32);
        }
        let Ok(Some(mark)) = container.query_selector(".mark.violation.witness") else { return };
        // The middle of the rows the box shows on screen, below its lane headers.
        let outer = container.get_bounding_client_rect();
        let shown = outer.height().min(viewport - outer.top().max(cover));
        let dy = mark.get_bounding_client_rect().top() - outer.top() - (HEADS + shown) / 2.0;
        container.set_scroll_top(container.scroll_top() + dy as i32);
    });
}

/// The window's height.
pub(super) fn viewport(window: &web_sys::Window) -> f64 {
    window.inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(0.0)
}

/// What the sticky player covers of the window's top: all of it once stuck there (or scrolled
/// past), nothing while it sits lower.
pub(super) fn cover(window: &web_sys::Window) -> f64 {
    let player = window.document().and_then(|d| d.query_selector(".player").ok().flatten());
    player.map_or(0.0, |player| {
        let rect = player.get_bounding_client_rect();
        if rect.top() <= 1.0 {
            rect.bottom().max(0.0)
        } else {
            0.0
        }
    })
}

/// Keeps the current step's row on screen as the reader moves through a run: the diagram's box
/// follows the step inside itself, but a box taller than the window (a story's first screen) or
/// partly under the sticky player can still hold it out of sight, so the page moves the least
/// that shows it. A run just opened is left at the page's top.
#[hook]
pub fn use_step_on_screen(diagram: NodeRef, track: TrackRef, position: usize, focus: Focus) {
    let shown = use_mut_ref(|| None::<TrackRef>);
    use_effect_with((track, position), move |(track, _)| {
        let same_run = shown.replace(Some(track.clone())).as_ref() == Some(track);
        if let Some(container) = diagram.cast::<Element>().filter(|_| same_run) {
            row_in_window(&container, focus.y, focus.margin);
        }
    });
}

/// Moves the page the least that shows the row `y` pixels down the content of `container`.
fn row_in_window(container: &Element, y: f64, margin: f64) {
    let row = container.get_bounding_client_rect().top() + y - f64::from(container.scroll_top());
    show_row(row, margin);
}

/// Moves the page the least that shows a row `row` pixels down the window, with `margin`
/// around it, below the sticky player.
pub(super) fn show_row(row: f64, margin: f64) {
    let Some(window) = web_sys::window() else { return };
    scroll_page(&window, row_on_screen(cover(&window), viewport(&window), row, margin));
}

/// Scrolls the page down by `shift` pixels (up when negative), if at all.
pub(super) fn scroll_page(window: &web_sys::Window, shift: f64) {
    if shift != 0.0 {
        window.scroll_by_with_x_and_y(0.0, shift);
    }
}
