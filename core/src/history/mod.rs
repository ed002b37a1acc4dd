//! A run's history: what happened, in order, as typed events. It is the one thing the parts of
//! Fencelab exchange: the simulator produces it, the checker judges it, the diagram draws it and
//! the exporters write it, so a history that came from elsewhere can be judged and drawn too.
//!
//! A history is its [`Setup`] (who and what takes part) and a list of [`Entry`]s, each an
//! [`Event`] at a logical time. It is written as JSON Lines ([`History::to_jsonl`]): one line
//! holding the format version and the setup, then one line per entry, its event's fields under
//! the event's kind (`{"at": 3, "event": {"released": {...}}}`). Version 1 files, which put the
//! kind in an `event` field beside the event's own, still read.

pub mod builder;
pub mod event;
mod links;

use crate::clock::Tick;
use crate::format::model::{Enforcement, Scenario};
use crate::history::event::Event;
use serde::{Deserialize, Serialize};

/// The version of the history format this build writes. It reads this one and version 1.
pub const HISTORY_VERSION: u32 = 2;

/// Who and what takes part in a history: enough to check it and to draw it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// The workers, in the order their lanes are drawn.
    pub workers: Vec<String>,
    /// The leased resources.
    pub resources: Vec<String>,
    /// The stores.
    #[serde(default)]
    pub stores: Vec<StoreSetup>,
    /// The side-effect gateway, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewaySetup>,
    /// Why the recording stopped before the run ended (a server died, the recorder was
    /// interrupted), when it did. Its entries are what was seen until then, so the checker
    /// judges less than the run did. Simulated runs never set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// Whether the history holds every grant the lease authority made.
    #[serde(default, skip_serializing_if = "Authority::is_recorded")]
    pub authority: Authority,
    /// When a store decided a write, or the gateway an effect.
    #[serde(default, skip_serializing_if = "Decisions::is_exact")]
    pub decisions: Decisions,
}

/// Whether a history holds every grant the lease authority made. Where it does, a write under
/// no recorded lease was made under none; where it may not, the lease checks judge only the
/// resources whose grants it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Authority {
    /// Every grant is in the history: a simulated run, the live lab, a file written by either.
    #[default]
    Recorded,
    /// The history shows what workers and stores saw, and may miss grants: a store's own log,
    /// a trace or a client-side history read by `fencelab-interop`.
    Unobserved,
}

impl Authority {
    /// Whether every grant is in the history.
    pub fn is_recorded(&self) -> bool {
        *self == Authority::Recorded
    }
}

/// When a history says a store decided a write (or the gateway an effect). A client sees only
/// when it sent a request and when the answer came back, and two requests in flight at once
/// may have been decided in either order; the checker is then certain of an order between two
/// decisions only where their windows do not overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decisions {
    /// At the request's arrival entry: a simulated run, the live lab, a file written by either.
    #[default]
    Exact,
    /// Somewhere between the request's send and its arrival entry, which is when its sender
    /// heard the answer: a client-side history read by `fencelab-interop`.
    Windowed,
}

impl Decisions {
    /// Whether each decision is at its arrival entry.
    pub fn is_exact(&self) -> bool {
        *self == Decisions::Exact
    }
}

/// A store and its write paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSetup {
    /// The store's name.
    pub name: String,
    /// Whether stale writes to it matter; the checker judges writes to critical stores only.
    #[serde(default = "yes")]
    pub critical: bool,
    /// The write paths, `primary` first. Paths that name the same data share one fence.
    pub paths: Vec<PathSetup>,
}

/// One way into a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSetup {
    /// The path's name (`primary` for the main one).
    pub name: String,
    /// The data it writes.
    pub data: String,
    /// How it is protected.
    pub enforcement: Enforcement,
}

/// The gateway in front of a partner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewaySetup {
    /// The partner's name.
    pub partner: String,
    /// How the gateway is protected.
    pub enforcement: Enforcement,
}

fn yes() -> bool {
    true
}

impl Setup {
    /// The setup of a scenario's runs.
    pub fn of(scenario: &Scenario) -> Setup {
        let stores = scenario.stores.iter().map(|store| {
            let names = std::iter::once("primary").chain(store.paths.iter().map(|p| &*p.name));
            let paths = names
                .map(|name| {
                    let (data, enforcement) =
                        store.route(name).unwrap_or(("primary", store.enforcement));
                    PathSetup { name: name.into(), data: data.into(), enforcement }
                })
                .collect();
            StoreSetup { name: store.name.clone(), critical: store.critical, paths }
        });
        Setup {
            workers: scenario.workers.iter().map(|w| w.name.clone()).collect(),
            resources: scenario.resources.clone(),
            stores: stores.collect(),
            gateway: scenario
                .gateway
                .as_ref()
                .map(|g| GatewaySetup { partner: g.partner.clone(), enforcement: g.enforcement }),
            incomplete: None,
            authority: Authority::Recorded,
            decisions: Decisions::Exact,
        }
    }

    /// The store named `name`.
    pub fn store(&self, name: &str) -> Option<&StoreSetup> {
        self.stores.iter().find(|s| s.name == name)
    }
}

impl StoreSetup {
    /// The data `path` writes; an unknown path writes data of its own name.
    pub fn data<'a>(&'a self, path: &'a str) -> &'a str {
        self.paths.iter().find(|p| p.name == path).map_or(path, |p| &p.data)
    }
}

/// One event of a history, at its logical time. Read through [`History::from_jsonl`], which
/// also reads version 1 lines and names the field at fault: a field the entry or its event
/// does not have is an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Logical time.
    pub at: Tick,
    /// Wall-clock time in nanoseconds since the Unix epoch, when the source knew it. Simulated
    /// runs have none; the checker never reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ns: Option<u64>,
    /// When the source saw only the call that caused the event (a client's request and its
    /// answer), not the moment it took effect: the latest time it may have happened. The event
    /// happened at some moment from `at` to `by`, and the checker is certain of an order only
    /// where these windows do not overlap. Simulated and lab runs know every moment exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Tick>,
    /// What happened.
    pub event: Event,
}

impl Entry {
    /// An entry that happened exactly at `at`.
    pub fn new(at: Tick, event: Event) -> Entry {
        Entry { at, wall_ns: None, by: None, event }
    }

    /// The latest moment the event may have happened: `by`, or `at` when it is exact.
    pub fn latest(&self) -> Tick {
        self.by.map_or(self.at, |by| by.max(self.at))
    }
}

/// A history: its setup and its entries, in the order they happened.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct History {
    /// Who and what takes part.
    pub setup: Setup,
    /// What happened, in order; entry `i` is step `i` of a simulated run.
    pub entries: Vec<Entry>,
}

/// The first line of a history file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    fencelab_history: u32,
    setup: Setup,
}

/// A history file that cannot be read, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct HistoryError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

impl History {
    /// The history as JSON Lines: a first line with the format version and the setup, then one
    /// line per entry.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        let head = Head { fencelab_history: HISTORY_VERSION, setup: self.setup.clone() };
        push_line(&mut out, &head);
        for entry in &self.entries {
            push_line(&mut out, entry);
        }
        out
    }

    /// The entries at `steps` (indices into [`entries`](Self::entries), taken in order, each
    /// once; out-of-range ones are skipped) with the same setup: a finding's
    /// [`witness`](crate::Violation::witness) as a history of its own.
    pub fn excerpt(&self, steps: &[usize]) -> History {
        let mut steps = steps.to_vec();
        steps.sort_unstable();
        steps.dedup();
        let entries = steps.iter().filter_map(|s| self.entries.get(*s).cloned()).collect();
        History { setup: self.setup.clone(), entries }
    }

    /// Checks that the history holds together as [`History::from_jsonl`] does for a file: names
    /// the setup lists, answers to requests sent (by the same worker, with the same request),
    /// time that never runs backwards. The [`Checker`](crate::Checker) assumes a history that
    /// holds together; one built in code should be validated first. The error's line is the
    /// entry's line in the file `to_jsonl` would write (step `i` on line `i + 2`).
    pub fn validate(&self) -> Result<(), HistoryError> {
        let mut links = links::Links::default();
        for (step, entry) in self.entries.iter().enumerate() {
            links.check(&self.setup, entry, step + 2)?;
        }
        Ok(())
    }

    /// Reads a history written by [`History::to_jsonl`] (see [`JsonlParser`], which it feeds
    /// line by line). An empty text is an error.
    pub fn from_jsonl(text: &str) -> Result<History, HistoryError> {
        let mut parser = JsonlParser::new();
        let mut entries = Vec::new();
        for line in text.lines() {
            entries.extend(parser.line(line)?);
        }
        let setup = parser
            .into_setup()
            .ok_or_else(|| HistoryError { line: 1, problem: "the file is empty".into() })?;
        Ok(History { setup, entries })
    }
}

/// Reads a history in JSON Lines one line at a time, so a caller can judge a history of any
/// length as it reads it: the first line that is not blank must be the header, every other one
/// an entry. Each entry is checked against the setup and the lines before it (names the setup
/// lists, answers to messages sent, time forwards); what the parser keeps grows with the
/// messages on their way, not with the history. The parser does no I/O: the caller hands it
/// lines.
#[derive(Debug, Clone, Default)]
pub struct JsonlParser {
    line: usize,
    setup: Option<Setup>,
    version: u32,
    links: links::Links,
}

impl JsonlParser {
    /// A parser at the start of a file.
    pub fn new() -> JsonlParser {
        JsonlParser::default()
    }

    /// The setup, once the header has been read.
    pub fn setup(&self) -> Option<&Setup> {
        self.setup.as_ref()
    }

    /// The setup, once the header has been read.
    pub fn into_setup(self) -> Option<Setup> {
        self.setup
    }

    /// How many lines have been fed so far.
    pub fn lines(&self) -> usize {
        self.line
    }

    /// Reads the next line: the entry it holds, or `None` for the header or a blank line.
    pub fn line(&mut self, text: &str) -> Result<Option<Entry>, HistoryError> {
        self.line += 1;
        let line = self.line;
        // A byte-order mark some editors put at the start of a file is not part of the JSON.
        let text = if line == 1 { text.trim_start_matches('\u{feff}') } else { text };
        if text.trim().is_empty() {
            return Ok(None);
        }
        let Some(setup) = &self.setup else {
            let head: Head = read(text).map_err(|problem| {
                let header = format!("{{\"fencelab_history\": {HISTORY_VERSION}, \"setup\": ...}}");
                let problem = if text.contains("\"event\"") {
                    format!("the first line must be the header ({header}), not an event")
                } else if text.trim() == "{" || (text.trim_start().starts_with('{') && problem.starts_with("the line is cut off")) {
                    format!("the header is cut off at the end of the line: a history is JSON Lines, one whole JSON object per line, and this looks like JSON spread over several lines (a scenario or a run file? `fencelab run FILE` plays those) ({problem})")
                } else if !text.trim_start().starts_with('{') {
                    format!("this is not a Fencelab history: its first line must be the header ({header}) ({problem})")
                } else {
                    problem
                };
                HistoryError { line, problem }
            })?;
            if !(1..=HISTORY_VERSION).contains(&head.fencelab_history) {
                return Err(HistoryError {
                    line,
                    problem: format!(
                        "history format version {} is not supported (this build reads versions 1 to {HISTORY_VERSION})",
                        head.fencelab_history
                    ),
                });
            }
            self.version = head.fencelab_history;
            self.setup = Some(head.setup);
            return Ok(None);
        };
        let entry = if self.version == 1 { read_v1(text) } else { read_entry(text) };
        let entry = entry.map_err(|problem| HistoryError { line, problem })?;
        self.links.check(setup, &entry, line)?;
        Ok(Some(entry))
    }
}

/// Reads one line, naming the field of a problem: "`setup.stores[0].critical`: invalid type:
/// string \"yes\", expected a boolean (column 113)".
fn read<T: serde::de::DeserializeOwned>(line: &str) -> Result<T, String> {
    // Read as a JSON value first, by the scenario's reader (which also refuses a key given
    // twice), so that the reading code for the types both share is compiled once.
    let value = crate::format::parse::json_value(line).map_err(|(at, e)| problem(&at, e))?;
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = e.path().to_string();
        problem(&path, e.into_inner())
    })
}

/// Reads an entry straight from its text, which serde does without buffering. Version 1 lines
/// come here too, once rewritten, so one reader is compiled.
fn read_entry(line: &str) -> Result<Entry, String> {
    serde_json::from_str(line).map_err(|e| {
        if let Some(shape) = event_shape(line) {
            return shape;
        }
        // A bad line is read again with the path of each field tracked, to name the one at
        // fault. The page keeps serde's message and the column instead: the tracking would
        // double the size of the event reader it downloads.
        #[cfg(not(target_arch = "wasm32"))]
        if let Err(named) = read_tracked(line) {
            return named;
        }
        problem("", e)
    })
}

/// What is wrong with a line's `event` when it is not one key holding the kind's fields, which
/// serde can only call an unexpected value.
fn event_shape(line: &str) -> Option<String> {
    use serde_json::Value;
    let value = crate::format::parse::json_value(line).ok()?;
    match value.get("event")? {
        Value::String(kind) => Some(format!(
            "`event`: \"{kind}\" is how version 1 named an event's kind; the header says version {HISTORY_VERSION}, where the kind holds the event's fields: {{\"event\": {{\"{kind}\": {{...}}}}}}"
        )),
        Value::Object(kinds) if kinds.len() != 1 => Some(format!(
            "`event`: an event is an object with one key, its kind, holding its fields (this one has {})",
            kinds.len()
        )),
        _ => None,
    }
}

/// Reads an entry with the path of each field tracked.
#[cfg(not(target_arch = "wasm32"))]
fn read_tracked(line: &str) -> Result<Entry, String> {
    let mut json = serde_json::Deserializer::from_str(line);
    let entry = serde_path_to_error::deserialize(&mut json).map_err(|e| {
        let path = e.path().to_string();
        problem(&path, e.into_inner())
    })?;
    json.end().map_err(|e| problem("", e))?;
    Ok(entry)
}

/// An event written as version 2 writes it (`{"released": {"worker": "A", ...}}`) rewritten as
/// version 1 did (`{"event": "released", "worker": "A", ...}`), the inverse of what [`read_v1`]
/// does, for comparing with a file version 1 wrote.
pub(crate) fn event_as_v1(event: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    let Value::Object(kind) = event else { return event };
    let Some((kind, Value::Object(mut fields))) = kind.into_iter().next() else {
        return Value::Null;
    };
    fields.insert("event".into(), Value::String(kind));
    Value::Object(fields)
}

/// Reads a version 1 entry, whose event's kind sits in an `event` field beside the entry's times
/// and the event's own fields, by moving those fields under the kind first. A problem names the
/// field as the line wrote it.
fn read_v1(line: &str) -> Result<Entry, String> {
    use serde_json::Value;
    let mut value = crate::format::parse::json_value(line).map_err(|(at, e)| problem(&at, e))?;
    let Value::Object(fields) = &mut value else {
        return read_entry(line);
    };
    let kind = match fields.remove("event") {
        Some(Value::String(kind)) => kind,
        Some(Value::Object(_)) => {
            return Err("`event`: an object, as version 2 writes an event; the header says version 1, where `event` is the kind's name beside the event's fields".into())
        }
        Some(other) => {
            return Err(format!("`event`: expected the event's kind as a string, found {other}"))
        }
        None => return Err("missing field `event` (the event's kind)".into()),
    };
    let mut entry = serde_json::Map::new();
    for time in ["at", "wall_ns", "by"] {
        if let Some(value) = fields.remove(time) {
            entry.insert(time.into(), value);
        }
    }
    let inside = format!("`event.{kind}");
    let event = Value::Object(std::mem::take(fields));
    entry.insert("event".into(), Value::Object([(kind, event)].into_iter().collect()));
    // The rewritten line's columns are not the file's, so a problem keeps its field alone.
    read_entry(&Value::Object(entry).to_string()).map_err(|problem| {
        let problem = problem.split(" (column ").next().unwrap_or_default();
        match problem.strip_prefix(&inside) {
            Some(rest) => match rest.strip_prefix("`: ") {
                Some(message) => message.to_string(),
                None => format!("`{}", rest.trim_start_matches('.')),
            },
            None => problem.to_string(),
        }
    })
}

/// serde_json's message with the position in the line given as a column (its messages end with
/// " at line L column C"), after the path of the field at fault when there is one.
fn problem(path: &str, e: serde_json::Error) -> String {
    let column = e.column();
    if e.is_eof() {
        return format!(
            "the line is cut off: its JSON ends at column {column} before it is complete"
        );
    }
    let message = e.to_string();
    let message = message.split(" at line ").next().unwrap_or_default();
    let at = if column > 0 { format!(" (column {column})") } else { String::new() };
    // serde_path_to_error says `?` where the input ended before a field could be named.
    if path.is_empty() || path == "." || path == "?" {
        format!("{message}{at}")
    } else {
        format!("`{path}`: {message}{at}")
    }
}

fn push_line<T: Serialize>(out: &mut String, value: &T) {
    // Serializing plain data with string keys cannot fail.
    if let Ok(line) = serde_json::to_string(value) {
        out.push_str(&line);
        out.push('\n');
    }
}

/// How a write path is named for readers: the store alone for its primary path ("db"), the
/// store and the path otherwise ("db/cache").
pub(crate) fn place_name(store: &str, path: &str) -> String {
    if path == "primary" {
        store.to_string()
    } else {
        format!("{store}/{path}")
    }
}
