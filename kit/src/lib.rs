//! The conformance kit's concurrency check: several handles to one store (connections to one
//! database), writers with different generations hitting one resource at once, and every
//! outcome and the final state compared with what a linearizable fenced store allows.
//!
//! A store's write is opaque to the kit, so the check makes its interleavings two ways:
//!
//! - **Held rounds**, deterministic where the store allows it. One writer (the stale one, in
//!   the articles' race) starts first; if its store calls [`gap`] between its check and its
//!   write, the writer is held there until every other writer has written. A check-then-write
//!   store that marks its gap loses the articles' race in the first round, every time. A store
//!   whose write is one atomic step has no gap and does not call [`gap`]: its held writer simply
//!   writes first, so held rounds show nothing about it, and the report counts how many rounds
//!   were held in a gap ([`Concurrency::held_in_gap`]).
//! - **Barrier rounds**, for any store. All writers wait on a [`std::sync::Barrier`] and then
//!   write at once, many rounds per race, on the built-in races and on random ones from seeds
//!   ([`random_races`]). These find what no hook marks, by repetition, not by design.
//!
//! A round passes when some order of its writes, played one at a time on the
//! [`MemoryStore`] reference after the race's setup, gives exactly the outcomes the writers got
//! and the final state the store holds. Every order of at most [`MAX_WRITERS`] writers is tried.
//!
//! Neither check crashes anything: what a store must make durable before it answers, and how to
//! test it, is in the core's conformance documentation
//! (`fencelab_core::drive::conformance`, "What a store must make durable before it answers").
//!
//! This crate is separate from `fencelab-core` because it runs threads and waits with a
//! timeout, and the core reads no clock.
//!
//! ```
//! use fencelab_core::fence::store::MemoryStore;
//! use fencelab_kit::{check_concurrent, races, ConcurrentOptions};
//! use std::sync::{Arc, Mutex};
//!
//! // A store shared by handles behind one lock: atomic, so linearizable.
//! struct Handle(Arc<Mutex<MemoryStore>>);
//! # impl fencelab_core::FencedStore for Handle {
//! #     type Error = std::convert::Infallible;
//! #     fn write(&mut self, r: &fencelab_core::WriteRequest, now: fencelab_core::Tick)
//! #         -> Result<fencelab_core::WriteOutcome, Self::Error> { self.0.lock().unwrap().write(r, now) }
//! #     fn read(&mut self, r: &fencelab_core::ResourceId)
//! #         -> Result<Option<fencelab_core::fence::store::StoredValue>, Self::Error> { self.0.lock().unwrap().read(r) }
//! #     fn lookup(&mut self, r: &fencelab_core::ResourceId, o: &fencelab_core::OperationId)
//! #         -> Result<Option<fencelab_core::fence::idempotency::StoredResult>, Self::Error> { self.0.lock().unwrap().lookup(r, o) }
//! # }
//! let report = check_concurrent(
//!     &races(),
//!     |spec| {
//!         let shared = Arc::new(Mutex::new(MemoryStore::new(spec.policy, spec.retention)));
//!         Ok(move || Ok(Handle(shared.clone())))
//!     },
//!     &ConcurrentOptions { barrier_rounds: 10, ..ConcurrentOptions::default() },
//! )
//! .unwrap();
//! assert_eq!(report.races, races().len());
//! ```

mod all;
mod gap;
mod races;

pub use all::{check_all, Check, Found, KitOptions, KitReport, Ran, SEED_VARIABLE};

/// Everything a store under test implements and answers with, in one place: the trait, the
/// request, the outcomes and what they hold, the spec a store is opened with (a store needs its
/// `policy` and `retention`; the other fields drive the simulator), and the core's write
/// decision, which a store may call inside its own transaction to take every decision the way
/// the reference does (the SQLite and PostgreSQL stores do).
pub mod store {
    pub use fencelab_core::fence::boundary::{
        decide, Commit, CommitEffect, Decision, Expiry, Held, Rules,
    };
    pub use fencelab_core::fence::idempotency::{Retention, StoredResult};
    pub use fencelab_core::fence::register::{
        Applied, Revision, SameGenerationPolicy, WriteRejection,
    };
    pub use fencelab_core::fence::store::StoredValue;
    pub use fencelab_core::format::model::StoreSpec;
    pub use fencelab_core::{
        FencedStore, Generation, OperationId, ResourceId, Tick, WriteOutcome, WriteRequest,
    };
}
pub use gap::gap;
pub use races::{articles_race, races, random_races, Race, Write, MAX_WRITERS};

use all::HandlePerCall;
use fencelab_core::drive::conformance::{
    check_cases, factory, show_value, Case, Divergence, Rule, StoryWrite,
};
use fencelab_core::fence::store::MemoryStore;
use fencelab_core::format::model::StoreSpec;
use fencelab_core::{
    fence::store::StoredValue, FencedStore, ResourceId, Tick, WriteOutcome, WriteRequest,
};
use gap::Gate;
use itertools::Itertools;
use std::fmt;
use std::sync::Barrier;
use std::thread;
use std::time::Duration;

/// How many rounds of each race the check runs, and how long a held writer waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcurrentOptions {
    /// Rounds with one writer held in its store's gap, per race: the race's own held writer
    /// first, then each other writer in turn.
    pub held_rounds: usize,
    /// Rounds whose writers start together on a barrier, per race.
    pub barrier_rounds: usize,
    /// The longest a held writer waits in its gap for the others: a store that calls [`gap`]
    /// while holding a lock the others need makes it wait this long, then go on.
    pub gap_wait: Duration,
}

impl Default for ConcurrentOptions {
    fn default() -> Self {
        ConcurrentOptions { held_rounds: 2, barrier_rounds: 50, gap_wait: Duration::from_secs(5) }
    }
}

/// What a passing check played.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Concurrency {
    /// Races played.
    pub races: usize,
    /// Rounds played, held and barrier.
    pub rounds: usize,
    /// Writes made, setup included.
    pub writes: usize,
    /// Held rounds in which the store called [`gap`], so the held writer really waited in it.
    pub held_in_gap: usize,
}

/// How a round's writers were started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Writer `writer` went first and was held in its store's gap (if the store called
    /// [`gap`]: `in_gap`) until the others had written.
    Held {
        /// The held writer.
        writer: usize,
        /// Whether the store called [`gap`].
        in_gap: bool,
    },
    /// All writers started together on a barrier.
    Barrier,
}

/// One sequential order of a race's writers and what it gives on the reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The writers, in the order they were played.
    pub order: Vec<usize>,
    /// What each writer got, by writer.
    pub outcomes: Vec<WriteOutcome>,
    /// The final state.
    pub state: Option<StoredValue>,
}

/// A round no sequential order explains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// The race.
    pub race: Race,
    /// The round, from 1.
    pub round: usize,
    /// How its writers were started.
    pub start: Start,
    /// What the setup writes got.
    pub setup: Vec<WriteOutcome>,
    /// What each racing writer got.
    pub outcomes: Vec<WriteOutcome>,
    /// The state the store ended with.
    pub state: Option<StoredValue>,
    /// What a linearizable store allows: each distinct result, with one order that gives it.
    pub allowed: Vec<Allowed>,
    /// The rule the store breaks with one writer at a time, when playing the race's writes one
    /// at a time on a fresh store already diverges from the reference, and that divergence: a
    /// sequential bug, which explains the round better than the race does.
    pub sequential: Option<(Rule, String)>,
}

impl Lost {
    /// The rule broken: the one a sequential play of the race breaks, if it breaks one, else
    /// [`Rule::Linearizable`].
    pub fn rule(&self) -> Rule {
        self.sequential.as_ref().map_or(Rule::Linearizable, |(rule, _)| *rule)
    }

    /// The race lost, in words: the sequential divergence when there is one, else a
    /// superseded write applied after a newer one had landed, when that is what happened.
    pub fn verdict(&self) -> String {
        if let Some((_, divergence)) = &self.sequential {
            return format!("the store breaks a rule with one writer at a time too: {divergence}");
        }
        let writers = &self.race.writers;
        for (old, old_outcome) in self.outcomes.iter().enumerate() {
            for (new, new_outcome) in self.outcomes.iter().enumerate() {
                let (WriteOutcome::Applied(a), WriteOutcome::Applied(b)) =
                    (old_outcome, new_outcome)
                else {
                    continue;
                };
                if writers[old].generation >= writers[new].generation {
                    continue;
                }
                // A writer held in its gap surely checked first and wrote last; writers that
                // started together and got one revision may have landed in either order.
                let held = matches!(self.start, Start::Held { in_gap: true, .. });
                if a.revision == b.revision && !held {
                    return format!(
                        "{} and {} were both applied as {}: each was checked against the state before the other, and one overwrote the other unseen",
                        writers[old], writers[new], a.revision
                    );
                }
                if a.revision >= b.revision {
                    return format!(
                        "{} was applied (as {}) after {} had landed (as {}): the stale write passed its check before the newer write landed and was written after it",
                        writers[old], a.revision, writers[new], b.revision
                    );
                }
            }
        }
        "no order of the writes, one at a time, gives these outcomes and this state".into()
    }
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}, round {} ({}):", self.race.name, self.round, describe_start(self.start))?;
        writeln!(f, "  {}", self.verdict())?;
        for (write, outcome) in self.race.setup.iter().zip(&self.setup) {
            writeln!(f, "  before the race, {write}: {}", outcome)?;
        }
        for (n, (write, outcome)) in self.race.writers.iter().zip(&self.outcomes).enumerate() {
            writeln!(f, "  writer {}, {write}: {}", n + 1, outcome)?;
        }
        writeln!(f, "  final state: {}", show_value(&self.state))?;
        writeln!(f, "  a linearizable fenced store allows:")?;
        for allowed in &self.allowed {
            let writers = &self.race.writers;
            let order: Vec<&str> = allowed.order.iter().map(|&w| writers[w].who.as_str()).collect();
            let outcomes: Vec<String> = (allowed.order.iter())
                .map(|&w| format!("{} {}", writers[w].who, allowed.outcomes[w]))
                .collect();
            writeln!(
                f,
                "    in the order {}: {}; final state {}",
                order.join(", "),
                outcomes.join("; "),
                show_value(&allowed.state)
            )?;
        }
        write!(f, "  (rule: {})", self.rule())
    }
}

fn describe_start(start: Start) -> String {
    match start {
        Start::Held { writer, in_gap: true } => {
            format!("writer {} held in its gap until the others wrote", writer + 1)
        }
        Start::Held { writer, in_gap: false } => {
            format!("writer {} first; its store has no gap to hold it in", writer + 1)
        }
        Start::Barrier => "all writers started on a barrier".into(),
    }
}

/// Why a concurrency check failed.
#[derive(Debug, thiserror::Error)]
pub enum ConcurrencyError<E: std::error::Error> {
    /// A round no sequential order explains.
    #[error("{0}")]
    NotLinearizable(Box<Lost>),
    /// The store failed.
    #[error("{race}, round {round}: the store failed: {error}")]
    Store {
        /// The race.
        race: String,
        /// The round, from 1 (0 while opening handles).
        round: usize,
        /// Its error.
        error: E,
    },
}

/// Runs each race against handles from `open`: for each race, `open(spec)` makes a store with
/// the race's policy and retention and returns a function that opens one more handle to it (a
/// connection to the same database). Every round writes a resource of its own (`race<n>/round<r>`),
/// so a race needs one store; each writer has a handle of its own for all rounds.
///
/// See the crate documentation for how rounds are started and judged.
pub fn check_concurrent<S, H>(
    races: &[Race],
    mut open: impl FnMut(&StoreSpec) -> Result<H, S::Error>,
    options: &ConcurrentOptions,
) -> Result<Concurrency, ConcurrencyError<S::Error>>
where
    S: FencedStore + Send,
    S::Error: Send,
    H: FnMut() -> Result<S, S::Error>,
{
    let mut report = Concurrency::default();
    for (n, race) in races.iter().enumerate() {
        assert!(
            (1..=MAX_WRITERS).contains(&race.writers.len()) && race.held < race.writers.len(),
            "{}: a race has 1 to {MAX_WRITERS} writers and holds one of them",
            race.name
        );
        let failed =
            |round| move |error| ConcurrencyError::Store { race: race.name.clone(), round, error };
        let mut handle = open(&race.spec).map_err(failed(0))?;
        let mut handles: Vec<S> = (0..race.writers.len())
            .map(|_| handle())
            .collect::<Result<_, _>>()
            .map_err(failed(0))?;
        let (setup, allowed) = linearizations(race);
        let rounds = options.held_rounds + options.barrier_rounds;
        for round in 1..=rounds {
            let start = if round <= options.held_rounds {
                let writer = (race.held + round - 1) % race.writers.len();
                Start::Held { writer, in_gap: false }
            } else {
                Start::Barrier
            };
            let resource = ResourceId::new(format!("race{n}/round{round}")).expect("a short name");
            let now = Tick(race.setup.len() as u64);
            let mut setup_got = Vec::new();
            for (at, write) in race.setup.iter().enumerate() {
                let request = request(write, &resource);
                setup_got.push(handles[0].write(&request, Tick(at as u64)).map_err(failed(round))?);
            }
            let (outcomes, start) = run_round(race, &resource, now, start, &mut handles, options);
            let outcomes: Vec<WriteOutcome> =
                outcomes.into_iter().collect::<Result<_, _>>().map_err(failed(round))?;
            let state = handles[0].read(&resource).map_err(failed(round))?;
            report.rounds += 1;
            report.writes += race.setup.len() + race.writers.len();
            report.held_in_gap += usize::from(matches!(start, Start::Held { in_gap: true, .. }));
            let fits = |a: &Allowed| a.outcomes == outcomes && a.state == state;
            if setup_got != setup || !allowed.iter().any(fits) {
                let sequential = one_at_a_time(race, &mut open);
                return Err(ConcurrencyError::NotLinearizable(Box::new(Lost {
                    race: race.clone(),
                    round,
                    start,
                    setup: setup_got,
                    outcomes,
                    state,
                    allowed,
                    sequential,
                })));
            }
        }
        report.races += 1;
    }
    Ok(report)
}

/// Runs one round's writers on their own threads, started as `start` says; returns what each
/// got and whether a held writer was held in its gap.
fn run_round<S: FencedStore + Send>(
    race: &Race,
    resource: &ResourceId,
    now: Tick,
    start: Start,
    handles: &mut [S],
    options: &ConcurrentOptions,
) -> (Vec<Result<WriteOutcome, S::Error>>, Start)
where
    S::Error: Send,
{
    let writers = race.writers.len();
    let requests: Vec<WriteRequest> = race.writers.iter().map(|w| request(w, resource)).collect();
    match start {
        Start::Held { writer: held, .. } => {
            let gate = Gate::new(writers - 1, options.gap_wait);
            let outcomes = thread::scope(|scope| {
                let threads: Vec<_> = handles
                    .iter_mut()
                    .zip(&requests)
                    .enumerate()
                    .map(|(w, (handle, request))| {
                        let gate = &gate;
                        scope.spawn(move || {
                            if w == held {
                                gate.run_held(|| handle.write(request, now))
                            } else {
                                gate.run_other(|| handle.write(request, now))
                            }
                        })
                    })
                    .collect();
                threads.into_iter().map(|t| t.join().expect("a writer panicked")).collect()
            });
            (outcomes, Start::Held { writer: held, in_gap: gate.called() })
        }
        Start::Barrier => {
            let barrier = Barrier::new(writers);
            let outcomes = thread::scope(|scope| {
                let threads: Vec<_> = handles
                    .iter_mut()
                    .zip(&requests)
                    .map(|(handle, request)| {
                        let barrier = &barrier;
                        scope.spawn(move || {
                            barrier.wait();
                            handle.write(request, now)
                        })
                    })
                    .collect();
                threads.into_iter().map(|t| t.join().expect("a writer panicked")).collect()
            });
            (outcomes, Start::Barrier)
        }
    }
}

/// The first divergence from the reference of the race's writes played one at a time on fresh
/// stores from `open`, in each order of the writers until one diverges.
fn one_at_a_time<S: FencedStore, H: FnMut() -> Result<S, S::Error>>(
    race: &Race,
    open: &mut impl FnMut(&StoreSpec) -> Result<H, S::Error>,
) -> Option<(Rule, String)> {
    let resource = ResourceId::new("race").expect("a short name");
    let now = race.setup.len() as u64;
    let place = resource.to_string();
    let write = |at: u64, write: &Write| StoryWrite {
        at: Tick(at),
        request: request(write, &resource),
        spec: race.spec.clone(),
        place: place.clone(),
    };
    let setup = race.setup.iter().enumerate().map(|(at, w)| write(at as u64, w));
    let setup: Vec<StoryWrite> = setup.collect();
    let writers = race.writers.len();
    let cases = (0..writers).permutations(writers).map(|order| {
        let mut writes = setup.clone();
        writes.extend(order.iter().map(|&w| write(now, &race.writers[w])));
        Case { name: race.name.clone(), schedule: Vec::new(), writes }
    });
    let cases: Vec<Case> = cases.collect();
    // One handle first; then a new handle for every call, which shows what a handle keeps to
    // itself (a fence cached per connection).
    let one_handle = cases.iter().find_map(|case| {
        check_cases(std::slice::from_ref(case), factory(|spec: &StoreSpec| open(spec)?()))
            .err()
            .and_then(explained)
    });
    one_handle.or_else(|| {
        cases.iter().find_map(|case| {
            let divergence = check_cases(std::slice::from_ref(case), HandlePerCall(&mut *open));
            let (rule, text) = divergence.err().and_then(explained)?;
            Some((rule, format!("with a new handle for every call, {text}")))
        })
    })
}

/// A divergence's rule and words, unless the store failed.
fn explained<E: std::error::Error>(divergence: Divergence<E>) -> Option<(Rule, String)> {
    Some((divergence.rule()?, divergence.to_string()))
}

fn request(write: &Write, resource: &ResourceId) -> WriteRequest {
    WriteRequest::new(
        resource.clone(),
        write.generation,
        write.operation.clone(),
        write.expected_revision,
        write.value.clone(),
    )
}

/// What the setup gets on the reference, and every distinct result of the writers played one at
/// a time in some order after it.
fn linearizations(race: &Race) -> (Vec<WriteOutcome>, Vec<Allowed>) {
    let resource = ResourceId::new("race").expect("a short name");
    let fresh = || MemoryStore::new(race.spec.policy, race.spec.retention);
    let mut setup_store = fresh();
    let setup = race
        .setup
        .iter()
        .enumerate()
        .map(|(at, w)| infallible(setup_store.write(&request(w, &resource), Tick(at as u64))))
        .collect();
    let now = Tick(race.setup.len() as u64);
    let mut allowed: Vec<Allowed> = Vec::new();
    let writers = race.writers.len();
    for order in (0..writers).permutations(writers) {
        let mut store = setup_store.clone();
        let mut outcomes = vec![None; race.writers.len()];
        for &w in &order {
            outcomes[w] = Some(infallible(store.write(&request(&race.writers[w], &resource), now)));
        }
        let outcomes: Vec<WriteOutcome> =
            outcomes.into_iter().map(|o| o.expect("played")).collect();
        let state = infallible(store.read(&resource));
        if !allowed.iter().any(|a| a.outcomes == outcomes && a.state == state) {
            allowed.push(Allowed { order, outcomes, state });
        }
    }
    (setup, allowed)
}

fn infallible<T>(result: Result<T, std::convert::Infallible>) -> T {
    result.unwrap_or_else(|never| match never {})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Panics on every write.
    struct Panics;

    impl FencedStore for Panics {
        type Error = std::convert::Infallible;

        fn write(&mut self, request: &WriteRequest, _: Tick) -> Result<WriteOutcome, Self::Error> {
            panic!("a store bug on {}", request.operation)
        }

        fn read(&mut self, _: &ResourceId) -> Result<Option<StoredValue>, Self::Error> {
            Ok(None)
        }

        fn lookup(
            &mut self,
            _: &ResourceId,
            _: &fencelab_core::OperationId,
        ) -> Result<Option<fencelab_core::fence::idempotency::StoredResult>, Self::Error> {
            Ok(None)
        }
    }

    #[test]
    #[should_panic(expected = "a writer panicked")]
    fn a_held_writer_that_panics_ends_the_check_instead_of_hanging_it() {
        let race = Race { setup: Vec::new(), ..articles_race() };
        let open = |_: &StoreSpec| Ok(|| Ok(Panics));
        let _ = check_concurrent(&[race], open, &ConcurrentOptions::default());
    }

    #[test]
    fn the_articles_race_allows_two_results() {
        let (_, allowed) = linearizations(&articles_race());
        assert_eq!(allowed.len(), 2, "{allowed:?}");
        assert!(allowed.iter().all(|a| a.state.as_ref().unwrap().value.as_deref() == Some("B")));
    }
}
