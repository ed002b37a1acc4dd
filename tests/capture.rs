//! Saves the input a thread was working on when it panicked. The workspace's release profile
//! aborts on panic, so `catch_unwind` alone would lose the input: the panic hook runs before the
//! abort and writes it to a file, and where panics unwind the runners catch them as well.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

static PANICKED: AtomicBool = AtomicBool::new(false);

thread_local! {
    static CURRENT: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Notes `input` as what this thread works on now. It reuses one buffer per thread, so calling
/// it for every input costs a copy and no allocation.
pub fn set_current(input: &str) {
    CURRENT.with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            c.clear();
            c.push_str(input);
        }
    });
}

/// What this thread noted last with [`set_current`].
pub fn current() -> Option<String> {
    CURRENT.with(|c| c.try_borrow().ok().map(|c| c.clone()))
}

/// Whether any thread has panicked since [`install`].
pub fn panicked() -> bool {
    PANICKED.load(Ordering::SeqCst)
}

/// Whether this build unwinds on panic (and so can go on reporting after one).
pub fn unwinds() -> bool {
    cfg!(panic = "unwind")
}

/// Installs a panic hook that prints the panic as usual, then writes what `describe` returns
/// for the panicking thread to `path` (the first panic only) and says so.
pub fn install(path: PathBuf, describe: fn() -> Option<String>) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        if PANICKED.swap(true, Ordering::SeqCst) {
            return;
        }
        match describe() {
            Some(text) => match std::fs::write(&path, text) {
                Ok(()) => eprintln!("the input that panicked is in {}", path.display()),
                Err(e) => {
                    eprintln!("could not write the panicking input to {}: {e}", path.display())
                }
            },
            None => eprintln!("the panic happened outside any input"),
        }
    }));
}
