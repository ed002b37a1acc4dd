//! The writes of every schedule: a depth-first search over a scenario's choice points that
//! plays each distinct sequence of writes against the store and the reference.
//!
//! The [`Explorer`](crate::drive::explore::Explorer) merges runs that reach the same state, so it does not know
//! which writes each schedule made. This search keeps the writes made so far with each state and
//! merges two runs only when both the simulated state and the writes so far are the same: from
//! there every continuation makes the same writes, so nothing is lost. Runs that still end with
//! the same writes are played once. Runs that leave the default choice fewer times are
//! followed first, so the first run played is the scenario's default one.

use super::{play, write_of, Case, Conformance, Divergence, StoreFactory, Stores, StoryWrite};
use crate::clock::Tick;
use crate::drive::explore::Bound;
use crate::fence::register::WriteRequest;
use crate::fence::store::FencedStore;
use crate::format::model::Scenario;
use crate::ids::ResourceId;
use crate::sim::state::SimState;
use crate::sim::Simulator;
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};

/// Bounds of [`explore_store`]. The depth and state bounds are the explorer's
/// ([`ExploreConfig`](crate::drive::explore::ExploreConfig)); the schedule bound is this search's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleOptions {
    /// The most distinct write sequences played per scenario.
    pub max_schedules: usize,
    /// The longest run followed, in steps; a longer run is played as far as it got.
    pub max_depth: usize,
    /// The most distinct states (a simulated state with the writes that led to it) visited per
    /// scenario.
    pub max_states: usize,
}

impl Default for ScheduleOptions {
    fn default() -> Self {
        let explorer = crate::drive::explore::ExploreConfig::default();
        ScheduleOptions {
            max_schedules: 64,
            max_depth: explorer.max_depth,
            max_states: explorer.max_states,
        }
    }
}

/// What [`explore_store`] played.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Exploration {
    /// The counts over every sequence played, as [`check_store`](super::check_store) gives
    /// them.
    pub played: Conformance,
    /// Runs followed to their end (or to the depth bound). A run that reached a state already
    /// reached with the same writes was merged there, and is not counted again.
    pub runs: usize,
    /// Distinct write sequences played against the store.
    pub schedules: usize,
    /// Runs whose writes had been played already, so were not played again.
    pub duplicates: usize,
    /// The scenarios whose search the depth or the state bound cut short, with the bound.
    pub cut: Vec<(String, Bound)>,
    /// The scenarios whose search stopped at [`ScheduleOptions::max_schedules`].
    pub schedule_bound: Vec<String>,
}

impl Exploration {
    /// Whether a bound cut some search short, so some schedules were not played.
    pub fn bound_hit(&self) -> bool {
        !self.cut.is_empty() || !self.schedule_bound.is_empty()
    }
}

struct Node {
    state: SimState,
    schedule: Vec<usize>,
    writes: Vec<StoryWrite>,
    /// A hash of `writes`, kept as they grow.
    writes_hash: u64,
    /// How many of its choices were not the first.
    deviations: usize,
}

/// Plays the writes of every schedule of each scenario, within `options`, against stores from
/// `stores` and against the reference, and reports the first divergence with the schedule that
/// replays it (`Divergence::Outcome::schedule`, the choices the [`Engine`](crate::Engine) and
/// `fencelab run` follow).
///
/// Each scenario gets one store per store spec from `stores`, kept for all its schedules: every
/// schedule's resources are renamed with a prefix of their own (`x<n>/...`), so a schedule
/// starts on resources nothing has written, and a database is made once per scenario.
///
/// ```
/// use fencelab_core::{drive::conformance::explore_store, drive::conformance::factory, drive::conformance::ScheduleOptions};
/// use fencelab_core::stories::library;
/// use fencelab_core::fence::store::MemoryStore;
///
/// let story = library::scenario("monitoring", Some("fenced")).unwrap();
/// let fresh = factory(|spec| Ok(MemoryStore::new(spec.policy, spec.retention)));
/// let report = explore_store(&[story], fresh, &ScheduleOptions::default()).unwrap();
/// assert!(report.schedules > 1 && report.runs >= report.schedules);
/// ```
pub fn explore_store<S: FencedStore>(
    scenarios: &[Scenario],
    mut stores: impl StoreFactory<S>,
    options: &ScheduleOptions,
) -> Result<Exploration, Divergence<S::Error>> {
    let mut report = Exploration::default();
    for scenario in scenarios {
        let name = format!("{}/{}", scenario.name, scenario.variant);
        let Ok(sim) = Simulator::new(scenario.clone()) else { continue };
        let mut open = Stores::default();
        let mut played: HashSet<Vec<(Tick, WriteRequest, String)>> = HashSet::new();
        let mut depth_cut = false;
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        // Waiting runs by how many times they left the default choice (choice 0): a run with
        // fewer is followed first, so a schedule bound keeps the schedules nearest the default
        // run, which vary the order of a few events, rather than those a depth-first search
        // reaches first, which only vary its last steps.
        let mut waiting: Vec<Vec<Node>> = vec![vec![Node {
            state: sim.initial_state(),
            schedule: Vec::new(),
            writes: Vec::new(),
            writes_hash: 0,
            deviations: 0,
        }]];
        while let Some(node) = waiting.iter_mut().find_map(Vec::pop) {
            let choices = sim.enabled_count(&node.state);
            let ended = node.state.finished || choices == 0;
            if ended || node.state.position >= options.max_depth {
                depth_cut |= !ended;
                report.runs += 1;
                let key: Vec<_> = node
                    .writes
                    .iter()
                    .map(|w| (w.at, w.request.clone(), w.spec.name.clone()))
                    .collect();
                if played.contains(&key) {
                    report.duplicates += 1;
                    continue;
                }
                let case = Case { name: name.clone(), schedule: node.schedule, writes: Vec::new() };
                let writes = renamed(&node.writes, played.len());
                play(&case, &writes, &mut stores, &mut open, &mut report.played)?;
                played.insert(key);
                report.schedules += 1;
                if played.len() >= options.max_schedules {
                    report.schedule_bound.push(name.clone());
                    break;
                }
                continue;
            }
            if seen.len() >= options.max_states {
                report.cut.push((name.clone(), Bound::States));
                break;
            }
            for choice in 0..choices {
                let mut state = node.state.clone();
                let Ok((enabled, at, event)) = crate::record::advance(&sim, &mut state, choice)
                else {
                    continue;
                };
                let mut writes = node.writes.clone();
                let mut writes_hash = node.writes_hash;
                if let Some(write) = write_of(scenario, at, &event) {
                    writes_hash = hash((writes_hash, &write.at, &write.request, &write.spec.name));
                    writes.push(write);
                }
                if !seen.insert(hash((state.fingerprint(), writes_hash))) {
                    continue;
                }
                let mut schedule = node.schedule.clone();
                if enabled > 1 {
                    schedule.push(choice);
                }
                let deviations = node.deviations + usize::from(choice > 0);
                if waiting.len() <= deviations {
                    waiting.resize_with(deviations + 1, Vec::new);
                }
                let next = Node { state, schedule, writes, writes_hash, deviations };
                waiting[deviations].push(next);
            }
        }
        if depth_cut {
            report.cut.push((name.clone(), Bound::Depth));
        }
        report.played.scenarios += 1;
    }
    Ok(report)
}

/// The writes with every resource renamed `x<n>/<name>`, so that sequence `n` starts on
/// resources no other sequence has written.
fn renamed(writes: &[StoryWrite], n: usize) -> Vec<StoryWrite> {
    let mut writes = writes.to_vec();
    for write in &mut writes {
        let name = format!("x{n}/{}", write.request.resource);
        write.request.resource = ResourceId::new(name).expect("a story's names are short");
    }
    writes
}

fn hash(value: impl Hash) -> u64 {
    crate::fingerprint::FINGERPRINTS.hash_one(value)
}
