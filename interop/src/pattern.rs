//! Text logs, read through a regular expression with named groups.
//!
//! Most services already log when they take a lease and when they write; a regular expression
//! that picks those lines out is enough to judge them. The expression (the `regex` crate's
//! syntax) must have the groups `actor` (the worker; a store's own `accepted` and `refused`
//! lines may go without) and `kind`, and may have `time`,
//! `resource`, `store`, `generation`, `value`, `op`, `ttl`, `outcome`, `highest` and `error`.
//!
//! | `kind` | groups | becomes |
//! |---|---|---|
//! | `acquire` | `resource`, `generation`, `ttl` (ms) | a grant received at once |
//! | `acquire_failed` | `resource` | a refused acquire |
//! | `renew` | `ttl`, `resource` and `generation` (optional) | a renewal |
//! | `renew_failed` | `resource`, `error` (optional) | a failed renewal |
//! | `release` | `resource` (optional) | a release |
//! | `write` | `resource`, `store` (`store` when absent), `generation`, `value`, `op` | a write sent |
//! | `write_ok`, `write_rejected`, `write_unknown` | `op` (optional), `highest` and `error` for a rejection | its answer: applied, refused, or never learned |
//! | `write_done` | `outcome`: `applied`, `rejected` or `unknown` | the same, the outcome in its own group |
//! | `accepted`, `refused` | `generation`; `highest` for a refusal; `actor`, `store`, `resource`, `value`, `op` (optional) | a store's own record of a write it applied or refused: the write and its answer at once |
//! | `pause`, `resume` | | the worker froze, woke up |
//! | `restart_authority`, `restart_store` | `store` for a store | a restart that kept its records |
//!
//! A log that names its events in its own words (`LOCK_ACQUIRED`, `PUT`) maps them with one group
//! per kind instead of `kind`: `(?P<kind_acquire>LOCK_ACQUIRED)|(?P<kind_write>PUT)`, since a
//! regular expression cannot name two groups alike. A line is of the kind whose group matched.
//!
//! A write's answer is paired with the actor's write of the same `op`, or with its oldest write
//! still open when the line names no operation. A write without `op` gets `line-N`.
//!
//! A store's own log says what it decided, often without who asked or what was written: an
//! `accepted` or `refused` line stands for the write and its answer together, and what it does
//! not name is filled in. The writer is named after the generation it presented (`gen-82`: one
//! generation, one lease holder), the store is `store`, the resource is the store's name, and
//! the value and operation are `line-N`. Such a log shows no grants, so the lease checks have
//! nothing to judge, and the writes are ordered by their generations, as the store's fence
//! orders them. Only these lines may leave out `actor`.
//!
//! Time: the `time` group is either an integer (milliseconds on the log's clock, used as `at`)
//! or a date and time, which sets `wall_ns` and makes `at` the milliseconds since the first time
//! stamp: RFC 3339 such as `2024-05-01T12:00:00.250Z` (`T` or a space between date and time, a
//! `Z` or an offset such as `+02:00`), or without an offset, as log4j and logback write them
//! (`2024-12-31 07:50:16,609`), taken as UTC. Without a `time` group, the n-th matching line is at
//! n ms. A line stamped up to [`STEP_BACK_TOLERANCE`](crate::STEP_BACK_TOLERANCE) before the one
//! above it happens when that one did, and is counted; one further back is an error. Reading is lenient about lines and strict about fields: a line the expression does not
//! match is skipped and counted (logs hold much else), but a line it matches with a field that
//! cannot be read (a generation of 0, an unknown kind) is an error naming the line and group.

use crate::builder::{
    AcquireCall, Builder, Call, Granted, Op, PauseFields, WriteCall, WriteDone, WriteResult,
};
use crate::error::{check_size, ImportError, Loc, MAX_LINE};
use crate::mapping::Mapping;
use crate::values::generation;
use crate::Imported;
use fencelab_core::{Event, Generation, OperationId, ResourceId, Tick, WorkerId, WriteRequest};
use jiff::tz::TimeZone;
use regex::{Captures, Regex, RegexBuilder};
use serde_json::Value;

/// The kinds a log line can have.
const KINDS: [&str; 16] = [
    "acquire",
    "acquire_failed",
    "renew",
    "renew_failed",
    "release",
    "write",
    "write_ok",
    "write_rejected",
    "write_unknown",
    "write_done",
    "accepted",
    "refused",
    "pause",
    "resume",
    "restart_authority",
    "restart_store",
];

/// The groups a pattern may name, besides `kind_NAME`.
const GROUPS: [&str; 12] = [
    "actor",
    "kind",
    "time",
    "resource",
    "store",
    "generation",
    "value",
    "op",
    "ttl",
    "outcome",
    "highest",
    "error",
];

/// The kinds of line a store writes about its own decisions, which need not name the writer.
const STORE_KINDS: [&str; 2] = ["accepted", "refused"];

/// Reads a log, one event per line the expression `pattern` matches.
pub fn read_pattern(text: &str, pattern: &str) -> Result<Imported, ImportError> {
    read_pattern_mapped(text, pattern, &Mapping::default())
}

/// Reads a log as [`read_pattern`] does, taking the lease length from the mapping where a line
/// gives none (the pattern's groups name the fields themselves).
pub fn read_pattern_mapped(
    text: &str,
    pattern: &str,
    mapping: &Mapping,
) -> Result<Imported, ImportError> {
    check_size(text.len())?;
    let regex = RegexBuilder::new(pattern)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| ImportError::input(format!("the pattern: {e}")))?;
    let names: Vec<String> = regex.capture_names().flatten().map(str::to_string).collect();
    // A misspelt group would be read as absent and change the verdict without a word.
    if let Some(unknown) =
        names.iter().find(|n| !GROUPS.contains(&n.as_str()) && !n.starts_with("kind_"))
    {
        return Err(ImportError::input(format!(
            "the pattern's group `{unknown}` is not one this reader knows ({}, or kind_NAME for a kind in the log's own words); leave other groups unnamed, as (?:...)",
            GROUPS.join(", ")
        )));
    }
    // A log's own words for its events are mapped by groups named after the kind they mean:
    // `(?P<kind_acquire>LOCK_ACQUIRED)|(?P<kind_write>PUT)`, since a group name cannot repeat.
    let kinds: Vec<String> = names.iter().filter(|n| n.starts_with("kind_")).cloned().collect();
    if let Some(unknown) = kinds.iter().find(|k| !KINDS.contains(&&k["kind_".len()..])) {
        return Err(ImportError::input(format!(
            "the pattern's group `{unknown}` names no kind this reader knows ({})",
            KINDS.join(", ")
        )));
    }
    if !names.iter().any(|n| n == "kind") && kinds.is_empty() {
        return Err(ImportError::input(
            "the pattern has no group named `kind` (write `(?P<kind>...)`, or name the log's own words with groups such as `(?P<kind_acquire>LOCK_ACQUIRED)`)".to_string(),
        ));
    }
    let builder = Builder::new().with_ttl(mapping.ttl);
    let time_format = mapping.time_format.clone();
    let mut reader = Reader { regex, kinds, builder, first_wall: None, matched: 0, time_format };
    let mut skipped = 0;
    for (i, line) in text.lines().enumerate() {
        let loc = Loc::line(i + 1);
        if line.len() > MAX_LINE {
            return Err(loc
                .whole(format!("a line of {} bytes; the longest read is {MAX_LINE}", line.len())));
        }
        if !reader.line(&loc, line)? {
            skipped += 1;
        }
    }
    let (history, lines, stepped_back, unfinished) = reader.builder.finish()?;
    Ok(Imported { history, lines, skipped, stepped_back, unfinished, tokens: Vec::new() })
}

/// Reads a log from bytes, refusing bytes that are not UTF-8 with the line.
pub fn read_pattern_bytes(bytes: &[u8], pattern: &str) -> Result<Imported, ImportError> {
    read_pattern(crate::error::utf8(bytes)?, pattern)
}

struct Reader {
    regex: Regex,
    /// The pattern's `kind_NAME` groups: a line that matches one is of kind `NAME`.
    kinds: Vec<String>,
    builder: Builder,
    /// The first time stamp's Unix nanoseconds, from which `at` counts.
    first_wall: Option<u64>,
    matched: u64,
    /// The log's own time format, when it has one.
    time_format: Option<String>,
}

/// The named groups of one matching line.
struct Line<'a> {
    caps: Captures<'a>,
    loc: &'a Loc,
}

impl Line<'_> {
    fn get(&self, group: &str) -> Option<&str> {
        self.caps.name(group).map(|m| m.as_str()).filter(|s| !s.is_empty())
    }

    fn req(&self, group: &str) -> Result<&str, ImportError> {
        self.get(group).ok_or_else(|| {
            self.loc.field(group, "this kind of line needs it, and the line has none")
        })
    }

    fn gen(&self, group: &str) -> Result<Option<Generation>, ImportError> {
        match self.get(group) {
            None => Ok(None),
            Some(text) => generation(&Value::String(text.to_string()))
                .map(Some)
                .map_err(|p| self.loc.field(group, p)),
        }
    }

    fn u64(&self, group: &str) -> Result<Option<u64>, ImportError> {
        match self.get(group) {
            None => Ok(None),
            Some(text) => text.parse::<u64>().map(Some).map_err(|_| {
                self.loc.field(group, format!("{text:?} is not a whole number of milliseconds"))
            }),
        }
    }

    fn resource(&self) -> Result<Option<ResourceId>, ImportError> {
        match self.get("resource") {
            None => Ok(None),
            Some(r) => {
                ResourceId::new(r).map(Some).map_err(|e| self.loc.field("resource", e.to_string()))
            }
        }
    }
}

impl Reader {
    /// Reads one line; `false` when the expression does not match it.
    fn line(&mut self, loc: &Loc, text: &str) -> Result<bool, ImportError> {
        let Some(caps) = self.regex.captures(text) else { return Ok(false) };
        let l = Line { caps, loc };
        self.matched += 1;
        let (at, wall) = match l.get("time") {
            None => (Tick(self.matched), None),
            Some(t) if t.bytes().all(|b| b.is_ascii_digit()) => {
                let ms =
                    t.parse::<u64>().map_err(|_| loc.field("time", format!("{t} is too large")))?;
                (Tick(ms), None)
            }
            Some(t) => {
                let ns = match &self.time_format {
                    Some(format) => formatted_time(format, t)
                        .map_err(|e| loc.field("time", format!("{t:?} is not a time written as {format:?}: {e}")))?,
                    None => time_stamp(t).ok_or_else(|| {
                        loc.field(
                            "time",
                            format!("{t:?} is neither milliseconds nor a date and time (such as 2024-05-01T12:00:00.250Z or 2024-05-01 12:00:00,250; give the log's own format with `fencelab audit --time-format`)"),
                        )
                    })?,
                };
                let first = *self.first_wall.get_or_insert(ns);
                // A stamp a little before the first is the same moment; the builder counts it,
                // or refuses one further back.
                let since = ns.saturating_sub(first) / 1_000_000;
                if ns < first {
                    // Back from the line above, which is this far past the first.
                    let back = self.builder.now().0.saturating_add((first - ns) / 1_000_000);
                    self.builder.step_back(loc, "time", back)?;
                }
                (Tick(since), Some(ns))
            }
        };
        self.builder.time(loc, "time", at, wall)?;
        // A `kind_NAME` group names its kind by taking part in the match, even with no text.
        let named =
            self.kinds.iter().find(|k| l.caps.name(k).is_some()).map(|k| &k["kind_".len()..]);
        let kind = match named {
            Some(kind) => kind.to_string(),
            None => l.req("kind")?.to_ascii_lowercase(),
        };
        if STORE_KINDS.contains(&kind.as_str()) {
            self.decided(&l, kind == "accepted")?;
            return Ok(true);
        }
        let actor = WorkerId::new(l.req("actor")?)
            .map_err(|e| loc.field("actor", format!("not a worker name: {e}")))?;
        let b = &mut self.builder;
        match kind.as_str() {
            "acquire" => {
                b.invoke(
                    loc,
                    &actor,
                    Call::Acquire(AcquireCall {
                        resource: l.resource()?,
                        ..AcquireCall::default()
                    }),
                )?;
                let open = b.complete(loc, "kind", &actor, &Op::Acquire, None)?;
                let granted = Granted {
                    resource: l.resource()?,
                    generation: Some(l.gen("generation")?.ok_or_else(|| {
                        l.loc.field(
                            "generation",
                            "an acquire line needs the generation it was granted",
                        )
                    })?),
                    ttl: l.u64("ttl")?,
                    ..Granted::default()
                };
                b.granted(loc, open, granted)?;
            }
            "acquire_failed" => {
                b.invoke(loc, &actor, Call::Acquire(AcquireCall::default()))?;
                let open = b.complete(loc, "kind", &actor, &Op::Acquire, None)?;
                b.busy(loc, open, l.resource()?, None, None)?;
            }
            "renew" | "renew_failed" => {
                b.invoke(loc, &actor, Call::Plain(Op::Renew))?;
                let open = b.complete(loc, "kind", &actor, &Op::Renew, None)?;
                if kind == "renew" {
                    b.renewed(loc, open, l.resource()?, l.gen("generation")?, l.u64("ttl")?, None)?;
                } else {
                    b.renew_failed(loc, open, l.resource()?, l.get("error").map(str::to_string))?;
                }
            }
            "release" => {
                b.invoke(loc, &actor, Call::Plain(Op::Release))?;
                let open = b.complete(loc, "kind", &actor, &Op::Release, None)?;
                b.released(loc, open, l.resource()?, l.gen("generation")?, None)?;
            }
            "write" => {
                let resource = ResourceId::new(l.req("resource")?)
                    .map_err(|e| loc.field("resource", e.to_string()))?;
                let generation = l.gen("generation")?.ok_or_else(|| {
                    loc.field("generation", "a write line needs the generation it carries")
                })?;
                let op = l.get("op").map_or_else(|| format!("line-{}", loc.line), str::to_string);
                let operation = OperationId::new(op).map_err(|e| loc.field("op", e.to_string()))?;
                let value = l.req("value")?.to_string();
                let request = WriteRequest {
                    resource,
                    generation,
                    operation,
                    expected_revision: None,
                    value,
                };
                let call = WriteCall::new(request, l.get("store").unwrap_or("store").to_string());
                b.invoke(loc, &actor, Call::Write(call))?;
            }
            "write_ok" | "write_rejected" | "write_unknown" | "write_done" => {
                let outcome = match kind.as_str() {
                    "write_ok" => "applied",
                    "write_rejected" => "rejected",
                    "write_unknown" => "unknown",
                    _ => l.req("outcome")?,
                };
                let result = match outcome.to_ascii_lowercase().as_str() {
                    "applied" | "ok" => WriteResult::Applied,
                    "rejected" | "fail" => WriteResult::Rejected {
                        error: l.get("error").map(str::to_string),
                        highest: l.gen("highest")?,
                    },
                    "unknown" | "info" => WriteResult::Unknown,
                    other => {
                        return Err(loc.field(
                            "outcome",
                            format!("{other:?} is not an outcome (applied, rejected or unknown)"),
                        ))
                    }
                };
                let open = match l.get("op") {
                    Some(op) => b.complete_operation(&actor, op).ok_or_else(|| {
                        loc.field(
                            "op",
                            format!("a completion of {actor}'s write {op} without its invocation"),
                        )
                    })?,
                    None => b.complete(loc, "kind", &actor, &Op::Write, None)?,
                };
                b.write_done(loc, open, WriteDone::of(result))?;
            }
            "pause" => b.pause(&actor, PauseFields::default()),
            "resume" => b.resume(&actor, PauseFields::default()),
            "restart_authority" => b.push(Event::AuthorityRestarted { counter_kept: true }),
            "restart_store" => b.push(Event::StoreRestarted {
                store: l.req("store")?.to_string(),
                highest_kept: true,
            }),
            other => {
                return Err(loc.field(
                    "kind",
                    format!("{other:?} is not a kind this reader knows ({})", KINDS.join(", ")),
                ));
            }
        }
        Ok(true)
    }
}

impl Reader {
    /// A store's own record of a write it applied (`accepted`) or refused: the write and its
    /// answer at once, with what the line does not name filled in.
    fn decided(&mut self, l: &Line, accepted: bool) -> Result<(), ImportError> {
        let loc = l.loc;
        let generation = l.gen("generation")?.ok_or_else(|| {
            loc.field("generation", "a store's decision needs the generation it was presented")
        })?;
        let actor = match l.get("actor") {
            Some(name) => name.to_string(),
            None => format!("gen-{generation}"),
        };
        let actor = WorkerId::new(actor)
            .map_err(|e| loc.field("actor", format!("not a worker name: {e}")))?;
        let store = l.get("store").unwrap_or("store").to_string();
        let resource = match l.resource()? {
            Some(r) => r,
            None => {
                ResourceId::new(store.as_str()).map_err(|e| loc.field("store", e.to_string()))?
            }
        };
        let line = format!("line-{}", loc.line);
        let op = l.get("op").unwrap_or(&line).to_string();
        let operation = OperationId::new(op).map_err(|e| loc.field("op", e.to_string()))?;
        let value = l.get("value").unwrap_or(&line).to_string();
        let request =
            WriteRequest { resource, generation, operation, expected_revision: None, value };
        let call = WriteCall::new(request, store);
        let b = &mut self.builder;
        let message = b.invoke(loc, &actor, Call::Write(call))?;
        let open = b.complete(loc, "kind", &actor, &Op::Write, message)?;
        let result = if accepted {
            WriteResult::Applied
        } else {
            WriteResult::Rejected {
                error: l.get("error").map(str::to_string),
                highest: l.gen("highest")?,
            }
        };
        b.write_done(loc, open, WriteDone::of(result))
    }
}

/// A time stamp as Unix nanoseconds: RFC 3339 with its offset (`2024-05-01T12:00:00.250Z`), or a
/// date and time without one, as log4j and logback write them (`2024-12-31 07:50:16,609`), taken
/// as UTC. `None` when it is neither, or before 1970.
pub(crate) fn time_stamp(text: &str) -> Option<u64> {
    let at = match text.parse::<jiff::Timestamp>() {
        Ok(at) => at,
        Err(_) => {
            text.parse::<jiff::civil::DateTime>().ok()?.to_zoned(TimeZone::UTC).ok()?.timestamp()
        }
    };
    u64::try_from(at.as_nanosecond()).ok()
}

/// A time stamp written in `format` (`strftime`'s spelling) as Unix nanoseconds; one without
/// an offset is taken as UTC.
pub(crate) fn formatted_time(format: &str, text: &str) -> Result<u64, String> {
    let parsed = jiff::fmt::strtime::parse(format, text).map_err(|e| e.to_string())?;
    let at = match parsed.to_timestamp() {
        Ok(at) => at,
        Err(_) => parsed
            .to_datetime()
            .and_then(|civil| civil.to_zoned(TimeZone::UTC))
            .map_err(|e| e.to_string())?
            .timestamp(),
    };
    u64::try_from(at.as_nanosecond()).map_err(|_| "it is before 1970".to_string())
}

#[cfg(test)]
mod tests {
    use super::{formatted_time, time_stamp};

    #[test]
    fn reads_time_stamps_in_a_log_s_own_format() {
        let apache = "%d/%b/%Y:%H:%M:%S %z";
        assert_eq!(
            formatted_time(apache, "01/May/2024:14:00:00 +0200"),
            Ok(1_714_564_800_000_000_000)
        );
        assert_eq!(
            formatted_time("%Y%m%d %H%M%S", "20240501 120000"),
            Ok(1_714_564_800_000_000_000)
        );
        assert!(formatted_time(apache, "2024-05-01").is_err());
    }

    #[test]
    fn reads_time_stamps() {
        assert_eq!(time_stamp("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(time_stamp("1970-01-01T00:00:01.5Z"), Some(1_500_000_000));
        assert_eq!(time_stamp("2024-05-01T12:00:00.250Z"), Some(1_714_564_800_250_000_000));
        assert_eq!(time_stamp("2024-05-01 14:00:00.250+02:00"), Some(1_714_564_800_250_000_000));
        assert_eq!(time_stamp("2024-13-01T12:00:00Z"), None);
        assert_eq!(time_stamp("1969-12-31T23:59:59Z"), None);
        // Without an offset, as log4j and logback write them: taken as UTC.
        assert_eq!(time_stamp("2024-05-01T12:00:00"), Some(1_714_564_800_000_000_000));
        assert_eq!(time_stamp("2024-12-31 07:50:16,609"), Some(1_735_631_416_609_000_000));
        assert_eq!(time_stamp("soon"), None);
    }
}
