//! The explorer: every interleaving of a scenario, breadth first, until an invariant breaks or
//! the bounds are reached.
//!
//! A scenario's nondeterminism is the engine's choice points: which of several events due at the
//! same tick runs first (so also whether a lease expires before or after a step, and the order
//! of deliveries), whether an optional pause happens, and how much network jitter a message gets.
//! The explorer tries them all, skipping states it has seen. Breadth first means the first
//! violation found has a shortest schedule; that schedule replays in the
//! [`Engine`](crate::Engine).
//!
//! The search drives the [`Simulator`] from each waiting state and feeds every event to that
//! state's own [`Checker`], so a state is the simulated world and what the checker knows of it.

use crate::check::invariant::{InvariantKind, Violation};
use crate::check::Checker;
use crate::format::error::ScenarioError;
use crate::format::model::Scenario;
use crate::history::{Entry, Setup};
use crate::memory::{buffer, hash_table, HeapSize, DEFAULT_MEMORY_BUDGET};
use crate::record::EngineError;
use crate::sim::state::SimState;
use crate::sim::Simulator;
use serde::{Deserialize, Serialize};
use std::collections::{HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::mem::size_of;
use std::sync::Arc;

/// Limits and targets of an exploration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExploreConfig {
    /// The longest run explored, in steps.
    pub max_depth: usize,
    /// The most distinct states visited.
    pub max_states: usize,
    /// The most memory the search may hold, in estimated bytes: the states waiting to be
    /// explored (what each holds beyond the state it came from), the set of states seen and the
    /// scenario.
    pub max_memory: usize,
    /// The invariants whose violation counts as a counterexample.
    pub invariants: Vec<InvariantKind>,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            max_depth: 200,
            max_states: 100_000,
            max_memory: DEFAULT_MEMORY_BUDGET,
            invariants: InvariantKind::SAFETY.to_vec(),
        }
    }
}

/// A bound that cut a search short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Some runs were longer than [`ExploreConfig::max_depth`] and were not followed further.
    Depth,
    /// The search stopped at [`ExploreConfig::max_states`] distinct states.
    States,
    /// The search stopped because going on would pass [`ExploreConfig::max_memory`].
    Memory,
}

impl Bound {
    /// The bound in words, e.g. "the state bound".
    pub fn describe(self) -> &'static str {
        match self {
            Bound::Depth => "the depth bound",
            Bound::States => "the state bound",
            Bound::Memory => "the memory bound",
        }
    }
}

/// Counts of an exploration so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExploreStats {
    /// Distinct states seen.
    pub unique_states: usize,
    /// Steps executed (edges of the state graph).
    pub transitions: usize,
    /// States waiting to be expanded.
    pub frontier: usize,
    /// The deepest state reached, in steps.
    pub max_depth: usize,
    /// Runs that reached their end.
    pub finished_runs: usize,
    /// Whether a bound (depth, states or memory) cut the search short: then it proves nothing
    /// about the schedules it did not reach. The same as `cut_by.is_some()`.
    pub bound_hit: bool,
    /// The bound that cut the search short: the one that stopped it (states or memory), or the
    /// depth bound when the search went on but some runs were cut at it.
    pub cut_by: Option<Bound>,
    /// The most memory the search held, in estimated bytes (see
    /// [`ExploreConfig::max_memory`]).
    pub peak_memory: usize,
}

/// How an exploration ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ExploreResult {
    /// No schedule within the bounds breaks a target invariant.
    NoViolation {
        /// The counts.
        stats: ExploreStats,
    },
    /// A shortest schedule that breaks one.
    Violation {
        /// The counts when it was found.
        stats: ExploreStats,
        /// What broke, at which step.
        violation: Violation,
        /// The choices that lead there, in the scenario `schedule` format.
        schedule: Vec<usize>,
        /// How many steps the run takes to break it.
        steps: usize,
    },
    /// The engine refused to go on (a run longer than its limit).
    Error {
        /// The counts when it stopped.
        stats: ExploreStats,
        /// Why.
        error: EngineError,
    },
}

impl ExploreResult {
    /// The counts.
    pub fn stats(&self) -> &ExploreStats {
        match self {
            ExploreResult::NoViolation { stats }
            | ExploreResult::Violation { stats, .. }
            | ExploreResult::Error { stats, .. } => stats,
        }
    }

    /// Whether the search found no violation but a bound cut it short, so it proves nothing
    /// about the schedules it did not reach.
    pub fn is_inconclusive(&self) -> bool {
        matches!(self, ExploreResult::NoViolation { stats } if stats.bound_hit)
    }
}

struct Node {
    state: SimState,
    checker: Checker,
    schedule: Vec<usize>,
    /// What the node alone holds: the state's own maps and lists and the schedule. The workers
    /// and cells it shares are counted apart (see [`Explorer::memory`]).
    bytes: usize,
}

/// What one choice from a waiting node leads to, as far as the search's bookkeeping needs it.
/// Working it out (copying the node, stepping the simulator, feeding the checker, hashing the
/// result) is most of a search's time and reads nothing but the node, so a parallel search works
/// out the steps of the next nodes ahead, on several threads; the bookkeeping takes them in order.
enum Step {
    /// The step broke a target invariant.
    Broken { violation: Violation, schedule: Vec<usize> },
    /// The step ended the run.
    Finished,
    /// The step led to a state already in the seen set.
    Seen,
    /// The step led to a state that was not in the seen set when the step was worked out;
    /// `child` is what the search would keep of it, or none at the depth bound.
    Unseen { fingerprint: u64, child: Option<Child> },
}

/// A state a step led to, with what keeping it would cost.
struct Child {
    node: Node,
    /// The workers and cells the step allocated, which the child shares with no waiting state
    /// yet.
    shared: usize,
}

impl Step {
    /// The estimated bytes a step worked out ahead holds until the bookkeeping takes it.
    fn held(&self) -> usize {
        let child = match self {
            Step::Unseen { child: Some(child), .. } => child.node.bytes + child.shared,
            _ => 0,
        };
        size_of::<Step>() + child
    }
}

/// What working out a node's steps reads, and nothing it writes, so threads can share it.
struct Successors<'a> {
    sim: &'a Simulator,
    targets: &'a [InvariantKind],
    seen: &'a HashSet<u64>,
    max_depth: usize,
}

impl Successors<'_> {
    /// Takes the `choice`-th enabled step from `node`.
    fn step(&self, node: &Node, choice: usize) -> Result<Step, EngineError> {
        let depth = node.state.position;
        // The child starts as a copy of the node, sharing every worker and cell with it, and is
        // moved, not copied again, into the frontier when it is kept.
        let (mut state, mut checker) = (node.state.clone(), node.checker.clone());
        let (enabled, at, event) = self.sim.advance(&mut state, choice)?;
        let mut broken = checker.feed(depth, &Entry { at, wall_ns: None, event }).violations;
        if state.finished {
            broken.extend(checker.finish(depth));
        }
        let schedule = || {
            let mut schedule = node.schedule.clone();
            if enabled > 1 {
                schedule.push(choice);
            }
            schedule
        };
        if let Some(violation) = broken.into_iter().find(|v| self.targets.contains(&v.invariant)) {
            return Ok(Step::Broken { violation, schedule: schedule() });
        }
        if state.finished {
            return Ok(Step::Finished);
        }
        let fingerprint = fingerprint(&state, &checker);
        if self.seen.contains(&fingerprint) {
            return Ok(Step::Seen);
        }
        if depth + 1 >= self.max_depth {
            return Ok(Step::Unseen { fingerprint, child: None });
        }
        // The child shares with its parent every worker and cell the step did not change; those
        // it changed are new, and counted once, when the child is kept.
        let lists =
            state.heap_bytes_beyond(Some(&state)) + checker.heap_bytes_beyond(Some(&checker));
        let shared = state.heap_bytes_beyond(Some(&node.state))
            + checker.heap_bytes_beyond(Some(&node.checker))
            - lists;
        let schedule = schedule();
        let bytes = lists + buffer::<usize>(schedule.capacity());
        let node = Node { state, checker, schedule, bytes };
        Ok(Step::Unseen { fingerprint, child: Some(Child { node, shared }) })
    }

    /// Works out `node`'s first steps in order, while what they hold fits in `room`, up to one
    /// that ends the search. The bookkeeping takes the steps left out itself.
    #[cfg(feature = "parallel")]
    fn ahead(&self, node: &Node, room: &std::sync::atomic::AtomicUsize) -> Vec<Step> {
        use std::sync::atomic::Ordering::Relaxed;
        let choices = self.sim.enabled_count(&node.state);
        let mut steps = Vec::with_capacity(choices);
        for choice in 0..choices {
            // A child holds about what its parent holds alone: a step whose child would not fit
            // is not worked out at all.
            if room.load(Relaxed) < size_of::<Step>() + node.bytes {
                break;
            }
            let Ok(step) = self.step(node, choice) else { break };
            let held = step.held();
            if room.fetch_update(Relaxed, Relaxed, |left| left.checked_sub(held)).is_err() {
                break;
            }
            let last = matches!(step, Step::Broken { .. });
            steps.push(step);
            if last {
                break;
            }
        }
        steps
    }
}

/// How many waiting nodes a parallel search works out ahead at once: enough that the threads
/// rarely wait for each other, few enough that the steps held ahead stay small beside the
/// frontier.
#[cfg(feature = "parallel")]
const AHEAD: usize = 1024;

/// A breadth-first search over a scenario's schedules, run in slices so a browser stays
/// responsive: call [`Explorer::run_for`] until it returns a result, or drop the explorer to
/// cancel. Slicing does not change the result, nor does [`Explorer::run_parallel`] (with the
/// `parallel` feature), which runs the same search on several threads.
pub struct Explorer {
    sim: Simulator,
    /// The start, kept for the whole search: its workers and cells are counted in the fixed part,
    /// so the states that share them never release them.
    _root: (SimState, Checker),
    /// The node last expanded, held until the next one is; see [`Explorer::release`].
    current: (SimState, Checker),
    config: ExploreConfig,
    targets: Vec<InvariantKind>,
    frontier: VecDeque<Node>,
    seen: HashSet<u64>,
    stats: ExploreStats,
    result: Option<ExploreResult>,
    /// What the search holds, in estimated bytes: the fixed part (the engine, its scenario and
    /// room for the state being expanded), the frontier's and the seen set's buffers, each
    /// waiting node's own part, and every shared worker and cell once. A shared part is counted
    /// when a state that allocated it joins the frontier, and released when the last state
    /// holding it has been expanded.
    memory: usize,
    /// The fixed part of `memory`.
    fixed: usize,
    /// The room the fixed part keeps for one state being expanded.
    #[cfg(feature = "parallel")]
    working: usize,
    /// Steps worked out ahead for the first waiting nodes, one list per node, each the node's
    /// first steps in order. Only a parallel search fills it; see [`Step`].
    ahead: VecDeque<Vec<Step>>,
    /// The steps worked out ahead for the node being expanded that it has not taken yet.
    here: std::vec::IntoIter<Step>,
    /// What the steps in `ahead` and `here` hold, in estimated bytes. They are only a cache,
    /// dropped when the search needs their room; `memory` does not include them.
    held_ahead: usize,
}

impl Explorer {
    /// Prepares to explore `scenario` (its own schedule is ignored).
    pub fn new(scenario: Scenario, config: ExploreConfig) -> Result<Explorer, ScenarioError> {
        let sim = Simulator::new(scenario)?;
        let root = sim.initial_state();
        let checker = Checker::new(Setup::of(sim.scenario()));
        let mut seen = HashSet::new();
        seen.insert(fingerprint(&root, &checker));
        let targets = config.invariants.to_vec();
        // The fixed part covers the simulator and its scenario, and the state being expanded,
        // which shares its workers and cells with the waiting one it was copied from.
        let own = root.heap_bytes_beyond(Some(&root)) + checker.heap_bytes_beyond(Some(&checker));
        let fixed = size_of::<Explorer>()
            + sim.scenario().heap_bytes()
            + sim.compiled().heap_bytes()
            + root.heap_bytes_beyond(None)
            + checker.heap_bytes_beyond(None)
            + own;
        let current = (root.clone(), checker.clone());
        let kept = (root.clone(), checker.clone());
        let node = Node { bytes: own, state: root, checker, schedule: Vec::new() };
        let frontier = VecDeque::from([node]);
        let memory =
            fixed + own + buffer::<Node>(frontier.capacity()) + hash_table::<u64>(seen.capacity());
        Ok(Explorer {
            sim,
            _root: kept,
            current,
            config,
            targets,
            frontier,
            seen,
            stats: ExploreStats {
                unique_states: 1,
                frontier: 1,
                peak_memory: memory,
                ..ExploreStats::default()
            },
            result: None,
            memory,
            fixed,
            #[cfg(feature = "parallel")]
            working: own,
            ahead: VecDeque::new(),
            here: Vec::new().into_iter(),
            held_ahead: 0,
        })
    }

    /// The counts so far.
    pub fn stats(&self) -> ExploreStats {
        self.stats
    }

    /// Expands states until about `budget` more steps have run or the search ends. Returns the
    /// result once there is one.
    pub fn run_for(&mut self, budget: usize) -> Option<&ExploreResult> {
        let stop_at = self.stats.transitions.saturating_add(budget.max(1));
        while self.result.is_none() && self.stats.transitions < stop_at {
            self.expand_next();
        }
        self.result.as_ref()
    }

    /// Runs to the end.
    pub fn run(mut self) -> ExploreResult {
        loop {
            if let Some(result) = self.run_for(usize::MAX) {
                return result.clone();
            }
        }
    }

    /// Runs to the end on `threads` threads (0: one per core), with the same result as
    /// [`Explorer::run`]: the same counts, the same counterexample, the same bound and the same
    /// memory estimate, whatever the number of threads.
    ///
    /// The threads work out the steps from the next waiting states ahead (copying each state,
    /// stepping the simulator, feeding the checker and hashing the result, which is most of the
    /// work), while the bookkeeping (the seen set, the counts, the bounds, the frontier) takes
    /// them in breadth-first order on one thread, as [`Explorer::run`] does. So the first
    /// violation is still a shortest one, and the same one on every run. Steps worked out ahead
    /// take room in the memory bound while they wait, and are dropped and worked out again later
    /// when the search needs that room, so the search never holds more than the bound allows.
    /// A search that cannot start its threads runs on the calling thread alone.
    ///
    /// It is a separate entry point rather than a setting in [`ExploreConfig`] because the
    /// number of threads changes only how fast a search runs, never what it finds, and because
    /// a browser has no threads: it runs the search in slices with [`Explorer::run_for`].
    #[cfg(feature = "parallel")]
    pub fn run_parallel(mut self, threads: usize) -> ExploreResult {
        let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(threads).build() else {
            return self.run();
        };
        pool.install(|| {
            while self.result.is_none() {
                if self.ahead.is_empty() {
                    self.work_ahead(rayon::current_num_threads());
                }
                self.expand_next();
            }
        });
        self.result.expect("the loop ends with a result")
    }

    /// Works out the steps of the first waiting nodes on the current thread pool, within the
    /// room the memory bound leaves beside what the search holds and each thread's state in the
    /// making.
    #[cfg(feature = "parallel")]
    fn work_ahead(&mut self, threads: usize) {
        use rayon::prelude::*;
        use std::sync::atomic::AtomicUsize;
        let nodes = self.frontier.len().min(AHEAD);
        let making = threads.saturating_sub(1) * self.working;
        let room = self.config.max_memory.saturating_sub(self.memory + making);
        let left = AtomicUsize::new(room);
        let successors = Successors {
            sim: &self.sim,
            targets: &self.targets,
            seen: &self.seen,
            max_depth: self.config.max_depth,
        };
        let ahead: Vec<Vec<Step>> = self
            .frontier
            .par_iter()
            .take(nodes)
            .map(|node| successors.ahead(node, &left))
            .collect();
        self.ahead = ahead.into();
        self.held_ahead = room - left.into_inner();
    }

    /// Expands the first waiting node, or ends the search when none is left.
    fn expand_next(&mut self) {
        match self.frontier.pop_front() {
            Some(node) => self.expand(node),
            None => self.result = Some(ExploreResult::NoViolation { stats: self.stats }),
        }
        self.stats.frontier = self.frontier.len();
    }

    /// The `choice`-th step from `node`: worked out ahead, or now.
    fn step(&mut self, node: &Node, choice: usize) -> Result<Step, EngineError> {
        if let Some(step) = self.here.next() {
            self.held_ahead -= step.held();
            return Ok(step);
        }
        let successors = Successors {
            sim: &self.sim,
            targets: &self.targets,
            seen: &self.seen,
            max_depth: self.config.max_depth,
        };
        successors.step(node, choice)
    }

    fn expand(&mut self, node: Node) {
        let depth = node.state.position;
        let choices = self.sim.enabled_count(&node.state);
        self.here = self.ahead.pop_front().unwrap_or_default().into_iter();
        for choice in 0..choices {
            let step = match self.step(&node, choice) {
                Ok(step) => step,
                Err(error) => {
                    self.result = Some(ExploreResult::Error { stats: self.stats, error });
                    return;
                }
            };
            self.stats.transitions += 1;
            self.stats.max_depth = self.stats.max_depth.max(depth + 1);
            let (fingerprint, child) = match step {
                Step::Broken { violation, schedule } => {
                    self.stats.frontier = self.frontier.len();
                    self.result = Some(ExploreResult::Violation {
                        stats: self.stats,
                        violation,
                        schedule,
                        steps: depth + 1,
                    });
                    return;
                }
                Step::Finished => {
                    self.stats.finished_runs += 1;
                    continue;
                }
                Step::Seen => continue,
                Step::Unseen { fingerprint, child } => (fingerprint, child),
            };
            // The seen set may have learnt the state since the step was worked out.
            if self.seen.contains(&fingerprint) {
                continue;
            }
            // A full table grows to about twice its size, and both exist while it does.
            let table = hash_table::<u64>(self.seen.capacity());
            if self.seen.len() == self.seen.capacity() {
                let grown = hash_table::<u64>(self.seen.capacity() * 2 + 1);
                if !self.fits(grown) {
                    return self.cut(Bound::Memory);
                }
            }
            self.seen.insert(fingerprint);
            self.charge(hash_table::<u64>(self.seen.capacity()) - table);
            self.stats.unique_states += 1;
            if self.stats.unique_states >= self.config.max_states {
                return self.cut(Bound::States);
            }
            let Some(Child { node: child, shared }) = child else {
                // Only a step at the depth bound leaves its state out.
                self.stats.bound_hit = true;
                self.stats.cut_by.get_or_insert(Bound::Depth);
                continue;
            };
            let ring = buffer::<Node>(self.frontier.capacity());
            let grown = if self.frontier.len() == self.frontier.capacity() {
                buffer::<Node>(self.frontier.capacity() * 2 + 1)
            } else {
                0
            };
            let own = child.bytes;
            if !self.fits(own + shared + grown) {
                return self.cut(Bound::Memory);
            }
            self.frontier.push_back(child);
            self.charge(own + shared + buffer::<Node>(self.frontier.capacity()) - ring);
        }
        self.release(node);
    }

    /// Whether `bytes` more fit in the memory bound. Steps worked out ahead are dropped when
    /// only they stand in the way, so the answer is the one a search on one thread would give.
    fn fits(&mut self, bytes: usize) -> bool {
        let max = self.config.max_memory;
        let fits = |held: usize| held.saturating_add(bytes) <= max;
        if !fits(self.memory + self.held_ahead) {
            self.drop_ahead();
        }
        fits(self.memory + self.held_ahead)
    }

    /// Drops the steps worked out ahead; the search works them out again when it needs them.
    fn drop_ahead(&mut self) {
        self.ahead.clear();
        self.here = Vec::new().into_iter();
        self.held_ahead = 0;
    }

    fn charge(&mut self, bytes: usize) {
        self.memory += bytes;
        self.stats.peak_memory = self.stats.peak_memory.max(self.memory);
    }

    /// Ends the search at `bound`: the frontier is dropped, so the result is "no violation found"
    /// with the bound named.
    fn cut(&mut self, bound: Bound) {
        self.stats.bound_hit = true;
        self.stats.cut_by = Some(bound);
        self.frontier.clear();
        self.drop_ahead();
    }

    /// Releases an expanded node: its own part, and the workers and cells that no other state
    /// holds any more. The explorer keeps the node until the next is expanded, so that only
    /// waiting states and this one hold anything.
    fn release(&mut self, node: Node) {
        self.memory -= node.bytes;
        self.current = (node.state, node.checker);
        let (state, checker) = &self.current;
        let alone = |count: usize| count == 1;
        let workers: usize = state
            .workers
            .iter()
            .filter(|w| alone(Arc::strong_count(w)))
            .map(HeapSize::heap_bytes)
            .sum();
        let cells: usize = state
            .stores
            .iter()
            .flat_map(|s| s.cells.values())
            .filter(|c| alone(Arc::strong_count(c)))
            .map(HeapSize::heap_bytes)
            .sum();
        let ghosts: usize = checker
            .state()
            .cells
            .values()
            .filter(|c| alone(Arc::strong_count(c)))
            .map(HeapSize::heap_bytes)
            .sum();
        let senders: usize = checker
            .state()
            .senders
            .iter()
            .filter(|s| alone(Arc::strong_count(s)))
            .map(|s| s.heap_bytes())
            .sum();
        self.memory -= workers + cells + ghosts + senders;
        debug_assert!(self.memory >= self.fixed, "released more than was counted");
    }
}

/// A hash of everything that decides what can happen next and what the checker will say of
/// it, for the "seen" set: the simulated state's fingerprint and the checker's state.
fn fingerprint(state: &SimState, checker: &Checker) -> u64 {
    let mut h = std::hash::BuildHasher::build_hasher(&super::FINGERPRINTS);
    state.fingerprint().hash(&mut h);
    checker.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::model::Enforcement;
    use crate::stories::library;

    /// Every worker and cell a search counted is released once no state holds it: after an
    /// exhaustive search only the fixed part and the two tables' buffers are left.
    #[test]
    fn an_exhaustive_search_releases_everything_it_counted() {
        for workers in [2, 3] {
            let scenario = library::contention(workers, Enforcement::Fenced);
            let mut explorer = Explorer::new(scenario, ExploreConfig::default()).unwrap();
            let result = explorer.run_for(usize::MAX).cloned().unwrap();
            assert!(matches!(result, ExploreResult::NoViolation { .. }), "{result:?}");
            let buffers = buffer::<Node>(explorer.frontier.capacity())
                + hash_table::<u64>(explorer.seen.capacity());
            assert_eq!(explorer.memory, explorer.fixed + buffers, "{workers} workers");
            assert!(result.stats().peak_memory > explorer.memory);
        }
    }
}
