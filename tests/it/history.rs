//! The history at the centre: every run written as JSON Lines reads back identically, the
//! checker judges the read-back history exactly as the engine judged the run, and the diagram
//! drawn from it is the same.

use fencelab_core::check::Checker;
use fencelab_core::draw::diagram;
use fencelab_core::stories::library;
use fencelab_core::{history::History, history::HISTORY_VERSION};
use fencelab_core::{Engine, Scenario, Violation};
use fencelab_tests::soak::{fenced_scenario, rng_for};

fn stories() -> Vec<(String, Scenario)> {
    let mut all = Vec::new();
    for case in library::cases() {
        for variant in &case.variants {
            let scenario = library::scenario(&case.name, Some(variant)).unwrap();
            all.push((format!("{}/{variant}", case.name), scenario));
        }
    }
    for index in 0..300 {
        all.push((format!("random:{index}"), fenced_scenario(&mut rng_for(0x415_7041, index))));
    }
    all
}

/// Feeds a whole history to a fresh checker, entry by entry, as `Checker::judge` does.
fn check(history: &History) -> Vec<Violation> {
    let mut checker = Checker::new(history.setup.clone());
    let mut found: Vec<Violation> = history
        .entries
        .iter()
        .enumerate()
        .flat_map(|(step, entry)| checker.feed(step, entry).violations)
        .collect();
    found.extend(history.entries.len().checked_sub(1).map_or_else(Vec::new, |l| checker.finish(l)));
    assert_eq!(found, Checker::judge(history));
    found
}

#[test]
fn every_run_round_trips_through_json_lines_and_is_judged_and_drawn_the_same() {
    for (label, scenario) in stories() {
        let mut engine = Engine::new(scenario).unwrap();
        let verdict = engine.run().unwrap();
        let history = engine.history();
        assert_eq!(history.entries.len(), engine.records().len(), "{label}");
        let text = history.to_jsonl();
        assert_eq!(text.lines().count(), history.entries.len() + 1, "{label}");
        let back = History::from_jsonl(&text).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(back, history, "{label}");
        assert_eq!(check(&back), verdict.violations, "{label}");
        assert_eq!(
            diagram(&back, &verdict.violations),
            diagram(&history, &verdict.violations),
            "{label}"
        );
    }
}

#[test]
fn the_checker_needs_nothing_but_the_history() {
    // A stale write accepted: the checker, given only the history, finds it at the same step.
    let scenario = library::scenario("paused-worker", Some("broken")).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    let verdict = engine.run().unwrap();
    assert!(!verdict.violations.is_empty());
    let text = engine.history().to_jsonl();
    assert_eq!(check(&History::from_jsonl(&text).unwrap()), verdict.violations);
}

#[test]
fn a_history_file_that_cannot_be_read_names_its_line() {
    let scenario = library::scenario("paused-worker", None).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    engine.run().unwrap();
    let text = engine.history().to_jsonl();
    let mut lines: Vec<&str> = text.lines().collect();

    let err = History::from_jsonl("").unwrap_err();
    assert_eq!(err.to_string(), "line 1: the file is empty");

    let newer = text.replacen(
        &format!("\"fencelab_history\":{HISTORY_VERSION}"),
        "\"fencelab_history\":99",
        1,
    );
    let err = History::from_jsonl(&newer).unwrap_err();
    assert_eq!(err.line, 1);
    assert!(err.problem.contains("version 99 is not supported"), "{err}");

    lines[3] = r#"{"at": 4, "event": {"lease_granted": {"worker": "A"}}}"#;
    let err = History::from_jsonl(&lines.join("\n")).unwrap_err();
    assert_eq!(err.line, 4, "{err}");
    assert!(err.problem.contains("`event.lease_granted`: missing field `resource`"), "{err}");

    lines[3] = r#"{"at": 4, "event": {"lease_granted": "#;
    let err = History::from_jsonl(&lines.join("\n")).unwrap_err();
    assert_eq!(err.line, 4, "{err}");

    lines[3] = r#"{"at": 4, "event": {"teleported": {}}}"#;
    let err = History::from_jsonl(&lines.join("\n")).unwrap_err();
    assert!(err.problem.contains("`event`: unknown variant `teleported`"), "{err}");

    // An event that is not one kind holding its fields, and a version 1 line under this header.
    for (event, says) in [
        ("{}", "`event`: an event is an object with one key, its kind, holding its fields (this one has 0)"),
        (r#"{"released": {}, "paused": {}}"#, "(this one has 2)"),
        (r#""released", "worker": "A""#, "`event`: \"released\" is how version 1 named an event's kind"),
    ] {
        let line = format!(r#"{{"at": 4, "event": {event}}}"#);
        let mut edited = lines.clone();
        edited[3] = &line;
        let err = History::from_jsonl(&edited.join("\n")).unwrap_err();
        assert!(err.problem.contains(says), "{err}");
    }
}

/// A version 1 file, whose lines hold the event's kind in an `event` field beside its own
/// fields, reads as the same history, and its problems name fields as its lines write them.
#[test]
fn a_version_1_history_reads_as_the_same_history() {
    let scenario = library::scenario("paused-worker", Some("broken")).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    engine.run().unwrap();
    let history = engine.history();
    let v1 = version_1(&history);
    assert!(v1.lines().nth(1).unwrap().contains(r#""event":"lease_granted","generation":1,"#));
    assert_eq!(History::from_jsonl(&v1).unwrap(), history);

    let mut lines: Vec<String> = v1.lines().map(str::to_string).collect();
    lines[3] = r#"{"at": 4, "event": "lease_granted", "worker": "A"}"#.into();
    let err = History::from_jsonl(&lines.join("\n")).unwrap_err();
    assert_eq!((err.line, err.problem.as_str()), (4, "missing field `resource`"));
    lines[3] = r#"{"at": 4, "event": "released", "worker": "A", "resource": "totals", "generation": "one"}"#.into();
    let err = History::from_jsonl(&lines.join("\n")).unwrap_err();
    assert!(err.problem.starts_with("`generation`: positive integer token required"), "{err}");
    lines[3] = r#"{"at": 4, "event": "teleported"}"#.into();
    let err = History::from_jsonl(&lines.join("\n")).unwrap_err();
    assert!(err.problem.contains("unknown variant `teleported`"), "{err}");
    lines[3] = r#"{"at": 4, "event": {"released": {"worker": "A"}}}"#.into();
    let err = History::from_jsonl(&lines.join("\n")).unwrap_err();
    assert!(err.problem.starts_with("`event`: an object, as version 2 writes an event"), "{err}");
    lines[3] = r#"{"at": 4, "worker": "A"}"#.into();
    let err = History::from_jsonl(&lines.join("\n")).unwrap_err();
    assert_eq!(err.problem, "missing field `event` (the event's kind)");
    lines[3] = r#"{"at": "four", "event": "released", "worker": "A", "resource": "totals", "generation": 1}"#.into();
    let err = History::from_jsonl(&lines.join("\n")).unwrap_err();
    assert!(err.problem.starts_with("`at`: invalid type: string"), "{err}");
}

/// `history` as version 1 wrote it, made from the event's kind and fields the way that version
/// did, so the test does not read what it wrote with the code under test.
fn version_1(history: &History) -> String {
    use serde_json::{Map, Value};
    let head = serde_json::json!({"fencelab_history": 1, "setup": history.setup});
    let mut out = format!("{head}\n");
    for entry in &history.entries {
        let mut line = Map::new();
        line.insert("at".into(), entry.at.0.into());
        if let Some(wall) = entry.wall_ns {
            line.insert("wall_ns".into(), wall.into());
        }
        if let Some(by) = entry.by {
            line.insert("by".into(), by.0.into());
        }
        line.insert("event".into(), entry.event.kind().into());
        line.extend(entry.event.fields());
        out.push_str(&Value::Object(line).to_string());
        out.push('\n');
    }
    out
}

/// Every event of every story, taken apart into its kind and fields and put back, is itself:
/// the readers and writers of other formats rely on it.
#[test]
fn every_event_is_its_kind_and_fields() {
    for (label, scenario) in stories().into_iter().take(60) {
        let mut engine = Engine::new(scenario).unwrap();
        engine.run().unwrap();
        for entry in engine.history().entries {
            let event = &entry.event;
            let written = serde_json::to_value(event).unwrap();
            assert_eq!(written.as_object().unwrap().keys().collect::<Vec<_>>(), [event.kind()]);
            let back = fencelab_core::Event::from_fields(event.kind(), event.fields()).unwrap();
            assert_eq!(&back, event, "{label}");
        }
    }
}

/// The JSON Lines of `paused-worker/broken`, one string per line.
fn broken_lines() -> Vec<String> {
    let scenario = library::scenario("paused-worker", Some("broken")).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    engine.run().unwrap();
    engine.history().to_jsonl().lines().map(str::to_string).collect()
}

/// The first line holding `needle`, from 0.
fn line_with(lines: &[String], needle: &str) -> usize {
    lines.iter().position(|l| l.contains(needle)).unwrap()
}

fn refused(lines: &[String]) -> String {
    History::from_jsonl(&lines.join("\n")).unwrap_err().to_string()
}

#[test]
fn a_history_whose_parts_do_not_hold_together_is_refused_with_line_and_field() {
    let lines = broken_lines();
    let arrived = line_with(&lines, r#""event":{"write_arrived":{"worker":"A""#);
    let at = |i: usize| format!("line {}: ", i + 1);

    // An answer to a request nobody sent would be judged as nothing at all.
    let sent = line_with(&lines, r#""event":{"write_sent":{"worker":"A""#);
    let mut no_send = lines.clone();
    no_send.remove(sent);
    let err = refused(&no_send);
    assert!(err.starts_with(&at(arrived - 1)), "{err}");
    assert!(err.contains("`message`:") && err.contains("is not a write still on its way"), "{err}");

    // Names the setup does not list.
    for (from, to, field) in [
        (
            r#""store":"db""#,
            r#""store":"dbx""#,
            "`store`: \"dbx\" is not one of the setup's stores (db)",
        ),
        (
            r#""data":"primary""#,
            r#""data":"other""#,
            "`data`: path db/primary writes \"primary\", not \"other\"",
        ),
        (
            r#""worker":"A""#,
            r#""worker":"Z""#,
            "`worker`: \"Z\" is not one of the setup's workers (A, B)",
        ),
    ] {
        let mut edited = lines.clone();
        edited[arrived] = edited[arrived].replacen(from, to, 1);
        let err = refused(&edited);
        assert_eq!(err, format!("{}{field}", at(arrived)));
    }

    // Time that runs backwards.
    let mut edited = lines.clone();
    let last = edited.len() - 1;
    let earlier = edited[1].clone();
    edited.push(earlier);
    let err = refused(&edited);
    assert!(err.starts_with(&at(last + 1)) && err.contains("`at`: time runs backwards"), "{err}");

    // A field the event does not have, and a field of the wrong type, named by path.
    let mut edited = lines.clone();
    edited[arrived] = edited[arrived].replacen('{', r#"{"bogus":5,"#, 1);
    let err = refused(&edited);
    assert!(err.starts_with(&at(arrived)) && err.contains("unknown field `bogus`"), "{err}");
    let mut edited = lines.clone();
    edited[arrived] = edited[arrived].replacen(r#""generation":1"#, r#""generation":"one""#, 1);
    let err = refused(&edited);
    assert!(
        err.starts_with(&format!(
            "{}`event.write_arrived.request.generation`: positive integer token required (got the text \"one\")",
            at(arrived)
        )),
        "{err}"
    );

    // An event where the header belongs.
    let err = refused(&lines[1..]);
    assert!(err.starts_with("line 1: the first line must be the header"), "{err}");
}

#[test]
fn the_simulator_alone_produces_the_recorded_history() {
    use fencelab_core::{history::Entry, Simulator};
    let scenario = library::scenario("check-then-write", None).unwrap();
    let mut engine = Engine::new(scenario.clone()).unwrap();
    engine.run().unwrap();
    let sim = Simulator::new(scenario).unwrap();
    let (mut state, mut entries) = (sim.initial_state(), Vec::new());
    for record in engine.records() {
        let before = state.clone();
        let (next, event) = sim.step(&state, record.chosen).unwrap();
        assert_eq!(state, before, "step leaves the state it was given alone");
        entries.push(Entry::new(next.now, event));
        state = next;
    }
    assert!(state.finished);
    assert_eq!(entries, engine.history().entries);
    let err = sim.step(&state, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("the run has ended after {} steps: no event is left to run", entries.len())
    );
}

#[test]
fn every_story_writes_a_mermaid_diagram_whose_messages_name_declared_participants() {
    use fencelab_core::draw::mermaid;
    for (label, scenario) in stories().into_iter().take(60) {
        let mut engine = Engine::new(scenario).unwrap();
        let verdict = engine.run().unwrap();
        let text = mermaid(&engine.history(), &verdict.violations);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("sequenceDiagram"), "{label}");
        let mut declared = Vec::new();
        let mut notes = 0;
        for line in lines {
            let line = line.strip_prefix("    ").unwrap_or_else(|| panic!("{label}: {line}"));
            assert!(!line.contains(';') && !line.contains('#'), "{label}: {line}");
            if let Some(rest) = line.strip_prefix("participant ") {
                declared.push(rest.split(" as ").next().unwrap().to_string());
            } else if let Some(rest) = line.strip_prefix("Note over ") {
                let who = rest.split(':').next().unwrap();
                assert!(declared.iter().any(|d| d == who), "{label}: {line}");
                notes += usize::from(rest.contains(" broken: "));
            } else {
                let (arrow, _) = line.split_once(": ").unwrap_or_else(|| panic!("{label}: {line}"));
                let (from, to) = arrow
                    .split_once("-->>")
                    .or_else(|| arrow.split_once("->>"))
                    .unwrap_or_else(|| panic!("{label}: {line}"));
                assert!(declared.iter().any(|d| d == from), "{label}: {line}");
                assert!(declared.iter().any(|d| d == to), "{label}: {line}");
            }
        }
        assert_eq!(notes, verdict.violations.len(), "{label}: one note per finding");
    }
}

mod fuzz {
    use super::*;
    use fencelab_core::history::JsonlParser;
    use proptest::prelude::*;

    /// Feeds every line of `text` to a fresh parser. It must answer every line with an entry,
    /// nothing, or an error naming that very line, and never panic.
    fn feed(text: &str) -> Result<usize, String> {
        let mut parser = JsonlParser::new();
        let mut entries = 0;
        for (n, line) in text.lines().enumerate() {
            match parser.line(line) {
                Ok(entry) => entries += usize::from(entry.is_some()),
                Err(e) => {
                    assert_eq!(e.line, n + 1, "{e}");
                    assert!(!e.problem.is_empty());
                    return Err(e.to_string());
                }
            }
        }
        Ok(entries)
    }

    fn history_lines() -> Vec<String> {
        let scenario = library::scenario("idempotent-retry", None).unwrap();
        let mut engine = Engine::new(scenario).unwrap();
        engine.run().unwrap();
        engine.history().to_jsonl().lines().map(str::to_string).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

        /// Arbitrary bytes, read as text the way a reader of files does.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            let _ = feed(&String::from_utf8_lossy(&bytes));
        }

        /// A real history with one line cut, doubled, swapped, truncated or given a new value in
        /// one field: read whole, or refused at a line, never a panic.
        #[test]
        fn damaged_histories_are_read_or_refused_at_a_line(
            pick in 0usize..1_000, how in 0u8..5, at in 0usize..400, value in any::<i64>()
        ) {
            let mut lines = history_lines();
            let i = pick % lines.len();
            match how {
                0 => { lines.remove(i); }
                1 => { let copy = lines[i].clone(); lines.insert(i, copy); }
                2 => { let j = (i + 1) % lines.len(); lines.swap(i, j); }
                3 => { let cut = at.min(lines[i].len()); lines[i].truncate(cut); }
                _ => {
                    // The first number at or after `at` becomes `value`.
                    let line = &lines[i];
                    let start = line[at.min(line.len())..].find(|c: char| c.is_ascii_digit()).map(|p| p + at.min(line.len()));
                    if let Some(start) = start {
                        let end = line[start..].find(|c: char| !c.is_ascii_digit()).map_or(line.len(), |e| start + e);
                        lines[i] = format!("{}{value}{}", &line[..start], &line[end..]);
                    }
                }
            }
            let _ = feed(&lines.join("\n"));
        }
    }
}
