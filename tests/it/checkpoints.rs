//! Checkpoints: every built-in story asks its reader something at its key moment, and the
//! answer comes from the run, so it follows the story when the story changes.

use fencelab_core::stories::library;
use fencelab_core::{check::checkpoint::place, check::checkpoint::Asked};
use fencelab_core::{format::model::Checkpoint, Engine, Event, Scenario};
use std::collections::BTreeMap;

/// The run of `scenario` to its end, and its checkpoints placed in it.
fn play(scenario: &Scenario) -> (Engine, Vec<Asked>) {
    let mut engine = Engine::new(scenario.clone()).unwrap();
    engine.run().unwrap();
    let placed = place(&scenario.checkpoints, &engine.history());
    let asked = placed
        .into_iter()
        .map(|p| p.unwrap_or_else(|e| panic!("{}/{}: {e}", scenario.name, scenario.variant)));
    (engine, asked.collect())
}

#[test]
fn every_story_asks_at_its_key_moment_and_the_variants_differ() {
    let mut answers: BTreeMap<String, Vec<Vec<usize>>> = BTreeMap::new();
    for scenario in library::all() {
        assert!(!scenario.checkpoints.is_empty(), "{} asks nothing", scenario.name);
        let (engine, asked) = play(&scenario);
        for a in &asked {
            assert!(a.answer < a.options.len());
            assert!(a.options.len() >= 2, "{}: {a:?}", scenario.name);
            // The step that answers is one the run has, and its caption is what explains it.
            let record = &engine.records()[a.step.index()];
            assert!(!record.caption.is_empty());
            println!(
                "{}/{} step {}: {} -> {}",
                scenario.name, scenario.variant, a.step, a.question, a.options[a.answer]
            );
        }
        answers
            .entry(scenario.name.clone())
            .or_default()
            .push(asked.iter().map(|a| a.answer).collect());
    }
    // A story told in two variants teaches the difference: some question has a different answer.
    for (name, by_variant) in answers {
        if by_variant.len() > 1 && name != "same-owner-updates" {
            assert!(
                by_variant.iter().any(|a| *a != by_variant[0]),
                "{name}: every variant answers {by_variant:?}"
            );
        }
    }
}

#[test]
fn the_answer_follows_the_story_when_a_switch_changes_it() {
    // The fenced paused-worker story refuses A's stale write; turn the fence off and the same
    // question, asked at the same moment, has the other answer.
    let fenced = library::scenario("paused-worker", Some("fenced")).unwrap();
    let (_, before) = play(&fenced);
    let mut unfenced = fenced.clone();
    for store in &mut unfenced.stores {
        store.enforcement = fencelab_core::format::model::Enforcement::Unfenced;
    }
    let (_, after) = play(&unfenced);
    assert_eq!(before[0].options[before[0].answer], "No: the write is refused");
    assert_eq!(after[0].options[after[0].answer], "Yes: the write is applied");
}

#[test]
fn checkpoints_stop_before_the_step_that_answers() {
    let scenario = library::scenario("payment-capture", Some("fenced")).unwrap();
    let (engine, asked) = play(&scenario);
    let a = &asked[0];
    assert!(
        matches!(&engine.records()[a.step.index()].event, Event::EffectArrived { worker, .. } if worker == "A")
    );
    assert_eq!(a.question, "Will the gateway pass on A's request to capture payment of 49.99?");

    // In a check-then-write store the check applies nothing: the write question is answered
    // where A's separate write lands, and the final value there too, after it.
    let scenario = library::scenario("check-then-write", Some("check-then-write")).unwrap();
    let (engine, asked) = play(&scenario);
    let (write, last) = (&asked[0], &asked[1]);
    assert_eq!(write.question, "Will db apply A's write \"A: stale\"?");
    assert_eq!(write.options[write.answer], "Yes: the write is applied");
    assert_eq!(last.question, "Which value will db hold when the run ends?");
    assert_eq!(last.options[last.answer], "A: stale");
    assert!(last.options.contains(&"B: current".to_string()));
    for a in [write, last] {
        assert!(
            matches!(&engine.records()[a.step.index()].event, Event::WriteCommitted { worker, .. } if worker == "A")
        );
    }
}

/// The step that settles a store's final value: the last write to reach it, applied or not.
fn settling_step(engine: &Engine, store: &str) -> usize {
    let settles = |e: &Event| match e {
        Event::WriteArrived { store: s, .. } | Event::WriteCommitted { store: s, .. } => s == store,
        _ => false,
    };
    engine.records().iter().rposition(|r| settles(&r.event)).unwrap()
}

#[test]
fn the_final_value_is_asked_where_it_is_settled_and_after_the_write_question() {
    // In the fenced paused-worker story B's write lands at step 15, but A's stale write is
    // still on its way: the final value is settled only when the store refuses it.
    let scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    let (engine, asked) = play(&scenario);
    let (write, last) = (&asked[0], &asked[1]);
    assert_eq!(last.step.index(), settling_step(&engine, "db"));
    assert!(matches!(
        &engine.records()[last.step.index()].event,
        Event::WriteArrived { worker, outcome, .. } if worker == "A" && !outcome.is_applied()
    ));
    assert_eq!(write.step, last.step);
    assert_eq!(last.options[last.answer], "B: total=120");
    // db holds a value long before, so "nothing" is not offered.
    assert!(!last.options.iter().any(|o| o.starts_with("(nothing")), "{:?}", last.options);
    for scenario in library::all() {
        let (engine, asked) = play(&scenario);
        for (checkpoint, a) in scenario.checkpoints.iter().zip(&asked) {
            if let Checkpoint::FinalValue { store, .. } = checkpoint {
                assert_eq!(a.step.index(), settling_step(&engine, store), "{}", scenario.name);
                // Listed last, so at a shared step it is asked after the write question.
                assert!(
                    matches!(scenario.checkpoints.last(), Some(Checkpoint::FinalValue { .. })),
                    "{}",
                    scenario.name
                );
                // Every write question the story asks comes before or with it.
                assert!(asked.iter().all(|other| other.step <= a.step), "{}", scenario.name);
                let applied_before = engine.records()[..a.step.index()].iter().any(|r| {
                    matches!(&r.event, Event::WriteArrived { store: s, outcome, .. } if s == store && outcome.is_applied())
                        || matches!(&r.event, Event::WriteCommitted { store: s, .. } if s == store)
                });
                let offers_nothing = a.options.iter().any(|o| o.starts_with("(nothing"));
                assert_eq!(offers_nothing, !applied_before, "{}: {:?}", scenario.name, a.options);
            }
            if let Checkpoint::WriteAccepted { .. } = checkpoint {
                assert!(
                    matches!(
                        &engine.records()[a.step.index()].event,
                        Event::WriteArrived { .. } | Event::WriteCommitted { .. }
                    ),
                    "{}: the answer step applies or refuses nothing",
                    scenario.name
                );
            }
        }
    }
}

#[test]
fn a_question_names_the_write_or_the_effect_it_is_about() {
    let question = |name: &str, variant: &str| {
        let (_, asked) = play(&library::scenario(name, Some(variant)).unwrap());
        asked[0].question.clone()
    };
    // The slow first copy arrives after the retry was answered: the question says which copy.
    for variant in ["fenced", "broken"] {
        assert_eq!(
            question("idempotent-retry", variant),
            "Will db apply A's first attempt at \"debit 10\" (operation debit-1), arriving after its retry?"
        );
    }
    assert_eq!(
        question("email-webhook", "fenced"),
        "Will the gateway pass on A's request to call webhook partner/shipments?"
    );
    assert_eq!(
        question("paused-worker", "fenced"),
        "Will db apply A's write \"A: total=90 (from stale inputs)\"?"
    );
    // A retry is called one.
    let mut retried = library::scenario("retention-window", Some("unconditional")).unwrap();
    retried.checkpoints = vec![Checkpoint::WriteAccepted { worker: "A".into(), nth: Some(2) }];
    let (_, asked) = play(&retried);
    assert_eq!(asked[0].question, "Will db apply A's retry of \"debit 10\" (operation debit-1)?");
    // No question uses a label made of joined names, such as a gateway's partner.
    for scenario in library::all() {
        for a in play(&scenario).1 {
            assert!(!a.question.contains('+'), "{}: {}", scenario.name, a.question);
        }
    }
}

#[test]
fn a_checkpoint_the_run_cannot_answer_names_itself() {
    let mut scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    scenario.checkpoints.push(Checkpoint::WriteAccepted { worker: "B".into(), nth: Some(7) });
    scenario.checkpoints.push(Checkpoint::EffectDelivered { worker: "A".into(), nth: None });
    let mut engine = Engine::new(scenario.clone()).unwrap();
    engine.run().unwrap();
    let placed = place(&scenario.checkpoints, &engine.history());
    let errors: Vec<String> =
        placed.iter().filter_map(|p| p.as_ref().err()).map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [
            "checkpoints[2]: asks about a write by B number 7, but the run has 1",
            "checkpoints[3]: an effect by A never happens in this run",
        ]
    );
    // A checkpoint about a worker the story no longer has (a reader's edit) leaves the story
    // playable; placing it says what it misses. A count from 0 is a mistake in the file.
    let mut edited = scenario;
    edited.checkpoints = vec![Checkpoint::WriteAccepted { worker: "Z".into(), nth: None }];
    let mut engine = Engine::new(edited.clone()).unwrap();
    engine.run().unwrap();
    let placed = place(&edited.checkpoints, &engine.history());
    assert_eq!(
        placed[0].as_ref().unwrap_err().to_string(),
        "checkpoints[0]: a write by Z never happens in this run"
    );
    edited.checkpoints = vec![Checkpoint::WriteAccepted { worker: "A".into(), nth: Some(0) }];
    assert_eq!(Engine::new(edited).unwrap_err().path, "checkpoints[0].write_accepted.nth");
}
