//! Histories that see only clients' calls (Jepsen, traces): an operation took effect at some
//! moment between its invocation and its answer. A finding is certain only when every order
//! those windows allow shows it, possible when some do, and absent when none do.

use fencelab_core::{invariant::InvariantKind, Checker, Violation};
use InvariantKind::*;

/// One Jepsen op at `ms` milliseconds.
fn op(kind: &str, process: u32, f: &str, ms: u64, value: &str) -> String {
    format!(
        "{{:type :{kind}, :process {process}, :f :{f}, :time {}, :value {{{value}}}}}",
        ms * 1_000_000
    )
}

fn judge(ops: &[String]) -> Vec<Violation> {
    let imported =
        fencelab_interop::jepsen::read_jepsen(&ops.join("\n")).expect("the history reads");
    Checker::judge(&imported.history)
}

/// Each finding's kind and whether it is only possible.
fn kinds(found: &[Violation]) -> Vec<(InvariantKind, bool)> {
    found.iter().map(|v| (v.invariant, v.possible)).collect()
}

fn acquire(process: u32, from: u64, to: u64, generation: u64, ttl: u64) -> [String; 2] {
    let granted = format!(":resource \"lock\" :generation {generation} :ttl {ttl}");
    [
        op("invoke", process, "acquire", from, ":resource \"lock\""),
        op("ok", process, "acquire", to, &granted),
    ]
}

fn release(process: u32, from: u64, to: u64) -> [String; 2] {
    [
        op("invoke", process, "release", from, ""),
        op("ok", process, "release", to, ":resource \"lock\""),
    ]
}

/// A blocking lock: B asks while A holds it, A lets go, B's call returns. Whether the grant
/// came before the release is not known, so the overlap is possible, never certain.
#[test]
fn a_blocking_hand_off_is_at_most_a_possible_overlap() {
    let [a0, a1] = acquire(0, 0, 1, 1, 10_000);
    let [b0, b1] = acquire(1, 2, 7, 2, 10_000);
    let [r0, r1] = release(0, 5, 6);
    let found = judge(&[a0, a1, b0, r0, r1, b1]);
    assert_eq!(kinds(&found), [(LeasesOverlap, true)], "{found:#?}");
    assert!(found[0].detail.contains("may have granted lock to p1"), "{}", found[0].detail);
}

/// A release that began after the grant's call had returned cannot explain it.
#[test]
fn a_grant_answered_before_the_release_began_is_a_certain_overlap() {
    let [a0, a1] = acquire(0, 0, 1, 1, 10_000);
    let [b0, b1] = acquire(1, 2, 4, 2, 10_000);
    let [r0, r1] = release(0, 5, 6);
    let found = judge(&[a0, a1, b0, b1, r0, r1]);
    assert_eq!(kinds(&found), [(LeasesOverlap, false)], "{found:#?}");
}

/// Calls that do not overlap at all: the release surely came first.
#[test]
fn a_hand_off_in_sequence_is_clean() {
    let [a0, a1] = acquire(0, 0, 1, 1, 10_000);
    let [r0, r1] = release(0, 2, 3);
    let [b0, b1] = acquire(1, 4, 5, 2, 10_000);
    assert_eq!(judge(&[a0, a1, r0, r1, b0, b1]), []);
}

/// A grant is compared with every lease that may still be valid, not only the latest.
#[test]
fn every_overlapping_grant_is_found() {
    let [a0, a1] = acquire(0, 0, 1, 1, 100_000);
    let [b0, b1] = acquire(1, 2, 3, 2, 100_000);
    let [c0, c1] = acquire(2, 4, 5, 3, 100_000);
    let found = judge(&[a0, a1, b0, b1, c0, c1]);
    assert_eq!(kinds(&found), [(LeasesOverlap, false); 3], "{found:#?}");
    let pairs: Vec<bool> = [
        "to p1 (generation 2) while p0's",
        "to p2 (generation 3) while p0's",
        "to p2 (generation 3) while p1's",
    ]
    .iter()
    .map(|pair| found.iter().any(|v| v.detail.contains(pair)))
    .collect();
    assert_eq!(pairs, [true; 3], "{found:#?}");
}

/// A timestamp service answering overlapping calls out of order (p5 asks, p6 asks, p6 gets 196,
/// p5 gets 197) breaks no order: p6's grant may have come first. The same answers to calls in
/// sequence do break it.
#[test]
fn overlapping_timestamp_calls_answered_out_of_order_are_not_certain() {
    let [p5a, p5b] = acquire(5, 0, 3, 197, 0);
    let [p6a, p6b] = acquire(6, 1, 2, 196, 0);
    let found = judge(&[p5a, p6a, p6b, p5b]);
    assert!(found.iter().all(|v| v.possible), "{found:#?}");
    assert_eq!(kinds(&found), [(GenerationReissued, true)], "{found:#?}");

    let [p5a, p5b] = acquire(5, 0, 1, 197, 0);
    let [p6a, p6b] = acquire(6, 2, 3, 196, 0);
    assert_eq!(kinds(&judge(&[p5a, p5b, p6a, p6b])), [(GenerationReissued, false)]);
}

/// One generation handed out twice is a reissue whatever order the calls took effect in.
#[test]
fn the_same_generation_from_overlapping_calls_is_certain() {
    let [p5a, p5b] = acquire(5, 0, 3, 7, 0);
    let [p6a, p6b] = acquire(6, 1, 2, 7, 0);
    let found = judge(&[p5a, p6a, p6b, p5b]);
    assert_eq!(kinds(&found), [(GenerationReissued, false)], "{found:#?}");
    assert!(found[0].detail.contains("issued generation 7 for lock twice"), "{}", found[0].detail);
}

/// A blocking lock that waits longer than the lease lasts: the grant may have come as late as
/// the call's answer, so a write just after the answer is inside the lease in some order, and
/// only possibly outside it. One after the answer plus the TTL surely is.
#[test]
fn a_lock_that_waits_longer_than_its_ttl_is_not_taken_for_expired() {
    let [a0, a1] = acquire(0, 0, 15_000, 1, 10_000);
    let write = |ms: u64, op: &str| {
        let v =
            format!(":resource \"lock\" :store \"db\" :generation 1 :value \"{op}\" :op \"{op}\"");
        [self::op("invoke", 0, "write", ms, &v), self::op("ok", 0, "write", ms + 10, "")]
    };
    let [w0, w1] = write(15_100, "soon");
    assert_eq!(kinds(&judge(&[a0.clone(), a1.clone(), w0, w1])), [(WriteOutsideLease, true)]);
    let [w0, w1] = write(25_100, "late");
    let found = judge(&[a0, a1, w0, w1]);
    assert_eq!(kinds(&found), [(WriteOutsideLease, false)], "{found:#?}");
}

/// One Jepsen op at `ns` nanoseconds.
fn op_ns(kind: &str, process: u32, f: &str, ns: u64, value: &str) -> String {
    format!("{{:type :{kind}, :process {process}, :f :{f}, :time {ns}, :value {{{value}}}}}")
}

/// Cases an adversarial review found, each with the answer every order of the windows gives.
#[test]
fn releases_renewals_and_timeouts_are_judged_by_every_order_the_windows_allow() {
    // A release after a refused renewal still ends the holder's lease.
    let [a0, a1] = acquire(0, 0, 1, 1, 10_000);
    let renew = [op("invoke", 0, "renew", 2, ":resource \"lock\""), op("fail", 0, "renew", 3, "")];
    let released = [
        op("invoke", 0, "release", 4, ""),
        op("ok", 0, "release", 5, ":resource \"lock\" :generation 1"),
    ];
    let [b0, b1] = acquire(1, 6, 7, 2, 10_000);
    let mut ops = vec![a0, a1];
    ops.extend(renew);
    ops.extend(released);
    ops.extend([b0, b1]);
    assert_eq!(judge(&ops), []);

    // A renewal that ends the lease sooner, while another grant's call is in progress.
    let [a0, a1] = acquire(0, 0, 1, 1, 100);
    let [b0, b1] = acquire(1, 2, 50, 2, 100);
    let renew = [
        op("invoke", 0, "renew", 3, ":resource \"lock\""),
        op("ok", 0, "renew", 3, ":resource \"lock\" :ttl 1"),
    ];
    let found = judge(&[a0, a1, b0, renew[0].clone(), renew[1].clone(), b1]);
    assert!(!found.is_empty() && found.iter().all(|v| v.possible), "{found:#?}");

    // A release that timed out may have happened: the next grant overlaps only possibly.
    let [a0, a1] = acquire(0, 0, 1, 1, 10_000);
    let timed_out = [op("invoke", 0, "release", 2, ""), op("info", 0, "release", 3, "")];
    let [b0, b1] = acquire(1, 4, 5, 2, 10_000);
    let found = judge(&[a0, a1, timed_out[0].clone(), timed_out[1].clone(), b0, b1]);
    assert_eq!(kinds(&found), [(LeasesOverlap, true)], "{found:#?}");

    // Calls within one millisecond are still windows: the release may have come first.
    let [a0, a1] = acquire(0, 0, 1, 1, 10_000);
    let ops = [
        a0,
        a1,
        op_ns("invoke", 1, "acquire", 5_000_000, ":resource \"lock\""),
        op_ns("invoke", 0, "release", 5_200_000, ""),
        op_ns("ok", 1, "acquire", 5_500_000, ":resource \"lock\" :generation 2 :ttl 10000"),
        op_ns("ok", 0, "release", 5_800_000, ":resource \"lock\""),
    ];
    let found = judge(&ops);
    assert_eq!(kinds(&found), [(LeasesOverlap, true)], "{found:#?}");
}

/// A generation handed out twice is certain even when a higher one is in progress beside it,
/// and a grant long since answered is remembered however many other resources were granted.
#[test]
fn reissues_are_certain_whatever_else_is_in_progress() {
    let [p0a, p0b] = acquire(0, 0, 10, 5, 0);
    let [p1a, p1b] = acquire(1, 1, 9, 7, 0);
    let [p2a, p2b] = acquire(2, 2, 8, 5, 0);
    let found = judge(&[p0a, p1a, p2a, p2b, p1b, p0b]);
    assert!(found.iter().any(|v| v.invariant == GenerationReissued && !v.possible), "{found:#?}");

    let mut ops = acquire(0, 0, 1, 5, 0).to_vec();
    for r in 0..300u64 {
        let granted = format!(":resource \"r{r}\" :generation 1 :ttl 0");
        ops.push(op("invoke", 1, "acquire", 2 + 2 * r, &format!(":resource \"r{r}\"")));
        ops.push(op("ok", 1, "acquire", 3 + 2 * r, &granted));
    }
    ops.extend(acquire(0, 700, 701, 3, 0));
    let found = judge(&ops);
    assert_eq!(kinds(&found), [(GenerationReissued, false)], "{found:#?}");
}

/// A write call from `process` between `from` and `to` ms, applied.
fn write(process: u32, from: u64, to: u64, generation: u64, op: &str) -> [String; 2] {
    let v = format!(
        ":resource \"lock\" :store \"db\" :generation {generation} :value \"{op}\" :op \"{op}\""
    );
    [self::op("invoke", process, "write", from, &v), self::op("ok", process, "write", to, &v)]
}

/// A store decides a write at some moment between its call and its answer. The old owner's
/// write called while the new owner's was still in progress may have been applied first: the
/// stale write and the final value are possible, while the write sent after its lease ended is
/// certain whatever the order. Calls in sequence leave no doubt.
#[test]
fn writes_in_progress_at_once_are_judged_by_every_order_their_windows_allow() {
    let [a0, a1] = acquire(0, 0, 1, 1, 1_000);
    let [b0, b1] = acquire(1, 2_000, 2_001, 2, 10_000);
    let [bw0, bw1] = write(1, 2_100, 2_300, 2, "new");
    let [aw0, aw1] = write(0, 2_200, 2_400, 1, "old");
    let found = judge(&[a0.clone(), a1.clone(), b0.clone(), b1.clone(), bw0, aw0, bw1, aw1]);
    let mut found = kinds(&found);
    found.sort_by_key(|(kind, _)| *kind as usize);
    let expected = [
        (StaleWriteAccepted, true),
        (FinalValueNotFromLatestOwner, true),
        (WriteOutsideLease, false),
    ];
    let mut expected = expected.to_vec();
    expected.sort_by_key(|(kind, _)| *kind as usize);
    assert_eq!(found, expected);

    let [bw0, bw1] = write(1, 2_100, 2_150, 2, "new");
    let [aw0, aw1] = write(0, 2_200, 2_400, 1, "old");
    let found = judge(&[a0, a1, b0, b1, bw0, bw1, aw0, aw1]);
    assert!(found.iter().all(|v| !v.possible), "{found:#?}");
    assert_eq!(found.len(), 3, "{found:#?}");
}

/// Two writes of one worker in flight at once, answered in the opposite order: the store may
/// have applied them in the order they were sent.
#[test]
fn one_workers_writes_in_flight_at_once_are_at_most_possibly_reordered() {
    let [a0, a1] = acquire(0, 0, 1, 1, 10_000);
    let [first0, first1] = write(0, 10, 40, 1, "first");
    let [second0, second1] = write(0, 20, 30, 1, "second");
    let found = judge(&[a0.clone(), a1.clone(), first0, second0, second1, first1]);
    assert_eq!(kinds(&found), [(WritesReordered, true)], "{found:#?}");
    assert!(found[0].detail.contains("may have applied"), "{}", found[0].detail);
}

/// A lease whose length nobody gave may have ended at any moment before its release: a write an
/// hour later is not judged outside it, one after its release is, and a grant beside it is at
/// most a possible overlap.
#[test]
fn a_lease_of_unknown_length_is_judged_on_what_needs_no_length() {
    let a0 = op("invoke", 0, "acquire", 0, ":resource \"lock\"");
    let a1 = op("ok", 0, "acquire", 1, ":resource \"lock\" :generation 1");
    let [w0, w1] = write(0, 3_600_000, 3_600_010, 1, "late");
    assert_eq!(judge(&[a0.clone(), a1.clone(), w0, w1]), []);

    let [r0, r1] = release(0, 3_600_100, 3_600_200);
    let [w2, w3] = write(0, 3_600_300, 3_600_400, 1, "after");
    let found = judge(&[a0.clone(), a1.clone(), r0, r1, w2, w3]);
    assert_eq!(kinds(&found), [(WriteOutsideLease, false)], "{found:#?}");

    let b0 = op("invoke", 1, "acquire", 10, ":resource \"lock\"");
    let b1 = op("ok", 1, "acquire", 11, ":resource \"lock\" :generation 2");
    let found = judge(&[a0, a1, b0, b1]);
    assert_eq!(kinds(&found), [(LeasesOverlap, true)], "{found:#?}");
    assert!(found[0].detail.contains("does not say how long it lasted"), "{}", found[0].detail);
}

/// A history that ends while a write is in progress (the client crashed, the run was cut): the
/// write may have reached the store, as a write that timed out may have.
#[test]
fn a_write_still_in_progress_when_the_history_ends_may_have_happened() {
    let [a0, a1] = acquire(0, 0, 1, 7, 100_000);
    let [b0, b1] = acquire(1, 2, 3, 8, 100_000);
    let [new0, new1] = write(1, 10, 12, 8, "new");
    let [old0, _] = write(0, 15, 16, 7, "old");
    let found = judge(&[a0, a1, b0, b1, new0, new1, old0]);
    assert!(found.iter().any(|v| v.invariant == StaleWriteAccepted && v.possible), "{found:#?}");
    assert!(found.iter().all(|v| v.possible || v.invariant == LeasesOverlap), "{found:#?}");
}

/// A grant seen as a call from 0 to 2 ms with a 5 s lease: the lease ended between 5,000 and
/// 5,002 ms. A write sent at 5,001 ms may have been outside it; one at 5,003 surely was.
#[test]
fn a_write_sent_while_the_lease_may_have_ended_is_a_possible_write_outside_it() {
    let [a0, a1] = acquire(0, 0, 2, 1, 5_000);
    let [w0, w1] = write(0, 5_001, 5_010, 1, "edge");
    let found = judge(&[a0.clone(), a1.clone(), w0, w1]);
    assert_eq!(kinds(&found), [(WriteOutsideLease, true)], "{found:#?}");
    assert!(found[0].detail.contains("may have ended"), "{}", found[0].detail);
    let [w0, w1] = write(0, 5_003, 5_010, 1, "late");
    assert_eq!(kinds(&judge(&[a0.clone(), a1.clone(), w0, w1])), [(WriteOutsideLease, false)]);
    let [w0, w1] = write(0, 4_999, 5_010, 1, "in time");
    assert_eq!(judge(&[a0, a1, w0, w1]), []);
}
