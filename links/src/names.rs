//! The link's words: its parameters, the parts an embed may show, the themes it may force and
//! the policy names it writes. Each is an enum whose names serde's derive spells (`Named`), so
//! the writer, the reader and their error messages take them from one place.

use fencelab_core::{fence::register::SameGenerationPolicy, names::Named};
use serde::Serialize;

/// A parameter of a link's fragment (`scenario=paused-worker&step=4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum Param {
    /// A built-in story by name, or the generated load ([`GENERATED`](crate::GENERATED)).
    Scenario,
    /// The story's variant.
    Variant,
    /// A scenario the reader wrote, as base64url JSON.
    Custom,
    /// A recorded history's same-origin address, instead of a story.
    History,
    /// The title shown instead of the story's or the history's own.
    Title,
    /// A same-generation policy forced on every store and the gateway.
    Policy,
    /// The choices taken where several events were due.
    Schedule,
    /// The faults a reader injected, with the step each comes after.
    Inject,
    /// "You decide" mode.
    Decide,
    /// In "You decide" mode, how many steps were decided.
    Steps,
    /// The step shown.
    Step,
    /// Compare mode, with the enforcement of each side.
    Compare,
    /// Whether playback runs.
    Play,
    /// Playback speed in percent.
    Speed,
    /// The protections turned off.
    Break,
    /// Embed mode and the parts it shows.
    Embed,
    /// The page's tab: the visualizer or the register playground.
    Tab,
    /// A forced colour scheme.
    Theme,
    /// The course chapter followed.
    Course,
    /// "Predict the outcome" on or off.
    Quiz,
    /// Who wrote the link: [`HOST_ELEMENT`] for a `<fencelab-player>` element.
    Host,
}

/// The parameters that change a simulated story, which mean nothing to a recorded history.
pub const STORY_ONLY: [Param; 9] = [
    Param::Variant,
    Param::Policy,
    Param::Compare,
    Param::Break,
    Param::Tab,
    Param::Decide,
    Param::Schedule,
    Param::Inject,
    Param::Steps,
];

/// The `host=` value a `<fencelab-player>` element writes, so the page names what is wrong by
/// the element's attributes.
pub const HOST_ELEMENT: &str = "element";

/// The `tab=` value of the register playground.
pub const TAB_PLAYGROUND: &str = "playground";

/// The `tab=` value of the visualizer, the default.
pub const TAB_VISUALIZER: &str = "visualizer";

/// `host=element`, as a link carries it.
pub fn element_marker() -> String {
    format!("{}={HOST_ELEMENT}", Param::Host.name())
}

/// A part of the page an embed may show (`embed=controls,caption`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The diagram, which always shows: `embed=diagram` asks for nothing else.
    Diagram,
    /// The story picker and title card.
    Picker,
    /// The playback controls.
    Controls,
    /// The caption.
    Caption,
    /// The diagram's legend.
    Legend,
    /// The state panels beside the diagram.
    Panels,
    /// The event log.
    Log,
}

/// A colour scheme a link forces on the page, whatever the reader's setting (an embed matching
/// the site around it). Its name is the style sheet's too (`data-theme` on the root element).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    /// Light colours.
    Light,
    /// Dark colours.
    Dark,
}

/// The name a link writes for a same-generation policy. Links keep their shorter spelling
/// (`allow-same`, `strict`); they read the scenario files' spelling too
/// ([`SameGenerationPolicy::read`]).
pub fn policy_name(policy: SameGenerationPolicy) -> &'static str {
    match policy {
        SameGenerationPolicy::AllowSame => "allow-same",
        SameGenerationPolicy::StrictlyNewer => "strict",
    }
}

/// `names` as an English list: `a, b and c`.
pub(crate) fn listed<'a>(names: impl IntoIterator<Item = &'a str>, and: &str) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} {and} {last}", rest.join(", ")),
        None => String::new(),
    }
}
