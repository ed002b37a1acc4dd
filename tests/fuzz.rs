//! Fuzzing the readers of outside input: the scenario reader (`Scenario::from_json`, which
//! `Engine::from_json`, the command line and the page's links use) and the history readers (JSON
//! Lines, Jepsen, OpenTelemetry, logs), which take files from systems nobody here controls.
//! cargo-fuzz needs a nightly compiler, so inputs come from seeded generators instead: raw text,
//! mutations of the built-in scenarios' JSON, and mutations of recorded histories. The
//! share-link parser is fuzzed by the links crate's own unit tests (`links/src/fuzz.rs`).
//!
//! Every input must be refused with an error or accepted; accepted ones must also read back
//! what they write, and a bounded run of the engine on them must not panic. The `fuzz` binary
//! runs millions of inputs; `it/fuzz.rs` runs a few hundred with proptest.

use fencelab_core::draw::diagram;
use fencelab_core::ids::MAX_ID_LEN;
use fencelab_core::stories::library;
use fencelab_core::{
    fence::register::RejectionReason, fence::register::SameGenerationPolicy,
    invariant::InvariantKind, names::Named, record::ScheduleMode, Checker, Engine, History,
    Scenario,
};
use fencelab_core::{
    format::model::Enforcement, format::model::PauseReason, format::model::TokenSource,
};
use rand::rngs::ChaCha8Rng;
use rand::seq::IndexedRandom;
use rand::RngExt;
use serde_json::{Map, Number, Value};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The most engine steps run on one accepted scenario: enough to reach the interesting parts of
/// every built-in story, little enough to keep an input cheap.
pub const RUN_CAP: usize = 300;

/// What is fuzzed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `Scenario::from_json` on raw text: random bytes and soups of JSON tokens and field names.
    ScenarioText,
    /// `Scenario::from_json` on mutated built-in scenarios: fields deleted, duplicated, renamed
    /// and replaced, huge, zero and negative numbers, wrong types, deep nesting, cut-off text.
    ScenarioMutated,
    /// `History::from_jsonl` on mutated histories (every built-in story's run, the lab's): a
    /// line's fields mutated as a scenario's are, lines dropped, repeated and swapped, cut-off
    /// text.
    HistoryMutated,
    /// The Jepsen reader on mutated Jepsen histories, EDN and JSON (the samples and the stories
    /// written as Jepsen).
    JepsenMutated,
    /// The OpenTelemetry reader on mutated trace exports.
    OtlpMutated,
    /// The log reader, through the sample's pattern, on mutated logs.
    LogMutated,
    /// The Jepsen reader through a mapping (renamed operations and fields, opaque tokens, a
    /// default lease length) on the mutated lock test in its own words.
    JepsenMapped,
    /// The log reader on a store's own mutated log of what it accepted and refused.
    StoreLogMutated,
}

impl Target {
    /// Every target, in report order.
    pub const ALL: [Target; 8] = [
        Target::ScenarioText,
        Target::ScenarioMutated,
        Target::HistoryMutated,
        Target::JepsenMutated,
        Target::OtlpMutated,
        Target::LogMutated,
        Target::JepsenMapped,
        Target::StoreLogMutated,
    ];

    /// The name the `fuzz` binary prints and accepts.
    pub fn name(self) -> &'static str {
        match self {
            Target::ScenarioText => "scenario-text",
            Target::ScenarioMutated => "scenario-mutated",
            Target::HistoryMutated => "history-mutated",
            Target::JepsenMutated => "jepsen-mutated",
            Target::OtlpMutated => "otlp-mutated",
            Target::LogMutated => "log-mutated",
            Target::JepsenMapped => "jepsen-mapped",
            Target::StoreLogMutated => "store-log-mutated",
        }
    }

    /// Keeps the targets' random streams apart under one seed.
    fn salt(self) -> u64 {
        match self {
            Target::ScenarioText => 0x7e57,
            Target::ScenarioMutated => 0x3a7e,
            Target::HistoryMutated => 0x4157,
            Target::JepsenMutated => 0x1e95,
            Target::OtlpMutated => 0x07e1,
            Target::LogMutated => 0x1095,
            Target::JepsenMapped => 0x3a99,
            Target::StoreLogMutated => 0x5707,
        }
    }
}

/// What the generators start from: the built-in scenarios and the names found in them.
pub struct Seeds {
    scenarios: Vec<Value>,
    texts: Vec<String>,
    keys: Vec<String>,
    strings: Vec<String>,
    /// Histories in JSON Lines: every story's run and the lab's recorded ones.
    histories: Vec<String>,
    /// Jepsen histories, EDN and JSON.
    jepsen: Vec<String>,
    /// OpenTelemetry trace exports.
    traces: Vec<String>,
    /// Text logs that [`LOG_PATTERN`] reads.
    logs: Vec<String>,
}

/// The pattern the log target reads its logs through: the sample's.
pub const LOG_PATTERN: &str = include_str!("../examples/histories/app.pattern");

/// The pattern the store's own log is read through: the sample's.
pub const STORE_PATTERN: &str = include_str!("../examples/histories/journal.pattern");

/// The lock test in its own words, and the mapping its sample is read with.
const LOCK: &str = include_str!("../examples/histories/lock.edn");

fn lock_mapping() -> fencelab_interop::mapping::Mapping {
    let mut mapping: fencelab_interop::mapping::Mapping =
        "lock=acquire,unlock=release,lock-name=resource,value=generation"
            .parse()
            .expect("the sample's mapping reads");
    mapping.opaque_tokens = true;
    mapping.ttl = Some(10_000);
    mapping
}

/// Field names that the built-in stories leave out because they hold the default.
const MODEL_KEYS: &[&str] = &[
    "forge",
    "optional",
    "jitter",
    "workflow",
    "expected_revision",
    "exactly",
    "last_read",
    "rejections",
    "max_entries",
    "max_age",
    "delay",
    "paths",
    "check_write_gap",
    "critical",
    "persist_highest",
    "retention",
    "clock_offset",
    "schedule",
    "faults",
    "gateway",
    "acquire",
    "renew",
    "release",
    "read",
    "compute",
    "pause",
    "check_lease",
    "write",
    "effect",
    "retry",
    "pause_worker",
    "delay_messages",
    "restart_authority",
    "restart_store",
    "capture_payment",
    "send_email",
    "call_webhook",
    "amount_cents",
    "to",
    "subject",
    "endpoint",
    "payload",
    "count",
];

/// Builds the seeds: every built-in story and variant, a generated load and a contention story.
pub fn seeds() -> Seeds {
    let mut all = library::all();
    all.push(library::generated(3, 2, 2));
    all.push(library::contention(3, Enforcement::Fenced));
    let scenarios: Vec<Value> = all
        .iter()
        .map(|s| serde_json::from_str(&s.to_json()).expect("built-in scenarios are JSON"))
        .collect();
    let mut keys: Vec<String> = MODEL_KEYS.iter().map(|k| k.to_string()).collect();
    let mut strings = Vec::new();
    for value in &scenarios {
        collect(value, &mut keys, &mut strings);
    }
    let names = TokenSource::VARIANTS
        .iter()
        .map(|v| v.name())
        .chain(Enforcement::VARIANTS.iter().map(|v| v.name()))
        .chain(PauseReason::VARIANTS.iter().map(|v| v.name()))
        .chain(InvariantKind::VARIANTS.iter().map(|v| v.name()))
        .chain(SameGenerationPolicy::VARIANTS.iter().map(|v| v.name()))
        .chain(RejectionReason::VARIANTS.iter().map(|v| v.name()));
    strings.extend(names.map(str::to_string));
    strings.extend(keys.iter().cloned());
    for list in [&mut keys, &mut strings] {
        list.sort();
        list.dedup();
    }
    let runs: Vec<History> = all
        .iter()
        .filter_map(|s| {
            let mut engine = Engine::new(s.clone()).ok()?.with_schedule_mode(ScheduleMode::Lenient);
            for _ in 0..RUN_CAP {
                if !matches!(engine.step(), Ok(Some(_))) {
                    break;
                }
            }
            Some(engine.history())
        })
        .collect();
    let mut histories: Vec<String> = runs.iter().map(History::to_jsonl).collect();
    histories.push(include_str!("../examples/histories/sqlite-fenced.jsonl").to_string());
    histories.push(include_str!("../examples/histories/sqlite-unfenced.jsonl").to_string());
    let mut jepsen = vec![
        include_str!("../examples/histories/jepsen.edn").to_string(),
        include_str!("../examples/histories/jepsen-timeout.edn").to_string(),
    ];
    for run in runs.iter().take(6) {
        jepsen.push(fencelab_interop::jepsen::to_jepsen_edn(run));
        jepsen.push(fencelab_interop::jepsen::to_jepsen_json(run));
    }
    Seeds {
        texts: all.iter().map(Scenario::to_json).collect(),
        scenarios,
        keys,
        strings,
        histories,
        jepsen,
        traces: vec![include_str!("../examples/histories/otlp.jsonl").to_string()],
        logs: vec![include_str!("../examples/histories/app.log").to_string()],
    }
}

fn collect(value: &Value, keys: &mut Vec<String>, strings: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                keys.push(k.clone());
                collect(v, keys, strings);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, keys, strings)),
        // Long texts (intros, titles) make poor names; the short ones are names and references.
        Value::String(s) if s.len() <= 40 => strings.push(s.clone()),
        _ => {}
    }
}

/// One input for `target`, drawn with `rng`.
pub fn input(target: Target, seeds: &Seeds, rng: &mut ChaCha8Rng) -> String {
    match target {
        Target::ScenarioText => text_input(seeds, rng),
        Target::ScenarioMutated => mutated_scenario(seeds, rng),
        Target::HistoryMutated => mutated_lines(&pick(rng, &seeds.histories).clone(), seeds, rng),
        Target::JepsenMutated => mutated_lines(&pick(rng, &seeds.jepsen).clone(), seeds, rng),
        Target::OtlpMutated => mutated_lines(&pick(rng, &seeds.traces).clone(), seeds, rng),
        Target::LogMutated => mutated_lines(&pick(rng, &seeds.logs).clone(), seeds, rng),
        Target::JepsenMapped => mutated_lines(LOCK, seeds, rng),
        Target::StoreLogMutated => {
            mutated_lines(include_str!("../examples/histories/journal.log"), seeds, rng)
        }
    }
}

/// A recorded history with one to four changes: a line that is JSON mutated as a scenario's
/// values are, a line dropped, repeated or swapped with another; and sometimes cut-off or
/// spliced text.
fn mutated_lines(text: &str, seeds: &Seeds, rng: &mut ChaCha8Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let changes = if rng.random_bool(0.5) { 1 } else { rng.random_range(2..=4) };
    for _ in 0..changes {
        let i = rng.random_range(0..lines.len());
        match rng.random_range(0..6) {
            0..=2 => match serde_json::from_str::<Value>(&lines[i]) {
                Ok(mut value) => {
                    mutate(&mut value, seeds, rng, &mut None);
                    lines[i] = serde_json::to_string(&value).expect("values serialize");
                }
                Err(_) => damage(&mut lines[i], rng),
            },
            3 if lines.len() > 1 => {
                lines.remove(i);
            }
            4 => {
                let copy = lines[i].clone();
                lines.insert(i, copy);
            }
            _ => {
                let j = rng.random_range(0..lines.len());
                lines.swap(i, j);
            }
        }
    }
    let mut out = lines.join("\n");
    if rng.random_bool(0.15) {
        damage(&mut out, rng);
    }
    out
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    items.choose(rng).expect("lists of seeds are not empty")
}

const ODD_STRINGS: &[&str] = &[
    "",
    " ",
    "\t",
    "primary",
    "\u{0}",
    "é",
    "🦀",
    "\u{202e}",
    "a\"b",
    "\\",
    "null",
    "-1",
    "0",
    "18446744073709551616",
    "ledger ",
    " ledger",
    "LEDGER",
    "%20",
    "a,b",
    "a&b=c",
    "#",
];

fn odd_string(seeds: &Seeds, rng: &mut ChaCha8Rng) -> String {
    match rng.random_range(0..6) {
        0 => pick(rng, ODD_STRINGS).to_string(),
        // Identifier limits: names just under, at and over the longest accepted.
        1 => "x".repeat(*pick(rng, &[MAX_ID_LEN - 1, MAX_ID_LEN, MAX_ID_LEN + 1, 1000])),
        2 => (0..rng.random_range(1..8)).map(|_| rng.random::<char>()).collect(),
        _ => pick(rng, &seeds.strings).clone(),
    }
}

const ODD_INTEGERS: &[i128] = &[
    0,
    1,
    -1,
    2,
    3,
    16,
    17,
    128,
    129,
    1_000,
    1_001,
    10_000,
    10_001,
    200_000,
    200_001,
    1_000_000_000_000,
    1_000_000_000_001,
    u32::MAX as i128,
    u32::MAX as i128 + 1,
    i64::MAX as i128,
    u64::MAX as i128,
    i64::MIN as i128,
];

fn odd_number(rng: &mut ChaCha8Rng) -> Value {
    match rng.random_range(0..5) {
        0 => {
            let f = *pick(rng, &[0.5, -0.0, 1e300, -1e300, 1.0, 2.5e-300, 1e19]);
            Number::from_f64(f).map_or(Value::Null, Value::Number)
        }
        1 => Value::from(rng.random::<u64>()),
        2 => Value::from(rng.random_range(-5i64..=30)),
        _ => {
            let n = *pick(rng, ODD_INTEGERS);
            u64::try_from(n).map(Value::from).unwrap_or_else(|_| Value::from(n as i64))
        }
    }
}

/// A value of a random kind: an odd number or string, a piece of some built-in scenario, an
/// empty or deeply nested container, a long array.
fn odd_value(seeds: &Seeds, rng: &mut ChaCha8Rng) -> Value {
    match rng.random_range(0..10) {
        0 => Value::Null,
        1 => Value::Bool(rng.random()),
        2 | 3 => odd_number(rng),
        4 | 5 => Value::String(odd_string(seeds, rng)),
        6 => {
            let mut donor = pick(rng, &seeds.scenarios).clone();
            descend(&mut donor, rng).clone()
        }
        7 => {
            // Past serde_json's recursion limit (128) as well as below it.
            let depth = *pick(rng, &[2, 10, 127, 128, 129, 400]);
            let mut v = odd_number(rng);
            for _ in 0..depth {
                v = if rng.random_bool(0.5) {
                    Value::Array(vec![v])
                } else {
                    Value::Object(Map::from_iter([(pick(rng, &seeds.keys).clone(), v)]))
                };
            }
            v
        }
        8 => {
            if rng.random_bool(0.5) {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            }
        }
        _ => {
            let mut donor = pick(rng, &seeds.scenarios).clone();
            let item = descend(&mut donor, rng).clone();
            Value::Array(vec![item; rng.random_range(2..=40)])
        }
    }
}

/// A random node of `value`, reached by walking down from the root and stopping at each level
/// with some chance, so shallow and deep fields both come up.
fn descend<'a>(value: &'a mut Value, rng: &mut ChaCha8Rng) -> &'a mut Value {
    let children = match value {
        Value::Object(map) => map.len(),
        Value::Array(items) => items.len(),
        _ => 0,
    };
    if children == 0 || rng.random_bool(0.25) {
        return value;
    }
    let i = rng.random_range(0..children);
    match value {
        Value::Object(map) => {
            let child = map.values_mut().nth(i).expect("index below len");
            descend(child, rng)
        }
        Value::Array(items) => descend(&mut items[i], rng),
        _ => unreachable!("only containers have children"),
    }
}

/// Stands in for an object whose text gets a duplicate key after serialization (a `Value` cannot
/// hold one).
const DUPLICATE_MARK: &str = "\u{1}fencelab-fuzz-duplicate\u{1}";

/// A built-in scenario with one to four structural mutations, serialized compactly or pretty,
/// sometimes with a duplicated key or damaged text.
pub fn mutated_scenario(seeds: &Seeds, rng: &mut ChaCha8Rng) -> String {
    let mut value = pick(rng, &seeds.scenarios).clone();
    let mut duplicate = None;
    // One mutation half the time, so many inputs stay close enough to valid to reach the
    // semantic checks and the engine; up to four otherwise.
    let mutations = if rng.random_bool(0.5) { 1 } else { rng.random_range(2..=4) };
    for _ in 0..mutations {
        mutate(&mut value, seeds, rng, &mut duplicate);
    }
    let mut text = if rng.random_bool(0.5) {
        serde_json::to_string(&value)
    } else {
        serde_json::to_string_pretty(&value)
    }
    .expect("values serialize");
    if let Some(object) = duplicate {
        text = text.replacen(&Value::String(DUPLICATE_MARK.into()).to_string(), &object, 1);
    }
    if rng.random_bool(0.15) {
        damage(&mut text, rng);
    }
    text
}

fn mutate(value: &mut Value, seeds: &Seeds, rng: &mut ChaCha8Rng, duplicate: &mut Option<String>) {
    let node = descend(value, rng);
    match rng.random_range(0..11) {
        0 | 1 => *node = odd_value(seeds, rng),
        2 => match node {
            Value::Object(map) if !map.is_empty() => {
                let key =
                    map.keys().nth(rng.random_range(0..map.len())).expect("not empty").clone();
                map.remove(&key);
            }
            Value::Array(items) if !items.is_empty() => {
                items.remove(rng.random_range(0..items.len()));
            }
            _ => *node = Value::Null,
        },
        3 => match node {
            Value::Object(map) => {
                map.insert(pick(rng, &seeds.keys).clone(), odd_value(seeds, rng));
            }
            Value::Array(items) => {
                let item = match items.choose(rng) {
                    Some(sibling) if rng.random_bool(0.7) => sibling.clone(),
                    _ => odd_value(seeds, rng),
                };
                items.insert(rng.random_range(0..=items.len()), item);
            }
            _ => *node = odd_value(seeds, rng),
        },
        4 => {
            if let Value::Object(map) = node {
                if let Some(key) = map.keys().nth(rng.random_range(0..map.len().max(1))).cloned() {
                    let v = map.remove(&key).expect("key exists");
                    map.insert(pick(rng, &seeds.keys).clone(), v);
                }
            }
        }
        5 => match node {
            Value::Number(n) => {
                let n = n.as_i64().map(i128::from).or(n.as_u64().map(i128::from)).unwrap_or(0);
                let m = *pick(rng, &[n + 1, n - 1, n * 10, -n, 0, n + 1_000_000_000_000]);
                *node = u64::try_from(m).map(Value::from).unwrap_or_else(|_| {
                    i64::try_from(m).map(Value::from).unwrap_or(Value::from(u64::MAX))
                });
            }
            Value::String(s) => {
                *s = match rng.random_range(0..3) {
                    0 => pick(rng, &seeds.strings).clone(),
                    1 => format!("{s}x"),
                    _ => String::new(),
                }
            }
            Value::Bool(b) => *b = !*b,
            _ => *node = odd_number(rng),
        },
        6 => match node {
            Value::Array(items) if items.len() > 1 => {
                let (a, b) = (rng.random_range(0..items.len()), rng.random_range(0..items.len()));
                items.swap(a, b);
            }
            _ => *node = odd_value(seeds, rng),
        },
        7 => {
            let inner = std::mem::take(node);
            *node = if rng.random_bool(0.5) {
                Value::Array(vec![inner])
            } else {
                Value::Object(Map::from_iter([(pick(rng, &seeds.keys).clone(), inner)]))
            };
        }
        8 => {
            let inner = match node {
                Value::Object(map) => map.values().next().cloned(),
                Value::Array(items) => items.first().cloned(),
                _ => None,
            };
            *node = inner.unwrap_or_else(|| odd_value(seeds, rng));
        }
        9 => {
            // Many more workers, resources, stores or paths, with names kept unique so the
            // copies pass the name checks and load the engine instead.
            if let Value::Array(items) = node {
                if let Some(first) = items.first().cloned() {
                    for i in 0..*pick(rng, &[2, 10, 100, 300]) {
                        items.push(renamed(&first, i));
                    }
                }
            }
        }
        _ => {
            if let Value::Object(map) = node {
                if duplicate.is_none() && !map.is_empty() {
                    let (key, v) =
                        map.iter().nth(rng.random_range(0..map.len())).expect("not empty");
                    let copy = format!("{}:{}", Value::String(key.clone()), v);
                    let body = Value::Object(map.clone()).to_string();
                    *duplicate = Some(format!("{{{copy},{}", &body[1..]));
                    *node = Value::String(DUPLICATE_MARK.into());
                }
            }
        }
    }
}

/// A copy of `item` with its name (the string itself, or its `name` field) made unique by `i`.
fn renamed(item: &Value, i: usize) -> Value {
    let mut copy = item.clone();
    match &mut copy {
        Value::String(name) => name.push_str(&format!("-{i}")),
        Value::Object(map) => {
            if let Some(Value::String(name)) = map.get_mut("name") {
                name.push_str(&format!("-{i}"));
            }
        }
        _ => {}
    }
    copy
}

/// Cuts the text off, or drops, repeats or replaces a stretch of it, keeping it UTF-8.
fn damage(text: &mut String, rng: &mut ChaCha8Rng) {
    let boundary = |text: &str, rng: &mut ChaCha8Rng| {
        let mut i = rng.random_range(0..=text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let a = boundary(text, rng);
    match rng.random_range(0..4) {
        0 => text.truncate(a),
        1 => {
            let b = boundary(&text[a..], rng) + a;
            text.replace_range(a..b, "");
        }
        2 => {
            let b = boundary(&text[a..], rng) + a;
            let copy = text[a..b].to_string();
            text.insert_str(b, &copy);
        }
        _ => text.insert_str(
            a,
            pick::<&str>(rng, &["{", "}", "[", "]", ",", ":", "\"", "\\", "\u{0}", "1e999", "-"]),
        ),
    }
}

const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    " ",
    "\n",
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1",
    "-1",
    "1e999",
    "1.5",
    "18446744073709551616",
    "\"",
    "\\u0000",
    "\\ud800",
    "\"\"",
    "/*",
    "NaN",
];

/// Random bytes (read as UTF-8, lossily) or a soup of JSON tokens, field names and pieces of
/// built-in scenario text.
fn text_input(seeds: &Seeds, rng: &mut ChaCha8Rng) -> String {
    if rng.random_bool(0.3) {
        let bytes: Vec<u8> = (0..rng.random_range(0..256)).map(|_| rng.random()).collect();
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let mut out = String::new();
    for _ in 0..rng.random_range(1..60) {
        match rng.random_range(0..5) {
            0 | 1 => out.push_str(pick::<&str>(rng, TOKENS)),
            2 => out.push_str(&Value::String(pick(rng, &seeds.keys).clone()).to_string()),
            3 => out.push_str(&Value::String(odd_string(seeds, rng)).to_string()),
            _ => {
                let text = pick(rng, &seeds.texts);
                let mut a = rng.random_range(0..text.len());
                while !text.is_char_boundary(a) {
                    a -= 1;
                }
                let mut b = (a + rng.random_range(1..200)).min(text.len());
                while !text.is_char_boundary(b) {
                    b -= 1;
                }
                out.push_str(&text[a..b]);
            }
        }
    }
    out
}

/// How one input went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exec {
    /// Whether the reader accepted it.
    pub accepted: bool,
    /// Engine steps run on what it read.
    pub steps: usize,
}

/// Feeds `input` to the scenario reader. An accepted scenario must read back what it writes and
/// run (up to [`RUN_CAP`] steps, then seek back and forth and draw its diagram). `Err` says which
/// promise broke; a panic is left to the caller to catch.
pub fn exercise(target: Target, input: &str) -> Result<Exec, String> {
    use fencelab_interop::{jepsen, otlp, pattern};
    let imported = |read: Result<fencelab_interop::Imported, _>| match read {
        Err(_) => Ok(Exec::default()),
        Ok(imported) => judged(&imported.history),
    };
    match target {
        Target::HistoryMutated => match History::from_jsonl(input) {
            Err(_) => Ok(Exec::default()),
            Ok(history) => {
                let back = History::from_jsonl(&history.to_jsonl());
                if back.as_ref() != Ok(&history) {
                    return Err(format!("the history does not read back as itself: {back:?}"));
                }
                judged(&history)
            }
        },
        Target::JepsenMutated => imported(jepsen::read_jepsen(input)),
        Target::OtlpMutated => imported(otlp::read_otlp(input)),
        Target::LogMutated => imported(pattern::read_pattern(input, LOG_PATTERN.trim())),
        Target::JepsenMapped => imported(jepsen::read_jepsen_mapped(input, &lock_mapping())),
        Target::StoreLogMutated => imported(pattern::read_pattern(input, STORE_PATTERN.trim())),
        Target::ScenarioText | Target::ScenarioMutated => match Scenario::from_json(input) {
            Err(_) => Ok(Exec::default()),
            Ok(scenario) => {
                let back = Scenario::from_json(&scenario.to_json());
                if back.as_ref() != Ok(&scenario) {
                    return Err(format!("the scenario does not read back as itself: {back:?}"));
                }
                Ok(Exec { accepted: true, steps: run_bounded(scenario)? })
            }
        },
    }
}

/// What a reader accepted must hold together as a history, be judged by the checker and be
/// drawn; its entries count as the steps run.
fn judged(history: &History) -> Result<Exec, String> {
    history.validate().map_err(|e| format!("an accepted history does not hold together: {e}"))?;
    let _ = Checker::judge(history);
    let _ = diagram(history, &[]);
    Ok(Exec { accepted: true, steps: history.entries.len() })
}

/// Sets up and runs an accepted scenario for at most [`RUN_CAP`] steps (the schedule read
/// leniently, so mutated schedules still steer it), seeks to the middle and back, and draws the
/// diagram of what ran.
fn run_bounded(scenario: Scenario) -> Result<usize, String> {
    let mut engine = Engine::new(scenario)
        .map_err(|e| format!("an accepted scenario is refused by Engine::new: {e}"))?
        .with_schedule_mode(ScheduleMode::Lenient);
    let mut steps = 0;
    while steps < RUN_CAP {
        match engine.step() {
            Ok(Some(_)) => steps += 1,
            Ok(None) | Err(_) => break,
        }
    }
    for to in [steps / 2, steps] {
        engine.seek(to).map_err(|e| format!("seeking to step {to} of {steps} failed: {e}"))?;
        if engine.position() != to {
            return Err(format!("seeking to step {to} landed on {}", engine.position()));
        }
    }
    let verdict = engine.verdict();
    diagram(&engine.history(), &verdict.violations);
    Ok(steps)
}

/// Whether an input that took `seconds` is slow: over a quarter of a second, and over 10 µs per
/// byte of input. Inputs take well under a millisecond in release builds, and reading is linear
/// (about 0.1 µs per byte), so only set-up work far beyond the input's size counts: something
/// that does not scale, not a large file.
pub fn is_slow(seconds: f64, input_len: usize) -> bool {
    seconds > 0.25 && seconds > input_len as f64 * 10e-6
}

/// The first input that broke a promise or panicked.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The input's index in its target's stream.
    pub index: u64,
    /// The input.
    pub input: String,
    /// What went wrong.
    pub problem: String,
}

/// The figures of one target.
#[derive(Debug, Clone)]
pub struct TargetReport {
    /// Which target.
    pub target: Target,
    /// Inputs run.
    pub execs: u64,
    /// Inputs the reader accepted.
    pub accepted: u64,
    /// Engine steps run on accepted inputs.
    pub steps: u64,
    /// Inputs that broke a promise other than "no panic".
    pub broken: u64,
    /// Inputs that panicked (caught where panics unwind).
    pub panics: u64,
    /// The first input that broke a promise.
    pub first_broken: Option<Failure>,
    /// The first input that panicked.
    pub first_panic: Option<Failure>,
    /// Inputs that were slow (see [`is_slow`]).
    pub slow: u64,
    /// The first slow input.
    pub first_slow: Option<Failure>,
    /// The most seconds one input took.
    pub slowest: f64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl TargetReport {
    fn new(target: Target) -> TargetReport {
        TargetReport {
            target,
            execs: 0,
            accepted: 0,
            steps: 0,
            broken: 0,
            panics: 0,
            first_broken: None,
            first_panic: None,
            slow: 0,
            first_slow: None,
            slowest: 0.0,
            seconds: 0.0,
        }
    }

    fn merge(&mut self, other: TargetReport) {
        self.execs += other.execs;
        self.accepted += other.accepted;
        self.steps += other.steps;
        self.broken += other.broken;
        self.panics += other.panics;
        self.slow += other.slow;
        self.slowest = self.slowest.max(other.slowest);
        for (mine, theirs) in [
            (&mut self.first_broken, other.first_broken),
            (&mut self.first_panic, other.first_panic),
            (&mut self.first_slow, other.first_slow),
        ] {
            if let Some(theirs) = theirs {
                if mine.as_ref().is_none_or(|m| theirs.index < m.index) {
                    *mine = Some(theirs);
                }
            }
        }
    }
}

/// Input `index` of `target` under `seed`.
pub fn input_at(target: Target, seeds: &Seeds, seed: u64, index: u64) -> String {
    let mut rng = crate::soak::rng_for(seed ^ target.salt().rotate_left(48), index);
    input(target, seeds, &mut rng)
}

/// Runs `execs` inputs of `target` on `threads` threads, catching panics where they unwind.
/// Stops early once `stop` is set (by a panic).
pub fn run(
    target: Target,
    seeds: &Seeds,
    execs: u64,
    seed: u64,
    threads: usize,
    stop: &AtomicBool,
) -> TargetReport {
    let threads = threads.max(1) as u64;
    let started = Instant::now();
    let mut report = TargetReport::new(target);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut part = TargetReport::new(target);
                    let mut index = t;
                    while index < execs && !stop.load(Ordering::Relaxed) {
                        let input = input_at(target, seeds, seed, index);
                        if run_one(target, index, input, &mut part) {
                            stop.store(true, Ordering::Relaxed);
                        }
                        index += threads;
                    }
                    part
                })
            })
            .collect();
        for handle in handles {
            if let Ok(part) = handle.join() {
                report.merge(part);
            }
        }
    });
    report.seconds = started.elapsed().as_secs_f64();
    report
}

/// Runs input `index` and adds what happened to `part`. Returns whether it panicked.
fn run_one(target: Target, index: u64, input: String, part: &mut TargetReport) -> bool {
    crate::capture::set_current(&input);
    part.execs += 1;
    let began = Instant::now();
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| exercise(target, &input)));
    let mut took = began.elapsed().as_secs_f64();
    if is_slow(took, input.len()) && result.is_ok() {
        // The machine may have been busy: a slow input must be slow twice.
        let again = Instant::now();
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| exercise(target, &input)));
        took = took.min(again.elapsed().as_secs_f64());
    }
    part.slowest = part.slowest.max(took);
    if is_slow(took, input.len()) {
        part.slow += 1;
        let problem = format!("took {took:.3} s");
        part.first_slow.get_or_insert(Failure { index, input: input.clone(), problem });
    }
    match result {
        Ok(Ok(exec)) => {
            part.accepted += u64::from(exec.accepted);
            part.steps += exec.steps as u64;
            false
        }
        Ok(Err(problem)) => {
            part.broken += 1;
            part.first_broken.get_or_insert(Failure { index, input, problem });
            false
        }
        Err(payload) => {
            part.panics += 1;
            let problem = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            part.first_panic.get_or_insert(Failure { index, input, problem });
            true
        }
    }
}
