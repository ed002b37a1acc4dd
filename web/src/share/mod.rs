//! Share links: the whole view (which story, variant, policy, step, compare mode, playback,
//! break switches, embed options, the tab) in a URL fragment, and back, with a clear error for a
//! bad, truncated or oversized link. This is page state: the core knows nothing of links, only
//! the scenarios and switches they name.

use base64::Engine as _;
use fencelab_core::format::model::{Enforcement, Injection, Scenario};
use fencelab_core::stories::library;
use fencelab_core::stories::switches::Switch;
use fencelab_core::{Named, SameGenerationPolicy};
use std::fmt::{self, Write as _};

#[cfg(test)]
mod fuzz;
mod path;
#[cfg(test)]
mod tests;

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

/// What an embedded view shows besides the diagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Embed {
    /// The playback controls.
    pub controls: bool,
    /// The caption.
    pub caption: bool,
    /// The story picker and title card.
    pub picker: bool,
    /// The diagram's legend.
    pub legend: bool,
    /// The state panels beside the diagram.
    pub panels: bool,
    /// The event log.
    pub log: bool,
}

impl Embed {
    /// Every part, with the link name of each and whether it shows.
    pub fn parts(&self) -> [(&'static str, bool); 6] {
        [
            ("picker", self.picker),
            ("controls", self.controls),
            ("caption", self.caption),
            ("legend", self.legend),
            ("panels", self.panels),
            ("log", self.log),
        ]
    }

    /// Turns on the part called `name`; false when there is no such part. `diagram` is known and
    /// changes nothing: the diagram always shows.
    fn show(&mut self, name: &str) -> bool {
        let part = match name {
            "controls" => &mut self.controls,
            "caption" => &mut self.caption,
            "picker" => &mut self.picker,
            "legend" => &mut self.legend,
            "panels" => &mut self.panels,
            "log" => &mut self.log,
            "diagram" => return true,
            _ => return false,
        };
        *part = true;
        true
    }

    /// Whether the part called `name` shows (the diagram always does).
    pub fn shows(&self, name: &str) -> bool {
        name == "diagram" || self.parts().iter().any(|(n, on)| *n == name && *on)
    }
}

/// A colour scheme a link forces on the page, whatever the reader's setting (an embed matching
/// the site around it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    /// Light colours.
    Light,
    /// Dark colours.
    Dark,
}

impl Theme {
    /// The link's and the style sheet's name for it (`data-theme` on the root element).
    pub fn name(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }
}

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

/// The parameters that change a simulated story, which mean nothing to a recorded history.
const STORY_ONLY: [&str; 9] =
    ["variant", "policy", "compare", "break", "tab", "decide", "schedule", "inject", "steps"];

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
        let attribute = match self.param.as_str() {
            "scenario" => "story",
            "custom" => "scenario",
            "embed" => "parts",
            other => other,
        };
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

fn bad(param: &str, problem: impl Into<String>) -> LinkError {
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

    /// A link to a recorded history at `address`, at its first step.
    pub fn history(address: &str) -> ShareLink {
        ShareLink { history: Some(address.into()), ..ShareLink::builtin("", "") }
    }

    /// The fragment, without the leading `#`. Defaults are left out to keep links short.
    pub fn to_fragment(&self) -> String {
        let mut out = String::new();
        let mut put = |key: &str, value: &str| {
            if !out.is_empty() {
                out.push('&');
            }
            let _ = write!(out, "{key}={value}");
        };
        match &self.scenario {
            _ if self.history.is_some() => {
                put("history", &escape(self.history.as_deref().unwrap_or_default(), ""));
            }
            LinkScenario::Builtin { name, variant } => {
                put("scenario", name);
                put("variant", variant);
            }
            LinkScenario::Custom(scenario) => {
                // The pretty form with its layout removed: the same serializer as the editor's.
                put("custom", &B64.encode(compact_json(&scenario.to_json())));
            }
        }
        if let Some(policy) = self.policy {
            put("policy", policy_name(policy));
        }
        if let Some((schedule, injected)) = &self.path {
            put("schedule", &path::schedule_text(schedule));
            if !injected.is_empty() {
                put("inject", &path::injected_text(injected));
            }
        }
        if self.decide {
            put("decide", "1");
        }
        if let Some(steps) = self.steps {
            put("steps", &steps.to_string());
        }
        if self.step > 0 {
            put("step", &self.step.to_string());
        }
        if let Some((left, right)) = self.compare {
            put("compare", &format!("{},{}", left.name(), right.name()));
        }
        if self.autoplay {
            put("play", "1");
        }
        if self.speed != 100 {
            put("speed", &self.speed.to_string());
        }
        if !self.switches.is_empty() {
            let names: Vec<&str> = self.switches.iter().map(|s| s.name()).collect();
            put("break", &names.join(","));
        }
        if let Some(embed) = self.embed {
            let parts: Vec<&str> =
                embed.parts().into_iter().filter_map(|(name, on)| on.then_some(name)).collect();
            let value = if parts.is_empty() { "diagram".to_string() } else { parts.join(",") };
            put("embed", &value);
        }
        if let Some(title) = &self.title {
            put("title", &escape(title, ""));
        }
        if self.playground {
            put("tab", "playground");
        }
        if let Some(theme) = self.theme {
            put("theme", theme.name());
        }
        if let Some(course) = &self.course {
            put("course", course);
        }
        if let Some(quiz) = self.quiz {
            put("quiz", if quiz { "1" } else { "0" });
        }
        out
    }

    /// The embed options a fragment asks for, read on their own (unknown parts are left out), so
    /// a link with a mistake in another parameter still opens as an embed and can say what is
    /// wrong inside its frame.
    pub fn embed_in(fragment: &str) -> Option<Embed> {
        let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
        let value = fragment.split('&').find_map(|pair| match pair.split_once('=') {
            Some(("embed", value)) => Some(value),
            None if pair == "embed" => Some(""),
            _ => None,
        })?;
        let mut embed = Embed::default();
        for part in value.split(',') {
            let _ = embed.show(part);
        }
        Some(embed)
    }

    /// Reads a fragment (with or without the leading `#`).
    pub fn parse(fragment: &str) -> Result<ShareLink, LinkError> {
        let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
        // Known before any other parameter is read, so every error can name the attribute.
        let element = fragment.split('&').any(|p| p == "host=element");
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
            if let Some(name) = STORY_ONLY.iter().find(|k| **k == key) {
                if !story_only.contains(name) {
                    story_only.push(*name);
                }
            }
            match key {
                "scenario" => name = Some(value.to_string()),
                "variant" => variant = Some(value.to_string()),
                "custom" => custom = Some(decode_custom(value)?),
                "title" => {
                    let title = unescape(value);
                    if title.trim().is_empty() {
                        return Err(bad("title", "is empty (use title=Your%20title)"));
                    }
                    link.title = Some(title);
                }
                "history" => {
                    let address = unescape(value);
                    if address.trim().is_empty() {
                        return Err(bad(
                            "history",
                            "names no file (use history=path/to/file.jsonl)",
                        ));
                    }
                    link.history = Some(address);
                }
                "policy" => link.policy = Some(parse_policy(value)?),
                "step" => {
                    link.step = value
                        .parse()
                        .map_err(|_| bad("step", format!("\"{value}\" is not a step number")))?
                }
                "compare" => link.compare = parse_compare(value)?,
                "decide" => link.decide = parse_flag("decide", value)?,
                "schedule" => {
                    let schedule = path::parse_schedule(value)?;
                    link.path.get_or_insert_with(Default::default).0 = schedule;
                }
                "inject" => {
                    let injected = path::parse_injected(value)?;
                    link.path.get_or_insert_with(Default::default).1 = injected;
                }
                "steps" => {
                    let steps = value.parse().map_err(|_| {
                        bad("steps", format!("\"{value}\" is not a number of steps"))
                    })?;
                    link.steps = Some(steps);
                }
                "play" => link.autoplay = parse_flag("play", value)?,
                "speed" => {
                    link.speed = value
                        .parse()
                        .ok()
                        .filter(|s| (25..=64_000).contains(s))
                        .ok_or_else(|| {
                            bad(
                                "speed",
                                format!("\"{value}\" is not a speed from 25 to 64000 (percent)"),
                            )
                        })?
                }
                "break" => {
                    link.switches = value
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(|s| {
                            Switch::from_name(s)
                                .ok_or_else(|| bad("break", format!("unknown switch \"{s}\"")))
                        })
                        .collect::<Result<_, _>>()?
                }
                "embed" => {
                    let mut embed = Embed::default();
                    for part in value.split(',').filter(|s| !s.is_empty()) {
                        if !embed.show(part) {
                            return Err(bad(
                                "embed",
                                format!(
                                    "unknown part \"{part}\" (parts are: diagram, controls, \
                                     caption, legend, panels, log and picker)"
                                ),
                            ));
                        }
                    }
                    link.embed = Some(embed);
                }
                "tab" => {
                    link.playground = match value {
                        "playground" => true,
                        "visualizer" => false,
                        other => {
                            return Err(bad(
                                "tab",
                                format!("\"{other}\" is not a tab (use visualizer or playground)"),
                            ))
                        }
                    }
                }
                "theme" => {
                    link.theme = Some(match value {
                        "light" => Theme::Light,
                        "dark" => Theme::Dark,
                        other => {
                            return Err(bad(
                                "theme",
                                format!("\"{other}\" is not a theme (use light or dark)"),
                            ))
                        }
                    })
                }
                "course" => {
                    if fencelab_core::stories::course::chapter(value).is_none() {
                        return Err(bad("course", format!("there is no chapter \"{value}\"")));
                    }
                    link.course = Some(value.into());
                }
                "quiz" => link.quiz = Some(parse_flag("quiz", value)?),
                "host" if value == "element" => {}
                "host" => {
                    return Err(bad("host", format!("\"{value}\" is not a host (use element)")))
                }
                other => return Err(bad(other, "unknown parameter")),
            }
        }
        if link.history.is_some() {
            if name.is_some() || custom.is_some() {
                let problem = "a link opens either a story or a recorded history, not both";
                return Err(bad("history", problem));
            }
            link.ignored = story_only;
            return Ok(link);
        }
        link.scenario = match (custom, name) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "custom",
                    "a link names either a built-in scenario or a custom one, not both",
                ))
            }
            (Some(_), None) if link.path.is_some() => {
                return Err(bad(
                    "schedule",
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
                    bad("scenario", format!("no story \"{name}\"{guess}"))
                })?;
                let variant = variant.unwrap_or_else(|| case.variants[0].clone());
                if !case.variants.contains(&variant) {
                    return Err(bad(
                        "variant",
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
            (None, None) => return Err(bad("scenario", "the link names no scenario")),
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
                .map_err(|e| bad("scenario", e.to_string()))?,
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
            "custom",
            format!(
                "the scenario in the link is damaged or cut off ({e}); copy the whole link again"
            ),
        )
    })?;
    let json = String::from_utf8(bytes)
        .map_err(|_| bad("custom", "the scenario in the link is damaged (not text)"))?;
    Scenario::from_json(&json).map_err(|e| {
        if e.problem.contains("EOF") {
            bad("custom", "the scenario in the link is cut off; copy the whole link again")
        } else {
            bad("custom", format!("the scenario in the link is invalid: {e}"))
        }
    })
}

fn parse_policy(value: &str) -> Result<SameGenerationPolicy, LinkError> {
    SameGenerationPolicy::read(value).ok_or_else(|| {
        bad("policy", format!("\"{value}\" is not a policy (use allow-same or strict)"))
    })
}

fn policy_name(policy: SameGenerationPolicy) -> &'static str {
    match policy {
        SameGenerationPolicy::AllowSame => "allow-same",
        SameGenerationPolicy::StrictlyNewer => "strict",
    }
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
            bad("compare", problem)
        })
    };
    match value {
        "0" | "false" => Ok(None),
        "1" | "true" | "" => Ok(Some((Enforcement::Unfenced, Enforcement::Fenced))),
        pair => match pair.split_once(',') {
            Some((left, right)) => Ok(Some((mode(left)?, mode(right)?))),
            None => Err(bad(
                "compare",
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
