//! Two real threads under a forced interleaving: the older worker reads, pauses, and resumes only
//! after the newer worker's write has committed.

use crate::support::*;
use fencelab_core::*;
use fencelab_core::{
    fence::boundary::FencedResource, fence::idempotency::Retention, fence::register::Applied,
    fence::register::SameGenerationPolicy, fence::register::WriteRejection, fence::shared::Shared,
};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;

/// Runs the interleaving against any store: `read` is the old worker's read, `write` its (maybe
/// non-atomic) write; `newer` is the new owner's write. Returns the old worker's result.
fn race<R: Send + 'static>(
    old_read_then_write: impl FnOnce(&Barrier, &Barrier) -> R + Send + 'static,
    newer_write: impl FnOnce() + Send + 'static,
) -> R {
    let read_done = Arc::new(Barrier::new(2));
    let newer_committed = Arc::new(Barrier::new(2));
    let (r, c) = (Arc::clone(&read_done), Arc::clone(&newer_committed));
    let old = thread::spawn(move || old_read_then_write(&r, &c));
    read_done.wait(); // The old worker has read and is now "paused".
    let newer = thread::spawn(newer_write);
    newer.join().expect("newer worker");
    newer_committed.wait(); // Only now does the old worker resume.
    old.join().expect("old worker")
}

#[test]
fn the_fenced_write_of_the_paused_worker_is_rejected() {
    let store = Shared::new(register(SameGenerationPolicy::AllowSame));
    store.write(&write(7, "a-0", "A started")).unwrap();

    let old_store = store.clone();
    let new_store = store.clone();
    let result = race(
        move |read_done, resumed| {
            let seen = old_store.snapshot();
            read_done.wait();
            resumed.wait();
            let value = format!("A recomputed from {}", seen.value().unwrap_or("nothing"));
            old_store.write(&write(7, "a-1", &value))
        },
        move || {
            new_store.write(&write(8, "b-1", "B completed")).unwrap();
        },
    );

    assert_eq!(result, Err(WriteRejection::Stale { presented: g(7), highest: g(8) }));
    let after = store.snapshot();
    assert_eq!(after.value(), Some("B completed"));
    assert_eq!(after.highest(), Some(g(8)));
}

/// A deliberately broken store: it checks the token under one lock acquisition and writes under
/// another, so a write can slip in between. This is the check-then-write mistake.
#[derive(Default)]
struct ReadThenWrite {
    state: Mutex<(Option<Generation>, String)>,
}

impl ReadThenWrite {
    fn check(&self, token: Generation) -> bool {
        let highest = self.state.lock().unwrap().0;
        highest.is_none_or(|h| token >= h)
    }

    fn write_unconditionally(&self, token: Generation, value: &str) {
        *self.state.lock().unwrap() = (Some(token), value.to_string());
    }
}

#[test]
fn a_read_then_write_store_lets_the_stale_write_through_under_the_same_interleaving() {
    let store = Arc::new(ReadThenWrite::default());
    store.write_unconditionally(g(7), "A started");

    let (old_store, new_store) = (Arc::clone(&store), Arc::clone(&store));
    let passed_check = race(
        move |read_done, resumed| {
            let ok = old_store.check(g(7));
            read_done.wait();
            resumed.wait();
            if ok {
                old_store.write_unconditionally(g(7), "A stale");
            }
            ok
        },
        move || {
            assert!(new_store.check(g(8)));
            new_store.write_unconditionally(g(8), "B completed");
        },
    );

    assert!(passed_check, "the old worker's check ran before the newer write");
    let (highest, value) = store.state.lock().unwrap().clone();
    assert_eq!(value, "A stale", "the stale write overwrote the newer value");
    assert_eq!(highest, Some(g(7)), "and the highest generation went backwards");
}

#[test]
fn many_threads_never_see_accepted_generations_go_backwards() {
    let store = Shared::new(FencedResource::new(
        register(SameGenerationPolicy::AllowSame),
        Retention::FOREVER,
    ));
    let handles: Vec<_> = (1..=8u64)
        .map(|token| {
            let store = store.clone();
            thread::spawn(move || {
                (0..200)
                    .filter_map(|i| {
                        let req = write(token, &format!("w{token}-{i}"), &format!("from {token}"));
                        match store.write(&req, Tick(i)) {
                            WriteOutcome::Applied(a) => Some(a),
                            _ => None,
                        }
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut applied: Vec<Applied> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    applied.sort_by_key(|a| a.revision);
    assert!(applied.windows(2).all(|w| w[0].generation <= w[1].generation));
    assert_eq!(applied.last().unwrap().revision, store.snapshot().register.revision());
    let final_state = store.snapshot();
    assert_eq!(final_state.register.highest(), Some(applied.last().unwrap().generation));
}
