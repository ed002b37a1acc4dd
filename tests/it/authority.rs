//! The lease authority: grants, renewals, expiry, and why its counter must survive restarts.

use crate::support::*;
use fencelab_core::*;
use fencelab_core::{
    fence::authority::LeaseAuthority, fence::authority::LeaseError,
    fence::register::SameGenerationPolicy, fence::register::WriteRejection,
};
use std::num::NonZeroU64;

fn authority(ttl: u64) -> LeaseAuthority {
    LeaseAuthority::new(NonZeroU64::new(ttl).unwrap())
}

#[test]
fn generations_increase_across_grants_release_and_expiry() {
    let mut auth = authority(10);
    let ledger = res("ledger");
    let a = auth.acquire(&ledger, &worker("A"), Tick(0)).unwrap();
    assert_eq!(a.generation, g(1));
    assert_eq!(a.valid_until, Tick(10));
    // Released early: the next grant is still newer.
    auth.release(&ledger, &worker("A"), a.generation).unwrap();
    let b = auth.acquire(&ledger, &worker("B"), Tick(1)).unwrap();
    assert_eq!(b.generation, g(2));
    // Expired: the next grant is newer again.
    let c = auth.acquire(&ledger, &worker("A"), Tick(11)).unwrap();
    assert_eq!(c.generation, g(3));
    // Counters are per resource.
    let other = auth.acquire(&res("inventory"), &worker("B"), Tick(11)).unwrap();
    assert_eq!(other.generation, g(1));
    assert_eq!(auth.generation(&ledger), Some(g(3)));
}

#[test]
fn acquire_fails_while_a_valid_lease_exists_and_succeeds_at_expiry() {
    let mut auth = authority(10);
    let ledger = res("ledger");
    auth.acquire(&ledger, &worker("A"), Tick(0)).unwrap();
    let err = auth.acquire(&ledger, &worker("B"), Tick(9)).unwrap_err();
    assert!(
        matches!(err, LeaseError::Held { ref holder, valid_until: Tick(10), .. } if *holder == worker("A"))
    );
    assert_eq!(err.to_string(), "lease on ledger is held by A (generation 1) until t=10");
    // The holder itself renews rather than re-acquiring.
    assert!(auth.acquire(&ledger, &worker("A"), Tick(5)).is_err());
    // At tick 10 the lease is over; B gets generation 2.
    assert_eq!(auth.acquire(&ledger, &worker("B"), Tick(10)).unwrap().generation, g(2));
}

#[test]
fn renew_extends_only_a_valid_lease_held_by_the_caller() {
    let mut auth = authority(10);
    let ledger = res("ledger");
    let a = auth.acquire(&ledger, &worker("A"), Tick(0)).unwrap();
    let renewed = auth.renew(&ledger, &worker("A"), a.generation, Tick(8)).unwrap();
    assert_eq!((renewed.generation, renewed.valid_until), (g(1), Tick(18)));
    assert_eq!(auth.valid_until(&ledger, Tick(17)), Some(Tick(18)));
    assert!(matches!(
        auth.renew(&ledger, &worker("B"), a.generation, Tick(9)),
        Err(LeaseError::NotHolder { .. })
    ));
    assert!(matches!(
        auth.renew(&ledger, &worker("A"), a.generation, Tick(18)),
        Err(LeaseError::Expired { expired_at: Tick(18), .. })
    ));
}

#[test]
fn queries_report_holder_generation_and_validity() {
    let mut auth = authority(5);
    let ledger = res("ledger");
    assert_eq!(auth.holder(&ledger, Tick(0)), None);
    auth.acquire(&ledger, &worker("A"), Tick(0)).unwrap();
    assert_eq!(auth.holder(&ledger, Tick(4)), Some(&worker("A")));
    assert_eq!(auth.holder(&ledger, Tick(5)), None);
    let expired = auth.expire(Tick(5));
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].holder, worker("A"));
    assert_eq!(auth.generation(&ledger), Some(g(1)), "expiry keeps the counter");
}

#[test]
fn release_by_a_superseded_holder_is_refused() {
    let mut auth = authority(5);
    let ledger = res("ledger");
    let a = auth.acquire(&ledger, &worker("A"), Tick(0)).unwrap();
    auth.acquire(&ledger, &worker("B"), Tick(6)).unwrap();
    assert!(matches!(
        auth.release(&ledger, &worker("A"), a.generation),
        Err(LeaseError::NotHolder { .. })
    ));
    assert_eq!(auth.holder(&ledger, Tick(7)), Some(&worker("B")));
}

#[test]
fn a_restored_snapshot_keeps_generations_increasing() {
    let mut auth = authority(5);
    let ledger = res("ledger");
    for t in [0, 5, 10] {
        auth.acquire(&ledger, &worker("A"), Tick(t)).unwrap();
    }
    let durable = serde_json::to_string(&auth).unwrap();
    let mut restarted: LeaseAuthority = serde_json::from_str(&durable).unwrap();
    assert_eq!(restarted.acquire(&ledger, &worker("B"), Tick(15)).unwrap().generation, g(4));
}

#[test]
fn an_authority_that_loses_its_counter_issues_old_generations_again() {
    let mut auth = authority(5);
    let ledger = res("ledger");
    let mut reg = register(SameGenerationPolicy::AllowSame);
    for (t, name) in [(0, "A"), (5, "B"), (10, "C")] {
        let lease = auth.acquire(&ledger, &worker(name), Tick(t)).unwrap();
        reg.write(&WriteRequest::new(ledger.clone(), lease.generation, op(name), None, name))
            .unwrap();
    }
    auth.restart_losing_counter();
    let d = auth.acquire(&ledger, &worker("D"), Tick(15)).unwrap();
    assert_eq!(d.generation, g(1), "the counter starts over");
    // The legitimate new owner is now fenced out by the register, which remembers 3.
    let err = reg.write(&WriteRequest::new(ledger, d.generation, op("D"), None, "D")).unwrap_err();
    assert_eq!(err, WriteRejection::Stale { presented: g(1), highest: g(3) });
}

#[test]
fn a_zero_ttl_cannot_be_configured_from_json() {
    let err = serde_json::from_str::<LeaseAuthority>(r#"{"ttl":0,"resources":{}}"#).unwrap_err();
    assert!(err.to_string().contains("nonzero"), "{err}");
}
