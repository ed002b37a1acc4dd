//! The explorer on several threads: the same breadth-first search, one level at a time.
//!
//! The threads share out a level's waiting states, take every step from each, and keep the new
//! states they reach. Which thread reaches a state first is a race; which step reaches it first
//! in breadth-first order (the waiting state's place in the search, then the choice) is not, and
//! that step's state is the one kept, numbered by that order for the next level. So the search
//! keeps the states and schedules the sequential search keeps, and at the first violation, error
//! or state bound in that order it reports what the sequential search reports there.
//!
//! The threads share as little as they can while a level runs: the seen set of earlier levels,
//! which nobody changes then; each thread's own record of the first step to reach each state it
//! reached, compared with the others' once all are done; and a thread takes the waiting states
//! it built itself first and frees each as soon as it has expanded it, as the system allocator
//! (glibc's) is slow when threads free what other threads allocated.

use super::*;
use crate::memory::block;
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry as Claim;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// Levels with fewer waiting states than this are expanded on the calling thread: waking the
/// threads costs more than such a level's work, and a small search never starts them.
const PARALLEL_FROM: usize = 32;

/// The first step, in breadth-first order, that one thread took to each new state it reached.
type Claims = FxHashMap<u64, u64>;

/// The place of a step in breadth-first order: the number of the waiting state it is taken
/// from (counted from the start of the search), then its choice.
fn order(node: u64, choice: usize) -> u64 {
    node << 32 | choice as u64
}

/// A waiting state and its number in breadth-first order.
struct Waiting {
    number: u64,
    node: Box<Node>,
}

/// What a waiting state costs beside its node's own part: its box and its place in a queue.
fn waiting() -> usize {
    block(size_of::<Node>()) + size_of::<Waiting>()
}

/// A step that ends the search, wherever it comes in breadth-first order.
enum Stop {
    Broken { violation: Violation, schedule: Vec<usize>, depth: usize },
    Refused(EngineError),
}

/// A state a thread reached that was not seen before the level, kept until the level ends.
struct Candidate {
    order: u64,
    fingerprint: u64,
    /// The state with the workers and cells its step allocated, or none at the depth bound.
    child: Option<(Box<Node>, usize)>,
}

impl Candidate {
    /// What keeping it as a waiting state costs.
    fn cost(&self) -> usize {
        self.child.as_ref().map_or(0, |(node, shared)| waiting() + node.bytes + shared)
    }
}

/// What a candidate holds while the level runs, beside its state: itself, its claim (with room
/// for the table to grow) and its place in the level's order.
const CANDIDATE: usize =
    size_of::<Candidate>() + 2 * size_of::<(u64, u64)>() + size_of::<(u64, usize, usize)>();

/// What expanding one waiting state did, for the counts.
struct Expanded {
    number: u64,
    depth: usize,
    choices: usize,
    /// The choices whose step ended its run.
    finished: Vec<u32>,
}

/// What one task found in a level.
#[derive(Default)]
struct Found {
    /// The thread that ran the task, which built its states.
    thread: usize,
    candidates: Vec<Candidate>,
    claims: Claims,
    expanded: Vec<Expanded>,
    /// The first step, in breadth-first order, that ends the search.
    stop: Option<(u64, Stop)>,
    /// What the expanded states held: their own parts, and the workers and cells they were the
    /// last to hold.
    released: usize,
}

impl Found {
    /// Drops an expanded state and counts what that released: its own part, and the workers
    /// and cells it was the last to hold.
    fn release(&mut self, node: Box<Node>) {
        let Node { state, checker, bytes, .. } = *node;
        self.released += waiting() + bytes + state.drop_shared() + checker.drop_shared();
    }

    fn stop(&mut self, order: u64, stop: Stop) {
        if self.stop.as_ref().is_none_or(|(first, _)| order < *first) {
            self.stop = Some((order, stop));
        }
    }
}

/// One level of the search, shared by the threads that expand it.
struct Level<'a, S> {
    successors: Successors<'a, S>,
    /// Each thread's waiting states: those it built. Their numbers order their steps, so the
    /// order they wait in does not matter.
    queues: Vec<Mutex<VecDeque<Waiting>>>,
    /// The bytes the level may take beside what the search holds.
    room: usize,
    /// The bytes the level has taken: every new state as if it were kept.
    taken: AtomicUsize,
    /// Set once the level has wanted more than its room.
    full: AtomicBool,
    /// Per thread, the states it built that other threads expanded, for it to free. They stay
    /// boxed as the level holds them, so handing one back moves a pointer, not a state.
    #[allow(clippy::vec_box)]
    strays: Vec<Mutex<Vec<Box<Node>>>>,
}

impl<S: Fn(u64) -> bool> Level<'_, S> {
    /// Expands waiting states until none is left: thread `me`'s own first, then, from the
    /// other end, other threads', which it hands back to the thread that built them to free.
    fn expand(&self, me: usize) -> Found {
        let threads = self.queues.len();
        let mine = self.queue(me).len();
        // A state has one or two new successors, usually: room for two spares most of the
        // growing, which with glibc's allocator costs more than the room.
        let mut found = Found {
            thread: me,
            candidates: Vec::with_capacity(2 * mine),
            claims: Claims::with_capacity_and_hasher(2 * mine, Default::default()),
            expanded: Vec::with_capacity(mine),
            ..Found::default()
        };
        while !self.full.load(Relaxed) {
            // One queue locked at a time.
            let own = self.queue(me).pop_front().map(|waiting| (waiting, me));
            let next = own.or_else(|| {
                (1..threads)
                    .map(|k| (me + k) % threads)
                    .find_map(|home| self.queue(home).pop_back().map(|waiting| (waiting, home)))
            });
            let Some((waiting, home)) = next else { break };
            if let Some(node) = self.expand_one(waiting, &mut found) {
                if home == me {
                    found.release(node);
                } else {
                    lock(&self.strays[home]).push(node);
                }
            }
        }
        for node in std::mem::take(&mut *lock(&self.strays[me])) {
            found.release(node);
        }
        found
    }

    fn queue(&self, thread: usize) -> std::sync::MutexGuard<'_, VecDeque<Waiting>> {
        lock(&self.queues[thread])
    }

    /// Takes every step from a waiting state; returns it unless the level is full.
    fn expand_one(
        &self,
        Waiting { number, node }: Waiting,
        found: &mut Found,
    ) -> Option<Box<Node>> {
        let depth = node.state.position;
        let choices = self.successors.sim.enabled_count(&node.state);
        // What the node's new states take is counted once for the node, so that threads seldom
        // touch the shared count.
        let mut taken = size_of::<Expanded>();
        let mut finished = Vec::new();
        for choice in 0..choices {
            let order = order(number, choice);
            match self.successors.step(&node, choice) {
                Err(error) => {
                    found.stop(order, Stop::Refused(error));
                    break;
                }
                Ok(Step::Broken { violation, schedule }) => {
                    found.stop(order, Stop::Broken { violation, schedule, depth });
                    break;
                }
                Ok(Step::Finished) => finished.push(choice as u32),
                Ok(Step::Seen) => {}
                Ok(Step::Unseen { fingerprint, child }) => {
                    // Every state new to the level is counted as if it were kept, so whether
                    // the level fits does not depend on which thread got where first.
                    let schedule = &node.schedule;
                    taken += CANDIDATE
                        + child.as_ref().map_or(0, |c| waiting() + c.bytes(schedule) + c.shared);
                    if reached_earlier(&mut found.claims, fingerprint, order) {
                        continue;
                    }
                    let child = child.map(|c| (c.shared, c.into_node(schedule)));
                    let child = child.map(|(shared, node)| (Box::new(node), shared));
                    found.candidates.push(Candidate { order, fingerprint, child });
                }
            }
        }
        found.expanded.push(Expanded { number, depth, choices, finished });
        self.take(taken);
        Some(node)
    }

    /// Takes `bytes` of the level's room, or marks the level full.
    fn take(&self, bytes: usize) -> bool {
        let fits = self.taken.fetch_add(bytes, Relaxed) + bytes <= self.room;
        if !fits {
            self.full.store(true, Relaxed);
        }
        fits
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Keeps the candidates whose step was the first of any thread's to reach their state, in
/// breadth-first order, and drops the others. Returns them with what dropping the others
/// released.
fn keep(candidates: Vec<Candidate>, claims: &[Claims]) -> (Vec<Candidate>, usize) {
    let mut released = 0;
    let kept: Vec<Candidate> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let first = claims.iter().filter_map(|c| c.get(&candidate.fingerprint)).min();
            if first == Some(&candidate.order) {
                return Some(candidate);
            }
            if let Some((node, shared)) = candidate.child {
                // Its own new workers and cells were never counted; those it shared with
                // its parent were, and it may be the last to hold some.
                let Node { state, checker, .. } = *node;
                released += state.drop_shared() + checker.drop_shared() - shared;
            }
            None
        })
        .collect();
    (kept, released)
}

/// Claims the state for the step at `order` unless a step the thread took earlier in
/// breadth-first order reached it.
fn reached_earlier(claims: &mut Claims, fingerprint: u64, order: u64) -> bool {
    match claims.entry(fingerprint) {
        Claim::Occupied(first) if *first.get() < order => true,
        Claim::Occupied(mut first) => {
            first.insert(order);
            false
        }
        Claim::Vacant(none) => {
            none.insert(order);
            false
        }
    }
}

/// Runs `work` as `tasks` tasks on the current thread pool, given the task's index and that of
/// the thread that runs it, which may run several; or as one task on the calling thread when
/// the level is small. Tasks rather than one call on each thread: a thread that the system is
/// not running then holds nobody up, as another takes its task.
fn each<R: Send>(tasks: usize, work: impl Fn(usize, usize) -> R + Sync) -> Vec<R> {
    let thread = rayon::current_thread_index().unwrap_or(0);
    if tasks <= 1 {
        return vec![work(0, thread)];
    }
    let results: Vec<Mutex<Option<R>>> = (0..tasks).map(|_| Mutex::new(None)).collect();
    rayon::scope(|scope| {
        for (task, result) in results.iter().enumerate() {
            let work = &work;
            scope.spawn(move |_| {
                let thread = rayon::current_thread_index().unwrap_or(0);
                let done = work(task, thread);
                *result.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(done);
            });
        }
    });
    let done = results.into_iter().map(|r| r.into_inner().unwrap_or_else(|p| p.into_inner()));
    done.map(|result| result.expect("every task ran")).collect()
}

/// The search between levels: the waiting states, each on the queue of the thread that built
/// it, and how many states have waited before them.
struct Between {
    queues: Vec<VecDeque<Waiting>>,
    numbered: u64,
}

impl Explorer {
    /// Runs to the end on `threads` threads (0: one per core), with the result of
    /// [`Explorer::run`] (the same counts, the same first violation with the same schedule, the
    /// same bound), except for the memory the search holds, which is more.
    ///
    /// The threads expand the waiting states of one breadth-first level at a time, and each new
    /// state is kept from the step that comes first in breadth-first order, so which thread got
    /// where first changes nothing, and every run gives the same result. A level's new states are
    /// all held until it ends, counted in the memory bound as if every one were kept (so the
    /// estimate does not depend on the race either), beside everything the search held before
    /// it; a level that would not fit ends the search before it, cut by [`Bound::Memory`]. The
    /// peak memory is the most it held at a level's end or counted during one.
    ///
    /// A separate entry point rather than a setting in [`ExploreConfig`]: the number of threads
    /// changes how fast a search runs, not what it finds, and a browser has no threads; it runs
    /// the search in slices with [`Explorer::run_for`]. One thread runs [`Explorer::run`].
    pub fn run_parallel(mut self, threads: usize) -> ExploreResult {
        if threads == 1 {
            return self.run();
        }
        if let Some(result) = self.result.take() {
            return result;
        }
        // The waiting states, in order, make the first level.
        let ring = buffer::<Node>(self.frontier.capacity());
        let first: VecDeque<Waiting> = (self.frontier.drain(..).zip(1..))
            .map(|(node, number)| Waiting { number, node: Box::new(node) })
            .collect();
        self.memory = self.memory - ring + first.len() * waiting();
        let mut between = Between { queues: vec![first], numbered: 1 };
        // Small levels run here; the first large one starts the threads, which run the rest of
        // the search, this part too, so that no level waits for this thread to wake.
        loop {
            if between.queues.iter().map(VecDeque::len).sum::<usize>() >= PARALLEL_FROM {
                let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(threads).build() else {
                    return self.levels(between, 1);
                };
                // Each thread has a state in the making; the fixed part has room for one.
                let (root, checker) = &self._root;
                let own =
                    root.heap_bytes_beyond(Some(root)) + checker.heap_bytes_beyond(Some(checker));
                self.memory += pool.current_num_threads().saturating_sub(1) * own;
                return pool.install(|| self.levels(between, pool.current_num_threads()));
            }
            match self.level(1, between) {
                ControlFlow::Continue(next) => between = next,
                ControlFlow::Break(result) => return result,
            }
        }
    }

    /// Runs the search to its end, a level at a time, sharing out large levels among
    /// `threads` threads.
    fn levels(&mut self, mut between: Between, threads: usize) -> ExploreResult {
        loop {
            between.queues.resize_with(threads.max(between.queues.len()), VecDeque::new);
            let size: usize = between.queues.iter().map(VecDeque::len).sum();
            let tasks = if size >= PARALLEL_FROM { threads } else { 1 };
            match self.level(tasks, between) {
                ControlFlow::Continue(next) => between = next,
                ControlFlow::Break(result) => return result,
            }
        }
    }

    /// Expands one level of waiting states as `tasks` tasks and returns the next level, or the
    /// result.
    fn level(
        &mut self,
        tasks: usize,
        Between { queues, numbered }: Between,
    ) -> ControlFlow<ExploreResult, Between> {
        let size: usize = queues.iter().map(VecDeque::len).sum();
        self.stats.frontier = size;
        if size == 0 {
            return ControlFlow::Break(ExploreResult::NoViolation { stats: self.stats });
        }
        let threads = queues.len();
        let room = self.config.max_memory.saturating_sub(self.memory);
        let level = Level {
            successors: self.successors(),
            queues: queues.into_iter().map(Mutex::new).collect(),
            room,
            taken: AtomicUsize::new(0),
            full: AtomicBool::new(false),
            strays: (0..threads).map(|_| Mutex::new(Vec::new())).collect(),
        };
        let mut found = each(tasks, |_, thread| level.expand(thread));
        // States handed back after the thread that built them had finished, or that it never
        // came to.
        for strays in &level.strays {
            for node in std::mem::take(&mut *lock(strays)) {
                found[0].release(node);
            }
        }
        if level.full.load(Relaxed) {
            drop(level);
            self.stats.peak_memory = self.stats.peak_memory.max(self.memory + room);
            return ControlFlow::Break(self.memory_cut());
        }
        let taken = level.taken.load(Relaxed);
        drop(level);
        let slots: Vec<Mutex<Vec<Candidate>>> =
            found.iter_mut().map(|f| Mutex::new(std::mem::take(&mut f.candidates))).collect();
        let claims: Vec<Claims> = found.iter_mut().map(|f| std::mem::take(&mut f.claims)).collect();
        let keep = |task: usize, _| keep(std::mem::take(&mut *lock(&slots[task])), &claims);
        let kept: Vec<(Vec<Candidate>, usize)> = each(tasks, keep);
        drop(claims);
        self.stats.peak_memory = self.stats.peak_memory.max(self.memory + taken);
        let released: usize = found.iter().map(|f| f.released).sum::<usize>()
            + kept.iter().map(|(_, released)| released).sum::<usize>();
        let kept: Vec<Vec<Candidate>> = kept.into_iter().map(|(kept, _)| kept).collect();
        // The new states in breadth-first order: (order, thread, index in its list).
        let mut order: Vec<(u64, usize, usize)> = kept
            .iter()
            .enumerate()
            .flat_map(|(t, list)| list.iter().enumerate().map(move |(i, c)| (c.order, t, i)))
            .collect();
        order.sort_unstable();
        if let Some(result) = self.first_stop(&mut found, &kept, &order, numbered, size) {
            return ControlFlow::Break(result);
        }
        let added: usize = kept.iter().flatten().map(Candidate::cost).sum();
        // A full table grows to about twice its size, and both exist while it does.
        let table = hash_table::<u64>(self.seen.capacity());
        let needed = self.seen.len() + order.len();
        let grown = if needed > self.seen.capacity() {
            hash_table::<u64>(needed.max(self.seen.capacity() * 2 + 1))
        } else {
            0
        };
        let memory = self.memory + added - released;
        if memory + grown > self.config.max_memory {
            return ControlFlow::Break(self.memory_cut());
        }
        self.seen.extend(kept.iter().flatten().map(|candidate| candidate.fingerprint));
        self.memory = memory + hash_table::<u64>(self.seen.capacity()) - table;
        self.stats.peak_memory = self.stats.peak_memory.max(memory + grown).max(self.memory);
        let stats = &mut self.stats;
        for expanded in found.iter().flat_map(|f| &f.expanded) {
            stats.transitions += expanded.choices;
            stats.finished_runs += expanded.finished.len();
            stats.max_depth = stats.max_depth.max(expanded.depth + 1);
        }
        stats.unique_states += order.len();
        if kept.iter().flatten().any(|candidate| candidate.child.is_none()) {
            stats.bound_hit = true;
            stats.cut_by.get_or_insert(Bound::Depth);
        }
        let homes: Vec<usize> = found.iter().map(|f| f.thread).collect();
        ControlFlow::Continue(next_level(kept, &homes, threads, &order, numbered + size as u64))
    }

    /// The result at the first step, in breadth-first order, that ends the search in this
    /// level, if one does: a violation, an error, or the state that reaches the state bound.
    /// The counts are those the sequential search has there.
    fn first_stop(
        &mut self,
        found: &mut [Found],
        kept: &[Vec<Candidate>],
        order: &[(u64, usize, usize)],
        numbered: u64,
        size: usize,
    ) -> Option<ExploreResult> {
        let stop = found.iter_mut().filter_map(|f| f.stop.take()).min_by_key(|(at, _)| *at);
        // The sequential search stops at the new state that makes the count reach the bound.
        let last = self.config.max_states.saturating_sub(self.stats.unique_states).max(1);
        let bound = order.get(last - 1).map(|&(at, _, _)| at);
        let at = match (&stop, bound) {
            (None, None) => return None,
            (Some((at, _)), Some(bound)) => (*at).min(bound),
            (Some((at, _)), None) => *at,
            (None, Some(bound)) => bound,
        };
        let rank = ((at >> 32) - numbered) as usize;
        let choice = (at & u64::from(u32::MAX)) as usize;
        let mut by_rank: Vec<Option<&Expanded>> = vec![None; size];
        for expanded in found.iter().flat_map(|f| &f.expanded) {
            by_rank[(expanded.number - numbered) as usize] = Some(expanded);
        }
        let node = by_rank[rank].expect("the state of a stop was expanded");
        let before =
            || by_rank[..rank].iter().map(|e| e.expect("every earlier state was expanded"));
        let is_waiting = |&(_, t, i): &(u64, usize, usize)| kept[t][i].child.is_some();
        let new_before = |until: u64| order.iter().take_while(move |&&(o, _, _)| o < until);
        let stats = &mut self.stats;
        stats.transitions += before().map(|e| e.choices).sum::<usize>() + choice;
        stats.finished_runs += before().map(|e| e.finished.len()).sum::<usize>()
            + node.finished.iter().filter(|&&c| (c as usize) < choice).count();
        stats.unique_states += new_before(at).count();
        stats.max_depth = stats.max_depth.max(before().map(|e| e.depth + 1).max().unwrap_or(0));
        if new_before(at).any(|entry| !is_waiting(entry)) {
            stats.bound_hit = true;
            stats.cut_by.get_or_insert(Bound::Depth);
        }
        let later = size - rank - 1;
        Some(match stop {
            Some((stop_at, Stop::Refused(error))) if stop_at == at => {
                if choice > 0 {
                    stats.max_depth = stats.max_depth.max(node.depth + 1);
                }
                // The sequential search last counted its frontier before taking this state.
                let first_step = self::order(node.number, 0);
                stats.frontier =
                    later + 1 + new_before(first_step).filter(|e| is_waiting(e)).count();
                ExploreResult::Error { stats: *stats, error }
            }
            Some((stop_at, Stop::Broken { violation, schedule, depth })) if stop_at == at => {
                stats.transitions += 1;
                stats.max_depth = stats.max_depth.max(depth + 1);
                stats.frontier = later + new_before(at).filter(|e| is_waiting(e)).count();
                ExploreResult::Violation { stats: *stats, violation, schedule, steps: depth + 1 }
            }
            _ => {
                stats.transitions += 1;
                stats.max_depth = stats.max_depth.max(node.depth + 1);
                stats.unique_states += 1;
                stats.bound_hit = true;
                stats.cut_by = Some(Bound::States);
                stats.frontier = 0;
                ExploreResult::NoViolation { stats: *stats }
            }
        })
    }

    /// The result when a level does not fit in the memory bound: the search stops before it.
    fn memory_cut(&mut self) -> ExploreResult {
        self.stats.bound_hit = true;
        self.stats.cut_by = Some(Bound::Memory);
        self.stats.frontier = 0;
        ExploreResult::NoViolation { stats: self.stats }
    }
}

/// The next level: the kept states that wait to be expanded, numbered in breadth-first order
/// from `numbered`, so that its steps are ordered as the sequential search takes them, each on
/// the queue of the thread that built it (`homes`, by task; there are `threads` queues).
fn next_level(
    kept: Vec<Vec<Candidate>>,
    homes: &[usize],
    threads: usize,
    order: &[(u64, usize, usize)],
    numbered: u64,
) -> Between {
    let mut numbers: Vec<Vec<u64>> = kept.iter().map(|list| vec![0; list.len()]).collect();
    let waiting = order.iter().filter(|&&(_, t, i)| kept[t][i].child.is_some());
    for (&(_, t, i), number) in waiting.zip(numbered..) {
        numbers[t][i] = number;
    }
    let mut queues: Vec<VecDeque<Waiting>> = (0..threads).map(|_| VecDeque::new()).collect();
    for ((list, numbers), &home) in kept.into_iter().zip(numbers).zip(homes) {
        let waiting = (list.into_iter().zip(numbers))
            .filter_map(|(c, number)| c.child.map(|(node, _)| Waiting { number, node }));
        queues[home].extend(waiting);
    }
    Between { queues, numbered }
}
