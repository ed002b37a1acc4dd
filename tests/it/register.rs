//! The fenced register: the cases from the article's verification section, as a table.

use crate::support::*;
use fencelab_core::*;
use fencelab_core::{
    fence::generation::TokenError, fence::register::Applied, fence::register::RejectionReason,
    fence::register::Revision, fence::register::SameGenerationPolicy,
    fence::register::WriteRejection,
};

/// What a step of a check table expects.
#[derive(Debug)]
enum Expect {
    Applied(u64),
    Stale { highest: u64 },
}

/// Plays `(token, value, expectation)` rows against a fresh register and then checks its state.
fn check(
    policy: SameGenerationPolicy,
    rows: &[(u64, &str, Expect)],
    final_value: &str,
    final_highest: u64,
) {
    let mut reg = register(policy);
    for (i, (token, value, expect)) in rows.iter().enumerate() {
        let before = reg.clone();
        let result = reg.write(&write(*token, &format!("op-{i}"), value));
        match (expect, result) {
            (Expect::Applied(revision), Ok(applied)) => {
                assert_eq!(
                    applied,
                    Applied { generation: g(*token), revision: Revision(*revision) }
                )
            }
            (Expect::Stale { highest }, Err(WriteRejection::Stale { presented, highest: h })) => {
                assert_eq!((presented, h), (g(*token), g(*highest)), "row {i}");
                assert_eq!(reg, before, "row {i}: a rejected write must change nothing");
            }
            (expect, got) => panic!("row {i}: expected {expect:?}, got {got:?}"),
        }
    }
    assert_eq!(reg.value(), Some(final_value));
    assert_eq!(reg.highest(), Some(g(final_highest)));
}

#[test]
fn stale_generation_after_newer_is_rejected_and_value_kept() {
    use Expect::*;
    check(
        SameGenerationPolicy::AllowSame,
        &[
            (7, "old worker started", Applied(1)),
            (8, "replacement completed", Applied(2)),
            (7, "old worker resumed", Stale { highest: 8 }),
            (8, "same owner updated", Applied(3)),
        ],
        "same owner updated",
        8,
    );
}

#[test]
fn stale_rejection_says_stale_owner() {
    let mut reg = register(SameGenerationPolicy::AllowSame);
    reg.write(&write(8, "b", "replacement")).unwrap();
    let err = reg.write(&write(7, "a", "stale")).unwrap_err();
    assert!(err.to_string().starts_with("stale owner"), "{err}");
    assert_eq!(err.to_string(), "stale owner: generation 7 < highest accepted 8");
    assert_eq!(err.reason(), RejectionReason::StaleGeneration);
}

#[test]
fn strict_policy_rejects_a_second_write_by_the_same_generation() {
    use Expect::*;
    check(
        SameGenerationPolicy::StrictlyNewer,
        &[(8, "first", Applied(1)), (8, "second", Stale { highest: 8 }), (9, "newer", Applied(2))],
        "newer",
        9,
    );
    let mut reg = register(SameGenerationPolicy::StrictlyNewer);
    reg.write(&write(8, "a", "first")).unwrap();
    let err = reg.write(&write(8, "b", "second")).unwrap_err();
    assert!(err.to_string().contains("strictly-newer"), "{err}");
}

#[test]
fn newer_generations_are_accepted_even_with_gaps() {
    use Expect::*;
    check(
        SameGenerationPolicy::AllowSame,
        &[(1, "one", Applied(1)), (5, "five", Applied(2)), (900, "nine hundred", Applied(3))],
        "nine hundred",
        900,
    );
}

/// The documented limit: the fence rejects generations it knows to be superseded, nothing more.
#[test]
fn fresh_register_accepts_an_old_generation_until_it_has_seen_a_newer_one() {
    use Expect::*;
    check(
        SameGenerationPolicy::AllowSame,
        &[
            (7, "stale but first", Applied(1)),
            (8, "newer", Applied(2)),
            (7, "late", Stale { highest: 8 }),
        ],
        "newer",
        8,
    );
}

#[test]
fn zero_and_garbage_tokens_are_invalid_with_one_message() {
    assert_eq!(Generation::new(0).unwrap_err(), TokenError::NotPositive { got: "0".into() });
    for text in ["0", "-7", "seven", "7.0", ""] {
        let err = text.parse::<Generation>().unwrap_err();
        let rejection = WriteRejection::from(err);
        assert_eq!(rejection.reason(), RejectionReason::InvalidToken);
        assert!(
            rejection.to_string().starts_with("invalid token: positive integer token required"),
            "{text:?}: {rejection}"
        );
    }
}

#[test]
fn the_generation_after_the_maximum_is_an_error_not_a_wrap() {
    assert_eq!(Generation::MAX.next(), Err(TokenError::Exhausted));
    assert_eq!(Generation::new(u64::MAX - 1).unwrap().next(), Ok(Generation::MAX));
    assert!(matches!(
        "18446744073709551616".parse::<Generation>(),
        Err(TokenError::TooLarge { .. })
    ));
}

#[test]
fn expected_revision_mismatch_is_a_revision_conflict_and_changes_nothing() {
    let mut reg = register(SameGenerationPolicy::AllowSame);
    reg.write(&write(3, "a", "one")).unwrap();
    let before = reg.clone();
    let err = reg.write(&conditional(3, "b", 0, "two")).unwrap_err();
    assert_eq!(
        err,
        WriteRejection::RevisionConflict { expected: Revision(0), actual: Revision(1) }
    );
    assert_eq!(reg, before);
    assert!(reg.write(&conditional(3, "c", 1, "two")).is_ok());
}

#[test]
fn a_request_for_another_resource_is_refused() {
    let mut reg = register(SameGenerationPolicy::AllowSame);
    let req = WriteRequest::new(res("inventory"), g(1), op("x"), None, "v");
    assert!(matches!(reg.write(&req), Err(WriteRejection::WrongResource { .. })));
    assert_eq!(reg.revision(), Revision(0));
}

#[test]
fn a_store_that_loses_its_highest_record_re_authorizes_stale_owners() {
    let mut reg = register(SameGenerationPolicy::AllowSame);
    reg.write(&write(8, "b", "replacement")).unwrap();
    assert!(reg.write(&write(7, "a", "stale")).is_err());
    reg.forget_highest();
    assert!(reg.write(&write(7, "a2", "stale")).is_ok(), "the record is gone, so 7 looks fine");
    assert_eq!(reg.value(), Some("stale"));
}
