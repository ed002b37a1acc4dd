//! The shell: owns the view's reducer, wires its effects (the hooks in `hooks/`) and renders the
//! page from `components/`. The playground and the explorer have shells of their own.

mod explore;
mod playground;

use yew::prelude::*;

use crate::components::compare::{compare_view, CompareProps};
use crate::components::controls::{click, controls, ControlsProps};
use crate::components::decide::{decide_panel, decide_toggle, DecideView};
use crate::components::diagram::{diagram_view, legend, DiagramProps};
use crate::components::editor::Editor;
use crate::components::history::{
    history_card, history_status, link_note, open_control, Findings, ScrubMarks,
};
use crate::components::icons::icon;
use crate::components::learn::{
    course_bar, course_contents, course_next, learn_modes, quiz_card, quiz_status,
};
use crate::components::log::{log, LogProps};
use crate::components::panels::{caption, panels, run_badge};
use crate::components::picker::Picker;
use crate::components::share::{HistoryShare, LinkProblem, ShareExport};
use crate::components::transcript::Transcript;
use crate::hooks::{
    remembered, use_address, use_autoplay, use_document_title, use_drop_history, use_fetch_history,
    use_focus_title, use_follow_step, use_keep_custom, use_keys, use_learn, use_pane_width,
    use_report_title, use_show_chosen, use_step_on_screen, use_sticky_axis, use_theme,
    use_undo_key, use_window, FollowRefs, HEADS,
};
use crate::io;
use crate::viz::history::Origin;
use crate::viz::state::{Action, Tab, Viz};
use crate::viz::window::{export_crop, Focus};
use explore::Explore;
use fencelab_core::picture::layout::{Fit, LONG_RUN};
use fencelab_links::{Embed, Part, ShareLink};
use playground::Playground;

#[component]
pub fn App() -> Html {
    // The fragment holds the whole view (`ShareLink`); an empty one is the first story.
    let state = use_reducer(|| Viz::open_with(&io::fragment(), remembered()));
    // The address follows the view, replacing the current history entry (no flood of entries).
    let link = state.to_link();
    let fragment = link.to_fragment();
    let embed_fragment =
        ShareLink { embed: Some(Embed::USUAL), autoplay: false, ..link }.to_fragment();
    use_keep_custom(state.story.edited, state.story.base.clone());
    use_learn(&state);
    use_keys(state.dispatcher(), state.tab);
    use_undo_key(state.dispatcher(), state.decide().is_some() && state.tab == Tab::Visualizer);
    use_theme(state.theme);
    use_document_title(state.document_title());
    use_report_title(
        (state.embed.is_some() && state.broken_embed().is_none() && state.fetch().is_none())
            .then(|| state.frame_name()),
    );
    use_autoplay(state.dispatcher(), state.playing, state.interval_ms());
    let refs = use_memo((), |_| FollowRefs::default());
    let pane_width = use_pane_width(refs.diagram.clone(), state.embed.is_some());
    use_follow_step(&state, &refs);
    let track = state.track();
    let fit = Fit::new(track.diagram.lanes.len(), pane_width);
    let focus = Focus::diagram(&track.layout, state.position, fit, HEADS);
    let views = Views {
        diagram: use_window(refs.diagram.clone(), track.clone(), state.position, Some(focus)),
        log: use_window(
            refs.log.clone(),
            track.clone(),
            state.position,
            (track.len() > LONG_RUN).then(|| Focus::log(state.position)),
        ),
    };
    use_step_on_screen(refs.diagram.clone(), track.clone(), state.position, focus);
    use_sticky_axis();
    let choices = state.opened().map_or(0, |o| o.choices);
    use_show_chosen(refs.diagram.clone(), choices, track.clone(), state.highlight(), fit);
    use_focus_title(state.focus_title);
    // An embed whose link could not be opened keeps its link, so reloading it shows the same
    // error instead of another story.
    // So does a history link that failed; a history opened from a file has no address.
    let keep_address = state.keeps_address();
    use_address(state.dispatcher(), fragment.clone(), state.entries, keep_address);
    use_fetch_history(state.dispatcher(), state.to_fetch());
    use_drop_history(state.dispatcher(), state.embed.is_none() && state.tab == Tab::Visualizer);
    let on = {
        let dispatcher = state.dispatcher();
        use_callback((), move |action: Action, _| dispatcher.dispatch(action))
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
    let view = match state.broken_embed() {
        Some(error) => embed_error(error, state.element),
        None => visualizer(&state, &share, &on, &on_seek, &refs, pane_width, views),
    };
    if state.embed.is_some() {
        return html! { <main class="embed">{ view }</main> };
    }
    let body = match state.tab {
        Tab::Playground => html! { <Playground /> },
        Tab::Visualizer => view,
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
fn embed_error(error: &str, element: bool) -> Html {
    let fix = if element { "fix that attribute of its <fencelab-player>" } else { "fix its link" };
    html! {
        <p id="link-error" class="error" role="alert">
            { format!("This embedded view could not be opened: {error}. The page that embeds it needs to {fix}.") }
        </p>
    }
}

/// The bands of the diagram's and the log's boxes to draw (see `use_window`).
#[derive(Clone, Copy)]
struct Views {
    diagram: (f64, f64),
    log: (f64, f64),
}

fn visualizer(
    state: &Viz,
    share: &(AttrValue, AttrValue),
    on: &Callback<Action>,
    on_seek: &Callback<usize>,
    refs: &FollowRefs,
    pane_width: f64,
    views: Views,
) -> Html {
    let story = &state.story;
    let scenario = &story.run.scenario;
    let track = state.track();
    let (at, end) = state.cursor();
    let (unit, now, last) = match state.compare() {
        Some(c) => ("tick", c.now(), c.ticks.last().copied().unwrap_or(0)),
        None => ("step", track.tick_at(state.position), track.tick_at(track.len())),
    };
    let compare_on = state.compare().is_some();
    let kind =
        state.current().and_then(|r| track.layout.step_kinds.get(r.index)).copied().unwrap_or("");
    let decide = state.decide().map(|d| DecideView::new(d, on));
    let side = match state.opened() {
        Some(opened) => html! {
            <Findings findings={opened.findings.clone()} chosen={opened.chosen}
                reached={opened.reached(state.position)} on={on.clone()} />
        },
        // Beside the diagram, where the reader watches what their choice does.
        None => match (&decide, state.decide()) {
            (Some(view), Some(d)) => html! {
                <>{ decide_panel(view, state.position, d.steps) }{ panels(&state.frame, !state.shows(Part::Caption)) }</>
            },
            _ => panels(&state.frame, !state.shows(Part::Caption)),
        },
    };
    let main = match state.compare() {
        Some(compare) => html! {
            { compare_view(&CompareProps { compare, on: on.clone(), on_seek: on_seek.clone(),
                nodes: refs.compare.clone() }) }
        },
        None => html! {
            <div class={classes!("stage", (!state.shows(Part::Panels)).then_some("alone"))}>
                <section class="card diagram-card" aria-labelledby="diagram-title">
                    <h2 id="diagram-title" class="sr-only">{ "Swimlane diagram" }</h2>
                    { diagram_view(&DiagramProps { run: track, position: state.position,
                        frame: &state.frame, id: "main".into(), on_seek: on_seek.clone(),
                        node: refs.diagram.clone(), width: pane_width, highlight: state.highlight(),
                        band: views.diagram, decide: decide.as_ref() }) }
                    if state.shows(Part::Legend) {
                        { legend(&track.layout, !state.highlight().is_empty()) }
                    }
                </section>
                if state.shows(Part::Panels) {
                    <aside class="side-panels" aria-label="State at this step">{ side }</aside>
                }
            </div>
        },
    };
    let embedded = state.embed.is_some();
    let badge = state.badge();
    let history = state.opened();
    let fetching = state.fetching();
    let link_failed = state.link_failed();
    let title = state.title();
    // One status line for the whole view, present before anything is said in it, so screen
    // readers announce each change: a history being opened (shown), opened or left (read).
    let status = state.status.clone().unwrap_or_default();
    let busy = status.ends_with('…');
    let status = html! {
        <p id="page-status" class={classes!(if busy { "notice" } else { "sr-only" })} role="status">{ status }</p>
    };
    html! {
        <>
            if !embedded {
                { status }
            }
            if let (Some(opened), true) = (history, state.shows(Part::Picker)) {
                { history_card(opened, &title, &badge, state.history_error(), state.link_note.as_deref(), on) }
            } else if state.shows(Part::Picker) {
            if state.learn.contents && !embedded {
                { course_contents(&state.cases, &state.learn.progress, on) }
            }
            <section class="card story" aria-labelledby="story-title">
                { course_bar(state, on) }
                <Picker cases={state.cases.clone()} case={story.case.clone()} variant={story.variant.clone()}
                    policy={story.policy} edited={story.edited} on={on.clone()} />
                // A link that failed is said first, on a phone's first screen: the story below
                // only stands in.
                if link_failed {
                    { history_status(state.history_error(), None, true, on) }
                }
                if let Some(error) = &state.link_error {
                    <LinkProblem error={error.clone()} on={on.clone()} />
                }
                { link_note(state.link_note.as_deref(), on) }
                <div class="story-text">
                    <h1 id="story-title" tabindex="-1">
                        { title.clone() }
                        { run_badge(&badge) }
                    </h1>
                    // One line until "More" opens it (style.css folds it while the disclosure
                    // is closed); the whole text is always in the page for screen readers.
                    <div class="intro-fold">
                        <p id="story-intro" class="intro">
                            { scenario.intro.clone() }
                            // Told only once it can no longer give a prediction away.
                            if !scenario.outcome.is_empty() && state.shows_outcome() {
                                { " " }<span id="story-outcome">{ scenario.outcome.clone() }</span>
                            }
                        </p>
                        <details id="intro-more" class="more">
                            <summary><span class="when-closed">{ "More" }</span><span class="when-open">{ "Less" }</span></summary>
                        </details>
                    </div>
                </div>
                <div class="modes">
                    // The course first: on a phone this row scrolls sideways, and a newcomer's
                    // way in should not start off screen.
                    if !embedded {
                        { learn_modes(state, on) }
                    }
                    <button id="compare-toggle" type="button" class={classes!("chip", compare_on.then_some("on"))}
                        aria-pressed={compare_on.to_string()} onclick={click(on, Action::Compare(!compare_on))}>
                        { icon("compare") }{ "Compare enforcement" }
                    </button>
                    // Embeds have no room for the editor.
                    if !embedded {
                        <button id="editor-toggle" type="button" class={classes!("chip", story.editor.open.then_some("on"))}
                            aria-pressed={story.editor.open.to_string()} onclick={click(on, Action::ToggleEditor)}>
                            { icon("edit") }{ "Edit scenario JSON" }
                        </button>
                        // Deciding is for the reader of the whole page, on a story rather than a
                        // history (this card shows only for a story).
                        { decide_toggle(decide.is_some(), on) }
                        { open_control(on) }
                    }
                </div>
                if let Some(error) = &story.error {
                    <p class="error" role="alert">{ error.clone() }</p>
                }
                if let Some(stopped) = &story.run.stopped {
                    <p class="notice">{ format!("Note: {stopped}.") }</p>
                }
                if !link_failed {
                    { history_status(state.history_error(), fetching, false, on) }
                }
            </section>
            } else {
                <h1 id="story-title" class="embed-title">{ title.clone() }
                    { run_badge(&badge) }</h1>
                // What the embedding page asked for and did not get (a step past the end).
                { link_note(state.link_note.as_deref(), on) }
            }
            // The player and the diagram: on a phone the player sticks while the diagram and its
            // panels are on screen, and no further (style.css).
            <div class="theatre">
            <div class={classes!("player", embedded.then_some("static"))}>
                if state.shows(Part::Controls) {
                    { controls(&ControlsProps { at, end, unit, now, last, playing: state.playing, speed: state.speed, on: on.clone(),
                        keys: !embedded,
                        marks: history.filter(|h| !h.findings.is_empty()).map(|h| html! {
                            <ScrubMarks findings={h.findings.clone()} len={track.len()}
                                listed={state.shows(Part::Panels)} on={on.clone()} />
                        }) }) }
                }
                if !compare_on && state.shows(Part::Caption) {
                    { caption(state.current().map(std::slice::from_ref).unwrap_or_default(), kind, "caption",
                        if history.is_some() { "history" } else if decide.is_some() { "decide" } else { "story" }) }
                }
                { quiz_status(state) }
                { quiz_card(state, on) }
                { course_next(state) }
            </div>
            { main }
            </div>
            // A tool for the story on screen, below the diagram it changes: the first screen is
            // the diagram's.
            if !embedded && history.is_none() {
                <Explore run={story.run.clone()} switches={story.switches.clone()}
                    comparing={compare_on} on={on.clone()} />
            }
            <div class={classes!("lower", story.editor.open.then_some("with-editor"))}>
                if story.editor.open && !embedded && history.is_none() {
                    <Editor text={story.editor.text.clone()} error={story.editor.error.clone()}
                        edited={story.edited} on={on.clone()} />
                }
                if !compare_on && state.shows(Part::Log) {
                    { log(&LogProps { run: track, position: state.position, on_seek: on_seek.clone(),
                        node: refs.log.clone(), highlight: state.highlight(), band: views.log,
                        conceal: !state.shows_outcome() }) }
                }
            </div>
            if !embedded {
                <div class="exports">
                    <ShareExport run={story.run.clone()} position={state.position} title={state.embed_title()}
                        finding={history.and_then(|h| h.chosen_finding()).map(AttrValue::from)}
                        fragment={share.0.clone()} embed_fragment={share.1.clone()} on={on.clone()}
                        history={history.map(|h| HistoryShare { name: h.name.clone().into(),
                            linked: matches!(h.origin, Origin::Link(_)) })}
                        crop={(track.len() > LONG_RUN && !compare_on).then(|| export_crop(&track.layout.rows,
                            views.diagram, state.position, track.layout.height))} />
                    <Transcript run={track.clone()} />
                </div>
            }
        </>
    }
}
