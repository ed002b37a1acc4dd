//! The reducer's unit tests.

use super::compare::merge_ticks;
use super::story::Tone;
use super::*;
use crate::viz::frame::Kept;
use crate::viz::history::Origin;
use fencelab_core::stories::library;
use fencelab_core::{fence::register::SameGenerationPolicy, format::model::Fault};
use fencelab_links::{Part, ShareLink};

#[test]
fn a_new_address_opens_its_view_whatever_was_on_screen() {
    let before = apply(Rc::new(Viz::new()), [Action::Pick("check-then-write".into())]);
    let after = apply(
        before,
        [Action::Open("scenario=paused-worker&variant=broken&step=5&compare=1".into())],
    );
    assert_eq!(
        (after.story.case.as_str(), after.story.variant.as_str()),
        ("paused-worker", "broken")
    );
    assert!(after.compare().is_some());
    assert_eq!(after.cursor().0, 5);
    let first = apply(after, [Action::Open(String::new())]);
    let fresh = Viz::new();
    assert_eq!(
        (&first.story.case, &first.story.variant, first.position),
        (&fresh.story.case, &fresh.story.variant, 0)
    );
    assert!(first.compare().is_none() && first.link_error.is_none());
    let bad = apply(first, [Action::Open("scenario=paused-worker&step=lots".into())]);
    assert!(bad.link_error.as_deref().is_some_and(|e| e.contains("step")));
}

#[test]
fn merged_ticks_are_the_sorted_distinct_union() {
    let cases: [(&[u64], &[u64]); 5] = [
        (&[], &[]),
        (&[1, 1, 3], &[]),
        (&[], &[0, 2, 2]),
        (&[1, 4, 4, 9], &[0, 4, 5, 9, 12]),
        (&[7], &[7]),
    ];
    for (a, b) in cases {
        let mut want: Vec<u64> = a.iter().chain(b).copied().collect();
        want.sort_unstable();
        want.dedup();
        assert_eq!(merge_ticks(a.iter().copied(), b.iter().copied()), want, "{a:?} + {b:?}");
    }
}

fn apply(state: Rc<Viz>, actions: impl IntoIterator<Item = Action>) -> Rc<Viz> {
    actions.into_iter().fold(state, Reducible::reduce)
}

fn value(frame: &Frame) -> Option<String> {
    frame.cells().next().and_then(|(_, c)| c.value.clone())
}

#[test]
fn starts_on_the_paused_worker_at_the_start() {
    let state = Viz::new();
    assert_eq!(state.story.case, "paused-worker");
    assert_eq!(state.story.variant, "fenced");
    assert_eq!(state.cursor(), (0, 20));
    assert!(state.current().is_none());
    assert!(!state.playing);
}

#[test]
fn stepping_to_the_stale_write_shows_the_rejection_and_keeps_the_value() {
    let state = apply(Rc::new(Viz::new()), [Action::Seek(18)]);
    let before = value(&state.frame);
    let state = apply(state, [Action::Forward]);
    let current = state.current().expect("a step");
    assert!(current.caption.contains("stale owner: generation 1 < highest accepted 2"));
    assert_eq!(state.story.run.layout.step_kinds[current.index], "rejected");
    assert_eq!(value(&state.frame), before);
    assert_eq!(value(&state.frame).as_deref(), Some("B: total=120"));
    assert_eq!(state.frame.rejections, vec![("stale generation".to_string(), 1)]);
    let back = apply(state.clone(), [Action::Back]);
    assert_ne!(back.current().map(|r| &r.caption), state.current().map(|r| &r.caption));
    let again = apply(back, [Action::Forward]);
    assert_eq!(again.current().map(|r| &r.caption), state.current().map(|r| &r.caption));
}

#[test]
fn a_paused_worker_believes_what_the_authority_no_longer_says() {
    let state = apply(Rc::new(Viz::new()), [Action::Seek(11)]);
    let a = state.frame.workers.iter().find(|w| w.name == "A").expect("worker A");
    assert!(a.paused());
    assert!(a.stale());
    assert_eq!(a.beliefs[0].generation, 1);
    assert_eq!(a.beliefs[0].authority_generation, Some(2));
    assert_eq!(a.beliefs[0].authority_holder.as_deref(), Some("B"));
}

#[test]
fn autoplay_ticks_to_the_end_and_stops() {
    let mut state = apply(Rc::new(Viz::new()), [Action::TogglePlay]);
    assert!(state.playing);
    for _ in 0..100 {
        state = state.reduce(Action::Tick);
    }
    assert_eq!(state.cursor(), (20, 20));
    assert!(!state.playing);
    // A stray tick after the end changes nothing.
    let same = Rc::clone(&state).reduce(Action::Tick);
    assert!(Rc::ptr_eq(&same, &state));
    // Play at the end keeps the reader's place; Replay starts over.
    let kept = Rc::clone(&state).reduce(Action::TogglePlay);
    assert!(Rc::ptr_eq(&kept, &state));
    let again = state.reduce(Action::Replay);
    assert_eq!(again.cursor(), (0, 20));
    assert!(again.playing);
}

#[test]
fn fast_speeds_take_several_steps_per_tick_and_big_jumps_a_tenth_of_the_run() {
    let fastest = SPEEDS.len() - 1;
    let state =
        apply(Rc::new(Viz::new()), [Action::Speed(fastest), Action::TogglePlay, Action::Tick]);
    assert_eq!(state.cursor().0, SPEEDS[fastest].2.min(20));
    assert_eq!(SPEED_PERCENT.len(), SPEEDS.len());
    let state = apply(Rc::new(Viz::new()), [Action::Jump(true), Action::Jump(true)]);
    assert_eq!(state.cursor(), (4, 20));
    let state = apply(state, [Action::Jump(false), Action::Jump(false), Action::Jump(false)]);
    assert_eq!(state.cursor(), (0, 20));
    let same = Rc::clone(&state).reduce(Action::Jump(false));
    assert!(Rc::ptr_eq(&same, &state));
}

#[test]
fn manual_steps_pause_autoplay() {
    let state = apply(Rc::new(Viz::new()), [Action::TogglePlay, Action::Tick, Action::Forward]);
    assert!(!state.playing);
    assert_eq!(state.position, 2);
}

#[test]
fn switching_variant_or_policy_replays_with_the_same_schedule() {
    let state = apply(Rc::new(Viz::new()), [Action::ToEnd, Action::Variant("broken".into())]);
    assert_eq!(state.story.variant, "broken");
    assert_eq!(state.cursor(), (20, 20));
    assert_eq!(value(&state.frame).as_deref(), Some("A: total=90 (from stale inputs)"));
    assert!(!state.frame.violations.is_empty());
    let strict = apply(
        state,
        [
            Action::Variant("fenced".into()),
            Action::Policy(PolicyChoice::Force(SameGenerationPolicy::StrictlyNewer)),
        ],
    );
    assert!(strict
        .story
        .run
        .scenario
        .stores
        .iter()
        .all(|s| s.policy == SameGenerationPolicy::StrictlyNewer));
    assert_eq!(strict.story.error, None);
}

#[test]
fn compare_mode_opens_and_closes_at_the_same_moment() {
    // Step 11 (t=11): A is frozen and B holds generation 2.
    let state = apply(Rc::new(Viz::new()), [Action::Seek(11)]);
    let tick = state.story.run.tick_at(11);
    let state = apply(state, [Action::Compare(true)]);
    let compare = state.compare().expect("compare mode");
    assert_eq!(compare.now(), tick);
    assert!(compare.cursor > 0);
    // Closing it at the same tick keeps the step.
    let same = apply(Rc::clone(&state), [Action::Compare(false)]);
    assert_eq!(same.position, 11);
    // Moving in compare mode and closing it shows every step of the tick it was at.
    let state = apply(state, [Action::Forward]);
    let now = state.compare().expect("compare mode").now();
    let state = apply(state, [Action::Compare(false)]);
    assert_eq!(state.story.run.tick_at(state.position), now);
    assert_eq!(state.position, state.story.run.position_at_tick(now));
    // At the start it stays at the start.
    let state = apply(state, [Action::ToStart, Action::Compare(true)]);
    assert_eq!(state.cursor().0, 0);
    let state = apply(state, [Action::Compare(false)]);
    assert_eq!(state.position, 0);
}

#[test]
fn the_badge_says_what_runs_and_how_it_fares() {
    let badge = |state: &Viz| {
        let b = state.badge();
        (b.label, b.tone)
    };
    let fenced = Rc::new(Viz::new());
    assert_eq!(badge(&fenced), ("fenced".into(), Tone::Holds));
    let broken = apply(Rc::clone(&fenced), [Action::Variant("broken".into())]);
    assert_eq!(badge(&broken), ("broken".into(), Tone::Breaks));
    let switched = apply(Rc::clone(&fenced), [Action::Switches(vec![Switch::UnfencedStore])]);
    assert_eq!(badge(&switched), ("fenced + unfenced store".into(), Tone::Breaks));
    // A protection off that this schedule does not expose still shows.
    let strict = apply(
        Rc::new(Viz::new()),
        [Action::Pick("paused-worker".into()), Action::Switches(vec![Switch::StrictlyNewer])],
    );
    assert!(!strict.story.run.breaks);
    assert_eq!(badge(&strict), ("fenced + strictly newer generations only".into(), Tone::Weakened));
    let edited = apply(
        Rc::clone(&fenced),
        [Action::Edit(library::scenario("paused-worker", Some("broken")).unwrap().to_json())],
    );
    assert_eq!(badge(&edited), ("edited".into(), Tone::Breaks));
    // A link's own scenario is its author's, not an edit, until the reader edits it.
    let custom = fencelab_links::ShareLink {
        scenario: fencelab_links::LinkScenario::Custom(Box::new(
            library::scenario("paused-worker", Some("fenced")).unwrap(),
        )),
        ..fencelab_links::ShareLink::builtin("", "")
    };
    let authored = Rc::new(Viz::open(&custom.to_fragment()));
    assert_eq!(badge(&authored), ("custom scenario".into(), Tone::Holds));
    let text = authored.story.base.to_json();
    assert_eq!(badge(&apply(authored, [Action::Edit(text)])).0, "edited");
    // A fault the reader injected is named beside the variant.
    let decided = apply(
        Rc::clone(&fenced),
        [Action::Decide(true), Action::InDecide(DecideAction::Inject(Fault::RestartAuthority))],
    );
    assert_eq!(badge(&decided).0, "fenced + 1 injected fault");
    // Each tone has its own glyph and words, not only its colour.
    let tones = [Tone::Holds, Tone::Weakened, Tone::Breaks];
    for (i, a) in tones.iter().enumerate() {
        for b in &tones[i + 1..] {
            assert_ne!(a.glyph(), b.glyph());
            assert_ne!(a.says(), b.says());
            assert_ne!(a.class(), b.class());
        }
    }
}

#[test]
fn each_write_path_shows_what_it_keeps() {
    let kept = |case: &str, variant: &str| {
        let state = apply(
            Rc::new(Viz::new()),
            [Action::Pick(case.into()), Action::Variant(variant.into()), Action::ToEnd],
        );
        let cell = state.frame.cells().next().map(|(_, c)| c.kept).expect("a cell");
        (cell.label(), cell.value(), cell.short())
    };
    // The unfenced store applied generation 1 after 2, yet keeps no fencing record.
    assert_eq!(
        kept("paused-worker", "broken"),
        ("highest gen", "none: unfenced".into(), "unfenced".into())
    );
    assert_eq!(kept("paused-worker", "fenced"), ("highest gen", "2".into(), "g2".into()));
    let (label, _, short) = kept("check-then-write", "check-then-write");
    assert_eq!(label, "last written gen");
    assert!(short.starts_with("last g"), "{short}");
    assert_eq!(Kept::of(Enforcement::FencedIdempotent, Some(3)), Kept::Highest(Some(3)));
    assert_eq!(Kept::of(Enforcement::CheckThenWrite, None).short(), "last –");
    assert_eq!(Kept::Highest(None).value(), "none");
}

#[test]
fn changing_tabs_is_a_new_history_entry_and_links_carry_the_tab() {
    let state = apply(Rc::new(Viz::new()), [Action::Seek(5), Action::Tab(Tab::Playground)]);
    assert_eq!(state.entries, 1);
    let fragment = state.to_link().to_fragment();
    assert_eq!(fragment, "scenario=paused-worker&variant=fenced&step=5&tab=playground");
    // Opening an address (Back, Forward) is no new entry.
    let back = apply(Rc::clone(&state), [Action::Open("scenario=paused-worker&step=5".into())]);
    assert_eq!((back.tab, back.entries, back.position), (Tab::Visualizer, 1, 5));
    let forward = apply(back, [Action::Open(fragment)]);
    assert_eq!((forward.tab, forward.entries), (Tab::Playground, 1));
    // Moving within a tab replaces the entry.
    let moved = apply(forward, [Action::Tab(Tab::Visualizer), Action::Forward]);
    assert_eq!(moved.entries, 2);
}

#[test]
fn a_link_to_another_story_opens_it_at_its_title() {
    let state = apply(Rc::new(Viz::new()), [Action::Seek(5)]);
    let same = apply(state, [Action::Open("scenario=paused-worker&variant=fenced&step=2".into())]);
    assert_eq!((same.focus_title, same.position), (0, 2));
    let variant = apply(same, [Action::Open("scenario=paused-worker&variant=broken".into())]);
    assert_eq!(variant.focus_title, 1);
    let other = apply(variant, [Action::Open("scenario=check-then-write".into())]);
    assert_eq!(other.focus_title, 2);
    // An embed keeps the focus where its host page has it.
    let embed = apply(other, [Action::Open("scenario=paused-worker&embed=controls".into())]);
    assert_eq!(embed.focus_title, 2);
}

#[test]
fn a_bad_embed_link_stays_an_embed_and_says_what_is_wrong() {
    let state = Viz::open("scenario=paused-worker&variant=brokn&embed=controls,caption");
    let error = state.broken_embed().expect("an error to show in the embed");
    assert!(error.contains("`variant`"), "{error}");
    assert!(state.shows(Part::Controls) && !state.shows(Part::Picker));
    let page = Viz::open("scenario=paused-worker&variant=brokn");
    assert!(page.broken_embed().is_none() && page.link_error.is_some() && page.embed.is_none());
    let fine = Viz::open("scenario=paused-worker&variant=broken&embed=controls");
    assert!(fine.broken_embed().is_none() && fine.embed.is_some());
}

#[test]
fn compare_mode_shows_corruption_unfenced_and_the_right_value_fenced() {
    let state = apply(Rc::new(Viz::new()), [Action::Compare(true)]);
    let compare = state.compare().expect("compare mode");
    assert_eq!(compare.left.mode, Enforcement::Unfenced);
    assert_eq!(compare.right.mode, Enforcement::Fenced);
    assert_eq!(value(&compare.left.last).as_deref(), Some("A: total=90 (from stale inputs)"));
    assert_eq!(value(&compare.right.last).as_deref(), Some("B: total=120"));
    assert!(compare.right.last.violations.is_empty());
    // Lockstep by time: both sides are at the same tick.
    let state = apply(state, [Action::Seek(5)]);
    let compare = state.compare().expect("compare mode");
    let tick = |side: &CompareSide| side.steps_now().last().map(|r| r.at);
    assert_eq!(tick(&compare.left), tick(&compare.right));
    let state = apply(state, [Action::Compare(false)]);
    assert!(state.compare().is_none());
}

#[test]
fn an_invalid_edit_shows_the_field_and_keeps_the_last_valid_run() {
    let state = apply(Rc::new(Viz::new()), [Action::ToggleEditor, Action::Seek(3)]);
    let json = state.story.editor.text.to_string();
    let run = state.story.run.clone();
    let broken = json.replacen("\"resource\": \"totals\"", "\"resource\": \"ledgr\"", 1);
    let state = apply(state, [Action::Edit(broken)]);
    let error = state.story.editor.error.as_ref().expect("an error");
    assert!(error.path.starts_with("workers[0].script[0]"), "{error:?}");
    assert_eq!(state.story.run, run);
    assert_eq!(state.position, 3);
    let fixed = json.replace("B: total=120", "B: total=121");
    let state = apply(state, [Action::Edit(fixed), Action::ToEnd]);
    assert!(state.story.editor.error.is_none());
    assert!(state.story.edited);
    assert_eq!(value(&state.frame).as_deref(), Some("B: total=121"));
}

#[test]
fn garbage_in_the_editor_never_panics() {
    let mut state = apply(Rc::new(Viz::new()), [Action::ToggleEditor]);
    for text in
        ["", "{", "null", "[]", "{\"name\": 3}", "\u{0}", "{\"name\":\"x\",\"title\":\"t\"}"]
    {
        state = state.reduce(Action::Edit(text.into()));
        assert!(state.story.editor.error.is_some(), "{text:?}");
        assert_eq!(state.story.run.scenario.name, "paused-worker");
    }
}

#[test]
fn unknown_picks_and_variants_are_errors_not_panics() {
    let state = apply(Rc::new(Viz::new()), [Action::Pick("nope".into())]);
    assert!(state.story.error.is_some());
    assert_eq!(state.story.case, "paused-worker");
    let state = apply(state, [Action::Variant("nope".into())]);
    assert!(state.story.error.is_some());
    let state = apply(state, [Action::Seek(usize::MAX), Action::Speed(99)]);
    assert_eq!(state.cursor(), (20, 20));
    assert_eq!(state.speed, DEFAULT_SPEED);
}

#[test]
fn every_library_story_plays_and_every_position_has_a_frame() {
    for case in library::cases() {
        for variant in &case.variants {
            let scenario = library::scenario(&case.name, Some(variant)).expect("built in");
            let run = Run::play(scenario).expect("plays");
            assert!(run.stopped.is_none(), "{}/{variant}", case.name);
            assert_eq!(run.layout.rows.len(), run.len());
            assert_eq!(run.layout.settled.len(), run.len());
            for position in 0..=run.len() {
                let frame = run.frame(position);
                assert_eq!(frame.error, None, "{}/{variant} at {position}", case.name);
                assert_eq!(frame.position, position);
            }
            // The rows go down the page.
            assert!(run.layout.rows.windows(2).all(|w| w[0] < w[1]));
        }
    }
}

#[test]
fn links_pick_the_story_variant_and_parts_and_round_trip() {
    let link = ShareLink::parse("#scenario=paused-worker&variant=broken&embed=controls,caption");
    let state = Viz::from_link(link);
    assert_eq!(state.story.variant, "broken");
    assert!(state.shows(Part::Controls) && state.shows(Part::Caption));
    assert!(!state.shows(Part::Log));
    let fragment = "scenario=paused-worker&variant=fenced&policy=strict&step=9\
                    &compare=check_then_write,fenced_idempotent&play=1&speed=200";
    let state = Viz::from_link(ShareLink::parse(fragment));
    let compare = state.compare().expect("compare mode");
    assert_eq!(
        (compare.left.mode, compare.right.mode),
        (Enforcement::CheckThenWrite, Enforcement::FencedIdempotent)
    );
    assert_eq!(state.cursor().0, 9);
    assert!(state.playing);
    assert_eq!(state.story.policy, PolicyChoice::Force(SameGenerationPolicy::StrictlyNewer));
    assert!(state.shows(Part::Log));
    assert_eq!(state.to_link().to_fragment(), fragment);
    let edited = apply(
        Rc::new(state),
        [
            Action::Compare(false),
            Action::Edit(library::scenario("paused-worker", Some("broken")).unwrap().to_json()),
        ],
    );
    let back = Viz::from_link(ShareLink::parse(&edited.to_link().to_fragment()));
    assert!(back.story.edited);
    assert_eq!(back.story.base, edited.story.base);
    for junk in ["&&&", "scenario=nope&variant=&step=x", "embed", "=="] {
        let state = Viz::from_link(ShareLink::parse(junk));
        assert_eq!(state.story.case, "paused-worker", "{junk:?}");
        assert!(state.link_error.is_some(), "{junk:?}");
        assert!(state.embed.is_none());
    }
}

#[test]
fn the_generated_benchmark_scenario_has_about_a_thousand_events() {
    let state = apply(Rc::new(Viz::new()), [Action::Pick(GENERATED.into())]);
    assert!(state.story.run.len() >= 1_000, "{}", state.story.run.len());
    assert!(state.story.run.stopped.is_none());
    let state = apply(state, [Action::Seek(700), Action::Back, Action::Seek(10)]);
    assert_eq!(state.position, 10);
}

fn recorded(name: &str, variant: &str) -> Rc<String> {
    let scenario = library::scenario(name, Some(variant)).expect("a built-in story");
    let mut engine = fencelab_core::Engine::new(scenario).expect("valid");
    engine.run().expect("plays");
    Rc::new(engine.history().to_jsonl())
}

#[test]
fn an_opened_history_plays_in_the_player_and_story_controls_leave_it_alone() {
    let text = recorded("paused-worker", "broken");
    let open = Action::OpenHistory("p.jsonl".into(), text, Origin::File);
    let state = apply(Rc::new(Viz::new()), [Action::Seek(5), open]);
    let opened = state.opened().expect("a history on screen");
    assert_eq!(state.cursor(), (0, opened.track.len()));
    assert_eq!(state.badge().label, "recorded history");
    // A file has no address: the address names the story beneath it, not a history link.
    assert!(!state.keeps_address());
    assert!(state.to_link().history.is_none(), "{:?}", state.to_link());
    // What changes a story changes nothing here.
    for action in [Action::Variant("fenced".into()), Action::Compare(true), Action::ToggleEditor] {
        let after = apply(state.clone(), [action]);
        assert!(Rc::ptr_eq(&after, &state));
    }
    // Choosing a finding goes to its step, where the panels count it.
    let stale = opened
        .findings
        .iter()
        .position(|f| f.invariant == fencelab_core::invariant::InvariantKind::StaleWriteAccepted)
        .unwrap();
    let step = opened.findings[stale].step;
    let chosen = apply(
        state.clone(),
        [Action::Forward, Action::InHistory(HistoryAction::ChooseFinding(stale))],
    );
    assert_eq!(chosen.position, step.number());
    assert!(chosen.current().unwrap().caption.contains("Broken: a stale write was accepted"));
    assert!(chosen.frame.violations.iter().any(|v| v.step == step));
    assert!(!chosen.highlight().is_empty());
    // Back to the stories, at the start of the one before.
    let back = apply(chosen, [Action::CloseHistory]);
    assert!(back.opened().is_none() && back.highlight().is_empty());
    assert_eq!((back.story.case.as_str(), back.cursor()), ("paused-worker", (0, 20)));
    // Picking a story also leaves the history.
    let picked = apply(state, [Action::Pick("check-then-write".into())]);
    assert!(picked.opened().is_none());
    assert_eq!(picked.story.case, "check-then-write");
}

#[test]
fn a_file_that_is_no_history_leaves_the_view_and_says_why() {
    let state = apply(Rc::new(Viz::new()), [Action::Seek(4)]);
    let bad = Action::OpenHistory("notes.txt".into(), Rc::new("hello".into()), Origin::File);
    let after = apply(state, [bad]);
    assert!(after.opened().is_none());
    assert_eq!(after.position, 4);
    assert!(after.history_error().is_some_and(|e| e.contains("notes.txt")));
}

#[test]
fn a_history_link_is_fetched_opened_at_its_step_and_kept_in_the_address() {
    let state = Rc::new(Viz::open("history=h/p.jsonl&step=3"));
    assert_eq!(state.to_fetch().as_deref(), Some("h/p.jsonl"));
    assert_eq!(state.to_link().to_fragment(), "history=h/p.jsonl&step=3");
    // An answer for another address (a link since replaced) is dropped.
    let text = recorded("paused-worker", "broken");
    let stray = Action::OpenHistory("x".into(), text.clone(), Origin::Link("x".into()));
    assert!(apply(state.clone(), [stray]).opened().is_none());
    let link = Origin::Link("h/p.jsonl".into());
    let opened = apply(state.clone(), [Action::OpenHistory("h/p.jsonl".into(), text, link)]);
    assert_eq!(opened.position, 3);
    assert!(opened.to_fetch().is_none() && !opened.keeps_address());
    let moved = apply(opened, [Action::Forward]);
    assert_eq!(moved.to_link().to_fragment(), "history=h/p.jsonl&step=4");
    // A link that cannot be fetched says why and stays in the address.
    let failed = apply(state, [Action::HistoryFailed("h/p.jsonl".into(), "404".into())]);
    assert!(failed.to_fetch().is_none() && failed.keeps_address());
    assert_eq!(failed.history_error(), Some("404"));
    assert_eq!(failed.to_link().to_fragment(), "history=h/p.jsonl&step=3");
}

#[test]
fn a_history_link_plays_at_its_speed_as_a_story_link_does() {
    let state = Rc::new(Viz::open("history=h/p.jsonl&step=2&play=1&speed=400"));
    assert_eq!(SPEED_PERCENT[state.speed], 400);
    assert!(!state.playing, "nothing plays until the history is there");
    assert_eq!(state.to_link().to_fragment(), "history=h/p.jsonl&step=2&play=1&speed=400");
    let link = Origin::Link("h/p.jsonl".into());
    let text = recorded("paused-worker", "broken");
    let opened = apply(state, [Action::OpenHistory("h/p.jsonl".into(), text, link)]);
    assert!(opened.playing);
    assert_eq!((opened.position, opened.interval_ms()), (2, SPEEDS[3].1));
    let ticked = apply(opened, [Action::Tick]);
    assert_eq!(ticked.to_link().to_fragment(), "history=h/p.jsonl&step=3&play=1&speed=400");
}

#[test]
fn story_only_parameters_on_a_history_link_are_named_and_a_failed_link_can_be_dismissed() {
    let state = Rc::new(Viz::open("history=h/p.jsonl&policy=strict&tab=playground&variant=x"));
    let note = state.link_note.as_deref().expect("a note");
    assert!(note.contains("`policy`, `tab`, `variant` apply only to stories"), "{note}");
    assert!(Viz::open("history=h/p.jsonl&compare=1").link_note.unwrap().contains("`compare`"));
    assert!(Viz::open("history=h/p.jsonl&step=2").link_note.is_none());
    let failed = apply(state, [Action::HistoryFailed("h/p.jsonl".into(), "404".into())]);
    assert!(failed.link_failed() && failed.keeps_address());
    let dismissed = apply(failed, [Action::DismissLinkError]);
    assert!(!dismissed.link_failed() && dismissed.link_note.is_none());
    assert!(dismissed.history_error().is_none() && !dismissed.keeps_address());
    assert!(dismissed.to_link().history.is_none(), "the address follows the story again");
}

#[test]
fn opening_a_file_says_so_moves_focus_to_its_title_and_going_back_does_too() {
    let opening = apply(Rc::new(Viz::new()), [Action::Opening("p.jsonl".into(), 19_300_000.0)]);
    assert_eq!(opening.status.as_deref(), Some("Opening p.jsonl (19.3 MB)…"));
    let text = recorded("paused-worker", "broken");
    let opened =
        apply(opening, [Action::OpenHistory("p.jsonl".into(), text.clone(), Origin::File)]);
    let status = opened.status.clone().unwrap_or_default();
    assert!(status.starts_with("Opened p.jsonl: 20 entries, "), "{status}");
    assert_eq!((opened.focus_title, opened.title().as_str()), (1, "History: p.jsonl"));
    let back = apply(opened, [Action::CloseHistory]);
    assert_eq!(back.focus_title, 2);
    assert!(back.status.as_deref().is_some_and(|s| s.starts_with("Back to the stories: ")));
    // A link's history opens where the reader is: the focus stays.
    let link = Origin::Link("h/p.jsonl".into());
    let linked = apply(
        Rc::new(Viz::open("history=h/p.jsonl&title=The%20paused%20worker")),
        [Action::OpenHistory("h/p.jsonl".into(), text, link)],
    );
    assert_eq!((linked.focus_title, linked.title().as_str()), (0, "The paused worker"));
    assert_eq!(linked.to_link().to_fragment(), "history=h/p.jsonl&title=The%20paused%20worker");
    // The link's title names its view, not the story picked next.
    let picked = apply(linked, [Action::Pick("check-then-write".into())]);
    assert!(picked.title.is_none());
}

#[test]
fn a_history_from_a_file_leaves_the_address_naming_the_story_beneath_at_its_start() {
    let state = Rc::new(Viz::open("scenario=paused-worker&variant=fenced&step=4&speed=400"));
    let text = recorded("paused-worker", "broken");
    let opened = apply(
        state,
        [
            Action::OpenHistory("run.jsonl".into(), text, Origin::File),
            Action::Forward,
            Action::Forward,
            Action::TogglePlay,
        ],
    );
    assert!(opened.playing && opened.position == 2);
    assert_eq!(opened.to_link().to_fragment(), "scenario=paused-worker&variant=fenced");
    let back = apply(opened, [Action::CloseHistory]);
    assert_eq!(back.position, 0);
}

#[test]
fn a_link_step_past_the_end_is_named_not_silently_clamped() {
    let state = Viz::open("scenario=paused-worker&step=4000");
    let end = state.track().len();
    assert_eq!(state.position, end);
    let note = state.link_note.as_deref().expect("a note");
    assert_eq!(
        note,
        format!(
            "the link's `step` 4,000 is past the end of this story ({end} steps), so the page shows its last step"
        )
    );
    assert!(Viz::open(&format!("scenario=paused-worker&step={end}")).link_note.is_none());
    let linked = Rc::new(Viz::open("history=h/p.jsonl&step=900&variant=x"));
    let text = recorded("paused-worker", "broken");
    let link = Origin::Link("h/p.jsonl".into());
    let opened = apply(linked, [Action::OpenHistory("h/p.jsonl".into(), text, link)]);
    let note = opened.link_note.as_deref().expect("a note");
    assert!(
        note.contains("`variant`") && note.contains("`step` 900 is past the end of this history"),
        "{note}"
    );
    // A file the reader opens has nothing to do with the story's link: its note goes.
    let file =
        Action::OpenHistory("p.jsonl".into(), recorded("paused-worker", "broken"), Origin::File);
    assert_eq!(apply(Rc::new(state), [file]).link_note, None);
}

#[test]
fn the_document_and_an_embed_are_named_after_the_shown_title() {
    let story = Viz::new();
    assert_eq!(story.document_title(), None, "a story keeps the page's own title");
    assert_eq!(story.embed_title(), story.story.run.scenario.title);
    let text = recorded("paused-worker", "broken");
    let link = |address: &str| Origin::Link(address.into());
    let plain = apply(
        Rc::new(Viz::open("history=../runs/p.jsonl")),
        [Action::OpenHistory("../runs/p.jsonl".into(), text.clone(), link("../runs/p.jsonl"))],
    );
    assert_eq!(plain.document_title().as_deref(), Some("History: ../runs/p.jsonl · Fencelab"));
    assert_eq!(plain.embed_title(), "History: p.jsonl");
    let titled = apply(
        Rc::new(Viz::open("history=../runs/p.jsonl&title=Our%20outage")),
        [Action::OpenHistory("../runs/p.jsonl".into(), text, link("../runs/p.jsonl"))],
    );
    assert_eq!(titled.document_title().as_deref(), Some("Our outage · Fencelab"));
    assert_eq!(titled.embed_title(), "Our outage");
}

#[test]
fn opening_a_history_while_comparing_or_deciding_leaves_that_mode() {
    let text = recorded("paused-worker", "broken");
    let open = || Action::OpenHistory("p.jsonl".into(), text.clone(), Origin::File);
    let story = apply(Rc::new(Viz::new()), [Action::Seek(6)]);
    let whole = story.story.run.len();
    // Compare mode's sides go with it: going back shows the story on its own.
    let comparing = apply(story.clone(), [Action::Compare(true)]);
    let opened = apply(comparing, [open()]);
    assert!(matches!(opened.mode, Mode::History(_)) && opened.compare().is_none());
    assert_eq!(opened.cursor(), (0, opened.track().len()));
    let back = apply(opened, [Action::CloseHistory]);
    assert!(matches!(back.mode, Mode::Story));
    assert_eq!((back.position, back.story.run.len()), (0, whole));
    // "You decide" goes too, and the path decided so far plays on to the story's end beneath.
    let deciding = apply(story, [Action::Decide(true), Action::InDecide(DecideAction::Choose(0))]);
    assert!(deciding.story.run.len() < whole && deciding.story.steered);
    let opened = apply(deciding.clone(), [open()]);
    assert!(opened.decide().is_none());
    let back = apply(opened, [Action::CloseHistory]);
    assert!(matches!(back.mode, Mode::Story));
    assert_eq!(back.story.run.len(), whole);
    assert_eq!(back.story.base.schedule, deciding.story.base.schedule);
    // The modes' own actions mean nothing once their mode is gone.
    for action in [
        Action::CompareMode(Side::Left, Enforcement::Fenced),
        Action::InDecide(DecideAction::Undo),
        Action::InHistory(HistoryAction::ToggleLane(0)),
    ] {
        assert!(Rc::ptr_eq(&apply(back.clone(), [action]), &back));
    }
}

#[test]
fn compare_mode_and_you_decide_replace_each_other() {
    let story = apply(Rc::new(Viz::new()), [Action::Seek(8)]);
    let deciding =
        apply(story.clone(), [Action::Decide(true), Action::InDecide(DecideAction::Choose(0))]);
    let comparing = apply(deciding.clone(), [Action::Compare(true)]);
    assert!(comparing.decide().is_none() && comparing.compare().is_some());
    // Both sides play the path decided so far, to the end.
    let compare = comparing.compare().unwrap();
    let side = compare.right.run.as_ref().expect("plays");
    assert_eq!(side.scenario.schedule[..], deciding.story.base.schedule[..]);
    assert!(side.len() > deciding.story.run.len());
    let link = comparing.to_link();
    assert!(!link.decide && link.compare.is_some());
    let deciding = apply(comparing, [Action::Decide(true)]);
    assert!(deciding.compare().is_none() && deciding.decide().is_some());
    assert!(deciding.to_link().compare.is_none());
}

#[test]
fn a_mode_opened_while_a_history_link_is_on_its_way_gives_the_link_up() {
    let waiting = Rc::new(Viz::open("history=h/p.jsonl&step=3"));
    assert!(waiting.fetch().is_some());
    for mode in [Action::Compare(true), Action::Decide(true)] {
        let moved = apply(waiting.clone(), [mode]);
        assert!(moved.fetch().is_none() && moved.to_fetch().is_none());
        assert!(moved.to_link().history.is_none(), "the address follows the story");
        // The link's answer, when it comes, is no longer awaited.
        let text = recorded("paused-worker", "broken");
        let link = Origin::Link("h/p.jsonl".into());
        let late = apply(moved, [Action::OpenHistory("h/p.jsonl".into(), text, link)]);
        assert!(late.opened().is_none());
    }
    // A failed link's error goes with it too.
    let failed = apply(waiting, [Action::HistoryFailed("h/p.jsonl".into(), "404".into())]);
    let compared = apply(failed, [Action::Compare(true)]);
    assert!(!compared.link_failed() && compared.history_error().is_none());
    assert!(!compared.keeps_address());
}

#[test]
fn a_file_that_is_no_history_is_said_over_any_mode_and_dismissed() {
    let bad = Action::OpenHistory("notes.txt".into(), Rc::new("hello".into()), Origin::File);
    let comparing = apply(Rc::new(Viz::new()), [Action::Compare(true), bad]);
    assert!(comparing.compare().is_some());
    assert!(comparing.history_error().is_some_and(|e| e.contains("notes.txt")));
    let dismissed = apply(comparing, [Action::DismissLinkError]);
    assert!(dismissed.history_error().is_none() && dismissed.compare().is_some());
}
