//! Histories from other tools for `audit` and `export`: which format a file is in, and its
//! history read through `fencelab-interop`.

use crate::BadInput;
use clap::ValueEnum;
use fencelab_core::History;
use fencelab_interop::{jepsen, mapping::Mapping, otlp, pattern};
use std::io::{BufRead, Read};

/// The format of a history file.
#[derive(Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// Tell by the first bytes: with --pattern, a log; else `{"fencelab_history"` is JSON
    /// Lines, `{"resourceSpans"` OTLP, `[{:`, `{:`, `[{"` or a JSON op with "type" and
    /// "process" Jepsen.
    #[default]
    Auto,
    /// Fencelab's history (JSON Lines), judged line by line as it is read.
    Jsonl,
    /// A Jepsen history, EDN or JSON.
    Jepsen,
    /// OpenTelemetry spans, as the collector's file exporter writes them (OTLP JSON lines).
    Otlp,
    /// A text log, read through --pattern.
    Pattern,
}

/// How to read another tool's history: a text log's pattern, and a history's own words.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Reading {
    /// For text logs: a regular expression with named groups (`actor`, `kind`, `time`,
    /// `resource`, `generation`, ...), or @FILE to read it from a file.
    #[arg(long, value_name = "RE")]
    pub pattern: Option<String>,
    /// For Jepsen histories: the history's own name for an operation or a field, and what it
    /// means, such as lock=acquire, unlock=release, lock-name=resource or token=generation
    /// (repeat it, or separate renames with commas); value=FIELD reads an op's :value that is
    /// not a map as that field.
    #[arg(long = "map", value_name = "NAME=MEANING")]
    pub map: Vec<String>,
    /// For Jepsen histories: generations are opaque tokens (a UUID, a lock key), compared for
    /// equality and reuse, not order.
    #[arg(long)]
    pub opaque_tokens: bool,
    /// For Jepsen histories: the resource of an op that names none (a test of one lock).
    #[arg(long, value_name = "NAME")]
    pub resource: Option<String>,
    /// For Jepsen histories and logs: how long a lease lasts, in ms, when its grant or renewal
    /// does not say (the service's configured lease length). Without it, such a lease is of
    /// unknown length and judged only on what needs no length.
    #[arg(long, value_name = "MS")]
    pub ttl: Option<u64>,
    /// For logs: how the `time` group writes a time stamp, as strftime spells it (such as
    /// "%d/%b/%Y:%H:%M:%S %z"), when it is neither RFC 3339 nor log4j's; without an offset, UTC.
    #[arg(long, value_name = "FMT")]
    pub time_format: Option<String>,
}

impl Reading {
    /// The mapping the options describe.
    fn mapping(&self) -> Result<Mapping, BadInput> {
        let mut mapping = Mapping::default();
        for renames in &self.map {
            for rename in renames.split(',').map(str::trim).filter(|r| !r.is_empty()) {
                mapping.add(rename).map_err(|e| BadInput(format!("--map: {e}")))?;
            }
        }
        mapping.opaque_tokens = self.opaque_tokens;
        mapping.resource = self.resource.clone();
        mapping.ttl = self.ttl;
        mapping.time_format = self.time_format.clone();
        Ok(mapping)
    }
}

/// What the first bytes of a file say its format is.
fn sniff(start: &[u8], pattern: bool) -> Format {
    let text = String::from_utf8_lossy(start);
    let squeezed: String =
        text.chars().filter(|c| !c.is_whitespace() && *c != ',').take(64).collect();
    let first = text.lines().next().unwrap_or("");
    let jepsen_json =
        squeezed.starts_with('{') && first.contains("\"type\"") && first.contains("\"process\"");
    // An empty vector or list is a Jepsen history with no operations.
    let jepsen = ["[{:", "{:", ";", "[{\"", "[#"].iter().any(|p| squeezed.starts_with(p))
        || squeezed == "[]"
        || squeezed == "()";
    if pattern {
        Format::Pattern
    } else if squeezed.starts_with("{\"fencelab_history\"") {
        Format::Jsonl
    } else if squeezed.starts_with("{\"resourceSpans\"") {
        Format::Otlp
    } else if jepsen || jepsen_json {
        Format::Jepsen
    } else {
        Format::Jsonl
    }
}

/// Another tool's history as JSON Lines, and the source line of each of its entries.
pub struct Converted {
    /// The history, as `export --to jsonl` writes it.
    pub jsonl: String,
    /// Entry `i` was read from line `lines[i]` of the file.
    pub lines: Vec<usize>,
}

/// Reads `input` when it is in another tool's format, as a history in JSON Lines that the
/// streaming reader then judges; `None` for Fencelab's own JSON Lines, which is read as it
/// streams. `pattern` is the expression itself, or `@FILE` to read it from a file.
pub fn imported(
    file: &str,
    input: &mut impl BufRead,
    format: Format,
    reading: &Reading,
) -> Result<Option<Converted>, BadInput> {
    let format = match format {
        Format::Auto => {
            let start =
                input.fill_buf().map_err(|e| BadInput(format!("cannot read {file}: {e}")))?;
            sniff(start, reading.pattern.is_some())
        }
        other => other,
    };
    if format == Format::Jsonl {
        let given = reading.mapping()?;
        // An empty file is told as such by the reader, whatever options came with it.
        let empty = input.fill_buf().is_ok_and(|start| start.iter().all(u8::is_ascii_whitespace));
        if !empty && (!given.is_empty() || given.ttl.is_some() || given.time_format.is_some()) {
            return Err(BadInput(format!(
                "{file} is Fencelab's own history, which needs no --map, --opaque-tokens, --resource, --ttl or --time-format"
            )));
        }
        return Ok(None);
    }
    let mut bytes = Vec::new();
    input
        .take(fencelab_interop::MAX_INPUT as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| BadInput(format!("cannot read {file}: {e}")))?;
    let (history, lines) = read(file, &bytes, format, reading)?;
    Ok(Some(Converted { jsonl: history.to_jsonl(), lines }))
}

/// What a reader passed over, and the format's word for it.
fn skipped_note(format: Format, skipped: usize) -> String {
    let (one, many) = match format {
        Format::Pattern => ("line the pattern does not match", "lines the pattern does not match"),
        Format::Otlp => (
            "span that is not about leases or fencing",
            "spans that are not about leases or fencing",
        ),
        _ => ("operation Fencelab does not model", "operations Fencelab does not model"),
    };
    format!("{skipped} {}", if skipped == 1 { one } else { many })
}

/// Reads a file's bytes in `format` (not `Auto`).
pub fn history(
    file: &str,
    bytes: &[u8],
    format: Format,
    reading: &Reading,
) -> Result<History, BadInput> {
    read(file, bytes, format, reading).map(|(history, _)| history)
}

/// Reads a file's bytes in `format` (not `Auto`): the history and each entry's source line.
fn read(
    file: &str,
    bytes: &[u8],
    format: Format,
    reading: &Reading,
) -> Result<(History, Vec<usize>), BadInput> {
    let bad = |e: fencelab_interop::ImportError| BadInput(e.in_file(file).to_string());
    let mapping = reading.mapping()?;
    // A log's pattern names its fields itself, and a trace's spans are named by OpenTelemetry's
    // conventions: only a Jepsen history is renamed.
    if !mapping.is_empty() && format != Format::Jepsen {
        return Err(BadInput(format!(
            "{file}: --map, --opaque-tokens and --resource read Jepsen histories; a log's pattern names its fields with its groups"
        )));
    }
    if mapping.time_format.is_some() && format != Format::Pattern {
        return Err(BadInput(format!(
            "{file}: --time-format reads the time stamps of text logs (with --pattern); this history's times are its format's own"
        )));
    }
    if mapping.ttl.is_some() && format == Format::Otlp {
        return Err(BadInput(format!(
            "{file}: --ttl reads Jepsen histories and logs; a trace gives each lease's length in `lease.ttl_ms`"
        )));
    }
    let imported = match format {
        Format::Jepsen => {
            jepsen::read_jepsen_mapped(fencelab_interop::utf8(bytes).map_err(bad)?, &mapping)
                .map_err(bad)?
        }
        Format::Otlp => otlp::read_otlp_bytes(bytes).map_err(bad)?,
        Format::Pattern => {
            let Some(pattern) = &reading.pattern else {
                return Err(BadInput("--format pattern needs --pattern RE".into()));
            };
            let pattern = match pattern.strip_prefix('@') {
                Some(path) => std::fs::read_to_string(path)
                    .map_err(|e| BadInput(format!("cannot read the pattern file {path}: {e}")))?,
                None => pattern.to_string(),
            };
            let text = fencelab_interop::utf8(bytes).map_err(bad)?;
            pattern::read_pattern_mapped(text, pattern.trim_end_matches(['\n', '\r']), &mapping)
                .map_err(bad)?
        }
        Format::Auto | Format::Jsonl => {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| BadInput(format!("{file}: the history is not UTF-8")))?;
            let history =
                History::from_jsonl(text).map_err(|e| BadInput(format!("{file}: {e}")))?;
            let lines = (2..history.entries.len() + 2).collect();
            return Ok((history, lines));
        }
    };
    if imported.history.entries.is_empty() && imported.skipped == 0 && format == Format::Jepsen {
        return Err(BadInput(format!(
            "{file}: the Jepsen history holds no operations, so there is nothing to judge"
        )));
    }
    if imported.history.entries.is_empty() {
        return Err(BadInput(format!(
            "{file}: nothing in it reads as a history event (skipped: {}); check --format{}",
            skipped_note(format, imported.skipped),
            if format == Format::Pattern { " and --pattern" } else { "" }
        )));
    }
    if imported.skipped > 0 {
        eprintln!("{file}: skipped: {}", skipped_note(format, imported.skipped));
    }
    let back = imported.stepped_back;
    if back.count > 0 {
        let most = if back.largest_ms == 0 {
            "each by under a millisecond".to_string()
        } else {
            format!("by up to {} ms", back.largest_ms)
        };
        let what = if back.count == 1 {
            "1 time stamp was".to_string()
        } else {
            format!("{} time stamps were", back.count)
        };
        eprintln!(
            "{file}: {what} earlier than the one above ({most}; the first on line {}); each was read as that entry's time, in the file's order",
            back.first_line
        );
    }
    match imported.unfinished {
        0 => {}
        1 => eprintln!("{file}: 1 call never got its answer; a write, effect or release is judged as one that timed out"),
        n => eprintln!("{file}: {n} calls never got their answers; writes, effects and releases among them are judged as ones that timed out"),
    }
    if !imported.tokens.is_empty() {
        eprintln!("{file}: {}", tokens_note(&imported.tokens));
    }
    Ok((imported.history, imported.lines))
}

/// Which generation stands for which opaque token, for reading the findings.
fn tokens_note(tokens: &[(String, String, u64)]) -> String {
    const SHOWN: usize = 12;
    let listed: Vec<String> = tokens
        .iter()
        .take(SHOWN)
        .map(|(resource, token, n)| match resource.as_str() {
            "" => format!("{n} = {token:?}"),
            r => format!("{r} {n} = {token:?}"),
        })
        .collect();
    let more = tokens.len().saturating_sub(SHOWN);
    let mut text = format!(
        "{} opaque tokens, each read as a generation (a grant's numbered by its request): {}",
        tokens.len(),
        listed.join(", ")
    );
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// The format of a file `export` was given, when it is another tool's history.
pub fn foreign(bytes: &[u8]) -> Option<Format> {
    match sniff(bytes, false) {
        Format::Jepsen => Some(Format::Jepsen),
        Format::Otlp => Some(Format::Otlp),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_each_format() {
        let cases: [(&str, bool, Format); 10] = [
            ("[]\n", false, Format::Jepsen),
            ("( )", false, Format::Jepsen),
            ("{\"fencelab_history\": 1, \"setup\": {}}", false, Format::Jsonl),
            ("{\"resourceSpans\":[]}", false, Format::Otlp),
            ("[{:type :invoke}]", false, Format::Jepsen),
            ("\n[\n {:type :invoke}]", false, Format::Jepsen),
            ("{:type :invoke, :process 0}", false, Format::Jepsen),
            ("[{\"type\": \"invoke\"}]", false, Format::Jepsen),
            ("{\"type\": \"invoke\", \"process\": 0, \"f\": \"write\"}", false, Format::Jepsen),
            ("2024-05-01 worker=a event=acquire", true, Format::Pattern),
        ];
        for (text, pattern, want) in cases {
            assert!(sniff(text.as_bytes(), pattern) == want, "{text}");
        }
    }
}
