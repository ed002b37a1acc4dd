//! The lease authority: who may act on a resource, until when, and under which generation.

use crate::clock::Tick;
use crate::fence::generation::{Generation, TokenError};
use crate::ids::{ResourceId, WorkerId};
use crate::memory::{buffer, HeapSize};
use litemap::LiteMap;
use serde::{Deserialize, Serialize};
use std::num::NonZeroU64;

/// One grant of authority over a resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct Lease {
    /// The resource the lease covers.
    pub resource: ResourceId,
    /// The worker the lease was granted to.
    pub holder: WorkerId,
    /// The fencing token of this grant; every write under the lease carries it.
    pub generation: Generation,
    /// When the lease was granted or last renewed.
    pub granted_at: Tick,
    /// The first tick at which the lease is no longer valid.
    pub valid_until: Tick,
}

impl Lease {
    /// Whether the authority still honours this lease at `now`.
    pub fn is_valid_at(&self, now: Tick) -> bool {
        now < self.valid_until
    }
}

/// Why the authority refused a lease operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LeaseError {
    /// Someone holds a valid lease; a second grant now would give two owners.
    #[error(
        "lease on {resource} is held by {holder} (generation {generation}) until {valid_until}"
    )]
    Held {
        /// The contested resource.
        resource: ResourceId,
        /// The current holder.
        holder: WorkerId,
        /// The current holder's generation.
        generation: Generation,
        /// When the current lease ends unless renewed.
        valid_until: Tick,
    },
    /// Renew or release by a worker that does not hold the current lease.
    #[error("{worker} does not hold the lease on {resource} with generation {generation}")]
    NotHolder {
        /// The resource.
        resource: ResourceId,
        /// The worker that asked.
        worker: WorkerId,
        /// The generation it presented.
        generation: Generation,
    },
    /// Renewal arrived after expiry: the worker must acquire again and gets a new generation.
    #[error("lease on {resource} with generation {generation} expired at {expired_at}")]
    Expired {
        /// The resource.
        resource: ResourceId,
        /// The generation that expired.
        generation: Generation,
        /// When it expired.
        expired_at: Tick,
    },
    /// The counter cannot go higher; see [`TokenError::Exhausted`].
    #[error(transparent)]
    Token(#[from] TokenError),
}

/// What the authority remembers about one resource.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct ResourceRecord {
    /// The highest generation ever issued for the resource. It survives release and expiry; it is
    /// what keeps generations strictly increasing.
    pub last_issued: Option<Generation>,
    /// The latest grant, which may have expired; expiry is judged against the caller's `now`.
    pub lease: Option<Lease>,
}

/// Grants leases with strictly increasing generations, one counter per resource.
///
/// The whole authority is a plain serializable value: serializing it is taking the durable record,
/// deserializing it is restoring one. Forgetting the counter is possible only through
/// [`LeaseAuthority::restart_losing_counter`], which exists to demonstrate that failure.
///
/// ```
/// use fencelab_core::prelude::*;
/// use std::num::NonZeroU64;
///
/// let mut authority = LeaseAuthority::new(NonZeroU64::new(10).unwrap());
/// let (ledger, a, b) = ("ledger".parse()?, "A".parse()?, "B".parse()?);
/// let first = authority.acquire(&ledger, &a, Tick(0))?;
/// // While A's lease is valid nobody else gets one; once it has lapsed, B's has a newer token.
/// assert!(authority.acquire(&ledger, &b, Tick(5)).is_err());
/// let second = authority.acquire(&ledger, &b, Tick(10))?;
/// assert!(second.generation > first.generation);
/// // A's renewal comes too late: its generation is no longer the current one.
/// assert!(authority.renew(&ledger, &a, first.generation, Tick(11)).is_err());
/// # Ok::<(), fencelab_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct LeaseAuthority {
    ttl: NonZeroU64,
    #[serde(serialize_with = "crate::maps::as_object")]
    resources: LiteMap<ResourceId, ResourceRecord>,
}

impl LeaseAuthority {
    /// An authority whose leases last `ttl` ticks from grant or renewal.
    pub fn new(ttl: NonZeroU64) -> Self {
        LeaseAuthority { ttl, resources: LiteMap::new() }
    }

    /// How long a grant or renewal lasts, in ticks.
    pub fn ttl(&self) -> NonZeroU64 {
        self.ttl
    }

    /// Grants `worker` a lease on `resource` with a generation above every one issued before.
    ///
    /// Fails while any valid lease exists, the caller's own included: holders renew instead, so
    /// that one owner never holds two generations at once.
    pub fn acquire(
        &mut self,
        resource: &ResourceId,
        worker: &WorkerId,
        now: Tick,
    ) -> Result<Lease, LeaseError> {
        let record = self.resources.entry(resource.clone()).or_default();
        if let Some(lease) = record.lease.as_ref().filter(|l| l.is_valid_at(now)) {
            return Err(LeaseError::Held {
                resource: resource.clone(),
                holder: lease.holder.clone(),
                generation: lease.generation,
                valid_until: lease.valid_until,
            });
        }
        let generation = match record.last_issued {
            None => Generation::FIRST,
            Some(last) => last.next()?,
        };
        let lease = Lease {
            resource: resource.clone(),
            holder: worker.clone(),
            generation,
            granted_at: now,
            valid_until: now.after(self.ttl.get()),
        };
        record.last_issued = Some(generation);
        record.lease = Some(lease.clone());
        Ok(lease)
    }

    /// Extends the holder's valid lease by one TTL from `now`; the generation stays the same.
    pub fn renew(
        &mut self,
        resource: &ResourceId,
        worker: &WorkerId,
        generation: Generation,
        now: Tick,
    ) -> Result<Lease, LeaseError> {
        let ttl = self.ttl.get();
        let lease = self.current_mut(resource, worker, generation)?;
        if !lease.is_valid_at(now) {
            return Err(LeaseError::Expired {
                resource: resource.clone(),
                generation,
                expired_at: lease.valid_until,
            });
        }
        lease.granted_at = now;
        lease.valid_until = now.after(ttl);
        Ok(lease.clone())
    }

    /// Gives the lease up early so another worker can acquire without waiting for expiry.
    /// The generation counter is kept.
    pub fn release(
        &mut self,
        resource: &ResourceId,
        worker: &WorkerId,
        generation: Generation,
    ) -> Result<Lease, LeaseError> {
        let record = self.resources.get_mut(resource);
        let held = |l: &Lease| l.holder == *worker && l.generation == generation;
        match record.and_then(|r| r.lease.take_if(|l| held(l))) {
            Some(lease) => Ok(lease),
            None => Err(LeaseError::NotHolder {
                resource: resource.clone(),
                worker: worker.clone(),
                generation,
            }),
        }
    }

    /// Drops every lease that has expired by `now` and returns them, oldest resource first, so a
    /// driver can narrate each expiry. Counters are kept.
    pub fn expire(&mut self, now: Tick) -> Vec<Lease> {
        let mut expired = Vec::new();
        for (_, record) in self.resources.iter_mut() {
            if record.lease.as_ref().is_some_and(|l| !l.is_valid_at(now)) {
                expired.extend(record.lease.take());
            }
        }
        expired
    }

    /// Drops the lease on one resource if it has expired by `now`, and returns it.
    pub fn expire_resource(&mut self, resource: &ResourceId, now: Tick) -> Option<Lease> {
        let record = self.resources.get_mut(resource)?;
        record.lease.take_if(|l| !l.is_valid_at(now))
    }

    /// The valid lease on `resource` at `now`, if any.
    pub fn lease(&self, resource: &ResourceId, now: Tick) -> Option<&Lease> {
        self.resources.get(resource)?.lease.as_ref().filter(|l| l.is_valid_at(now))
    }

    /// Who holds a valid lease on `resource` at `now`.
    pub fn holder(&self, resource: &ResourceId, now: Tick) -> Option<&WorkerId> {
        self.lease(resource, now).map(|l| &l.holder)
    }

    /// The highest generation issued for `resource` so far.
    pub fn generation(&self, resource: &ResourceId) -> Option<Generation> {
        self.resources.get(resource)?.last_issued
    }

    /// When the valid lease on `resource` ends, if there is one at `now`.
    pub fn valid_until(&self, resource: &ResourceId, now: Tick) -> Option<Tick> {
        self.lease(resource, now).map(|l| l.valid_until)
    }

    /// Everything the authority remembers, per resource.
    pub fn records(&self) -> impl Iterator<Item = (&ResourceId, &ResourceRecord)> {
        self.resources.iter()
    }

    /// Simulates a restart of an authority that kept its counters only in memory: every counter
    /// and lease is gone, so the next grant is generation 1 again and stale owners holding higher
    /// tokens fence out the new one, or lower ones are re-issued. This is a failure to demonstrate,
    /// not a feature; a correct restart restores a serialized authority instead.
    pub fn restart_losing_counter(&mut self) {
        self.resources.clear();
    }

    fn current_mut(
        &mut self,
        resource: &ResourceId,
        worker: &WorkerId,
        generation: Generation,
    ) -> Result<&mut Lease, LeaseError> {
        let not_holder = || LeaseError::NotHolder {
            resource: resource.clone(),
            worker: worker.clone(),
            generation,
        };
        let lease = self
            .resources
            .get_mut(resource)
            .and_then(|r| r.lease.as_mut())
            .ok_or_else(not_holder)?;
        if lease.holder != *worker || lease.generation != generation {
            return Err(not_holder());
        }
        Ok(lease)
    }
}

impl HeapSize for LeaseAuthority {
    fn heap_bytes(&self) -> usize {
        let mut len = 0;
        let mut owned = 0;
        for (resource, record) in self.records() {
            len += 1;
            let lease = record.lease.as_ref();
            owned += resource.heap_bytes()
                + lease.map_or(0, |l| l.resource.heap_bytes() + l.holder.heap_bytes());
        }
        buffer::<(ResourceId, crate::fence::authority::ResourceRecord)>(len) + owned
    }
}
