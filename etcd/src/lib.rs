//! A lease authority on etcd 3.4: leases with a TTL, renewed by keep-alive, and fencing tokens
//! taken from etcd's own revisions.
//!
//! A grant is one etcd lease and one key, `{prefix}{resource}`, created in a transaction only if
//! it is absent and attached to the lease. The fencing token is the key's create revision, as
//! etcd's own lock API uses it: etcd's revision counter only ever grows, so every later grant of
//! the same resource gets a strictly higher [`Generation`]. When the holder stops renewing, etcd
//! expires the lease and deletes the key; the next acquire creates it again at a newer revision.
//!
//! The client speaks to etcd's JSON gateway (`/v3/...` over plain HTTP) with the synchronous
//! [`ureq`] client, not the `etcd-client` crate: the rest of Fencelab is synchronous, and
//! `etcd-client` needs an async runtime (tokio) and `protoc` at build time.
//!
//! ```
//! use fencelab_core::{ResourceId, WorkerId};
//! use fencelab_etcd::{EtcdAuthority, EtcdError};
//! use std::time::Duration;
//!
//! // Your etcd's client URL, for example "http://127.0.0.1:2379"; here a throwaway server from
//! // the `testing` feature.
//! let server = fencelab_etcd::testing::EtcdServer::start().unwrap();
//! let etcd = EtcdAuthority::connect(&server.endpoint())?;
//! let ledger = ResourceId::new("ledger").unwrap();
//! let (a, b) = (WorkerId::new("A").unwrap(), WorkerId::new("B").unwrap());
//!
//! let grant = etcd.acquire(&ledger, &a, Duration::from_secs(5))?;
//! // Every write A makes carries `grant.generation`, the key's create revision.
//! match etcd.acquire(&ledger, &b, Duration::from_secs(5)) {
//!     Err(EtcdError::Held { holder, generation, .. }) => {
//!         assert_eq!((holder, generation), (a, grant.generation));
//!     }
//!     other => panic!("{other:?}"),
//! }
//! etcd.renew(&grant)?; // A keep-alive; `EtcdError::Expired` once etcd has let the lease go.
//! etcd.release(&grant)?;
//! let next = etcd.acquire(&ledger, &b, Duration::from_secs(5))?;
//! assert!(next.generation > grant.generation);
//! # Ok::<(), EtcdError>(())
//! ```
//!
//! The crate's tests run this and more against throwaway servers: the `testing` feature's
//! `testing::EtcdServer` starts one from etcd's own binary.

#[cfg(feature = "testing")]
pub mod testing;

/// The crate README's example, compiled as a doctest so that it stays true (it needs a server,
/// so it is not run).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use fencelab_core::{fence::generation::TokenError, Generation, ResourceId, WorkerId};
use serde_json::{json, Value};
use std::fmt;
use std::time::Duration;

/// The key prefix used unless [`EtcdAuthority::with_prefix`] sets another.
pub const DEFAULT_PREFIX: &str = "fencelab/lease/";

/// How long each phase of a request (connecting, sending, waiting for the answer, reading it)
/// may take before it counts as [`EtcdError::Unreachable`], unless
/// [`EtcdAuthority::with_timeout`] sets another.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// etcd's message for a lease it does not know (gRPC's NotFound, HTTP 404 on the gateway).
const LEASE_NOT_FOUND: &str = "requested lease not found";

/// The longest response body kept in [`EtcdError::Http`], in characters.
const BODY_SHOWN: usize = 500;

/// One grant of a lease by etcd.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Grant {
    /// The resource the lease covers.
    pub resource: ResourceId,
    /// The worker the lease was granted to.
    pub holder: WorkerId,
    /// The fencing token: the create revision of the resource's key.
    pub generation: Generation,
    /// The etcd lease the key is attached to.
    pub lease_id: i64,
    /// The TTL etcd granted, which can be longer than the one asked for (etcd raises a TTL below
    /// its minimum, which depends on its election timeout).
    pub ttl: Duration,
}

/// Why an operation on etcd failed. Messages name the endpoint, and the field for a response
/// that is not what etcd 3.4 sends.
#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    /// The endpoint is not an `http://` URL.
    #[error("{endpoint:?} is not an etcd client URL: {problem}")]
    BadEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        problem: String,
    },
    /// No answer: nothing listens there, the connection broke, or etcd did not answer in time.
    #[error("cannot reach etcd at {endpoint} ({path}): {source}")]
    Unreachable {
        /// The endpoint.
        endpoint: String,
        /// The gateway path asked.
        path: String,
        /// The HTTP client's error.
        #[source]
        source: ureq::Error,
    },
    /// Something answered, but not in HTTP: the port belongs to another program.
    #[error("{endpoint} did not answer {path} in HTTP; is it etcd's client URL? {source}")]
    NotHttp {
        /// The endpoint.
        endpoint: String,
        /// The gateway path asked.
        path: String,
        /// The HTTP client's error.
        #[source]
        source: ureq::Error,
    },
    /// An HTTP status other than success, or an error in place of a streamed result.
    #[error("etcd at {endpoint} answered {path} with HTTP {status}: {body}")]
    Http {
        /// The endpoint.
        endpoint: String,
        /// The gateway path asked.
        path: String,
        /// The HTTP status.
        status: u16,
        /// The response body (etcd's error message), shortened to 500 characters.
        body: String,
    },
    /// A response without a field etcd 3.4 always sends, or with a field of the wrong kind.
    #[error("etcd at {endpoint} answered {path} without a valid {field}: {problem}")]
    BadResponse {
        /// The endpoint.
        endpoint: String,
        /// The gateway path asked.
        path: String,
        /// The field, as a path into the JSON (`header.revision`).
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A revision that is not a fencing token: zero or negative (or, in principle, too large).
    #[error(
        "etcd at {endpoint} answered {path} with a {field} that is not a fencing token: {source}"
    )]
    Revision {
        /// The endpoint.
        endpoint: String,
        /// The gateway path asked.
        path: String,
        /// The field, as a path into the JSON.
        field: String,
        /// Why the core refuses it as a [`Generation`].
        #[source]
        source: TokenError,
    },
    /// Another grant holds the resource; its key says who and under which generation.
    #[error("lease on {resource} is held by {holder} (generation {generation})")]
    Held {
        /// The contested resource.
        resource: ResourceId,
        /// The current holder, from the key's value.
        holder: WorkerId,
        /// The current holder's generation, the key's create revision.
        generation: Generation,
    },
    /// etcd no longer knows the lease: its TTL ran out (or it was revoked), and its key is gone.
    /// The worker must acquire again and gets a new generation.
    #[error("the etcd lease {lease_id} on {resource} (generation {generation}) has expired")]
    Expired {
        /// The resource.
        resource: ResourceId,
        /// The generation of the expired grant.
        generation: Generation,
        /// The etcd lease.
        lease_id: i64,
    },
    /// The lease is alive but the resource's key no longer carries this grant's create revision
    /// (it was deleted, or deleted and created again by another grant).
    #[error(
        "the key of {resource} no longer carries generation {generation}: {}",
        Current(current)
    )]
    Superseded {
        /// The resource.
        resource: ResourceId,
        /// The generation of the superseded grant.
        generation: Generation,
        /// Who holds the resource now, and under which generation, if anyone.
        current: Option<(WorkerId, Generation)>,
    },
}

/// Shows the holder in [`EtcdError::Superseded`]'s message.
struct Current<'a>(&'a Option<(WorkerId, Generation)>);

impl fmt::Display for Current<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((holder, generation)) => {
                write!(f, "it is held by {holder} (generation {generation})")
            }
            None => f.write_str("nobody holds it"),
        }
    }
}

/// A lease authority backed by one etcd endpoint. Cheap to clone; clones share their
/// connections, and it can be used from several threads at once.
///
/// ```
/// use fencelab_core::{ResourceId, WorkerId};
/// use fencelab_etcd::EtcdAuthority;
/// use std::time::Duration;
///
/// # let server = fencelab_etcd::testing::EtcdServer::start().unwrap();
/// # let endpoint = server.endpoint();
/// // `endpoint` is etcd's client URL, for example "http://127.0.0.1:2379".
/// let etcd = EtcdAuthority::connect(&endpoint)?.with_prefix("myapp/locks/");
/// let ledger = ResourceId::new("ledger").unwrap();
/// let grant = etcd.acquire(&ledger, &WorkerId::new("A").unwrap(), Duration::from_secs(10))?;
/// assert_eq!(etcd.current(&ledger)?, Some((grant.holder.clone(), grant.generation)));
/// etcd.release(&grant)?;
/// assert_eq!(etcd.current(&ledger)?, None);
/// # Ok::<(), fencelab_etcd::EtcdError>(())
/// ```
#[derive(Debug, Clone)]
pub struct EtcdAuthority {
    endpoint: String,
    prefix: String,
    agent: ureq::Agent,
}

// Workers on several threads share one authority; this fails to compile if that breaks.
const _: fn() = || {
    fn shareable<T: Send + Sync>() {}
    shareable::<EtcdAuthority>();
};

/// The HTTP client: every phase of a request (connecting, sending, waiting for the answer,
/// reading it) may take up to `timeout`. Not a global timeout: that also bounds name resolution,
/// which ureq then runs on a new thread per request, and on loopback that thread costs as much
/// as half the round trip itself (measured with the benchmark's baseline).
fn agent(timeout: Duration) -> ureq::Agent {
    let phase = Some(timeout);
    let config = ureq::Agent::config_builder()
        .timeout_connect(phase)
        .timeout_send_request(phase)
        .timeout_send_body(phase)
        .timeout_recv_response(phase)
        .timeout_recv_body(phase)
        // etcd's errors come as JSON bodies with a status; they are read, not raised.
        .http_status_as_error(false)
        .build();
    ureq::Agent::new_with_config(config)
}

/// The TTL etcd is asked for: whole seconds, rounded up (a lease longer than asked is safe, a
/// shorter one is not: the worker would believe it holds the lease after etcd has let it go),
/// and at least one second.
fn ttl_seconds(ttl: Duration) -> i64 {
    let whole = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    i64::try_from(whole.max(1)).unwrap_or(i64::MAX)
}

/// A JSON pointer written as the field's path, `/header/revision` as `header.revision`.
fn field_name(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

impl EtcdAuthority {
    /// Connects to etcd's client URL (`http://host:port`) and checks that it answers as etcd
    /// does (a range request with a revision in its header). Keys go under
    /// [`DEFAULT_PREFIX`]; each request may take [`DEFAULT_TIMEOUT`].
    pub fn connect(endpoint: &str) -> Result<EtcdAuthority, EtcdError> {
        let bad = |problem: &str| EtcdError::BadEndpoint {
            endpoint: endpoint.to_string(),
            problem: problem.to_string(),
        };
        let Some(rest) = endpoint.trim().strip_prefix("http://") else {
            return Err(bad("it must start with http:// (the client speaks plain HTTP only)"));
        };
        let host = rest.trim_end_matches('/');
        if host.is_empty() {
            return Err(bad("it names no host: it must be http://host:port"));
        }
        if host.contains('/') {
            return Err(bad("it must be http://host:port, without a path"));
        }
        let authority = EtcdAuthority {
            endpoint: format!("http://{host}"),
            prefix: DEFAULT_PREFIX.to_string(),
            agent: agent(DEFAULT_TIMEOUT),
        };
        let path = "/v3/kv/range";
        let answer = authority.post(path, &json!({ "key": BASE64.encode(&authority.prefix) }))?;
        authority.int(path, &answer, "/header/revision")?;
        Ok(authority)
    }

    /// Puts keys under `prefix` instead of [`DEFAULT_PREFIX`]; the key of a resource is the
    /// prefix followed by the resource id.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Lets each phase of a request (connecting, sending, waiting for the answer, reading it)
    /// take up to `timeout` before it fails as [`EtcdError::Unreachable`].
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.agent = agent(timeout);
        self
    }

    /// The endpoint, without a trailing slash.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The etcd key of `resource`.
    pub fn key(&self, resource: &ResourceId) -> String {
        format!("{}{}", self.prefix, resource.as_str())
    }

    /// Grants `worker` a lease on `resource` for `ttl`, if nobody holds it.
    ///
    /// etcd counts TTLs in whole seconds: `ttl` is rounded up to whole seconds, and is at least
    /// one second; etcd may raise it further to its minimum ([`Grant::ttl`] is what it granted).
    /// An etcd lease is granted, then one transaction creates the resource's key attached to it
    /// only if the key does not exist (its create revision is 0). The key's create revision is
    /// the grant's generation. If the key exists, the unused lease is revoked and the answer is
    /// [`EtcdError::Held`] with the holder and generation the key carries; a lease that could
    /// not be revoked has no key and expires on its own after its TTL.
    pub fn acquire(
        &self,
        resource: &ResourceId,
        worker: &WorkerId,
        ttl: Duration,
    ) -> Result<Grant, EtcdError> {
        let path = "/v3/lease/grant";
        let answer = self.post(path, &json!({ "TTL": ttl_seconds(ttl) }))?;
        let lease_id = self.int(path, &answer, "/ID")?;
        let granted = self.int(path, &answer, "/TTL")?;
        if lease_id == 0 || granted <= 0 {
            let field = if lease_id == 0 { "ID" } else { "TTL" };
            return Err(self.bad(path, field, "etcd granted no lease".into()));
        }
        let ttl = Duration::from_secs(granted.unsigned_abs());
        let key = BASE64.encode(self.key(resource));
        let txn = json!({
            "compare": [{ "key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0" }],
            "success": [{ "request_put": {
                "key": key,
                "value": BASE64.encode(worker.as_str()),
                "lease": lease_id.to_string(),
            } }],
            "failure": [{ "request_range": { "key": key } }],
        });
        let path = "/v3/kv/txn";
        let outcome = self.post(path, &txn).and_then(|answer| {
            if answer.get("succeeded").and_then(Value::as_bool) == Some(true) {
                // The put is the transaction's only write, so the revision it ends at is the
                // key's create revision.
                Ok(Ok(self.generation(path, &answer, "/header/revision")?))
            } else {
                let kv = "/responses/0/response_range/kvs/0";
                match self.holder(path, &answer, kv)? {
                    Some((holder, generation)) => Ok(Err((holder, generation))),
                    None => Err(self.bad(
                        path,
                        &field_name(kv),
                        "the transaction failed, yet the key is absent".into(),
                    )),
                }
            }
        });
        match outcome {
            Ok(Ok(generation)) => Ok(Grant {
                resource: resource.clone(),
                holder: worker.clone(),
                generation,
                lease_id,
                ttl,
            }),
            Ok(Err((holder, generation))) => {
                // The lease has no key; if this fails it expires on its own.
                let _ = self.revoke(lease_id);
                Err(EtcdError::Held { resource: resource.clone(), holder, generation })
            }
            Err(e) => {
                let _ = self.revoke(lease_id);
                Err(e)
            }
        }
    }

    /// Renews the grant's lease with one keep-alive and returns the TTL etcd counts from now.
    ///
    /// [`EtcdError::Expired`] if etcd no longer knows the lease (a keep-alive reports no TTL);
    /// [`EtcdError::Superseded`] if the lease lives but the resource's key no longer carries the
    /// grant's create revision.
    pub fn renew(&self, grant: &Grant) -> Result<Duration, EtcdError> {
        let path = "/v3/lease/keepalive";
        let answer = self.post(path, &json!({ "ID": grant.lease_id.to_string() }))?;
        if answer.get("result").is_none() {
            return Err(self.bad(path, "result", "missing".into()));
        }
        let ttl = self.opt_int(path, &answer, "/result/TTL")?.unwrap_or(0);
        if ttl <= 0 {
            return Err(EtcdError::Expired {
                resource: grant.resource.clone(),
                generation: grant.generation,
                lease_id: grant.lease_id,
            });
        }
        match self.current(&grant.resource)? {
            Some((_, generation)) if generation == grant.generation => {
                Ok(Duration::from_secs(ttl.unsigned_abs()))
            }
            current => Err(EtcdError::Superseded {
                resource: grant.resource.clone(),
                generation: grant.generation,
                current,
            }),
        }
    }

    /// Revokes the grant's lease, which deletes the resource's key. [`EtcdError::Expired`] if
    /// etcd no longer knows the lease (the key is gone either way).
    pub fn release(&self, grant: &Grant) -> Result<(), EtcdError> {
        match self.revoke(grant.lease_id) {
            Err(EtcdError::Http { status: 404, body, .. }) if body.contains(LEASE_NOT_FOUND) => {
                Err(EtcdError::Expired {
                    resource: grant.resource.clone(),
                    generation: grant.generation,
                    lease_id: grant.lease_id,
                })
            }
            other => other,
        }
    }

    /// Who holds `resource` now, and under which generation: the key's value and create
    /// revision, or `None` if the key does not exist.
    pub fn current(
        &self,
        resource: &ResourceId,
    ) -> Result<Option<(WorkerId, Generation)>, EtcdError> {
        let path = "/v3/kv/range";
        let answer = self.post(path, &json!({ "key": BASE64.encode(self.key(resource)) }))?;
        self.int(path, &answer, "/header/revision")?;
        self.holder(path, &answer, "/kvs/0")
    }

    fn revoke(&self, lease_id: i64) -> Result<(), EtcdError> {
        self.post("/v3/lease/revoke", &json!({ "ID": lease_id.to_string() })).map(drop)
    }

    /// Posts `body` to the gateway and returns its answer's first JSON value (keep-alive answers
    /// as a stream of them).
    fn post(&self, path: &str, body: &Value) -> Result<Value, EtcdError> {
        let url = format!("{}{path}", self.endpoint);
        let transport = |source: ureq::Error| {
            let (endpoint, path) = (self.endpoint.clone(), path.to_string());
            match source {
                ureq::Error::Protocol(_) | ureq::Error::LargeResponseHeader(..) => {
                    EtcdError::NotHttp { endpoint, path, source }
                }
                source => EtcdError::Unreachable { endpoint, path, source },
            }
        };
        let mut response = self
            .agent
            .post(&url)
            .header("content-type", "application/json")
            .send(body.to_string())
            .map_err(transport)?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().map_err(transport)?;
        if !(200..300).contains(&status) {
            return Err(self.http(path, status, &text));
        }
        let first = serde_json::Deserializer::from_str(&text).into_iter::<Value>().next();
        match first {
            Some(Ok(value)) if value.get("error").is_some() => Err(self.http(path, status, &text)),
            Some(Ok(value @ Value::Object(_))) => Ok(value),
            Some(Ok(other)) => Err(self.bad(path, "body", format!("not a JSON object: {other}"))),
            Some(Err(e)) => Err(self.bad(path, "body", format!("not JSON ({e}): {text:.80}"))),
            None => Err(self.bad(path, "body", "empty".into())),
        }
    }

    fn http(&self, path: &str, status: u16, body: &str) -> EtcdError {
        EtcdError::Http {
            endpoint: self.endpoint.clone(),
            path: path.to_string(),
            status,
            body: body.trim().chars().take(BODY_SHOWN).collect(),
        }
    }

    fn bad(&self, path: &str, field: &str, problem: String) -> EtcdError {
        EtcdError::BadResponse {
            endpoint: self.endpoint.clone(),
            path: path.to_string(),
            field: field.to_string(),
            problem,
        }
    }

    /// An int64 field, which the gateway writes as a JSON string; absent is `None` (protobuf's
    /// JSON leaves out zeros).
    fn opt_int(&self, path: &str, answer: &Value, pointer: &str) -> Result<Option<i64>, EtcdError> {
        let parsed = match answer.pointer(pointer) {
            None => return Ok(None),
            Some(Value::String(text)) => text.parse::<i64>().ok(),
            Some(Value::Number(number)) => number.as_i64(),
            Some(_) => None,
        };
        parsed.map(Some).ok_or_else(|| {
            let shown = answer.pointer(pointer).map(Value::to_string).unwrap_or_default();
            self.bad(path, &field_name(pointer), format!("{shown} is not a 64-bit integer"))
        })
    }

    /// An int64 field that etcd always sends.
    fn int(&self, path: &str, answer: &Value, pointer: &str) -> Result<i64, EtcdError> {
        self.opt_int(path, answer, pointer)?
            .ok_or_else(|| self.bad(path, &field_name(pointer), "missing".into()))
    }

    /// A revision as a fencing token; a missing revision is 0, which is not a token.
    fn generation(
        &self,
        path: &str,
        answer: &Value,
        pointer: &str,
    ) -> Result<Generation, EtcdError> {
        let revision = self.opt_int(path, answer, pointer)?.unwrap_or(0);
        Generation::from_i128(revision.into()).map_err(|source| EtcdError::Revision {
            endpoint: self.endpoint.clone(),
            path: path.to_string(),
            field: field_name(pointer),
            source,
        })
    }

    /// The holder and generation in the key-value at `pointer`, or `None` if there is none.
    fn holder(
        &self,
        path: &str,
        answer: &Value,
        pointer: &str,
    ) -> Result<Option<(WorkerId, Generation)>, EtcdError> {
        if answer.pointer(pointer).is_none() {
            return Ok(None);
        }
        let value_at = format!("{pointer}/value");
        // An empty value is left out of the JSON; it then fails as an empty worker id.
        let encoded = match answer.pointer(&value_at) {
            None => "",
            Some(Value::String(text)) => text.as_str(),
            Some(other) => {
                return Err(self.bad(
                    path,
                    &field_name(&value_at),
                    format!("{other} is not base64 text"),
                ))
            }
        };
        let bad_value = |problem: String| self.bad(path, &field_name(&value_at), problem);
        let bytes = BASE64.decode(encoded).map_err(|e| bad_value(format!("not base64: {e}")))?;
        let name = String::from_utf8(bytes).map_err(|e| bad_value(format!("not UTF-8: {e}")))?;
        let holder = WorkerId::new(name).map_err(|e| bad_value(format!("not a worker id: {e}")))?;
        let generation = self.generation(path, answer, &format!("{pointer}/create_revision"))?;
        Ok(Some((holder, generation)))
    }
}
