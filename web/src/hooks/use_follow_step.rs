//! Keeps the current step in view in the diagram, the compare view's diagrams and the log.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};
use yew::prelude::*;

use crate::viz::layout::{Fit, ROW};
use crate::viz::state::Viz;

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

/// Scrolls `container` so that `y` (in its content) is comfortably in view.
fn keep_in_view(container: &Element, y: f64, margin: f64) {
    let top = f64::from(container.scroll_top());
    let height = f64::from(container.client_height());
    if height <= 0.0 {
        return;
    }
    if y < top + margin || y > top + height - margin {
        container.set_scroll_top((y - height / 2.0).max(0.0) as i32);
    }
}

/// Scrolls `container` sideways so that `from..to` (in its content) is in view, on screens too
/// narrow for every lane. Wide screens never scroll.
fn keep_in_view_x(container: &Element, (from, to): (f64, f64)) {
    let left = f64::from(container.scroll_left());
    let width = f64::from(container.client_width());
    if width <= 0.0 || f64::from(container.scroll_width()) <= width {
        return;
    }
    // Room on the right for the labels of the step's marks.
    let (from, to) = (from - 30.0, to + 220.0);
    if from < left || to > left + width {
        let target = if to - from > width { from } else { (from + to - width) / 2.0 };
        container.set_scroll_left(target.max(0.0) as i32);
    }
}

/// Scrolls the boxes in `refs` to the current step whenever the reader moves or the run
/// changes; `pane_width` is the diagram's stretched width, which places the step's lanes.
#[hook]
pub fn use_follow_step(state: &Viz, refs: &FollowRefs, pane_width: f64) {
    let (diagram_ref, log_ref) = (refs.diagram.clone(), refs.log.clone());
    let track = state.track();
    let y = track.layout.now_y(state.position);
    let fit = Fit::new(track.diagram.lanes.len(), pane_width);
    let x = state
        .position
        .checked_sub(1)
        .and_then(|s| track.layout.focus_x(s))
        .map(|(from, to)| (fit.x(from), fit.x(to)));
    let compared: Vec<Follow> = state
        .compare
        .iter()
        .flat_map(|c| [(&c.left, &refs.compare.0), (&c.right, &refs.compare.1)])
        .filter_map(|(side, node)| {
            let run = side.run.as_ref().ok()?;
            let x = side.position.checked_sub(1).and_then(|s| run.layout.focus_x(s));
            Some((node.clone(), run.layout.now_y(side.position), x))
        })
        .collect();
    let cursor = state.cursor();
    let position = state.position;
    use_effect_with((state.position, track.clone(), cursor), move |_| {
        if let Some(diagram) = diagram_ref.cast::<Element>() {
            keep_in_view(&diagram, y + 70.0, ROW * 2.5);
            if let Some(x) = x {
                keep_in_view_x(&diagram, x);
            }
        }
        for (node, y, x) in compared {
            if let Some(diagram) = node.cast::<Element>() {
                keep_in_view(&diagram, y + 70.0, ROW * 2.5);
                if let Some(x) = x {
                    keep_in_view_x(&diagram, x);
                }
            }
        }
        if let Some(log) = log_ref.cast::<Element>() {
            let selector = format!(".entry[data-step=\"{}\"]", position.saturating_sub(1));
            let current = log.query_selector(&selector).ok().flatten();
            if let Some(entry) = current.and_then(|e| e.dyn_into::<HtmlElement>().ok()) {
                keep_in_view(&log, f64::from(entry.offset_top()), 40.0);
            }
        }
    });
}

/// Brings the chosen finding's own mark into view each time a finding is chosen (`choice`
/// counts the choices): first inside the diagram's box, then on the page, whose findings list
/// may sit below the diagram on a narrow screen.
#[hook]
pub fn use_show_chosen(diagram: NodeRef, choice: usize) {
    use_effect_with(choice, move |choice| {
        if *choice == 0 {
            return;
        }
        let Some(container) = diagram.cast::<Element>() else { return };
        let Ok(Some(mark)) = container.query_selector(".mark.violation.witness") else { return };
        let (outer, inner) =
            (container.get_bounding_client_rect(), mark.get_bounding_client_rect());
        // The mark's label runs to its right, so the mark sits left of the box's centre.
        let dx = inner.left() - outer.left() - outer.width() / 3.0;
        let dy = inner.top() - outer.top() - outer.height() / 2.0;
        container.set_scroll_left(container.scroll_left() + dx as i32);
        container.set_scroll_top(container.scroll_top() + dy as i32);
        let Some(window) = web_sys::window() else { return };
        let height = window.inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(0.0);
        let top = mark.get_bounding_client_rect().top();
        if top < height * 0.2 || top > height * 0.8 {
            window.scroll_by_with_x_and_y(0.0, top - height / 2.0);
        }
    });
}
