//! A request that passes the fence raises it, whatever happens next; the checker sees every
//! generation presented at a boundary; paths into the same data share one fence; gateway
//! operation ids are scoped per workflow.

use crate::support::*;
use fencelab_core::stories::library;
use fencelab_core::*;
use fencelab_core::{drive::conformance::check_store, drive::conformance::Rule};
use fencelab_core::{
    fence::boundary::FencedResource, fence::gateway::DropReason, fence::gateway::Effect,
    fence::gateway::EffectRequest, fence::gateway::GatewayOutcome,
    fence::gateway::SideEffectGateway, fence::idempotency::Retention,
    fence::idempotency::StoredResult, fence::register::FencedRegister,
    fence::register::RejectionReason, fence::register::Revision,
    fence::register::SameGenerationPolicy, fence::register::WriteRejection,
    fence::store::MemoryStore, fence::store::StoredValue, ids::WorkflowKey,
    invariant::InvariantKind,
};
use std::convert::Infallible;

fn effect(workflow: &str, token: u64, operation: &str) -> EffectRequest {
    EffectRequest {
        workflow: WorkflowKey::new(workflow).unwrap(),
        generation: g(token),
        operation: op(operation),
        effect: Effect::CapturePayment { amount_cents: 2500 },
    }
}

#[test]
fn a_newer_owners_duplicate_effect_fences_the_old_owner_out() {
    let mut gateway = SideEffectGateway::new(SameGenerationPolicy::AllowSame);
    assert!(matches!(
        gateway.submit(effect("order-7", 1, "capture-7"), Tick(2)),
        GatewayOutcome::Delivered(_)
    ));
    let again = gateway.submit(effect("order-7", 2, "capture-7"), Tick(12));
    assert!(matches!(again, GatewayOutcome::Dropped(DropReason::Duplicate { .. })), "{again:?}");
    assert_eq!(gateway.highest(&WorkflowKey::new("order-7").unwrap()), Some(g(2)));
    let stale = gateway.submit(effect("order-7", 1, "receipt-7"), Tick(17));
    let GatewayOutcome::Dropped(reason) = stale else {
        panic!("A's new effect got through: {stale:?}")
    };
    assert_eq!(
        reason.to_string(),
        "stale owner: generation 1 < highest accepted 2 for this workflow"
    );
    assert_eq!(gateway.delivered().len(), 1);
}

#[test]
fn a_newer_owners_replay_fences_the_old_owner_out_of_an_idempotent_store() {
    let mut store = MemoryStore::new(SameGenerationPolicy::AllowSame, Retention::FOREVER);
    assert!(store.write(&write(1, "job-1", "A"), Tick(2)).unwrap().is_applied());
    let replay = store.write(&write(2, "job-1", "B"), Tick(12)).unwrap();
    assert!(matches!(replay, WriteOutcome::Replayed(_)), "{replay:?}");
    assert_eq!(store.read(&res("ledger")).unwrap().unwrap().highest, Some(g(2)));
    let stale = store.write(&write(1, "job-2", "A: stale"), Tick(17)).unwrap();
    let WriteOutcome::Rejected(rejection) = stale else {
        panic!("A's new write landed: {stale:?}")
    };
    assert_eq!(rejection.to_string(), "stale owner: generation 1 < highest accepted 2");
    assert_eq!(store.read(&res("ledger")).unwrap().unwrap().value.as_deref(), Some("A"));
}

#[test]
fn a_revision_conflict_raises_the_fence_but_changes_no_value() {
    let mut reg = register(SameGenerationPolicy::AllowSame);
    reg.write(&write(1, "a", "A")).unwrap();
    let conflict = reg.write(&conditional(2, "b", 0, "B")).unwrap_err();
    assert!(matches!(conflict, WriteRejection::RevisionConflict { .. }));
    assert_eq!((reg.highest(), reg.value(), reg.revision()), (Some(g(2)), Some("A"), Revision(1)));
    assert!(matches!(reg.write(&write(1, "c", "A: stale")), Err(WriteRejection::Stale { .. })));
}

#[test]
fn under_the_strict_policy_a_raised_but_unused_generation_may_still_write_once() {
    let mut resource =
        FencedResource::new(register(SameGenerationPolicy::StrictlyNewer), Retention::FOREVER);
    assert!(resource.write(&write(1, "job-1", "A"), Tick(1)).is_applied());
    // B's retry of A's operation raises the fence to 2 without writing anything.
    assert!(matches!(resource.write(&write(2, "job-1", "B"), Tick(2)), WriteOutcome::Replayed(_)));
    assert!(matches!(resource.write(&write(1, "job-2", "A"), Tick(3)), WriteOutcome::Rejected(_)));
    // B has not written under 2 yet, so its one write is admitted; a second one is not.
    assert!(resource.write(&write(2, "job-3", "B"), Tick(4)).is_applied());
    let again = resource.write(&write(2, "job-4", "B again"), Tick(5));
    let WriteOutcome::Rejected(rejection) = again else { panic!("{again:?}") };
    assert_eq!(rejection.to_string(), "already written with generation 2 (strictly-newer policy)");
    // Its own retry still gets the stored result.
    assert!(matches!(resource.write(&write(2, "job-3", "B"), Tick(6)), WriteOutcome::Replayed(_)));
}

#[test]
fn a_strict_gateway_drop_says_the_generation_already_acted() {
    let mut gateway = SideEffectGateway::new(SameGenerationPolicy::StrictlyNewer);
    assert!(matches!(
        gateway.submit(effect("o", 2, "first"), Tick(1)),
        GatewayOutcome::Delivered(_)
    ));
    let GatewayOutcome::Dropped(reason) = gateway.submit(effect("o", 2, "second"), Tick(2)) else {
        panic!("delivered twice under the strict policy")
    };
    assert_eq!(
        reason.to_string(),
        "already written with generation 2 (strictly-newer policy) for this workflow"
    );
    assert_eq!(reason.short(), "2 already wrote");
}

#[test]
fn gateway_operation_ids_are_scoped_per_workflow() {
    let mut gateway = SideEffectGateway::new(SameGenerationPolicy::AllowSame);
    for order in ["order-1", "order-2"] {
        let outcome = gateway.submit(effect(order, 1, "send-receipt"), Tick(1));
        assert!(matches!(outcome, GatewayOutcome::Delivered(_)), "{order}: {outcome:?}");
    }
    let repeat = gateway.submit(effect("order-2", 1, "send-receipt"), Tick(2));
    assert!(matches!(repeat, GatewayOutcome::Dropped(DropReason::Duplicate { .. })));
}

#[test]
fn one_operation_name_in_two_workflows_is_two_effects_in_a_scenario() {
    let json = r#"{"name":"t","title":"t","resources":["order-1","order-2"],"authority":{"ttl":20},
        "stores":[{"name":"db","enforcement":"fenced"}],"gateway":{"partner":"mail","enforcement":"fenced"},
        "workers":[{"name":"A","script":[{"acquire":{"resource":"order-1"}},{"acquire":{"resource":"order-2"}},
          {"effect":{"resource":"order-1","operation":"send-receipt","effect":{"kind":"send_email","to":"a","subject":"1"}}},
          {"effect":{"resource":"order-2","operation":"send-receipt","effect":{"kind":"send_email","to":"b","subject":"2"}}}]}]}"#;
    let mut engine = Engine::from_json(json).unwrap();
    let verdict = engine.run().unwrap();
    assert!(verdict.violations.is_empty(), "{:?}", verdict.violations);
    assert_eq!(engine.state().gateway.as_ref().unwrap().received.len(), 2);
}

/// The case from the review, played by the engine: each story's fenced variant refuses A's late
/// request, and its broken variant shows what fencing prevents.
#[test]
fn the_newer_owner_stories_refuse_the_old_owner() {
    for name in ["newer-owner-retry", "duplicate-capture", "admin-path"] {
        let mut engine = Engine::new(library::scenario(name, Some("fenced")).unwrap()).unwrap();
        let verdict = engine.run().unwrap();
        assert!(verdict.met && verdict.violations.is_empty(), "{name}: {verdict:?}");
        assert_eq!(verdict.rejections.get(&RejectionReason::StaleGeneration), Some(&1), "{name}");
        let mut broken = Engine::new(library::scenario(name, Some("broken")).unwrap()).unwrap();
        let verdict = broken.run().unwrap();
        assert!(verdict.met && !verdict.violations.is_empty(), "{name}: {verdict:?}");
    }
}

/// The checker judges what reached the boundary, not only what was applied: a newer owner's
/// refused write still makes an older owner's later write stale. The check-then-write store's
/// check refuses B's conditional write without raising anything, so A's stale write lands.
#[test]
fn the_checker_counts_a_refused_newer_write_as_presented() {
    let json = r#"{"name":"t","title":"t","resources":["ledger"],"authority":{"ttl":10},
        "stores":[{"name":"db","enforcement":"check_then_write"}],
        "workers":[
          {"name":"A","script":[{"acquire":{"resource":"ledger"}},{"write":{"resource":"ledger","value":"A"}},
             {"pause":{"ticks":15}},{"write":{"resource":"ledger","value":"A: stale"}}]},
          {"name":"B","start":2,"script":[{"acquire":{"resource":"ledger"}},
             {"write":{"resource":"ledger","value":"B","expected_revision":{"exactly":7}}}]}]}"#;
    let mut engine = Engine::from_json(json).unwrap();
    let verdict = engine.run().unwrap();
    let stale = verdict
        .violations
        .iter()
        .find(|v| v.invariant == InvariantKind::StaleWriteAccepted)
        .unwrap_or_else(|| panic!("not flagged: {:?}", verdict.violations));
    assert_eq!(
        stale.detail,
        "ledger in db accepted A's write from an older lease after B presented a newer one"
    );
}

#[test]
fn paths_into_the_same_data_share_one_fence_and_other_paths_keep_their_own() {
    let admin = library::scenario("admin-path", Some("fenced")).unwrap();
    let mut engine = Engine::new(admin).unwrap();
    engine.run().unwrap();
    let cells = &engine.state().stores[0].cells;
    assert_eq!(cells.len(), 1, "one cell for the ledger, however many paths reach it");
    // The forgotten object-store path still writes data of its own.
    let secondary = library::scenario("secondary-path", Some("broken")).unwrap();
    let mut engine = Engine::new(secondary).unwrap();
    let verdict = engine.run().unwrap();
    assert!(verdict.met);
    assert_eq!(engine.state().stores[0].cells.len(), 2);
}

#[test]
fn a_path_into_unknown_data_is_refused_with_its_field() {
    let json = r#"{"name":"t","title":"t","resources":["ledger"],"authority":{"ttl":10},
        "stores":[{"name":"db","enforcement":"fenced","paths":[{"name":"admin","enforcement":"fenced","data":"ledgr"}]}],
        "workers":[{"name":"A","script":[{"acquire":{"resource":"ledger"}}]}]}"#;
    let err = Scenario::from_json(json).unwrap_err();
    assert_eq!(err.path, "stores[0].paths[0].data");
    assert!(err.problem.contains("unknown data \"ledgr\""), "{err}");
}

#[test]
fn a_gateway_in_a_store_only_mode_is_refused_with_its_field() {
    for mode in ["check_then_write", "fenced_idempotent"] {
        let json = format!(
            r#"{{"name":"t","title":"t","resources":["r"],"authority":{{"ttl":10}},
            "stores":[{{"name":"db","enforcement":"fenced"}}],"gateway":{{"partner":"p","enforcement":"{mode}"}},"workers":[{{"name":"A","script":[{{"acquire":{{"resource":"r"}}}}]}}]}}"#
        );
        let err = Scenario::from_json(&json).unwrap_err();
        assert_eq!(err.path, "gateway.enforcement", "{mode}");
        assert!(err.problem.contains("store mode"), "{err}");
    }
}

/// The store as it was: a replay answered before the fence is raised. The conformance kit must
/// tell it from the reference on the built-in stories.
struct ReplayBeforeRaise(std::collections::BTreeMap<ResourceId, FencedResource>);

impl FencedStore for ReplayBeforeRaise {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let resource = self.0.entry(request.resource.clone()).or_insert_with(|| {
            FencedResource::new(
                FencedRegister::new(request.resource.clone(), SameGenerationPolicy::AllowSame),
                Retention::FOREVER,
            )
        });
        if let Err(rejection) = resource.register.check_generation(request.generation) {
            return Ok(WriteOutcome::Rejected(rejection));
        }
        if let Some(stored) = resource.idempotency.lookup(&request.operation) {
            return Ok(WriteOutcome::Replayed(*stored));
        }
        Ok(resource.write(request, now))
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Infallible> {
        Ok(self.0.get(resource).map(|r| StoredValue {
            highest: r.register.highest(),
            value: r.register.value().map(str::to_string),
            revision: r.register.revision(),
        }))
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, Infallible> {
        Ok(self.0.get(resource).and_then(|r| r.idempotency.lookup(operation)).copied())
    }
}

#[test]
fn the_conformance_kit_catches_a_store_that_replays_without_raising_the_fence() {
    let story = library::scenario("newer-owner-retry", Some("fenced")).unwrap();
    let result = check_store(&[story], |_| Ok(ReplayBeforeRaise(Default::default())));
    let divergence = result.expect_err("the kit must catch it");
    assert_eq!(divergence.rule(), Some(Rule::FenceRaise), "{divergence}");
    let message = divergence.to_string();
    assert!(message.contains("newer-owner-retry/fenced"), "{message}");
    assert!(message.contains("state after"), "{message}");
}

#[test]
fn a_strict_own_retry_past_its_retention_is_not_answered_from_the_record() {
    let retention = Retention { max_entries: None, max_age: Some(5) };
    let mut resource =
        FencedResource::new(register(SameGenerationPolicy::StrictlyNewer), retention);
    assert!(resource.write(&write(1, "op", "v"), Tick(0)).is_applied());
    assert!(matches!(resource.write(&write(1, "op", "v"), Tick(2)), WriteOutcome::Replayed(_)));
    let late = resource.write(&write(1, "op", "v"), Tick(100));
    assert!(matches!(late, WriteOutcome::Rejected(WriteRejection::Stale { .. })), "{late:?}");
}

#[test]
fn a_strict_gateways_own_repeat_is_a_duplicate() {
    let mut gateway = SideEffectGateway::new(SameGenerationPolicy::StrictlyNewer);
    assert!(matches!(gateway.submit(effect("o", 1, "op"), Tick(1)), GatewayOutcome::Delivered(_)));
    let again = gateway.submit(effect("o", 1, "op"), Tick(2));
    assert!(matches!(again, GatewayOutcome::Dropped(DropReason::Duplicate { .. })), "{again:?}");
}

#[test]
fn a_duplicate_path_name_is_reported_at_its_own_index() {
    let json = |paths: &str| {
        format!(
            r#"{{"name":"t","title":"t","resources":["r"],"authority":{{"ttl":10}},
            "stores":[{{"name":"db","enforcement":"fenced","paths":[{paths}]}}],
            "workers":[{{"name":"A","script":[{{"acquire":{{"resource":"r"}}}}]}}]}}"#
        )
    };
    let twice = json(r#"{"name":"a","enforcement":"fenced"},{"name":"a","enforcement":"fenced"}"#);
    assert_eq!(Scenario::from_json(&twice).unwrap_err().path, "stores[0].paths[1]");
    let primary = json(r#"{"name":"primary","enforcement":"fenced"}"#);
    let err = Scenario::from_json(&primary).unwrap_err();
    assert_eq!(err.path, "stores[0].paths[0]");
    assert!(err.problem.contains("default path"), "{err}");
}

/// Found by the soak run: A's second lease is refused because B's newer lease reached the store
/// first (B's conditional write then failed its revision check). The fence worked, and the final
/// value (A's, from before) is not a violation.
#[test]
fn a_write_refused_because_a_newer_lease_showed_up_does_not_claim_the_final_value() {
    let json = r#"{"name":"final-value-finding","title":"t","resources":["r0"],"authority":{"ttl":11},
      "stores":[{"name":"db","enforcement":"fenced","check_write_gap":0}],"network":{"latency":0},
      "workers":[{"name":"A","script":[{"acquire":{"resource":"r0"}},{"write":{"resource":"r0","value":"A1"}},
          {"acquire":{"resource":"r0"}},{"pause":{"ticks":12,"reason":"gc_pause"}},{"write":{"resource":"r0","value":"A7"}}]},
        {"name":"B","script":[{"acquire":{"resource":"r0"}},
          {"write":{"resource":"r0","value":"B1","expected_revision":{"exactly":0}}}]}]}"#;
    let mut engine = Engine::from_json(json).unwrap();
    let verdict = engine.run().unwrap();
    assert!(verdict.violations.is_empty(), "{:?}", verdict.violations);
    assert!(engine.records().iter().any(|r| r.caption.contains("revision conflict")));
    assert!(engine.records().iter().any(|r| r.caption.contains("rejects A's write \"A7\"")));
}
