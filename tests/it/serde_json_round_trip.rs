//! Every public data type survives a JSON round trip, and bad tokens in JSON get one clear message.

use crate::support::*;
use fencelab_core::*;
use fencelab_core::{
    fence::authority::LeaseAuthority, fence::authority::LeaseError,
    fence::boundary::FencedResource, fence::gateway::DropReason, fence::gateway::Effect,
    fence::gateway::EffectRequest, fence::gateway::GatewayOutcome,
    fence::gateway::SideEffectGateway, fence::generation::TokenError,
    fence::idempotency::ForgetReason, fence::idempotency::Forgotten, fence::idempotency::Retention,
    fence::idempotency::StoredResult, fence::log::Attempt, fence::log::LoggedOutcome,
    fence::log::OperationLog, fence::register::Applied, fence::register::RejectionReason,
    fence::register::Revision, fence::register::SameGenerationPolicy,
    fence::register::WriteRejection, ids::IdError, ids::WorkflowKey, ids::MAX_ID_LEN,
};
use serde::{de::DeserializeOwned, Serialize};
use std::fmt::Debug;
use std::num::{NonZeroU64, NonZeroUsize};

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(value: T) {
    let json = serde_json::to_string(&value).expect("serializes");
    let back: T = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(back, value, "{json}");
}

#[test]
fn every_public_type_round_trips() {
    round_trip(g(7));
    round_trip(Generation::MAX);
    round_trip(Tick(3));
    round_trip(Revision(2));
    round_trip(res("ledger"));
    round_trip(worker("A"));
    round_trip(op("op-1"));
    round_trip(WorkflowKey::new("order").unwrap());
    round_trip(IdError::Empty { kind: "worker id".into() });
    round_trip(IdError::TooLong { kind: "worker id".into(), len: 200, max: MAX_ID_LEN });
    for e in [
        TokenError::NotPositive { got: "0".into() },
        TokenError::TooLarge { got: "1e30".into() },
        TokenError::Exhausted,
    ] {
        round_trip(e);
    }
    round_trip(SameGenerationPolicy::AllowSame);
    round_trip(SameGenerationPolicy::StrictlyNewer);
    round_trip(write(8, "op", "value"));
    round_trip(conditional(8, "op", 3, "value"));
    let applied = Applied { generation: g(8), revision: Revision(4) };
    round_trip(applied);
    let rejections = [
        WriteRejection::Stale { presented: g(7), highest: g(8) },
        WriteRejection::InvalidToken(TokenError::NotPositive { got: "-1".into() }),
        WriteRejection::RevisionConflict { expected: Revision(1), actual: Revision(2) },
        WriteRejection::WrongResource { expected: res("a"), got: res("b") },
        WriteRejection::RevisionExhausted { revision: Revision(u64::MAX) },
    ];
    for r in rejections.iter().cloned() {
        round_trip(r.clone());
        round_trip(r.reason());
        round_trip(WriteOutcome::Rejected(r.clone()));
        round_trip(LoggedOutcome::Rejected(r));
    }
    round_trip(RejectionReason::DuplicateEffect);

    let mut authority = LeaseAuthority::new(NonZeroU64::new(5).unwrap());
    let lease = authority.acquire(&res("ledger"), &worker("A"), Tick(1)).unwrap();
    round_trip(lease.clone());
    round_trip(authority.records().next().unwrap().1.clone());
    round_trip(authority.clone());
    round_trip(LeaseError::Held {
        resource: res("l"),
        holder: worker("A"),
        generation: g(1),
        valid_until: Tick(6),
    });
    round_trip(LeaseError::NotHolder { resource: res("l"), worker: worker("B"), generation: g(1) });
    round_trip(LeaseError::Expired { resource: res("l"), generation: g(1), expired_at: Tick(6) });
    round_trip(LeaseError::Token(TokenError::Exhausted));

    let retention = Retention { max_entries: NonZeroUsize::new(2), max_age: Some(9) };
    round_trip(retention);
    let stored = StoredResult { generation: g(8), applied, recorded_at: Tick(2) };
    round_trip(stored);
    round_trip(WriteOutcome::Applied(applied));
    round_trip(WriteOutcome::Replayed(stored));
    for reason in [
        ForgetReason::Capacity { max_entries: NonZeroUsize::new(2).unwrap() },
        ForgetReason::Age { max_age: 9 },
        ForgetReason::Explicit,
    ] {
        round_trip(reason);
        round_trip(Forgotten { operation: op("x"), result: stored, at: Tick(20), reason });
    }
    let mut resource =
        FencedResource::new(register(SameGenerationPolicy::StrictlyNewer), retention);
    for (t, id) in ["a", "b", "c"].into_iter().enumerate() {
        resource.write(&write(t as u64 + 1, id, id), Tick(t as u64));
    }
    round_trip(resource.register.clone());
    round_trip(resource.idempotency.clone());
    round_trip(resource);

    let effects = [
        Effect::CapturePayment { amount_cents: 1999 },
        Effect::SendEmail { to: "ada@example.org".into(), subject: "Receipt".into() },
        Effect::CallWebhook { endpoint: "partner/hook".into(), payload: "{\"id\":1}".into() },
    ];
    let mut gateway = SideEffectGateway::new(SameGenerationPolicy::AllowSame);
    let mut log = OperationLog::new();
    for (i, effect) in effects.into_iter().enumerate() {
        round_trip(effect.clone());
        let request = EffectRequest {
            workflow: WorkflowKey::new("wf").unwrap(),
            generation: g(2),
            operation: op(&format!("e{i}")),
            effect,
        };
        round_trip(request.clone());
        let outcome = gateway.submit(request.clone(), Tick(i as u64));
        if let GatewayOutcome::Delivered(d) = &outcome {
            round_trip(d.clone());
        }
        round_trip(outcome.clone());
        log.record(Tick(i as u64), worker("A"), Attempt::Effect(request), outcome);
    }
    let dropped = DropReason::Stale { presented: g(1), highest: g(2) };
    round_trip(dropped.clone());
    round_trip(DropReason::Duplicate { operation: op("e0"), delivered_at: Tick(0) });
    round_trip(GatewayOutcome::Dropped(dropped.clone()));
    round_trip(LoggedOutcome::Dropped(dropped));
    round_trip(LoggedOutcome::Delivered);
    round_trip(LoggedOutcome::Applied(applied));
    round_trip(LoggedOutcome::Replayed(stored));
    round_trip(gateway);
    round_trip(Attempt::Write(write(1, "w", "v")));
    round_trip(log.entries()[0].clone());
    round_trip(log);
}

#[test]
fn bad_tokens_in_json_name_the_problem() {
    for bad in ["0", "-1", "1.5", "\"7\"", "true", "null", "18446744073709551616"] {
        let json =
            format!(r#"{{"resource":"ledger","generation":{bad},"operation":"op","value":"v"}}"#);
        let err = serde_json::from_str::<WriteRequest>(&json).unwrap_err().to_string();
        assert!(err.contains("positive integer token required"), "{bad}: {err}");
    }
    // A float's digits past its precision are not the file's, so they are not quoted as such.
    for (bad, says) in [
        ("2.0", "(got 2.0, written with a fraction or exponent)"),
        ("1.5", "(got 1.5, not a whole positive number)"),
        ("18446744073709551616", "the number is larger than the largest generation"),
    ] {
        let json =
            format!(r#"{{"resource":"ledger","generation":{bad},"operation":"op","value":"v"}}"#);
        let err = serde_json::from_str::<WriteRequest>(&json).unwrap_err().to_string();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

#[test]
fn unknown_fields_and_empty_ids_are_refused() {
    let unknown = r#"{"resource":"ledger","generation":1,"operation":"op","value":"v","token":1}"#;
    let err = serde_json::from_str::<WriteRequest>(unknown).unwrap_err().to_string();
    assert!(err.contains("unknown field `token`"), "{err}");
    let empty = r#"{"resource":"","generation":1,"operation":"op","value":"v"}"#;
    let err = serde_json::from_str::<WriteRequest>(empty).unwrap_err().to_string();
    assert!(err.contains("resource id must not be empty"), "{err}");
}

#[test]
fn durable_records_keep_one_shape_when_empty() {
    // The authority and the gateway are their own durable records: an empty map is still an
    // object, as when it has entries.
    let authority = LeaseAuthority::new(std::num::NonZeroU64::new(10).unwrap());
    let json = serde_json::to_value(&authority).unwrap();
    assert_eq!(json["resources"], serde_json::json!({}));
    let gateway = SideEffectGateway::default();
    let json = serde_json::to_value(&gateway).unwrap();
    assert_eq!(json["fences"], serde_json::json!({}));
    let back: SideEffectGateway = serde_json::from_value(json).unwrap();
    assert_eq!(back, gateway);
}
