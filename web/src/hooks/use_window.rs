//! A scrolling box's [`View`], kept as the reader scrolls it and moved to keep the current step
//! in view, without asking the page for its layout between a step's render and the next frame.

use std::rc::Rc;

use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, Node};
use yew::prelude::*;

use crate::viz::run::TrackRef;
use crate::viz::window::{Focus, View, MARGIN};

/// What the hook last knew of its box: the element, the run it was measured with, its view,
/// and whether the reader scrolled it since the page last moved it.
struct Seen {
    element: Option<Element>,
    run: Option<TrackRef>,
    view: View,
    scrolled: bool,
}

impl Seen {
    /// The band to draw of `view`: with [`MARGIN`] around it once the reader scrolls, so more
    /// is ready as they go on; without, when the page moved the box to a step, so a step or a
    /// seek draws only what comes into view.
    fn band(&self, view: View) -> (f64, f64) {
        let moved = view.top != self.view.top || view.left != self.view.left;
        view.band(if self.scrolled && !moved { MARGIN } else { 0.0 })
    }
}

/// What `element` shows now, as the page has it (which may lay the page out first).
pub(super) fn measure(element: &Element) -> View {
    View {
        top: f64::from(element.scroll_top()),
        height: f64::from(element.client_height()),
        left: f64::from(element.scroll_left()),
        width: f64::from(element.client_width()),
    }
}

/// The band to draw (`View::band`) of the box `node` points at, showing `run` at `position`.
/// When either changes and there is a `focus`, the box's view moves to it: this render already
/// draws the moved view, and the box is scrolled there afterwards, so a step renders once. The
/// reader's own scrolling (and a change of the window's size) re-renders only when the band
/// changes. A box is measured when it appears or shows another run; between those the hook
/// knows where it is scrolled, because it scrolled it or heard it scroll.
#[hook]
pub fn use_window(
    node: NodeRef,
    run: TrackRef,
    position: usize,
    focus: Option<Focus>,
) -> (f64, f64) {
    let seen =
        use_mut_ref(|| Seen { element: None, run: None, view: View::UNMEASURED, scrolled: false });
    let followed = use_mut_ref(|| None::<(TrackRef, usize)>);
    let drawn = use_mut_ref(|| (0.0, 0.0));
    let redraw = use_force_update();
    let key = (run, position);
    let now = seen.borrow().view;
    let view = match focus {
        Some(focus) if followed.borrow().as_ref() != Some(&key) => focus.apply(now),
        _ => now,
    };
    let band = seen.borrow().band(view);
    *drawn.borrow_mut() = band;
    {
        let (node, seen, drawn, redraw) =
            (node.clone(), seen.clone(), drawn.clone(), redraw.clone());
        use_effect_with((), move |_| {
            let box_node = node.clone();
            let heard = Rc::new(move || {
                let Some(element) = box_node.cast::<Element>() else { return };
                let view = measure(&element);
                let mut seen = seen.borrow_mut();
                // The page's own scrolling arrives here too, where the hook already put it.
                if view.top != seen.view.top || view.left != seen.view.left {
                    seen.scrolled = true;
                }
                seen.view = view;
                seen.element = Some(element);
                if seen.band(view) != *drawn.borrow() {
                    redraw.force_update();
                }
            });
            let listeners = listen(&node, heard);
            move || drop(listeners)
        });
    }
    use_effect_with(key, move |key| {
        *followed.borrow_mut() = Some(key.clone());
        let Some(element) = node.cast::<Element>() else { return };
        let mut seen = seen.borrow_mut();
        let known = seen.element.as_ref() == Some(&element) && seen.run.as_ref() == Some(&key.0);
        let (was, view) = if known {
            (seen.view, view)
        } else {
            // A new box, or another run: measure it, then move to the focus in it, from the
            // left edge (another story's lanes are not where the last one's were).
            let measured = measure(&element);
            let start = View { left: 0.0, ..measured };
            (measured, focus.map_or(measured, |f| f.apply(start)))
        };
        if view.top != was.top {
            element.set_scroll_top(view.top as i32);
        }
        if view.left != was.left {
            element.set_scroll_left(view.left as i32);
        }
        let scrolled = seen.scrolled && view.top == was.top && view.left == was.left;
        *seen = Seen { element: Some(element), run: Some(key.0.clone()), view, scrolled };
        if seen.band(view) != *drawn.borrow() {
            redraw.force_update();
        }
    });
    band
}

/// Calls `heard` when the box `node` points at scrolls and when the window changes size. Scroll
/// events do not bubble, so the document hears them in the capture phase.
fn listen(node: &NodeRef, heard: Rc<dyn Fn()>) -> Option<[EventListener; 2]> {
    let window = web_sys::window()?;
    let document = window.document()?;
    let on_scroll = {
        let (node, heard) = (node.clone(), heard.clone());
        EventListener::new_with_options(
            &document,
            "scroll",
            EventListenerOptions::run_in_capture_phase(),
            move |event| {
                let target = event.target().map(wasm_bindgen::JsValue::from);
                if target.is_some() && target == node.get().map(|n: Node| n.into()) {
                    heard();
                }
            },
        )
    };
    let on_resize = EventListener::new(&window, "resize", move |_| heard());
    Some([on_scroll, on_resize])
}

/// Keeps every diagram's time labels at its box's left edge while its lanes scroll sideways (a
/// phone shows a few lanes at a time): the box's `--scroll-x` follows its scroll, and style.css
/// moves the labels by it. One listener for the page's boxes, the compare view's two included;
/// it sets a style, so a scroll re-renders nothing.
#[hook]
pub fn use_sticky_axis() {
    use_effect_with((), |_| {
        let listener = web_sys::window().and_then(|w| w.document()).map(|document| {
            EventListener::new_with_options(
                &document,
                "scroll",
                EventListenerOptions::run_in_capture_phase(),
                |event| {
                    let target = event.target().and_then(|t| t.dyn_into::<HtmlElement>().ok());
                    if let Some(diagram) = target.filter(|t| t.matches(".diagram").unwrap_or(false))
                    {
                        let left = format!("{}px", diagram.scroll_left());
                        let _ = diagram.style().set_property("--scroll-x", &left);
                    }
                },
            )
        });
        move || drop(listener)
    });
}
