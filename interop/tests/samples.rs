//! The sample files in examples/histories read, and show the findings they were written to show.

use fencelab_core::history::event::Event;
use fencelab_core::{invariant::InvariantKind, Checker};
use fencelab_interop::{jepsen, otlp, pattern, Imported};
use InvariantKind::*;

fn sample(name: &str) -> String {
    let path = format!("{}/../examples/histories/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn found(imported: &Imported) -> Vec<(InvariantKind, usize)> {
    Checker::judge(&imported.history).iter().map(|v| (v.invariant, v.step.index())).collect()
}

#[test]
fn the_jepsen_sample_shows_a_stale_write_and_an_unknown_outcome() {
    let imported = jepsen::read_jepsen(&sample("jepsen.edn")).unwrap_or_else(|e| panic!("{e}"));
    let entries = &imported.history.entries;
    // p0's late write is the last event; p1's timed-out write is unknown, not applied.
    let last = entries.len() - 1;
    assert!(matches!(&entries[last].event, Event::WriteArrived { worker, .. } if worker == "p0"));
    assert!(entries
        .iter()
        .any(|e| matches!(&e.event, Event::WriteUnknown { request, .. } if request.operation.as_str() == "b-2")));
    assert_eq!(
        found(&imported),
        [
            (StaleWriteAccepted, last),
            (WriteOutsideLease, last),
            (FinalValueNotFromLatestOwner, last)
        ]
    );
    assert_eq!(imported.history.setup.workers, ["p0", "p1"]);
    // The pause lasted from the nemesis's pause to its resume.
    assert!(entries.iter().any(|e| matches!(e.event, Event::Paused { ticks: 7293, .. })));
}

#[test]
fn the_otlp_sample_shows_a_stale_write_to_an_unfenced_store() {
    let imported = otlp::read_otlp(&sample("otlp.jsonl")).unwrap_or_else(|e| panic!("{e}"));
    let last = imported.history.entries.len() - 1;
    assert_eq!(
        found(&imported),
        [
            (StaleWriteAccepted, last),
            (WriteOutsideLease, last),
            (FinalValueNotFromLatestOwner, last)
        ]
    );
    // The span without a fencing name and the one that only carries the pause.
    assert_eq!(imported.skipped, 2);
    let store = imported.history.setup.store("orders-db").expect("the store is inferred");
    assert_eq!(store.paths[0].enforcement, fencelab_core::format::model::Enforcement::Unfenced);
    assert_eq!(imported.history.entries[0].wall_ns, Some(1_714_564_800_000_000_000));
}

#[test]
fn the_log_sample_shows_a_stale_write() {
    let re = sample("app.pattern");
    let imported =
        pattern::read_pattern(&sample("app.log"), re.trim_end()).unwrap_or_else(|e| panic!("{e}"));
    let last = imported.history.entries.len() - 1;
    assert_eq!(
        found(&imported),
        [
            (StaleWriteAccepted, last),
            (WriteOutsideLease, last),
            (FinalValueNotFromLatestOwner, last)
        ]
    );
    // Two heartbeats and the start-up line.
    assert_eq!(imported.skipped, 3);
    assert_eq!(imported.history.setup.workers, ["worker-a", "worker-b"]);
}

#[test]
fn the_jepsen_timeout_sample_shows_only_possible_findings() {
    let imported =
        jepsen::read_jepsen(&sample("jepsen-timeout.edn")).unwrap_or_else(|e| panic!("{e}"));
    let found = Checker::judge(&imported.history);
    let last = imported.history.entries.len() - 1;
    let kinds: Vec<_> = found.iter().map(|v| (v.invariant, v.step.index(), v.possible)).collect();
    assert_eq!(
        kinds,
        [
            (StaleWriteAccepted, last, true),
            (WriteOutsideLease, last, true),
            (FinalValueNotFromLatestOwner, last, true)
        ]
    );
    assert!(found[0].detail.contains("may have accepted p0's write"), "{}", found[0].detail);
}
