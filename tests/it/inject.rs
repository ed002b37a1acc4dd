//! Deciding what happens next: the engine's list of choices, faults injected by hand at a step,
//! undo, and the replay of the path taken from the scenario alone.

use fencelab_core::sim::SimError;
use fencelab_core::stories::library;
use fencelab_core::{
    drive::explore::ExploreConfig, drive::explore::ExploreResult, drive::explore::Explorer,
    format::model::Fault, format::model::Injection, record::EngineError, sim::Next, sim::Way,
    Engine, Event, Scenario,
};
use fencelab_core::{format::model::Enforcement, format::model::Step};

/// The events of a run, to compare two runs.
fn events(engine: &Engine) -> Vec<Event> {
    engine.records().iter().map(|r| r.event.clone()).collect()
}

/// Replays the path an engine took from its scenario alone, as a reader's share link or the
/// command line would: through JSON, with the schedule it made.
fn replayed(engine: &Engine) -> Engine {
    let mut scenario = engine.scenario().clone();
    scenario.schedule = engine.schedule_so_far();
    let json = serde_json::to_string(&scenario).expect("serializes");
    let mut replay = Engine::from_json(&json).expect("the path replays");
    replay.seek(engine.position()).expect("seeks");
    replay
}

/// The worker the event is about, for events that have one.
fn worker_of(event: &Event) -> Option<String> {
    event.fields().get("worker").and_then(|w| w.as_str()).map(str::to_string)
}

#[test]
fn every_possible_fault_injected_anywhere_replays_from_the_scenario() {
    let mut injected = 0;
    for scenario in library::all() {
        let mut whole = Engine::new(scenario.clone()).unwrap();
        whole.run().unwrap();
        let length = whole.position();
        for at in [0, 1, length / 2] {
            let mut probe = Engine::new(scenario.clone()).unwrap();
            probe.seek(at).unwrap();
            for fault in probe.possible_faults() {
                let mut engine = Engine::new(scenario.clone()).unwrap();
                engine.seek(at).unwrap();
                if engine.is_finished() {
                    continue;
                }
                let record = engine.inject(fault.clone()).expect("a possible fault injects");
                assert_eq!(record.index, at, "{}: the fault runs as the next step", scenario.name);
                assert!(record.caption.starts_with("Injected by hand: "), "{}", record.caption);
                let name = fault.name();
                let kind = record.event.kind();
                let expected: &[&str] = match name {
                    "pause_worker" => &["paused", "pause_ignored"],
                    "delay_messages" => &["messages_delayed"],
                    "restart_authority" => &["authority_restarted"],
                    "restart_store" => &["store_restarted"],
                    "skew_clock" => &["clock_skewed"],
                    "lose_message" => &["message_lost"],
                    other => panic!("a fault the test does not know: {other}"),
                };
                assert!(
                    expected.contains(&kind),
                    "{}/{} at {at}: {name} ran as {kind}",
                    scenario.name,
                    scenario.variant
                );
                assert_eq!(engine.scenario().injected.len(), 1);
                assert_eq!(engine.scenario().injected[0].after, at);
                engine.run().expect("the run goes on after the fault");
                let replay = replayed(&engine);
                assert_eq!(
                    events(&replay),
                    events(&engine),
                    "{}/{}: {name} at {at} replays from the scenario",
                    scenario.name,
                    scenario.variant
                );
                assert_eq!(replay.verdict().violations, engine.verdict().violations);
                injected += 1;
            }
        }
    }
    assert!(injected > 500, "only {injected} injections were tried");
}

#[test]
fn a_pause_injected_at_the_right_moment_breaks_the_unfenced_story() {
    // The broken paused-worker story without its own pause: the reader pauses A just after it
    // received its lease, for longer than the lease, and the stale write follows.
    let mut scenario = library::scenario("paused-worker", Some("broken")).unwrap();
    scenario.faults.clear();
    for worker in &mut scenario.workers {
        worker.script.retain(|step| !matches!(step, Step::Pause { .. }));
    }
    scenario.expect.violations.clear();
    let mut calm = Engine::new(scenario.clone()).unwrap();
    let calm_verdict = calm.run().unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    while let Some(record) = engine.step().unwrap() {
        if matches!(&record.event, Event::GrantReceived { worker, .. } if worker == "A") {
            break;
        }
    }
    let ticks = engine.scenario().authority.ttl * 3;
    engine
        .inject(Fault::PauseWorker {
            worker: "A".parse().unwrap(),
            ticks,
            reason: Default::default(),
        })
        .unwrap();
    let verdict = engine.run().unwrap();
    assert!(
        verdict.violations.len() > calm_verdict.violations.len(),
        "the pause should break something the calm run did not: {:?}",
        verdict.violations
    );
    assert_eq!(events(&replayed(&engine)), events(&engine));
}

#[test]
fn losing_the_stale_write_in_flight_spares_the_store() {
    // The broken paused-worker story: A's stale write is on its way when the reader has the
    // network lose it. The store never sees it, the diagram ends its arrow halfway, and the
    // checker finds nothing.
    let scenario = library::scenario("paused-worker", Some("broken")).unwrap();
    let mut whole = Engine::new(scenario.clone()).unwrap();
    assert!(!whole.run().unwrap().violations.is_empty(), "the story breaks as written");
    let mut engine = Engine::new(scenario).unwrap();
    let mut stale = None;
    while let Some(record) = engine.step().unwrap() {
        if let Event::WriteSent { worker, message, request, .. } = &record.event {
            if worker == "A" && request.value.contains("stale") {
                stale = Some(*message);
            }
        }
        if stale.is_some() {
            break;
        }
    }
    let message = stale.expect("A sends its write");
    let offered = engine.possible_faults();
    assert!(offered.contains(&Fault::LoseMessage { message }), "{offered:?}");
    let record = engine.inject(Fault::LoseMessage { message }).unwrap().clone();
    assert_eq!(record.event, Event::MessageLost { worker: "A".parse().unwrap(), message });
    let verdict = engine.run().unwrap();
    assert!(verdict.violations.is_empty(), "{:?}", verdict.violations);
    assert!(
        !events(&engine)
            .iter()
            .any(|e| matches!(e, Event::WriteArrived { message: m, .. } if *m == message)),
        "the lost write never arrives"
    );
    let drawn = fencelab_core::draw::diagram(&engine.history(), &verdict.violations);
    let arrow = drawn.arrows.iter().find(|a| a.message == message).cloned().unwrap();
    assert_eq!((arrow.arrived_step, arrow.lost_step), (None, Some(record.index)));
    assert_eq!(events(&replayed(&engine)), events(&engine));
    // The history says so too, and reads back as written.
    let history = engine.history();
    let back = fencelab_core::History::from_jsonl(&history.to_jsonl()).expect("reads back");
    assert_eq!(back.entries, history.entries);
}

#[test]
fn a_message_no_longer_in_flight_is_not_lost_and_the_run_says_so() {
    let scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    engine.run().unwrap();
    let delivered = (engine.records().iter())
        .find_map(|r| match &r.event {
            Event::WriteArrived { message, .. } => Some((*message, r.index)),
            _ => None,
        })
        .expect("a write arrives");
    engine.rewind(delivered.1 + 1).unwrap();
    let record = engine.inject(Fault::LoseMessage { message: delivered.0 }).unwrap().clone();
    assert_eq!(record.event, Event::LossIgnored { message: delivered.0 });
    assert!(
        record.caption.contains("it has arrived already, or is not sent yet"),
        "{}",
        record.caption
    );
}

#[test]
fn a_slow_clock_makes_a_lease_check_pass_after_the_lease_ended() {
    // A checks its lease on its own clock after computing past the lease's end. With a right
    // clock it sees the lease is over and stops; with its clock set back by more than the lease
    // (the fault the engine offers), the check passes and the late write goes out.
    let mut scenario = library::scenario("lease-check-gap", Some("broken")).unwrap();
    scenario.workers.iter_mut().for_each(|w| w.clock_offset = 0);
    scenario.expect.violations.clear();
    let believed = |engine: &Engine| -> Vec<bool> {
        (events(engine).into_iter())
            .filter_map(|e| match e {
                Event::LeaseChecked { worker, believes_valid, .. } if worker == "A" => {
                    Some(believes_valid)
                }
                _ => None,
            })
            .collect()
    };
    let mut right = Engine::new(scenario.clone()).unwrap();
    right.run().unwrap();
    assert_eq!(believed(&right), [false], "with a right clock A sees its lease is over");
    let mut engine = Engine::new(scenario).unwrap();
    let fault = engine
        .possible_faults()
        .into_iter()
        .find(|f| matches!(f, Fault::SkewClock { worker, by } if worker == "A" && *by < 0))
        .expect("a slower clock for A is offered");
    let Fault::SkewClock { by, .. } = fault else { unreachable!() };
    // The opposite jump is offered too, so a front never has to make one up.
    let ahead = Fault::SkewClock { worker: "A".parse().unwrap(), by: -by };
    assert!(engine.possible_faults().contains(&ahead), "a faster clock for A is offered");
    let record = engine.inject(fault).unwrap().clone();
    assert_eq!(record.event, Event::ClockSkewed { worker: "A".parse().unwrap(), by, offset: by });
    assert!(record.caption.contains("slow"), "{}", record.caption);
    engine.run().unwrap();
    assert_eq!(believed(&engine), [true], "with a slow clock A believes in its lease");
    assert!(events(&engine)
        .iter()
        .any(|e| matches!(e, Event::WriteSent { worker, .. } if worker == "A")));
    assert_eq!(events(&replayed(&engine)), events(&engine));
}

#[test]
fn faults_of_no_size_are_refused_naming_the_field() {
    let scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    for (fault, field) in [
        (
            Fault::SkewClock { worker: "A".parse().unwrap(), by: 0 },
            "injected[0].fault.skew_clock.by",
        ),
        (
            Fault::DelayMessages { worker: "A".parse().unwrap(), ticks: 0, count: 1 },
            "injected[0].fault.delay_messages.ticks",
        ),
        (
            Fault::PauseWorker {
                worker: "A".parse().unwrap(),
                ticks: 0,
                reason: Default::default(),
            },
            "injected[0].fault.pause_worker.ticks",
        ),
    ] {
        let mut engine = Engine::new(scenario.clone()).unwrap();
        let error = engine.inject(fault).unwrap_err().to_string();
        assert!(error.contains(field), "{error}");
        assert!(engine.scenario().injected.is_empty(), "a refused fault is not kept");
    }
}

#[test]
fn rewinding_forgets_the_injected_fault_and_the_run_goes_on_as_before() {
    let scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    let mut original = Engine::new(scenario.clone()).unwrap();
    original.run().unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    engine.seek(4).unwrap();
    engine.inject(Fault::RestartAuthority).unwrap();
    engine
        .inject(Fault::PauseWorker { worker: "B".into(), ticks: 3, reason: Default::default() })
        .unwrap();
    engine.run().unwrap();
    assert_eq!(engine.scenario().injected.len(), 2);
    engine.rewind(5).unwrap();
    assert_eq!(engine.scenario().injected.len(), 1, "the fault after step 5 is forgotten");
    assert_eq!(engine.timeline().len(), 5, "nothing is kept beyond the rewind");
    engine.rewind(2).unwrap();
    assert!(engine.scenario().injected.is_empty());
    engine.run().unwrap();
    assert_eq!(events(&engine), events(&original), "with no fault left, the run is the original");
    assert_eq!(engine.verdict(), original.verdict());
}

#[test]
fn choices_name_what_each_choice_runs() {
    let scenario = library::contention(3, Enforcement::Fenced);
    let mut engine = Engine::new(scenario).unwrap();
    let mut branched = 0;
    while !engine.is_finished() {
        let choices = engine.choices();
        assert_eq!(choices.len(), engine.enabled_count());
        assert_eq!(choices.len(), engine.enabled().len());
        // Take the last choice, to leave the default path.
        let pick = choices.len() - 1;
        let choice = choices[pick].clone();
        if choices.len() > 1 {
            branched += 1;
        }
        let record = engine.step_choice(pick).unwrap().clone();
        match (&choice.what, &record.event) {
            (Next::WorkerStep { worker } | Next::Resume { worker }, event) => {
                assert_eq!(worker_of(event).as_deref(), Some(worker.as_str()), "{event:?}");
            }
            (
                Next::Deliver { message, carries: "grant", .. },
                Event::GrantReceived { message: m, .. },
            ) => {
                assert_eq!(message, m);
            }
            (Next::Expire { resource }, Event::LeaseExpired { resource: r, .. }) => {
                assert_eq!(resource, r);
            }
            (Next::Deliver { carries, .. }, event) => {
                assert_ne!(*carries, "grant", "a grant's arrival ran as {event:?}");
            }
            (what, event) => panic!("{what:?} ran as {event:?}"),
        }
        match (choice.way, &record.event) {
            (Way::PauseTaken, event) => assert!(matches!(event, Event::Paused { .. }), "{event:?}"),
            (Way::PauseSkipped, event) => {
                assert!(matches!(event, Event::PauseSkipped { .. }), "{event:?}")
            }
            _ => {}
        }
    }
    assert!(branched > 3, "the contention story should offer choices");
}

#[test]
fn an_injected_fault_is_the_only_choice_when_it_is_due() {
    let mut scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    scenario.injected = vec![Injection { after: 3, fault: Fault::RestartAuthority }];
    let mut engine = Engine::new(scenario).unwrap();
    engine.seek(3).unwrap();
    assert_eq!(
        engine.choices().iter().map(|c| &c.what).collect::<Vec<_>>(),
        vec![&Next::Injected { index: 0, fault: Fault::RestartAuthority }]
    );
    let record = engine.step().unwrap().unwrap();
    assert!(matches!(record.event, Event::AuthorityRestarted { .. }));
}

#[test]
fn bad_injections_are_refused_naming_the_field() {
    let scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    let mut engine = Engine::new(scenario.clone()).unwrap();
    engine.seek(2).unwrap();
    let before = events(&engine);
    let err = engine
        .inject(Fault::PauseWorker { worker: "Z".into(), ticks: 3, reason: Default::default() })
        .unwrap_err();
    assert!(matches!(err, EngineError::BadFault(_)));
    assert_eq!(
        err.to_string(),
        "cannot inject the fault: injected[0].fault.pause_worker.worker: unknown worker \"Z\""
    );
    assert_eq!(events(&engine), before, "a refused fault changes nothing");
    assert!(engine.scenario().injected.is_empty());

    let mut finished = Engine::new(scenario.clone()).unwrap();
    finished.run().unwrap();
    assert!(matches!(
        finished.inject(Fault::RestartAuthority),
        Err(EngineError::Sim(SimError::Finished { .. }))
    ));

    // Out of order in a file.
    let mut file: Scenario = scenario.clone();
    file.injected = vec![
        Injection { after: 5, fault: Fault::RestartAuthority },
        Injection { after: 2, fault: Fault::RestartAuthority },
    ];
    let err = Engine::new(file).unwrap_err();
    assert_eq!(err.path, "injected[1].after");

    // Waiting for a step the run never reaches.
    let mut file = scenario;
    file.injected = vec![Injection { after: 10_000, fault: Fault::RestartAuthority }];
    let mut engine = Engine::new(file).unwrap();
    let err = engine.run().unwrap_err();
    assert!(matches!(
        err,
        EngineError::Sim(SimError::InjectionNotReached { index: 0, after: 10_000, .. })
    ));
    assert!(
        err.to_string().starts_with("injected[0].after: is 10000, but the run ends after "),
        "{err}"
    );
    // The explorer refuses it too, rather than counting the schedules that stop short as done.
    let mut file = library::scenario("paused-worker", Some("fenced")).unwrap();
    file.injected = vec![Injection { after: 500, fault: Fault::RestartAuthority }];
    let searched = Explorer::new(file, ExploreConfig::default()).unwrap().run();
    assert!(
        matches!(
            searched,
            ExploreResult::Error {
                error: EngineError::Sim(SimError::InjectionNotReached { .. }),
                ..
            }
        ),
        "{searched:?}"
    );
    // A choice the step does not offer is named as such.
    let mut engine = Engine::new(library::scenario("paused-worker", None).unwrap()).unwrap();
    engine.seek(4).unwrap();
    let err = engine.step_choice(99).unwrap_err();
    assert!(
        err.to_string().starts_with("step 5: there is no choice 99; the choices there are 0 to "),
        "{err}"
    );
}

#[test]
fn the_explorer_plays_injected_faults_in_every_schedule() {
    // Contention on a fenced store that forgets its highest generation when it restarts: a
    // restart injected after a newer owner's write lets the older owner's write in on some
    // schedule, and the explorer finds it.
    let mut scenario = library::contention(2, Enforcement::Fenced);
    scenario.stores[0].persist_highest = false;
    let config = ExploreConfig::default();
    let plain = Explorer::new(scenario.clone(), config.clone()).unwrap().run();
    assert!(matches!(plain, ExploreResult::NoViolation { .. }), "{plain:?}");
    let store = scenario.stores[0].name.clone();
    let found = (0..30).find_map(|after| {
        let fault = Fault::RestartStore { store: store.clone() };
        let mut with_fault = scenario.clone();
        with_fault.injected = vec![Injection { after, fault }];
        match Explorer::new(with_fault.clone(), config.clone()).unwrap().run() {
            ExploreResult::Violation { schedule, violation, .. } => {
                Some((with_fault, schedule, violation))
            }
            _ => None,
        }
    });
    let (mut scenario, schedule, violation) = found.expect("some restart lets a stale write in");
    // The counterexample replays, fault included.
    scenario.schedule = schedule;
    let mut engine = Engine::new(scenario).unwrap();
    let verdict = engine.run().unwrap();
    assert!(verdict.violations.iter().any(|v| v.invariant == violation.invariant));
}

#[test]
fn nothing_is_offered_once_the_run_has_ended() {
    let scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    assert!(!engine.possible_faults().is_empty());
    engine.run().unwrap();
    assert!(engine.is_finished());
    assert_eq!(engine.possible_faults(), Vec::<Fault>::new(), "inject would refuse every one");
    assert!(engine.inject(Fault::RestartAuthority).is_err());
}

#[test]
fn a_clock_jump_past_the_limit_is_refused_with_its_sign() {
    let scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    let error = engine
        .inject(Fault::SkewClock { worker: "A".parse().unwrap(), by: -10_000_000_000_000 })
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(
            "injected[0].fault.skew_clock.by: a jump of -10000000000000 ticks is beyond the limit"
        ),
        "{error}"
    );
}

#[test]
fn a_pause_on_a_worker_frozen_for_longer_changes_nothing_and_a_longer_one_extends_the_freeze() {
    let scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    let mut engine = Engine::new(scenario).unwrap();
    let pause = |ticks| Fault::PauseWorker {
        worker: "A".parse().unwrap(),
        ticks,
        reason: Default::default(),
    };
    let first = engine.inject(pause(20)).unwrap().event.clone();
    assert!(matches!(first, Event::Paused { ticks: 20, .. }), "{first:?}");
    let shorter = engine.inject(pause(5)).unwrap().clone();
    assert_eq!(shorter.event, Event::PauseIgnored { worker: "A".parse().unwrap(), ticks: 5 });
    assert!(shorter.caption.contains("frozen for longer anyway"), "{}", shorter.caption);
    let longer = engine.inject(pause(40)).unwrap().event.clone();
    assert!(matches!(longer, Event::Paused { ticks: 40, .. }), "{longer:?}");
}
