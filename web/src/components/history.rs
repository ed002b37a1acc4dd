//! Recorded histories: the "Open a history" control, the card that stands in for the story's
//! while a history is shown (its lanes, the way back to the stories), and the list of the
//! checker's findings. They render the reducer's state and dispatch actions, nothing else.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use fencelab_core::{names::Named, Violation};
use fencelab_links::Param;

use crate::components::controls::{click, MARKS_ID};
use crate::components::icons::icon;
use crate::components::panels::run_badge;
use crate::io;
use crate::viz::history::{scrub_marks, Opened, Origin, FEW_LANES, THUMB_PX};
use crate::viz::run::step_no;
use crate::viz::state::{Action, Badge, HistoryAction};
use crate::viz::words::{count, mark_label, marks_summary};
use fencelab_core::picture::layout::{decimal, num};

/// Reads the file chosen in the `<input>` an event came from and opens it as a history.
fn on_choose(on: &Callback<Action>) -> Callback<Event> {
    let on = on.clone();
    Callback::from(move |event: Event| {
        let Some(input) = event.target().and_then(|t| t.dyn_into::<HtmlInputElement>().ok()) else {
            return;
        };
        // A large file takes a moment to read and judge: the status says so first.
        if let Some((name, bytes)) = io::chosen_file(&input) {
            on.emit(Action::Opening(name, bytes));
        }
        let on = on.clone();
        io::read_file(&input, move |name, text| {
            on.emit(Action::OpenHistory(name, Rc::new(text), Origin::File));
        });
    })
}

/// The "Open a history" control: a file chooser (a file can also be dropped on the page).
pub fn open_control(on: &Callback<Action>) -> Html {
    html! {
        <div class="open-history">
            <input id="open-history" class="sr-only" type="file"
                accept=".jsonl,.ndjson,.json,.edn,.log,.txt,application/jsonl,application/x-ndjson,application/json,text/plain"
                onchange={on_choose(on)} />
            <label class="chip file-chip" for="open-history">{ icon("list") }{ "Open a history" }</label>
            <span class="muted hint">{ "a JSON Lines file recorded from your system (or drop one on the page)" }</span>
        </div>
    }
}

/// `text` with its `backticked` commands and names in `code` elements.
pub fn with_code(text: &str) -> Html {
    html! {
        { for text.split('`').enumerate().map(|(i, part)| if i % 2 == 1 {
            html! { <code>{ part.to_string() }</code> }
        } else {
            Html::from(part.to_string())
        }) }
    }
}

/// What went wrong opening a history, with a way to dismiss it (when a link's history failed,
/// `fallback`: the story on screen stands in for it), or that a link's history is on its way.
pub fn history_status(
    error: Option<&str>,
    fetching: Option<&str>,
    fallback: bool,
    on: &Callback<Action>,
) -> Html {
    html! {
        <>
            if let Some(error) = error {
                <div id="history-error" class="error link-error" role="alert">
                    <p>{ "The history could not be opened: " }{ with_code(error) }{ "." }
                        if fallback {
                            { " The story below is shown instead: choose another in the Story menu, or fix the link." }
                        }
                    </p>
                    <div class="link-error-actions">
                        <button id="dismiss-history-error" type="button" class="chip"
                            onclick={click(on, Action::DismissLinkError)}>{ "Dismiss" }</button>
                    </div>
                </div>
            } else if let Some(address) = fetching {
                <p id="history-loading" class="notice" role="status">{ format!("Opening the history “{address}”…") }</p>
            }
        </>
    }
}

/// What a history link asked for that does not apply to a history, with a way to dismiss it.
pub fn link_note(note: Option<&str>, on: &Callback<Action>) -> Html {
    let Some(note) = note else { return Html::default() };
    html! {
        <div id="link-note" class="notice link-error" role="status">
            <p>{ "Note: " }{ with_code(note) }{ "." }</p>
            <div class="link-error-actions">
                <button id="dismiss-link-note" type="button" class="chip"
                    onclick={click(on, Action::DismissLinkError)}>{ "Dismiss" }</button>
            </div>
        </div>
    }
}

/// Where a key moves the focus in a roving-tabindex group: the arrows step to the next or the
/// previous item, Home and End jump to the first or the last.
#[derive(Debug, PartialEq)]
enum Rove {
    Next,
    Previous,
    First,
    Last,
}

impl Rove {
    fn from_key(key: &str) -> Option<Rove> {
        Some(match key {
            "ArrowRight" | "ArrowDown" => Rove::Next,
            "ArrowLeft" | "ArrowUp" => Rove::Previous,
            "Home" => Rove::First,
            "End" => Rove::Last,
            _ => return None,
        })
    }
}

/// Moves the focus, and the group's one Tab stop with it, between the lane chips.
fn rove(e: KeyboardEvent) {
    // The chip the key was pressed on, in its group (Yew's delegated events report the page's
    // root as their current target, so the group is the chip's parent).
    let from = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok());
    let group = from.as_ref().and_then(|f| f.parent_element());
    let (Some(group), Some(from), Some(rove)) = (group, from, Rove::from_key(&e.key())) else {
        return;
    };
    let to = match rove {
        Rove::Next => from.next_element_sibling(),
        Rove::Previous => from.previous_element_sibling(),
        Rove::First => group.first_element_child(),
        Rove::Last => group.last_element_child(),
    };
    let Some(to) = to.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) else { return };
    // The arrows, Home and End move between the chips, not the player.
    e.prevent_default();
    e.stop_propagation();
    let _ = from.set_attribute("tabindex", "-1");
    let _ = to.set_attribute("tabindex", "0");
    let _ = to.focus();
}

/// The card shown in the story's place while a history is on screen.
pub fn history_card(
    opened: &Opened,
    title: &str,
    badge: &Badge,
    error: Option<&str>,
    note: Option<&str>,
    on: &Callback<Action>,
) -> Html {
    let steps = opened.track.len();
    let summary = format!(
        "{} {} recorded, drawn and judged by the same checker as the stories: {}.",
        count(steps),
        if steps == 1 { "entry" } else { "entries" },
        opened.findings_summary()
    );
    let lanes = opened.full.lanes.len();
    // Many lanes are one Tab stop, moved through with the arrow keys (a roving tabindex), so
    // the player's controls stay a few Tabs away.
    let roving = lanes > FEW_LANES;
    let listed = opened.listed();
    let chips = html! {
        { for opened.full.lanes.iter().enumerate().filter(|(i, _)| listed[*i]).enumerate().map(|(n, (i, lane))| {
            let shown = !opened.hidden.get(i).copied().unwrap_or(false);
            // The last lane shown stays; pressing it says why.
            let last = opened.last_shown(i);
            html! {
                <button type="button" class={classes!("chip", "lane-toggle", shown.then_some("on"), last.then_some("last"))}
                    aria-pressed={shown.to_string()} aria-disabled={last.then_some("true")} data-lane={lane.id.clone()}
                    tabindex={(roving && n > 0).then_some("-1")}
                    onclick={click(on, Action::InHistory(HistoryAction::ToggleLane(i)))}>{ lane.label.clone() }</button>
            }
        }) }
    };
    let note_line = html! {
        <span id="lane-note" class="muted hint" role="status">{ opened.lane_note.unwrap_or_default() }</span>
    };
    let lane_box = if !roving {
        html! {
            <fieldset class="lanes" id="lane-toggles">
                <legend class="field-label">{ "Lanes shown (hide some to read a history with many workers)" }</legend>
                { chips }
                { note_line }
            </fieldset>
        }
    } else {
        // Many lanes fold away, so the player's controls come first on the first screen and in
        // the Tab order; a filter and two buttons show the lanes wanted.
        let shown = opened.hidden.iter().filter(|h| !**h).count();
        let on_filter = {
            let on = on.clone();
            Callback::from(move |e: InputEvent| {
                if let Some(input) = e.target().and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
                {
                    on.emit(Action::InHistory(HistoryAction::LaneFilter(input.value())));
                }
            })
        };
        html! {
            <details class="lanes many-lanes" id="lane-toggles">
                <summary class="field-label">{ format!("Lanes ({} shown of {})", count(shown), count(lanes)) }</summary>
                <div class="lane-tools">
                    <label for="lane-filter" class="field-label">
                        { "Filter workers (a whole name matches only itself: w1 is not w10; separate names with spaces)" }
                    </label>
                    <input id="lane-filter" type="search" placeholder="e.g. w3 w13"
                        aria-describedby="lane-filter-note" value={opened.lane_filter.clone()} oninput={on_filter} />
                    <button id="lanes-only" type="button" class="chip" onclick={click(on, Action::InHistory(HistoryAction::ShowLanes(false)))}>
                        { "Show only these" }</button>
                    <button id="lanes-all" type="button" class="chip" onclick={click(on, Action::InHistory(HistoryAction::ShowLanes(true)))}>
                        { "Show all" }</button>
                    <span id="lane-filter-note" class="muted hint">
                        { "“Show only these” keeps the authority and the stores." }</span>
                </div>
                <div class="lane-chips" role="toolbar" aria-label="Lanes (arrow keys move between them)"
                    onkeydown={Callback::from(rove)}>{ chips }</div>
                { note_line }
            </details>
        }
    };
    html! {
        <section class="card story history" aria-labelledby="story-title" data-testid="history-card">
            <div class="history-actions">
                <button id="close-history" type="button" class="chip" onclick={click(on, Action::CloseHistory)}>
                    { icon("back") }{ "Back to the stories" }
                </button>
                { open_control(on) }
            </div>
            <div class="story-text">
                <h1 id="story-title" tabindex="-1">
                    { title.to_string() }
                    { run_badge(badge) }
                </h1>
                <p class="intro">{ summary }</p>
            </div>
            { link_note(note, on) }
            { lane_box }
            <p class="muted off-note" id="history-note">
                { "Variants, the policy, compare mode, “Break the protocol”, the explorer, the editor and \
                   the run's JSON and Rust exports belong to a simulated story; a recorded history is what \
                   happened, so they are off until you go back to the stories." }
                if opened.origin == Origin::File {
                    { " A history opened from a file is not in the page's address: share the file, or \
                       put it on the same site as the page and link it with " }<code>{ format!("#{}=ADDRESS", Param::History.name()) }</code>
                    { " (Share and export says the same)." }
                }
            </p>
            { history_status(error, None, false, on) }
        </section>
    }
}

/// How the findings panel is toned: red when a finding is certain, amber when every finding is
/// only possible, plain when there is none.
fn findings_tone(findings: &[Violation]) -> Option<&'static str> {
    if findings.is_empty() {
        None
    } else if findings.iter().all(|f| f.possible) {
        Some("caution")
    } else {
        Some("alarm")
    }
}

#[derive(Properties)]
pub struct FindingsProps {
    /// The history's findings, in step order.
    pub findings: Rc<Vec<Violation>>,
    /// The finding the reader chose.
    pub chosen: Option<usize>,
    /// How many findings the player has reached.
    pub reached: usize,
    pub on: Callback<Action>,
}

/// The same findings are the same list: they change only with the history.
impl PartialEq for FindingsProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.findings, &other.findings)
            && (self.chosen, self.reached) == (other.chosen, other.reached)
            && self.on == other.on
    }
}

/// The checker's findings on the history, each a button that seeks to it and highlights its
/// witness; the ones the player has reached are marked. A component: it changes only when a
/// finding is chosen or reached, not at every step.
#[component]
pub fn Findings(props: &FindingsProps) -> Html {
    let findings = &props.findings;
    let list = use_node_ref();
    // The list scrolls on its own, so a finding chosen from the scrubber or the diagram is
    // brought into view inside it.
    use_effect_with((props.chosen, list.clone()), |(chosen, list)| {
        let item = list
            .cast::<web_sys::Element>()
            .zip(*chosen)
            .and_then(|(list, i)| list.children().item(i as u32).map(|item| (list, item)));
        if let Some((list, item)) = item {
            let (top, bottom) = (list.scroll_top(), list.scroll_top() + list.client_height());
            let item = item.unchecked_into::<web_sys::HtmlElement>();
            let (from, to) = (item.offset_top(), item.offset_top() + item.offset_height());
            if from < top || to > bottom {
                list.set_scroll_top(from);
            }
        }
    });
    html! {
        <section class={classes!("panel", "findings", findings_tone(findings))}
            aria-label="Findings" data-testid="findings-panel">
            <h3>{ icon(if findings.is_empty() { "check" } else { "warn" }) }{ "Findings" }
                <span class="count">{ findings.len() }</span></h3>
            if findings.is_empty() {
                <p class="ok-text">{ "none: every invariant holds in this history" }</p>
            } else {
                <p class="muted gap">{ "Choose one to go to its step and highlight its witness: the entries that prove it, in the diagram and the log." }</p>
                if findings.iter().any(|f| f.possible) {
                    <p class="muted" id="possible-note">
                        { "A possible finding depends on a write or effect whose outcome nobody learned: the \
                           invariant is broken if that outcome went one way (the write was applied, say) \
                           and holds if it went the other. A history whose findings are all possible is \
                           inconclusive (" }
                        <code>{ "fencelab audit" }</code>{ " exits 3)." }
                    </p>
                }
                <ol class="finding-list" ref={list}>
                    { for findings.iter().enumerate().map(|(i, f)| {
                        let chosen = props.chosen == Some(i);
                        let reached = i < props.reached;
                        // The steps its witness highlights, for tests and styles.
                        let witness = if f.witness.is_empty() { vec![f.step.index()] } else { f.witness.clone() };
                        let witness: Vec<String> = witness.iter().map(usize::to_string).collect();
                        html! {
                            <li class={classes!("finding", chosen.then_some("chosen"), reached.then_some("reached"))}
                                data-invariant={f.invariant.to_string()} data-step={f.step.index().to_string()}
                                data-witness={witness.join(",")}>
                                <button type="button" aria-pressed={chosen.to_string()}
                                    onclick={click(&props.on, Action::InHistory(HistoryAction::ChooseFinding(i)))}>
                                    <strong>{ f.invariant.to_string().replace('_', " ") }</strong>
                                    <span class="mono step-no">{ format!(" step {}", count(f.step.number())) }</span>
                                    if f.possible {
                                        <span class="badge warn possible">{ "possible" }</span>
                                    }
                                    <span class="detail">{ f.detail.clone() }</span>
                                </button>
                            </li>
                        }
                    }) }
                </ol>
            }
        </section>
    }
}

#[derive(Properties)]
pub struct ScrubMarksProps {
    /// The history's findings.
    pub findings: Rc<Vec<Violation>>,
    /// How many entries the history has.
    pub len: usize,
    /// Whether the page shows the Findings list, which the description then points to.
    pub listed: bool,
    pub on: Callback<Action>,
}

/// The same findings are the same list: they change only with the history.
impl PartialEq for ScrubMarksProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.findings, &other.findings)
            && (self.len, self.listed) == (other.len, other.listed)
            && self.on == other.on
    }
}

/// The marks under the scrubber: where the history's findings are. Each is a button at least
/// [`MARK_PX`](crate::viz::history::MARK_PX) wide that chooses its (first) finding, as the Findings list does, which moves
/// the player there; findings whose marks would overlap share one, which says how many. They
/// are left out of the Tab order (the Findings list and the keys reach every finding), and a
/// sentence describes them to screen readers. A component: the marks change only with the
/// history and the scrubber's width.
#[component]
pub fn ScrubMarks(props: &ScrubMarksProps) -> Html {
    let findings = &props.findings;
    let list = use_node_ref();
    let width = use_state_eq(|| 0.0_f64);
    {
        let (list, width) = (list.clone(), width.setter());
        use_effect_with((), move |_| {
            let watch = io::watch_size(move |_| {
                if let Some(list) = list.cast::<web_sys::Element>() {
                    width.set(f64::from(list.client_width()));
                }
            });
            move || drop(watch)
        });
    }
    // The scrubber's thumb travels from half its width to the far end less half. Until the
    // list is measured, no marks: they would be placed for another width.
    let marks =
        if *width > 0.0 { scrub_marks(findings, props.len, *width - THUMB_PX) } else { Vec::new() };
    let summary = marks_summary(findings.len(), marks.len(), props.listed);
    html! {
        <>
            <span id={MARKS_ID} class="sr-only">{ summary }</span>
            <ol class="scrub-marks" aria-label="Where the findings are" ref={list}>
                { for marks.iter().map(|mark| {
                    let finding = &findings[mark.finding];
                    let what = finding.invariant.to_string().replace('_', " ");
                    let label = mark_label(finding.step.number(), step_no(mark.last), mark.count, &what);
                    let left = format!(
                        "left:calc({}px + (100% - {}px) * {})",
                        num(THUMB_PX / 2.0),
                        num(THUMB_PX),
                        decimal(mark.at, 5)
                    );
                    html! {
                        <li style={left}>
                            <button type="button" tabindex="-1" class={classes!("scrub-mark", mark.possible.then_some("possible"))}
                                data-step={finding.step.index().to_string()} data-finding={mark.finding.to_string()}
                                data-count={mark.count.to_string()} aria-label={label.clone()} title={label}
                                onclick={click(&props.on, Action::InHistory(HistoryAction::ChooseFinding(mark.finding)))}>
                                if mark.count > 1 {
                                    <span class="mark-count" aria-hidden="true">
                                        { if mark.count > 99 { "99+".to_string() } else { mark.count.to_string() } }
                                    </span>
                                }
                            </button>
                        </li>
                    }
                }) }
            </ol>
        </>
    }
}
