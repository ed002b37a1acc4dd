//! `fencelab audit`: judges histories (JSON Lines) with the core's checker as it reads them, line
//! by line, so a history of any length is judged in one pass and in memory that grows with the
//! leases and messages open at once, not with the history.

use crate::{say, BadInput};
use fencelab_core::{
    history::Authority, history::Entry, history::JsonlParser, Checker, Event, Tick, Violation,
};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::Path;
use std::process::ExitCode;

/// The longest line read; a longer one is bad input rather than a reason to run out of memory.
const MAX_LINE: u64 = 16 * 1024 * 1024;

/// Files smaller than this get no progress bar: they are read before one would show.
const PROGRESS_FROM: u64 = 64 * 1024 * 1024;

/// The exit code when the only findings depend on outcomes nobody learned, or a recording
/// stopped early.
const INCONCLUSIVE: u8 = 3;

/// A finding, with the line of the entry that showed it and the lines of its witness.
struct Finding {
    line: usize,
    /// The logical time of the entry that showed it.
    at: u64,
    witness_lines: Vec<usize>,
    violation: Violation,
}

/// What one file showed.
struct Audited {
    file: String,
    events: usize,
    /// What the checks had to judge.
    judged: Judged,
    findings: Vec<Finding>,
    /// Why the recording stopped early, when its setup says it did.
    incomplete: Option<String>,
}

/// What the checks had to judge in a history: the lease checks judge grants, the write checks
/// writes a store decided, the effect checks effects the gateway decided. A history without one
/// of them was not judged on it, which a clean report must not hide.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
struct Judged {
    grants: usize,
    /// Grants that gave no lease length: such a lease may have ended at any moment before its
    /// release, so only what needs no length is judged certain about it.
    unknown_length: usize,
    writes: usize,
    effects: usize,
    /// Whether the history holds every grant: then a history without grants is judged on them
    /// too (every write was made under no lease).
    authority: Authority,
}

impl Judged {
    fn count(&mut self, event: &Event) {
        match event {
            Event::LeaseGranted { valid_until, .. } => {
                self.grants += 1;
                self.unknown_length += usize::from(*valid_until == Tick::UNKNOWN);
            }
            Event::WriteArrived { .. } | Event::WriteCommitted { .. } => self.writes += 1,
            Event::EffectArrived { .. } => self.effects += 1,
            _ => {}
        }
    }

    /// One line for the report: what was judged, and which checks had nothing to judge.
    fn line(&self) -> String {
        let n = |count: usize, one: &str, many: &str| match count {
            1 => format!("1 {one}"),
            _ => format!("{count} {many}"),
        };
        let mut idle = Vec::new();
        let unobserved = !self.authority.is_recorded();
        if self.grants == 0 && unobserved {
            idle.push("lease");
        }
        if self.writes == 0 {
            idle.push("write");
        }
        if self.effects == 0 {
            idle.push("effect");
        }
        let idle = match idle.as_slice() {
            [] => String::new(),
            [one] => format!("; the {one} checks had nothing to judge"),
            [a, b] => format!("; the {a} and {b} checks had nothing to judge"),
            _ => "; no check had anything to judge".to_string(),
        };
        let idle = if self.grants == 0 && unobserved {
            format!("{idle} (the history does not show the authority's grants)")
        } else {
            idle
        };
        let unknown = match self.unknown_length {
            0 => String::new(),
            count => format!(
                " ({count} of unknown length: a write under such a lease is outside it only after its release, and a grant beside one only possibly overlaps it; `--ttl MS` gives the length)"
            ),
        };
        format!(
            "judged: {}{unknown}, {}, {}{idle}",
            n(self.grants, "lease grant", "lease grants"),
            n(self.writes, "write decided", "writes decided"),
            n(self.effects, "effect decided", "effects decided"),
        )
    }
}

/// Where entries sit in a file: entry `step` is on line `step + 2` (after the header) unless
/// blank lines came before it, so only the steps after which the gap grew are kept.
#[derive(Default)]
struct LineMap {
    /// (first step, line of that step) at each point where the gap changed.
    jumps: Vec<(usize, usize)>,
}

impl LineMap {
    fn record(&mut self, step: usize, line: usize) {
        if self.line(step) != line {
            self.jumps.push((step, line));
        }
    }

    fn line(&self, step: usize) -> usize {
        let at = self.jumps.partition_point(|(s, _)| *s <= step);
        match at.checked_sub(1).map(|i| self.jumps[i]) {
            Some((first, line)) => line + (step - first),
            None => step + 2,
        }
    }
}

/// Audits every file (`-` is standard input): exit 0 when none shows a finding, 1 when one shows
/// a certain finding, 3 when the only findings depend on outcomes nobody learned or a recording
/// stopped early (what it left out may hold a finding). With
/// `witnesses`, each finding's witness is written there as a history of its own. A file in
/// another tool's format (see [`crate::import`]) is read whole, and its history judged as JSON
/// Lines; its findings' lines are the lines of that history, as `export --to jsonl` writes it.
pub fn audit(
    files: &[String],
    json: bool,
    witnesses: Option<&Path>,
    format: crate::import::Format,
    reading: &crate::import::Reading,
) -> Result<ExitCode, BadInput> {
    use crate::import::Format;
    if reading.pattern.is_some() && !matches!(format, Format::Auto | Format::Pattern) {
        let name = clap::ValueEnum::to_possible_value(&format)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        return Err(BadInput(format!(
            "--pattern reads text logs, but --format {name} reads no pattern, so it would be ignored; leave out one of them (--format pattern, or no --format, reads the files through the pattern)"
        )));
    }
    let mut audited = Vec::new();
    let mut failed = Vec::new();
    let mut stems = Stems::default();
    for file in files {
        // One unreadable or malformed file is reported, and the others are still judged.
        match audit_file(file, format, reading) {
            Ok((result, converted)) => {
                if let Some(dir) = witnesses {
                    let stem = stems.unique(file);
                    if let Err(e) = write_witnesses(file, &stem, converted.as_deref(), &result, dir)
                    {
                        eprintln!("error: {}", e.0);
                        failed.push((file.clone(), e.0));
                    }
                }
                audited.push(result);
            }
            Err(e) => {
                eprintln!("error: {}", e.0);
                failed.push((file.clone(), e.0));
            }
        }
    }
    let all = || audited.iter().flat_map(|a| &a.findings);
    let certain = all().any(|f| !f.violation.possible);
    let possible = all().any(|f| f.violation.possible);
    let incomplete = audited.iter().any(|a| a.incomplete.is_some());
    if json {
        say!("{}", serde_json::to_string_pretty(&report(&audited, &failed)).unwrap_or_default());
    } else {
        for a in &audited {
            let n = a.findings.len();
            let findings = if n == 1 { "1 finding".to_string() } else { format!("{n} findings") };
            say!("{}: {} events, {findings}", a.file, a.events);
            say!("  {}", a.judged.line());
            if let Some(why) = &a.incomplete {
                say!("  incomplete: the recording stopped before the run ended ({why}); only what it holds was judged");
            }
            for f in &a.findings {
                let v = &f.violation;
                let maybe = if v.possible {
                    " (possible: it depends on an order or an outcome the history does not show)"
                } else {
                    ""
                };
                say!(
                    "  line {} (step {}, t={}): {}{maybe}: {}",
                    f.line,
                    v.step,
                    f.at,
                    v.invariant,
                    v.detail
                );
                let lines: Vec<String> = f.witness_lines.iter().map(usize::to_string).collect();
                say!("    witness: lines {}", lines.join(", "));
            }
        }
    }
    Ok(if !failed.is_empty() {
        ExitCode::from(2)
    } else if certain {
        ExitCode::FAILURE
    } else if possible || incomplete {
        ExitCode::from(INCONCLUSIVE)
    } else {
        ExitCode::SUCCESS
    })
}

/// Reads and judges one file, in whatever format it is: the result, and the history as JSON
/// Lines when it was converted from another tool's format.
fn audit_file(
    file: &str,
    format: crate::import::Format,
    reading: &crate::import::Reading,
) -> Result<(Audited, Option<String>), BadInput> {
    let (input, size): (Box<dyn Read>, u64) = if file == "-" {
        (Box::new(std::io::stdin().lock()), 0)
    } else {
        let opened =
            std::fs::File::open(file).map_err(|e| BadInput(format!("cannot read {file}: {e}")))?;
        let size = opened.metadata().map(|m| m.len()).unwrap_or(0);
        (Box::new(opened), size)
    };
    let mut input = BufReader::new(Progress::new(input, size));
    match crate::import::imported(file, &mut input, format, reading)? {
        Some(converted) => {
            let mut result = audit_one(file, converted.jsonl.as_bytes())?;
            // Findings point at the file's own lines, not the converted history's.
            let source = |step: usize| converted.lines.get(step).copied().unwrap_or(0);
            for f in &mut result.findings {
                f.line = source(f.violation.step.index());
                f.witness_lines = f.violation.witness.iter().map(|s| source(*s)).collect();
                f.witness_lines.sort_unstable();
                f.witness_lines.dedup();
            }
            // A grant sits on its completion's line, so the order of steps is not the order of
            // lines: the report follows the file.
            result.findings.sort_by_key(|f| f.line);
            Ok((result, Some(converted.jsonl)))
        }
        None => Ok((audit_one(file, input)?, None)),
    }
}

/// Names for the witnesses of each file, unique even when two files share a name.
#[derive(Default)]
struct Stems(std::collections::HashMap<String, usize>);

impl Stems {
    fn unique(&mut self, file: &str) -> String {
        let stem = Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("stdin");
        let stem = if file == "-" { "stdin" } else { stem };
        let seen = self.0.entry(stem.to_string()).or_default();
        *seen += 1;
        if *seen == 1 {
            stem.to_string()
        } else {
            format!("{stem}-{seen}")
        }
    }
}

fn report(audited: &[Audited], failed: &[(String, String)]) -> serde_json::Value {
    let files: Vec<_> = audited
        .iter()
        .map(|a| {
            let findings: Vec<_> = a
                .findings
                .iter()
                .map(|f| {
                    let v = &f.violation;
                    serde_json::json!({
                        "line": f.line,
                        "step": v.step,
                        "at": f.at,
                        "invariant": v.invariant,
                        "detail": v.detail,
                        "place": v.place,
                        "possible": v.possible,
                        "witness_steps": v.witness,
                        "witness_lines": f.witness_lines,
                    })
                })
                .collect();
            serde_json::json!({
                "file": a.file,
                "events": a.events,
                "judged": a.judged,
                "incomplete": a.incomplete,
                "findings": findings,
            })
        })
        .collect();
    let findings = || audited.iter().flat_map(|a| &a.findings);
    serde_json::json!({
        // A recording that stopped early is never clean: what it left out may hold a finding.
        // Nor is a run in which a file could not be read, which judged nothing there.
        "clean": failed.is_empty()
            && findings().next().is_none()
            && audited.iter().all(|a| a.incomplete.is_none()),
        "certain": findings().filter(|f| !f.violation.possible).count(),
        "possible": findings().filter(|f| f.violation.possible).count(),
        "files": files,
        "unreadable": failed.iter().map(|(file, error)| serde_json::json!({ "file": file, "error": error })).collect::<Vec<_>>(),
    })
}

/// Reads and judges one history.
fn audit_one(file: &str, mut input: impl BufRead) -> Result<Audited, BadInput> {
    let mut parser = JsonlParser::new();
    let mut checker: Option<Checker> = None;
    let (mut events, mut found, mut last_line, mut last_at) = (0, Vec::new(), 0, 0);
    let mut judged = Judged::default();
    let mut lines = LineMap::default();
    let mut buffer = String::new();
    while let Some((line, entry)) = next_entry(file, &mut input, &mut parser, &mut buffer)? {
        let checker = checker
            .get_or_insert_with(|| Checker::new(parser.setup().cloned().unwrap_or_default()));
        lines.record(events, line);
        judged.count(&entry.event);
        let at = entry.at.0;
        found.extend(checker.feed(events, &entry).violations.into_iter().map(|v| (line, at, v)));
        last_at = at;
        events += 1;
        last_line = line;
    }
    if parser.setup().is_none() {
        return Err(BadInput(format!(
            "{file}: the file is empty: there is no history in it to judge"
        )));
    }
    // Judged the same as an imported file in which nothing reads as an event.
    if events == 0 {
        return Err(BadInput(format!(
            "{file}: the history has its header and no events, so there is nothing to judge"
        )));
    }
    if let (Some(checker), Some(last)) = (checker.as_mut(), events.checked_sub(1)) {
        found.extend(checker.finish(last).into_iter().map(|v| (last_line, last_at, v)));
    }
    let findings = found
        .into_iter()
        .map(|(line, at, violation)| {
            let witness_lines = violation.witness.iter().map(|s| lines.line(*s)).collect();
            Finding { line, at, witness_lines, violation }
        })
        .collect();
    let incomplete = parser.setup().and_then(|s| s.incomplete.clone());
    judged.authority = parser.setup().map(|s| s.authority).unwrap_or_default();
    Ok(Audited { file: file.to_string(), events, judged, findings, incomplete })
}

/// The next entry of a history and its line, or `None` at the end of the input.
fn next_entry(
    file: &str,
    input: &mut impl BufRead,
    parser: &mut JsonlParser,
    buffer: &mut String,
) -> Result<Option<(usize, Entry)>, BadInput> {
    loop {
        buffer.clear();
        let line = parser.lines() + 1;
        let read = input
            .take(MAX_LINE + 1)
            .read_line(buffer)
            .map_err(|e| BadInput(format!("{file}: line {line}: {e}")))?;
        if read == 0 {
            return Ok(None);
        }
        if buffer.len() as u64 > MAX_LINE {
            return Err(BadInput(format!("{file}: line {line} is longer than {MAX_LINE} bytes")));
        }
        let text = buffer.trim_end_matches(['\n', '\r']);
        if let Some(entry) = parser.line(text).map_err(|e| BadInput(format!("{file}: {e}")))? {
            return Ok(Some((line, entry)));
        }
    }
}

/// Writes each finding's witness as a history file in `dir`, picking its entries out of the
/// history in a second reading: of the file, or of `converted`, the history read from another
/// tool's file (standard input cannot be read twice).
fn write_witnesses(
    file: &str,
    stem: &str,
    converted: Option<&str>,
    audited: &Audited,
    dir: &Path,
) -> Result<(), BadInput> {
    if audited.findings.is_empty() {
        return Ok(());
    }
    let wanted: BTreeSet<usize> =
        audited.findings.iter().flat_map(|f| f.violation.witness.iter().copied()).collect();
    let mut input: Box<dyn BufRead> = match converted {
        Some(text) => Box::new(text.as_bytes()),
        None if file == "-" => {
            return Err(BadInput(
                "--witnesses needs history files: standard input cannot be read a second time"
                    .into(),
            ))
        }
        None => Box::new(BufReader::new(
            std::fs::File::open(file).map_err(|e| BadInput(format!("cannot read {file}: {e}")))?,
        )),
    };
    let (mut parser, mut buffer, mut step) = (JsonlParser::new(), String::new(), 0);
    let mut entries = BTreeMap::new();
    while let Some((_, entry)) = next_entry(file, &mut input, &mut parser, &mut buffer)? {
        if wanted.contains(&step) {
            entries.insert(step, entry);
        }
        step += 1;
    }
    let setup = parser.into_setup().unwrap_or_default();
    std::fs::create_dir_all(dir)
        .map_err(|e| BadInput(format!("cannot create {}: {e}", dir.display())))?;
    for (n, finding) in audited.findings.iter().enumerate() {
        let v = &finding.violation;
        let history = fencelab_core::History {
            setup: setup.clone(),
            entries: v.witness.iter().filter_map(|s| entries.get(s).cloned()).collect(),
        };
        let path = dir.join(format!("{stem}-finding-{}-{}.jsonl", n + 1, v.invariant));
        std::fs::write(&path, history.to_jsonl())
            .map_err(|e| BadInput(format!("cannot write {}: {e}", path.display())))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// A reader that shows how far it has read on a progress bar, when the file is large and
/// standard error is a terminal.
struct Progress<R> {
    inner: R,
    bar: Option<ProgressBar>,
}

impl<R: Read> Progress<R> {
    fn new(inner: R, size: u64) -> Progress<R> {
        let show = size >= PROGRESS_FROM && std::io::stderr().is_terminal();
        let bar = show.then(|| {
            let bar = ProgressBar::new(size);
            let style = ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)",
            );
            if let Ok(style) = style {
                bar.set_style(style);
            }
            bar
        });
        Progress { inner, bar }
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(bar) = &self.bar {
            bar.inc(n as u64);
            if n == 0 {
                bar.finish_and_clear();
            }
        }
        Ok(n)
    }
}
