//! Real recorded runs against the SQLite store: both modes, judged by the checker, and the
//! checked-in sample histories. Each run takes about 0.6 s of real time (a 150 ms lease and a
//! 600 ms pause); the tests run in parallel.

use fencelab_core::{
    fence::register::WriteRejection, history::Entry, invariant::InvariantKind, Checker, Event,
    Generation, History, Violation, WriteOutcome,
};
use fencelab_sqlite::record::{record_run, Mode, RecordError, Timings, RESOURCE, STORE};
use std::time::Duration;

const FENCED_SAMPLE: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/histories/sqlite-fenced.jsonl"));
const UNFENCED_SAMPLE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/histories/sqlite-unfenced.jsonl"
));

fn g(token: u64) -> Generation {
    Generation::new(token).unwrap()
}

/// Records a run and checks that it reads back from its JSON Lines unchanged.
fn recorded(mode: Mode) -> History {
    let history = record_run(mode, Timings::default()).unwrap_or_else(|e| panic!("{mode}: {e}"));
    let read = History::from_jsonl(&history.to_jsonl()).unwrap_or_else(|e| panic!("{mode}: {e}"));
    assert_eq!(read, history, "{mode}: the history changed on its way through JSON Lines");
    history
}

/// The arrival of `worker`'s `n`th write (from 1).
fn arrival<'h>(history: &'h History, worker: &str, n: usize) -> (usize, &'h Event) {
    let mut arrivals =
        history.entries.iter().enumerate().filter(
            |(_, e)| matches!(&e.event, Event::WriteArrived { worker: w, .. } if w == worker),
        );
    let (step, entry) = arrivals.nth(n - 1).unwrap_or_else(|| panic!("{worker} wrote < {n} times"));
    (step, &entry.event)
}

fn at(history: &History, wanted: impl Fn(&Event) -> bool) -> u64 {
    history.entries.iter().find(|e| wanted(&e.event)).map(|e: &Entry| e.at.0).unwrap()
}

/// What every run of the story shows, whatever the store does with the late write: the grants
/// in order with rising generations, B refused while A holds the lease, A's lease expiring
/// before B's grant, a real pause, and A's late write after B's.
fn assert_the_story(history: &History, mode: Mode) {
    let setup = &history.setup;
    assert_eq!(setup.workers, ["A", "B"]);
    assert_eq!(setup.resources, [RESOURCE]);
    assert_eq!(setup.stores.len(), 1);
    assert_eq!(setup.stores[0].name, STORE);
    assert_eq!(setup.stores[0].paths[0].enforcement, mode.enforcement());
    assert!(history.entries.iter().all(|e| e.wall_ns.is_some()), "every entry has a wall time");

    let grants: Vec<_> = history
        .entries
        .iter()
        .filter_map(|e| match &e.event {
            Event::LeaseGranted { worker, generation, .. } => Some((worker.as_str(), *generation)),
            _ => None,
        })
        .collect();
    assert_eq!(grants, [("A", g(1)), ("B", g(2))]);
    let busy = at(
        history,
        |e| matches!(e, Event::LeaseBusy { worker, holder, .. } if worker == "B" && holder == "A"),
    );
    let expired = at(
        history,
        |e| matches!(e, Event::LeaseExpired { worker, generation, .. } if worker == "A" && *generation == g(1)),
    );
    let b_granted =
        at(history, |e| matches!(e, Event::LeaseGranted { worker, .. } if worker == "B"));
    assert!(busy <= expired && expired <= b_granted, "{busy} {expired} {b_granted}");
    // Time is milliseconds since the start: B waits out A's 150 ms lease.
    assert!(b_granted >= 150, "B was granted the lease at {b_granted} ms");

    let paused = at(history, |e| matches!(e, Event::Paused { worker, .. } if worker == "A"));
    let resumed = at(
        history,
        |e| matches!(e, Event::Resumed { worker, still_owner: false, current, .. } if worker == "A" && *current == Some(g(2))),
    );
    assert!(
        resumed - paused >= 600,
        "A slept {} ms, not the 600 it was meant to",
        resumed - paused
    );

    let (b_step, b_write) = arrival(history, "B", 1);
    let Event::WriteArrived { outcome, .. } = b_write else { unreachable!() };
    assert!(outcome.is_applied(), "{outcome:?}");
    let (late_step, late) = arrival(history, "A", 2);
    assert!(late_step > b_step, "A's late write must come after B's");
    let Event::WriteArrived { request, enforcement, highest_before, .. } = late else {
        unreachable!()
    };
    assert_eq!(request.generation, g(1));
    assert_eq!(*enforcement, mode.enforcement());
    assert_eq!(*highest_before, Some(g(2)));
}

fn only(found: &[Violation], kind: InvariantKind) -> Vec<&Violation> {
    found.iter().filter(|v| v.invariant == kind).collect()
}

/// In the unfenced history the late write applies over B's value, and the checker names it.
fn assert_unfenced_verdict(history: &History) {
    let (late_step, late) = arrival(history, "A", 2);
    let Event::WriteArrived { outcome, value_after, highest_after, .. } = late else {
        unreachable!()
    };
    assert!(outcome.is_applied(), "an unfenced store applies the stale write: {outcome:?}");
    assert!(value_after.as_deref().is_some_and(|v| v.starts_with("A: ")), "{value_after:?}");
    // The unchecked write records the generation it was given, as the simulator's does.
    assert_eq!(*highest_after, Some(g(1)));

    let found = Checker::judge(history);
    let stale = only(&found, InvariantKind::StaleWriteAccepted);
    assert_eq!(stale.len(), 1, "{found:#?}");
    assert_eq!(
        stale[0].step.index(),
        late_step,
        "the finding points at A's late write: {found:#?}"
    );
    assert!(stale[0].detail.contains("accepted A's write"), "{}", stale[0].detail);
    assert!(stale[0].detail.contains("B presented a newer one"), "{}", stale[0].detail);
    assert_eq!(only(&found, InvariantKind::FinalValueNotFromLatestOwner).len(), 1, "{found:#?}");
}

/// In the fenced history the late write is refused as stale, B's value stays, and the checker
/// finds nothing.
fn assert_fenced_verdict(history: &History) {
    let (_, late) = arrival(history, "A", 2);
    let Event::WriteArrived { outcome, value_after, highest_after, .. } = late else {
        unreachable!()
    };
    let stale = WriteRejection::Stale { presented: g(1), highest: g(2) };
    assert_eq!(*outcome, WriteOutcome::Rejected(stale));
    assert_eq!(value_after.as_deref(), Some("B: balance=120"));
    assert_eq!(*highest_after, Some(g(2)));
    let found = Checker::judge(history);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn an_unfenced_sqlite_store_accepts_the_paused_workers_late_write_and_the_checker_says_so() {
    let history = recorded(Mode::Unfenced);
    assert_the_story(&history, Mode::Unfenced);
    assert_unfenced_verdict(&history);
}

#[test]
fn the_fenced_sqlite_store_refuses_the_late_write_and_the_checker_finds_nothing() {
    let history = recorded(Mode::Fenced);
    assert_the_story(&history, Mode::Fenced);
    assert_fenced_verdict(&history);
}

#[test]
fn the_checked_in_sample_histories_read_and_judge_as_their_modes_promise() {
    let fenced = History::from_jsonl(FENCED_SAMPLE).unwrap();
    assert_the_story(&fenced, Mode::Fenced);
    assert_fenced_verdict(&fenced);
    let unfenced = History::from_jsonl(UNFENCED_SAMPLE).unwrap();
    assert_the_story(&unfenced, Mode::Unfenced);
    assert_unfenced_verdict(&unfenced);
}

#[test]
fn timings_without_a_lost_lease_are_refused_before_anything_runs() {
    let ms = Duration::from_millis;
    let same = record_run(Mode::Fenced, Timings { ttl: ms(100), pause: ms(100) });
    assert!(matches!(same, Err(RecordError::PauseTooShort { .. })), "{same:?}");
    let sub_ms =
        record_run(Mode::Fenced, Timings { ttl: Duration::from_micros(500), pause: ms(5) });
    assert!(matches!(sub_ms, Err(RecordError::Ttl(_))), "{sub_ms:?}");
}
