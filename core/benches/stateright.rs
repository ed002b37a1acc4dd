//! Fencelab's explorer against stateright's breadth-first checker, in the same process, over the
//! same transition function: the [`Simulator`]'s steps, each event fed to the state's own
//! [`Checker`], each on one thread and on one thread per core ([`Explorer::run_parallel`]).
//! Prints figures; asserts only that every search finds the same number of states.
//!
//! Run with `cargo bench -p fencelab-core --bench stateright`; arguments after `--` pick scenarios
//! by label (`-- contention`). It compares `contention` with 2 to 6 workers and every story
//! variant without a safety violation. `cargo test --benches` runs each search once instead (up to
//! five workers) and fails if the counts differ.
//!
//! The stateright model keeps what the explorer keeps per state (the simulator's state and the
//! checker) and tells states apart by what the explorer hashes (the state's fingerprint and the
//! checker), so the two count the same states. Both stop at the first safety violation, but they
//! visit states in a different order, so they only agree on how many states there are when there
//! is none: the bench compares scenarios whose search finds no safety violation and is not cut by
//! a bound. Each search runs once with a counting allocator switched on (its peak heap and peak
//! resident memory), then several times with it off, in a rotating order, for the timings.

// The bench counts allocations with a global allocator, which is an unsafe trait.
#![allow(unsafe_code)]

mod common;

use common::{is_bench_run, mib, peak_rss, reset_peak, rss};
use fencelab_core::format::model::Enforcement;
use fencelab_core::memory::GIB;
use fencelab_core::sim::state::SimState;
use fencelab_core::stories::library;
use fencelab_core::{
    drive::explore::ExploreConfig, drive::explore::ExploreResult, drive::explore::Explorer,
    history::Entry, history::Setup, invariant::InvariantKind, Checker, Scenario, Simulator,
};
use stateright::{Checker as _, Model, Property};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::{Duration, Instant};

/// The system allocator, counting live bytes while [`COUNTING`] is on: the timed runs leave it
/// off, so they pay one relaxed load per allocation and nothing else.
struct CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn count(delta: isize) {
    if COUNTING.load(Ordering::Relaxed) {
        let now = LIVE.fetch_add(delta, Ordering::Relaxed) + delta;
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed on to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Runs `f` with the allocator counting, and returns the most heap it held above what was live
/// when it started, in bytes (requested sizes, without the allocator's own overhead).
fn peak_heap<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LIVE.store(0, Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let out = f();
    COUNTING.store(false, Ordering::Relaxed);
    (out, PEAK.load(Ordering::Relaxed).max(0) as usize)
}

/// A scenario as a stateright model: its states are the explorer's, its actions the enabled
/// choices.
struct Schedules {
    sim: Simulator,
}

/// What the explorer keeps per state.
#[derive(Clone, Debug)]
struct State {
    sim: SimState,
    checker: Checker,
    /// Whether the step that led here broke a safety invariant. The explorer judges each step
    /// as it takes it; stateright judges states, so the verdict travels with the state.
    violated: bool,
}

/// Hashes what the explorer's fingerprint hashes, so both searches count the same states.
impl Hash for State {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.sim.fingerprint().hash(h);
        self.checker.hash(h);
        self.violated.hash(h);
    }
}

/// Equal when the explorer would count the two as one state, consistent with `Hash`.
impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        self.sim.fingerprint() == other.sim.fingerprint()
            && self.checker == other.checker
            && self.violated == other.violated
    }
}

impl Eq for State {}

impl Model for Schedules {
    type State = State;
    type Action = usize;

    fn init_states(&self) -> Vec<State> {
        let checker = Checker::new(Setup::of(self.sim.scenario()));
        vec![State { sim: self.sim.initial_state(), checker, violated: false }]
    }

    fn actions(&self, state: &State, actions: &mut Vec<usize>) {
        actions.extend(0..self.sim.enabled_count(&state.sim));
    }

    /// What the explorer does with one choice: advance the simulator, feed the event to the
    /// checker, and judge the end of the run if this step finished it.
    fn next_state(&self, state: &State, choice: usize) -> Option<State> {
        let mut next = state.clone();
        let step = state.sim.position;
        let (_, at, event) = self.sim.advance(&mut next.sim, choice).expect("an enabled choice");
        let mut broken = next.checker.feed(step, &Entry::new(at, event)).violations;
        if next.sim.finished {
            broken.extend(next.checker.finish(step));
        }
        next.violated = broken.iter().any(|v| InvariantKind::SAFETY.contains(&v.invariant));
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("no safety violation", |_, state: &State| !state.violated)]
    }

    /// The explorer neither counts nor keeps a finished run's last state; it only judges the step
    /// that led there. Keeping a finished state that broke an invariant lets stateright judge it.
    fn within_boundary(&self, state: &State) -> bool {
        !state.sim.finished || state.violated
    }
}

/// The explorer's bounds, wide enough that no compared scenario reaches them.
fn config() -> ExploreConfig {
    ExploreConfig { max_states: 10_000_000, max_memory: 4 * GIB, ..ExploreConfig::default() }
}

/// One search's outcome: distinct states, and the explorer's own estimate of its peak memory.
struct Found {
    states: usize,
    estimate: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Search {
    /// The explorer: [`Explorer::run`] on one thread, [`Explorer::run_parallel`] on more.
    Fencelab {
        threads: usize,
    },
    Stateright {
        threads: usize,
    },
    /// The baseline, as in the explore bench: cloning the scenario's starting state (the
    /// simulator's and the checker's) `states` times, keeping the clones as a search keeps its
    /// states, so a figure can be read against the machine's speed at that moment.
    Clone {
        states: usize,
    },
}

impl Search {
    fn run(self, scenario: &Scenario) -> Found {
        match self {
            Search::Fencelab { threads } => {
                let explorer = Explorer::new(scenario.clone(), config()).expect("valid");
                let result =
                    if threads == 1 { explorer.run() } else { explorer.run_parallel(threads) };
                assert!(matches!(result, ExploreResult::NoViolation { .. }));
                let stats = result.stats();
                Found { states: stats.unique_states, estimate: Some(stats.peak_memory) }
            }
            Search::Stateright { threads } => {
                let model = Schedules { sim: Simulator::new(scenario.clone()).expect("valid") };
                let checker = model
                    .checker()
                    .threads(threads)
                    .target_max_depth(config().max_depth + 1)
                    .spawn_bfs()
                    .join();
                assert!(checker.discoveries().is_empty(), "stateright found a violation");
                Found { states: checker.unique_state_count(), estimate: None }
            }
            Search::Clone { states } => {
                let sim = Simulator::new(scenario.clone()).expect("valid");
                let start = (sim.initial_state(), Checker::new(Setup::of(sim.scenario())));
                let clones: Vec<_> = (0..states).map(|_| start.clone()).collect();
                Found { states: clones.len(), estimate: None }
            }
        }
    }
}

/// What one search measured.
struct Measured {
    states: usize,
    estimate: Option<usize>,
    heap: usize,
    /// Peak resident memory above the resident memory before the search, in MiB.
    rss_growth: Option<f64>,
    times: Vec<Duration>,
}

impl Measured {
    fn median(&self) -> Duration {
        let mut times = self.times.clone();
        times.sort();
        times[times.len() / 2]
    }

    fn per_second(&self) -> f64 {
        self.states as f64 / self.median().as_secs_f64()
    }
}

/// Hands the memory that earlier searches freed back to the system, so that a search's peak
/// resident memory above the resident memory before it is its own (glibc keeps freed memory for
/// reuse, which a later search would then not count).
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: glibc's malloc_trim only releases free memory; it takes no pointers.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Runs `search` once, counting its heap and its resident memory, and times that run.
fn measure(search: Search, scenario: &Scenario) -> Measured {
    trim();
    let before = rss();
    let fresh = reset_peak();
    let start = Instant::now();
    let (found, heap) = peak_heap(|| search.run(scenario));
    let time = start.elapsed();
    let rss_growth = match (peak_rss(), before) {
        (Some(peak), Some(before)) if fresh => Some(peak - before),
        _ => None,
    };
    Measured { states: found.states, estimate: found.estimate, heap, rss_growth, times: vec![time] }
}

/// The scenarios compared: `contention` with 2 to `most` workers, then every built-in story
/// variant whose search finds no safety violation, smallest first. Prints what it leaves out and
/// why.
fn scenarios(most: usize, wanted: impl Fn(&str) -> bool) -> Vec<(String, Scenario)> {
    let contention = (2..=most).map(|workers| {
        let label = format!("contention, {workers} workers");
        (label, library::contention(workers, Enforcement::Fenced))
    });
    let stories = library::cases().into_iter().flat_map(|case| {
        case.variants.into_iter().map(move |variant| {
            let scenario = library::scenario(&case.name, Some(&variant)).expect("listed");
            (format!("{}/{variant}", case.name), scenario)
        })
    });
    let mut chosen = Vec::new();
    let mut skipped = Vec::new();
    for (label, scenario) in contention.chain(stories).filter(|(label, _)| wanted(label)) {
        match Explorer::new(scenario.clone(), config()).expect("valid").run() {
            ExploreResult::NoViolation { stats } if !stats.bound_hit => {
                chosen.push((stats.unique_states, label, scenario));
            }
            ExploreResult::NoViolation { stats } => {
                let bound = stats.cut_by.map_or("a bound", |b| b.describe());
                skipped.push(format!("{label} (cut by {bound})"));
            }
            ExploreResult::Violation { violation, .. } => {
                skipped.push(format!("{label} ({})", violation.invariant));
            }
            ExploreResult::Error { error, .. } => skipped.push(format!("{label} ({error})")),
        }
    }
    if !skipped.is_empty() {
        println!("Left out, as their search finds a safety violation or stops at a bound:");
        for label in skipped {
            println!("  {label}");
        }
    }
    // Smallest first, so that the largest searches, whose resident memory matters, run last.
    chosen.sort_by_key(|(states, _, _)| *states);
    chosen.into_iter().map(|(_, label, scenario)| (label, scenario)).collect()
}

fn main() {
    let timed = is_bench_run();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    // Arguments after `--` other than flags pick the scenarios whose label contains one of them.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wanted = |label: &str| filters.is_empty() || filters.iter().any(|f| label.contains(f));
    let mut rows = Vec::new();
    let mut mismatches = 0;
    println!("Resident memory before the first search: {}.", mib(rss()));
    // Six workers take seconds per search in a release build and minutes in the smoke test's
    // debug build, so the smoke test stops at five.
    let most = if timed { 6 } else { 5 };
    for (label, scenario) in scenarios(most, wanted) {
        // In the order of the columns: Fencelab and stateright on one thread, then on `threads`.
        let mut searches = vec![
            Search::Fencelab { threads: 1 },
            Search::Stateright { threads: 1 },
            Search::Fencelab { threads },
            Search::Stateright { threads },
        ];
        let mut measured: Vec<Measured> = searches.iter().map(|&s| measure(s, &scenario)).collect();
        let states: Vec<usize> = measured.iter().map(|m| m.states).collect();
        searches.push(Search::Clone { states: states[0] });
        measured.push(measure(searches[4], &scenario));
        if states.iter().any(|&s| s != states[0]) {
            mismatches += 1;
            println!(
                "MISMATCH {label}: Fencelab {} states (1 thread), {} ({threads} threads); stateright {} (1 thread), {} ({threads} threads)",
                states[0], states[2], states[1], states[3]
            );
        }
        if timed {
            // About half a second of each search, at least 5 runs. Rounds alternate between two
            // orders, so that no search always runs right after the same other one.
            let slowest = measured.iter().map(|m| m.times[0]).max().expect("five searches");
            let rounds = (0.5 / slowest.as_secs_f64()).ceil().clamp(5.0, 200.0) as usize;
            for m in &mut measured {
                m.times.clear();
            }
            for round in 0..rounds {
                for k in 0..searches.len() {
                    let i = if round % 2 == 0 { k } else { searches.len() - 1 - k };
                    let start = Instant::now();
                    searches[i].run(&scenario);
                    measured[i].times.push(start.elapsed());
                }
            }
        }
        rows.push((label, measured));
    }
    print_tables(&rows, threads, timed);
    assert_eq!(mismatches, 0, "the searches found different numbers of states");
}

/// Bytes per distinct state, or "n/a".
fn per_state(bytes: Option<usize>, states: usize) -> String {
    bytes.map_or_else(|| "n/a".into(), |b| format!("{:.0}", b as f64 / states as f64))
}

fn growth(m: &Measured) -> String {
    m.rss_growth.map_or_else(|| "n/a".into(), |g| format!("{g:.1} MiB"))
}

fn print_tables(rows: &[(String, Vec<Measured>)], threads: usize, timed: bool) {
    println!();
    println!(
        "Speed, distinct states per second (median of the timed runs{}), and the ratio of stateright's to Fencelab's on as many threads:",
        if timed { "" } else { "; one run only, as a smoke test" }
    );
    println!();
    println!("| scenario | unique states | Fencelab, 1 thread | stateright, 1 thread | stateright / Fencelab | Fencelab, {threads} threads | stateright, {threads} threads | stateright / Fencelab, {threads} threads | baseline: cloning the start | runs each |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (label, m) in rows {
        println!(
            "| {label} | {} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.2} | {:.0} | {} |",
            m[0].states,
            m[0].per_second(),
            m[1].per_second(),
            m[1].per_second() / m[0].per_second(),
            m[2].per_second(),
            m[3].per_second(),
            m[3].per_second() / m[2].per_second(),
            m[4].per_second(),
            m[0].times.len(),
        );
    }
    println!();
    println!(
        "Memory per distinct state, in bytes: the explorer's own estimate of its peak on one thread and on {threads}, and each search's peak heap (requested bytes, counted by the allocator above what was live before the search); then each search's peak resident memory above the resident memory before it. Resident memory is process-wide: freed memory is handed back (malloc_trim) before each search, the largest searches run last, and the multi-threaded searches' allocator arenas count too. A stateright state is {} bytes inline, plus its heap.",
        std::mem::size_of::<State>()
    );
    println!();
    println!("| scenario | Fencelab estimate, 1; {threads} threads | Fencelab heap, 1 thread | stateright heap, 1 thread | Fencelab heap, {threads} threads | stateright heap, {threads} threads | peak RSS growth: Fencelab; stateright, 1 thread; Fencelab; stateright, {threads} threads |");
    println!("|---|---|---|---|---|---|---|");
    for (label, m) in rows {
        let states = m[0].states;
        println!(
            "| {label} | {}; {} | {} | {} | {} | {} | {}; {}; {}; {} |",
            per_state(m[0].estimate, states),
            per_state(m[2].estimate, states),
            per_state(Some(m[0].heap), states),
            per_state(Some(m[1].heap), m[1].states),
            per_state(Some(m[2].heap), m[2].states),
            per_state(Some(m[3].heap), m[3].states),
            growth(&m[0]),
            growth(&m[1]),
            growth(&m[2]),
            growth(&m[3]),
        );
    }
}
