//! The memory budget holds: a run or a search that would need more stops with a clear result,
//! and the heap it really allocated stays within the budget. A counting allocator measures the
//! heap per thread, so tests running side by side do not disturb each other's figures.

// The test counts allocations with a global allocator, which is an unsafe trait.
#![allow(unsafe_code)]

use fencelab_core::stories::library;
use fencelab_core::{
    drive::explore::Bound, drive::explore::ExploreConfig, drive::explore::ExploreResult,
    drive::explore::Explorer, record::EngineError, Engine,
};
use fencelab_core::{memory::Bytes, memory::MIB};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Bytes this thread has allocated and not freed, and the most at any time.
    static HEAP: Cell<(isize, isize)> = const { Cell::new((0, 0)) };
}

fn note(delta: isize) {
    // `try_with` because the allocator also runs while a thread's locals are torn down.
    let _ = HEAP.try_with(|h| {
        let (now, peak) = h.get();
        let now = now + delta;
        h.set((now, peak.max(now)));
    });
}

// SAFETY: every call is passed straight to the system allocator; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the most heap it held above what was held before.
fn peak_heap<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let (before, _) = HEAP.with(Cell::get);
    HEAP.with(|h| h.set((before, before)));
    let result = f();
    let (_, peak) = HEAP.with(Cell::get);
    (result, (peak - before) as usize)
}

#[test]
fn a_run_of_10000_workers_on_a_one_tick_lease_stops_at_its_budget_without_allocating_past_it() {
    let budget = 64 * MIB;
    let ((error, estimate), peak) = peak_heap(|| {
        let mut engine = Engine::new(library::stampede(10_000)).unwrap().with_memory_budget(budget);
        let error = engine.run().unwrap_err();
        assert_eq!(engine.records().len(), engine.position(), "it stays at the last step that fit");
        (error, engine.memory_estimate())
    });
    let EngineError::MemoryBudget { budget: reported, estimate: wanted, step } = error else {
        panic!("{error}");
    };
    assert_eq!(reported, budget);
    assert!(wanted > budget && estimate <= budget, "{} then {}", Bytes(estimate), Bytes(wanted));
    assert!(step.index() > 10_000, "stopped at step {step}");
    assert!(
        // Steps are numbered from 1 for readers; `step` is the step that did not run.
        error.to_string().starts_with(&format!("stopped before step {}: the run's records, operation log and snapshots would take about", step.number())),
        "{error}"
    );
    assert!(error.to_string().ends_with("more than its memory budget of 64 MiB"), "{error}");
    // The estimate errs on the generous side, so the heap really used stays below the budget,
    // yet not so generous that the run stops with most of its budget unused.
    assert!(peak <= budget, "peak heap {} over the budget of {}", Bytes(peak), Bytes(budget));
    assert!(peak >= budget / 2, "peak heap {} of a budget of {}", Bytes(peak), Bytes(budget));
    eprintln!(
        "stopped before step {step}: estimate {}, peak heap {}",
        Bytes(estimate),
        Bytes(peak)
    );
}

#[test]
fn a_search_over_1000_contending_workers_ends_with_the_memory_bound() {
    let budget = 64 * MIB;
    let config = ExploreConfig { max_memory: budget, ..ExploreConfig::default() };
    let (result, peak) =
        peak_heap(|| Explorer::new(library::stampede(1_000), config).unwrap().run());
    let ExploreResult::NoViolation { stats } = &result else { panic!("{result:?}") };
    assert_eq!(stats.cut_by, Some(Bound::Memory));
    assert!(stats.bound_hit && result.is_inconclusive());
    assert!(stats.unique_states > 100, "{stats:?}");
    assert!(stats.peak_memory <= budget, "{stats:?}");
    assert!(peak <= budget, "peak heap {} over the budget of {}", Bytes(peak), Bytes(budget));
    assert!(peak >= budget / 2, "peak heap {} of a budget of {}", Bytes(peak), Bytes(budget));
    eprintln!(
        "{} states; estimate {}, peak heap {}",
        stats.unique_states,
        Bytes(stats.peak_memory),
        Bytes(peak)
    );
}

#[test]
fn a_new_branch_gives_back_what_the_forgotten_steps_counted() {
    use fencelab_core::format::model::Enforcement;
    let scenario = library::contention(2, Enforcement::Fenced);
    let mut engine = Engine::new(scenario.clone()).unwrap();
    let start = engine.memory_estimate();
    engine.run().unwrap();
    let first = engine.records().to_vec();
    // Go back to the last point with a choice and take another way from there.
    let at = engine.records().iter().rposition(|r| r.enabled > 1).expect("a choice point");
    let other = (engine.records()[at].chosen + 1) % engine.records()[at].enabled;
    engine.seek(at).unwrap();
    engine.step_choice(other).unwrap();
    engine.run().unwrap();
    // A fresh engine told the same choices counts as much for its run, so nothing forgotten
    // lingers. (Its scenario carries the schedule, so it starts a little larger.)
    let mut replay = scenario;
    replay.schedule = engine.schedule_so_far();
    let mut fresh = Engine::new(replay).unwrap();
    let fresh_start = fresh.memory_estimate();
    fresh.run().unwrap();
    assert_eq!(fresh.records(), engine.records());
    assert_eq!(engine.memory_estimate() - start, fresh.memory_estimate() - fresh_start);
    assert_ne!(engine.records(), first, "the second branch differs from the first");
}
