//! Reads a scenario from a JSON value by hand, naming the path of every bad field.
//!
//! Serde's derived deserializers, plus the path tracking wrapped around them, were the largest
//! single part of the web bundle. This reader walks a `serde_json::Value` instead: one small
//! function per type, no generic visitor code. Its messages use serde's words ("missing field",
//! "unknown variant", "invalid type", "duplicate field"). The writer stays serde's derive and the
//! names of fieldless enums come from their `Named` tables; `tests/it/scenario_parse.rs` and
//! `tests/it/names.rs` hold reader and writer to one format.

use crate::gateway::Effect;
use crate::idempotency::Retention;
use crate::names::Named;
use crate::register::{RejectionReason, SameGenerationPolicy};
use crate::scenario::model::*;
use crate::scenario::validate::ScenarioError;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::num::NonZeroUsize;

type R<T> = Result<T, ScenarioError>;

/// A type read from one JSON value found at `at` (a field path such as `workers[0].name`).
pub(crate) trait FromJson: Sized {
    fn from_json(value: &Value, at: &str) -> R<Self>;
}

/// Reads a whole scenario (the file format's syntax only; [`Scenario::validate`] checks meaning).
pub(crate) fn scenario(value: &Value) -> R<Scenario> {
    <Scenario as FromJson>::from_json(value, "")
}

/// Parses JSON text into a value, refusing a key that appears twice in one object (serde_json
/// would silently keep the last, hiding a copy-paste mistake in a hand-edited file) and text
/// after the value. Errors carry the path of the value where parsing stopped.
pub(crate) fn json_text(json: &str) -> R<Value> {
    let mut de = serde_json::Deserializer::from_str(json);
    let value = strict_value(&mut de).map_err(|(at, e)| error(&at, e.to_string()))?;
    de.end().map_err(|e| error("", e.to_string()))?;
    Ok(value)
}

/// Reads one value from any self-describing deserializer the way [`json_text`] does. On failure
/// it returns the path where reading stopped with the deserializer's error.
pub(crate) fn strict_value<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Value, (String, D::Error)> {
    let stopped = std::cell::RefCell::new(None);
    let seed = Strict { at: Segment::Root, stopped: &stopped };
    serde::de::DeserializeSeed::deserialize(seed, deserializer)
        .map_err(|e| (stopped.into_inner().unwrap_or_default(), e))
}

/// Where a value sits, built only when an error needs it.
#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a Segment<'a>, &'a str),
    Index(&'a Segment<'a>, usize),
}

impl Segment<'_> {
    fn path(&self) -> String {
        match *self {
            Segment::Root => String::new(),
            Segment::Key(parent, key) => field_path(&parent.path(), key),
            Segment::Index(parent, i) => format!("{}[{i}]", parent.path()),
        }
    }
}

/// Builds a `Value` like serde_json's own, but refuses duplicate keys and notes the path of the
/// innermost value whose reading failed.
struct Strict<'a> {
    at: Segment<'a>,
    stopped: &'a std::cell::RefCell<Option<String>>,
}

impl Strict<'_> {
    /// Records `at` as where reading stopped, unless a deeper value already did.
    fn stop_at<E>(&self, at: &Segment, e: E) -> E {
        self.stopped.borrow_mut().get_or_insert_with(|| at.path());
        e
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let at = Segment::Index(&self.at, items.len());
            let seed = Strict { at, stopped: self.stopped };
            match seq.next_element_seed(seed).map_err(|e| self.stop_at(&at, e))? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>().map_err(|e| self.stop_at(&self.at, e))? {
            let at = Segment::Key(&self.at, &key);
            if fields.contains_key(&key) {
                let e = serde::de::Error::custom(format_args!("duplicate field `{key}`"));
                return Err(self.stop_at(&at, e));
            }
            let seed = Strict { at, stopped: self.stopped };
            let value = map.next_value_seed(seed).map_err(|e| self.stop_at(&at, e))?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

fn error(at: &str, problem: String) -> ScenarioError {
    ScenarioError::new(if at.is_empty() { "." } else { at }, problem)
}

fn field_path(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

/// How serde describes a value it did not expect.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        // JSON quoting reads the same as serde's `{:?}` for ordinary text and keeps Rust's
        // `Debug` string escaping (and its Unicode tables) out of the page's wasm.
        Value::String(s) => format!("string {}", serde_json::to_string(s).unwrap_or_default()),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

fn invalid_type(value: &Value, at: &str, expected: &str) -> ScenarioError {
    error(at, format!("invalid type: {}, expected {expected}", describe(value)))
}

fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.len() {
        0 => "nothing".into(),
        1 => quoted[0].clone(),
        2 => format!("`{}` or `{}`", names[0], names[1]),
        _ => format!("one of {}", quoted.join(", ")),
    }
}

/// The fields of one JSON object, read one by one; unknown fields are refused up front.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    at: &'a str,
}

impl<'a> Fields<'a> {
    fn new(value: &'a Value, at: &'a str, what: &str, known: &[&str]) -> R<Fields<'a>> {
        let Value::Object(map) = value else {
            return Err(invalid_type(value, at, what));
        };
        if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
            let problem = format!("unknown field `{key}`, expected {}", one_of(known));
            return Err(error(&field_path(at, key), problem));
        }
        Ok(Fields { map, at })
    }

    /// A field that must be present.
    fn req<T: FromJson>(&self, key: &str) -> R<T> {
        match self.map.get(key) {
            Some(v) => T::from_json(v, &field_path(self.at, key)),
            None => Err(error(self.at, format!("missing field `{key}`"))),
        }
    }

    /// A field that may be absent (or null).
    fn opt<T: FromJson>(&self, key: &str) -> R<Option<T>> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => T::from_json(v, &field_path(self.at, key)).map(Some),
        }
    }

    /// A field with a default when absent.
    fn or<T: FromJson>(&self, key: &str, default: impl FnOnce() -> T) -> R<T> {
        match self.map.get(key) {
            None => Ok(default()),
            Some(v) => T::from_json(v, &field_path(self.at, key)),
        }
    }
}

/// A tagged choice written `{"name": {...}}`, or just `"name"` when it carries nothing.
fn tagged<'a>(value: &'a Value, at: &str, what: &str, names: &[&str]) -> R<(&'a str, &'a Value)> {
    let (name, inner) = match value {
        Value::String(s) => (s.as_str(), &Value::Null),
        Value::Object(map) if map.len() == 1 => {
            let (k, v) = map.iter().next().expect("one entry");
            (k.as_str(), v)
        }
        _ => return Err(invalid_type(value, at, what)),
    };
    if !names.contains(&name) {
        return Err(error(at, format!("unknown variant `{name}`, expected {}", one_of(names))));
    }
    Ok((name, inner))
}

impl FromJson for String {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        value.as_str().map(str::to_string).ok_or_else(|| invalid_type(value, at, "a string"))
    }
}

impl FromJson for bool {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        value.as_bool().ok_or_else(|| invalid_type(value, at, "a boolean"))
    }
}

/// Reads an integer as `i128` so one function serves every integer field.
fn integer(value: &Value, at: &str, expected: &str) -> R<i128> {
    match value {
        Value::Number(n) if n.is_u64() => Ok(i128::from(n.as_u64().unwrap_or_default())),
        Value::Number(n) if n.is_i64() => Ok(i128::from(n.as_i64().unwrap_or_default())),
        _ => Err(invalid_type(value, at, expected)),
    }
}

fn bounded<T: TryFrom<i128>>(value: &Value, at: &str, expected: &str) -> R<T> {
    let n = integer(value, at, expected)?;
    // `n` came from an i64 or a u64, so it prints through those (the page's wasm then needs no
    // `i128` formatting).
    T::try_from(n).map_err(|_| {
        let text = if n < 0 { (n as i64).to_string() } else { (n as u64).to_string() };
        error(at, format!("invalid value: integer `{text}`, expected {expected}"))
    })
}

/// Integers read through `i128`, so one range check serves every width.
macro_rules! integers {
    ($($ty:ty),+) => {$(
        impl FromJson for $ty {
            fn from_json(value: &Value, at: &str) -> R<Self> {
                bounded(value, at, stringify!($ty))
            }
        }
    )+};
}

integers!(u64, u32, i64, usize);

impl FromJson for NonZeroUsize {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let n: usize = bounded(value, at, "a nonzero usize")?;
        NonZeroUsize::new(n)
            .ok_or_else(|| error(at, "invalid value: integer `0`, expected a nonzero usize".into()))
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let items = value.as_array().ok_or_else(|| invalid_type(value, at, "a sequence"))?;
        items.iter().enumerate().map(|(i, v)| T::from_json(v, &format!("{at}[{i}]"))).collect()
    }
}

/// Fieldless enums are written as their names.
impl<T: Named> FromJson for T {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        // Like serde, this accepts the one-key map form `{"name": null}` too.
        let names: Vec<&str> = T::VARIANTS.iter().map(|v| v.name()).collect();
        let (name, inner) = tagged(value, at, "a variant name", &names)?;
        if !inner.is_null() {
            return Err(invalid_type(inner, &field_path(at, name), "null"));
        }
        T::from_name(name).ok_or_else(|| error(at, format!("unknown variant `{name}`")))
    }
}

impl FromJson for Scenario {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(
            value,
            at,
            "a scenario object",
            &[
                "name",
                "variant",
                "title",
                "intro",
                "resources",
                "authority",
                "stores",
                "gateway",
                "network",
                "workers",
                "faults",
                "expect",
                "schedule",
            ],
        )?;
        Ok(Scenario {
            name: f.req("name")?,
            variant: f.or("variant", || "custom".to_string())?,
            title: f.req("title")?,
            intro: f.or("intro", String::new)?,
            resources: f.req("resources")?,
            authority: f.req("authority")?,
            stores: f.req("stores")?,
            gateway: f.opt("gateway")?,
            network: f.or("network", NetworkSpec::default)?,
            workers: f.req("workers")?,
            faults: f.or("faults", Vec::new)?,
            expect: f.or("expect", Expectations::default)?,
            schedule: f.or("schedule", Vec::new)?,
        })
    }
}

impl FromJson for AuthoritySpec {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(
            value,
            at,
            "an authority object",
            &["ttl", "token_source", "authenticated"],
        )?;
        Ok(AuthoritySpec {
            ttl: f.req("ttl")?,
            token_source: f.or("token_source", TokenSource::default)?,
            authenticated: f.or("authenticated", || false)?,
        })
    }
}

impl FromJson for StoreSpec {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(
            value,
            at,
            "a store object",
            &[
                "name",
                "enforcement",
                "policy",
                "retention",
                "persist_highest",
                "critical",
                "check_write_gap",
                "paths",
            ],
        )?;
        Ok(StoreSpec {
            name: f.req("name")?,
            enforcement: f.req("enforcement")?,
            policy: f.or("policy", SameGenerationPolicy::default)?,
            retention: f.or("retention", Retention::default)?,
            persist_highest: f.or("persist_highest", || true)?,
            critical: f.or("critical", || true)?,
            check_write_gap: f.or("check_write_gap", || 1)?,
            paths: f.or("paths", Vec::new)?,
        })
    }
}

impl FromJson for Retention {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(value, at, "a retention object", &["max_entries", "max_age"])?;
        Ok(Retention { max_entries: f.opt("max_entries")?, max_age: f.opt("max_age")? })
    }
}

impl FromJson for PathSpec {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(value, at, "a path object", &["name", "enforcement", "data"])?;
        Ok(PathSpec {
            name: f.req("name")?,
            enforcement: f.req("enforcement")?,
            data: f.opt("data")?,
        })
    }
}

impl FromJson for GatewaySpec {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(value, at, "a gateway object", &["partner", "enforcement", "policy"])?;
        Ok(GatewaySpec {
            partner: f.req("partner")?,
            enforcement: f.req("enforcement")?,
            policy: f.or("policy", SameGenerationPolicy::default)?,
        })
    }
}

impl FromJson for NetworkSpec {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(value, at, "a network object", &["latency", "jitter"])?;
        Ok(NetworkSpec { latency: f.req("latency")?, jitter: f.or("jitter", || 0)? })
    }
}

impl FromJson for WorkerSpec {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(
            value,
            at,
            "a worker object",
            &["name", "start", "clock_offset", "script"],
        )?;
        Ok(WorkerSpec {
            name: f.req("name")?,
            start: f.or("start", || 0)?,
            clock_offset: f.or("clock_offset", || 0)?,
            script: f.req("script")?,
        })
    }
}

impl FromJson for ExpectedRevision {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let what = "\"last_read\" or {\"exactly\": n}";
        match tagged(value, at, what, &["last_read", "exactly"])? {
            ("last_read", Value::Null) => Ok(ExpectedRevision::LastRead),
            ("exactly", n) => {
                Ok(ExpectedRevision::Exactly(u64::from_json(n, &field_path(at, "exactly"))?))
            }
            _ => Err(invalid_type(value, at, what)),
        }
    }
}

impl FromJson for Step {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        const STEPS: &[&str] = &[
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
        ];
        let (name, inner) = tagged(value, at, "a step such as {\"acquire\": {...}}", STEPS)?;
        let here = field_path(at, name);
        let at = here.as_str();
        let resource = |what: &str| {
            let f = Fields::new(inner, at, what, &["resource"])?;
            f.req::<String>("resource")
        };
        Ok(match name {
            "acquire" => Step::Acquire { resource: resource("an acquire step")? },
            "renew" => Step::Renew { resource: resource("a renew step")? },
            "release" => Step::Release { resource: resource("a release step")? },
            "check_lease" => Step::CheckLease { resource: resource("a check_lease step")? },
            "read" => {
                let f = Fields::new(inner, at, "a read step", &["resource", "store", "path"])?;
                Step::Read {
                    resource: f.req("resource")?,
                    store: f.opt("store")?,
                    path: f.opt("path")?,
                }
            }
            "compute" => {
                let f = Fields::new(inner, at, "a compute step", &["ticks"])?;
                Step::Compute { ticks: f.req("ticks")? }
            }
            "pause" => {
                let f = Fields::new(inner, at, "a pause step", &["ticks", "reason", "optional"])?;
                Step::Pause {
                    ticks: f.req("ticks")?,
                    reason: f.or("reason", PauseReason::default)?,
                    optional: f.or("optional", || false)?,
                }
            }
            "write" => Step::Write(WriteStep::from_json(inner, at)?),
            "effect" => Step::Effect(EffectStep::from_json(inner, at)?),
            _ => {
                let f = Fields::new(inner, at, "a retry step", &["operation"])?;
                Step::Retry { operation: f.req("operation")? }
            }
        })
    }
}

impl FromJson for WriteStep {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(
            value,
            at,
            "a write step",
            &[
                "resource",
                "value",
                "operation",
                "expected_revision",
                "store",
                "path",
                "delay",
                "forge",
            ],
        )?;
        Ok(WriteStep {
            resource: f.req("resource")?,
            value: f.req("value")?,
            operation: f.opt("operation")?,
            expected_revision: f.opt("expected_revision")?,
            store: f.opt("store")?,
            path: f.opt("path")?,
            delay: f.or("delay", || 0)?,
            forge: f.opt("forge")?,
        })
    }
}

impl FromJson for EffectStep {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(
            value,
            at,
            "an effect step",
            &["resource", "workflow", "effect", "operation", "delay"],
        )?;
        Ok(EffectStep {
            resource: f.req("resource")?,
            workflow: f.opt("workflow")?,
            effect: f.req("effect")?,
            operation: f.opt("operation")?,
            delay: f.or("delay", || 0)?,
        })
    }
}

impl FromJson for Effect {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        const KINDS: &[&str] = &["capture_payment", "send_email", "call_webhook"];
        let what = "an effect object with a \"kind\"";
        let kind = match value.get("kind") {
            Some(k) => String::from_json(k, &field_path(at, "kind"))?,
            None if value.is_object() => return Err(error(at, "missing field `kind`".into())),
            None => return Err(invalid_type(value, at, what)),
        };
        Ok(match kind.as_str() {
            "capture_payment" => {
                let f = Fields::new(value, at, what, &["kind", "amount_cents"])?;
                Effect::CapturePayment { amount_cents: f.req("amount_cents")? }
            }
            "send_email" => {
                let f = Fields::new(value, at, what, &["kind", "to", "subject"])?;
                Effect::SendEmail { to: f.req("to")?, subject: f.req("subject")? }
            }
            "call_webhook" => {
                let f = Fields::new(value, at, what, &["kind", "endpoint", "payload"])?;
                Effect::CallWebhook { endpoint: f.req("endpoint")?, payload: f.req("payload")? }
            }
            other => {
                let problem = format!("unknown variant `{other}`, expected {}", one_of(KINDS));
                return Err(error(&field_path(at, "kind"), problem));
            }
        })
    }
}

impl FromJson for FaultSpec {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(value, at, "a fault object", &["at", "fault"])?;
        Ok(FaultSpec { at: f.req("at")?, fault: f.req("fault")? })
    }
}

impl FromJson for Fault {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        const FAULTS: &[&str] =
            &["pause_worker", "delay_messages", "restart_authority", "restart_store"];
        let (name, inner) = tagged(value, at, "a fault such as {\"pause_worker\": {...}}", FAULTS)?;
        let here = field_path(at, name);
        let at = here.as_str();
        Ok(match name {
            "pause_worker" => {
                let f =
                    Fields::new(inner, at, "a pause_worker fault", &["worker", "ticks", "reason"])?;
                Fault::PauseWorker {
                    worker: f.req("worker")?,
                    ticks: f.req("ticks")?,
                    reason: f.or("reason", PauseReason::default)?,
                }
            }
            "delay_messages" => {
                let f = Fields::new(
                    inner,
                    at,
                    "a delay_messages fault",
                    &["worker", "ticks", "count"],
                )?;
                Fault::DelayMessages {
                    worker: f.req("worker")?,
                    ticks: f.req("ticks")?,
                    count: f.req("count")?,
                }
            }
            "restart_authority" if inner.is_null() => Fault::RestartAuthority,
            "restart_authority" => return Err(invalid_type(inner, at, "null")),
            _ => {
                let f = Fields::new(inner, at, "a restart_store fault", &["store"])?;
                Fault::RestartStore { store: f.req("store")? }
            }
        })
    }
}

impl FromJson for Expectations {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let f = Fields::new(value, at, "an expect object", &["violations", "rejections"])?;
        Ok(Expectations {
            violations: f.or("violations", Vec::new)?,
            rejections: f.opt("rejections")?,
        })
    }
}

impl FromJson for BTreeMap<RejectionReason, u64> {
    fn from_json(value: &Value, at: &str) -> R<Self> {
        let map = value.as_object().ok_or_else(|| invalid_type(value, at, "a map of counts"))?;
        let mut counts = BTreeMap::new();
        for (k, v) in map {
            let here = field_path(at, k);
            let reason = RejectionReason::from_json(&Value::String(k.clone()), &here)?;
            counts.insert(reason, u64::from_json(v, &here)?);
        }
        Ok(counts)
    }
}
