//! The optional hook a store calls between its check and its write, so the kit can hold one
//! writer there while the others write: the interleaving that breaks a check-then-write store,
//! made every time instead of by luck.
//!
//! The hook is per thread: [`gap`] does nothing unless the calling thread is a writer the kit is
//! holding, so a store may call it unconditionally, and tests running in parallel do not see
//! each other's gates. (The `fail` crate's failpoints are process-wide, configured by name and
//! compiled in by a feature of the store's own crate, which suits neither parallel tests nor a
//! hook that must be a no-op everywhere else.)

use std::cell::RefCell;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Marks the gap between a store's check and its write. A store whose write is one atomic step
/// has no gap and never calls this; one that checks, lets go of its lock and then writes may
/// call it right after letting go, so the concurrency check can show what a writer does in the
/// gap. Never call it while holding a lock another writer needs: the held writer would wait
/// for the others in vain until its gate gives up ([`crate::ConcurrentOptions::gap_wait`]).
///
/// ```
/// // Outside a concurrency check it returns at once.
/// fencelab_kit::gap();
/// ```
pub fn gap() {
    let gate = GATE.with(|gate| gate.borrow().clone());
    if let Some(gate) = gate {
        gate.hold();
    }
}

thread_local! {
    static GATE: RefCell<Option<Arc<Gate>>> = const { RefCell::new(None) };
}

/// One held writer and the others of a round.
pub(crate) struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
    others: usize,
    wait: Duration,
}

#[derive(Default)]
struct GateState {
    /// The held writer has reached its gap (or finished without one).
    reached: bool,
    /// It reached the gap itself, by calling [`gap`].
    called: bool,
    /// How many of the others have finished their write.
    done: usize,
}

impl Gate {
    pub(crate) fn new(others: usize, wait: Duration) -> Arc<Gate> {
        Arc::new(Gate { state: Mutex::default(), changed: Condvar::new(), others, wait })
    }

    /// Runs `write` as the held writer: a call to [`gap`] inside it waits until the others
    /// have written.
    pub(crate) fn run_held<T>(self: &Arc<Gate>, write: impl FnOnce() -> T) -> T {
        /// Lets the others go when the held write ends, even by a panic, so they never wait
        /// for a writer that is gone.
        struct Done<'a>(&'a Gate);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                GATE.with(|gate| *gate.borrow_mut() = None);
                self.0.update(|s| s.reached = true);
            }
        }
        GATE.with(|gate| *gate.borrow_mut() = Some(self.clone()));
        let _done = Done(self);
        write()
    }

    /// Runs `write` as one of the others: once the held writer is in its gap or done.
    pub(crate) fn run_other<T>(&self, write: impl FnOnce() -> T) -> T {
        /// Counts the write as done when it ends, even by a panic.
        struct Done<'a>(&'a Gate);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.update(|s| s.done += 1);
            }
        }
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        drop(self.changed.wait_while(state, |s| !s.reached).unwrap_or_else(|e| e.into_inner()));
        let _done = Done(self);
        write()
    }

    /// Whether the held writer called [`gap`].
    pub(crate) fn called(&self) -> bool {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).called
    }

    fn hold(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.reached {
            // Only the first gap of a write is held.
            return;
        }
        state.reached = true;
        state.called = true;
        self.changed.notify_all();
        let others = self.others;
        let (state, _) = self
            .changed
            .wait_timeout_while(state, self.wait, |s| s.done < others)
            .unwrap_or_else(|e| e.into_inner());
        drop(state);
    }

    fn update(&self, change: impl FnOnce(&mut GateState)) {
        change(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()));
        self.changed.notify_all();
    }
}
