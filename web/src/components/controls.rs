//! The transport bar: jump to start, step back, play or pause, step forward, jump to end, a
//! scrubber and the speed.

use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

use crate::components::icons::icon;
use crate::viz::state::{Action, SPEEDS};
use crate::viz::words::count;

/// What the transport bar shows. Not a component's props: the bar changes with every step, so a
/// component would re-render every time anyway and only add Yew's per-component code.
pub struct ControlsProps {
    /// Where the run is and how far it goes.
    pub at: usize,
    pub end: usize,
    /// What the position counts, e.g. `step` or `tick`.
    pub unit: &'static str,
    /// Logical time now, and at the end.
    pub now: u64,
    pub last: u64,
    pub playing: bool,
    pub speed: usize,
    pub on: Callback<Action>,
    /// Marks to draw under the scrubber (where a history's findings are), with an element
    /// [`MARKS_ID`] that describes them.
    pub marks: Option<Html>,
    /// Whether to list the keys under the bar (the full page does; an embed has no room).
    pub keys: bool,
}

/// The keys the player answers, as the page lists them under the transport bar.
pub const KEYS: &str = "Keys: Space plays or pauses · ← → step · Shift+← → or Page Up/Down jump a tenth of the run (Page Down forward) · Home/End go to the start/end";

/// The id of the text that describes the marks under the scrubber.
pub const MARKS_ID: &str = "scrub-findings";

fn button(
    id: &str,
    glyph: &str,
    label: &str,
    disabled: bool,
    action: Action,
    on: &Callback<Action>,
) -> Html {
    let onclick = click(on, action);
    // Marked rather than disabled, so a reader who steps to the end keeps the focus on the
    // button (a disabled one drops it to the page); the action does nothing there.
    html! {
        <button id={id.to_string()} type="button" class="tool" aria-label={label.to_string()} title={label.to_string()}
            aria-disabled={disabled.then_some("true")} onclick={onclick}>
            { icon(glyph) }
        </button>
    }
}

/// A click handler that dispatches `action`: one closure type serves every such button.
pub fn click(on: &Callback<Action>, action: Action) -> Callback<MouseEvent> {
    on.reform(move |_: MouseEvent| action.clone())
}

/// A callback that turns an event into an action when it can, and ignores it otherwise.
pub fn when<E: 'static>(
    on: &Callback<Action>,
    f: impl Fn(E) -> Option<Action> + 'static,
) -> Callback<E> {
    let on = on.clone();
    Callback::from(move |event: E| {
        if let Some(action) = f(event) {
            on.emit(action);
        }
    })
}

/// Reads a number from the `<input>` or `<select>` an event came from.
pub fn event_number(event: &Event) -> Option<usize> {
    let target = event.target()?;
    let text = match target.clone().dyn_into::<HtmlInputElement>() {
        Ok(input) => input.value(),
        Err(_) => target.dyn_into::<HtmlSelectElement>().ok()?.value(),
    };
    text.parse().ok()
}

/// The transport bar.
pub fn controls(props: &ControlsProps) -> Html {
    let on = &props.on;
    let (at, end) = (props.at, props.end);
    // At the end Space does nothing, so the reader's place is kept; the button replays on Enter
    // or a click, and says so.
    let replay = !props.playing && end > 0 && at >= end;
    let play_label = match (props.playing, replay) {
        (true, _) => "Pause (Space)",
        (false, true) => "Replay from start (Enter)",
        (false, false) => "Play (Space)",
    };
    let play_action = if replay { Action::Replay } else { Action::TogglePlay };
    let on_scrub = when(on, |e: InputEvent| event_number(&e).map(Action::Seek));
    let on_speed = when(on, |e: Event| event_number(&e).map(Action::Speed));
    html! {
        <div class="controls" role="toolbar" aria-label="Playback">
            <div class="buttons">
                { button("to-start", "start", "Jump to start (Home)", at == 0, Action::ToStart, on) }
                { button("step-back", "back", "Step back (Left arrow; Shift+Left: a tenth of the run)", at == 0, Action::Back, on) }
                <button id="play" type="button" class={classes!("tool", "play", props.playing.then_some("on"))}
                    aria-label={play_label} title={play_label} aria-pressed={props.playing.to_string()}
                    disabled={end == 0} onclick={click(on, play_action)}>
                    { icon(match (props.playing, replay) { (true, _) => "pause", (false, true) => "start", _ => "play" }) }
                </button>
                { button("step-forward", "forward", "Step forward (Right arrow; Shift+Right: a tenth of the run)", at >= end, Action::Forward, on) }
                { button("to-end", "end", "Jump to end (End)", at >= end, Action::ToEnd, on) }
            </div>
            <div class="scrub">
                <input id="scrubber" class="scrubber" type="range" min="0" max={end.to_string()}
                    value={at.to_string()} aria-label="Scrub through the run"
                    aria-valuetext={format!("{} {} of {}, t={}", props.unit, count(at), count(end), props.now)} oninput={on_scrub}
                    aria-describedby={props.marks.is_some().then_some(MARKS_ID)} />
                { props.marks.clone().unwrap_or_default() }
            </div>
            // The counter keeps the width of its longest text, so the scrubber beside it keeps its
            // width (and its marks their places) as the run plays.
            <span class="where" data-testid="position">
                <span class="mono" style={format!("min-width:{}ch", 2 * count(end).len() + 1)}>
                    { format!("{}/{}", count(at), count(end)) }</span>
                <span class="muted">{ format!(" {}s · t=", props.unit) }
                    <span class="t" style={format!("min-width:{}ch", props.last.to_string().len())}>
                        { props.now.to_string() }</span></span>
            </span>
            <label class="speed">
                <span class="sr-only">{ "Autoplay speed" }</span>
                <select id="speed" onchange={on_speed} aria-label="Autoplay speed">
                    { for SPEEDS.iter().enumerate().map(|(i, (label, ..))| html! {
                        <option value={i.to_string()} selected={i == props.speed}>{ *label }</option>
                    }) }
                </select>
            </label>
            if props.keys {
                <p id="keys-help" class="muted hint keys-help">{ KEYS }</p>
            }
        </div>
    }
}
