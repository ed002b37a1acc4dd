//! Golden digests of whole runs: every built-in story and variant, every story with each single
//! "break the protocol" switch, and a couple of thousand random soak scenarios (every other one
//! with protections weakened at random, some with a random schedule played leniently). Each run's
//! captions, violations and rejection counts are hashed; the hashes were produced by the engine
//! before the invariant checker moved out of it (commit bcb2ff4), and blessed once more when the
//! checker learnt to report generations the authority never issued (the only runs that changed
//! were those with forged and wall-clock tokens), so any change in what a run says, breaks or
//! counts shows up here by label.
//!
//! The same runs check every finding's witness: the few entries it names, on their own, must
//! read as a history and show the same finding.
//!
//! `FENCELAB_BLESS=1 cargo test -p fencelab-tests --test it history_equivalence` rewrites
//! `it/golden/verdicts.txt` from the code under test; without it the test compares against it.
//! `FENCELAB_DUMP=<label>` prints the text one label's digest is taken over, to compare a
//! mismatch with the same text printed by an older build.

use fencelab_core::format::model::*;
use fencelab_core::stories::library;
use fencelab_core::{invariant::InvariantKind, record::ScheduleMode, Checker, Engine, History};
use fencelab_core::{stories::switches::broken, stories::switches::Switch};
use fencelab_tests::soak::{fenced_scenario, rng_for};
use rand::rngs::ChaCha8Rng;
use rand::seq::IndexedRandom;
use rand::RngExt;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;

/// How many random soak scenarios the golden set holds, and the seed they come from.
const RANDOM: u64 = 2_000;
const SEED: u64 = 0x5eed_f3c3;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/it/golden/verdicts.txt");

/// 64-bit FNV-1a: stable across platforms, releases and runs (unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A scenario to play: its label, the scenario, and whether its schedule is read leniently.
struct Case {
    label: String,
    scenario: Scenario,
    lenient: bool,
}

fn switch_name(switch: Switch) -> String {
    serde_json::to_value(switch).expect("serializes").as_str().expect("a name").to_string()
}

/// Every built-in story in every variant, then each with every single switch that applies.
fn built_in() -> Vec<Case> {
    let mut cases = Vec::new();
    let stories: Vec<(String, String, Scenario)> = library::cases()
        .into_iter()
        .flat_map(|case| {
            case.variants
                .iter()
                .map(|v| {
                    let s = library::scenario(&case.name, Some(v)).expect("built in");
                    (case.name.clone(), v.clone(), s)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    for (name, variant, s) in &stories {
        cases.push(Case {
            label: format!("story:{name}/{variant}"),
            scenario: s.clone(),
            lenient: false,
        });
    }
    for (name, variant, s) in &stories {
        for switch in Switch::ALL {
            if switch.applies_to(s) {
                cases.push(Case {
                    label: format!("switch:{name}/{variant}/{}", switch_name(switch)),
                    scenario: broken(s, &[switch]),
                    lenient: false,
                });
            }
        }
    }
    for (label, s) in [
        ("generated/3x2x3", library::generated(3, 2, 3)),
        ("contention/4/unfenced", library::contention(4, Enforcement::Unfenced)),
        ("contention/4/check_then_write", library::contention(4, Enforcement::CheckThenWrite)),
        ("contention/4/fenced", library::contention(4, Enforcement::Fenced)),
        ("stampede/5", library::stampede(5)),
    ] {
        cases.push(Case { label: format!("builtin:{label}"), scenario: s, lenient: false });
    }
    cases
}

/// A weaker enforcement, drawn from `rng`.
fn weaker(rng: &mut ChaCha8Rng) -> Enforcement {
    *[Enforcement::Unfenced, Enforcement::CheckThenWrite, Enforcement::Fenced]
        .choose(rng)
        .expect("not empty")
}

/// Turns off some of a random scenario's protections, at random: store and path enforcement,
/// persisted highest generations, criticality, the gateway's fence, the token source, token
/// authentication, forged tokens, and restarts that make the weaker settings matter.
fn weaken(s: &mut Scenario, rng: &mut ChaCha8Rng) {
    for store in &mut s.stores {
        if rng.random_bool(0.5) {
            store.enforcement = weaker(rng);
        }
        if rng.random_bool(0.25) {
            store.persist_highest = false;
        }
        if rng.random_bool(0.1) {
            store.critical = false;
        }
        for path in &mut store.paths {
            if rng.random_bool(0.5) {
                path.enforcement = weaker(rng);
            }
        }
    }
    if let Some(gateway) = s.gateway.as_mut() {
        if rng.random_bool(0.5) {
            gateway.enforcement = Enforcement::Unfenced;
        }
    }
    if rng.random_bool(0.4) {
        s.authority.token_source = if rng.random_bool(0.5) {
            TokenSource::WallClock
        } else {
            TokenSource::VolatileCounter
        };
    }
    if rng.random_bool(0.3) {
        s.authority.authenticated = !s.authority.authenticated;
    }
    for worker in &mut s.workers {
        for step in &mut worker.script {
            if let Step::Write(w) = step {
                if rng.random_bool(0.15) {
                    w.forge = Some(rng.random_range(1..=6));
                }
            }
        }
    }
    if rng.random_bool(0.4) {
        s.faults.push(FaultSpec { at: rng.random_range(0..=40), fault: Fault::RestartAuthority });
    }
    if rng.random_bool(0.3) {
        let store = s.stores.choose(rng).expect("not empty").name.clone();
        s.faults
            .push(FaultSpec { at: rng.random_range(0..=40), fault: Fault::RestartStore { store } });
    }
}

/// The random soak scenarios: odd ones weakened, about half with a random lenient schedule.
fn random() -> Vec<Case> {
    (0..RANDOM)
        .map(|index| {
            let mut rng = rng_for(SEED, index);
            let mut scenario = fenced_scenario(&mut rng);
            if index % 2 == 1 {
                weaken(&mut scenario, &mut rng);
            }
            let lenient = rng.random_bool(0.5);
            if lenient {
                let len = rng.random_range(1..=40);
                scenario.schedule = (0..len).map(|_| rng.random_range(0..4)).collect();
            }
            Case { label: format!("random:{index}"), scenario, lenient }
        })
        .collect()
}

/// What one case produced: its digest, or `None` when the scenario failed validation.
struct Outcome {
    digest: Option<u64>,
    kinds: Vec<InvariantKind>,
}

fn play(case: &Case) -> Outcome {
    let Ok(engine) = Engine::new(case.scenario.clone()) else {
        return Outcome { digest: None, kinds: Vec::new() };
    };
    let mut engine =
        if case.lenient { engine.with_schedule_mode(ScheduleMode::Lenient) } else { engine };
    let error = engine.run().err().map(|e| e.to_string());
    let verdict = engine.verdict();
    let captions: Vec<&str> = engine.records().iter().map(|r| r.caption.as_str()).collect();
    let mut text = captions.join("\n");
    for v in &verdict.violations {
        write!(text, "\n{}|{}|{}", v.invariant, v.step.index(), v.detail).expect("a string");
    }
    for (reason, count) in &verdict.rejections {
        write!(text, "\n{reason:?}={count}").expect("a string");
    }
    write!(text, "\nfinished={} met={}", verdict.finished, verdict.met).expect("a string");
    if let Some(error) = error {
        write!(text, "\nerror:{error}").expect("a string");
    }
    if std::env::var("FENCELAB_DUMP").is_ok_and(|l| l == case.label) {
        eprintln!("{text}");
    }
    Outcome {
        digest: Some(fnv1a(text.as_bytes())),
        kinds: verdict.violations.iter().map(|v| v.invariant).collect(),
    }
}

#[test]
fn runs_say_break_and_count_what_they_did_before_the_checker_moved() {
    let mut cases = built_in();
    let stories = cases.iter().filter(|c| c.label.starts_with("story:")).count();
    let switched = cases.iter().filter(|c| c.label.starts_with("switch:")).count();
    cases.extend(random());
    let mut labels = HashSet::new();
    assert!(cases.iter().all(|c| labels.insert(c.label.clone())), "labels are unique");

    let mut lines = Vec::new();
    let mut skipped = Vec::new();
    let mut by_kind: BTreeMap<InvariantKind, u64> = BTreeMap::new();
    let mut lenient = 0;
    for case in &cases {
        let outcome = play(case);
        match outcome.digest {
            None => skipped.push(case.label.clone()),
            Some(digest) => {
                lines.push((case.label.clone(), format!("{digest:016x}")));
                lenient += usize::from(case.lenient);
            }
        }
        for kind in outcome.kinds {
            *by_kind.entry(kind).or_default() += 1;
        }
    }
    println!(
        "{} scenarios: {stories} stories, {switched} switched, {} random and built by size; \
         {} played ({lenient} with a lenient schedule), {} failed validation",
        cases.len(),
        cases.len() - stories - switched,
        lines.len(),
        skipped.len()
    );
    for kind in InvariantKind::ALL {
        println!("  {kind}: {}", by_kind.get(&kind).copied().unwrap_or(0));
    }
    // The model's authority keeps its own record straight, so only a recorded history can show
    // two holders at once (tests/it/audit.rs covers it).
    let simulable = InvariantKind::ALL.into_iter().filter(|k| *k != InvariantKind::LeasesOverlap);
    let missing: Vec<_> = simulable.filter(|k| !by_kind.contains_key(k)).collect();
    assert!(
        missing.is_empty(),
        "the golden set exercises every invariant; never broken: {missing:?}"
    );

    if std::env::var("FENCELAB_BLESS").as_deref() == Ok("1") {
        let mut out = String::new();
        for (label, digest) in &lines {
            writeln!(out, "{label} {digest}").expect("a string");
        }
        std::fs::create_dir_all(std::path::Path::new(GOLDEN).parent().expect("a folder"))
            .expect("creates the golden folder");
        std::fs::write(GOLDEN, out).expect("writes the golden file");
        println!("wrote {} digests to {GOLDEN}", lines.len());
        return;
    }

    let golden = std::fs::read_to_string(GOLDEN)
        .unwrap_or_else(|e| panic!("{GOLDEN}: {e} (FENCELAB_BLESS=1 writes it)"));
    let want: BTreeMap<&str, &str> = golden
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_once(' ').unwrap_or_else(|| panic!("malformed golden line {l:?}")))
        .collect();
    let mut mismatches = Vec::new();
    for (label, digest) in &lines {
        match want.get(label.as_str()) {
            Some(golden) if golden == digest => {}
            Some(golden) => mismatches.push(format!("{label}: golden {golden}, now {digest}")),
            None => mismatches.push(format!("{label}: not in the golden file")),
        }
    }
    let played: HashSet<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
    for label in want.keys().filter(|l| !played.contains(*l)) {
        mismatches.push(format!("{label}: in the golden file but not played (or now invalid)"));
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} scenarios differ from the golden digests; the first:\n{}",
        mismatches.len(),
        lines.len(),
        mismatches.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
    assert_eq!(lines.len(), want.len(), "scenario count");
}

#[test]
fn every_finding_s_witness_is_a_history_that_shows_it_on_its_own() {
    let mut cases = built_in();
    cases.extend(random());
    let (mut findings, mut longest) = (0, 0);
    for case in &cases {
        let Ok(engine) = Engine::new(case.scenario.clone()) else { continue };
        let mut engine =
            if case.lenient { engine.with_schedule_mode(ScheduleMode::Lenient) } else { engine };
        let _ = engine.run();
        let history = engine.history();
        for found in Checker::judge(&history) {
            let label = &case.label;
            assert!(!found.witness.is_empty(), "{label}: {found:?} has no witness");
            assert!(!found.possible, "{label}: a simulated run has no unknown outcomes");
            let witness = history.excerpt(&found.witness);
            // Written and read back, so the witness holds together as a file would.
            let witness = History::from_jsonl(&witness.to_jsonl())
                .unwrap_or_else(|e| panic!("{label}: the witness of {found:?} does not read: {e}"));
            let again = Checker::judge(&witness);
            assert!(
                again.iter().any(|v| v.invariant == found.invariant),
                "{label}: the witness {:?} of {found:?} shows only {again:?}",
                found.witness
            );
            findings += 1;
            longest = longest.max(found.witness.len());
        }
    }
    println!(
        "{findings} findings replayed from their witnesses; the longest has {longest} entries"
    );
    assert!(findings > 1_000, "the golden set finds plenty: {findings}");
}
