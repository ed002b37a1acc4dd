//! Inline icons (no icon font, no requests): one glyph per kind of thing, so colour is never the
//! only cue. Paths are drawn on a 16×16 grid with the current text colour.

use yew::prelude::*;

use fencelab_core::picture::layout::num;

/// The SVG path data of a glyph, by name. Unknown names get a dot.
pub fn path(name: &str) -> &'static str {
    match name {
        "play" => "M4.5 2.8v10.4l8.6-5.2z",
        "pause" => "M4 3h3v10H4zM9 3h3v10H9z",
        "back" => "M12.5 3v10L5.5 8zM3.5 3h2v10h-2z",
        "forward" => "M3.5 3v10l7-5zM10.5 3h2v10h-2z",
        "start" => "M3 3h2v10H3zM14 3v10L6 8z",
        "end" => "M11 3h2v10h-2zM2 3v10l8-5z",
        "check" | "applied" | "delivered" => "M3 8.5l3.2 3.2L13 4.8",
        "cross" | "rejected" | "dropped" => "M4 4l8 8M12 4l-8 8",
        "warn" | "violation" | "possible" => "M8 2.2L14.6 13.8H1.4zM8 6.2v3.6M8 11.4v.6",
        "key" | "granted" => "M6.2 8.8a3 3 0 1 1 2.2-2.2L14 12.2V14h-2v-1.5h-1.5V11H9z",
        "clock" | "expired" | "lease_checked" => "M8 2.5a5.5 5.5 0 1 1 0 11a5.5 5.5 0 0 1 0-11zM8 5v3.3l2.3 1.4",
        "renewed" | "replayed" => "M12.8 7.2A4.8 4.8 0 1 0 11.4 11.4M13 3.5v3.8H9.2",
        "released" => "M5 7V5a3 3 0 0 1 6 0M3.5 7h9v6.5h-9z",
        "busy" => "M4.5 2.5h7M4.5 13.5h7M5 2.5c0 3.5 6 3.5 6 5.5s-6 2-6 5.5M11 2.5c0 3.5-6 3.5-6 5.5",
        "read" => "M1.8 8s2.3-4.2 6.2-4.2S14.2 8 14.2 8s-2.3 4.2-6.2 4.2S1.8 8 1.8 8zM8 6.3a1.7 1.7 0 1 1 0 3.4a1.7 1.7 0 0 1 0-3.4z",
        "checked" => "M3 8.5l3.2 3.2L13 4.8M2 14h12",
        "restarted" => "M8 2v5M4.6 4.2a5 5 0 1 0 6.8 0",
        "slowed" => "M2 12h12M4 12V8.5M8 12V5.5M12 12V3",
        "lost" => "M2 8h5M10 5l4 6M14 5l-4 6",
        "skewed" => "M8 2.5a5.5 5.5 0 1 0 0 11a5.5 5.5 0 0 0 0-11zM8 5v3l-2 2",
        "stopped" => "M4 4h8v8H4z",
        "unknown" => "M5.5 6a2.5 2.5 0 1 1 3.3 2.4c-.5.2-.8.6-.8 1.1V10.5M8 12.5v.5",
        "frozen" => "M8 1.5v13M2.4 4.8l11.2 6.4M2.4 11.2l11.2-6.4",
        "authority" => "M8 1.8l5.5 2.2v3.8c0 3.4-2.4 5.6-5.5 6.4C4.9 13.4 2.5 11.2 2.5 7.8V4z",
        "worker" => "M8 2.5a2.6 2.6 0 1 1 0 5.2a2.6 2.6 0 0 1 0-5.2zM3 14c.4-3 2.4-4.6 5-4.6s4.6 1.6 5 4.6z",
        "store" => "M3 3.5c0-1.1 2.2-1.7 5-1.7s5 .6 5 1.7v9c0 1.1-2.2 1.7-5 1.7s-5-.6-5-1.7zM3 3.5c0 1.1 2.2 1.7 5 1.7s5-.6 5-1.7M3 8c0 1.1 2.2 1.7 5 1.7s5-.6 5-1.7",
        "gateway" => "M2 14V6l6-4l6 4v8M5.5 14V9h5v5",
        "partner" => "M2.5 4h11v8h-11zM2.5 4L8 8.5L13.5 4",
        "edit" => "M10.5 2.5l3 3L6 13H3v-3z",
        "compare" => "M2.5 2.5h4.5v11H2.5zM9 2.5h4.5v11H9z",
        "list" => "M5.5 4h8M5.5 8h8M5.5 12h8M2.5 4h.5M2.5 8h.5M2.5 12h.5",
        _ => "M7 7h2v2H7z",
    }
}

/// Whether a glyph is drawn filled rather than stroked.
fn filled(name: &str) -> bool {
    matches!(name, "play" | "pause" | "back" | "forward" | "start" | "end" | "stopped")
}

/// An inline icon, hidden from screen readers: the control or text next to it carries the name.
/// A plain function rather than a component: icons have no state, and a component per icon would
/// cost a props allocation at each of its many call sites and its own copy of Yew's lifecycle.
/// How it is painted (stroked, or filled for `filled` glyphs) is in the style sheet, so a long
/// list of icons sets few attributes.
pub fn icon(name: &str) -> Html {
    html! {
        <svg class={classes!("icon", filled(name).then_some("filled"))} viewBox="0 0 16 16" aria-hidden="true">
            <path d={path(name)} />
        </svg>
    }
}

/// A glyph as an SVG `<path>` inside a diagram, centred on (`x`, `y`), painted as [`icon`]'s.
pub fn glyph(name: &str, x: f64, y: f64, scale: f64) -> Html {
    let transform =
        format!("translate({} {}) scale({}) translate(-8 -8)", num(x), num(y), num(scale));
    html! {
        <path class={classes!("glyph", filled(name).then_some("filled"))} d={path(name)} transform={transform} />
    }
}
