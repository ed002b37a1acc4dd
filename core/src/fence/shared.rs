//! A thread-safe wrapper for native use, so check and mutation stay one step across threads.

use crate::clock::Tick;
use crate::fence::boundary::FencedResource;
use crate::fence::gateway::{EffectRequest, GatewayOutcome, SideEffectGateway};
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::{Applied, FencedRegister, WriteRejection, WriteRequest};
use std::sync::{Arc, Mutex, MutexGuard};

/// Shares a fenced component between threads. Every operation takes the lock once, for the whole
/// check-and-apply, so no other thread's write can fall between a check and its effect.
///
/// Cloning shares the same component (like `Arc`).
#[derive(Debug, Default)]
pub struct Shared<T> {
    inner: Arc<Mutex<T>>,
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared { inner: Arc::clone(&self.inner) }
    }
}

impl<T> Shared<T> {
    /// Wraps a component for sharing.
    pub fn new(component: T) -> Self {
        Shared { inner: Arc::new(Mutex::new(component)) }
    }

    /// Runs `f` with exclusive access; everything `f` does is one atomic step for other threads.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.lock())
    }

    /// A copy of the component's current state.
    pub fn snapshot(&self) -> T
    where
        T: Clone,
    {
        self.lock().clone()
    }

    // A panic in another thread while holding the lock cannot leave a component half-written:
    // every mutation is applied only after all checks passed. So a poisoned lock is still usable.
    fn lock(&self) -> MutexGuard<'_, T> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Shared<FencedRegister> {
    /// [`FencedRegister::write`] under the lock.
    pub fn write(&self, request: &WriteRequest) -> Result<Applied, WriteRejection> {
        self.with(|register| register.write(request))
    }
}

impl Shared<FencedResource> {
    /// [`FencedResource::write`] under the lock.
    pub fn write(&self, request: &WriteRequest, now: Tick) -> WriteOutcome {
        self.with(|resource| resource.write(request, now))
    }
}

impl Shared<SideEffectGateway> {
    /// [`SideEffectGateway::submit`] under the lock.
    pub fn submit(&self, request: EffectRequest, now: Tick) -> GatewayOutcome {
        self.with(|gateway| gateway.submit(request, now))
    }
}
