//! A history in the Informal Trace Format (ITF), the JSON trace format Apalache and Quint read
//! and write, so a run (or an imported history) can be replayed against a TLA+ or Quint model
//! of the protocol, or browsed with the tools that show such traces.
//!
//! The trace has one state per step of the history, in order (`"#meta": {"index": i}`). Each
//! state holds these variables:
//!
//! - `at`: the step's time;
//! - `event`: the step's event as a variant, `{"tag": "WriteArrived", "value": {...}}`, whose
//!   value is a record of the event's fields as the history file names them;
//! - `issued`: the authority's newest generation, per resource;
//! - `believes`: the generation each worker believes it holds, per worker and resource (from
//!   the grant it received until it released the lease or a renewal failed);
//! - `highest`: each store's highest generation, keyed by the tuple (store, data, resource);
//! - `findings`: what the checker reports at this step, each a record of the invariant
//!   (`"stale_write_accepted"`, ...) and whether it is only possible (it depends on an outcome
//!   nobody learned): `{"invariant": "stale_write_accepted", "possible": false}`.
//!
//! Integers are written `{"#bigint": "n"}`, maps `{"#map": [[key, value], ...]}`, tuples
//! `{"#tup": [...]}`. A field that is absent in the history (JSON `null`, such as a worker that
//! believes it holds nothing) is Quint's `None`, `{"tag": "None", "value": {"#tup": []}}`; a
//! present optional field is written as its value.

use fencelab_core::{Checker, Event, History};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn big(n: u64) -> Value {
    json!({ "#bigint": n.to_string() })
}

fn none() -> Value {
    json!({ "tag": "None", "value": { "#tup": [] } })
}

/// A value of the history file as ITF: integers as big integers, null as `None`.
fn itf(value: Value) -> Value {
    match value {
        Value::Null => none(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => big(u),
            (None, Some(i)) => json!({ "#bigint": i.to_string() }),
            _ => Value::String(n.to_string()),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(itf).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, itf(v))).collect()),
        other => other,
    }
}

/// `snake_case` to `UpperCamel`, for variant tags.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        })
        .collect()
}

fn map<K, V>(
    entries: impl IntoIterator<Item = (K, V)>,
    key: impl Fn(K) -> Value,
    value: impl Fn(V) -> Value,
) -> Value {
    let pairs: Vec<Value> =
        entries.into_iter().map(|(k, v)| Value::Array(vec![key(k), value(v)])).collect();
    json!({ "#map": pairs })
}

/// The history as an ITF trace (one JSON document).
pub fn to_itf(history: &History) -> String {
    let mut findings: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
    for v in Checker::judge(history) {
        let finding = json!({ "invariant": v.invariant.to_string(), "possible": v.possible });
        findings.entry(v.step.index()).or_default().push(finding);
    }
    let mut issued: BTreeMap<String, u64> = BTreeMap::new();
    let mut believes: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut highest: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    let mut states = Vec::new();
    for (i, entry) in history.entries.iter().enumerate() {
        match &entry.event {
            Event::LeaseGranted { resource, generation, .. } => {
                issued.insert(resource.to_string(), generation.get());
            }
            Event::GrantReceived { worker, resource, generation, .. } => {
                believes
                    .entry(worker.to_string())
                    .or_default()
                    .insert(resource.to_string(), generation.get());
            }
            Event::Released { worker, resource, .. }
            | Event::RenewFailed { worker, resource, .. } => {
                if let Some(held) = believes.get_mut(worker.as_str()) {
                    held.remove(resource.as_str());
                }
            }
            Event::WriteArrived { store, data, request, highest_after, .. } => {
                let key = (store.clone(), data.clone(), request.resource.to_string());
                match highest_after {
                    Some(g) => highest.insert(key, g.get()),
                    None => highest.remove(&key),
                };
            }
            Event::WriteCommitted { store, data, request, .. } => {
                let key = (store.clone(), data.clone(), request.resource.to_string());
                highest.insert(key, request.generation.get());
            }
            Event::StoreRestarted { store, highest_kept: false } => {
                highest.retain(|k, _| &k.0 != store)
            }
            _ => {}
        }
        let tag = camel(entry.event.kind());
        let event = json!({ "tag": tag, "value": itf(Value::Object(entry.event.fields())) });
        let found: Vec<Value> = findings.get(&i).into_iter().flatten().cloned().collect();
        states.push(json!({
            "#meta": { "index": i },
            "at": big(entry.at.0),
            "event": event,
            "issued": map(issued.clone(), Value::String, big),
            "believes": map(believes.clone(), Value::String, |held| map(held, Value::String, big)),
            "highest": map(
                highest.clone(),
                |(s, d, r)| json!({ "#tup": [s, d, r] }),
                big,
            ),
            "findings": found,
        }));
    }
    let trace = json!({
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": "fencelab",
            "description": "A fencing-token history: one state per step, the step's event with the authority's, the workers' and the stores' generations after it.",
        },
        "vars": ["at", "event", "issued", "believes", "highest", "findings"],
        "states": states,
    });
    let mut out = serde_json::to_string_pretty(&trace).unwrap_or_default();
    out.push('\n');
    out
}
