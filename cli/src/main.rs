//! `fencelab`: list, show, run and check fencing scenarios from the terminal.
//!
//! Exit codes: 0 when a run met its scenario's expectations (or a check found no violation and
//! checked every schedule), 1 when it did not (or a check found a violation), 2 for bad input (an
//! unknown name, an unreadable or invalid file, a schedule that does not fit, a bad size), 3 when
//! a limit cut the run or the search short, so that it shows nothing either way. `lab` exits as
//! `audit` does on the history it recorded, 4 when the lab itself fails and 130 on Ctrl-C.

use clap::{Parser, Subcommand, ValueEnum};
use fencelab_core::stories::library;
use fencelab_core::{
    clock::RunStep, drive::explore::Bound, drive::explore::ExploreConfig,
    drive::explore::ExploreResult, drive::explore::Explorer, record::EngineError,
    record::StepRecord, stories::library::UnknownStory, Engine, Scenario, Verdict,
};
use fencelab_core::{memory::Bytes, memory::DEFAULT_MEMORY_BUDGET};
use std::num::NonZeroUsize;
use std::process::ExitCode;

mod audit;
mod export;
mod import;
mod lab;
mod render;

const RUN_EXIT_CODES: &str = "\
Exit codes:
  0  the run met the scenario's expectations
  1  it did not
  2  bad input: an unknown name, an unreadable or invalid file, a schedule that does not fit,
     a size that is not one
  3  the run was cut short before it ended, by the memory limit or by the limit of 5,000,000
     steps, so it shows nothing either way";

const CHECK_EXIT_CODES: &str = "\
Exit codes:
  0  no violation, and every schedule was checked
  1  a schedule breaks a safety invariant (printed with a shortest counterexample)
  2  bad input: an unknown name, an unreadable or invalid file, a size that is not one
  3  inconclusive: no violation found, but the depth, state or memory bound cut the search
     short, so it proves nothing about the schedules it did not reach";

const AUDIT_EXIT_CODES: &str = "\
Exit codes:
  0  no history shows a finding
  1  a history shows a certain one (each printed with its line, its step, what it proves and
     the lines of its witness)
  2  bad input: an unreadable file, or a line that is not a history's (named with its line)
  3  inconclusive: every finding depends on a write or effect whose outcome nobody learned,
     or a history is marked incomplete (its recording stopped early) and shows no certain one";

const NEW_ABOUT: &str = "\
Print a commented starting scenario to write your own from: two workers, a fenced store, a
pause fault, checkpoints and expectations, with comments on what each part does and which
fields are required.

The file is JSON with `//` comments (JSONC), which `run`, `check` and the page read as they
are:

  fencelab new > my-story.json
  fencelab run my-story.json

Every field, whether it is required, its default and an example: docs/scenario-reference.md.
The JSON Schema for editors: docs/scenario.schema.json. `fencelab show NAME` prints a built-in
story as another starting point.";

/// The starting scenario `fencelab new` prints.
const NEW_SCENARIO: &str = include_str!("new.jsonc");

/// The exit code for a run or a search that a limit cut short.
const CUT_SHORT: u8 = 3;

#[derive(Parser)]
#[command(
    name = "fencelab",
    version,
    about = "Play fencing-token scenarios step by step and check their invariants."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in scenarios and their variants.
    List,
    /// Print a commented starting scenario to write your own from.
    #[command(long_about = NEW_ABOUT)]
    New,
    /// Print a scenario as JSON (a starting point for your own).
    Show {
        /// A built-in name, optionally with a variant: `paused-worker` or `paused-worker/broken`.
        name: String,
        /// The variant, instead of writing NAME/VARIANT.
        #[arg(long)]
        variant: Option<String>,
    },
    /// Judge histories (JSON Lines, as `run --format jsonl` writes them, or Jepsen, OTLP and
    /// log files) with the checker, as they are read: every stale write or effect, reissued
    /// generation and operation applied twice, with its line.
    #[command(after_help = AUDIT_EXIT_CODES)]
    Audit {
        /// History files; `-` reads standard input.
        #[arg(required = true)]
        files: Vec<String>,
        /// Print the findings as JSON.
        #[arg(long)]
        json: bool,
        /// Write each finding's witness (the few entries that prove it) to this folder as a
        /// history of its own, to draw or replay.
        #[arg(long, value_name = "DIR")]
        witnesses: Option<std::path::PathBuf>,
        /// The files' format. Other tools' histories are read whole and judged as Fencelab
        /// histories (see README, "Importing histories").
        #[arg(long, value_enum, default_value_t)]
        format: import::Format,
        #[command(flatten)]
        reading: import::Reading,
    },
    /// Write a run's history (a scenario played to its end) or a history file in another format.
    Export {
        /// A history file, a scenario file, or a built-in NAME or NAME/VARIANT.
        source: String,
        /// The variant of a built-in scenario.
        #[arg(long)]
        variant: Option<String>,
        /// What to write.
        #[arg(long, value_enum)]
        to: export::To,
        #[command(flatten)]
        reading: import::Reading,
    },
    /// The live lab: real worker processes, a real SIGSTOP longer than the lease, a real
    /// database; the run recorded as a history, its timeline printed and the history audited.
    #[command(after_help = lab::LAB_EXIT_CODES)]
    Lab(lab::LabArgs),
    /// One of the lab's worker processes; the lab starts these itself.
    #[command(hide = true)]
    LabWorker(lab::worker::WorkerArgs),
    /// Run a scenario and print its transcript and verdict.
    #[command(after_help = RUN_EXIT_CODES)]
    Run {
        /// A scenario file, or a built-in NAME or NAME/VARIANT.
        scenario: String,
        /// The variant of a built-in scenario.
        #[arg(long)]
        variant: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The most memory the run may take for its step records (with their captions), the
        /// operation log, the snapshots kept for seeking and the current state, as the engine
        /// estimates them from their contents. A run that would need more stops with exit code 3.
        /// A size such as 256MiB, 2GiB or 512MB.
        #[arg(long, value_name = "SIZE", default_value_t = Bytes(DEFAULT_MEMORY_BUDGET))]
        memory_limit: Bytes,
    },
    /// Draw a scenario at one step as the player draws it: an HTML figure (title, diagram,
    /// caption, verdict, a link to play it) or the SVG alone, for pages that show a story before
    /// the player loads, without scripts, and on paper.
    Render {
        /// A scenario file, or a built-in NAME or NAME/VARIANT.
        scenario: String,
        /// The variant of a built-in scenario.
        #[arg(long)]
        variant: Option<String>,
        /// How many steps have run in the picture. By default the story's key step: just after
        /// the first broken invariant, else the first refused write, else the end.
        #[arg(long)]
        step: Option<usize>,
        /// What to write.
        #[arg(long, value_enum, default_value_t)]
        to: render::Picture,
        /// The player's page build (a folder or its index.html, as the page with the figure
        /// sees it): the figure's "Play this story" link opens the story there, at the
        /// still's step.
        #[arg(long, value_name = "URL", conflicts_with = "link")]
        player: Option<String>,
        /// Where the figure's "Play this story" link goes, given whole (with --to html).
        #[arg(long, value_name = "URL")]
        link: Option<String>,
        /// The picture's colours; it always prints light.
        #[arg(long, value_enum, default_value_t)]
        theme: render::Colours,
    },
    /// Explore every interleaving of a scenario, breadth first, and report a shortest schedule
    /// that breaks a safety invariant, or that none does within the bounds.
    #[command(after_help = CHECK_EXIT_CODES)]
    Check {
        /// A scenario file, or a built-in NAME or NAME/VARIANT.
        scenario: String,
        /// The variant of a built-in scenario.
        #[arg(long)]
        variant: Option<String>,
        /// The longest run explored, in steps.
        #[arg(long, default_value_t = ExploreConfig::default().max_depth)]
        max_depth: usize,
        /// The most distinct states visited.
        #[arg(long, default_value_t = ExploreConfig::default().max_states)]
        max_states: usize,
        /// The most memory the search may take for the states waiting to be explored (what each
        /// holds beyond the state it came from), the set of states seen and the scenario, as
        /// estimated from their contents. A search that would need more stops, inconclusive
        /// (exit code 3). A size such as 256MiB, 2GiB or 512MB.
        #[arg(long, value_name = "SIZE", default_value_t = Bytes(DEFAULT_MEMORY_BUDGET))]
        memory_limit: Bytes,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
        format: ReportFormat,
        /// How many threads search: by default one per core. The report is the same whatever
        /// the number (the same counts, the same shortest counterexample, the same bound) but
        /// for the memory: several threads hold a whole breadth-first level at once, so their
        /// estimated peak (`peak_memory` in JSON) differs, on large searches upward, and the
        /// memory limit can stop them at another point.
        #[arg(long, value_name = "N")]
        threads: Option<NonZeroUsize>,
    },
}

/// How `check` reports.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ReportFormat {
    /// Words.
    Text,
    /// One JSON object.
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The step-by-step transcript and the verdict.
    Text,
    /// One JSON report: steps, operation log and verdict.
    Json,
    /// The run's history as JSON Lines: the events the checker judges and the diagram draws.
    Jsonl,
}

/// Prints a line to stdout, ignoring a closed pipe (`fencelab list | head` must not panic).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}
pub(crate) use say;

/// A failure that is the input's fault, reported with exit code 2.
pub(crate) struct BadInput(String);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::List => {
            list();
            Ok(ExitCode::SUCCESS)
        }
        Command::New => {
            say!("{}", NEW_SCENARIO.trim_end());
            Ok(ExitCode::SUCCESS)
        }
        Command::Show { name, variant } => load(&name, variant.as_deref()).map(|s| {
            say!("{}", s.to_json());
            ExitCode::SUCCESS
        }),
        Command::Audit { files, json, witnesses, format, reading } => {
            audit::audit(&files, json, witnesses.as_deref(), format, &reading)
        }
        Command::Export { source, variant, to, reading } => {
            export::export(&source, variant.as_deref(), to, &reading)
        }
        Command::Lab(args) => lab::lab(args),
        Command::LabWorker(args) => Ok(lab::worker::main(args)),
        Command::Run { scenario, variant, format, memory_limit } => {
            load(&scenario, variant.as_deref()).and_then(|s| {
                let label = label(&scenario, &s);
                run(s, &label, format, memory_limit)
            })
        }
        Command::Render { scenario, variant, step, to, player, link, theme } => {
            let link = match (player, link) {
                (Some(player), _) => render::Link::Player(player),
                (None, Some(link)) => render::Link::To(link),
                (None, None) => render::Link::None,
            };
            load(&scenario, variant.as_deref()).and_then(|s| {
                let label = label(&scenario, &s);
                render::render(s, is_file(&scenario), &label, step, to, link, theme)
            })
        }
        Command::Check {
            scenario,
            variant,
            max_depth,
            max_states,
            memory_limit,
            format,
            threads,
        } => {
            let config = ExploreConfig {
                max_depth,
                max_states,
                max_memory: memory_limit.0,
                ..ExploreConfig::default()
            };
            // Zero asks the explorer for one thread per core.
            let threads = threads.map_or(0, NonZeroUsize::get);
            load(&scenario, variant.as_deref()).and_then(|s| {
                let label = label(&scenario, &s);
                check(s, &label, config, format, threads)
            })
        }
    };
    result.unwrap_or_else(|BadInput(message)| {
        eprintln!("error: {message}");
        ExitCode::from(2)
    })
}

fn list() {
    let cases = library::cases();
    let width = cases.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for case in cases {
        say!("{:width$}  {:34}  {}", case.name, case.variants.join(", "), case.title);
    }
}

/// Whether the argument names a scenario file rather than a built-in `NAME[/VARIANT]`.
pub(crate) fn is_file(what: &str) -> bool {
    std::path::Path::new(what).is_file() || what.ends_with(".json")
}

/// What messages about a loaded scenario name: its file, where the fields they point at are, or
/// the built-in story and variant.
fn label(what: &str, scenario: &Scenario) -> String {
    if is_file(what) {
        what.to_string()
    } else {
        format!("{} ({})", scenario.name, scenario.variant)
    }
}

/// Resolves a file path or a built-in `NAME[/VARIANT]`.
pub(crate) fn load(what: &str, variant: Option<&str>) -> Result<Scenario, BadInput> {
    let path = std::path::Path::new(what);
    if is_file(what) {
        if let Some(variant) = variant {
            return Err(variant_of_a_file(variant, what));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| BadInput(format!("cannot read {what}: {e}")))?;
        let start = text.trim_start().trim_start_matches('\u{feff}');
        if start.starts_with("{\"fencelab_history\"") {
            return Err(BadInput(format!(
                "{what} is a history (JSON Lines of what happened), not a scenario; `run` and `check` play scenarios, and `fencelab audit {what}` judges a history"
            )));
        }
        if start.is_empty() {
            return Err(BadInput(format!("{what} is empty: neither a scenario nor a history")));
        }
        if !start.starts_with('{') && !start.starts_with("//") && !start.starts_with("/*") {
            return Err(BadInput(format!(
                "{what} is not a scenario (a JSON object) nor a history; a text log is read through a pattern: `fencelab audit --pattern RE {what}` or `fencelab export {what} --pattern RE --to jsonl`"
            )));
        }
        return match Scenario::from_json(&text) {
            // A checkpoint about a worker or store the file does not have is the author's typo;
            // the page only skips it, so that an edit in progress stays playable.
            Ok(scenario) => match scenario.check_checkpoint_names() {
                Ok(()) => Ok(scenario),
                Err(e) => Err(BadInput(format!("{what}: {e}"))),
            },
            // A run file exported by the page replays as its scenario, which carries the run's
            // schedule and injected faults; importing it checks it still replays as recorded.
            Err(_) if is_run_file(&text) => fencelab_core::record::export::RunExport::import(&text)
                .map(|(export, _)| export.scenario)
                .map_err(|e| BadInput(format!("{what}: {e}"))),
            Err(e) => Err(BadInput(format!("{what}: {e}"))),
        };
    }
    let (name, inline) = match what.split_once('/') {
        Some((n, v)) => (n, Some(v)),
        None => (what, None),
    };
    if let (Some(flag), Some(inline)) = (variant, inline) {
        return Err(BadInput(format!(
            "the variant is given twice, as {what} and as --variant {flag}; give it once: {name}/{inline} or {name} --variant {flag}"
        )));
    }
    let variant = variant.or(inline);
    library::scenario(name, variant).map_err(|e| match e {
        UnknownStory::Variant { .. } => BadInput(format!("scenario {e}")),
        // A name with an extension was meant as a file: say that it is not there.
        UnknownStory::Story { .. } if std::path::Path::new(what).extension().is_some() => {
            BadInput(format!(
                "cannot read {what}: there is no such file (nor a built-in story of that name; try `fencelab list`)"
            ))
        }
        // Not a file either, and the list of stories is `fencelab list`'s to show.
        UnknownStory::Story { .. } => BadInput(format!(
            "no scenario file or built-in scenario named {what:?} (try `fencelab list`)"
        )),
    })
}

/// The error for `--variant` given with a file, which it would not change.
pub(crate) fn variant_of_a_file(variant: &str, file: &str) -> BadInput {
    BadInput(format!(
        "--variant {variant} picks a variant of a built-in scenario, but {file} is a file: a scenario file is its own variant (its `variant` field). Leave out --variant, or name a built-in as NAME/VARIANT"
    ))
}

/// Whether `text` looks like an exported run (its format tag, or a scenario beside steps) rather
/// than a scenario, so that its errors are a run file's.
fn is_run_file(text: &str) -> bool {
    text.contains("\"fencelab-run/")
        || serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| {
            v.get("scenario").is_some_and(|s| s.is_object()) && v.get("steps").is_some()
        })
}

/// The process's peak resident memory, as Linux reports it; `None` elsewhere.
fn peak_rss() -> Option<Bytes> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(Bytes(kib * 1024))
}

/// ", peak RSS 590 MiB" where the system says, else nothing.
fn peak_rss_note() -> String {
    peak_rss().map_or_else(String::new, |rss| format!("; peak RSS {rss}"))
}

fn run(
    scenario: Scenario,
    label: &str,
    format: Format,
    memory_limit: Bytes,
) -> Result<ExitCode, BadInput> {
    let mut engine = Engine::new(scenario)
        .map_err(|e| BadInput(format!("{label}: {e}")))?
        .with_memory_budget(memory_limit.0);
    let verdict = match engine.run() {
        Ok(verdict) => verdict,
        Err(error @ EngineError::MemoryBudget { .. }) => {
            eprintln!(
                "error: {label} {error}{}. The run had not ended, so it shows nothing either way; give it more with --memory-limit (e.g. --memory-limit 2GiB) or shorten the scenario.",
                peak_rss_note()
            );
            return Ok(ExitCode::from(CUT_SHORT));
        }
        Err(error @ EngineError::TooLong) => {
            eprintln!(
                "error: {label}: {error} without ending, so it shows nothing either way; a scenario that never settles (workers waiting on each other forever) needs changing."
            );
            return Ok(ExitCode::from(CUT_SHORT));
        }
        Err(error) => return Err(BadInput(format!("{label}: {error}"))),
    };
    // A question the run cannot answer (its subject never happens) is skipped by the page; say
    // so here, where the story's author runs it.
    let history = engine.history();
    for problem in fencelab_core::check::checkpoint::place(&engine.scenario().checkpoints, &history)
        .into_iter()
        .filter_map(Result::err)
    {
        eprintln!("warning: {label}: {problem}; the page skips this checkpoint");
    }
    for warning in run_warnings(&history) {
        eprintln!("warning: {label}: {warning}");
    }
    match format {
        Format::Text => print_text(&engine, &verdict),
        Format::Json => {
            let report = serde_json::json!({
                "scenario": engine.scenario().name,
                "variant": engine.scenario().variant,
                "schedule": engine.schedule_so_far(),
                "steps": engine.records(),
                "log": engine.log(),
                "verdict": verdict,
            });
            say!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
        }
        Format::Jsonl => say!("{}", engine.history().to_jsonl().trim_end()),
    }
    Ok(if verdict.met { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// What a run did that its author probably did not mean: a message loss that found nothing on
/// its way, and workers the run ended without (waiting forever, say, for a grant that was lost).
fn run_warnings(history: &fencelab_core::History) -> Vec<String> {
    use fencelab_core::Event;
    let mut warnings = Vec::new();
    let mut done = std::collections::BTreeSet::new();
    for (step, entry) in history.entries.iter().enumerate() {
        match &entry.event {
            Event::LossIgnored { message } => warnings.push(format!(
                "step {}: message {message} was to be lost, but it was not on its way (it had arrived, or was not sent yet), so the loss changed nothing",
                RunStep::new(step)
            )),
            Event::WorkerFinished { worker } | Event::WorkerStopped { worker, .. } => {
                done.insert(worker.as_str());
            }
            _ => {}
        }
    }
    for worker in history.setup.workers.iter().filter(|w| !done.contains(w.as_str())) {
        warnings.push(format!(
            "{worker} never finished: the run ended while {worker} was still waiting (for a grant that was lost, or a lease that never came free), so nothing it had left to do was judged"
        ));
    }
    warnings
}

/// What cut a search short, with its limit, and the option that moves it.
fn cut_short(bound: Bound, config: &ExploreConfig) -> (String, &'static str) {
    let stopped = "stopped the search before every schedule was checked";
    match bound {
        Bound::Depth => (
            format!(
                "{} (runs of {} steps) cut runs short before every schedule was checked",
                bound.describe(),
                config.max_depth
            ),
            "--max-depth",
        ),
        Bound::States => (
            format!("{} ({} states) {stopped}", bound.describe(), config.max_states),
            "--max-states",
        ),
        Bound::Memory => (
            format!("{} ({}) {stopped}", bound.describe(), Bytes(config.max_memory)),
            "--memory-limit",
        ),
    }
}

/// Explores the scenario; exit 0 when no schedule breaks a safety invariant and every schedule
/// was checked, 1 when one breaks it, 3 when a bound cut the search short.
fn check(
    scenario: Scenario,
    label: &str,
    config: ExploreConfig,
    format: ReportFormat,
    threads: usize,
) -> Result<ExitCode, BadInput> {
    let explorer = Explorer::new(scenario.clone(), config.clone())
        .map_err(|e| BadInput(format!("{label}: {e}")))?;
    let result = if threads == 1 { explorer.run() } else { explorer.run_parallel(threads) };
    if format == ReportFormat::Json {
        say!("{}", serde_json::to_string_pretty(&result).unwrap_or_default());
    } else {
        let s = result.stats();
        let counts = format!(
            "{} unique states, {} transitions, max depth {}, {} finished runs",
            s.unique_states, s.transitions, s.max_depth, s.finished_runs,
        );
        match &result {
            ExploreResult::NoViolation { stats } => match stats.cut_by {
                None => say!("{label}: no violation within bounds; {counts}"),
                Some(bound) => {
                    let (why, option) = cut_short(bound, &config);
                    let rss = if bound == Bound::Memory { peak_rss_note() } else { String::new() };
                    say!("{label}: inconclusive: no violation found, but {why}; {counts}{rss}. To search further, raise {option}.");
                }
            },
            ExploreResult::Violation { violation, schedule, steps, .. } => {
                say!("{label}: {} breaks after {steps} steps; {counts}", violation.invariant);
                say!("  {}", violation.detail);
                say!("  schedule: {schedule:?}");
                let mut replay = scenario;
                replay.schedule = schedule.clone();
                if let Ok(mut engine) = Engine::new(replay) {
                    while let Ok(Some(_)) = engine.step() {
                        if engine.position() >= *steps {
                            break;
                        }
                    }
                    say!("\nthe counterexample, step by step:");
                    for r in engine.records() {
                        say!(
                            "{:>4}  t={:<4} {:<10} {}",
                            // Steps are numbered from 1 for readers, as `run` numbers them.
                            RunStep::new(r.index),
                            r.at.0,
                            r.event.actor(),
                            r.caption
                        );
                    }
                }
            }
            ExploreResult::Error { error, .. } => {
                say!("{label}: the engine stopped: {error}; {counts}")
            }
        }
    }
    Ok(match result {
        ExploreResult::NoViolation { .. } if result.is_inconclusive() => ExitCode::from(CUT_SHORT),
        ExploreResult::NoViolation { .. } => ExitCode::SUCCESS,
        ExploreResult::Violation { .. } => ExitCode::FAILURE,
        ExploreResult::Error { .. } => ExitCode::from(2),
    })
}

fn print_text(engine: &Engine, verdict: &Verdict) {
    let s = engine.scenario();
    say!("{} ({}): {}", s.name, s.variant, s.title);
    // The whole run is printed at once, so its outcome is told with the set-up.
    let told: Vec<&str> =
        [&s.intro, &s.outcome].into_iter().filter(|t| !t.is_empty()).map(String::as_str).collect();
    if !told.is_empty() {
        say!("{}\n", told.join(" "));
    }
    for StepRecord { index, at, event, caption, .. } in engine.records() {
        // Steps count from 1, as on the page; the index counts from 0.
        say!("{:>4}  t={:<4} {:<10} {caption}", RunStep::new(*index), at.0, event.actor());
        // The caption already narrates what broke; the name is what a scenario's `expect` lists.
        for v in verdict.violations.iter().filter(|v| v.step.index() == *index) {
            say!("      !! {}", v.invariant);
        }
    }
    say!();
    if verdict.rejections.is_empty() {
        say!("rejections: none");
    } else {
        let counts: Vec<String> =
            verdict.rejections.iter().map(|(reason, n)| format!("{reason}: {n}")).collect();
        say!("rejections: {}", counts.join(", "));
    }
    let names = |kinds: &[fencelab_core::invariant::InvariantKind]| {
        if kinds.is_empty() {
            "none".to_string()
        } else {
            kinds.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ")
        }
    };
    let broken: Vec<_> = verdict.violations.iter().map(|v| v.invariant).collect();
    say!("violations: {}", names(&broken));
    say!("expected:   {}", names(&verdict.expected));
    if verdict.met {
        say!("verdict: MET, the run showed exactly what the scenario expects");
    } else {
        say!(
            "verdict: NOT MET (unexpected: {}; missing: {}{})",
            names(&verdict.unexpected),
            names(&verdict.missing),
            if verdict.rejections_mismatch { "; rejection counts differ" } else { "" }
        );
    }
}
