//! Jepsen histories: read from EDN or JSON, written back to both.
//!
//! A Jepsen history is a list of operations, each a map with `:type` (`:invoke`, `:ok`, `:fail`
//! or `:info`), `:process`, `:f`, `:value`, `:time` (nanoseconds since the test began) and
//! `:index`. Both shapes Jepsen and its users write are read: a vector of ops (`history.edn`, a
//! JSON array) or one op per line. EDN is read by this crate's own small reader, which limits
//! nesting to 64 levels: the EDN crates we looked at have no nesting limit, so hostile input
//! could overflow the stack. Keywords and strings are interchangeable, and keys may be spelt `valid-until` or
//! `valid_until`.
//!
//! # The mapping
//!
//! Integer processes become workers `p0`, `p1`, ...; a process given as a string or keyword is
//! the worker's name. `:process :nemesis` is the nemesis, and `:process :fencelab` carries what
//! only Fencelab has (its setup, lease expiries). Time: an entry's `at` is `:time` in
//! milliseconds (nanoseconds divided by a million); an op without `:time` happens when the op
//! before it did. Processes log a little out of time order: an op stamped up to
//! [`STEP_BACK_TOLERANCE`](crate::STEP_BACK_TOLERANCE) before the one above it happens when that
//! one did (and is counted in [`Imported::stepped_back`](crate::Imported::stepped_back)); one
//! further back is an error.
//!
//! | op | value | becomes |
//! |---|---|---|
//! | `:invoke :acquire` | `{:resource r}` (optional) | the authority's grant, placed here once its generation is known: a careful client counts its lease from the moment it asked, so the lease ends at this op's time plus the TTL |
//! | `:ok :acquire` | `{:resource r :generation g :ttl ms}` (no `:ttl`: a lease of unknown length) | `lease_granted` (at the invocation, `by` here: the authority acted somewhere in the call) then `grant_received` (here) |
//! | `:fail :acquire` | `{:resource r :holder h}` (optional) | `lease_busy` |
//! | `:ok :renew` | `{:resource r :ttl ms}` | `renewed` (the lease ends at the invocation's time plus the TTL) |
//! | `:fail :renew` | `:error` the reason | `renew_failed` |
//! | `:ok :release` | `{:resource r}` | `released` (at the invocation, `by` here) |
//! | `:invoke :write` | `{:resource r :store s :generation g :value v :op id}` | `write_sent` |
//! | `:ok :write` | | `write_arrived`, applied |
//! | `:fail :write` | `:error` `:stale` (the default), `:forged`, `:invalid-token` or `:revision-conflict`; `{:highest h}` when known | `write_arrived`, rejected |
//! | `:info :write` | | `write_unknown`: the writer never learned the outcome |
//! | `:invoke :effect` | `{:workflow w :effect e :op id :generation g}` | `effect_sent` |
//! | `:ok` / `:fail` / `:info :effect` | | `effect_arrived` delivered / dropped, `effect_unknown` |
//! | nemesis `:pause` / `:resume` | `{:worker w}` | `paused` / `resumed` |
//! | nemesis `:restart-authority` | `{:counter-kept false}` | `authority_restarted` (a counter is taken as kept unless the op says otherwise: the generations that follow show it if it was not) |
//! | nemesis `:restart-store` | `{:store s :highest-kept false}` | `store_restarted` (kept unless it says otherwise) |
//! | nemesis `:lose-message` / `:skew-clock` | `{:worker w :message m}` / `{:worker w :by n :offset n}` | `message_lost` / `clock_skewed` (as Fencelab writes them) |
//!
//! A completion is paired with the open invocation of the same process and `:f` (with the same
//! `:message`, when the value names one): Jepsen allows one open op per process, while a
//! Fencelab worker may have several writes on their way. A completion without its invocation is
//! an error. The nemesis's ops alternate, invocation then completion, as Jepsen writes them (both
//! often `:info`); a fault takes effect at its completion, and nemesis faults Fencelab does not
//! model (partitions, Jepsen's own clock nemeses) are skipped and counted. An `:info` acquire or renewal
//! changes nothing: nobody learned whether it happened; an `:info` release is a release that may
//! have happened at any moment from its invocation on (its `by` is the end of time), so the lease
//! may have ended, never surely did. A write without `:op` gets the
//! operation id `op-N` from its index; a write whose generation is not the one its worker was
//! granted is taken as forged. A store or path the history names is fenced unless an op's
//! `:enforcement` says otherwise (for example `:unfenced`).
//!
//! A history that declares its setup (as Fencelab's writers do) records its events as Fencelab
//! saw them: its grants and releases are exact unless their op gives `:by`.
//!
//! Everything else about an event (message ids, arrival times, the store's highest generation,
//! the events that only Fencelab has, such as `:compute`, `:read`, `:check-lease`,
//! `:check-passed`, `:finish` and `:stop`) may be given in `:value`; the reader uses what is given
//! and infers what is not. The writers ([`to_jepsen_json`], [`to_jepsen_edn`]) give all of it, so
//! reading their output gives back the same history.

use crate::builder::{
    AcquireCall, Builder, Call, EffectCall, EffectDone, Granted, Op, PauseFields, WriteCall,
    WriteDone, WriteResult,
};
use crate::edn;
use crate::error::{check_size, ImportError, Loc, MAX_LINE};
use crate::mapping::{Mapping, Tokens};
use crate::values::{rename_keys, Fields};
use crate::Imported;
use fencelab_core::{
    fence::gateway::DropReason, fence::gateway::EffectRequest, fence::register::Revision,
    history::Setup, ids::WorkflowKey, Event, History, OperationId, Tick, WorkerId, WriteRequest,
};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Reads a Jepsen history, EDN or JSON, telling them apart by their first characters.
pub fn read_jepsen(text: &str) -> Result<Imported, ImportError> {
    read_jepsen_mapped(text, &Mapping::default())
}

/// Reads a Jepsen history written in a system's own words (see [`crate::mapping`]), EDN or
/// JSON.
pub fn read_jepsen_mapped(text: &str, mapping: &Mapping) -> Result<Imported, ImportError> {
    let ops = if looks_like_json(text) { json_ops(text)? } else { edn_ops(text)? };
    read_ops(ops, mapping)
}

/// Reads a Jepsen history from bytes, refusing bytes that are not UTF-8 with the line.
pub fn read_jepsen_bytes(bytes: &[u8]) -> Result<Imported, ImportError> {
    read_jepsen(crate::error::utf8(bytes)?)
}

/// Whether `text` starts like JSON (`[{"` or `{"`) rather than EDN (`[{:`, `{:`, `;`, `#`).
fn looks_like_json(text: &str) -> bool {
    let mut chars = text.chars().filter(|c| !c.is_whitespace() && *c != ',');
    match chars.next() {
        Some('[') => match chars.next() {
            Some('{') => chars.next() == Some('"'),
            Some(']') | None => true,
            _ => false,
        },
        Some('{') => chars.next() == Some('"'),
        _ => false,
    }
}

/// Reads a Jepsen history written as JSON: an array of op objects, or one object per line.
pub fn read_jepsen_json(text: &str) -> Result<Imported, ImportError> {
    read_ops(json_ops(text)?, &Mapping::default())
}

/// The ops of a Jepsen history written as JSON, each with its line.
fn json_ops(text: &str) -> Result<Vec<(usize, Value)>, ImportError> {
    check_size(text.len())?;
    let trimmed = text.trim_start();
    let mut ops = Vec::new();
    if trimmed.starts_with('[') {
        let raws: Vec<&serde_json::value::RawValue> =
            serde_json::from_str(text).map_err(|e| ImportError {
                file: String::new(),
                line: e.line(),
                op: None,
                field: None,
                problem: format!("JSON: {}", json_problem(&e)),
            })?;
        let (mut line, mut counted) = (1, 0);
        for raw in raws {
            let offset = (raw.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
            let offset = offset.min(text.len());
            line += text.as_bytes()[counted..offset].iter().filter(|b| **b == b'\n').count();
            counted = offset;
            if raw.get().len() > MAX_LINE {
                return Err(Loc::line(line).whole(format!(
                    "an op of {} bytes; the largest read is {MAX_LINE}",
                    raw.get().len()
                )));
            }
            let value = serde_json::from_str(raw.get())
                .map_err(|e| Loc::line(line).whole(format!("JSON: {}", json_problem(&e))))?;
            ops.push((line, value));
        }
    } else {
        for (i, text) in text.lines().enumerate() {
            let line = i + 1;
            if text.len() > MAX_LINE {
                return Err(Loc::line(line).whole(format!(
                    "a line of {} bytes; the longest read is {MAX_LINE}",
                    text.len()
                )));
            }
            if text.trim().is_empty() {
                continue;
            }
            let value = serde_json::from_str(text)
                .map_err(|e| Loc::line(line).whole(format!("JSON: {}", json_problem(&e))))?;
            ops.push((line, value));
        }
    }
    Ok(ops)
}

/// serde_json's message without its "at line 1 column 9", which the error already places.
fn json_problem(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let text = message.split(" at line ").next().unwrap_or_default();
    format!("{text} (column {})", e.column())
}

/// Reads a Jepsen history written as EDN: a vector (or list) of op maps, or one map per line.
pub fn read_jepsen_edn(text: &str) -> Result<Imported, ImportError> {
    read_ops(edn_ops(text)?, &Mapping::default())
}

/// The ops of a Jepsen history written as EDN, each with its line.
fn edn_ops(text: &str) -> Result<Vec<(usize, Value)>, ImportError> {
    check_size(text.len())?;
    for (i, line) in text.lines().enumerate() {
        if line.len() > MAX_LINE {
            return Err(Loc::line(i + 1)
                .whole(format!("a line of {} bytes; the longest read is {MAX_LINE}", line.len())));
        }
    }
    let forms = if edn::starts_with_sequence(text) {
        edn::read_elements(text)?
    } else {
        edn::read_all(text)?
    };
    Ok(forms.into_iter().map(|f| (f.line, f.value)).collect())
}

/// Jepsen's op types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    Invoke,
    Ok,
    Fail,
    Info,
}

/// Who performed an op.
enum Process {
    Worker(WorkerId),
    Nemesis,
    Fencelab,
}

/// The nemesis's open invocation.
struct NemesisOp {
    f: String,
    value: Option<Map<String, Value>>,
}

/// Fencelab's own events, spelt as Jepsen `:f`s, and their event names.
const WORKER_EVENTS: &[(&str, &str)] = &[
    ("compute", "computing"),
    ("read", "read_value"),
    ("check-lease", "lease_checked"),
    ("pause-skipped", "pause_skipped"),
    ("finish", "worker_finished"),
    ("stop", "worker_stopped"),
];
const NEMESIS_EVENTS: &[(&str, &str)] = &[
    ("pause-ignored", "pause_ignored"),
    ("delay-messages", "messages_delayed"),
    ("lose-message", "message_lost"),
    ("lose-message-ignored", "loss_ignored"),
    ("skew-clock", "clock_skewed"),
];
const WORKER_FS: &str = "acquire, renew, release, write, effect, check-passed, compute, read, check-lease, pause-skipped, finish, stop";

fn read_ops(ops: Vec<(usize, Value)>, mapping: &Mapping) -> Result<Imported, ImportError> {
    let mut tokens = Tokens::default();
    read_mapped_ops(ops, mapping, &mut tokens).map_err(|mut e| {
        // A rename that matched nothing before the error is the likeliest cause of it.
        let unmatched = tokens.unmatched(mapping);
        if !unmatched.is_empty() {
            let list = unmatched.join(", ");
            e.problem = format!(
                "{} (the --map rename {list} matched no field so far: is it spelt as in the file?)",
                e.problem
            );
        }
        e
    })
}

fn read_mapped_ops(
    ops: Vec<(usize, Value)>,
    mapping: &Mapping,
    tokens: &mut Tokens,
) -> Result<Imported, ImportError> {
    let mut builder = Builder::new().with_ttl(mapping.ttl);
    let mut nemesis: Option<NemesisOp> = None;
    let mut skipped = 0;
    for (i, (line, value)) in ops.into_iter().enumerate() {
        let mut loc = Loc { line, op: Some(i) };
        let Value::Object(mut op) = value else {
            return Err(loc.whole(format!("an op must be a map, not {}", short(&value))));
        };
        crate::mapping::apply(mapping, tokens, &mut op);
        let top = Fields { map: Some(&op), loc: &loc, prefix: "" };
        if let Some(index) = top.u64("index")? {
            loc.op = usize::try_from(index).ok();
        }
        let top = Fields { map: Some(&op), loc: &loc, prefix: "" };
        let kind = match top.req_str("type")?.as_str() {
            "invoke" => Type::Invoke,
            "ok" => Type::Ok,
            "fail" => Type::Fail,
            "info" => Type::Info,
            other => {
                return Err(loc.field(
                    "type",
                    format!("{other:?} is not an op type (invoke, ok, fail or info)"),
                ))
            }
        };
        let process = match top.raw("process") {
            Some(Value::Number(n)) => match n.as_u64() {
                Some(n) => Process::Worker(
                    WorkerId::new(format!("p{n}"))
                        .map_err(|e| loc.field("process", e.to_string()))?,
                ),
                None => return Err(loc.field("process", format!("{n} is not a process number"))),
            },
            Some(Value::String(s)) if s == "nemesis" => Process::Nemesis,
            Some(Value::String(s)) if s == "fencelab" => Process::Fencelab,
            Some(Value::String(s)) => Process::Worker(
                WorkerId::new(s.as_str())
                    .map_err(|e| loc.field("process", format!("not a process: {e}")))?,
            ),
            Some(other) => {
                return Err(loc.field("process", format!("{} is not a process", short(other))))
            }
            None => return Err(loc.field("process", "missing")),
        };
        let f = top.req_str("f")?;
        let at = match top.raw("time") {
            None => builder.now(),
            Some(Value::Number(n)) if n.as_u64().is_some() => {
                Tick(n.as_u64().unwrap_or(0) / 1_000_000)
            }
            Some(other) => {
                return Err(loc.field(
                    "time",
                    format!("expected nanoseconds as a whole number from 0, got {}", short(other)),
                ))
            }
        };
        let wall = top.u64("wall-ns")?;
        builder.time(&loc, "time", at, wall)?;
        let value = match op.get("value") {
            Some(Value::Object(m)) => Some(m),
            _ => None,
        };
        let error = match op.get("error") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(items)) => items.first().and_then(|v| v.as_str()).map(str::to_string),
            Some(other) => Some(other.to_string()),
        };
        let v = Fields { map: value, loc: &loc, prefix: "value" };
        match process {
            Process::Worker(worker) => worker_op(&mut builder, &loc, &worker, kind, &f, &v, error)?,
            Process::Fencelab => match f.as_str() {
                "setup" => {
                    let setup = match value {
                        Some(m) => serde_json::from_value::<Setup>(rename_keys(
                            Value::Object(m.clone()),
                            false,
                        ))
                        .map_err(|e| loc.field("value", e.to_string()))?,
                        None => {
                            return Err(
                                loc.field("value", "the setup op needs the setup as its value")
                            )
                        }
                    };
                    builder.declare(&loc, setup)?;
                }
                "lease-expired" => builder.push(event(&loc, "lease_expired", None, value)?),
                other => {
                    return Err(loc.field(
                        "f",
                        format!(
                            "unknown :f {other:?} for :process :fencelab (setup or lease-expired)"
                        ),
                    ))
                }
            },
            Process::Nemesis => match nemesis.take() {
                None => nemesis = Some(NemesisOp { f, value: value.cloned() }),
                Some(open) => {
                    if open.f != f {
                        return Err(loc.field("f", format!("the nemesis's :{f} arrives while its :{} is still open (nemesis ops alternate, invocation then completion)", open.f)));
                    }
                    let value = value.cloned().or(open.value);
                    let v = Fields { map: value.as_ref(), loc: &loc, prefix: "value" };
                    if kind == Type::Fail || !nemesis_op(&mut builder, &loc, &f, &v)? {
                        skipped += 1;
                    }
                }
            },
        }
    }
    if nemesis.is_some() {
        skipped += 1;
    }
    let declared = builder.declared();
    let (history, lines, stepped_back, unfinished) = builder.finish()?;
    if !declared {
        phantom_workers(&history, &lines)?;
    }
    let tokens = std::mem::take(&mut tokens.seen);
    Ok(Imported { history, lines, skipped, stepped_back, unfinished, tokens })
}

/// Refuses a worker the nemesis acts on that does nothing else in the history, most likely a
/// typo for another process: judging it would only add a lane with a pause on it. A history
/// whose setup lists its workers may name one that does nothing.
fn phantom_workers(history: &History, lines: &[usize]) -> Result<(), ImportError> {
    let by_nemesis = |e: &Event| {
        matches!(e, Event::Paused { .. } | Event::Resumed { .. } | Event::ClockSkewed { .. })
    };
    let active: std::collections::BTreeSet<&str> =
        history.entries.iter().filter(|e| !by_nemesis(&e.event)).map(|e| e.event.actor()).collect();
    let phantom = history
        .entries
        .iter()
        .enumerate()
        .find(|(_, e)| by_nemesis(&e.event) && !active.contains(e.event.actor()));
    match phantom {
        Some((i, e)) => Err(Loc::line(lines.get(i).copied().unwrap_or_default()).field(
            "value.worker",
            format!(
                "the nemesis acts on {}, which does nothing else in the history (a typo for another process?)",
                e.event.actor()
            ),
        )),
        None => Ok(()),
    }
}

/// A value for an error message, cut short.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}...", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

/// One of Fencelab's own events, from its fields in the op's value.
fn event(
    loc: &Loc,
    name: &str,
    worker: Option<&str>,
    value: Option<&Map<String, Value>>,
) -> Result<Event, ImportError> {
    let mut map = match value {
        Some(m) => match rename_keys(Value::Object(m.clone()), false) {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        None => Map::new(),
    };
    if let Some(w) = worker {
        map.insert("worker".into(), Value::String(w.into()));
    }
    Event::from_fields(name, map).map_err(|e| loc.field("value", e.to_string()))
}

fn worker_op(
    b: &mut Builder,
    loc: &Loc,
    worker: &WorkerId,
    kind: Type,
    f: &str,
    v: &Fields,
    error: Option<String>,
) -> Result<(), ImportError> {
    let op = match f {
        "acquire" => Op::Acquire,
        "renew" => Op::Renew,
        "release" => Op::Release,
        "write" => Op::Write,
        "effect" => Op::Effect,
        "check-passed" => Op::Other(f.into()),
        _ if WORKER_EVENTS.iter().any(|(name, _)| *name == f) => Op::Other(f.into()),
        other => {
            return Err(loc.field(
                "f",
                format!("unknown :f {other:?} for a worker ({WORKER_FS}); a history's own names for its operations are mapped to these (`fencelab audit --map {other}=MEANING`, MEANING one of {})", crate::mapping::OPS.join(", ")),
            ))
        }
    };
    if kind == Type::Invoke {
        let call = match op {
            Op::Acquire => Call::Acquire(AcquireCall {
                resource: v.resource("resource")?,
                generation: v.gen("generation")?,
                ttl: v.u64("ttl")?,
                valid_until: v.tick("valid-until")?,
                arrives_at: v.tick("arrives-at")?,
                message: v.u64("message")?,
                by: v.tick("by")?,
            }),
            Op::Write => Call::Write(write_call(loc, v)?),
            Op::Effect => Call::Effect(effect_call(v)?),
            other => Call::Plain(other),
        };
        return b.invoke(loc, worker, call).map(|_| ());
    }
    let message = v.u64("message")?;
    // Only grants, writes and effects carry their message from the invocation on.
    let key = if matches!(op, Op::Other(_)) { None } else { message };
    // A write's or effect's completion that names its operation answers that operation.
    let named = match (&op, key) {
        (Op::Write | Op::Effect, None) => v.str("op")?,
        _ => None,
    };
    let open = match named {
        Some(operation) => b.complete_operation(worker, &operation).ok_or_else(|| {
            loc.field(
                "value.op",
                format!(
                    "a completion of {worker}'s {} {operation} without its invocation",
                    op.name()
                ),
            )
        })?,
        None => b.complete(loc, "type", worker, &op, key)?,
    };
    // A completion that repeats its request must repeat it as it was sent.
    if let Some((generation, value)) = open.presented() {
        if let Some(said) = v.gen("generation")?.filter(|g| *g != generation) {
            return Err(loc.field(
                "value.generation",
                format!("the completion says generation {said}, its invocation sent {generation}"),
            ));
        }
        if let (Some(sent), Some(said)) = (value, v.str("value")?) {
            if said != sent {
                return Err(loc.field(
                    "value.value",
                    format!("the completion says value {said:?}, its invocation sent {sent:?}"),
                ));
            }
        }
    }
    match (op, kind) {
        (Op::Acquire, Type::Ok) => b.granted(
            loc,
            open,
            Granted {
                resource: v.resource("resource")?,
                generation: v.gen("generation")?,
                ttl: v.u64("ttl")?,
                valid_until: v.tick("valid-until")?,
                arrives_at: v.tick("arrives-at")?,
                message,
            },
        ),
        (Op::Acquire, Type::Fail) => {
            b.busy(loc, open, v.resource("resource")?, v.worker("holder")?, v.tick("valid-until")?)
        }
        (Op::Renew, Type::Ok) => b.renewed(
            loc,
            open,
            v.resource("resource")?,
            v.gen("generation")?,
            v.u64("ttl")?,
            v.tick("valid-until")?,
        ),
        (Op::Renew, Type::Fail) => {
            let reason = match error {
                Some(e) => Some(e),
                None => v.str("reason")?,
            };
            b.renew_failed(loc, open, v.resource("resource")?, reason)
        }
        (Op::Release, Type::Ok) => {
            b.released(loc, open, v.resource("resource")?, v.gen("generation")?, v.tick("by")?)
        }
        // A release that timed out may have happened at any moment from its invocation on, or
        // not at all: a lease that may have ended, never one that surely did.
        (Op::Release, Type::Info) => {
            let unknown = Some(Tick::UNKNOWN);
            b.released(loc, open, v.resource("resource")?, v.gen("generation")?, unknown)
        }
        // Nobody learned whether the lease changed hands.
        (Op::Acquire | Op::Renew | Op::Release, _) => Ok(()),
        (Op::Write, kind) => {
            let result = match kind {
                Type::Ok => WriteResult::Applied,
                Type::Fail => WriteResult::Rejected { error, highest: v.gen("highest")? },
                _ => WriteResult::Unknown,
            };
            let done = WriteDone {
                result,
                committed: v.bool("committed")?.unwrap_or(false),
                data: v.str("data")?,
                enforcement: v.de("enforcement")?,
                outcome: v.de("outcome")?,
                value_after: v.opt_str("value-after")?,
                highest_before: v.opt_gen("highest-before")?,
                highest_after: v.opt_gen("highest-after")?,
                misfenced: v.de("misfenced")?,
            };
            b.write_done(loc, open, done)
        }
        (Op::Effect, kind) => {
            let dropped = match kind {
                Type::Ok => Some(None),
                Type::Fail => Some(Some(match v.de::<DropReason>("dropped")? {
                    Some(reason) => reason,
                    None => {
                        let presented =
                            open.effect_generation().unwrap_or(fencelab_core::Generation::FIRST);
                        DropReason::Stale {
                            presented,
                            highest: v.gen("highest")?.unwrap_or(presented),
                        }
                    }
                })),
                _ => None,
            };
            let done = EffectDone {
                dropped,
                partner: v.str("partner")?,
                enforcement: v.de("enforcement")?,
            };
            b.effect_done(loc, open, done)
        }
        (Op::Other(name), _) if name == "check-passed" => b.check_passed(
            loc,
            worker,
            message,
            v.str("data")?,
            v.opt_gen("highest-seen")?,
            v.tick("writes-at")?,
        ),
        (Op::Other(name), _) => {
            let event_name = WORKER_EVENTS.iter().find(|(n, _)| *n == name).map_or("", |(_, e)| *e);
            b.push(event(loc, event_name, Some(worker), v.map)?);
            Ok(())
        }
    }
}

/// A nemesis fault; `false` when Fencelab does not model it.
fn nemesis_op(b: &mut Builder, loc: &Loc, f: &str, v: &Fields) -> Result<bool, ImportError> {
    let worker = || -> Result<WorkerId, ImportError> {
        let name = match v.raw("worker") {
            Some(Value::Number(n)) if n.as_u64().is_some() => format!("p{n}"),
            _ => v.req_str("worker")?,
        };
        WorkerId::new(name).map_err(|e| loc.field(&v.name("worker"), e.to_string()))
    };
    match f {
        "pause" => b.pause(
            &worker()?,
            PauseFields {
                ticks: v.u64("ticks")?,
                reason: v.de("reason")?,
                believes: v.opt_gen("believes")?,
                ..PauseFields::default()
            },
        ),
        "resume" => b.resume(
            &worker()?,
            PauseFields {
                believes: v.opt_gen("believes")?,
                resource: v.opt_resource("resource")?,
                still_owner: v.bool("still-owner")?,
                current: v.opt_gen("current")?,
                ..PauseFields::default()
            },
        ),
        "restart-authority" => b.push(Event::AuthorityRestarted {
            counter_kept: v.bool("counter-kept")?.unwrap_or(true),
        }),
        "restart-store" => b.push(Event::StoreRestarted {
            store: v.req_str("store")?,
            highest_kept: v.bool("highest-kept")?.unwrap_or(true),
        }),
        _ => match NEMESIS_EVENTS.iter().find(|(n, _)| *n == f) {
            Some((_, name)) => b.push(event(loc, name, None, v.map)?),
            None => return Ok(false),
        },
    }
    Ok(true)
}

fn write_call(loc: &Loc, v: &Fields) -> Result<WriteCall, ImportError> {
    let resource = v.req_resource("resource")?;
    let store = v.req_str("store")?;
    let generation = v.req_gen("generation")?;
    let value = v.req_str("value")?;
    let operation = match v.operation("op")? {
        Some(op) => op,
        None => OperationId::new(format!("op-{}", loc.op.unwrap_or(loc.line)))
            .map_err(|e| loc.field("value.op", e.to_string()))?,
    };
    let expected_revision = v.u64("expected-revision")?.map(Revision);
    Ok(WriteCall {
        request: WriteRequest { resource, generation, operation, expected_revision, value },
        store,
        path: v.str("path")?,
        token: v.de("token")?,
        arrives_at: v.tick("arrives-at")?,
        retry: v.bool("retry")?,
        message: v.u64("message")?,
        enforcement: v.de("enforcement")?,
    })
}

fn effect_call(v: &Fields) -> Result<EffectCall, ImportError> {
    let workflow = WorkflowKey::new(v.req_str("workflow")?)
        .map_err(|e| v.loc.field("value.workflow", e.to_string()))?;
    let effect = match v.raw("effect") {
        Some(Value::String(label)) => fencelab_core::fence::gateway::Effect::CallWebhook {
            endpoint: label.clone(),
            payload: String::new(),
        },
        Some(_) => v.de("effect")?.ok_or_else(|| v.loc.field("value.effect", "missing"))?,
        None => return Err(v.loc.field("value.effect", "missing")),
    };
    let operation = v.operation("op")?.ok_or_else(|| v.loc.field("value.op", "missing"))?;
    Ok(EffectCall {
        request: EffectRequest {
            workflow,
            generation: v.req_gen("generation")?,
            operation,
            effect,
        },
        resource: v.resource("resource")?,
        token: v.de("token")?,
        arrives_at: v.tick("arrives-at")?,
        retry: v.bool("retry")?,
        message: v.u64("message")?,
    })
}

// ---------------------------------------------------------------------------------------------
// Writing

/// The history as Jepsen ops (JSON values with Jepsen's keys), every event included.
fn ops(history: &History) -> Vec<Value> {
    let mut out: Vec<Map<String, Value>> = Vec::new();
    let setup = rename_keys(serde_json::to_value(&history.setup).unwrap_or(Value::Null), true);
    out.push(op("info", "fencelab", "setup", Tick::ZERO, None, setup));
    // Per grant message: when it was granted and until when, for the completion's TTL.
    let mut grants: BTreeMap<u64, (Tick, Tick)> = BTreeMap::new();
    for entry in &history.entries {
        let (at, wall) = (entry.at, entry.wall_ns);
        let event = &entry.event;
        let mut fields = match rename_keys(Value::Object(event.fields()), true) {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        // A window, which only a grant or a release read from a client's call has.
        if let Some(by) = entry.by {
            fields.insert("by".into(), by.0.into());
        }
        let worker = match fields.remove("worker") {
            Some(Value::String(w)) => w,
            _ => String::new(),
        };
        flatten_request(&mut fields);
        let pair = |out: &mut Vec<_>,
                    process: &str,
                    f: &str,
                    invoke: Value,
                    done: &str,
                    value: Map<String, Value>| {
            out.push(op("invoke", process, f, at, wall, invoke));
            out.push(op(done, process, f, at, wall, Value::Object(value)));
        };
        let resource_only = |fields: &Map<String, Value>| {
            let mut m = Map::new();
            if let Some(r) = fields.get("resource") {
                m.insert("resource".into(), r.clone());
            }
            Value::Object(m)
        };
        match event {
            Event::LeaseGranted { message, valid_until, .. } => {
                grants.insert(*message, (at, *valid_until));
                out.push(op("invoke", &worker, "acquire", at, wall, Value::Object(fields)));
            }
            Event::GrantReceived { message, .. } => {
                if let Some((granted, until)) = grants.remove(message) {
                    fields.insert("ttl".into(), until.since(granted).into());
                }
                out.push(op("ok", &worker, "acquire", at, wall, Value::Object(fields)));
            }
            Event::LeaseBusy { .. } => {
                let invoke = resource_only(&fields);
                pair(&mut out, &worker, "acquire", invoke, "fail", fields);
            }
            Event::Renewed { .. } => {
                pair(&mut out, &worker, "renew", resource_only(&fields), "ok", fields)
            }
            Event::RenewFailed { reason, .. } => {
                let invoke = resource_only(&fields);
                fields.remove("reason");
                out.push(op("invoke", &worker, "renew", at, wall, invoke));
                let mut done = op("fail", &worker, "renew", at, wall, Value::Object(fields));
                done.insert("error".into(), Value::String(reason.clone()));
                out.push(done);
            }
            Event::Released { .. } => {
                pair(&mut out, &worker, "release", Value::Object(fields.clone()), "ok", fields)
            }
            Event::LeaseExpired { .. } => {
                fields.insert("worker".into(), worker.into());
                out.push(op("info", "fencelab", "lease-expired", at, wall, Value::Object(fields)));
            }
            Event::Paused { .. }
            | Event::PauseIgnored { .. }
            | Event::Resumed { .. }
            | Event::MessagesDelayed { .. }
            | Event::MessageLost { .. }
            | Event::LossIgnored { .. }
            | Event::ClockSkewed { .. } => {
                let f = match event {
                    Event::Paused { .. } => "pause",
                    Event::PauseIgnored { .. } => "pause-ignored",
                    Event::Resumed { .. } => "resume",
                    Event::MessageLost { .. } => "lose-message",
                    Event::LossIgnored { .. } => "lose-message-ignored",
                    Event::ClockSkewed { .. } => "skew-clock",
                    _ => "delay-messages",
                };
                fields.insert("worker".into(), worker.clone().into());
                let mut invoke = Map::new();
                invoke.insert("worker".into(), worker.into());
                out.push(op("info", "nemesis", f, at, wall, Value::Object(invoke)));
                out.push(op("info", "nemesis", f, at, wall, Value::Object(fields)));
            }
            Event::AuthorityRestarted { .. } | Event::StoreRestarted { .. } => {
                let f = if matches!(event, Event::AuthorityRestarted { .. }) {
                    "restart-authority"
                } else {
                    "restart-store"
                };
                out.push(op("info", "nemesis", f, at, wall, Value::Object(fields.clone())));
                out.push(op("info", "nemesis", f, at, wall, Value::Object(fields)));
            }
            Event::Computing { .. }
            | Event::ReadValue { .. }
            | Event::LeaseChecked { .. }
            | Event::PauseSkipped { .. }
            | Event::WorkerFinished { .. }
            | Event::WorkerStopped { .. } => {
                let f = match event {
                    Event::Computing { .. } => "compute",
                    Event::ReadValue { .. } => "read",
                    Event::LeaseChecked { .. } => "check-lease",
                    Event::PauseSkipped { .. } => "pause-skipped",
                    Event::WorkerFinished { .. } => "finish",
                    _ => "stop",
                };
                pair(&mut out, &worker, f, Value::Null, "ok", fields);
            }
            Event::WriteSent { .. } => {
                out.push(op("invoke", &worker, "write", at, wall, Value::Object(fields)))
            }
            Event::CheckPassed { message, .. } => {
                let mut keep = Map::new();
                for key in ["message", "data", "highest-seen", "writes-at"] {
                    if let Some(v) = fields.get(key) {
                        keep.insert(key.into(), v.clone());
                    }
                }
                let invoke = serde_json::json!({ "message": message });
                pair(&mut out, &worker, "check-passed", invoke, "ok", keep);
            }
            Event::WriteArrived { outcome, .. } | Event::WriteCommitted { outcome, .. } => {
                if matches!(event, Event::WriteCommitted { .. }) {
                    fields.insert("committed".into(), true.into());
                }
                let (kind, error) = match outcome {
                    fencelab_core::WriteOutcome::Rejected(r) => {
                        let kind =
                            rename_keys(serde_json::to_value(r).unwrap_or(Value::Null), true);
                        let name = kind
                            .get("kind")
                            .and_then(Value::as_str)
                            .unwrap_or("stale")
                            .replace('_', "-");
                        if let fencelab_core::fence::register::WriteRejection::Stale {
                            highest,
                            ..
                        } = r
                        {
                            fields.insert("highest".into(), highest.get().into());
                        }
                        ("fail", Some(name))
                    }
                    _ => ("ok", None),
                };
                let mut done = op(kind, &worker, "write", at, wall, Value::Object(fields));
                if let Some(error) = error {
                    done.insert("error".into(), error.into());
                }
                out.push(done);
            }
            Event::WriteUnknown { .. } => {
                out.push(op("info", &worker, "write", at, wall, Value::Object(fields)))
            }
            Event::EffectSent { .. } => {
                out.push(op("invoke", &worker, "effect", at, wall, Value::Object(fields)))
            }
            Event::EffectArrived { dropped, .. } => {
                let kind = if dropped.is_some() { "fail" } else { "ok" };
                let mut done = op(kind, &worker, "effect", at, wall, Value::Object(fields));
                if let Some(reason) = dropped {
                    let kind =
                        rename_keys(serde_json::to_value(reason).unwrap_or(Value::Null), true);
                    let name = kind
                        .get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or("stale")
                        .replace('_', "-");
                    done.insert("error".into(), name.into());
                }
                out.push(done);
            }
            Event::EffectUnknown { .. } => {
                out.push(op("info", &worker, "effect", at, wall, Value::Object(fields)))
            }
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(i, mut m)| {
            m.insert("index".into(), i.into());
            Value::Object(m)
        })
        .collect()
}

/// Moves a request's fields into the op's value, named as the mapping names them.
fn flatten_request(fields: &mut Map<String, Value>) {
    if let Some(Value::Object(request)) = fields.remove("request") {
        for (k, v) in request {
            let k = if k == "operation" { "op".to_string() } else { k };
            fields.insert(k, v);
        }
    }
}

fn op(
    kind: &str,
    process: &str,
    f: &str,
    at: Tick,
    wall: Option<u64>,
    value: Value,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), kind.into());
    m.insert("process".into(), process.into());
    m.insert("f".into(), f.into());
    m.insert("time".into(), at.0.saturating_mul(1_000_000).into());
    m.insert("value".into(), value);
    if let Some(w) = wall {
        m.insert("wall-ns".into(), w.into());
    }
    m
}

/// The history as a Jepsen history in JSON: an array with one op per line. Every event is
/// written, with the fields the mapping does not cover in `:value`, so [`read_jepsen_json`]
/// gives back the same history.
pub fn to_jepsen_json(history: &History) -> String {
    let ops = ops(history);
    let mut out = String::from("[\n");
    for (i, op) in ops.iter().enumerate() {
        out.push_str(&op.to_string());
        out.push_str(if i + 1 < ops.len() { ",\n" } else { "\n" });
    }
    out.push_str("]\n");
    out
}

/// The history as a Jepsen `history.edn`: a vector with one op map per line, keywords where
/// Jepsen has them (`:type`, `:f`, `:process :nemesis`, `:error`). [`read_jepsen_edn`] gives back
/// the same history.
pub fn to_jepsen_edn(history: &History) -> String {
    let keyword = |key: &str, text: &str| match key {
        "type" | "f" | "error" => true,
        "process" => text == "nemesis" || text == "fencelab",
        _ => false,
    };
    let mut out = String::from("[");
    for (i, op) in ops(history).iter().enumerate() {
        if i > 0 {
            out.push_str("\n ");
        }
        edn::write(&mut out, op, &keyword);
    }
    out.push_str("]\n");
    out
}
