//! Taking a run out of the tool: a JSON file that replays identically, and a Rust test that
//! pins the run's verdict in a reader's own test suite.

use crate::clock::RunStep;
use crate::fence::log::LogEntry;
use crate::format::error::ScenarioError;
use crate::format::limits::MAX_SCENARIO_BYTES;
use crate::format::model::Scenario;
use crate::record::StepRecord;
use crate::record::{Engine, EngineError, Verdict};
use serde::{Deserialize, Serialize};

/// The format tag of exported runs. Importing also reads [`RUN_FORMAT_V1`] and refuses others.
pub const RUN_FORMAT: &str = "fencelab-run/2";

/// The format before events were written as the history's version 2 writes them (see
/// [`history`](crate::history)); such a file still imports.
pub const RUN_FORMAT_V1: &str = "fencelab-run/1";

/// The largest exported run accepted, in bytes: a run carries its steps and log besides the
/// scenario, so it may be larger than a scenario file.
pub const MAX_RUN_BYTES: usize = 4 * MAX_SCENARIO_BYTES;

/// A run as a file: the scenario, the schedule that was followed, and what happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunExport {
    /// Always [`RUN_FORMAT`].
    pub format: String,
    /// The scenario, with `schedule` set to the choices the run made.
    pub scenario: Scenario,
    /// How many steps the run had taken when exported.
    pub position: usize,
    /// The steps, with captions.
    pub steps: Vec<StepRecord>,
    /// The operation log.
    pub log: Vec<LogEntry>,
    /// The verdict at that point.
    pub verdict: Verdict,
}

/// Why a run could not be imported or turned into a test.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum RunError {
    /// The file is not an exported run.
    #[error("not a Fencelab run: {0}")]
    Format(String),
    /// The scenario inside is invalid.
    #[error("scenario.{0}")]
    Scenario(#[source] ScenarioError),
    /// Replaying it failed.
    #[error("replay failed: {0}")]
    Replay(#[source] EngineError),
    /// Replaying it gave a different run than the file records (edited by hand, or made by an
    /// incompatible version).
    #[error("replaying the run gives a different result from step {step} on")]
    Diverged {
        /// The first step that differs.
        step: RunStep,
    },
    /// Replaying it gave the same steps but a different operation log than the file records.
    #[error("replaying the run gives a different operation log from entry {} on", entry + 1)]
    LogDiffers {
        /// The first entry that differs, from 0.
        entry: usize,
    },
    /// Replaying it gave the same steps and log but a different verdict than the file records.
    #[error("replaying the run gives a different verdict than the file records (was it edited?)")]
    VerdictDiffers,
}

impl RunExport {
    /// Captures `engine`'s run up to its current position. The scenario carries the schedule of
    /// the whole run, not only of the steps taken so far, so the file replays identically to the
    /// end and not just to the exported step.
    pub fn capture(engine: &Engine) -> RunExport {
        let mut scenario = engine.scenario().clone();
        let mut whole = engine.clone();
        scenario.schedule = match whole.seek(usize::MAX) {
            Ok(()) => whole.schedule_so_far(),
            // A schedule that stops fitting later on: keep what was played, as far as it goes.
            Err(_) => engine.schedule_so_far(),
        };
        RunExport {
            format: RUN_FORMAT.into(),
            scenario,
            position: engine.position(),
            steps: engine.records().to_vec(),
            log: engine.log().to_vec(),
            verdict: engine.verdict(),
        }
    }

    /// The export as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Reads an exported run and replays it, checking that the replay matches the file step for
    /// step. Returns the engine positioned where the export was taken.
    pub fn import(json: &str) -> Result<(RunExport, Engine), RunError> {
        if json.len() > MAX_RUN_BYTES {
            let size = json.len();
            return Err(RunError::Format(format!(
                "the file is {size} bytes; the limit is {MAX_RUN_BYTES}"
            )));
        }
        // The same strict reader as scenario files: a key written twice is an error.
        let value = crate::format::parse::json_text(json)
            .map_err(|e| RunError::Format(if e.path == "." { e.problem } else { e.to_string() }))?;
        let version_1 = match value.get("format").and_then(|f| f.as_str()) {
            Some(RUN_FORMAT) => false,
            Some(RUN_FORMAT_V1) => true,
            Some(other) => {
                return Err(RunError::Format(format!(
                    "format \"{other}\" is not {RUN_FORMAT} (nor the older {RUN_FORMAT_V1})"
                )))
            }
            None => return Err(RunError::Format("the \"format\" field is missing".into())),
        };
        // A field this build does not know would be dropped on the next export: refuse it.
        const FIELDS: [&str; 6] = ["format", "scenario", "position", "steps", "log", "verdict"];
        if let Some(unknown) =
            value.as_object().and_then(|o| o.keys().find(|k| !FIELDS.contains(&k.as_str())))
        {
            return Err(RunError::Format(format!(
                "unknown field \"{unknown}\" (a run file has {})",
                FIELDS.join(", ")
            )));
        }
        let scenario = value
            .get("scenario")
            .ok_or_else(|| RunError::Format("the \"scenario\" field is missing".into()))
            .and_then(|s| {
                // The scenario inside gets the same size limit as a scenario file.
                let size = serde_json::to_string(s).map_or(usize::MAX, |t| t.len());
                if size > MAX_SCENARIO_BYTES {
                    let problem = format!("{size} bytes; the limit is {MAX_SCENARIO_BYTES}");
                    return Err(RunError::Scenario(ScenarioError::new("scenario", problem)));
                }
                Scenario::from_value(s).map_err(RunError::Scenario)
            })?;
        let position = value
            .get("position")
            .and_then(|p| p.as_u64())
            .and_then(|p| usize::try_from(p).ok())
            .ok_or_else(|| RunError::Format("\"position\" is not a step number".into()))?;
        let mut engine = Engine::new(scenario).map_err(RunError::Scenario)?;
        engine.seek(position).map_err(RunError::Replay)?;
        if engine.position() < position {
            let steps = engine.position();
            return Err(RunError::Format(format!(
                "\"position\" is step {position}, past the end of the run (it has {steps} steps)"
            )));
        }
        // Compare the replay with the file as JSON values: steps and log entries need no
        // deserializer of their own.
        let listed = |key: &str| value.get(key).and_then(|v| v.as_array()).map(Vec::as_slice);
        let (Some(steps), Some(log)) = (listed("steps"), listed("log")) else {
            return Err(RunError::Format("\"steps\" and \"log\" must be lists".into()));
        };
        // The replay goes through the same serializer as `to_json`, so no second one is compiled.
        let replayed = RunExport::capture(&engine);
        let again = crate::format::parse::json_text(&replayed.to_json()).unwrap_or_default();
        let list = |key: &str| again.get(key).and_then(|v| v.as_array()).cloned();
        let (mut replayed_steps, replayed_log) = (list("steps").unwrap_or_default(), list("log"));
        if version_1 {
            for step in &mut replayed_steps {
                if let Some(event) = step.get_mut("event") {
                    *event = crate::history::event_as_v1(std::mem::take(event));
                }
            }
        }
        let diverged = replayed_steps.iter().zip(steps).position(|(a, b)| a != b);
        if let Some(step) = diverged
            .or((replayed_steps.len() != steps.len())
                .then(|| replayed_steps.len().min(steps.len())))
        {
            return Err(RunError::Diverged { step: RunStep::new(step) });
        }
        let replayed_log = replayed_log.unwrap_or_default();
        let differs = replayed_log.iter().zip(log).position(|(a, b)| a != b);
        if let Some(entry) =
            differs.or((replayed_log.len() != log.len()).then(|| replayed_log.len().min(log.len())))
        {
            return Err(RunError::LogDiffers { entry });
        }
        // The verdict is the checker's to give: a file whose verdict was edited is refused.
        if value.get("verdict") != again.get("verdict") {
            return Err(RunError::VerdictDiffers);
        }
        Ok((replayed, engine))
    }
}

/// A `#[test]` function that replays `scenario` (with its schedule) using `fencelab-core` and
/// asserts the verdict this run reaches: every violation with its step, and the rejection counts.
/// Paste it into any crate that depends on `fencelab-core`.
pub fn rust_test(scenario: &Scenario) -> Result<String, RunError> {
    let mut engine = Engine::new(scenario.clone()).map_err(RunError::Scenario)?;
    let verdict = engine.run().map_err(RunError::Replay)?;
    let json = serde_json::to_string_pretty(scenario).unwrap_or_default();
    let hashes = (1..)
        .map(|n| "#".repeat(n))
        .find(|h| !json.contains(&format!("\"{h}")))
        .unwrap_or_default();
    let name: String = format!("{}_{}", scenario.name, scenario.variant)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect();
    let name = if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("scenario_{name}")
    } else {
        name
    };
    let violations: Vec<String> = verdict
        .violations
        .iter()
        .map(|v| format!("(InvariantKind::{:?}, {})", v.invariant, v.step.index()))
        .collect();
    let rejections: Vec<String> = verdict
        .rejections
        .iter()
        .map(|(reason, n)| format!("(RejectionReason::{reason:?}, {n})"))
        .collect();
    Ok(format!(
        r#"/// {title}
///
/// Generated by Fencelab from the "{name_raw}" scenario ({variant} variant); it replays the run
/// and pins its verdict.
#[test]
fn {name}() {{
    use fencelab_core::fence::register::RejectionReason;
    use fencelab_core::invariant::InvariantKind;
    use fencelab_core::{{Engine, Scenario}};

    let scenario = Scenario::from_json(
        r{hashes}"{json}"{hashes},
    )
    .expect("the scenario is valid");
    let mut engine = Engine::new(scenario).expect("the scenario is valid");
    let verdict = engine.run().expect("the schedule fits the scenario");
    let violations: Vec<(InvariantKind, usize)> =
        verdict.violations.iter().map(|v| (v.invariant, v.step.index())).collect();
    assert_eq!(violations, vec![{violations}]);
    let rejections: Vec<(RejectionReason, u64)> = verdict.rejections.into_iter().collect();
    assert_eq!(rejections, vec![{rejections}]);
    assert!({met}verdict.met, "whether the run shows what the scenario expects");
}}
"#,
        title = scenario.title.replace('\n', " "),
        name_raw = scenario.name,
        variant = scenario.variant,
        violations = violations.join(", "),
        rejections = rejections.join(", "),
        met = if verdict.met { "" } else { "!" },
    ))
}
