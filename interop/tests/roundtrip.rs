//! Every built-in story and variant, run to its end, written as a Jepsen history (JSON and EDN)
//! and read back: the same history, judged the same way.

use fencelab_core::stories::library;
use fencelab_core::{Checker, Engine, History};
use fencelab_interop::jepsen::{
    read_jepsen, read_jepsen_edn, read_jepsen_json, to_jepsen_edn, to_jepsen_json,
};

fn histories() -> Vec<(String, History)> {
    library::all()
        .into_iter()
        .map(|scenario| {
            let label = format!("{}/{}", scenario.name, scenario.variant);
            let mut engine = Engine::new(scenario).expect("a built-in scenario compiles");
            engine.run().expect("a built-in scenario runs");
            (label, engine.history())
        })
        .collect()
}

#[test]
fn every_story_survives_jepsen_json() {
    let all = histories();
    assert!(all.len() > 20, "the library lists its stories");
    for (label, history) in all {
        let text = to_jepsen_json(&history);
        let read = read_jepsen_json(&text).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(read.skipped, 0, "{label}");
        assert_eq!(read.history, history, "{label}");
        assert_eq!(Checker::judge(&read.history), Checker::judge(&history), "{label}");
        // The sniffing reader takes the same path.
        assert_eq!(read_jepsen(&text).map(|r| r.history).ok(), Some(history), "{label}");
    }
}

#[test]
fn every_story_survives_jepsen_edn() {
    for (label, history) in histories() {
        let text = to_jepsen_edn(&history);
        let read = read_jepsen_edn(&text).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(read.history, history, "{label}");
        assert_eq!(Checker::judge(&read.history), Checker::judge(&history), "{label}");
        assert_eq!(read_jepsen(&text).map(|r| r.history).ok(), Some(history), "{label}");
    }
}

#[test]
fn one_op_per_line_reads_like_a_vector() {
    let (label, history) = histories().swap_remove(0);
    let edn = to_jepsen_edn(&history);
    let lines = edn.trim().trim_start_matches('[').trim_end_matches(']').to_string();
    let read = read_jepsen_edn(&lines).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(read.history, history);
    let json = to_jepsen_json(&history);
    let lines: String = json
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| format!("{}\n", l.trim_end_matches(',')))
        .collect();
    let read = read_jepsen_json(&lines).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(read.history, history);
}

#[test]
fn wall_clock_times_survive_both_formats() {
    let (label, mut history) = histories().swap_remove(0);
    for (i, entry) in history.entries.iter_mut().enumerate() {
        entry.wall_ns = (i % 3 != 0).then_some(1_714_564_800_000_000_000 + entry.at.0 * 1_000_000);
    }
    let json =
        read_jepsen_json(&to_jepsen_json(&history)).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(json.history, history);
    let edn = read_jepsen_edn(&to_jepsen_edn(&history)).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(edn.history, history);
}

#[test]
fn every_fault_a_reader_can_inject_survives_jepsen_json() {
    let mut tried = 0;
    for scenario in library::all() {
        let mut probe = Engine::new(scenario.clone()).expect("compiles");
        probe.run().expect("runs");
        let middle = probe.position() / 2;
        probe.rewind(middle).expect("rewinds");
        for fault in probe.possible_faults() {
            let mut engine = Engine::new(scenario.clone()).expect("compiles");
            engine.seek(middle).expect("seeks");
            engine.inject(fault.clone()).expect("a possible fault injects");
            engine.run().expect("runs on");
            let history = engine.history();
            let label = format!("{}/{} with {fault:?}", scenario.name, scenario.variant);
            let read = read_jepsen_json(&to_jepsen_json(&history))
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(read.skipped, 0, "{label}");
            assert_eq!(read.history, history, "{label}");
            tried += 1;
        }
    }
    assert!(tried > 200, "only {tried} faults were tried");
}

/// A history read from clients' calls keeps its windows (`by`) and its unobserved authority
/// when written as a Jepsen history and read back.
#[test]
fn windows_read_from_calls_survive_both_formats() {
    let calls = r#"{:type :invoke, :process 0, :f :acquire, :time 0, :value {:resource "lock"}}
{:type :ok, :process 0, :f :acquire, :time 1000000, :value {:resource "lock" :generation 1 :ttl 10000}}
{:type :invoke, :process 1, :f :acquire, :time 2000000, :value {:resource "lock"}}
{:type :invoke, :process 0, :f :release, :time 5000000}
{:type :ok, :process 0, :f :release, :time 6000000, :value {:resource "lock"}}
{:type :ok, :process 1, :f :acquire, :time 7000000, :value {:resource "lock" :generation 2 :ttl 10000}}"#;
    let history = read_jepsen_edn(calls).expect("the calls read").history;
    let windows: Vec<_> =
        history.entries.iter().filter_map(|e| e.by.map(|by| (e.at.0, by.0))).collect();
    assert_eq!(windows, [(0, 1), (2, 7), (5, 6)], "{history:#?}");
    for text in [to_jepsen_edn(&history), to_jepsen_json(&history)] {
        let read = read_jepsen(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(read.history, history);
        assert_eq!(Checker::judge(&read.history), Checker::judge(&history));
    }
}
