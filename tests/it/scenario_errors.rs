//! Bad scenario files get an error naming the field and the problem, never a panic.

use fencelab_core::record::EngineError;
use fencelab_core::sim::SimError;
use fencelab_core::stories::library;
use fencelab_core::*;
use serde_json::{json, Value};

fn base() -> Value {
    serde_json::from_str(&library::scenario("paused-worker", Some("fenced")).unwrap().to_json())
        .unwrap()
}

/// Applies `edit` to a valid scenario and checks the error's path and problem.
fn check(edit: impl FnOnce(&mut Value), path: &str, problem: &str) {
    let mut value = base();
    edit(&mut value);
    let err =
        Scenario::from_json(&value.to_string()).expect_err("the edit makes the scenario invalid");
    assert_eq!(err.path, path, "{err}");
    assert!(err.problem.contains(problem), "{err}");
}

#[test]
fn each_kind_of_bad_input_names_its_field() {
    check(
        |v| v["workers"][1]["script"][0]["acquire"]["resource"] = json!("ledgr"),
        "workers[1].script[0].acquire.resource",
        "unknown resource \"ledgr\"",
    );
    check(
        |v| {
            v["faults"] = json!([{"at": 3, "fault": {"pause_worker": {"worker": "Z", "ticks": 3}}}])
        },
        "faults[0].fault.pause_worker.worker",
        "unknown worker \"Z\"",
    );
    check(
        |v| v["workers"][0]["script"][4]["pause"]["ticks"] = json!(-5),
        "workers[0].script[4].pause.ticks",
        "invalid value: integer `-5`",
    );
    check(|v| v["authority"]["ttl"] = json!(0), "authority.ttl", "must be at least 1 tick");
    check(
        |v| v["workers"][0]["script"][3]["write"]["forge"] = json!(0),
        "workers[0].script[3].write.forge",
        "positive integer token required",
    );
    check(
        |v| v["workers"][0]["colour"] = json!("red"),
        "workers[0].colour",
        "unknown field `colour`",
    );
    check(|v| v["workers"][1]["name"] = json!("A"), "workers[1]", "\"A\" appears twice");
    check(
        |v| v["stores"][0]["enforcement"] = json!("sometimes"),
        "stores[0].enforcement",
        "unknown variant `sometimes`",
    );
    check(
        |v| v["workers"][0]["script"][0] = json!({"compute": {"ticks": 1}}),
        "workers[0].script[3].write.resource",
        "has not acquired a lease on \"totals\"",
    );
    check(
        |v| {
            v["workers"][0]["script"]
                .as_array_mut()
                .unwrap()
                .push(json!({"retry": {"operation": "nope"}}))
        },
        "workers[0].script[6].retry.operation",
        "no earlier write or effect",
    );
    check(
        |v| {
            v["workers"][0]["script"].as_array_mut().unwrap().push(json!({"effect": {"resource": "totals", "effect": {"kind": "send_email", "to": "x", "subject": "y"}}}))
        },
        "workers[0].script[6].effect",
        "no gateway",
    );
    check(
        |v| v["workers"][0]["start"] = json!(u64::MAX),
        "workers[0].start",
        "more than the limit",
    );
    check(|v| v["resources"] = json!([]), "resources", "at least 1");
    check(
        |v| v["faults"] = json!([{"at": 1, "fault": {"delay_messages": {"worker": "A", "ticks": 3, "count": 0}}}]),
        "faults[0].fault.delay_messages.count",
        "between 1 and",
    );
}

#[test]
fn format_errors_name_the_field_path() {
    // Each kind of problem the file format itself catches, deep inside the file.
    check(
        |v| v["workers"][1]["script"][0]["acquire"]["resorce"] = json!("ledger"),
        "workers[1].script[0].acquire.resorce",
        "unknown field `resorce`, expected `resource`",
    );
    check(
        |v| v["stores"][0]["retention"] = json!({"max_entries": 3, "max_ages": 5}),
        "stores[0].retention.max_ages",
        "unknown field `max_ages`, expected `max_entries` or `max_age`",
    );
    check(
        |v| v["workers"][1]["script"][0] = json!({"aquire": {"resource": "totals"}}),
        "workers[1].script[0]",
        "unknown variant `aquire`, expected one of `acquire`, `renew`",
    );
    check(
        |v| v["workers"][0]["script"][4]["pause"]["reason"] = json!("nap"),
        "workers[0].script[4].pause.reason",
        "unknown variant `nap`, expected one of `gc_pause`",
    );
    check(
        |v| v["expect"]["rejections"] = json!({"stale_generaton": 1}),
        "expect.rejections.stale_generaton",
        "unknown variant `stale_generaton`, expected one of `stale_generation`",
    );
    check(
        |v| {
            drop(
                v["workers"][1]["script"][0]["acquire"].as_object_mut().unwrap().remove("resource"),
            )
        },
        "workers[1].script[0].acquire",
        "missing field `resource`",
    );
    check(
        |v| drop(v["stores"][0].as_object_mut().unwrap().remove("enforcement")),
        "stores[0]",
        "missing field `enforcement`",
    );
}

#[test]
fn a_key_written_twice_is_refused_at_its_path() {
    let text = base().to_string();
    let twice = text.replacen("\"ticks\":", "\"ticks\":1,\"ticks\":", 1);
    assert_ne!(twice, text);
    let err = Scenario::from_json(&twice).unwrap_err();
    assert!(err.path.starts_with("workers[0].script["), "{err}");
    assert!(err.path.ends_with(".ticks"), "{err}");
    assert!(err.problem.starts_with("duplicate field `ticks`"), "{err}");
    // Keys of a map are refused twice too, not only a struct's fields.
    let counts = "{\"stale_generation\":1,\"stale_generation\":2}";
    let twice = text.replacen("\"expect\":{", &format!("\"expect\":{{\"rejections\":{counts},"), 1);
    let err = Scenario::from_json(&twice).unwrap_err();
    assert_eq!(err.path, "expect.rejections.stale_generation", "{err}");
    assert!(err.problem.starts_with("duplicate field `stale_generation`"), "{err}");
}

#[test]
fn a_bad_forged_token_is_not_a_positive_integer_token() {
    for bad in [json!(0), json!(-3), json!(1.5), json!("7"), json!(1e20), json!(true)] {
        check(
            |v| v["workers"][0]["script"][3]["write"]["forge"] = bad.clone(),
            "workers[0].script[3].write.forge",
            "positive integer token required",
        );
    }
    // Past the largest integer JSON numbers carry, the text form says how large it was.
    let text = base().to_string();
    let huge = text.replacen("\"value\":", "\"forge\":18446744073709551616,\"value\":", 1);
    let err = Scenario::from_json(&huge).unwrap_err();
    assert_eq!(err.path, "workers[0].script[3].write.forge", "{err}");
    assert!(err.problem.starts_with("positive integer token required"), "{err}");
}

#[test]
fn size_limits_are_enforced_with_a_clear_message() {
    check(
        |v| {
            let worker = v["workers"][1].clone();
            let workers: Vec<Value> = (0..10_001)
                .map(|i| {
                    let mut w = worker.clone();
                    w["name"] = json!(format!("w{i}"));
                    w
                })
                .collect();
            v["workers"] = Value::Array(workers);
        },
        "workers",
        "the limit is 10000",
    );
    let huge = " ".repeat(fencelab_core::format::limits::MAX_SCENARIO_BYTES + 1);
    assert!(Scenario::from_json(&huge).unwrap_err().problem.contains("limit"));
}

#[test]
fn broken_json_reports_where_it_broke() {
    let err = Scenario::from_json("{\"name\": \"x\", ").unwrap_err();
    assert!(err.problem.contains("EOF"), "{err}");
    let err = Scenario::from_json("[]").unwrap_err();
    assert_eq!(err.path, ".");
}

#[test]
fn a_schedule_index_with_no_such_choice_is_an_error_at_its_step() {
    let mut scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    scenario.schedule = vec![7];
    let mut engine = Engine::new(scenario).unwrap();
    let err = engine.run().unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::Sim(SimError::BadChoice { index: 0, choice: 7, enabled: 2, .. })
        ),
        "{err}"
    );
    assert!(
        err.to_string().starts_with("schedule[0]: choice 7, but only 2 events were enabled"),
        "{err}"
    );
    // The engine is still usable: the state is whatever it was before the bad choice.
    let position = engine.position();
    engine.seek(0).unwrap();
    assert_eq!(engine.position(), 0);
    assert!(position > 0);
}
