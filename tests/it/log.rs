//! The operation log: every attempt recorded, rejections counted by reason, JSON round trip.

use crate::support::*;
use fencelab_core::*;
use fencelab_core::{
    fence::boundary::FencedResource, fence::gateway::Effect, fence::gateway::EffectRequest,
    fence::gateway::SideEffectGateway, fence::idempotency::Retention, fence::log::Attempt,
    fence::log::LogError, fence::log::LoggedOutcome, fence::log::OperationLog,
    fence::register::Applied, fence::register::RejectionReason, fence::register::Revision,
    fence::register::SameGenerationPolicy, ids::WorkflowKey,
};

#[test]
fn the_log_records_attempts_and_counts_rejections_by_reason() {
    let mut resource =
        FencedResource::new(register(SameGenerationPolicy::AllowSame), Retention::FOREVER);
    let mut gateway = SideEffectGateway::new(SameGenerationPolicy::AllowSame);
    let mut log = OperationLog::new();
    let attempts = [
        ("B", write(8, "b-1", "replacement")),
        ("A", write(7, "a-1", "stale")),
        ("B", write(8, "b-1", "replacement")),
        ("A", write(7, "a-2", "stale again")),
        ("B", conditional(8, "b-2", 0, "conflict")),
    ];
    for (t, (actor, request)) in attempts.into_iter().enumerate() {
        let outcome = resource.write(&request, Tick(t as u64));
        log.record(Tick(t as u64), worker(actor), Attempt::Write(request), outcome);
    }
    let effect = EffectRequest {
        workflow: WorkflowKey::new("order").unwrap(),
        generation: g(8),
        operation: op("mail"),
        effect: Effect::CallWebhook { endpoint: "partner/orders".into(), payload: "{}".into() },
    };
    for t in [10, 11] {
        let outcome = gateway.submit(effect.clone(), Tick(t));
        log.record(Tick(t), worker("B"), Attempt::Effect(effect.clone()), outcome);
    }

    let kinds: Vec<&str> = log
        .entries()
        .iter()
        .map(|e| match e.outcome {
            LoggedOutcome::Applied(_) => "applied",
            LoggedOutcome::Replayed(_) => "replayed",
            LoggedOutcome::Rejected(_) => "rejected",
            LoggedOutcome::Delivered => "delivered",
            LoggedOutcome::Dropped(_) => "dropped",
        })
        .collect();
    assert_eq!(
        kinds,
        ["applied", "rejected", "replayed", "rejected", "rejected", "delivered", "dropped"]
    );
    let counts = log.rejections_by_reason();
    assert_eq!(counts.get(&RejectionReason::StaleGeneration), Some(&2));
    assert_eq!(counts.get(&RejectionReason::RevisionConflict), Some(&1));
    assert_eq!(counts.get(&RejectionReason::DuplicateEffect), Some(&1));
    assert_eq!(counts.len(), 3);

    let json = log.to_json();
    assert_eq!(OperationLog::from_json(&json).unwrap(), log);
}

#[test]
fn a_log_with_a_gap_or_garbage_is_refused_with_a_reason() {
    let mut log = OperationLog::new();
    log.record(
        Tick(0),
        worker("A"),
        Attempt::Write(write(1, "x", "v")),
        WriteOutcome::Applied(Applied { generation: g(1), revision: Revision(1) }),
    );
    log.record(
        Tick(1),
        worker("A"),
        Attempt::Write(write(1, "y", "v")),
        WriteOutcome::Applied(Applied { generation: g(1), revision: Revision(2) }),
    );
    let mut value: serde_json::Value = serde_json::from_str(&log.to_json()).unwrap();
    value[1]["seq"] = 5.into();
    let err = OperationLog::from_json(&value.to_string()).unwrap_err();
    assert_eq!(err, LogError::Sequence { index: 1, seq: 5 });
    value[1]["seq"] = 1.into();
    value[0]["attempt"]["generation"] = 0.into();
    let err = OperationLog::from_json(&value.to_string()).unwrap_err();
    assert!(err.to_string().contains("positive integer token required"), "{err}");
}
