//! "You decide": the mode's toggle, the panel of what the engine says can happen next and the
//! faults it can inject, and the same offers on the diagram (a lane's menu, "deliver now" on a
//! message in flight). Everything offered comes from `viz::decide::Options`; nothing is added
//! here.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};
use yew::prelude::*;

use crate::components::controls::{click, when};
use crate::components::icons::icon;
use crate::viz::decide::{
    acts_on, choice_label, count, deliver_choice, fault_ticks, replaces, with_ticks, Options,
};
use crate::viz::state::{Action, Decide, DecideAction};

/// The mode's toggle, beside the transport bar.
pub fn decide_toggle(on: bool, cb: &Callback<Action>) -> Html {
    html! {
        <button id="decide-toggle" type="button" class={classes!("chip", on.then_some("on"))}
            aria-pressed={on.to_string()} onclick={click(cb, Action::Decide(!on))}>
            { "You decide" }
        </button>
    }
}

/// What the panel and the diagram's menus need: the offer and how long pauses and delays last.
pub struct DecideView {
    pub options: Rc<Options>,
    /// The length the reader asked for, or the engine's suggestion.
    pub ticks: Option<u64>,
    /// Whether the field holds no length the page can use (empty, 0 or negative).
    pub refused: bool,
    /// What the field holds as typed, once the reader has typed in it.
    pub typed: Option<String>,
    pub on: Callback<Action>,
}

impl DecideView {
    /// The view of the mode's state.
    pub fn new(decide: &Decide, on: &Callback<Action>) -> DecideView {
        let suggested = decide.options.faults.iter().find_map(fault_ticks);
        DecideView {
            options: decide.options.clone(),
            ticks: decide.ticks.or(suggested),
            refused: decide.refused,
            typed: decide.typed.clone(),
            on: on.clone(),
        }
    }

    /// The faults on offer, sized as the reader asked, each with its action.
    fn faults(&self) -> impl Iterator<Item = (String, Action)> + '_ {
        self.options.faults.iter().map(|f| {
            let fault = with_ticks(f, self.ticks);
            (self.options.fault_label(&fault), Action::InDecide(DecideAction::Inject(fault)))
        })
    }

    /// A lane's header name (its kind's icon and label) as a menu of the faults that act on it,
    /// when any do.
    pub fn lane_menu(&self, lane: &str, kind: &'static str, label: &str) -> Option<Html> {
        let items: Vec<(String, Action)> = self
            .options
            .faults
            .iter()
            .zip(self.faults())
            .filter(|(f, _)| acts_on(f, lane))
            .map(|(_, item)| item)
            .collect();
        (!items.is_empty()).then(|| {
            html! { <LaneMenu lane={AttrValue::from(lane.to_string())} kind={kind}
                label={AttrValue::from(label.to_string())} items={Items(Rc::new(items))} on={self.on.clone()} /> }
        })
    }

    /// The choice that delivers `message` now, with what it says, if the engine lists one.
    pub fn deliver(&self, message: u64) -> Option<(usize, String)> {
        let n = deliver_choice(&self.options.choices, message)?;
        Some((n, choice_label(&self.options.choices[n])))
    }
}

/// The panel: the events the engine lists, the faults it can inject, and undo.
pub fn decide_panel(view: &DecideView, position: usize, steps: usize) -> Html {
    let on = &view.on;
    let options = &view.options;
    let note = replaces(options.later);
    // Every keystroke counts, so the labels follow the field as it is typed and nothing is
    // left to the field's change on blur, which would cost the click that caused the blur.
    let on_ticks = when(on, |e: InputEvent| {
        let input = e.target_dyn_into::<web_sys::HtmlInputElement>()?;
        Some(Action::InDecide(DecideAction::Ticks(input.value())))
    });
    let described = note.is_some().then_some("decide-later");
    let decided = match (position, steps) {
        (0, _) => "Nothing has happened yet.".to_string(),
        (p, s) if p == s => format!("After step {p}, the last you have decided."),
        (p, s) => format!("After step {p} of the {s} you have decided."),
    };
    html! {
        <section id="decide" class="card decide" aria-labelledby="decide-title">
            <h2 id="decide-title">{ "You decide what happens next" }</h2>
            <p id="decide-at" class="muted">{ format!("{decided} The engine lists what can happen; pick one, or break something.") }</p>
            if let Some(note) = note {
                <p id="decide-later" class="notice">{ note }</p>
            }
            if options.choices.is_empty() {
                <p id="decide-ended">{ "Nothing more can happen: the run has ended." }</p>
            } else {
                <h3>{ "What can happen next" }</h3>
                { list("decide-choices".into(), options.choices.iter().enumerate()
                    .map(|(i, c)| (choice_label(c), Action::InDecide(DecideAction::Choose(i)))), on, described, None) }
            }
            if !options.faults.is_empty() {
                <h3>{ "Inject a fault" }</h3>
                <label class="ticks">{ "Pauses, delays and clock jumps last " }
                    <input id="fault-ticks" type="number" min="1" max="100000" value={view.typed.clone().unwrap_or_else(|| view.ticks.unwrap_or(1).to_string())}
                        aria-invalid={view.refused.then_some("true")}
                        aria-describedby={view.refused.then_some("fault-ticks-refused")}
                        oninput={on_ticks} />{ " ticks" }</label>
                if view.refused {
                    <p id="fault-ticks-refused" class="error">{ format!(
                        "A fault lasts at least 1 tick: the buttons below keep {}.", count(view.ticks.unwrap_or(1), "tick")) }</p>
                }
                { list("decide-faults".into(), view.faults(), on, described, None) }
            }
            <button id="undo" type="button" class="chip" disabled={steps == 0}
                aria-keyshortcuts="Control+Z Meta+Z" onclick={click(on, Action::InDecide(DecideAction::Undo))}>
                { "Undo the last step (Ctrl+Z)" }
            </button>
        </section>
    }
}

/// A list of offers as buttons, or a menu's items (`menu`: its name). Each says what it does and,
/// when deciding here replaces later steps, points to the note that says so.
fn list(
    id: String,
    items: impl Iterator<Item = (String, Action)>,
    on: &Callback<Action>,
    described: Option<&'static str>,
    menu: Option<String>,
) -> Html {
    let item = menu.is_some().then_some("menuitem");
    html! {
        <ul class="decide-list" id={id} role={menu.is_some().then_some("menu")} aria-label={menu}>
            { for items.map(|(label, action)| html! {
                <li role={item.and(Some("none"))}><button type="button" class="option" role={item}
                    tabindex={item.and(Some("-1"))} aria-describedby={described}
                    onclick={click(on, action)}>{ label }</button></li>
            }) }
        </ul>
    }
}

/// A lane menu's items, compared by identity: they are made afresh with every offer.
#[derive(Clone)]
struct Items(Rc<Vec<(String, Action)>>);

impl PartialEq for Items {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Properties, PartialEq)]
struct LaneMenuProps {
    /// The lane's id, e.g. `worker:A`.
    lane: AttrValue,
    /// The lane's kind, whose icon the header shows.
    kind: &'static str,
    /// The lane's label.
    label: AttrValue,
    /// The menu's items: label and action.
    items: Items,
    on: Callback<Action>,
}

/// Focuses the `n`-th item (from 1) of `menu`.
fn focus_item(menu: &NodeRef, n: usize) {
    let item = menu
        .cast::<Element>()
        .and_then(|m| m.query_selector(&format!("li:nth-child({n}) > [role=menuitem]")).ok())
        .flatten()
        .and_then(|e| e.dyn_into::<HtmlElement>().ok());
    if let Some(item) = item {
        let _ = item.focus();
    }
}

/// A lane's menu, as the menu button pattern has it: the lane's name is a button that opens it
/// (click, long press or the context-menu key, Enter or Space, Down arrow); arrows move through
/// the items, Escape closes it and focus goes back to the button.
#[component]
fn LaneMenu(props: &LaneMenuProps) -> Html {
    // Which item has focus (from 1), or 0 while closed.
    let focused = use_state(|| 0usize);
    let button = use_node_ref();
    let menu = use_node_ref();
    let len = props.items.0.len();
    {
        let menu = menu.clone();
        use_effect_with(*focused, move |n| {
            if *n > 0 {
                // In the top layer, so the diagram's scrolling box cannot clip it; showing it
                // again while open fails harmlessly.
                if let Some(m) = menu.cast::<HtmlElement>() {
                    let _ = m.show_popover();
                }
                focus_item(&menu, *n);
            }
        });
    }
    let id = format!("menu-{}", props.lane.replace([':', '/'], "-"));
    let close = {
        let (focused, button) = (focused.clone(), button.clone());
        move || {
            focused.set(0);
            if let Some(b) = button.cast::<HtmlElement>() {
                let _ = b.focus();
            }
        }
    };
    let toggle = {
        let focused = focused.clone();
        Callback::from(move |_: MouseEvent| focused.set(if *focused == 0 { 1 } else { 0 }))
    };
    let open = {
        let focused = focused.clone();
        Callback::from(move |e: MouseEvent| {
            e.prevent_default();
            focused.set(1);
        })
    };
    let on_button_key = {
        let focused = focused.clone();
        Callback::from(move |e: KeyboardEvent| match e.key().as_str() {
            "ArrowDown" | "ContextMenu" => {
                e.prevent_default();
                focused.set(1);
            }
            "ArrowUp" => {
                e.prevent_default();
                focused.set(len);
            }
            _ => {}
        })
    };
    let on_menu_key = {
        let (focused, close) = (focused.clone(), close.clone());
        Callback::from(move |e: KeyboardEvent| {
            let n = *focused;
            let to = match e.key().as_str() {
                "ArrowDown" => n % len + 1,
                "ArrowUp" => (n + len - 2) % len + 1,
                "Home" => 1,
                "End" => len,
                "Escape" => {
                    e.prevent_default();
                    e.stop_propagation();
                    close();
                    return;
                }
                "Tab" => {
                    focused.set(0);
                    return;
                }
                _ => return,
            };
            // The page's own keys (Home, End, arrows) must not also move the run.
            e.prevent_default();
            e.stop_propagation();
            focused.set(to);
        })
    };
    let on_leave = {
        let (focused, menu, button) = (focused.clone(), menu.clone(), button.clone());
        Callback::from(move |e: FocusEvent| {
            let to = e.related_target().and_then(|t| t.dyn_into::<web_sys::Node>().ok());
            let inside =
                |r: &NodeRef| r.cast::<web_sys::Node>().is_some_and(|n| n.contains(to.as_ref()));
            if *focused > 0 && !inside(&menu) && !inside(&button) {
                focused.set(0);
            }
        })
    };
    let is_open = *focused > 0;
    html! {
        <div class="lane-menu" onfocusout={on_leave}>
            <button ref={button} type="button" class="lane-name lane-button" aria-haspopup="menu"
                aria-expanded={is_open.to_string()} aria-controls={is_open.then(|| id.clone())}
                style={is_open.then_some("anchor-name:--lane-menu")}
                data-lane-menu={props.lane.clone()} onclick={toggle} oncontextmenu={open}
                onkeydown={on_button_key}>
                { icon(props.kind) }{ props.label.clone() }
            </button>
            if is_open {
                // A chosen item's click reaches the menu too, which then closes.
                <div ref={menu} class="menu" popover="manual" onkeydown={on_menu_key} onclick={move |_: MouseEvent| close()}>
                    { list(id, props.items.0.iter().cloned(), &props.on, None,
                        Some(format!("What to do to {}", props.lane.split_once(':').map_or(props.lane.as_str(), |(_, n)| n)))) }
                </div>
            }
        </div>
    }
}
