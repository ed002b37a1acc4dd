//! OpenTelemetry traces, as the collector's file exporter writes them: OTLP JSON, one
//! `{"resourceSpans": [...]}` object per line, each holding `scopeSpans`, each holding `spans`.
//!
//! Services that take leases and write through fences can say so in their spans; this reader
//! turns those spans into a history, so a trace from a real deployment is judged like a
//! simulated run. The convention:
//!
//! | span name | attributes | becomes |
//! |---|---|---|
//! | `lease.acquire` | `fencing.resource`, `fencing.generation`, `lease.ttl_ms` (without it, a lease of unknown length) | a grant at the span's start (the lease counted from then, as a careful client does) received at its end; a span with an error status is a refused acquire |
//! | `lease.renew` | `fencing.resource`, `lease.ttl_ms` (`fencing.generation` optional) | a renewal ending at the span's start plus the TTL; an error status is a failed renewal, with the status message as the reason |
//! | `lease.release` | `fencing.resource` | a release |
//! | `fencing.write` | `fencing.resource`, `fencing.store`, `fencing.generation`, `fencing.value`, `fencing.operation` (the span id when absent), `fencing.outcome`, optional `fencing.highest`, `fencing.error`, `fencing.enforcement`, `fencing.path` | a write sent at the start and answered at the end |
//! | `fencing.effect` | `fencing.workflow`, `fencing.effect` (a label), `fencing.operation`, `fencing.generation`, `fencing.outcome` | an effect sent at the start and delivered, dropped or unknown at the end |
//!
//! The worker is the span's `lease.holder`, or else the resource's `service.instance.id`.
//! `fencing.outcome` is `applied`, `rejected` or `unknown`. When it is absent, a span with an
//! error status is taken as unknown (an error such as a timeout does not say whether the store
//! applied the write) and any other span as applied (the call returned without an error).
//! `fencing.enforcement` (`unfenced`, `check_then_write`, `fenced`, `fenced_idempotent`) may
//! also be a resource attribute, and says how the store's path is protected; it is `fenced`
//! otherwise. Span events named `pause` and `resume` on any span of a worker freeze and wake
//! that worker. Spans with other names are skipped and counted.
//!
//! Time: every start, end and span event is ordered by time before building (at one instant,
//! ends come before span events and those before starts, so a grant is received before the
//! write it allows is sent). An entry's `at` is milliseconds since the earliest of them and its
//! `wall_ns` the absolute Unix time the trace gives.

use crate::builder::{
    AcquireCall, Builder, Call, EffectCall, EffectDone, Granted, Op, PauseFields, WriteCall,
    WriteDone, WriteResult,
};
use crate::error::{check_size, ImportError, Loc, MAX_LINE};
use crate::values::Fields;
use crate::Imported;
use fencelab_core::{
    fence::gateway::DropReason, fence::gateway::Effect, fence::gateway::EffectRequest,
    ids::WorkflowKey, OperationId, Tick, WorkerId, WriteRequest,
};
use serde_json::{Map, Value};

/// Reads an OTLP JSON trace file (one export object per line).
pub fn read_otlp(text: &str) -> Result<Imported, ImportError> {
    check_size(text.len())?;
    let mut spans = Vec::new();
    let mut skipped = 0;
    for (i, line_text) in text.lines().enumerate() {
        let line = i + 1;
        if line_text.len() > MAX_LINE {
            return Err(Loc::line(line).whole(format!(
                "a line of {} bytes; the longest read is {MAX_LINE}",
                line_text.len()
            )));
        }
        if line_text.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line_text).map_err(|e| {
            let message = e.to_string();
            let text = message.split(" at line ").next().unwrap_or_default();
            Loc::line(line).whole(format!("JSON: {text} (column {})", e.column()))
        })?;
        skipped += spans_of(line, &value, &mut spans)?;
    }
    build(spans, skipped)
}

/// Reads an OTLP JSON trace from bytes, refusing bytes that are not UTF-8 with the line.
pub fn read_otlp_bytes(bytes: &[u8]) -> Result<Imported, ImportError> {
    read_otlp(crate::error::utf8(bytes)?)
}

/// One span, with what the reader needs of it.
struct Span {
    line: usize,
    /// Where it is in its line, for messages: `resourceSpans[0].scopeSpans[0].spans[3]`.
    path: String,
    name: String,
    id: String,
    start: u64,
    end: u64,
    attributes: Map<String, Value>,
    error: Option<String>,
    events: Vec<(u64, String)>,
}

fn array<'a>(v: &'a Value, key: &str, loc: &Loc, path: &str) -> Result<&'a [Value], ImportError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(loc.field(&format!("{path}{key}"), "expected an array")),
    }
}

/// Unix nanoseconds, written as a string (as OTLP JSON does) or a number.
fn nanos(v: Option<&Value>, loc: &Loc, field: &str) -> Result<u64, ImportError> {
    match v {
        Some(Value::String(s)) => s
            .parse::<u64>()
            .map_err(|_| loc.field(field, format!("{s:?} is not a time in Unix nanoseconds"))),
        Some(Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| loc.field(field, format!("{n} is not a time in Unix nanoseconds"))),
        _ => Err(loc.field(field, "missing")),
    }
}

/// OTLP attributes (`[{"key": k, "value": {"stringValue": ...}}]`) as plain values.
fn attributes(v: &Value, loc: &Loc, path: &str) -> Result<Map<String, Value>, ImportError> {
    let mut out = Map::new();
    for (i, kv) in array(v, "attributes", loc, path)?.iter().enumerate() {
        let field = format!("{path}attributes[{i}]");
        let key = kv
            .get("key")
            .and_then(Value::as_str)
            .ok_or_else(|| loc.field(&format!("{field}.key"), "missing"))?;
        let value = kv.get("value").and_then(Value::as_object);
        let plain = match value.and_then(|m| m.iter().next()) {
            Some((kind, v)) => match (kind.as_str(), v) {
                ("stringValue", Value::String(s)) => Value::String(s.clone()),
                ("intValue", Value::String(s)) => match (s.parse::<u64>(), s.parse::<i64>()) {
                    (Ok(u), _) => u.into(),
                    (_, Ok(i)) => i.into(),
                    // Kept as text, so that a generation beyond 64 bits is named as such.
                    _ => Value::String(s.clone()),
                },
                ("intValue" | "doubleValue" | "boolValue", v) => v.clone(),
                (other, _) => {
                    return Err(loc.field(
                        &format!("{field}.value"),
                        format!("{other} is not supported here (string, int, double or bool)"),
                    ))
                }
            },
            None => Value::Null,
        };
        out.insert(key.to_string(), plain);
    }
    Ok(out)
}

/// Collects the spans of one export line; returns how many were skipped.
fn spans_of(line: usize, export: &Value, out: &mut Vec<Span>) -> Result<usize, ImportError> {
    let loc = Loc::line(line);
    if !export.is_object() {
        return Err(loc.whole("expected an object with \"resourceSpans\""));
    }
    let mut skipped = 0;
    for (r, rs) in array(export, "resourceSpans", &loc, "")?.iter().enumerate() {
        let rpath = format!("resourceSpans[{r}].");
        let resource = match rs.get("resource") {
            Some(res) => attributes(res, &loc, &format!("{rpath}resource."))?,
            None => Map::new(),
        };
        for (s, ss) in array(rs, "scopeSpans", &loc, &rpath)?.iter().enumerate() {
            let spath = format!("{rpath}scopeSpans[{s}].");
            for (k, span) in array(ss, "spans", &loc, &spath)?.iter().enumerate() {
                let path = format!("{spath}spans[{k}]");
                let name = span.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                let relevant = matches!(
                    name.as_str(),
                    "lease.acquire"
                        | "lease.renew"
                        | "lease.release"
                        | "fencing.write"
                        | "fencing.effect"
                );
                let events = array(span, "events", &loc, &format!("{path}."))?;
                let pauses: Vec<(u64, String)> = events
                    .iter()
                    .enumerate()
                    .filter_map(|(e, ev)| {
                        let n = ev.get("name").and_then(Value::as_str)?;
                        matches!(n, "pause" | "resume").then_some((e, ev, n))
                    })
                    .map(|(e, ev, n)| {
                        let field = format!("{path}.events[{e}].timeUnixNano");
                        Ok((nanos(ev.get("timeUnixNano"), &loc, &field)?, n.to_string()))
                    })
                    .collect::<Result<_, ImportError>>()?;
                if !relevant && pauses.is_empty() {
                    skipped += 1;
                    continue;
                }
                let start = nanos(
                    span.get("startTimeUnixNano"),
                    &loc,
                    &format!("{path}.startTimeUnixNano"),
                )?;
                let end =
                    nanos(span.get("endTimeUnixNano"), &loc, &format!("{path}.endTimeUnixNano"))?;
                if end < start {
                    return Err(loc.field(
                        &format!("{path}.endTimeUnixNano"),
                        "the span ends before it starts",
                    ));
                }
                let mut attrs = attributes(span, &loc, &format!("{path}."))?;
                if !attrs.contains_key("lease.holder") {
                    if let Some(id) = resource.get("service.instance.id") {
                        attrs.insert("lease.holder".into(), id.clone());
                    }
                }
                if !attrs.contains_key("fencing.enforcement") {
                    if let Some(e) = resource.get("fencing.enforcement") {
                        attrs.insert("fencing.enforcement".into(), e.clone());
                    }
                }
                let status = span.get("status");
                let code = status.and_then(|s| s.get("code"));
                let failed = matches!(code, Some(Value::Number(n)) if n.as_u64() == Some(2))
                    || matches!(code, Some(Value::String(s)) if s == "STATUS_CODE_ERROR");
                let error = failed.then(|| {
                    status
                        .and_then(|s| s.get("message"))
                        .and_then(Value::as_str)
                        .unwrap_or("error")
                        .to_string()
                });
                if !relevant {
                    skipped += 1;
                }
                out.push(Span {
                    line,
                    path,
                    name: if relevant { name } else { String::new() },
                    id: span.get("spanId").and_then(Value::as_str).unwrap_or("").to_string(),
                    start,
                    end,
                    attributes: attrs,
                    error,
                    events: pauses,
                });
            }
        }
    }
    Ok(skipped)
}

/// One moment of a span: its start, its end, or one of its events.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    End,
    Event(usize),
    Start,
    /// A span that starts and ends at one instant: its start, then its end.
    Both,
}

fn build(spans: Vec<Span>, skipped: usize) -> Result<Imported, ImportError> {
    let mut points: Vec<(u64, Phase, usize)> = Vec::new();
    for (i, span) in spans.iter().enumerate() {
        if !span.name.is_empty() {
            if span.start == span.end {
                points.push((span.start, Phase::Both, i));
            } else {
                points.push((span.start, Phase::Start, i));
                points.push((span.end, Phase::End, i));
            }
        }
        for (e, (t, _)) in span.events.iter().enumerate() {
            points.push((*t, Phase::Event(e), i));
        }
    }
    let rank = |phase: &Phase| match phase {
        Phase::End => 0,
        Phase::Event(_) => 1,
        Phase::Start | Phase::Both => 2,
    };
    points.sort_by_key(|(t, phase, i)| (*t, rank(phase), *i, *phase));
    let t0 = points.first().map_or(0, |p| p.0);
    let mut b = Builder::new();
    // Each span's message, once its start has been read, so that its end finds it.
    let mut messages: Vec<Option<u64>> = vec![None; spans.len()];
    for (t, phase, i) in points {
        let span = &spans[i];
        let loc = Loc::line(span.line);
        b.time(
            &loc,
            &format!("{}.startTimeUnixNano", span.path),
            Tick((t - t0) / 1_000_000),
            Some(t),
        )?;
        // Problems in an attribute name the span it belongs to, as a line may hold many spans.
        let prefix = format!("{}.attributes", span.path);
        let attrs = Fields { map: Some(&span.attributes), loc: &loc, prefix: &prefix };
        let worker = match attrs.str("lease.holder")? {
            Some(w) if !w.trim().is_empty() => WorkerId::new(w)
                .map_err(|e| loc.field(&attrs.name("lease.holder"), e.to_string()))?,
            _ => {
                return Err(loc.field(
                    &format!("{}.attributes", span.path),
                    "no worker: give the span a lease.holder attribute, or its resource a service.instance.id",
                ))
            }
        };
        match phase {
            Phase::Event(e) => {
                if span.events[e].1 == "pause" {
                    b.pause(&worker, PauseFields::default());
                } else {
                    b.resume(&worker, PauseFields::default());
                }
            }
            Phase::Start => messages[i] = start(&mut b, &loc, span, &attrs, &worker, i)?,
            Phase::End => end(&mut b, &loc, span, &attrs, &worker, messages[i])?,
            Phase::Both => {
                messages[i] = start(&mut b, &loc, span, &attrs, &worker, i)?;
                end(&mut b, &loc, span, &attrs, &worker, messages[i])?;
            }
        }
    }
    let (history, lines, stepped_back, unfinished) = b.finish()?;
    Ok(Imported { history, lines, skipped, stepped_back, unfinished, tokens: Vec::new() })
}

fn start(
    b: &mut Builder,
    loc: &Loc,
    span: &Span,
    a: &Fields,
    worker: &WorkerId,
    index: usize,
) -> Result<Option<u64>, ImportError> {
    let call = match span.name.as_str() {
        "lease.acquire" => Call::Acquire(AcquireCall {
            resource: a.resource("fencing.resource")?,
            message: None,
            ..AcquireCall::default()
        }),
        "lease.renew" => Call::Plain(Op::Renew),
        "lease.release" => Call::Plain(Op::Release),
        "fencing.write" => {
            let operation = match a.operation("fencing.operation")? {
                Some(op) => op,
                None => OperationId::new(if span.id.is_empty() {
                    format!("span-{index}")
                } else {
                    span.id.clone()
                })
                .map_err(|e| loc.field("fencing.operation", e.to_string()))?,
            };
            Call::Write(WriteCall {
                request: WriteRequest {
                    resource: a.req_resource("fencing.resource")?,
                    generation: a.req_gen("fencing.generation")?,
                    operation,
                    expected_revision: None,
                    value: a.req_str("fencing.value")?,
                },
                store: a.req_str("fencing.store")?,
                path: a.str("fencing.path")?,
                token: None,
                arrives_at: None,
                retry: None,
                message: None,
                enforcement: a.de("fencing.enforcement")?,
            })
        }
        "fencing.effect" => {
            let workflow = WorkflowKey::new(a.req_str("fencing.workflow")?)
                .map_err(|e| loc.field("fencing.workflow", e.to_string()))?;
            let operation = a
                .operation("fencing.operation")?
                .ok_or_else(|| loc.field("fencing.operation", "missing"))?;
            let label = a.req_str("fencing.effect")?;
            Call::Effect(EffectCall {
                request: EffectRequest {
                    workflow,
                    generation: a.req_gen("fencing.generation")?,
                    operation,
                    effect: Effect::CallWebhook {
                        endpoint: label,
                        payload: a.str("fencing.value")?.unwrap_or_default(),
                    },
                },
                resource: a.resource("fencing.resource")?,
                token: None,
                arrives_at: None,
                retry: None,
                message: None,
            })
        }
        _ => return Ok(None),
    };
    b.invoke(loc, worker, call)
}

/// How a write or effect span ended.
fn outcome(span: &Span, a: &Fields) -> Result<WriteResult, ImportError> {
    Ok(match a.str("fencing.outcome")?.as_deref() {
        Some("applied") => WriteResult::Applied,
        Some("rejected") => WriteResult::Rejected {
            error: a.str("fencing.error")?,
            highest: a.gen("fencing.highest")?,
        },
        Some("unknown") => WriteResult::Unknown,
        Some(other) => {
            return Err(a.loc.field(
                "fencing.outcome",
                format!("{other:?} is not an outcome (applied, rejected or unknown)"),
            ))
        }
        None if span.error.is_some() => WriteResult::Unknown,
        None => WriteResult::Applied,
    })
}

fn end(
    b: &mut Builder,
    loc: &Loc,
    span: &Span,
    a: &Fields,
    worker: &WorkerId,
    message: Option<u64>,
) -> Result<(), ImportError> {
    let field = format!("{}.name", span.path);
    match span.name.as_str() {
        "lease.acquire" => {
            let open = b.complete(loc, &field, worker, &Op::Acquire, None)?;
            if span.error.is_some() {
                b.busy(loc, open, a.resource("fencing.resource")?, None, None)
            } else {
                let granted = Granted {
                    resource: a.resource("fencing.resource")?,
                    generation: Some(a.req_gen("fencing.generation")?),
                    ttl: a.u64("lease.ttl_ms")?,
                    ..Granted::default()
                };
                b.granted(loc, open, granted)
            }
        }
        "lease.renew" => {
            let open = b.complete(loc, &field, worker, &Op::Renew, None)?;
            match &span.error {
                Some(reason) => {
                    b.renew_failed(loc, open, a.resource("fencing.resource")?, Some(reason.clone()))
                }
                None => b.renewed(
                    loc,
                    open,
                    a.resource("fencing.resource")?,
                    a.gen("fencing.generation")?,
                    a.u64("lease.ttl_ms")?,
                    None,
                ),
            }
        }
        "lease.release" => {
            let open = b.complete(loc, &field, worker, &Op::Release, None)?;
            if span.error.is_some() {
                return Ok(());
            }
            b.released(
                loc,
                open,
                a.resource("fencing.resource")?,
                a.gen("fencing.generation")?,
                None,
            )
        }
        "fencing.write" => {
            let open = b.complete(loc, &field, worker, &Op::Write, message)?;
            let done = WriteDone {
                enforcement: a.de("fencing.enforcement")?,
                ..WriteDone::of(outcome(span, a)?)
            };
            b.write_done(loc, open, done)
        }
        "fencing.effect" => {
            let open = b.complete(loc, &field, worker, &Op::Effect, message)?;
            let presented = open.effect_generation().unwrap_or(fencelab_core::Generation::FIRST);
            let dropped = match outcome(span, a)? {
                WriteResult::Applied => Some(None),
                WriteResult::Rejected { highest, .. } => Some(Some(DropReason::Stale {
                    presented,
                    highest: highest.unwrap_or(presented),
                })),
                WriteResult::Unknown => None,
            };
            b.effect_done(
                loc,
                open,
                EffectDone { dropped, partner: None, enforcement: a.de("fencing.enforcement")? },
            )
        }
        _ => Ok(()),
    }
}
