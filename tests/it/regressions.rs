//! Bugs found in review, each pinned by the smallest story that showed it.

use fencelab_core::stories::library;
use fencelab_core::*;
use fencelab_core::{
    drive::explore::ExploreConfig, drive::explore::ExploreResult, drive::explore::Explorer,
    fence::idempotency::Retention, fence::idempotency::StoredResult,
    fence::register::SameGenerationPolicy, fence::register::WriteRejection,
    fence::store::MemoryStore, invariant::InvariantKind,
};

fn scenario(body: &str) -> String {
    format!(r#"{{"name":"t","title":"t", {body} }}"#)
}

fn run(json: &str) -> (Engine, Verdict) {
    let mut engine = Engine::from_json(json).expect("valid");
    let verdict = engine.run().expect("runs");
    (engine, verdict)
}

fn kinds(verdict: &Verdict) -> Vec<InvariantKind> {
    verdict.violations.iter().map(|v| v.invariant).collect()
}

#[test]
fn names_that_would_make_invalid_ids_are_refused_at_validation() {
    let empty_op = scenario(
        r#""resources":["r"],"authority":{"ttl":5},"stores":[{"name":"db","enforcement":"fenced"}],
        "workers":[{"name":"A","script":[{"acquire":{"resource":"r"}},{"write":{"resource":"r","value":"v","operation":""}}]}]"#,
    );
    let err = Scenario::from_json(&empty_op).unwrap_err();
    assert_eq!(err.path, "workers[0].script[1].write.operation");
    let long_name = "W".repeat(fencelab_core::ids::MAX_ID_LEN);
    let generated = scenario(&format!(
        r#""resources":["r"],"authority":{{"ttl":5}},"stores":[{{"name":"db","enforcement":"fenced"}}],
        "workers":[{{"name":"{long_name}","script":[{{"acquire":{{"resource":"r"}}}},{{"write":{{"resource":"r","value":"v"}}}}]}}]"#
    ));
    let err = Scenario::from_json(&generated).unwrap_err();
    assert!(err.problem.contains("give the step an explicit, shorter operation id"), "{err}");
    let blank_workflow = scenario(
        r#""resources":["r"],"authority":{"ttl":5},"stores":[{"name":"db","enforcement":"fenced"}],
        "gateway":{"partner":"p","enforcement":"fenced"},
        "workers":[{"name":"A","script":[{"acquire":{"resource":"r"}},{"effect":{"resource":"r","workflow":" ","effect":{"kind":"send_email","to":"x","subject":"s"}}}]}]"#,
    );
    assert_eq!(
        Scenario::from_json(&blank_workflow).unwrap_err().path,
        "workers[0].script[1].effect.workflow"
    );
}

#[test]
fn a_workflow_is_authorized_by_one_resource_only() {
    let json = scenario(
        r#""resources":["a","b"],"authority":{"ttl":5},"stores":[{"name":"db","enforcement":"fenced"}],
        "gateway":{"partner":"p","enforcement":"unfenced"},
        "workers":[
          {"name":"A","script":[{"acquire":{"resource":"a"}},{"effect":{"resource":"a","workflow":"order-1","effect":{"kind":"send_email","to":"x","subject":"s"}}}]},
          {"name":"B","start":10,"script":[{"acquire":{"resource":"b"}},{"effect":{"resource":"b","workflow":"order-1","effect":{"kind":"send_email","to":"y","subject":"s"}}}]}]"#,
    );
    let err = Scenario::from_json(&json).unwrap_err();
    assert_eq!(err.path, "workers[1].script[1].effect.workflow");
    assert!(err.problem.contains("already authorized by resource \"a\""), "{err}");
}

/// A replay or a revision conflict is the fence working; it must not make the previous owner's
/// value look wrong.
#[test]
fn a_replayed_or_conflicting_write_does_not_count_as_the_latest_owner_writing() {
    let shared_op = scenario(
        r#""resources":["r"],"authority":{"ttl":5},"stores":[{"name":"db","enforcement":"fenced_idempotent"}],
        "workers":[
          {"name":"A","script":[{"acquire":{"resource":"r"}},{"write":{"resource":"r","value":"charge","operation":"job-1"}}]},
          {"name":"B","start":6,"script":[{"acquire":{"resource":"r"}},{"write":{"resource":"r","value":"charge","operation":"job-1"}}]}]"#,
    );
    assert_eq!(kinds(&run(&shared_op).1), []);
    let explored =
        Explorer::new(Scenario::from_json(&shared_op).unwrap(), ExploreConfig::default())
            .unwrap()
            .run();
    assert!(matches!(explored, ExploreResult::NoViolation { .. }), "{explored:?}");
    let conflict = shared_op.replace(
        r#"{"write":{"resource":"r","value":"charge","operation":"job-1"}}]}]"#,
        r#"{"write":{"resource":"r","value":"b","expected_revision":{"exactly":0}}}]}]"#,
    );
    assert!(conflict.contains("exactly"));
    assert_eq!(kinds(&run(&conflict).1), []);
}

#[test]
fn a_retry_sent_after_the_lease_expired_is_a_write_outside_the_lease() {
    let json = scenario(
        r#""resources":["r"],"authority":{"ttl":5},"stores":[{"name":"db","enforcement":"fenced_idempotent"}],
        "workers":[{"name":"A","script":[{"acquire":{"resource":"r"}},{"write":{"resource":"r","value":"a","operation":"op","delay":40}},{"pause":{"ticks":20}},{"retry":{"operation":"op"}}]}]"#,
    );
    assert_eq!(kinds(&run(&json).1), [InvariantKind::WriteOutsideLease]);
}

#[test]
fn age_retention_forgets_every_expired_entry_even_out_of_time_order() {
    let retention = Retention { max_entries: None, max_age: Some(3) };
    let mut memory = MemoryStore::new(SameGenerationPolicy::AllowSame, retention);
    let write = |op: &str| {
        WriteRequest::new(
            ResourceId::new("r").unwrap(),
            Generation::new(1).unwrap(),
            OperationId::new(op).unwrap(),
            None,
            op,
        )
    };
    for (op, t) in [("op1", 6), ("op2", 2), ("op3", 5)] {
        assert!(memory.write(&write(op), Tick(t)).unwrap().is_applied());
    }
    // op2 was recorded at t=2; at t=5 it is 3 ticks old and forgotten, although op1 (recorded
    // later in call order, at t=6) is not.
    assert!(memory.write(&write("op2"), Tick(5)).unwrap().is_applied());
}

#[test]
fn under_the_strict_policy_the_owners_own_retry_is_replayed_not_refused() {
    let mut memory = MemoryStore::new(SameGenerationPolicy::StrictlyNewer, Retention::FOREVER);
    let request = WriteRequest::new(
        ResourceId::new("r").unwrap(),
        Generation::new(3).unwrap(),
        OperationId::new("op").unwrap(),
        None,
        "v",
    );
    let WriteOutcome::Applied(applied) = memory.write(&request, Tick(1)).unwrap() else { panic!() };
    let again = memory.write(&request, Tick(2)).unwrap();
    assert_eq!(
        again,
        WriteOutcome::Replayed(StoredResult {
            generation: applied.generation,
            applied,
            recorded_at: Tick(1)
        })
    );
    // A different operation under the same generation is still refused.
    let other = WriteRequest { operation: OperationId::new("op-2").unwrap(), ..request };
    assert!(matches!(
        memory.write(&other, Tick(3)).unwrap(),
        WriteOutcome::Rejected(WriteRejection::Stale { .. })
    ));
}

#[test]
fn conformance_names_resources_by_index_so_long_names_are_not_skipped() {
    let mut s = library::scenario("paused-worker", Some("fenced")).unwrap();
    let long = "x".repeat(120);
    s.resources = vec![long.clone()];
    for w in &mut s.workers {
        for step in &mut w.script {
            *step = serde_json::from_str(
                &serde_json::to_string(step).unwrap().replace("totals", &long),
            )
            .unwrap();
        }
    }
    assert_eq!(fencelab_core::drive::conformance::writes_of(&s).len(), 3);
}

#[test]
fn a_pause_fault_does_not_revive_a_stopped_worker_or_rerun_an_acquire() {
    let stopped = scenario(
        r#""resources":["r"],"authority":{"ttl":5},"stores":[{"name":"db","enforcement":"fenced"}],
        "faults":[{"at":20,"fault":{"pause_worker":{"worker":"A","ticks":2}}}],
        "workers":[{"name":"A","script":[{"acquire":{"resource":"r"}},{"compute":{"ticks":10}},{"renew":{"resource":"r"}}]}]"#,
    );
    let (engine, _) = run(&stopped);
    let captions: Vec<&str> = engine.records().iter().map(|r| r.caption.as_str()).collect();
    assert!(
        captions.iter().any(|c| c
            .contains("which has already stopped or is frozen for longer anyway: nothing changes")),
        "{captions:#?}"
    );
    assert_eq!(
        captions.iter().filter(|c| c.contains("tries to renew")).count(),
        1,
        "{captions:#?}"
    );

    let grant_in_flight = scenario(
        r#""resources":["r"],"authority":{"ttl":10},"stores":[{"name":"db","enforcement":"fenced"}],
        "network":{"latency":4},
        "faults":[{"at":1,"fault":{"pause_worker":{"worker":"A","ticks":1}}}],
        "workers":[{"name":"A","script":[{"acquire":{"resource":"r"}},{"write":{"resource":"r","value":"a"}}]}]"#,
    );
    let (engine, verdict) = run(&grant_in_flight);
    assert!(
        engine.records().iter().all(|r| !matches!(r.event, Event::LeaseBusy { .. })),
        "no second acquire"
    );
    assert_eq!(kinds(&verdict), []);
    let last = &engine.state().stores[0].cells[&("primary".to_string(), "r".parse().unwrap())];
    assert_eq!(last.resource.register.value(), Some("a"));
}
