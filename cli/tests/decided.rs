//! A run a reader decided on the page (choices off the default path and injected faults), as
//! its exported run file: `fencelab run` replays the run file, and the scenario inside it, step
//! for step.

use std::process::Command;

use fencelab_core::record::export::RunExport;
use fencelab_core::stories::library;
use fencelab_core::{format::model::Fault, format::model::PauseReason, Engine};

#[test]
fn the_scenario_of_a_decided_run_file_replays_in_fencelab_run() {
    let scenario = library::scenario("paused-worker", Some("broken")).expect("a built-in story");
    let mut engine = Engine::new(scenario).expect("a valid story");
    // As the page does: take the last choice wherever there are several, and inject a pause
    // and a restart partway.
    let mut branched = 0;
    while !engine.is_finished() && engine.position() < 12 {
        if engine.position() == 2 {
            let pause =
                Fault::PauseWorker { worker: "B".into(), ticks: 3, reason: PauseReason::default() };
            engine.inject(pause).expect("B can be paused");
            engine.inject(Fault::RestartAuthority).expect("the authority restarts");
            continue;
        }
        let last = engine.choices().len() - 1;
        branched += usize::from(last > 0);
        engine.step_choice(last).expect("a listed choice runs");
    }
    assert!(branched > 0, "the run left the default path somewhere");
    let export = RunExport::capture(&engine);
    assert_eq!(export.scenario.injected.len(), 2, "the file carries the injected faults");
    let dir = std::env::temp_dir().join(format!("fencelab-decided-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let run_file = dir.join("decided.fencelab-run.json");
    std::fs::write(&run_file, export.to_json()).expect("written");
    let scenario_file = dir.join("decided.json");
    std::fs::write(&scenario_file, export.scenario.to_json()).expect("written");
    let captions = |steps: &[serde_json::Value]| -> Vec<String> {
        steps.iter().map(|s| s["caption"].as_str().unwrap_or_default().to_string()).collect()
    };
    let exported: Vec<serde_json::Value> =
        export.steps.iter().map(|s| serde_json::to_value(s).expect("a step")).collect();
    for file in [&run_file, &scenario_file] {
        let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .args(["run", file.to_str().unwrap_or_default(), "--format", "json"])
            .output()
            .expect("the binary runs");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        let steps = report["steps"].as_array().expect("a list of steps");
        assert_eq!(captions(&steps[..export.position]), captions(&exported), "{file:?}");
        assert!(captions(steps).iter().any(|c| c.contains("by hand")), "the faults ran");
    }
    // A run file edited by hand no longer replays as recorded, and says so.
    let tampered = export.to_json().replacen("by hand", "by nobody", 1);
    std::fs::write(&run_file, tampered).expect("written");
    let out = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["run", run_file.to_str().unwrap_or_default()])
        .output()
        .expect("the binary runs");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("different result from step"));
}
