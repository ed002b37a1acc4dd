//! Hooks for the explorer's browser benchmark (`browser-tests/bench-explore.mjs`), exported on
//! `window.wasmBindings`. Only builds with the `test-hooks` feature carry them; the shipped page
//! does not (`trunk build --release --features test-hooks` makes one that does).

use crate::viz::explore;

/// `explore_bench(workers)`: explores the
/// contention scenario with `workers` workers to the end in one go and returns JSON with the
/// counts and the wasm linear memory in bytes afterwards (it only grows, so it is the peak).
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn explore_bench(workers: usize) -> String {
    let (stats, safe) = explore::bench(workers);
    #[cfg(target_arch = "wasm32")]
    let memory = core::arch::wasm32::memory_size(0) * 65_536;
    #[cfg(not(target_arch = "wasm32"))]
    let memory = 0usize;
    format!(
        "{{\"unique_states\":{},\"transitions\":{},\"max_depth\":{},\"no_violation\":{safe},\"wasm_memory\":{memory}}}",
        stats.unique_states, stats.transitions, stats.max_depth
    )
}

/// `explore_pace(steps, ms)`: explorer steps per timer tick and milliseconds between ticks, to
/// watch a search's progress at a chosen pace; `explore_pace(0, 0)` restores the default.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn explore_pace(steps: usize, ms: u32) {
    explore::set_pace(steps, ms);
}

/// `wasm_memory()`: the wasm linear memory in bytes now (it only grows); the benchmark reads it
/// before a search.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn wasm_memory() -> usize {
    #[cfg(target_arch = "wasm32")]
    return core::arch::wasm32::memory_size(0) * 65_536;
    #[cfg(not(target_arch = "wasm32"))]
    0
}
