//! The explorer: every interleaving of a scenario, breadth first, until an invariant breaks or
//! the bounds are reached.
//!
//! A scenario's nondeterminism is the engine's choice points: which of several events due at the
//! same tick runs first (so also whether a lease expires before or after a step, and the order
//! of deliveries), whether an optional pause happens, and how much network jitter a message gets.
//! The explorer tries them all, skipping states it has seen. Breadth first means the first
//! violation found has a shortest schedule; that schedule replays in the [`Engine`].

use crate::scenario::engine::{Engine, EngineError};
use crate::scenario::invariant::{InvariantKind, Violation};
use crate::scenario::model::Scenario;
use crate::scenario::state::SimState;
use crate::scenario::validate::ScenarioError;
use serde::{Deserialize, Serialize};
use std::collections::{HashSet, VecDeque};

/// Limits and targets of an exploration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExploreConfig {
    /// The longest run explored, in steps.
    pub max_depth: usize,
    /// The most distinct states visited.
    pub max_states: usize,
    /// The invariants whose violation counts as a counterexample.
    pub invariants: Vec<InvariantKind>,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            max_depth: 200,
            max_states: 100_000,
            invariants: InvariantKind::SAFETY.to_vec(),
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
    /// Whether a depth or state bound cut the search short.
    pub bound_hit: bool,
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
}

struct Node {
    state: SimState,
    schedule: Vec<usize>,
}

/// A breadth-first search over a scenario's schedules, run in slices so a browser stays
/// responsive: call [`Explorer::run_for`] until it returns a result, or drop the explorer to
/// cancel. Slicing does not change the result.
pub struct Explorer {
    engine: Engine,
    config: ExploreConfig,
    targets: Vec<InvariantKind>,
    frontier: VecDeque<Node>,
    seen: HashSet<u64>,
    stats: ExploreStats,
    result: Option<ExploreResult>,
}

impl Explorer {
    /// Prepares to explore `scenario` (its own schedule is ignored).
    pub fn new(scenario: Scenario, config: ExploreConfig) -> Result<Explorer, ScenarioError> {
        let engine = Engine::new(scenario)?.quiet();
        let root = engine.state().clone();
        let mut seen = HashSet::new();
        seen.insert(root.fingerprint());
        let targets = config.invariants.to_vec();
        Ok(Explorer {
            engine,
            config,
            targets,
            frontier: VecDeque::from([Node { state: root, schedule: Vec::new() }]),
            seen,
            stats: ExploreStats { unique_states: 1, frontier: 1, ..ExploreStats::default() },
            result: None,
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
        self.engine.set_state(node.state.clone());
        let choices = self.engine.enabled_count();
        for choice in 0..choices {
            self.engine.set_state(node.state.clone());
            let before = node.state.violations.len();
            let enabled = match self.engine.advance(choice) {
                Ok((enabled, _, _)) => enabled,
                Err(error) => {
                    self.result = Some(ExploreResult::Error { stats: self.stats, error });
                    return;
                }
            };
            self.stats.transitions += 1;
            self.stats.max_depth = self.stats.max_depth.max(depth + 1);
            let child = self.engine.state();
            let mut schedule = node.schedule.clone();
            if enabled > 1 {
                schedule.push(choice);
            }
            if let Some(violation) =
                child.violations[before..].iter().find(|v| self.targets.contains(&v.invariant))
            {
                self.stats.frontier = self.frontier.len();
                self.result = Some(ExploreResult::Violation {
                    stats: self.stats,
                    violation: violation.clone(),
                    schedule,
                    steps: depth + 1,
                });
                return;
            }
            if child.finished {
                self.stats.finished_runs += 1;
                continue;
            }
            if !self.seen.insert(child.fingerprint()) {
                continue;
            }
            self.stats.unique_states += 1;
            if depth + 1 >= self.config.max_depth
                || self.stats.unique_states >= self.config.max_states
            {
                self.stats.bound_hit = true;
                if self.stats.unique_states >= self.config.max_states {
                    self.frontier.clear();
                    return;
                }
                continue;
            }
            self.frontier.push_back(Node { state: child.clone(), schedule });
        }
    }
}
