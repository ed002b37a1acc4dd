//! The `fencelab` binary, run as a user runs it: output and exit codes.

use fencelab_core::format::model::Enforcement;
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
    for case in fencelab_core::stories::library::cases() {
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
        fencelab_core::stories::library::scenario("paused-worker", Some("broken")).unwrap();
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
fn run_replays_a_path_with_injected_faults() {
    use fencelab_core::{format::model::Fault, Engine, History};
    let dir = std::env::temp_dir().join(format!("fencelab-cli-injected-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A reader's path: a few steps, a pause of B injected by hand, then to the end.
    let scenario = fencelab_core::stories::library::scenario("paused-worker", None).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    engine.seek(5).unwrap();
    let pause = Fault::PauseWorker { worker: "B".into(), ticks: 9, reason: Default::default() };
    engine.inject(pause).unwrap();
    engine.run().unwrap();
    let mut path = engine.scenario().clone();
    path.schedule = engine.schedule_so_far();
    let file = dir.join("path.json");
    std::fs::write(&file, path.to_json()).unwrap();
    let out = fencelab(&["run", file.to_str().unwrap(), "--format", "jsonl"]);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", stderr(&out));
    let replayed = History::from_jsonl(&stdout(&out)).expect("the run's history");
    assert_eq!(replayed.entries, engine.history().entries);
    assert!(stdout(&out).contains("\"event\":{\"paused\":{\"worker\":\"B\""));
    // A checkpoint about a worker the scenario does not have is bad input, naming the field.
    path.checkpoints.push(fencelab_core::format::model::Checkpoint::WriteAccepted {
        worker: "Z".into(),
        nth: None,
    });
    std::fs::write(&file, path.to_json()).unwrap();
    let out = fencelab(&["run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("checkpoints[2].write_accepted.worker: \"Z\" is not one of the scenario's workers (A, B)"),
        "{}",
        stderr(&out)
    );
    // One about something the run never does is named on stderr.
    path.checkpoints.pop();
    path.checkpoints.push(fencelab_core::format::model::Checkpoint::WriteAccepted {
        worker: "B".into(),
        nth: Some(40),
    });
    std::fs::write(&file, path.to_json()).unwrap();
    let out = fencelab(&["run", file.to_str().unwrap()]);
    assert!(
        stderr(&out).contains("checkpoints[2]: ")
            && stderr(&out).contains("the page skips this checkpoint"),
        "{}",
        stderr(&out)
    );
    // A fault that waits past the end is named by the file and the field, by `run` and `check`.
    path.checkpoints.pop();
    path.injected[0].after = 9_999;
    std::fs::write(&file, path.to_json()).unwrap();
    let shown = file.to_str().unwrap();
    let out = fencelab(&["run", shown]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("{shown}: injected[0].after: is 9999")),
        "{}",
        stderr(&out)
    );
    let out = fencelab(&["check", shown, "--threads", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains(&format!("{shown}: the engine stopped: injected[0].after")));
    // A pause of no time is refused where it is written.
    path.injected[0] = fencelab_core::format::model::Injection {
        after: 5,
        fault: Fault::PauseWorker { worker: "B".into(), ticks: 0, reason: Default::default() },
    };
    std::fs::write(&file, path.to_json()).unwrap();
    let out = fencelab(&["run", shown]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("injected[0].fault.pause_worker.ticks: must be at least 1"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_exits_two_with_the_field_named() {
    let out = fencelab(&["run", "no-such-story"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no scenario file or built-in scenario named \"no-such-story\""));
    // A name with an extension was meant as a file, and the message says it is not there.
    let out = fencelab(&["export", "no-such-run.jsonl", "--to", "mermaid"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read no-such-run.jsonl: there is no such file"));

    let out = fencelab(&["run", "paused-worker/sideways"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("scenario paused-worker has no variant \"sideways\"; it has fenced, broken"),
        "{}",
        stderr(&out)
    );

    let dir = std::env::temp_dir().join(format!("fencelab-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    let text = fencelab_core::stories::library::scenario("paused-worker", None).unwrap().to_json();
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
    // The shortest counterexample commits A's checked write after B's newer write has passed
    // its own check: a stale write accepted, whoever commits last.
    assert!(text.contains("stale_write_accepted breaks after 17 steps"), "{text}");
    assert!(text.contains("Broken: a stale write was accepted"), "{text}");
    // The listing numbers steps from 1 and ends at the step the header names.
    let listing: Vec<&str> =
        text.lines().skip_while(|l| !l.contains("step by step")).skip(1).collect();
    assert!(listing[0].trim_start().starts_with("1  t=0"), "{text}");
    assert!(listing.last().unwrap().trim_start().starts_with("17  "), "{text}");

    let json = fencelab(&["check", "paused-worker/broken", "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(report["result"], "violation");
    assert_eq!(report["violation"]["invariant"], "stale_write_accepted");
    assert_eq!(report["steps"], 18);
}

/// `check --threads 2` reports what `--threads 1` reports, word for word, and field for field
/// but for the memory the search estimates it held: on built-in stories with and without a
/// violation, and on larger contended scenarios.
#[test]
fn check_reports_the_same_on_two_threads_as_on_one() {
    let dir = std::env::temp_dir().join(format!("fencelab-cli-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut scenarios = vec![
        "check-then-write/check-then-write".to_string(),
        "check-then-write/atomic".to_string(),
    ];
    for (workers, enforcement) in [(4, Enforcement::Fenced), (3, Enforcement::CheckThenWrite)] {
        let path = dir.join(format!("contention-{workers}-{enforcement:?}.json"));
        let scenario = fencelab_core::stories::library::contention(workers, enforcement);
        std::fs::write(&path, scenario.to_json()).unwrap();
        scenarios.push(path.to_str().unwrap().to_string());
    }
    let mut codes = Vec::new();
    for scenario in &scenarios {
        for format in ["text", "json"] {
            let one = fencelab(&["check", scenario, "--format", format, "--threads", "1"]);
            let two = fencelab(&["check", scenario, "--format", format, "--threads", "2"]);
            assert_eq!(two.status.code(), one.status.code(), "{scenario}");
            codes.push(one.status.code());
            if format == "text" {
                assert_eq!(stdout(&two), stdout(&one), "{scenario}");
                continue;
            }
            let [mut one, mut two] = [&one, &two].map(|out| {
                serde_json::from_str::<serde_json::Value>(&stdout(out)).expect("a JSON report")
            });
            for report in [&mut one, &mut two] {
                let held = report["stats"].as_object_mut().unwrap().remove("peak_memory");
                assert!(held.is_some_and(|bytes| bytes.as_u64() > Some(0)), "{report}");
            }
            assert!(one["stats"]["unique_states"].as_u64().unwrap() > 1, "{one}");
            assert_eq!(two, one, "{scenario}");
        }
    }
    // Both a counterexample and a complete search without one were compared.
    assert!(codes.contains(&Some(0)) && codes.contains(&Some(1)), "{codes:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_refuses_zero_threads() {
    let out = fencelab(&["check", "paused-worker", "--threads", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("'--threads <N>'"), "{}", stderr(&out));
}

#[test]
fn check_exits_three_when_a_bound_cuts_the_search_short() {
    // Five states are not enough to check every schedule: that proves nothing, so it must not
    // exit 0 as a complete check does.
    let out = fencelab(&["check", "check-then-write/atomic", "--max-states", "5"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(
            "check-then-write (atomic): inconclusive: no violation found, but the state bound (5 states) stopped the search before every schedule was checked; 5 unique states"
        ),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).trim_end().ends_with("To search further, raise --max-states."));

    let out = fencelab(&["check", "check-then-write/atomic", "--max-depth", "5"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stdout(&out).contains("but the depth bound (runs of 5 steps) cut runs short"),
        "{}",
        stdout(&out)
    );

    let json =
        fencelab(&["check", "check-then-write/atomic", "--max-states", "5", "--format", "json"]);
    assert_eq!(json.status.code(), Some(3));
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(report["result"], "no_violation");
    assert_eq!(report["stats"]["bound_hit"], true);
    assert_eq!(report["stats"]["cut_by"], "states");
}

/// Writes the stampede scenario (workers rushing for a one-tick lease) to a file of its own.
fn stampede_file(workers: usize, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fencelab-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stampede.json");
    std::fs::write(&path, fencelab_core::stories::library::stampede(workers).to_json()).unwrap();
    path
}

#[test]
fn run_exits_three_with_a_clear_message_when_it_would_pass_its_memory_limit() {
    let path = stampede_file(1_000, "run-memory");
    let out = fencelab(&["run", path.to_str().unwrap(), "--memory-limit", "8MiB"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "no transcript of a run that did not end");
    let message = stderr(&out);
    let named = format!("error: {} stopped before step ", path.display());
    assert!(message.starts_with(&named), "{message}");
    assert!(message.contains("more than its memory budget of 8 MiB"), "{message}");
    assert!(message.contains("give it more with --memory-limit"), "{message}");
    // The same run within a larger limit goes further before it stops.
    let step = |text: &str| -> usize {
        let rest = &text[text.find("before step ").unwrap() + 12..];
        rest[..rest.find(':').unwrap()].parse().unwrap()
    };
    let more = fencelab(&["run", path.to_str().unwrap(), "--memory-limit", "16 MiB"]);
    assert_eq!(more.status.code(), Some(3));
    assert!(step(&stderr(&more)) > step(&message), "{}", stderr(&more));
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn check_exits_three_when_the_memory_bound_stops_the_search() {
    let path = stampede_file(1_000, "check-memory");
    let out = fencelab(&["check", path.to_str().unwrap(), "--memory-limit", "16MiB"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    let named = format!(
        "{}: inconclusive: no violation found, but the memory bound (16 MiB) stopped the search before every schedule was checked",
        path.display()
    );
    assert!(text.starts_with(&named), "{text}");
    assert!(text.trim_end().ends_with("To search further, raise --memory-limit."), "{text}");
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn a_memory_limit_that_is_not_a_size_is_bad_input() {
    for (limit, problem) in [
        ("12XB", "unknown unit \"XB\" in \"12XB\""),
        ("lots", "\"lots\" is not a memory size"),
        ("", "no memory size given"),
    ] {
        let out = fencelab(&["check", "paused-worker", "--memory-limit", limit]);
        assert_eq!(out.status.code(), Some(2), "{limit}");
        assert!(
            stderr(&out).contains(&format!(
                "invalid value '{limit}' for '--memory-limit <SIZE>': {problem}"
            )),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn help_documents_the_memory_limit_and_every_exit_code() {
    let run = stdout(&fencelab(&["run", "--help"]));
    let check = stdout(&fencelab(&["check", "--help"]));
    for help in [&run, &check] {
        assert!(help.contains("--memory-limit <SIZE>"), "{help}");
        assert!(help.contains("[default: \"512 MiB\"]"), "{help}");
        for code in ["0  ", "1  ", "2  bad input", "3  "] {
            assert!(help.contains(code), "{code:?} missing from:\n{help}");
        }
    }
    assert!(run.contains("3  the run was cut short before it ended, by the memory limit"), "{run}");
    assert!(
        check.contains("3  inconclusive: no violation found, but the depth, state or memory bound"),
        "{check}"
    );
    assert!(check.contains("--threads <N>"), "{check}");
    assert!(check.contains("by default one per core"), "{check}");
}

#[test]
fn run_prints_the_history_as_json_lines_that_read_back() {
    let output = fencelab(&["run", "paused-worker/broken", "--format", "jsonl"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let history = fencelab_core::History::from_jsonl(&text).unwrap();
    assert_eq!(history.setup.workers, ["A", "B"]);
    assert_eq!(text.lines().count(), history.entries.len() + 1);

    // Handed back to `run`, a history is named for what it is.
    let dir = std::env::temp_dir().join(format!("fencelab-cli-history-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("run.jsonl");
    std::fs::write(&file, &text).unwrap();
    let output = fencelab(&["run", file.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("is a history (JSON Lines of what happened), not a scenario"));
}

/// Runs `fencelab` with `input` on standard input.
fn fencelab_with_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn audit_judges_histories_as_it_reads_them_and_names_the_line() {
    let history = |name: &str| stdout(&fencelab(&["run", name, "--format", "jsonl"]));
    let (fenced, broken) = (history("paused-worker/fenced"), history("paused-worker/broken"));

    let clean = fencelab_with_stdin(&["audit", "-"], &fenced);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    // A clean report says what it judged, and which checks had nothing to judge.
    assert_eq!(
        stdout(&clean).trim(),
        "-: 20 events, 0 findings\n  judged: 2 lease grants, 3 writes decided, 0 effects decided; the effect checks had nothing to judge"
    );

    let found = fencelab_with_stdin(&["audit", "-"], &broken);
    assert_eq!(found.status.code(), Some(1));
    let text = stdout(&found);
    // The stale write is entry 19 of the run, on line 20 (the header is line 1).
    assert!(text.contains("line 20 (step 19, t=19): stale_write_accepted: totals in db accepted A's write from an older lease after B presented a newer one"), "{text}");
    assert!(text.contains("final_value_not_from_latest_owner"), "{text}");

    let json = fencelab_with_stdin(&["audit", "-", "--json"], &broken);
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(report["clean"], false);
    assert_eq!(report["files"][0]["judged"]["writes"], 3);
    assert_eq!(report["files"][0]["findings"][0]["line"], 20);
    assert_eq!(report["files"][0]["findings"][0]["place"]["store"]["store"], "db");
    // A run that could read no file judged nothing, so it is not clean.
    let unread = fencelab_with_stdin(&["audit", "no-such-history.jsonl", "--json"], "");
    assert_eq!(unread.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_str(&stdout(&unread)).unwrap();
    assert_eq!(report["clean"], false, "{report}");
    assert_eq!(report["unreadable"][0]["file"], "no-such-history.jsonl");

    // A line that is not a history's is bad input, named by its line.
    let mut lines: Vec<&str> = broken.lines().collect();
    lines[5] = r#"{"at": 3, "event": {"teleported": {}}}"#;
    let bad = fencelab_with_stdin(&["audit", "-"], &lines.join("\n"));
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).starts_with("error: -: line 6: `event`: unknown variant `teleported`"),
        "{}",
        stderr(&bad)
    );
    let empty = fencelab_with_stdin(&["audit", "-"], "\n");
    assert_eq!(empty.status.code(), Some(2));
    assert!(stderr(&empty).contains("the file is empty"), "{}", stderr(&empty));
    let missing = fencelab(&["audit", "/no/such/history.jsonl"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("cannot read /no/such/history.jsonl"));
}

#[test]
fn export_writes_a_run_or_a_history_file_as_mermaid_or_json_lines() {
    let mermaid = fencelab(&["export", "paused-worker/broken", "--to", "mermaid"]);
    assert_eq!(mermaid.status.code(), Some(0), "{}", stderr(&mermaid));
    let text = stdout(&mermaid);
    assert!(text.starts_with("sequenceDiagram\n    participant authority as lease authority"));
    assert!(text.contains("Note over s0: t=19 broken: a stale write was accepted"), "{text}");

    // A history file is read and judged as it is, then written out.
    let jsonl = stdout(&fencelab(&["export", "paused-worker/broken", "--to", "jsonl"]));
    let dir = std::env::temp_dir().join(format!("fencelab-cli-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("run.jsonl");
    std::fs::write(&file, &jsonl).unwrap();
    let again = fencelab(&["export", file.to_str().unwrap(), "--to", "mermaid"]);
    let back = fencelab(&["export", file.to_str().unwrap(), "--to", "jsonl"]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(stdout(&again), text);
    assert_eq!(stdout(&back), jsonl);
}

#[test]
fn audit_writes_each_finding_s_witness_as_a_history_that_shows_it_again() {
    let broken = stdout(&fencelab(&["run", "paused-worker/broken", "--format", "jsonl"]));
    let dir = std::env::temp_dir().join(format!("fencelab-witness-{}", std::process::id()));
    let file = dir.join("broken.jsonl");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&file, &broken).unwrap();
    let out = dir.join("witnesses");
    let found = fencelab(&["audit", file.to_str().unwrap(), "--witnesses", out.to_str().unwrap()]);
    assert_eq!(found.status.code(), Some(1), "{}", stderr(&found));
    assert!(stdout(&found).contains("    witness: lines 2, 3, 11, 12, 14, 16, 18, 20"));
    let witness = out.join("broken-finding-1-stale_write_accepted.jsonl");
    let again = fencelab(&["audit", witness.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    let text = stdout(&again);
    assert!(text.contains(": 8 events,") && text.contains("stale_write_accepted"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `history` with its header marked incomplete, as a recording that stopped early writes it.
fn marked_incomplete(history: &str) -> String {
    let mut lines: Vec<String> = history.lines().map(String::from).collect();
    let mut head: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    head["setup"]["incomplete"] = "worker B failed: the store failed".into();
    lines[0] = head.to_string();
    lines.join("\n")
}

#[test]
fn an_incomplete_history_is_never_clean() {
    let history = |name: &str| stdout(&fencelab(&["run", name, "--format", "jsonl"]));
    let fenced = marked_incomplete(&history("paused-worker/fenced"));
    let text = fencelab_with_stdin(&["audit", "-"], &fenced);
    assert_eq!(text.status.code(), Some(3), "{}", stderr(&text));
    assert!(stdout(&text).contains("incomplete: the recording stopped before the run ended"));
    let json = fencelab_with_stdin(&["audit", "-", "--json"], &fenced);
    assert_eq!(json.status.code(), Some(3), "{}", stderr(&json));
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(report["clean"], false);
    assert_eq!(report["certain"], 0);
    assert_eq!(report["files"][0]["incomplete"], "worker B failed: the store failed");
    // A certain finding in what was recorded is still certain.
    let broken = marked_incomplete(&history("paused-worker/broken"));
    let found = fencelab_with_stdin(&["audit", "-"], &broken);
    assert_eq!(found.status.code(), Some(1), "{}", stderr(&found));
    let help = stdout(&fencelab(&["audit", "--help"]));
    assert!(help.contains("or a history is marked incomplete"), "{help}");
}

#[test]
fn audit_is_inconclusive_when_every_finding_depends_on_an_unknown_outcome() {
    let broken = stdout(&fencelab(&["run", "paused-worker/broken", "--format", "jsonl"]));
    // A's late write (line 20) never answered: nobody knows whether db applied it.
    let mut lines: Vec<String> = broken.lines().map(String::from).collect();
    let late: serde_json::Value = serde_json::from_str(&lines[19]).unwrap();
    let arrived = &late["event"]["write_arrived"];
    let mut unknown = serde_json::Map::new();
    for key in ["worker", "message", "store", "path", "data", "request"] {
        unknown.insert(key.into(), arrived[key].clone());
    }
    let event = serde_json::json!({ "write_unknown": unknown });
    lines[19] = serde_json::json!({ "at": late["at"], "event": event }).to_string();
    let maybe = fencelab_with_stdin(&["audit", "-", "--json"], &lines.join("\n"));
    assert_eq!(maybe.status.code(), Some(3), "{}", stderr(&maybe));
    let report: serde_json::Value = serde_json::from_str(&stdout(&maybe)).unwrap();
    assert_eq!(report["certain"], 0);
    let first = &report["files"][0]["findings"][0];
    assert_eq!(first["invariant"], "stale_write_accepted");
    assert_eq!(first["possible"], true);
    assert_eq!(first["line"], 20);
}

#[test]
fn audit_judges_every_file_even_when_one_cannot_be_read_and_keeps_witnesses_of_same_named_files_apart(
) {
    let broken = stdout(&fencelab(&["run", "paused-worker/broken", "--format", "jsonl"]));
    let dir = std::env::temp_dir().join(format!("fencelab-two-{}", std::process::id()));
    let (a, b) = (dir.join("a/run.jsonl"), dir.join("b/run.jsonl"));
    for file in [&a, &b] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, &broken).unwrap();
    }
    let out = dir.join("w");
    let args = ["audit", "/no/such.jsonl", a.to_str().unwrap(), b.to_str().unwrap(), "--json"];
    let found = fencelab(&[&args[..], &["--witnesses", out.to_str().unwrap()]].concat());
    // The unreadable file is bad input, named; the others are judged all the same.
    assert_eq!(found.status.code(), Some(2));
    assert!(stderr(&found).contains("cannot read /no/such.jsonl"), "{}", stderr(&found));
    let report: serde_json::Value = serde_json::from_str(&stdout(&found)).unwrap();
    assert_eq!(report["files"].as_array().unwrap().len(), 2);
    assert_eq!(report["unreadable"][0]["file"], "/no/such.jsonl");
    assert_eq!(report["files"][0]["findings"][0]["at"], 19);
    // Two files named run.jsonl keep their witnesses apart.
    for name in
        ["run-finding-1-stale_write_accepted.jsonl", "run-2-finding-1-stale_write_accepted.jsonl"]
    {
        assert!(out.join(name).is_file(), "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_run_file_without_its_format_and_pretty_json_given_to_audit_are_named_for_what_they_are() {
    let dir = std::env::temp_dir().join(format!("fencelab-run-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let mut engine = fencelab_core::Engine::new(
        fencelab_core::stories::library::scenario("paused-worker", Some("fenced")).unwrap(),
    )
    .unwrap();
    engine.run().unwrap();
    let mut run: serde_json::Value =
        serde_json::from_str(&fencelab_core::record::export::RunExport::capture(&engine).to_json())
            .unwrap();
    run.as_object_mut().unwrap().remove("format");
    let file = dir.join("edited.json");
    std::fs::write(&file, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    let out = fencelab(&["run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a Fencelab run: the \"format\" field is missing"),
        "{}",
        stderr(&out)
    );

    // A history is JSON Lines; a pretty-printed scenario handed to `audit` is named as such.
    let out = fencelab(&["audit", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let said = stderr(&out);
    std::fs::remove_dir_all(&dir).ok();
    assert!(said.contains("looks like JSON spread over several lines"), "{said}");
}

#[test]
fn run_warns_when_a_loss_finds_nothing_and_when_a_worker_never_finishes() {
    use fencelab_core::{format::model::Fault, Engine, Event};
    let scenario =
        fencelab_core::stories::library::scenario("paused-worker", Some("fenced")).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    // Lose A's first grant on its way: A waits for it forever.
    let grant = loop {
        let record = engine.step().unwrap().expect("the run grants a lease").clone();
        if let Event::LeaseGranted { worker, .. } = &record.event {
            if worker == "A" {
                break engine.possible_faults().into_iter().find_map(|f| match f {
                    Fault::LoseMessage { message } => Some(message),
                    _ => None,
                });
            }
        }
    }
    .expect("the grant is on its way");
    engine.inject(Fault::LoseMessage { message: grant }).unwrap();
    engine.inject(Fault::LoseMessage { message: 9_999 }).unwrap();
    engine.run().unwrap();
    let mut scenario = engine.scenario().clone();
    scenario.schedule = engine.schedule_so_far();
    let file =
        std::env::temp_dir().join(format!("fencelab-lost-grant-{}.json", std::process::id()));
    std::fs::write(&file, scenario.to_json()).unwrap();
    let out = fencelab(&["run", file.to_str().unwrap()]);
    std::fs::remove_file(&file).ok();
    let said = stderr(&out);
    assert!(said.contains("message 9999 was to be lost, but it was not on its way"), "{said}");
    assert!(said.contains("warning: ") && said.contains("A never finished"), "{said}");
}

#[test]
fn new_prints_a_commented_scenario_that_runs_as_it_is() {
    let out = fencelab(&["new"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("// "), "{text}");
    let dir = std::env::temp_dir().join(format!("fencelab-cli-new-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f.json");
    std::fs::write(&path, &text).unwrap();
    let out = fencelab(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = stdout(&out);
    assert!(run.contains("A freezes for 15 ticks"), "{run}");
    assert!(run.contains("db rejects A's write"), "{run}");
    assert!(run.contains("verdict: MET"), "{run}");
    // The file's own suggestion: unfenced, the same story breaks.
    let unfenced = text.replace(r#""enforcement": "fenced" }"#, r#""enforcement": "unfenced" }"#);
    assert_ne!(unfenced, text);
    std::fs::write(&path, unfenced).unwrap();
    let out = fencelab(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("unexpected: stale_write_accepted"), "{}", stdout(&out));
    let out = fencelab(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn new_help_says_what_the_file_is_and_where_its_fields_are() {
    let out = fencelab(&["new", "--help"]);
    assert!(out.status.success());
    let help = stdout(&out);
    for words in
        ["`//` comments (JSONC)", "fencelab run my-story.json", "docs/scenario-reference.md"]
    {
        assert!(help.contains(words), "{words} missing from:\n{help}");
    }
}

#[test]
fn a_flag_that_would_be_ignored_is_an_error() {
    let dir = std::env::temp_dir().join(format!("fencelab-cli-ignored-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("story.json");
    std::fs::write(&scenario, stdout(&fencelab(&["show", "paused-worker/fenced"]))).unwrap();
    let history = dir.join("run.jsonl");
    std::fs::write(&history, stdout(&fencelab(&["run", "paused-worker", "--format", "jsonl"])))
        .unwrap();
    let (scenario, history) = (scenario.to_str().unwrap(), history.to_str().unwrap());
    let file_variant = "--variant broken picks a variant of a built-in scenario, but";
    let cases: [(&[&str], &str); 8] = [
        (&["run", scenario, "--variant", "broken"], file_variant),
        (&["check", scenario, "--variant", "broken"], file_variant),
        (&["show", scenario, "--variant", "broken"], file_variant),
        (&["export", scenario, "--variant", "broken", "--to", "jsonl"], file_variant),
        (&["export", history, "--variant", "broken", "--to", "mermaid"], file_variant),
        (
            &["run", "paused-worker/fenced", "--variant", "broken"],
            "the variant is given twice, as paused-worker/fenced and as --variant broken",
        ),
        (
            &["audit", history, "--format", "jsonl", "--pattern", "x"],
            "--pattern reads text logs, but --format jsonl reads no pattern",
        ),
        (
            &["export", history, "--pattern", "x", "--variant", "broken", "--to", "jsonl"],
            file_variant,
        ),
    ];
    for (args, message) in cases {
        let out = fencelab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn render_prints_a_still_as_a_figure_or_an_svg_and_names_a_step_past_the_end() {
    let figure = fencelab(&[
        "render",
        "paused-worker/broken",
        "--step",
        "19",
        "--link",
        "/fencelab/index.html#scenario=paused-worker&variant=broken&step=19",
    ]);
    assert!(figure.status.success(), "{}", stderr(&figure));
    let html = stdout(&figure);
    assert!(html.starts_with("<figure class=\"fencelab-still\""), "{html}");
    assert!(html.contains("· step 19 of 20</span>"), "{html}");
    assert!(html.contains("Broken: stale write accepted"), "{html}");
    assert!(html.contains(
        "href=\"/fencelab/index.html#scenario=paused-worker&amp;variant=broken&amp;step=19\""
    ));
    // --player links to the whole page at the same step, not to the bare player.
    let player = fencelab(&["render", "paused-worker/broken", "--player", "/fencelab/"]);
    assert!(player.status.success(), "{}", stderr(&player));
    assert!(
        stdout(&player).contains(
            "href=\"/fencelab/index.html#scenario=paused-worker&amp;variant=broken&amp;step=19\""
        ),
        "{}",
        stdout(&player)
    );
    let svg = fencelab(&[
        "render",
        "paused-worker",
        "--variant",
        "fenced",
        "--to",
        "svg",
        "--theme",
        "dark",
    ]);
    assert!(svg.status.success(), "{}", stderr(&svg));
    assert!(stdout(&svg).starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    // No step: the key step, just after the refused stale write, and the step a player needs.
    assert!(stdout(&svg).contains("after step 19 of 20"), "{}", stdout(&svg));
    assert!(stderr(&svg).contains("step=\"19\""), "{}", stderr(&svg));
    let past = fencelab(&["render", "paused-worker", "--step", "99"]);
    assert_eq!(past.status.code(), Some(2));
    assert!(
        stderr(&past)
            .contains("--step 99: paused-worker (fenced) has 20 steps; use a step from 0 to 20"),
        "{}",
        stderr(&past)
    );
    let link = fencelab(&["render", "paused-worker", "--to", "svg", "--link", "x"]);
    assert_eq!(link.status.code(), Some(2));
    assert!(stderr(&link).contains("--link and --player go with --to html"), "{}", stderr(&link));
    let unknown = fencelab(&["render", "paused-wroker"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("\"paused-wroker\""), "{}", stderr(&unknown));
}
