//! The article's exercise: operation ids with stored results, and what bounded retention costs.

use crate::support::*;
use fencelab_core::*;
use fencelab_core::{
    fence::boundary::FencedResource, fence::idempotency::ForgetReason,
    fence::idempotency::IdempotencyStore, fence::idempotency::Retention,
    fence::idempotency::StoredResult, fence::register::Applied, fence::register::Revision,
    fence::register::SameGenerationPolicy, fence::register::WriteRejection,
};
use std::num::NonZeroUsize;

fn resource(retention: Retention) -> FencedResource {
    FencedResource::new(register(SameGenerationPolicy::AllowSame), retention)
}

#[test]
fn a_repeated_operation_returns_its_stored_result_and_applies_nothing() {
    let mut r = resource(Retention::FOREVER);
    let first = r.write(&write(7, "op-1", "debit 10"), Tick(1));
    let WriteOutcome::Applied(applied) = first else { panic!("{first:?}") };
    let before = r.register.clone();
    let again = r.write(&write(7, "op-1", "debit 10"), Tick(2));
    assert_eq!(
        again,
        WriteOutcome::Replayed(StoredResult { generation: g(7), applied, recorded_at: Tick(1) })
    );
    assert_eq!(r.register, before);
}

#[test]
fn a_different_operation_in_the_same_generation_applies() {
    let mut r = resource(Retention::FOREVER);
    assert!(r.write(&write(7, "op-1", "debit 10"), Tick(1)).is_applied());
    let second = r.write(&write(7, "op-2", "debit 5"), Tick(2));
    assert!(matches!(second, WriteOutcome::Applied(Applied { revision: Revision(2), .. })));
}

#[test]
fn an_older_generation_fails_even_with_a_new_operation_id() {
    let mut r = resource(Retention::FOREVER);
    r.write(&write(8, "op-1", "from 8"), Tick(1));
    let out = r.write(&write(7, "brand-new", "from 7"), Tick(2));
    assert_eq!(
        out,
        WriteOutcome::Rejected(WriteRejection::Stale { presented: g(7), highest: g(8) })
    );
    // A stale owner's retry of a remembered id is still stale: the fence runs first.
    r.write(&write(8, "op-2", "from 8 again"), Tick(3));
    let retry = r.write(&write(7, "op-2", "from 7"), Tick(4));
    assert!(matches!(retry, WriteOutcome::Rejected(WriteRejection::Stale { .. })));
    assert_eq!(r.register.value(), Some("from 8 again"));
}

#[test]
fn capacity_retention_forgets_the_oldest_and_records_it() {
    let mut r = resource(Retention { max_entries: NonZeroUsize::new(2), max_age: None });
    for (t, id) in [(1, "a"), (2, "b"), (3, "c")] {
        r.write(&write(1, id, id), Tick(t));
    }
    let remembered: Vec<_> = r.idempotency.remembered().map(|(id, _)| id.as_str()).collect();
    assert_eq!(remembered, ["b", "c"]);
    let forgotten = r.idempotency.forgotten();
    assert_eq!(forgotten.len(), 1);
    assert_eq!(forgotten[0].operation, op("a"));
    assert_eq!(forgotten[0].at, Tick(3));
    assert!(matches!(forgotten[0].reason, ForgetReason::Capacity { .. }));
}

#[test]
fn age_retention_forgets_after_max_age_and_explicit_forget_is_recorded() {
    let mut store = IdempotencyStore::new(Retention { max_entries: None, max_age: Some(10) });
    let applied = Applied { generation: g(1), revision: Revision(1) };
    let stored = |t| StoredResult { generation: g(1), applied, recorded_at: Tick(t) };
    store.record(op("a"), stored(0));
    store.record(op("b"), stored(5));
    assert!(store.expire(Tick(9)).is_empty());
    let gone = store.expire(Tick(10));
    assert_eq!(gone.iter().map(|f| f.operation.as_str()).collect::<Vec<_>>(), ["a"]);
    assert_eq!(gone[0].reason, ForgetReason::Age { max_age: 10 });
    let explicit = store.forget(&op("b"), Tick(11)).unwrap();
    assert_eq!(explicit.reason, ForgetReason::Explicit);
    assert!(store.is_empty());
    assert_eq!(store.forgotten().len(), 2);
}

/// A retry delayed past the retention window looks new. With an expected revision it cannot apply
/// twice: the first attempt already moved the revision on.
#[test]
fn a_delayed_retry_after_the_window_with_expected_revision_does_not_apply_twice() {
    let mut r = resource(Retention { max_entries: None, max_age: Some(10) });
    assert!(r.write(&conditional(7, "op-1", 0, "debit 10"), Tick(0)).is_applied());
    let late = r.write(&conditional(7, "op-1", 0, "debit 10"), Tick(50));
    assert_eq!(
        late,
        WriteOutcome::Rejected(WriteRejection::RevisionConflict {
            expected: Revision(0),
            actual: Revision(1)
        })
    );
    assert_eq!(r.register.revision(), Revision(1));
    assert_eq!(r.idempotency.forgotten()[0].operation, op("op-1"));
}

/// The same late retry without an expected revision applies a second time: the documented price
/// of bounded retention for unconditional writes.
#[test]
fn a_delayed_retry_after_the_window_without_expected_revision_applies_twice() {
    let mut r = resource(Retention { max_entries: None, max_age: Some(10) });
    assert!(r.write(&write(7, "op-1", "debit 10"), Tick(0)).is_applied());
    // Inside the window the retry is recognised.
    assert!(matches!(r.write(&write(7, "op-1", "debit 10"), Tick(9)), WriteOutcome::Replayed(_)));
    // Past it, the retry is a new operation and applies again.
    let late = r.write(&write(7, "op-1", "debit 10"), Tick(50));
    assert!(matches!(late, WriteOutcome::Applied(Applied { revision: Revision(2), .. })));
}
