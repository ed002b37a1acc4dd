//! Generated scenarios under random schedules: with every protection on, no safety invariant
//! ever breaks, whatever the interleaving.

use fencelab_core::format::model::*;
use fencelab_core::invariant::InvariantKind;
use fencelab_core::*;
use fencelab_core::{
    fence::gateway::Effect, fence::register::SameGenerationPolicy, format::model::Fault,
    format::model::PauseReason, record::ScheduleMode,
};
use proptest::prelude::*;

fn step_strategy(worker: usize) -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        (0u64..4, "[a-c]{1,3}").prop_map(|(delay, value)| (Some(delay), value, 0u8)),
        (0u64..25).prop_map(|t| (Some(t), String::new(), 1)),
        (0u64..6).prop_map(|t| (Some(t), String::new(), 2)),
        Just((None, String::new(), 3)),
        Just((None, String::new(), 4)),
        Just((None, String::new(), 5)),
        Just((None, String::new(), 6)),
    ];
    prop::collection::vec(step, 0..8).prop_map(move |raw| {
        let mut script = vec![Step::Acquire { resource: "r".into() }];
        let mut ops = Vec::new();
        for (i, (n, value, kind)) in raw.into_iter().enumerate() {
            let op = format!("w{worker}-{i}");
            script.push(match kind {
                0 => {
                    ops.push(op.clone());
                    Step::Write(WriteStep {
                        resource: "r".into(),
                        value,
                        operation: Some(op),
                        expected_revision: None,
                        store: None,
                        path: None,
                        delay: n.unwrap_or(0),
                        forge: None,
                    })
                }
                1 => Step::Pause {
                    ticks: n.unwrap_or(0),
                    reason: PauseReason::GcPause,
                    optional: false,
                },
                2 => Step::Compute { ticks: n.unwrap_or(0) },
                3 => Step::Renew { resource: "r".into() },
                4 => {
                    ops.push(op.clone());
                    Step::Effect(EffectStep {
                        resource: "r".into(),
                        workflow: None,
                        effect: Effect::CapturePayment { amount_cents: 100 },
                        operation: Some(op),
                        delay: 0,
                    })
                }
                5 => match ops.last() {
                    Some(op) => Step::Retry { operation: op.clone() },
                    None => Step::Read { resource: "r".into(), store: None, path: None },
                },
                _ => Step::Acquire { resource: "r".into() },
            });
        }
        script
    })
}

fn fenced_scenario() -> impl Strategy<Value = Scenario> {
    let workers = (1usize..4)
        .prop_flat_map(|n| (0..n).map(|w| (0u64..6, step_strategy(w))).collect::<Vec<_>>());
    let faults = prop::collection::vec((0u64..40, 0u8..3), 0..3);
    (workers, faults, 1u64..12, 0u64..3, prop::collection::vec(0usize..4, 0..40)).prop_map(
        |(workers, faults, ttl, latency, schedule)| {
            let mut s =
                fencelab_core::stories::library::scenario("paused-worker", Some("fenced")).unwrap();
            s.name = "generated".into();
            s.resources = vec!["r".into()];
            s.authority = AuthoritySpec {
                ttl,
                token_source: TokenSource::DurableCounter,
                authenticated: true,
            };
            s.stores[0].enforcement = Enforcement::FencedIdempotent;
            s.gateway = Some(GatewaySpec {
                partner: "payments".into(),
                enforcement: Enforcement::Fenced,
                policy: SameGenerationPolicy::AllowSame,
            });
            s.network.latency = latency;
            s.workers = workers
                .into_iter()
                .enumerate()
                .map(|(w, (start, script))| WorkerSpec {
                    name: format!("w{w}"),
                    start,
                    clock_offset: 0,
                    script,
                })
                .collect();
            s.faults = faults
                .into_iter()
                .map(|(at, kind)| FaultSpec {
                    at,
                    fault: match kind {
                        0 => Fault::RestartAuthority,
                        1 => Fault::RestartStore { store: "db".into() },
                        _ => Fault::PauseWorker {
                            worker: "w0".into(),
                            ticks: 15,
                            reason: PauseReason::Descheduled,
                        },
                    },
                })
                .collect();
            s.expect = Expectations::default();
            s.schedule = schedule;
            s
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn fully_fenced_scenarios_never_break_a_safety_invariant(scenario in fenced_scenario()) {
        let json = scenario.to_json();
        let mut engine = Engine::new(scenario).expect("generated scenarios are valid").with_schedule_mode(ScheduleMode::Lenient);
        let verdict = engine.run().expect("runs to the end");
        prop_assert!(verdict.finished);
        let safety = InvariantKind::SAFETY;
        let broken: Vec<_> = verdict.violations.iter().filter(|v| safety.contains(&v.invariant)).collect();
        prop_assert!(broken.is_empty(), "{broken:#?}\n{json}");
    }

    #[test]
    fn the_same_scenario_replays_identically(scenario in fenced_scenario()) {
        let mut a = Engine::new(scenario.clone()).unwrap().with_schedule_mode(ScheduleMode::Lenient);
        let mut b = Engine::new(scenario).unwrap().with_schedule_mode(ScheduleMode::Lenient);
        a.run().unwrap();
        b.run().unwrap();
        prop_assert_eq!(a.records(), b.records());
        prop_assert_eq!(a.state(), b.state());
    }
}
