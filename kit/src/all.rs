//! Every check a fenced store should pass, from one opener, in one report: what an engineer
//! runs first. The checks it runs stay public for those who want one of them.

use crate::{
    check_concurrent, random_races, Concurrency, ConcurrencyError, ConcurrentOptions, MAX_WRITERS,
};
use fencelab_core::drive::conformance::{
    check_cases, explore_store, find_divergences, rule_cases, Case, Conformance, Divergence,
    Exploration, Rule, ScheduleOptions, StoreFactory, StoryWrite,
};
use fencelab_core::fence::idempotency::Retention;
use fencelab_core::fence::register::{Revision, SameGenerationPolicy};
use fencelab_core::fence::{idempotency::StoredResult, store::StoredValue};
use fencelab_core::format::model::StoreSpec;
use fencelab_core::{stories::library, FencedStore, Generation, OperationId, ResourceId};
use fencelab_core::{Tick, WriteOutcome, WriteRequest};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::num::NonZeroUsize;

/// The environment variable that gives [`check_all`] its seed when the options do not: set it
/// to the seed a failing report printed to play the same random sequences and races again.
pub const SEED_VARIABLE: &str = "FENCELAB_KIT_SEED";

/// The checks [`check_all`] runs, in the order it runs them: one writer at a time first, so a
/// store that breaks a rule sequentially is told so before any race is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// One small case per rule ([`rule_cases`]), generations across digit counts and up to
    /// 2^63 - 1 among them, each store reopened at the end.
    Rules,
    /// Each story's own run, each store reopened at the end.
    Stories,
    /// The writes of every schedule of every story, within [`ScheduleOptions`]
    /// ([`explore_store`]).
    Schedules,
    /// Random sequences of writes from the seed (generations from 1 to 2^63 - 1, replays,
    /// conditional writes, both policies, three retentions), each call on a new handle, so a
    /// fence a handle keeps to itself shows; the first that fails is shrunk to the shortest
    /// that still fails.
    Sequences,
    /// Several handles to one store racing ([`check_concurrent`]): the built-in races and
    /// random ones from the seed.
    Concurrent,
}

impl Check {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Check::Rules => "rules",
            Check::Stories => "stories",
            Check::Schedules => "schedules",
            Check::Sequences => "sequences",
            Check::Concurrent => "concurrent",
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How much [`check_all`] plays, and from which seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KitOptions {
    /// The seed of the random sequences and races. `None`: [`SEED_VARIABLE`] if set, else a
    /// fresh seed; the report prints the one used.
    pub seed: Option<u64>,
    /// How many random sequences of writes to play.
    pub sequences: u32,
    /// How many random races to run beside the built-in ones.
    pub random_races: usize,
    /// The bounds of the schedules played.
    pub schedules: ScheduleOptions,
    /// The rounds of each race.
    pub concurrent: ConcurrentOptions,
}

impl Default for KitOptions {
    fn default() -> Self {
        KitOptions {
            seed: None,
            sequences: 64,
            random_races: 16,
            schedules: ScheduleOptions::default(),
            concurrent: ConcurrentOptions::default(),
        }
    }
}

/// One check that ran, and what it covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// The check.
    pub check: Check,
    /// What it played, in words.
    pub covered: String,
}

/// A way a store differed from what a fenced store must do, and the check that found it.
#[derive(Debug)]
pub enum Found<E: std::error::Error> {
    /// A check that plays writes one at a time diverged from the reference.
    Sequential {
        /// The check.
        check: Check,
        /// The first divergence of one case, story, schedule or sequence.
        divergence: Divergence<E>,
    },
    /// The concurrency check lost a race, or the store failed in it.
    Concurrent(ConcurrencyError<E>),
}

impl<E: std::error::Error> Found<E> {
    /// The check that found it.
    pub fn check(&self) -> Check {
        match self {
            Found::Sequential { check, .. } => *check,
            Found::Concurrent(_) => Check::Concurrent,
        }
    }

    /// The rule broken, unless the store failed.
    pub fn rule(&self) -> Option<Rule> {
        match self {
            Found::Sequential { divergence, .. } => divergence.rule(),
            Found::Concurrent(ConcurrencyError::NotLinearizable(lost)) => Some(lost.rule()),
            Found::Concurrent(ConcurrencyError::Store { .. }) => None,
        }
    }
}

impl<E: std::error::Error> fmt::Display for Found<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::Sequential { check, divergence } => write!(f, "[{check}] {divergence}"),
            Found::Concurrent(error) => write!(f, "[concurrent] {error}"),
        }
    }
}

/// What [`check_all`] ran, what each check covered, and every divergence it found.
#[derive(Debug)]
pub struct KitReport<E: std::error::Error> {
    /// The seed of the random sequences and races.
    pub seed: u64,
    /// Each check, in the order it ran.
    pub ran: Vec<Ran>,
    /// Every divergence: the first of each rule case and story, the first of the schedules,
    /// the shortest failing sequence and the first race lost.
    pub found: Vec<Found<E>>,
}

impl<E: std::error::Error> KitReport<E> {
    /// Whether the store passed every check.
    pub fn passed(&self) -> bool {
        self.found.is_empty()
    }

    /// The rules broken, each once, in the order [`Rule`] lists them.
    pub fn rules_broken(&self) -> Vec<Rule> {
        let mut rules: Vec<Rule> = self.found.iter().filter_map(Found::rule).collect();
        rules.sort();
        rules.dedup();
        rules
    }
}

impl<E: std::error::Error> fmt::Display for KitReport<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = match self.found.len() {
            0 => "passed every check".to_string(),
            1 => "1 divergence".to_string(),
            n => format!("{n} divergences"),
        };
        writeln!(f, "fencelab-kit: {verdict} (seed {}: {SEED_VARIABLE}={} plays the same random sequences and races)", self.seed, self.seed)?;
        for ran in &self.ran {
            writeln!(f, "  {:<11}{}", ran.check.name(), ran.covered)?;
        }
        for found in &self.found {
            writeln!(f, "{found}")?;
        }
        Ok(())
    }
}

/// Runs every check a fenced store should pass, and reports them all.
///
/// `open(spec)` makes a fresh, empty store for `spec` (its policy and retention) and returns a
/// function that opens one more handle to it: a connection to the same database. The checks
/// that play one writer at a time take one handle per store, and reopen it with a new handle
/// once a case has been played ([`Rule::Durability`]); the concurrency check takes one per
/// writer. An in-memory store shares its state between handles behind a lock.
///
/// ```
/// use fencelab_core::fence::store::MemoryStore;
/// use fencelab_kit::{check_all, KitOptions};
/// use std::sync::{Arc, Mutex};
///
/// struct Handle(Arc<Mutex<MemoryStore>>);
/// # impl fencelab_core::FencedStore for Handle {
/// #     type Error = std::convert::Infallible;
/// #     fn write(&mut self, r: &fencelab_core::WriteRequest, now: fencelab_core::Tick)
/// #         -> Result<fencelab_core::WriteOutcome, Self::Error> { self.0.lock().unwrap().write(r, now) }
/// #     fn read(&mut self, r: &fencelab_core::ResourceId)
/// #         -> Result<Option<fencelab_core::fence::store::StoredValue>, Self::Error> { self.0.lock().unwrap().read(r) }
/// #     fn lookup(&mut self, r: &fencelab_core::ResourceId, o: &fencelab_core::OperationId)
/// #         -> Result<Option<fencelab_core::fence::idempotency::StoredResult>, Self::Error> { self.0.lock().unwrap().lookup(r, o) }
/// # }
/// let report = check_all(
///     |spec| {
///         let shared = Arc::new(Mutex::new(MemoryStore::new(spec.policy, spec.retention)));
///         Ok(move || Ok(Handle(shared.clone())))
///     },
///     &KitOptions::default(),
/// );
/// assert!(report.passed(), "{report}");
/// ```
pub fn check_all<S, H>(
    mut open: impl FnMut(&StoreSpec) -> Result<H, S::Error>,
    options: &KitOptions,
) -> KitReport<S::Error>
where
    S: FencedStore + Send,
    S::Error: Send,
    H: FnMut() -> Result<S, S::Error>,
{
    let seed = options.seed.unwrap_or_else(seed_from_environment);
    let mut report = KitReport { seed, ran: Vec::new(), found: Vec::new() };
    let stories = library::all();
    let story_cases: Vec<Case> = stories.iter().map(Case::of).collect();
    for (check, cases) in [(Check::Rules, rule_cases()), (Check::Stories, story_cases)] {
        let findings = find_divergences(&cases, Handles::new(&mut open));
        let covered = covered(&findings.report, cases.len(), "cases");
        report.ran.push(Ran { check, covered });
        let found = findings.divergences.into_iter();
        report.found.extend(found.map(|divergence| Found::Sequential { check, divergence }));
    }
    match explore_store(&stories, Handles::new(&mut open), &options.schedules) {
        Ok(explored) => report.ran.push(explored_covered(&explored)),
        Err(divergence) => {
            let covered = format!("stopped at the first divergence, of {} stories", stories.len());
            report.ran.push(Ran { check: Check::Schedules, covered });
            report.found.push(Found::Sequential { check: Check::Schedules, divergence });
        }
    }
    let (covered, divergence) = sequences(HandlePerCall(&mut open), seed, options.sequences);
    report.ran.push(Ran { check: Check::Sequences, covered });
    if let Some(divergence) = divergence {
        report.found.push(Found::Sequential { check: Check::Sequences, divergence });
    }
    let mut races = crate::races();
    let built_in = races.len();
    races.extend(random_races(seed, options.random_races, MAX_WRITERS));
    match check_concurrent(&races, &mut open, &options.concurrent) {
        Ok(played) => report.ran.push(raced(&played, built_in, options.random_races)),
        Err(error) => {
            let covered = format!(
                "{built_in} built-in races and {} random ones; stopped at the first lost",
                options.random_races
            );
            report.ran.push(Ran { check: Check::Concurrent, covered });
            report.found.push(Found::Concurrent(error));
        }
    }
    report
}

/// The seed [`SEED_VARIABLE`] gives, else a fresh one.
fn seed_from_environment() -> u64 {
    if let Some(seed) = std::env::var(SEED_VARIABLE).ok().and_then(|s| s.trim().parse().ok()) {
        return seed;
    }
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

fn covered(report: &Conformance, cases: usize, what: &str) -> String {
    let outcomes: Vec<String> =
        report.outcomes.iter().map(|(outcome, n)| format!("{outcome} {n}")).collect();
    format!(
        "{} of {cases} {what} passed, {} writes ({}), {} reopens",
        report.scenarios,
        report.writes,
        outcomes.join(", "),
        report.reopens
    )
}

fn explored_covered(explored: &Exploration) -> Ran {
    let cut = if explored.bound_hit() { "; a bound cut some searches short" } else { "" };
    let covered = format!(
        "{} distinct schedules of {} stories played, {} writes{cut}",
        explored.schedules, explored.played.scenarios, explored.played.writes
    );
    Ran { check: Check::Schedules, covered }
}

fn raced(played: &Concurrency, built_in: usize, random: usize) -> Ran {
    let covered = format!(
        "{built_in} built-in races and {random} random ones, {} rounds, {} writes, {} rounds held in the store's gap",
        played.rounds, played.writes, played.held_in_gap
    );
    Ran { check: Check::Concurrent, covered }
}

/// A [`StoreFactory`] over one opener: each store made keeps the function that opens another
/// handle to it, and a reopen is a new handle.
struct Handles<O, H> {
    open: O,
    made: Vec<(String, H)>,
}

impl<O, H> Handles<O, H> {
    fn new(open: O) -> Handles<O, H> {
        Handles { open, made: Vec::new() }
    }
}

impl<S, O, H> StoreFactory<S> for Handles<O, H>
where
    S: FencedStore,
    O: FnMut(&StoreSpec) -> Result<H, S::Error>,
    H: FnMut() -> Result<S, S::Error>,
{
    fn make(&mut self, spec: &StoreSpec) -> Result<S, S::Error> {
        let mut handle = (self.open)(spec)?;
        let store = handle()?;
        // One store per name is open at a time: a case makes each of its stores once.
        self.made.retain(|(name, _)| *name != spec.name);
        self.made.push((spec.name.clone(), handle));
        Ok(store)
    }

    fn reopen(&mut self, spec: &StoreSpec, store: S) -> Option<Result<S, S::Error>> {
        let (_, handle) = self.made.iter_mut().find(|(name, _)| *name == spec.name)?;
        drop(store);
        Some(handle())
    }
}

/// A factory whose stores take a new handle for every call: what one handle keeps to itself (a
/// fence cached per connection) shows one writer at a time, with the rule it breaks, rather
/// than only as a lost race.
pub(crate) struct HandlePerCall<O>(pub(crate) O);

/// A store reached through a new handle at every call.
pub(crate) struct Fresh<H>(H);

impl<S: FencedStore, H: FnMut() -> Result<S, S::Error>> FencedStore for Fresh<H> {
    type Error = S::Error;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, S::Error> {
        (self.0)()?.write(request, now)
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, S::Error> {
        (self.0)()?.read(resource)
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, S::Error> {
        (self.0)()?.lookup(resource, operation)
    }
}

impl<S, O, H> StoreFactory<Fresh<H>> for HandlePerCall<O>
where
    S: FencedStore,
    O: FnMut(&StoreSpec) -> Result<H, S::Error>,
    H: FnMut() -> Result<S, S::Error>,
{
    fn make(&mut self, spec: &StoreSpec) -> Result<Fresh<H>, S::Error> {
        (self.0)(spec).map(Fresh)
    }

    // Every call is a reopen already.
    fn reopen(&mut self, _: &StoreSpec, store: Fresh<H>) -> Option<Result<Fresh<H>, S::Error>> {
        Some(Ok(store))
    }
}

/// One write of a random sequence: its generation, operation id (of four), expected revision
/// and how many ticks after the previous write it comes.
type Step = (u64, usize, Option<u64>, u64);

/// Generations a store may order wrongly: across digit counts (a store comparing text), past
/// 2^31 (a 32-bit column), past 2^53 (a floating-point one) and up to 2^63 - 1 (a signed 64-bit
/// column, the largest the SQL stores take).
const EDGES: [u64; 14] = [
    1,
    2,
    9,
    10,
    99,
    100,
    999,
    1_000,
    (1 << 31) - 1,
    1 << 31,
    1 << 53,
    (1 << 53) + 1,
    i64::MAX as u64 - 1,
    i64::MAX as u64,
];

fn step() -> impl Strategy<Value = Step> {
    let generation = prop_oneof![prop::sample::select(EDGES.to_vec()), 1..=1_000u64];
    let expected = prop::option::weighted(0.2, 0..4u64);
    (generation, 0..4usize, expected, 0..3u64)
}

/// A random case: a policy, a retention (forever, one id, or five ticks) and its writes.
fn sequence() -> impl Strategy<Value = (bool, usize, Vec<Step>)> {
    (any::<bool>(), 0..3usize, prop::collection::vec(step(), 1..10))
}

/// A write of a sequence in a few words: `t=2 g10 op-1 expecting r1`.
fn show_write(write: &StoryWrite) -> String {
    let request = &write.request;
    let expecting =
        request.expected_revision.map(|r| format!(" expecting {r}")).unwrap_or_default();
    format!("t={} g{} {}{expecting}", write.at.0, request.generation, request.operation)
}

fn case_of(seed: u64, n: usize, (strict, retention, steps): &(bool, usize, Vec<Step>)) -> Case {
    let policy =
        if *strict { SameGenerationPolicy::StrictlyNewer } else { SameGenerationPolicy::AllowSame };
    let (retention, kept) = match retention {
        0 => (Retention::FOREVER, "ids kept forever"),
        1 => (Retention { max_entries: NonZeroUsize::new(1), max_age: None }, "one id kept"),
        _ => (Retention { max_entries: None, max_age: Some(5) }, "ids kept 5 ticks"),
    };
    let spec = StoreSpec::fenced("sequence", policy, retention);
    let resource = ResourceId::new(format!("sequence{n}/r")).expect("a short name");
    let mut at = 0;
    let writes: Vec<StoryWrite> = steps
        .iter()
        .map(|&(generation, operation, expected, after)| {
            at += after;
            let request = WriteRequest::new(
                resource.clone(),
                Generation::new(generation).expect("generations start at 1"),
                OperationId::new(format!("op-{operation}")).expect("a short name"),
                expected.map(Revision),
                format!("v{generation}"),
            );
            let place = resource.to_string();
            StoryWrite { at: Tick(at), request, spec: spec.clone(), place }
        })
        .collect();
    let policy = if *strict { "strict policy" } else { "same generation allowed" };
    let shown: Vec<String> = writes.iter().map(show_write).collect();
    let name = format!(
        "random sequence {n} of seed {seed} ({policy}, {kept}, a new handle for every call; {})",
        shown.join(", ")
    );
    Case { name, schedule: Vec::new(), writes }
}

/// Plays `count` random sequences from `seed`; the first that diverges is shrunk to the
/// shortest sequence that still does, and its divergence returned.
fn sequences<S: FencedStore>(
    stores: impl StoreFactory<S>,
    seed: u64,
    count: u32,
) -> (String, Option<Divergence<S::Error>>) {
    let config = Config { cases: count, failure_persistence: None, ..Config::default() };
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(&seed.to_le_bytes());
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let stores = RefCell::new(stores);
    // Sequences generated so far; once one fails, the calls that follow shrink it and keep its
    // number.
    let played = Cell::new(0usize);
    let failed = Cell::new(false);
    // The last divergence seen: shrinking ends on the shortest input that still failed.
    let last = RefCell::new(None);
    let result = runner.run(&sequence(), |input| {
        if !failed.get() {
            played.set(played.get() + 1);
        }
        let case = case_of(seed, played.get(), &input);
        match check_cases(&[case], &mut *stores.borrow_mut()) {
            Ok(_) => Ok(()),
            Err(divergence) => {
                failed.set(true);
                let message = divergence.to_string();
                *last.borrow_mut() = Some(divergence);
                Err(TestCaseError::fail(message))
            }
        }
    });
    let played = played.get();
    match result {
        Ok(()) => (
            format!("{played} random sequences of up to 9 writes played, each call on a new handle"),
            None,
        ),
        Err(TestError::Fail(_, _)) => (
            format!("{played} random sequences played, each call on a new handle; the one that diverged shrunk to the shortest that still does"),
            last.into_inner(),
        ),
        Err(TestError::Abort(why)) => (format!("stopped: {why}"), None),
    }
}
