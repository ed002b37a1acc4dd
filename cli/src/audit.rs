//! `fencelab audit`: judges histories (JSON Lines) with the core's checker as it reads them, line
//! by line, so a history of any length is judged in one pass.

use crate::{say, BadInput};
use fencelab_core::{Checker, JsonlParser, Violation};
use std::io::{BufRead, BufReader, Read};
use std::process::ExitCode;

/// The longest line read; a longer one is bad input rather than a reason to run out of memory.
const MAX_LINE: u64 = 16 * 1024 * 1024;

/// A finding, with the line of the entry that showed it.
struct Finding {
    line: usize,
    violation: Violation,
}

/// What one file showed.
struct Audited {
    file: String,
    events: usize,
    findings: Vec<Finding>,
}

/// Audits every file (`-` is standard input): exit 0 when none shows a finding, 1 when one does.
/// A file in another tool's format (see [`crate::import`]) is read whole, and its history judged
/// as JSON Lines; its findings' lines are the lines of that history, as `export --to jsonl`
/// writes it.
pub fn audit(
    files: &[String],
    json: bool,
    format: crate::import::Format,
    pattern: Option<&str>,
) -> Result<ExitCode, BadInput> {
    let mut audited = Vec::new();
    for file in files {
        let input: Box<dyn Read> = if file == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            let opened = std::fs::File::open(file)
                .map_err(|e| BadInput(format!("cannot read {file}: {e}")))?;
            Box::new(opened)
        };
        let mut input = BufReader::new(input);
        match crate::import::imported(file, &mut input, format, pattern)? {
            Some(jsonl) => audited.push(audit_one(file, jsonl.as_bytes())?),
            None => audited.push(audit_one(file, input)?),
        }
    }
    let found = audited.iter().any(|a| !a.findings.is_empty());
    if json {
        let files: Vec<_> = audited
            .iter()
            .map(|a| {
                let findings: Vec<_> = a
                    .findings
                    .iter()
                    .map(|f| {
                        serde_json::json!({
                            "line": f.line,
                            "step": f.violation.step,
                            "invariant": f.violation.invariant,
                            "detail": f.violation.detail,
                            "place": f.violation.place,
                        })
                    })
                    .collect();
                serde_json::json!({ "file": a.file, "events": a.events, "findings": findings })
            })
            .collect();
        let report = serde_json::json!({ "clean": !found, "files": files });
        say!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    } else {
        for a in &audited {
            let n = a.findings.len();
            let findings = if n == 1 { "1 finding".to_string() } else { format!("{n} findings") };
            say!("{}: {} events, {findings}", a.file, a.events);
            for f in &a.findings {
                let v = &f.violation;
                say!("  line {} (step {}): {}: {}", f.line, v.step + 1, v.invariant, v.detail);
            }
        }
    }
    Ok(if found { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Reads and judges one history.
fn audit_one(file: &str, mut input: impl BufRead) -> Result<Audited, BadInput> {
    let mut parser = JsonlParser::new();
    let mut checker: Option<Checker> = None;
    let (mut events, mut findings, mut last_line) = (0, Vec::new(), 0);
    let mut buffer = String::new();
    loop {
        buffer.clear();
        let line = parser.lines() + 1;
        let read = (&mut input)
            .take(MAX_LINE + 1)
            .read_line(&mut buffer)
            .map_err(|e| BadInput(format!("{file}: line {line}: {e}")))?;
        if read == 0 {
            break;
        }
        if buffer.len() as u64 > MAX_LINE {
            return Err(BadInput(format!("{file}: line {line} is longer than {MAX_LINE} bytes")));
        }
        let text = buffer.trim_end_matches(['\n', '\r']);
        let entry = parser.line(text).map_err(|e| BadInput(format!("{file}: {e}")))?;
        let Some(entry) = entry else { continue };
        let checker = checker
            .get_or_insert_with(|| Checker::new(parser.setup().cloned().unwrap_or_default()));
        let judged = checker.feed(events, &entry);
        findings.extend(judged.violations.into_iter().map(|violation| Finding { line, violation }));
        events += 1;
        last_line = line;
    }
    if parser.setup().is_none() {
        return Err(BadInput(format!(
            "{file}: the file is empty; a history starts with its header line"
        )));
    }
    if let (Some(checker), Some(last)) = (checker.as_mut(), events.checked_sub(1)) {
        let end = checker.finish(last);
        findings.extend(end.into_iter().map(|violation| Finding { line: last_line, violation }));
    }
    Ok(Audited { file: file.to_string(), events, findings })
}
