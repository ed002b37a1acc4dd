//! The shell: owns the reducers, wires DOM events and keys to actions, runs the timers (autoplay,
//! the playground's flash) and keeps the current step in view. Everything it renders comes from
//! `components/`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gloo_events::{EventListener, EventListenerOptions};
use gloo_timers::callback::{Interval, Timeout};
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, HtmlInputElement, KeyboardEvent};
use yew::prelude::*;

use crate::components::compare::{compare_view, CompareProps};
use crate::components::controls::{click, controls, ControlsProps};
use crate::components::diagram::{diagram_view, legend, DiagramProps};
use crate::components::editor::Editor;
use crate::components::explore::{explore_panel, ExploreProps};
use crate::components::icons::icon;
use crate::components::log::{log, LogProps};
use crate::components::panels::{caption, panels, run_badge};
use crate::components::picker::Picker;
use crate::components::register as view;
use crate::components::share::{LinkProblem, ShareExport};
use crate::components::transcript::Transcript;
use crate::io;
use crate::playground::{Action as PlaygroundAction, RegisterView};
use crate::viz::explore::{self as explore, ExploreAction, ExploreView, Job, Status};
use crate::viz::layout::{Fit, ROW};
use crate::viz::run::RunRef;
use crate::viz::state::{Action, Tab, Viz};
use crate::TOOLS;
use fencelab_core::share::{Embed, ShareLink};

/// How long a fresh playground outcome stays highlighted, in milliseconds.
const FLASH_MS: u32 = 900;

/// Maps a key press to an action, unless it belongs to a text field or a focused control.
fn key_action(event: &KeyboardEvent) -> Option<Action> {
    if event.ctrl_key() || event.meta_key() || event.alt_key() {
        return None;
    }
    let tag = event
        .target()
        .and_then(|t| t.dyn_into::<Element>().ok())
        .map(|e| e.tag_name().to_ascii_lowercase())
        .unwrap_or_default();
    if matches!(tag.as_str(), "input" | "textarea" | "select") {
        return None;
    }
    match event.key().as_str() {
        // A focused button already answers Space with a click.
        " " if tag == "button" => None,
        " " | "Spacebar" => Some(Action::TogglePlay),
        "ArrowLeft" => Some(Action::Back),
        "ArrowRight" => Some(Action::Forward),
        "Home" => Some(Action::ToStart),
        "End" => Some(Action::ToEnd),
        _ => None,
    }
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

thread_local! {
    /// The address of the view on screen, for [`flush_address`]. `None` while a link waits for
    /// the tools, whose view is the link's own.
    static ADDRESS: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Where the mounted page shows how loading the tools went.
    static TOOLS_STATUS: RefCell<Option<UseStateSetter<ToolsLoad>>> = const { RefCell::new(None) };
}

/// Writes the address of the view on screen now. Yew writes it from an effect, on its own
/// schedule; a page about to be unmounted (for the tools module to open the same view) may not
/// have run that effect yet.
pub fn flush_address() {
    if let Some(fragment) = ADDRESS.with(|a| a.borrow_mut().take()) {
        io::write_fragment(&fragment, false);
    }
}

/// Where the viewer is with loading the tools module.
#[derive(Clone, PartialEq)]
enum ToolsLoad {
    Idle,
    Loading,
    Failed(String),
}

#[component]
pub fn App() -> Html {
    // The fragment holds the whole view (core's `ShareLink`); an empty one is the first story.
    let state = use_reducer(|| Viz::open(&io::fragment()));
    // The address follows the view, replacing the current history entry (no flood of entries).
    let link = state.to_link();
    let fragment = link.to_fragment();
    let embed_fragment = ShareLink {
        embed: Some(Embed { controls: true, caption: true, ..Embed::default() }),
        autoplay: false,
        ..link
    }
    .to_fragment();
    // Keep the last custom scenario in this browser, so a bad link never loses it.
    use_effect_with((state.edited, state.base.clone()), |(edited, base)| {
        if *edited {
            io::save(io::CUSTOM_KEY, &base.to_json());
        }
    });
    let tab = use_mut_ref(|| Cell::new(Tab::Visualizer));
    tab.borrow().set(state.tab);

    // Keys: Space play/pause, Left/Right step, Home/End jump. One listener for the page's life.
    {
        let dispatcher = state.dispatcher();
        let tab = Rc::clone(&tab);
        use_effect_with((), move |_| {
            let document = web_sys::window().and_then(|w| w.document());
            let listener = document.map(|document| {
                // Not passive: a handled key must not also scroll the page.
                let options = EventListenerOptions::enable_prevent_default();
                EventListener::new_with_options(&document, "keydown", options, move |event| {
                    let Some(event) = event.dyn_ref::<KeyboardEvent>() else {
                        return;
                    };
                    if tab.borrow().get() != Tab::Visualizer {
                        return;
                    }
                    if let Some(action) = key_action(event) {
                        event.prevent_default();
                        dispatcher.dispatch(action);
                    }
                })
            });
            move || drop(listener)
        });
    }

    // A new address from outside the page (a link pasted into the address bar, Back, Forward)
    // opens its view. The page's own address writes use `replaceState`, which fires no
    // `hashchange`.
    {
        let dispatcher = state.dispatcher();
        use_effect_with((), move |_| {
            let listener = web_sys::window().map(|window| {
                EventListener::new(&window, "hashchange", move |_| {
                    dispatcher.dispatch(Action::Open(io::fragment()));
                })
            });
            move || drop(listener)
        });
    }

    // Autoplay: one step per interval while playing. Dropping the Interval stops it.
    {
        let dispatcher = state.dispatcher();
        use_effect_with((state.playing, state.interval_ms()), move |(playing, ms)| {
            let timer =
                playing.then(|| Interval::new(*ms, move || dispatcher.dispatch(Action::Tick)));
            move || drop(timer)
        });
    }

    // The diagram stretches to its pane's width, measured whenever the page changes size (the
    // body is watched, not the pane, which comes and goes with compare mode and the tabs). An
    // embed also tells the page around it its height, so that page can fit the iframe to it.
    let diagram_ref = use_node_ref();
    let pane_width = use_state_eq(|| 0.0_f64);
    {
        let (node, width) = (diagram_ref.clone(), pane_width.setter());
        use_effect_with(state.embed.is_some(), move |embedded| {
            let (embedded, reported) = (*embedded, Cell::new(0));
            let watch = io::watch_size(move |height| {
                if let Some(pane) = node.cast::<Element>() {
                    width.set(f64::from(pane.client_width()));
                }
                if embedded && reported.replace(height) != height {
                    io::report_height(height);
                }
            });
            move || drop(watch)
        });
    }
    let pane_width = *pane_width;

    // Keep the current step in view in the diagram and the log.
    let log_ref = use_node_ref();
    let compare_refs = (use_node_ref(), use_node_ref());
    {
        let (diagram_ref, log_ref) = (diagram_ref.clone(), log_ref.clone());
        let y = state.run.layout.now_y(state.position);
        let fit = Fit::new(state.run.diagram.lanes.len(), pane_width);
        let x = state
            .position
            .checked_sub(1)
            .and_then(|s| state.run.layout.focus_x(s))
            .map(|(from, to)| (fit.x(from), fit.x(to)));
        let compared: Vec<Follow> = state
            .compare
            .iter()
            .flat_map(|c| [(&c.left, &compare_refs.0), (&c.right, &compare_refs.1)])
            .filter_map(|(side, node)| {
                let run = side.run.as_ref().ok()?;
                let x = side.position.checked_sub(1).and_then(|s| run.layout.focus_x(s));
                Some((node.clone(), run.layout.now_y(side.position), x))
            })
            .collect();
        let cursor = state.cursor();
        let position = state.position;
        use_effect_with((state.position, state.run.clone(), cursor), move |_| {
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

    // The viewer loads the tools module when the reader asks for a tool it lacks; once loaded,
    // the tools take the page over, so only a failure comes back here.
    let tools = use_state(|| ToolsLoad::Idle);
    TOOLS_STATUS.with(|s| *s.borrow_mut() = Some(tools.setter()));
    // A link that needs the tools shows only a notice until they take over, rather than its
    // view flashing by without them; if they fail, the viewer shows what it can.
    let wants_tools = state.wants_tools;
    let handing_over = wants_tools && !matches!(*tools, ToolsLoad::Failed(_));
    // Meanwhile the address stays as the link had it, so the tools open the view it names. An
    // embed whose link could not be opened keeps its link too, so reloading it shows the same
    // error instead of another story.
    let keep_address = handing_over || state.broken_embed().is_some();
    ADDRESS.with(|a| *a.borrow_mut() = (!keep_address).then(|| fragment.clone()));
    let entries = use_mut_ref(|| state.entries);
    {
        let entries = Rc::clone(&entries);
        let now = state.entries;
        use_effect_with((fragment.clone(), keep_address), move |(fragment, keep_address)| {
            if *keep_address {
                return;
            }
            let new_entry = *entries.borrow() != now;
            *entries.borrow_mut() = now;
            io::write_fragment(fragment, new_entry);
        });
    }
    let load_tools = {
        let tools = tools.setter();
        // Asking again while it loads is harmless: the loader fetches the module once and
        // presses only the control pressed last.
        use_callback((), move |control: &'static str, _| {
            if TOOLS {
                return;
            }
            tools.set(ToolsLoad::Loading);
            wasm_bindgen_futures::spawn_local(async move {
                if let Err(e) = io::load_tools(control).await {
                    // Told to the page mounted now: if the tools failed after the viewer had
                    // stepped aside, the loader has mounted a fresh viewer.
                    let status = TOOLS_STATUS.with(|s| s.borrow().clone());
                    if let Some(status) = status {
                        status.set(ToolsLoad::Failed(e));
                    }
                }
            });
        })
    };
    {
        let load_tools = load_tools.clone();
        use_effect_with(wants_tools, move |wants_tools| {
            if *wants_tools {
                load_tools.emit("");
            }
        });
    }
    let on = {
        let dispatcher = state.dispatcher();
        use_callback(load_tools, move |action: Action, load_tools| match action.tool_control() {
            Some(control) => load_tools.emit(control),
            None => dispatcher.dispatch(action),
        })
    };
    let on_seek = {
        let dispatcher = state.dispatcher();
        use_callback((), move |position: usize, _| dispatcher.dispatch(Action::Seek(position)))
    };

    let share = (AttrValue::from(fragment), AttrValue::from(embed_fragment));
    let tabs = html! {
        <nav class="tabs" aria-label="Views">
            { for [(Tab::Visualizer, "tab-visualizer", "Visualizer"), (Tab::Playground, "tab-playground", "Register playground")]
                .into_iter().map(|(t, id, label)| html! {
                    <button id={id} type="button" class={classes!("tab", (state.tab == t).then_some("on"))}
                        aria-current={(state.tab == t).then_some("page")}
                        onclick={click(&on, Action::Tab(t))}>{ label }</button>
                }) }
        </nav>
    };
    let header = html! {
        <header class="topbar">
            <div class="brand">
                <svg class="logo" viewBox="0 0 24 24" width="26" height="26" aria-hidden="true">
                    <rect x="2" y="2" width="20" height="20" rx="6" class="logo-bg" />
                    <path d="M7 6v12M12 6v12M17 6v12M5 10h14M5 15h14" class="logo-fg" />
                </svg>
                <span class="brand-name">{ "Fencelab" }</span>
            </div>
            { tabs }
        </header>
    };
    let tools_status = match &*tools {
        _ if TOOLS => Html::default(),
        ToolsLoad::Idle => Html::default(),
        ToolsLoad::Loading => tools_notice("Loading the tools…".into(), false),
        ToolsLoad::Failed(e) => tools_notice(
            format!("The tools could not load: {e}. Pressing a tool again retries."),
            true,
        ),
    };
    let view = if let Some(error) = state.broken_embed() {
        embed_error(error)
    } else if handing_over {
        tools_notice("Opening this link’s view…".into(), false)
    } else {
        html! {
            <>
                { visualizer(&state, &share, &on, &on_seek, (&diagram_ref, &log_ref), &compare_refs, pane_width) }
                { tools_status }
            </>
        }
    };
    if state.embed.is_some() {
        return html! { <main class="embed">{ view }</main> };
    }
    let body = match state.tab {
        Tab::Playground if TOOLS => html! { <Playground /> },
        _ => view,
    };
    html! {
        <div class="app">
            { header }
            <main class="page wide">{ body }</main>
            <footer class="footer">
                { "Runs entirely in your browser: every step is " }<code>{ "fencelab-core" }</code>
                { " compiled to WebAssembly. Nothing is sent anywhere." }
            </footer>
        </div>
    }
}

/// What an embed shows when its link cannot be opened: what is wrong, in its frame, rather than
/// another story in the story's place.
fn embed_error(error: &str) -> Html {
    html! {
        <p id="link-error" class="error" role="alert">
            { format!("This embedded view could not be opened: {error}. The page that embeds it needs to fix its link.") }
        </p>
    }
}

/// The line that says how loading the tools goes: a polite status, or an alert on failure.
fn tools_notice(text: String, failed: bool) -> Html {
    html! {
        <p id="tools-status" class={classes!("tools-status", failed.then_some("error"))}
            role={if failed { "alert" } else { "status" }}>{ text }</p>
    }
}

fn visualizer(
    state: &Viz,
    share: &(AttrValue, AttrValue),
    on: &Callback<Action>,
    on_seek: &Callback<usize>,
    (diagram_ref, log_ref): (&NodeRef, &NodeRef),
    compare_refs: &(NodeRef, NodeRef),
    pane_width: f64,
) -> Html {
    let scenario = &state.run.scenario;
    let (at, end) = state.cursor();
    let (unit, now) = match &state.compare {
        Some(c) if TOOLS => ("tick", c.now()),
        _ => ("step", state.run.tick_at(state.position)),
    };
    let compare_on = TOOLS && state.compare.is_some();
    let kind = state
        .current()
        .and_then(|r| state.run.layout.step_kinds.get(r.index))
        .copied()
        .unwrap_or("");
    let main = match &state.compare {
        Some(compare) if TOOLS => html! {
            { compare_view(&CompareProps { compare, on: on.clone(), on_seek: on_seek.clone(),
                nodes: compare_refs.clone() }) }
        },
        _ => html! {
            <div class={classes!("stage", (!state.shows("panels")).then_some("alone"))}>
                <section class="card diagram-card" aria-labelledby="diagram-title">
                    <h2 id="diagram-title" class="sr-only">{ "Swimlane diagram" }</h2>
                    { diagram_view(&DiagramProps { run: &state.run, position: state.position,
                        frame: &state.frame, id: "main".into(), on_seek: on_seek.clone(),
                        node: diagram_ref.clone(), width: pane_width }) }
                    if state.shows("legend") {
                        { legend(&state.run.layout) }
                    }
                </section>
                if state.shows("panels") {
                    <aside class="side-panels" aria-label="State at this step">
                        { panels(&state.frame, !state.shows("caption")) }
                    </aside>
                }
            </div>
        },
    };
    let embedded = state.embed.is_some();
    let badge = state.badge();
    html! {
        <>
            if state.shows("picker") {
            <section class="card story" aria-labelledby="story-title">
                <Picker cases={state.cases.clone()} case={state.case.clone()} variant={state.variant.clone()}
                    policy={state.policy} edited={state.edited} on={on.clone()} />
                <div class="story-text">
                    <h1 id="story-title">
                        { scenario.title.clone() }
                        { run_badge(&badge) }
                    </h1>
                    <p class="intro">{ scenario.intro.clone() }</p>
                </div>
                <div class="modes">
                    <button id="compare-toggle" type="button" class={classes!("chip", compare_on.then_some("on"))}
                        aria-pressed={compare_on.to_string()} onclick={click(on, Action::Compare(!compare_on))}>
                        { icon("compare") }{ "Compare enforcement" }
                    </button>
                    // Embeds have no room for the editor.
                    if !embedded {
                        <button id="editor-toggle" type="button" class={classes!("chip", state.editor.open.then_some("on"))}
                            aria-pressed={state.editor.open.to_string()} onclick={click(on, Action::ToggleEditor)}>
                            { icon("edit") }{ "Edit scenario JSON" }
                        </button>
                    }
                </div>
                if let Some(error) = &state.link_error {
                    <LinkProblem error={error.clone()} on={on.clone()} />
                }
                if let Some(error) = &state.error {
                    <p class="error" role="alert">{ error.clone() }</p>
                }
                if let Some(stopped) = &state.run.stopped {
                    <p class="notice">{ format!("Note: {stopped}.") }</p>
                }
            </section>
            } else {
                <h1 id="story-title" class="embed-title">{ scenario.title.clone() }
                    { run_badge(&badge) }</h1>
            }
            if !embedded {
                if TOOLS {
                    <Explore run={state.run.clone()} switches={state.switches.clone()}
                        comparing={compare_on} on={on.clone()} />
                } else {
                    // The switches work here; the search itself is one of the tools.
                    { explore_panel(&ExploreProps {
                        offers: explore::offers(&state.run.scenario, &state.switches),
                        switches: state.switches.clone(),
                        status: Status::Idle,
                        on: on.clone(),
                        on_explore: on.reform(|_| Action::Tools("explore-find")),
                    }) }
                }
            }
            <div class={classes!("player", embedded.then_some("static"))}>
                if state.shows("controls") {
                    { controls(&ControlsProps { at, end, unit, now, playing: state.playing, speed: state.speed, on: on.clone() }) }
                }
                if !compare_on && state.shows("caption") {
                    { caption(state.current().map(std::slice::from_ref).unwrap_or_default(), kind, "caption") }
                }
            </div>
            { main }
            <div class={classes!("lower", state.editor.open.then_some("with-editor"))}>
                if TOOLS && state.editor.open && !embedded {
                    <Editor text={state.editor.text.clone()} error={state.editor.error.clone()}
                        edited={state.edited} on={on.clone()} />
                }
                if !compare_on && state.shows("log") {
                    { log(&LogProps { run: &state.run, position: state.position, on_seek: on_seek.clone(), node: log_ref.clone() }) }
                }
            </div>
            if !embedded {
                <div class="exports">
                    <ShareExport run={state.run.clone()} position={state.position}
                        fragment={share.0.clone()} embed_fragment={share.1.clone()} on={on.clone()} />
                    <Transcript run={state.run.clone()} />
                </div>
            }
        </>
    }
}

/// Reads the text of the `<input>` an event came from.
fn input_text(event: &InputEvent) -> Option<String> {
    let input = event.target()?.dyn_into::<HtmlInputElement>().ok()?;
    Some(input.value())
}

/// Issue 2's single-register playground, with its own reducer and flash timer.
#[component]
fn Playground() -> Html {
    let state = use_reducer(RegisterView::new);

    // Highlight each new outcome briefly. Dropping the Timeout (on the next attempt, or when the
    // page goes away) cancels it; the reducer ignores an end-of-flash for an older attempt anyway.
    {
        let dispatcher = state.dispatcher();
        use_effect_with(state.flashing(), move |flashing| {
            let timer = flashing.map(|seq| {
                Timeout::new(FLASH_MS, move || dispatcher.dispatch(PlaygroundAction::EndFlash(seq)))
            });
            move || drop(timer)
        });
    }

    // A press of Write that found no token puts the focus on the field to fix.
    let field = use_node_ref();
    {
        let field = field.clone();
        use_effect_with(state.input_errors(), move |errors| {
            if *errors > 0 {
                if let Some(input) = field.cast::<HtmlInputElement>() {
                    let _ = input.focus();
                }
            }
        });
    }

    let on_generation = {
        let dispatcher = state.dispatcher();
        Callback::from(move |event: InputEvent| {
            if let Some(text) = input_text(&event) {
                dispatcher.dispatch(PlaygroundAction::SetGeneration(text));
            }
        })
    };
    let on_value = {
        let dispatcher = state.dispatcher();
        Callback::from(move |event: InputEvent| {
            if let Some(text) = input_text(&event) {
                dispatcher.dispatch(PlaygroundAction::SetValue(text));
            }
        })
    };
    let on_submit = {
        let dispatcher = state.dispatcher();
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            dispatcher.dispatch(PlaygroundAction::Write);
        })
    };

    html! {
        <div class="playground">
            { view::masthead() }
            <div class="grid">
                { view::register_card(&state) }
                { view::write_form(&state, &field, on_generation, on_value, on_submit) }
            </div>
            { view::outcome(&state) }
            { view::history(&state) }
        </div>
    }
}

#[derive(Properties, PartialEq)]
struct ExploreShellProps {
    /// The run on screen: its scenario is what a search explores.
    run: RunRef,
    /// The switches the reader turned on.
    switches: Vec<fencelab_core::scenario::switches::Switch>,
    /// Whether compare mode is on (a counterexample opens in single mode).
    comparing: bool,
    on: Callback<Action>,
}

/// The explorer's shell: its reducer, the search run in slices from a timer so the page stays
/// responsive, and the hand-off of a counterexample to the visualizer. Dropping the timer (on
/// cancel, on a new story, when the panel goes away) drops the search.
#[component]
fn Explore(props: &ExploreShellProps) -> Html {
    let state = use_reducer(|| ExploreView::new(Rc::new(props.run.scenario.clone())));

    // The visualizer plays another scenario: that is what a search explores now.
    {
        let dispatcher = state.dispatcher();
        use_effect_with(props.run.clone(), move |run| {
            dispatcher.dispatch(ExploreAction::Origin(Rc::new(run.scenario.clone())));
        });
    }

    // The running search: one slice per timer tick until it reports a result.
    {
        let dispatcher = state.dispatcher();
        let origin = state.origin.clone();
        use_effect_with(state.running(), move |running| {
            let timer = running.map(|id| match Job::new(id, (*origin).clone()) {
                Ok(job) => {
                    let job = std::cell::RefCell::new(job);
                    let (budget, ms) = explore::pace();
                    Some(Interval::new(ms, move || {
                        let action = job.borrow_mut().slice(budget);
                        dispatcher.dispatch(action);
                    }))
                }
                Err(e) => {
                    dispatcher.dispatch(ExploreAction::Fail(id, e));
                    None
                }
            });
            move || drop(timer)
        });
    }

    // A counterexample opens in the visualizer at the step that broke the invariant.
    {
        let on = props.on.clone();
        let comparing = props.comparing;
        use_effect_with(state.counterexample().cloned(), move |found| {
            if let Some(found) = found {
                if comparing {
                    on.emit(Action::Compare(false));
                }
                on.emit(Action::Load(Box::new((*found.scenario).clone())));
                on.emit(Action::Seek(found.step + 1));
            }
        });
    }

    let offers = explore::offers(&props.run.scenario, &props.switches);
    let on_explore = {
        let dispatcher = state.dispatcher();
        Callback::from(move |action: ExploreAction| dispatcher.dispatch(action))
    };
    explore_panel(&ExploreProps {
        offers,
        switches: props.switches.clone(),
        status: state.status.clone(),
        on: props.on.clone(),
        on_explore,
    })
}

/// Browser benchmark hook (`window.wasmBindings.explore_bench(workers)`): explores the
/// contention scenario with `workers` workers to the end in one go and returns JSON with the
/// counts and the wasm linear memory in bytes afterwards (it only grows, so it is the peak).
/// The tools module's, like the explorer it drives.
#[cfg(feature = "tools")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn explore_bench(workers: usize) -> String {
    let (stats, safe) = explore::bench(workers);
    #[cfg(target_arch = "wasm32")]
    let memory = core::arch::wasm32::memory_size(0) * 65_536;
    #[cfg(not(target_arch = "wasm32"))]
    let memory = 0usize;
    format!(
        "{{\"unique_states\":{},\"transitions\":{},\"max_depth\":{},\"no_violation\":{safe},\"wasm_memory\":{memory}}}",
        stats.unique_states, stats.transitions, stats.max_depth
    )
}

/// Test hook (`window.wasmBindings.explore_pace(steps, ms)`): explorer steps per timer tick and
/// milliseconds between ticks, so a browser test can make a search slow enough to cancel;
/// `explore_pace(0, 0)` restores the default. The tools module's.
#[cfg(feature = "tools")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn explore_pace(steps: usize, ms: u32) {
    explore::set_pace(steps, ms);
}

/// The wasm linear memory in bytes now (it only grows): the benchmark reads it before a search.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn wasm_memory() -> usize {
    #[cfg(target_arch = "wasm32")]
    return core::arch::wasm32::memory_size(0) * 65_536;
    #[cfg(not(target_arch = "wasm32"))]
    0
}
