//! The Fencelab link format: the whole view of the page (which story, variant, policy, step,
//! compare mode, playback, break switches, embed options, the tab) in a URL fragment, and back,
//! with a clear error for a bad, truncated or oversized link.
//!
//! The page reads and writes its address with it, the mdBook preprocessor writes its players'
//! links with it, and the `<fencelab-player>` element's attributes and the parameter each one
//! writes are listed here ([`Attribute`]), so every link is spelt in one place. The core knows
//! nothing of links, only the scenarios and switches they name.
//!
//! ```
//! use fencelab_links::{Embed, ShareLink};
//!
//! let mut link = ShareLink::builtin("paused-worker", "broken");
//! link.step = 19;
//! link.embed = Some(Embed::USUAL);
//! let fragment = link.to_fragment();
//! assert_eq!(fragment, "scenario=paused-worker&variant=broken&step=19&embed=controls,caption");
//! assert_eq!(ShareLink::parse(&fragment), Ok(link));
//! ```

use base64::Engine as _;
use fencelab_core::stories::library;
use fencelab_core::stories::switches::Switch;
use fencelab_core::{fence::register::SameGenerationPolicy, names::Named};
use fencelab_core::{
    format::model::Enforcement, format::model::Injection, format::model::Scenario,
};
use std::fmt::{self, Write as _};

mod element;
mod embed;
#[cfg(test)]
mod fuzz;
mod names;
mod path;
#[cfg(test)]
mod tests;

pub use element::{script_differences, Attribute, BOOK_THEME};
pub use embed::Embed;
use names::listed;
pub use names::{
    element_marker, policy_name, Param, Part, Theme, HOST_ELEMENT, STORY_ONLY, TAB_PLAYGROUND,
    TAB_VISUALIZER,
};

/// The longest fragment accepted, in bytes. Browsers allow more, but a link this long is no
/// longer something people share.
pub const MAX_LINK_LEN: usize = 64 * 1024;

/// Which scenario a link shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkScenario {
    /// A built-in story and variant.
    Builtin {
        /// Case name.
        name: String,
        /// Variant name.
        variant: String,
    },
    /// A scenario the reader wrote, carried in the link itself.
    Custom(Box<Scenario>),
}

/// The name a link uses for the generated benchmark load (not a library case).
pub const GENERATED: &str = "generated";
/// The size of the generated scenario a link names: workers, resources, rounds.
pub const GENERATED_SIZE: (usize, usize, usize) = (20, 5, 6);

/// The full state of a view, as carried by a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareLink {
    /// The scenario.
    pub scenario: LinkScenario,
    /// A same-generation policy forced on every store and the gateway, if any.
    pub policy: Option<SameGenerationPolicy>,
    /// The step shown.
    pub step: usize,
    /// Compare mode: the enforcement forced on the left and on the right side.
    pub compare: Option<(Enforcement, Enforcement)>,
    /// Whether playback runs.
    pub autoplay: bool,
    /// Playback speed in percent of normal (25 to 64,000).
    pub speed: u16,
    /// Protections turned off.
    pub switches: Vec<Switch>,
    /// Embed mode, if the view is embedded.
    pub embed: Option<Embed>,
    /// Whether the page shows the register playground rather than the visualizer.
    pub playground: bool,
    /// A forced colour scheme; `None` follows the reader's setting.
    pub theme: Option<Theme>,
    /// A recorded history to open instead of a story: a same-origin address, relative to the
    /// page, as written in the link (`history=notes/paused.jsonl`).
    pub history: Option<String>,
    /// The title to show instead of the story's or the history's own (`title=`), e.g. for an
    /// embed in a course page.
    pub title: Option<String>,
    /// The story-only parameters a history link gave, which it ignores.
    pub ignored: Vec<&'static str>,
    /// The course chapter followed, by id (`course=the-fence`); without a scenario, the link
    /// opens the chapter's first unfinished story.
    pub course: Option<String>,
    /// "Predict the outcome" turned on or off (`quiz=1`, `quiz=0`); by default it is on in the
    /// course and off elsewhere.
    pub quiz: Option<bool>,
    /// Whether "You decide" mode is on.
    pub decide: bool,
    /// The path a reader took through a built-in story: its schedule and injected faults.
    pub path: Option<(Vec<usize>, Vec<Injection>)>,
    /// In "You decide" mode, how many steps were decided, when more than `step`.
    pub steps: Option<usize>,
    /// Whether a `<fencelab-player>` element wrote this link (`host=element`): what is wrong
    /// with it is then named by the element's attributes, which its author wrote. Only the
    /// first opening reads it, so the page does not write it back.
    pub element: bool,
}

/// What is wrong with a link, naming the parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkError {
    /// The parameter (`.` for the link as a whole).
    pub param: String,
    /// What is wrong with it.
    pub problem: String,
    /// Whether a `<fencelab-player>` element wrote the link: the parameter is then named as
    /// the element's attribute.
    pub element: bool,
}

impl LinkError {
    /// The name the author wrote: the element's attribute for a parameter it writes, else the
    /// link's parameter.
    pub fn name(&self) -> String {
        let attribute = Param::from_name(&self.param)
            .and_then(Attribute::writing)
            .map_or(self.param.as_str(), |a| a.name());
        match self.element {
            true => format!("attribute `{attribute}`"),
            false => format!("link parameter `{}`", self.param),
        }
    }
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name(), self.problem)
    }
}

impl std::error::Error for LinkError {}

pub(crate) fn bad(param: &str, problem: impl Into<String>) -> LinkError {
    LinkError { param: param.into(), problem: problem.into(), element: false }
}

/// The name in `names` closest to `name` when it is a likely misspelling of it (at most two
/// edits, and fewer than half the name's letters).
pub fn closest<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let (distance, best) =
        names.into_iter().map(|n| (strsim::levenshtein(name, n), n)).min_by_key(|(d, _)| *d)?;
    (distance <= 2 && distance * 2 < name.chars().count()).then_some(best)
}

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

impl ShareLink {
    /// A link to a built-in story at its first step.
    pub fn builtin(name: &str, variant: &str) -> ShareLink {
        ShareLink {
            scenario: LinkScenario::Builtin { name: name.into(), variant: variant.into() },
            policy: None,
            step: 0,
            compare: None,
            autoplay: false,
            speed: 100,
            switches: Vec::new(),
            embed: None,
            playground: false,
            theme: None,
            history: None,
            title: None,
            ignored: Vec::new(),
            course: None,
            quiz: None,
            decide: false,
            path: None,
            steps: None,
            element: false,
        }
    }

    /// A link to a course chapter, which opens the chapter's first unfinished story.
    pub fn chapter(id: &str) -> ShareLink {
        ShareLink { course: Some(id.into()), ..ShareLink::builtin("", "") }
    }

    /// A link to a recorded history at `address`, at its first step.
    pub fn history(address: &str) -> ShareLink {
        ShareLink { history: Some(address.into()), ..ShareLink::builtin("", "") }
    }

    /// The fragment, without the leading `#`. Defaults are left out to keep links short.
    pub fn to_fragment(&self) -> String {
        let mut out = String::new();
        let mut put = |param: Param, value: &str| {
            if !out.is_empty() {
                out.push('&');
            }
            let _ = write!(out, "{}={value}", param.name());
        };
        match &self.scenario {
            _ if self.history.is_some() => {
                put(Param::History, &escape(self.history.as_deref().unwrap_or_default(), ""));
            }
            // A chapter's link names no story: the chapter picks one when it opens.
            LinkScenario::Builtin { name, .. } if name.is_empty() && self.course.is_some() => {}
            LinkScenario::Builtin { name, variant } => {
                put(Param::Scenario, name);
                put(Param::Variant, variant);
            }
            LinkScenario::Custom(scenario) => {
                put(Param::Custom, &B64.encode(scenario_text(scenario)));
            }
        }
        if let Some(policy) = self.policy {
            put(Param::Policy, policy_name(policy));
        }
        if let Some((schedule, injected)) = &self.path {
            put(Param::Schedule, &path::schedule_text(schedule));
            if !injected.is_empty() {
                put(Param::Inject, &path::injected_text(injected));
            }
        }
        if self.decide {
            put(Param::Decide, "1");
        }
        if let Some(steps) = self.steps {
            put(Param::Steps, &steps.to_string());
        }
        if self.step > 0 {
            put(Param::Step, &self.step.to_string());
        }
        if let Some((left, right)) = self.compare {
            put(Param::Compare, &format!("{},{}", left.name(), right.name()));
        }
        if self.autoplay {
            put(Param::Play, "1");
        }
        if self.speed != 100 {
            put(Param::Speed, &self.speed.to_string());
        }
        if !self.switches.is_empty() {
            let names: Vec<&str> = self.switches.iter().map(|s| s.name()).collect();
            put(Param::Break, &names.join(","));
        }
        if let Some(embed) = self.embed {
            put(Param::Embed, &embed.value());
        }
        if let Some(title) = &self.title {
            put(Param::Title, &escape(title, ""));
        }
        if self.playground {
            put(Param::Tab, TAB_PLAYGROUND);
        }
        if let Some(theme) = self.theme {
            put(Param::Theme, theme.name());
        }
        if let Some(course) = &self.course {
            put(Param::Course, course);
        }
        if let Some(quiz) = self.quiz {
            put(Param::Quiz, if quiz { "1" } else { "0" });
        }
        out
    }

    /// The embed options a fragment asks for, read on their own (unknown parts are left out), so
    /// a link with a mistake in another parameter still opens as an embed and can say what is
    /// wrong inside its frame.
    pub fn embed_in(fragment: &str) -> Option<Embed> {
        let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
        let embed = Param::Embed.name();
        let value = fragment.split('&').find_map(|pair| match pair.split_once('=') {
            Some((key, value)) if key == embed => Some(value),
            None if pair == embed => Some(""),
            _ => None,
        })?;
        Some(Embed::read_known(value))
    }

    /// Whether a `<fencelab-player>` element wrote `fragment` (it carries `host=element`), read
    /// on its own so that even a link that cannot be read names the element's attributes.
    pub fn by_element(fragment: &str) -> bool {
        let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
        let marker = element_marker();
        fragment.split('&').any(|p| p == marker)
    }

    /// Reads a fragment (with or without the leading `#`).
    pub fn parse(fragment: &str) -> Result<ShareLink, LinkError> {
        let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
        // Known before any other parameter is read, so every error can name the attribute.
        let element = ShareLink::by_element(fragment);
        let mut link =
            ShareLink::parse_parameters(fragment).map_err(|e| LinkError { element, ..e })?;
        link.element = element;
        Ok(link)
    }

    fn parse_parameters(fragment: &str) -> Result<ShareLink, LinkError> {
        if fragment.len() > MAX_LINK_LEN {
            return Err(bad(
                ".",
                format!("the link is {} bytes long; the limit is {MAX_LINK_LEN}", fragment.len()),
            ));
        }
        let mut link = ShareLink::builtin("", "");
        let (mut name, mut variant, mut custom) = (None, None, None);
        let mut story_only = Vec::new();
        for pair in fragment.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let param = Param::from_name(key).ok_or_else(|| bad(key, "unknown parameter"))?;
            if STORY_ONLY.contains(&param) && !story_only.contains(&param.name()) {
                story_only.push(param.name());
            }
            match param {
                Param::Scenario => name = Some(value.to_string()),
                Param::Variant => variant = Some(value.to_string()),
                Param::Custom => custom = Some(decode_custom(value)?),
                Param::Title => {
                    let title = unescape(value);
                    if title.trim().is_empty() {
                        return Err(bad(key, "is empty (use title=Your%20title)"));
                    }
                    link.title = Some(title);
                }
                Param::History => {
                    let address = unescape(value);
                    if address.trim().is_empty() {
                        return Err(bad(key, "names no file (use history=path/to/file.jsonl)"));
                    }
                    link.history = Some(address);
                }
                Param::Policy => link.policy = Some(parse_policy(value)?),
                Param::Step => {
                    link.step = value
                        .parse()
                        .map_err(|_| bad(key, format!("\"{value}\" is not a step number")))?
                }
                Param::Compare => link.compare = parse_compare(value)?,
                Param::Decide => link.decide = parse_flag(key, value)?,
                Param::Schedule => {
                    let schedule = path::parse_schedule(value)?;
                    link.path.get_or_insert_with(Default::default).0 = schedule;
                }
                Param::Inject => {
                    let injected = path::parse_injected(value)?;
                    link.path.get_or_insert_with(Default::default).1 = injected;
                }
                Param::Steps => {
                    let steps = value
                        .parse()
                        .map_err(|_| bad(key, format!("\"{value}\" is not a number of steps")))?;
                    link.steps = Some(steps);
                }
                Param::Play => link.autoplay = parse_flag(key, value)?,
                Param::Speed => {
                    link.speed = value
                        .parse()
                        .ok()
                        .filter(|s| (25..=64_000).contains(s))
                        .ok_or_else(|| {
                            bad(
                                key,
                                format!("\"{value}\" is not a speed from 25 to 64000 (percent)"),
                            )
                        })?
                }
                Param::Break => {
                    link.switches = value
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(|s| {
                            Switch::from_name(s)
                                .ok_or_else(|| bad(key, format!("unknown switch \"{s}\"")))
                        })
                        .collect::<Result<_, _>>()?
                }
                Param::Embed => link.embed = Some(Embed::read(value)?),
                Param::Tab => {
                    link.playground = match value {
                        TAB_PLAYGROUND => true,
                        TAB_VISUALIZER => false,
                        other => {
                            let tabs = listed([TAB_VISUALIZER, TAB_PLAYGROUND], "or");
                            return Err(bad(key, format!("\"{other}\" is not a tab (use {tabs})")));
                        }
                    }
                }
                Param::Theme => {
                    link.theme = Some(Theme::from_name(value).ok_or_else(|| {
                        let themes = listed(Theme::VARIANTS.iter().map(|t| t.name()), "or");
                        bad(key, format!("\"{value}\" is not a theme (use {themes})"))
                    })?)
                }
                Param::Course => {
                    if fencelab_core::stories::course::chapter(value).is_none() {
                        return Err(bad(key, format!("there is no chapter \"{value}\"")));
                    }
                    link.course = Some(value.into());
                }
                Param::Quiz => link.quiz = Some(parse_flag(key, value)?),
                Param::Host if value == HOST_ELEMENT => {}
                Param::Host => {
                    let problem = format!("\"{value}\" is not a host (use {HOST_ELEMENT})");
                    return Err(bad(key, problem));
                }
            }
        }
        if link.history.is_some() {
            if name.is_some() || custom.is_some() {
                let problem = "a link opens either a story or a recorded history, not both";
                return Err(bad(Param::History.name(), problem));
            }
            link.ignored = story_only;
            return Ok(link);
        }
        link.scenario = match (custom, name) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    Param::Custom.name(),
                    "a link names either a built-in scenario or a custom one, not both",
                ))
            }
            (Some(_), None) if link.path.is_some() => {
                return Err(bad(
                    Param::Schedule.name(),
                    "a custom scenario carries its own schedule and injected faults",
                ))
            }
            (Some(scenario), None) => LinkScenario::Custom(Box::new(scenario)),
            (None, Some(name)) if name == GENERATED => {
                LinkScenario::Builtin { name, variant: variant.unwrap_or_default() }
            }
            (None, Some(name)) => {
                let cases = library::cases();
                let case = cases.iter().find(|c| c.name == name).ok_or_else(|| {
                    let like = closest(&name, cases.iter().map(|c| c.name.as_str()));
                    let guess = like.map(|n| format!(" (did you mean {n}?)")).unwrap_or_default();
                    bad(Param::Scenario.name(), format!("no story \"{name}\"{guess}"))
                })?;
                let variant = variant.unwrap_or_else(|| case.variants[0].clone());
                if !case.variants.contains(&variant) {
                    return Err(bad(
                        Param::Variant.name(),
                        format!(
                            "{name} has no variant \"{variant}\"; it has {}",
                            case.variants.join(", ")
                        ),
                    ));
                }
                LinkScenario::Builtin { name, variant }
            }
            // A chapter link opens the chapter's first unfinished story.
            (None, None) if link.course.is_some() => {
                LinkScenario::Builtin { name: String::new(), variant: String::new() }
            }
            (None, None) => return Err(bad(Param::Scenario.name(), "the link names no scenario")),
        };
        Ok(link)
    }

    /// The scenario this link shows, with its policy override and switches applied. The page
    /// reaches the same scenario through the reducer's actions, so only tests call this.
    #[cfg(test)]
    pub fn resolve(&self) -> Result<Scenario, LinkError> {
        use fencelab_core::stories::switches;
        let mut scenario = match &self.scenario {
            LinkScenario::Builtin { name, .. } if name == GENERATED => {
                let (workers, resources, rounds) = GENERATED_SIZE;
                library::generated(workers, resources, rounds)
            }
            LinkScenario::Builtin { name, variant } => library::scenario(name, Some(variant))
                .map_err(|e| bad(Param::Scenario.name(), e.to_string()))?,
            LinkScenario::Custom(s) => (**s).clone(),
        };
        if let Some((schedule, injected)) = &self.path {
            scenario.schedule = schedule.clone();
            scenario.injected = injected.clone();
        }
        if let Some(policy) = self.policy {
            scenario = switches::with_policy(&scenario, policy);
        }
        Ok(switches::broken(&scenario, &self.switches))
    }
}

/// `text` with the characters that would end or break a fragment's value percent-encoded, and
/// those of `also` (a value's own separators).
fn escape(text: &str, also: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if matches!(c, '%' | '&' | '#' | ' ' | '"' | '<' | '>') || also.contains(c) => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "%{b:02X}");
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// `text` with its `%XX` escapes decoded; a `%` that starts no escape stays as it is.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn decode_custom(value: &str) -> Result<Scenario, LinkError> {
    let bytes = B64.decode(value).map_err(|e| {
        bad(
            Param::Custom.name(),
            format!(
                "the scenario in the link is damaged or cut off ({e}); copy the whole link again"
            ),
        )
    })?;
    let json = String::from_utf8(bytes)
        .map_err(|_| bad(Param::Custom.name(), "the scenario in the link is damaged (not text)"))?;
    Scenario::from_json(&json).map_err(|e| {
        if e.problem.contains("EOF") {
            bad(
                Param::Custom.name(),
                "the scenario in the link is cut off; copy the whole link again",
            )
        } else {
            bad(Param::Custom.name(), format!("the scenario in the link is invalid: {e}"))
        }
    })
}

fn parse_policy(value: &str) -> Result<SameGenerationPolicy, LinkError> {
    SameGenerationPolicy::read(value).ok_or_else(|| {
        let policies = listed(SameGenerationPolicy::VARIANTS.iter().map(|p| policy_name(*p)), "or");
        bad(Param::Policy.name(), format!("\"{value}\" is not a policy (use {policies})"))
    })
}

/// The scenario as a link carries it (`custom=` is this text as base64url) and as the
/// `<fencelab-player>` element's `scenario` attribute holds it: compact JSON. It is the pretty
/// form with its layout removed, the same serializer as the editor's, so the page's wasm holds
/// one JSON writer for scenarios.
pub fn scenario_text(scenario: &Scenario) -> String {
    compact_json(&scenario.to_json())
}

/// `json` without whitespace outside strings.
fn compact_json(json: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::with_capacity(json.len()), false, false);
    for c in json.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c.is_whitespace() {
            continue;
        } else {
            in_string = c == '"';
        }
        out.push(c);
    }
    out
}

fn parse_compare(value: &str) -> Result<Option<(Enforcement, Enforcement)>, LinkError> {
    let mode = |name: &str| {
        Enforcement::from_name(name).ok_or_else(|| {
            let modes: Vec<&str> = Enforcement::VARIANTS.iter().map(|e| e.name()).collect();
            let problem =
                format!("\"{name}\" is not an enforcement mode (use {})", modes.join(", "));
            bad(Param::Compare.name(), problem)
        })
    };
    match value {
        "0" | "false" => Ok(None),
        "1" | "true" | "" => Ok(Some((Enforcement::Unfenced, Enforcement::Fenced))),
        pair => match pair.split_once(',') {
            Some((left, right)) => Ok(Some((mode(left)?, mode(right)?))),
            None => Err(bad(
                Param::Compare.name(),
                format!("\"{pair}\" is not two enforcement modes, e.g. unfenced,fenced"),
            )),
        },
    }
}

fn parse_flag(param: &str, value: &str) -> Result<bool, LinkError> {
    match value {
        "1" | "true" | "" => Ok(true),
        "0" | "false" => Ok(false),
        other => Err(bad(param, format!("\"{other}\" is not 0 or 1"))),
    }
}

/// The page's `index.html` under `player`, a folder or the page itself: a folder gets the file
/// name, so a link works on a host that lists folders instead of serving their index.
pub fn page_address(player: &str) -> String {
    if player.ends_with(".html") {
        player.to_string()
    } else {
        format!("{}/index.html", player.trim_end_matches('/'))
    }
}
