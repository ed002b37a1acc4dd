//! etcd as the lab's lease authority: each worker asks etcd itself, through
//! [`fencelab_etcd::EtcdAuthority`], and reports etcd's decisions to the lab for the history.

use super::authority::{Acquired, Authority, Held};
use super::protocol;
use fencelab_core::{ResourceId, Tick, WorkerId};
use fencelab_etcd::{EtcdAuthority, EtcdError, Grant};
use std::time::Duration;

/// How often a worker asks again while someone else holds the lease: etcd does not say when
/// the holder's lease ends.
const POLL: Duration = Duration::from_millis(20);

/// One worker's client of etcd, with the grant it holds.
pub struct Etcd {
    client: EtcdAuthority,
    resource: ResourceId,
    worker: WorkerId,
    ttl: Duration,
    start_ns: u64,
    grant: Option<Grant>,
}

impl Etcd {
    /// A client of the etcd at `endpoint` for `worker`, asking for leases of `ttl`.
    pub fn connect(
        endpoint: &str,
        resource: ResourceId,
        worker: &str,
        ttl: Duration,
        start_ns: u64,
    ) -> Result<Etcd, String> {
        let client = EtcdAuthority::connect(endpoint).map_err(|e| e.to_string())?;
        let worker = WorkerId::new(worker).map_err(|e| e.to_string())?;
        Ok(Etcd { client, resource, worker, ttl, start_ns, grant: None })
    }

    /// When a lease of `ttl` ends, counted from `sent_ns`, when the request left: etcd counts
    /// from its arrival, so the lease ends no earlier than this, and the history never shows a
    /// newer grant before the older lease's end.
    fn until(&self, sent_ns: u64, ttl: Duration) -> Tick {
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        protocol::tick_at(self.start_ns, sent_ns).after(ms)
    }
}

impl Authority for Etcd {
    fn acquire(&mut self) -> Result<Acquired, String> {
        let sent = protocol::wall_ns();
        match self.client.acquire(&self.resource, &self.worker, self.ttl) {
            Ok(grant) => {
                let held =
                    Held { generation: grant.generation, valid_until: self.until(sent, grant.ttl) };
                self.grant = Some(grant);
                Ok(Acquired::Granted(held))
            }
            Err(EtcdError::Held { holder, .. }) => {
                Ok(Acquired::Busy { holder: holder.to_string(), valid_until: None, retry_in: POLL })
            }
            Err(error) => Err(format!("etcd: {error}")),
        }
    }

    fn renew(&mut self, held: &Held) -> Result<Result<Held, String>, String> {
        let Some(grant) = &self.grant else {
            return Ok(Err("no etcd lease is held".into()));
        };
        let sent = protocol::wall_ns();
        match self.client.renew(grant) {
            Ok(ttl) => {
                Ok(Ok(Held { generation: held.generation, valid_until: self.until(sent, ttl) }))
            }
            Err(error @ (EtcdError::Expired { .. } | EtcdError::Superseded { .. })) => {
                self.grant = None;
                Ok(Err(error.to_string()))
            }
            Err(error) => Err(format!("etcd: {error}")),
        }
    }

    fn release(&mut self, _held: &Held) -> Result<(), String> {
        match self.grant.take().map(|grant| self.client.release(&grant)) {
            None | Some(Ok(())) | Some(Err(EtcdError::Expired { .. })) => Ok(()),
            Some(Err(error)) => Err(format!("etcd: {error}")),
        }
    }

    fn lab_sees_decisions(&self) -> bool {
        false
    }
}
