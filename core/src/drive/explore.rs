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

use crate::check::Checker;
use crate::format::error::ScenarioError;
use crate::format::model::Scenario;
use crate::history::{Entry, Setup};
use crate::invariant::{InvariantKind, Violation};
use crate::memory::{buffer, hash_table, HeapSize, DEFAULT_MEMORY_BUDGET};
use crate::record::{advance, EngineError};
use crate::sim::state::SimState;
use crate::sim::Simulator;
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::mem::size_of;

#[cfg(feature = "parallel")]
mod parallel;

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
// A step is matched as soon as it is taken, never stored; boxing the child would cost an
// allocation for every new state.
#[allow(clippy::large_enum_variant)]
enum Step {
    /// The step broke a target invariant.
    Broken { violation: Violation, schedule: Vec<usize> },
    /// The step ended the run.
    Finished,
    /// The step led to a state in the seen set.
    Seen,
    /// The step led to a state not in the seen set; `child` is what the search would keep of it,
    /// or none at the depth bound.
    Unseen { fingerprint: u64, child: Option<Child> },
}

/// A state a step led to, with what keeping it would cost. Its schedule is written only when it
/// is kept: most states a search reaches were reached before.
struct Child {
    state: SimState,
    checker: Checker,
    /// The choice the step adds to its parent's schedule, if it had alternatives.
    choice: Option<usize>,
    /// What the state's own maps and lists hold.
    lists: usize,
    /// The workers and cells the step allocated, which no waiting state shares yet.
    shared: usize,
}

impl Child {
    /// What the child alone would hold as a waiting node, after `parent`'s schedule.
    fn bytes(&self, parent: &[usize]) -> usize {
        self.lists + buffer::<usize>(parent.len() + usize::from(self.choice.is_some()))
    }

    /// The waiting node, whose schedule is `parent`'s and then its own choice.
    fn into_node(self, parent: &[usize]) -> Node {
        let bytes = self.bytes(parent);
        let mut schedule = Vec::with_capacity(parent.len() + usize::from(self.choice.is_some()));
        schedule.extend_from_slice(parent);
        schedule.extend(self.choice);
        Node { state: self.state, checker: self.checker, schedule, bytes }
    }
}

/// What taking a step reads: the transition, the targets and whether a fingerprint was seen.
/// Nothing in it changes while steps are taken, so several threads can share it.
struct Successors<'a, Seen> {
    sim: &'a Simulator,
    targets: &'a [InvariantKind],
    seen: Seen,
    max_depth: usize,
}

impl<Seen: Fn(u64) -> bool> Successors<'_, Seen> {
    /// Takes the `choice`-th enabled step from `node`: copies it, steps the simulator, feeds the
    /// event to the checker, and hashes the new state unless the step broke a target or ended
    /// the run.
    fn step(&self, node: &Node, choice: usize) -> Result<Step, EngineError> {
        let depth = node.state.position;
        // The child starts as a copy of the node, sharing every worker and cell with it, and is
        // moved, not copied again, into the frontier when it is kept.
        let (mut state, mut checker) = (node.state.clone(), node.checker.clone());
        let (enabled, at, event) = advance(self.sim, &mut state, choice)?;
        let mut broken = checker.feed(depth, &Entry::new(at, event)).violations;
        if state.finished {
            broken.extend(checker.finish(depth));
        }
        let choice = (enabled > 1).then_some(choice);
        if let Some(violation) = broken.into_iter().find(|v| self.targets.contains(&v.invariant)) {
            let schedule = node.schedule.iter().copied().chain(choice).collect();
            return Ok(Step::Broken { violation, schedule });
        }
        if state.finished {
            return Ok(Step::Finished);
        }
        if self.sim.enabled_count(&state) == 0 {
            // Nothing can happen and the run has not ended: an injected fault waits for more
            // steps than this schedule has. The engine refuses such a run, so the search does.
            return Err(self.sim.ended(&state).into());
        }
        let fingerprint = fingerprint(&state, &checker);
        if (self.seen)(fingerprint) {
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
        let child = Child { state, checker, choice, lists, shared };
        Ok(Step::Unseen { fingerprint, child: Some(child) })
    }
}

/// A breadth-first search over a scenario's schedules, run in slices so a browser stays
/// responsive: call [`Explorer::run_for`] until it returns a result, or drop the explorer to
/// cancel. Slicing does not change the result. With the `parallel` feature,
/// `Explorer::run_parallel` runs the same search on several threads.
///
/// ```
/// use fencelab_core::prelude::*;
///
/// let scenario = library::scenario("paused-worker", Some("broken"))?;
/// let found = Explorer::new(scenario.clone(), ExploreConfig::default())?.run();
/// let ExploreResult::Violation { violation, schedule, .. } = found else {
///     panic!("no schedule breaks the unfenced store: {found:?}");
/// };
/// assert_eq!(violation.invariant, InvariantKind::StaleWriteAccepted);
///
/// // The schedule is a counterexample that replays in the engine.
/// let mut replay = scenario;
/// replay.schedule = schedule;
/// Engine::new(replay)?.run()?.assert_violation(violation.invariant);
/// # Ok::<(), fencelab_core::Error>(())
/// ```
pub struct Explorer {
    sim: Simulator,
    /// The start, kept for the whole search: its workers and cells are counted in the fixed part,
    /// so the states that share them never release them.
    _root: (SimState, Checker),
    config: ExploreConfig,
    targets: Vec<InvariantKind>,
    frontier: VecDeque<Node>,
    /// The fingerprints of the states seen. They are hashes already, so the table's hash only
    /// has to spread them (Fx), not resist chosen keys, and the core draws no random seed.
    seen: FxHashSet<u64>,
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
}

impl Explorer {
    /// Prepares to explore `scenario` (its own schedule is ignored).
    pub fn new(scenario: Scenario, config: ExploreConfig) -> Result<Explorer, ScenarioError> {
        let sim = Simulator::new(scenario)?;
        let root = sim.initial_state();
        let checker = Checker::new(Setup::of(sim.scenario()));
        let mut seen = FxHashSet::default();
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
        let kept = (root.clone(), checker.clone());
        let node = Node { bytes: own, state: root, checker, schedule: Vec::new() };
        let frontier = VecDeque::from([node]);
        let memory =
            fixed + own + buffer::<Node>(frontier.capacity()) + hash_table::<u64>(seen.capacity());
        Ok(Explorer {
            sim,
            _root: kept,
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
            let Some(node) = self.frontier.pop_front() else {
                self.result = Some(ExploreResult::NoViolation { stats: self.stats });
                break;
            };
            self.expand(node);
            self.stats.frontier = self.frontier.len();
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

    fn expand(&mut self, node: Node) {
        let depth = node.state.position;
        let choices = self.sim.enabled_count(&node.state);
        for choice in 0..choices {
            let step = self.successors().step(&node, choice);
            let step = match step {
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
            let Some(child) = child else {
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
            let (own, shared) = (child.bytes(&node.schedule), child.shared);
            if !self.fits(own + shared + grown) {
                return self.cut(Bound::Memory);
            }
            self.frontier.push_back(child.into_node(&node.schedule));
            self.charge(own + shared + buffer::<Node>(self.frontier.capacity()) - ring);
        }
        self.release(node);
    }

    /// What taking a step reads.
    fn successors(&self) -> Successors<'_, impl Fn(u64) -> bool + '_> {
        Successors {
            sim: &self.sim,
            targets: &self.targets,
            seen: |fingerprint| self.seen.contains(&fingerprint),
            max_depth: self.config.max_depth,
        }
    }

    /// Whether `bytes` more fit in the memory bound.
    fn fits(&self, bytes: usize) -> bool {
        self.memory.saturating_add(bytes) <= self.config.max_memory
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
    }

    /// Drops an expanded node and releases what it held: its own part, and the workers and
    /// cells it was the last to hold, so that only waiting states hold anything counted.
    fn release(&mut self, node: Node) {
        let Node { state, checker, bytes, .. } = node;
        self.memory -= bytes + state.drop_shared() + checker.drop_shared();
        debug_assert!(self.memory >= self.fixed, "released more than was counted");
    }
}

/// A hash of everything that decides what can happen next and what the checker will say of
/// it, for the "seen" set: the simulated state's fingerprint and the checker's state.
fn fingerprint(state: &SimState, checker: &Checker) -> u64 {
    let mut h = std::hash::BuildHasher::build_hasher(&crate::fingerprint::FINGERPRINTS);
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
