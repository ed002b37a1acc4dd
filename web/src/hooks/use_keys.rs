//! Keys: Space play/pause, Left/Right step, Shift+Left/Right and Page Up/Down jump a tenth of
//! the run (Page Down forward), Home/End go to either end. The scrubber answers the same keys,
//! except that its plain arrows and Home/End are its own (they move it, as a range does).

use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use web_sys::{Element, KeyboardEvent};
use yew::prelude::*;

use crate::viz::state::{Action, Tab, Viz};

/// Where a key press landed, as far as the player's keys care.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Target {
    /// The page itself, or an element that has no keys of its own.
    #[default]
    Page,
    /// A text field, menu or other control that answers keys itself.
    Field,
    /// The scrubber, a range whose arrows and Home/End move it one step or to an end.
    Scrubber,
    /// A button whose action goes to a step, where a reader who chose it already is: a log row,
    /// a finding or a mark under the scrubber. Space plays there; Enter still chooses.
    Chooser,
    /// The Play button: Space plays or pauses as everywhere (at the end, nothing), so only
    /// Enter or a click replays.
    Play,
    /// Any other button, which answers Space with its own click.
    Button,
}

/// What a key press does, given where it landed and whether it is inside a box that scrolls
/// with Page Up/Down (the diagram or the log). Page Down goes forward, as it scrolls forward.
pub fn key_action(key: &str, shift: bool, target: Target, scroller: bool) -> Option<Action> {
    let native_arrows = target == Target::Scrubber;
    match (key, target) {
        (_, Target::Field) => None,
        (" " | "Spacebar", Target::Button) => None,
        (" " | "Spacebar", _) => Some(Action::TogglePlay),
        ("ArrowLeft", _) if shift => Some(Action::Jump(false)),
        ("ArrowRight", _) if shift => Some(Action::Jump(true)),
        ("PageUp", _) if !scroller => Some(Action::Jump(false)),
        ("PageDown", _) if !scroller => Some(Action::Jump(true)),
        (_, _) if native_arrows => None,
        ("ArrowLeft", _) => Some(Action::Back),
        ("ArrowRight", _) => Some(Action::Forward),
        ("Home", _) => Some(Action::ToStart),
        ("End", _) => Some(Action::ToEnd),
        _ => None,
    }
}

/// Where `event` landed, and whether inside a box that scrolls with Page Up/Down.
fn target_of(event: &KeyboardEvent) -> (Target, bool) {
    let Some(element) = event.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
        return (Target::Page, false);
    };
    let within = |selector: &str| element.closest(selector).ok().flatten().is_some();
    let scroller = within(".diagram, .log");
    let target = match element.tag_name().to_ascii_lowercase().as_str() {
        "input" if element.id() == "scrubber" => Target::Scrubber,
        "input" | "textarea" | "select" | "summary" => Target::Field,
        "button" if element.id() == "play" => Target::Play,
        "button" if within(".log .entry, .finding-list .finding, .scrub-mark") => Target::Chooser,
        "button" => Target::Button,
        _ => Target::Page,
    };
    (target, scroller)
}

/// Dispatches the keys' actions while `tab` is the visualizer. One listener for the page's life:
/// it reads the tab from a cell each render updates, so changing tabs adds no listener.
#[hook]
pub fn use_keys(dispatcher: UseReducerDispatcher<Viz>, tab: Tab) {
    let current = use_mut_ref(|| tab);
    *current.borrow_mut() = tab;
    use_effect_with((), move |_| {
        let document = web_sys::window().and_then(|w| w.document());
        let listener = document.map(|document| {
            // Not passive: a handled key must not also scroll the page, move the scrubber or
            // click the focused button.
            let options = EventListenerOptions::enable_prevent_default();
            EventListener::new_with_options(&document, "keydown", options, move |event| {
                let Some(event) = event.dyn_ref::<KeyboardEvent>() else {
                    return;
                };
                if *current.borrow() != Tab::Visualizer
                    || event.ctrl_key()
                    || event.meta_key()
                    || event.alt_key()
                {
                    return;
                }
                let (target, scroller) = target_of(event);
                if let Some(action) = key_action(&event.key(), event.shift_key(), target, scroller)
                {
                    event.prevent_default();
                    dispatcher.dispatch(action);
                }
            })
        });
        move || drop(listener)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scrubber_keeps_its_own_arrows_and_ends_but_jumps_and_plays_as_the_page_does() {
        let on = |key, shift, target| key_action(key, shift, target, false);
        for target in [Target::Page, Target::Scrubber, Target::Chooser, Target::Play] {
            assert_eq!(on("PageDown", false, target), Some(Action::Jump(true)), "{target:?}");
            assert_eq!(on("PageUp", false, target), Some(Action::Jump(false)), "{target:?}");
            assert_eq!(on("ArrowRight", true, target), Some(Action::Jump(true)), "{target:?}");
            assert_eq!(on("ArrowLeft", true, target), Some(Action::Jump(false)), "{target:?}");
            assert_eq!(on(" ", false, target), Some(Action::TogglePlay), "{target:?}");
        }
        for key in ["ArrowLeft", "ArrowRight", "Home", "End"] {
            assert_eq!(on(key, false, Target::Scrubber), None, "{key}");
        }
        assert_eq!(on("ArrowRight", false, Target::Page), Some(Action::Forward));
        assert_eq!(on("End", false, Target::Chooser), Some(Action::ToEnd));
    }

    #[test]
    fn fields_and_other_buttons_keep_their_keys_and_scrolling_boxes_their_pages() {
        assert_eq!(key_action(" ", false, Target::Field, false), None);
        assert_eq!(key_action("ArrowLeft", true, Target::Field, false), None);
        assert_eq!(key_action(" ", false, Target::Button, false), None);
        assert_eq!(key_action("Enter", false, Target::Play, false), None);
        assert_eq!(key_action("PageDown", false, Target::Page, true), None);
        assert_eq!(key_action("ArrowRight", false, Target::Button, true), Some(Action::Forward));
    }
}
