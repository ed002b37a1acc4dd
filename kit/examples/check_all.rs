//! Every check of the kit on one store, with the report printed: replace `Handle` with a
//! handle to your own store (a connection to your database) and run
//! `cargo run -p fencelab-kit --example check_all`. Exits 1 when the store diverged.
//!
//! Set `FENCELAB_KIT_SEED` to the seed a failing report printed to play the same random
//! sequences and races again.

use fencelab_core::fence::store::MemoryStore;
use fencelab_kit::store::{FencedStore, OperationId, ResourceId, StoredResult, StoredValue};
use fencelab_kit::store::{Tick, WriteOutcome, WriteRequest};
use fencelab_kit::{check_all, KitOptions};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

/// One handle to a store: here the in-memory reference behind a lock, shared by every handle.
struct Handle(Arc<Mutex<MemoryStore>>);

impl FencedStore for Handle {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        self.0.lock().expect("not poisoned").write(request, now)
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Infallible> {
        self.0.lock().expect("not poisoned").read(resource)
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, Infallible> {
        self.0.lock().expect("not poisoned").lookup(resource, operation)
    }
}

fn main() -> std::process::ExitCode {
    // For each store spec: make a fresh store, and return how to open another handle to it.
    let report = check_all(
        |spec| {
            let store = Arc::new(Mutex::new(MemoryStore::new(spec.policy, spec.retention)));
            Ok(move || Ok(Handle(store.clone())))
        },
        &KitOptions::default(),
    );
    print!("{report}");
    if report.passed() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
