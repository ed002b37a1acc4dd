//! The `fencelab` binary, run as a user runs it: output and exit codes.

use std::process::{Command, Output};

fn fencelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fencelab")).args(args).output().expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn list_names_every_built_in_case() {
    let out = fencelab(&["list"]);
    assert!(out.status.success());
    let text = stdout(&out);
    for case in fencelab_core::scenario::library::cases() {
        assert!(text.contains(&case.name), "{} missing from:\n{text}", case.name);
    }
}

#[test]
fn show_prints_json_that_parses_back() {
    let out = fencelab(&["show", "paused-worker/broken"]);
    assert!(out.status.success());
    let scenario = fencelab_core::Scenario::from_json(&stdout(&out)).expect("valid scenario JSON");
    assert_eq!(scenario.variant, "broken");
    let same = fencelab(&["show", "paused-worker", "--variant", "broken"]);
    assert_eq!(stdout(&same), stdout(&out));
}

#[test]
fn run_exits_zero_when_expectations_are_met() {
    let out = fencelab(&["run", "paused-worker"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("stale owner: generation 1 < highest accepted 2"), "{text}");
    assert!(text.contains("verdict: MET"), "{text}");
}

#[test]
fn run_exits_one_when_a_run_misses_its_expectations() {
    let dir = std::env::temp_dir().join(format!("fencelab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("unexpected.json");
    // The broken story, but claiming to expect no violations.
    let mut scenario =
        fencelab_core::scenario::library::scenario("paused-worker", Some("broken")).unwrap();
    scenario.expect.violations.clear();
    std::fs::write(&path, scenario.to_json()).unwrap();
    let out = fencelab(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("verdict: NOT MET (unexpected: stale_write_accepted"),
        "{}",
        stdout(&out)
    );
    let json = fencelab(&["run", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(report["verdict"]["met"], false);
    assert_eq!(report["verdict"]["violations"][0]["invariant"], "stale_write_accepted");
    assert_eq!(report["verdict"]["violations"][0]["step"], 18);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_exits_two_with_the_field_named() {
    let out = fencelab(&["run", "no-such-story"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no scenario file or built-in scenario named \"no-such-story\""));

    let out = fencelab(&["run", "paused-worker/sideways"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("has no variant \"sideways\"; it has: fenced, broken"),
        "{}",
        stderr(&out)
    );

    let dir = std::env::temp_dir().join(format!("fencelab-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    let text = fencelab_core::scenario::library::scenario("paused-worker", None).unwrap().to_json();
    std::fs::write(&path, text.replace("\"ttl\": 10", "\"ttl\": 0")).unwrap();
    let out = fencelab(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("authority.ttl: must be at least 1 tick"), "{}", stderr(&out));

    let out = fencelab(&["run", dir.join("missing.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_exits_zero_when_no_schedule_breaks_the_story() {
    let out = fencelab(&["check", "check-then-write/atomic"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .starts_with("check-then-write (atomic): no violation within bounds; 35 unique states"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn check_exits_one_with_a_replayable_counterexample() {
    let out = fencelab(&["check", "check-then-write", "--variant", "check-then-write"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("stale_write_accepted breaks after 18 steps"), "{text}");
    assert!(
        text.contains(
            "Generation 2 had written in between, and is now overwritten by an older owner."
        ),
        "{text}"
    );

    let json = fencelab(&["check", "paused-worker/broken", "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(report["result"], "violation");
    assert_eq!(report["violation"]["invariant"], "stale_write_accepted");
    assert_eq!(report["steps"], 18);
}

#[test]
fn check_reports_when_a_bound_cuts_the_search_short() {
    let out = fencelab(&["check", "check-then-write/atomic", "--max-states", "5"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("a bound was hit: the search is not exhaustive"),
        "{}",
        stdout(&out)
    );
}
