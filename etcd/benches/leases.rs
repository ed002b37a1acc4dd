//! Lease operations against a throwaway etcd (`testing::EtcdServer`, which syncs its log to disk
//! as etcd does by default), timed with divan, beside the baseline of one round trip:
//!
//! - `baseline_range_missing_key`: one `POST /v3/kv/range` of a key that does not exist, with
//!   the HTTP client configured as the crate's and nothing else; every operation below costs
//!   some number of these;
//! - `current`: [`EtcdAuthority::current`] of a missing key, the same round trip through this
//!   crate (the request built, the answer parsed and checked);
//! - `acquire_release`: an acquire (a lease granted, the key created by a transaction) and its
//!   release (the lease revoked): three round trips, each a write etcd commits to its log;
//! - `renew`: one keep-alive and one range to check the key still carries the grant's revision.
//!
//! Run with `cargo bench -p fencelab-etcd --bench leases`. divan runs one bench's samples, then
//! the next's, so on a shared machine compare figures from the same run only. Prints figures;
//! asserts nothing about time. `cargo test --benches` runs each bench once as a smoke test.

use fencelab_core::{ResourceId, WorkerId};
use fencelab_etcd::testing::EtcdServer;
use fencelab_etcd::{EtcdAuthority, Grant};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The server, dropped (killed and deleted) when `main` ends.
static SERVER: Mutex<Option<EtcdServer>> = Mutex::new(None);
static ETCD: OnceLock<EtcdAuthority> = OnceLock::new();
static AGENT: OnceLock<ureq::Agent> = OnceLock::new();

fn etcd() -> &'static EtcdAuthority {
    ETCD.get().expect("main starts the server")
}

fn main() {
    let server = EtcdServer::start().unwrap_or_else(|e| panic!("{e}"));
    let authority = EtcdAuthority::connect(&server.endpoint()).expect("connects");
    ETCD.set(authority).expect("set once");
    // Configured as the crate configures its own client.
    let phase = Some(fencelab_etcd::DEFAULT_TIMEOUT);
    let config = ureq::Agent::config_builder()
        .timeout_connect(phase)
        .timeout_send_request(phase)
        .timeout_send_body(phase)
        .timeout_recv_response(phase)
        .timeout_recv_body(phase)
        .http_status_as_error(false)
        .build();
    AGENT.set(ureq::Agent::new_with_config(config)).expect("set once");
    *SERVER.lock().unwrap_or_else(|e| e.into_inner()) = Some(server);
    divan::main();
    SERVER.lock().unwrap_or_else(|e| e.into_inner()).take();
}

#[divan::bench]
fn baseline_range_missing_key(bencher: divan::Bencher) {
    let url = format!("{}/v3/kv/range", etcd().endpoint());
    // "missing" in base64.
    let body = r#"{"key":"bWlzc2luZw=="}"#;
    let agent = AGENT.get().expect("main sets it");
    bencher.bench(|| {
        let mut response = agent
            .post(&url)
            .header("content-type", "application/json")
            .send(body)
            .expect("answers");
        assert_eq!(response.status(), 200);
        response.body_mut().read_to_string().expect("reads")
    });
}

#[divan::bench]
fn current(bencher: divan::Bencher) {
    let missing = ResourceId::new("missing").expect("valid");
    bencher.bench(|| assert_eq!(etcd().current(&missing).expect("answers"), None));
}

#[divan::bench]
fn acquire_release(bencher: divan::Bencher) {
    let resource = ResourceId::new("acquire-release").expect("valid");
    let worker = WorkerId::new("A").expect("valid");
    bencher.bench(|| {
        let grant = etcd().acquire(&resource, &worker, Duration::from_secs(60)).expect("free");
        etcd().release(&grant).expect("releases");
    });
}

#[divan::bench]
fn renew(bencher: divan::Bencher) {
    let resource = ResourceId::new("renew").expect("valid");
    let worker = WorkerId::new("A").expect("valid");
    let grant: Grant = etcd().acquire(&resource, &worker, Duration::from_secs(60)).expect("free");
    bencher.bench(|| etcd().renew(&grant).expect("renews"));
    etcd().release(&grant).expect("releases");
}
