//! Serde's derive writes and reads the scenario format; `Scenario::from_json` adds the strict
//! text reader (duplicate keys, trailing text, the size limit), field paths and validation. These
//! tests hold every built-in story and every shape of the format to one round trip, and pin the
//! errors a hand-edited file gets.

use fencelab_core::format::model::*;
use fencelab_core::stories::library;
use fencelab_core::{
    fence::gateway::Effect, fence::register::RejectionReason,
    fence::register::SameGenerationPolicy, format::error::ScenarioError, format::model::Fault,
    format::model::Injection, format::model::PauseReason, invariant::InvariantKind, names::Named,
};
use fencelab_core::{stories::switches, stories::switches::Switch};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn read(value: Value) -> Result<Scenario, ScenarioError> {
    Scenario::from_json(&value.to_string())
}

/// A scenario that uses every variant of every named choice in the format, so each name is
/// written and read back.
fn every_name() -> Scenario {
    let mut s = library::scenario("payment-capture", None).expect("built-in");
    s.authority.token_source = TokenSource::WallClock;
    let kinds = [
        Enforcement::Unfenced,
        Enforcement::CheckThenWrite,
        Enforcement::Fenced,
        Enforcement::FencedIdempotent,
    ];
    s.stores[0].paths = kinds
        .iter()
        .enumerate()
        .map(|(i, &enforcement)| PathSpec { name: format!("p{i}"), enforcement, data: None })
        .collect();
    s.stores[0].policy = SameGenerationPolicy::StrictlyNewer;
    s.expect.violations = InvariantKind::ALL.to_vec();
    let reasons = [
        RejectionReason::StaleGeneration,
        RejectionReason::InvalidToken,
        RejectionReason::RevisionConflict,
        RejectionReason::WrongResource,
        RejectionReason::RevisionExhausted,
        RejectionReason::DuplicateEffect,
    ];
    s.expect.rejections = Some(reasons.iter().map(|&r| (r, 1)).collect::<BTreeMap<_, _>>());
    let pauses = [
        PauseReason::GcPause,
        PauseReason::Descheduled,
        PauseReason::NetworkStall,
        PauseReason::Rescheduled,
        PauseReason::OverloadedEventLoop,
    ];
    let script = &mut s.workers[0].script;
    for reason in pauses {
        script.push(Step::Pause { ticks: 1, reason, optional: true });
    }
    for effect in [
        Effect::CapturePayment { amount_cents: 5 },
        Effect::SendEmail { to: "a".into(), subject: "b".into() },
        Effect::CallWebhook { endpoint: "c".into(), payload: "d".into() },
    ] {
        let resource = s.resources[0].clone();
        script.push(Step::Effect(EffectStep {
            resource,
            workflow: None,
            effect,
            operation: None,
            delay: 0,
        }));
    }
    s.faults.push(FaultSpec { at: 1, fault: Fault::RestartAuthority });
    s.injected.push(Injection { after: 2, fault: Fault::RestartAuthority });
    s
}

#[test]
fn every_name_serde_writes_is_read_back_unchanged() {
    let scenario = every_name();
    let value: Value = serde_json::from_str(&scenario.to_json()).unwrap();
    let back = Scenario::from_value(&value);
    // Validation may object to the odd combination; the reader must not.
    let parsed: Scenario =
        serde_json::from_value(value).expect("the reader accepts serde's output");
    assert_eq!(parsed, scenario);
    if let Ok(back) = back {
        assert_eq!(back, scenario);
    }
}

/// Every built-in story: each case's every variant, the generated loads, and each variant with
/// every switch that applies to it turned on.
fn built_in_stories() -> Vec<Scenario> {
    let mut stories: Vec<Scenario> = library::cases()
        .iter()
        .flat_map(|case| {
            case.variants.iter().map(|v| library::scenario(&case.name, Some(v)).expect("listed"))
        })
        .collect();
    assert_eq!(stories, library::all(), "cases() lists every story all() builds");
    let switched: Vec<Scenario> = stories
        .iter()
        .flat_map(|s| {
            Switch::ALL.iter().filter(|w| w.applies_to(s)).map(|&w| switches::broken(s, &[w]))
        })
        .collect();
    stories.extend(switched);
    stories.push(library::generated(20, 5, 6));
    stories.push(library::stampede(8));
    stories.extend(Enforcement::VARIANTS.iter().map(|&e| library::contention(4, e)));
    stories
}

/// Writes `scenario` and reads it back every way the format is read: `from_json` (pretty and
/// compact text), `from_value`, and serde's derive directly.
fn assert_round_trip(scenario: &Scenario) {
    let at = format!("{} / {}", scenario.name, scenario.variant);
    let pretty = scenario.to_json();
    let compact = serde_json::to_string(scenario).unwrap();
    let value = serde_json::to_value(scenario).unwrap();
    assert_eq!(Scenario::from_json(&pretty).as_ref(), Ok(scenario), "{at}");
    assert_eq!(Scenario::from_json(&compact).as_ref(), Ok(scenario), "{at}");
    assert_eq!(Scenario::from_value(&value).as_ref(), Ok(scenario), "{at}");
    assert_eq!(&serde_json::from_str::<Scenario>(&pretty).unwrap(), scenario, "{at}");
    assert_eq!(&serde_json::from_value::<Scenario>(value).unwrap(), scenario, "{at}");
}

#[test]
fn every_built_in_story_writes_and_reads_back_equal() {
    let stories = built_in_stories();
    assert!(stories.len() > library::all().len());
    for scenario in &stories {
        assert_round_trip(scenario);
    }
}

proptest::proptest! {
    #[test]
    fn any_story_with_any_switches_reads_back_equal(
        story in proptest::sample::select(library::all()),
        picked in proptest::sample::subsequence(Switch::ALL.to_vec(), 0..=Switch::ALL.len()),
    ) {
        let on: Vec<Switch> = picked.into_iter().filter(|w| w.applies_to(&story)).collect();
        assert_round_trip(&switches::broken(&story, &on));
    }
}

#[test]
fn defaults_fill_in_what_a_file_leaves_out() {
    let s = read(json!({
        "name": "tiny",
        "title": "Tiny",
        "resources": ["r"],
        "authority": {"ttl": 5},
        "stores": [{"name": "db", "enforcement": "fenced"}],
        "workers": [{"name": "A", "script": [{"acquire": {"resource": "r"}}]}]
    }))
    .expect("a minimal scenario");
    assert_eq!(s.variant, "custom");
    assert_eq!(s.network, NetworkSpec { latency: 1, jitter: 0 });
    assert!(s.stores[0].persist_highest && s.stores[0].critical);
    assert_eq!(s.stores[0].check_write_gap, 1);
    assert_eq!(s.authority.token_source, TokenSource::DurableCounter);
}

#[test]
fn shape_errors_name_the_field_in_serde_words() {
    let base = || -> Value {
        serde_json::from_str(&library::scenario("paused-worker", None).unwrap().to_json()).unwrap()
    };
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            Box::new(|v| drop(v.as_object_mut().unwrap().remove("title"))),
            ".",
            "missing field `title`",
        ),
        (
            Box::new(|v| v["authority"]["ttl"] = json!("ten")),
            "authority.ttl",
            "invalid type: string \"ten\", expected u64",
        ),
        (
            Box::new(|v| v["authority"]["ttl"] = json!(1.5)),
            "authority.ttl",
            "invalid type: floating point `1.5`",
        ),
        (
            Box::new(|v| v["workers"][0]["script"][0] = json!({"teleport": {}})),
            "workers[0].script[0]",
            "unknown variant `teleport`",
        ),
        (
            Box::new(|v| v["workers"][0]["script"][0] = json!({"acquire": {}, "renew": {}})),
            "workers[0].script[0]",
            "expected an object with one key, the name of what it is, holding its fields (e.g. {\"pause_worker\": {\"worker\": \"A\", \"ticks\": 3}}); this one has `acquire`, `renew`",
        ),
        (
            Box::new(|v| v["workers"][0]["script"][0] = json!({"acquire": {"resource": 3}})),
            "workers[0].script[0].acquire.resource",
            "expected a string",
        ),
        (
            Box::new(|v| v["workers"][0]["clock_offset"] = json!(u64::MAX)),
            "workers[0].clock_offset",
            "expected i64",
        ),
        (
            Box::new(|v| v["stores"][0]["retention"] = json!({"max_entries": 0})),
            "stores[0].retention.max_entries",
            "expected a nonzero usize",
        ),
        (
            Box::new(|v| v["expect"]["violations"] = json!(["nope"])),
            "expect.violations[0]",
            "unknown variant `nope`",
        ),
        (
            Box::new(|v| v["workers"] = json!({})),
            "workers",
            "invalid type: map, expected a sequence",
        ),
        (
            Box::new(|v| v["faults"] = json!([{"at": 1, "fault": {"restart_authority": 3}}])),
            "faults[0].fault.restart_authority",
            "invalid type: integer `3`, expected unit",
        ),
    ];
    for (edit, path, problem) in cases {
        let mut v = base();
        edit(&mut v);
        let err = read(v).expect_err("the edit breaks the file");
        assert_eq!(err.path, path, "{err}");
        assert!(err.problem.contains(problem), "{err}");
    }
}

#[test]
fn a_key_written_twice_is_an_error_at_its_path() {
    let text = library::scenario("paused-worker", None).unwrap().to_json();
    let twice = |from: &str, to: &str| {
        assert!(text.contains(from), "{from}");
        Scenario::from_json(&text.replacen(from, to, 1)).expect_err("a duplicate key")
    };
    let err = twice("\"ttl\": 10", "\"ttl\": 10, \"ttl\": 3");
    assert_eq!(err.path, "authority.ttl");
    assert!(err.problem.starts_with("duplicate field `ttl` at line"), "{err}");
    let err = twice("\"name\": \"A\"", "\"name\": \"A\", \"name\": \"B\"");
    assert_eq!(err.path, "workers[0].name");
    // Broken text still reports serde_json's own message, and trailing junk is refused.
    assert!(Scenario::from_json(&format!("{text} x")).unwrap_err().problem.contains("trailing"));
}

mod generated {
    //! Every step and fault shape, with optional fields present or not and any numbers and text:
    //! what serde writes, the reader reads back unchanged.
    use super::*;
    use proptest::option::of;
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), "[a-z]{1,6}", any::<String>()]
    }

    fn pause_reason() -> impl Strategy<Value = PauseReason> {
        prop::sample::select(PauseReason::VARIANTS.to_vec())
    }

    fn effect() -> impl Strategy<Value = Effect> {
        prop_oneof![
            any::<u64>().prop_map(|amount_cents| Effect::CapturePayment { amount_cents }),
            (text(), text()).prop_map(|(to, subject)| Effect::SendEmail { to, subject }),
            (text(), text())
                .prop_map(|(endpoint, payload)| Effect::CallWebhook { endpoint, payload }),
        ]
    }

    fn step() -> impl Strategy<Value = Step> {
        let revision = prop_oneof![
            Just(ExpectedRevision::LastRead),
            any::<u64>().prop_map(ExpectedRevision::Exactly)
        ];
        let write = (
            text(),
            text(),
            of(text()),
            of(revision),
            of(text()),
            of(text()),
            any::<u64>(),
            of(any::<u64>()),
        )
            .prop_map(
                |(resource, value, operation, expected_revision, store, path, delay, forge)| {
                    Step::Write(WriteStep {
                        resource,
                        value,
                        operation,
                        expected_revision,
                        store,
                        path,
                        delay,
                        forge,
                    })
                },
            );
        let effect = (text(), of(text()), effect(), of(text()), any::<u64>()).prop_map(
            |(resource, workflow, effect, operation, delay)| {
                Step::Effect(EffectStep { resource, workflow, effect, operation, delay })
            },
        );
        prop_oneof![
            text().prop_map(|resource| Step::Acquire { resource }),
            text().prop_map(|resource| Step::Renew { resource }),
            text().prop_map(|resource| Step::Release { resource }),
            text().prop_map(|resource| Step::CheckLease { resource }),
            (text(), of(text()), of(text())).prop_map(|(resource, store, path)| Step::Read {
                resource,
                store,
                path
            }),
            any::<u64>().prop_map(|ticks| Step::Compute { ticks }),
            (any::<u64>(), pause_reason(), any::<bool>())
                .prop_map(|(ticks, reason, optional)| Step::Pause { ticks, reason, optional }),
            text().prop_map(|operation| Step::Retry { operation }),
            write,
            effect,
        ]
    }

    fn fault() -> impl Strategy<Value = Fault> {
        prop_oneof![
            (text(), any::<u64>(), pause_reason())
                .prop_map(|(worker, ticks, reason)| Fault::PauseWorker { worker, ticks, reason }),
            (text(), any::<u64>(), any::<u32>())
                .prop_map(|(worker, ticks, count)| Fault::DelayMessages { worker, ticks, count }),
            Just(Fault::RestartAuthority),
            text().prop_map(|store| Fault::RestartStore { store }),
        ]
    }

    proptest! {
        #[test]
        fn steps_round_trip(steps in prop::collection::vec(step(), 0..6), offset in any::<i64>()) {
            let worker = WorkerSpec { name: "A".into(), start: 0, clock_offset: offset, script: steps };
            let text = serde_json::to_string(&worker).unwrap();
            let back: WorkerSpec = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(back, worker);
        }

        #[test]
        fn faults_round_trip(at in any::<u64>(), fault in fault()) {
            let spec = FaultSpec { at, fault };
            let back: FaultSpec = serde_json::from_value(serde_json::to_value(&spec).unwrap()).unwrap();
            prop_assert_eq!(back, spec);
        }
    }
}

#[test]
fn serde_users_read_the_same_format() {
    // Serde users get the derived reader without `from_json`'s paths and validation; a field
    // written twice is still refused, by serde's derive.
    let text = library::scenario("paused-worker", None).unwrap().to_json();
    let back: Scenario = serde_json::from_str(&text).unwrap();
    assert_eq!(back, Scenario::from_json(&text).unwrap());
    let twice = text.replacen("\"ttl\": 10", "\"ttl\": 10, \"ttl\": 3", 1);
    let err = serde_json::from_str::<Scenario>(&twice).unwrap_err().to_string();
    assert!(err.starts_with("duplicate field `ttl` at line"), "{err}");
}

#[test]
fn a_syntax_error_names_the_value_where_reading_stopped() {
    let text = library::scenario("paused-worker", None).unwrap().to_json();
    let broken = text.replacen("\"ttl\": 10", "\"ttl\": }", 1);
    let err = Scenario::from_json(&broken).unwrap_err();
    assert_eq!(err.path, "authority.ttl", "{err}");
    assert!(err.problem.contains("line"), "{err}");
    let huge = text.replacen("\"ttl\": 10", "\"ttl\": 1e400", 1);
    let err = Scenario::from_json(&huge).unwrap_err();
    assert_eq!(err.path, "authority.ttl", "{err}");
    let err = Scenario::from_json(&text[..text.len() / 2]).unwrap_err();
    assert!(err.problem.contains("EOF"), "{err}");
}

#[test]
fn fieldless_variants_may_be_written_as_one_key_maps() {
    // Serde accepts `{"fenced": null}` for `"fenced"`; so does the reader.
    let mut v: Value =
        serde_json::from_str(&library::scenario("paused-worker", None).unwrap().to_json()).unwrap();
    v["stores"][0]["enforcement"] = json!({"fenced": null});
    v["authority"]["token_source"] = json!({"durable_counter": null});
    let s = read(v).expect("map form");
    assert_eq!(s.stores[0].enforcement, Enforcement::Fenced);
}
