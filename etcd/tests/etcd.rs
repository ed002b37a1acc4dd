//! The etcd lease authority against real etcd servers: each test starts its own throwaway server
//! (`testing::EtcdServer`), and the tests of failures use closed ports and small fake servers.

use fencelab_core::{
    fence::register::WriteRejection, fence::store::StoredValue, FencedStore, Generation,
    OperationId, ResourceId, Tick, WorkerId, WriteOutcome, WriteRequest,
};
use fencelab_etcd::testing::EtcdServer;
use fencelab_etcd::{EtcdAuthority, EtcdError, Grant};
use fencelab_sqlite::{Options, SqliteStore};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

const TTL: Duration = Duration::from_secs(1);

fn ledger() -> ResourceId {
    ResourceId::new("ledger").unwrap()
}

fn worker(name: &str) -> WorkerId {
    WorkerId::new(name).unwrap()
}

fn start() -> (EtcdServer, EtcdAuthority) {
    let server = EtcdServer::start().unwrap_or_else(|e| panic!("{e}"));
    let etcd = EtcdAuthority::connect(&server.endpoint()).unwrap();
    (server, etcd)
}

/// Waits until etcd has expired the grant's lease and deleted its key. etcd checks for expired
/// leases about every half second, so this takes up to the TTL and a little more.
fn wait_until_gone(etcd: &EtcdAuthority, grant: &Grant) {
    let deadline = Instant::now() + grant.ttl + Duration::from_secs(10);
    while etcd.current(&grant.resource).unwrap().is_some() {
        assert!(Instant::now() < deadline, "etcd did not expire lease {}", grant.lease_id);
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn acquire_held_renew_release_then_a_higher_generation() {
    let (_server, etcd) = start();
    let (a, b) = (worker("A"), worker("B"));
    let grant = etcd.acquire(&ledger(), &a, Duration::from_millis(1500)).unwrap();
    assert_eq!((&grant.resource, &grant.holder), (&ledger(), &a));
    assert_eq!(grant.ttl, Duration::from_secs(2), "1.5 s is rounded up to whole seconds");
    assert_ne!(grant.lease_id, 0);
    assert_eq!(etcd.current(&ledger()).unwrap(), Some((a.clone(), grant.generation)));

    match etcd.acquire(&ledger(), &b, TTL) {
        Err(EtcdError::Held { resource, holder, generation }) => {
            assert_eq!((resource, holder, generation), (ledger(), a.clone(), grant.generation));
        }
        other => panic!("expected Held, got {other:?}"),
    }
    let message = etcd.acquire(&ledger(), &b, TTL).unwrap_err().to_string();
    assert_eq!(message, format!("lease on ledger is held by A (generation {})", grant.generation));

    // Renewing past the first TTL keeps the lease: it is still A's after three TTLs.
    for _ in 0..6 {
        thread::sleep(Duration::from_millis(500));
        let ttl = etcd.renew(&grant).unwrap();
        assert!(ttl > Duration::ZERO && ttl <= grant.ttl, "{ttl:?}");
    }
    assert_eq!(etcd.current(&ledger()).unwrap(), Some((a.clone(), grant.generation)));

    etcd.release(&grant).unwrap();
    assert_eq!(etcd.current(&ledger()).unwrap(), None);
    let next = etcd.acquire(&ledger(), &b, TTL).unwrap();
    assert!(next.generation > grant.generation, "{} > {}", next.generation, grant.generation);
    assert_eq!(etcd.current(&ledger()).unwrap(), Some((b, next.generation)));

    // The released grant is gone for good.
    assert!(matches!(etcd.renew(&grant), Err(EtcdError::Expired { .. })));
    assert!(matches!(etcd.release(&grant), Err(EtcdError::Expired { .. })));
}

#[test]
fn resources_and_prefixes_are_separate_keys() {
    let (_server, etcd) = start();
    let other = ResourceId::new("other").unwrap();
    let one = etcd.acquire(&ledger(), &worker("A"), TTL).unwrap();
    let two = etcd.acquire(&other, &worker("B"), TTL).unwrap();
    assert!(two.generation > one.generation, "one revision counter for the whole store");
    let elsewhere = etcd.clone().with_prefix("another-app/");
    assert_eq!(elsewhere.key(&ledger()), "another-app/ledger");
    let three = elsewhere.acquire(&ledger(), &worker("C"), TTL).unwrap();
    assert_eq!(etcd.current(&ledger()).unwrap(), Some((worker("A"), one.generation)));
    assert_eq!(elsewhere.current(&ledger()).unwrap(), Some((worker("C"), three.generation)));
}

#[test]
fn a_worker_paused_past_its_ttl_is_expired_and_fenced_out_of_the_store() {
    let (_server, etcd) = start();
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(dir.path().join("fenced.db"), Options::default()).unwrap();
    let write = |generation: Generation, op: &str, value: &str| {
        WriteRequest::new(ledger(), generation, OperationId::new(op).unwrap(), None, value)
    };
    let (a, b) = (worker("A"), worker("B"));

    let grant_a = etcd.acquire(&ledger(), &a, TTL).unwrap();
    let first = store.write(&write(grant_a.generation, "a-1", "from A"), Tick(1)).unwrap();
    assert!(first.is_applied(), "{first:?}");

    // A pauses and stops renewing; etcd expires its lease and deletes the key.
    wait_until_gone(&etcd, &grant_a);
    let grant_b = etcd.acquire(&ledger(), &b, TTL).unwrap();
    assert!(grant_b.generation > grant_a.generation);
    let newer = store.write(&write(grant_b.generation, "b-1", "from B"), Tick(2)).unwrap();
    assert!(newer.is_applied(), "{newer:?}");

    // A resumes: its renewal says the lease is gone, and the store refuses its stale write.
    match etcd.renew(&grant_a) {
        Err(EtcdError::Expired { resource, generation, lease_id }) => {
            assert_eq!(
                (resource, generation, lease_id),
                (ledger(), grant_a.generation, grant_a.lease_id)
            );
        }
        other => panic!("expected Expired, got {other:?}"),
    }
    let stale = store.write(&write(grant_a.generation, "a-2", "stale from A"), Tick(3)).unwrap();
    assert_eq!(
        stale,
        WriteOutcome::Rejected(WriteRejection::Stale {
            presented: grant_a.generation,
            highest: grant_b.generation,
        })
    );
    let stored = store.read(&ledger()).unwrap().map(|s: StoredValue| s.value);
    assert_eq!(stored, Some(Some("from B".to_string())));
    assert_eq!(etcd.current(&ledger()).unwrap(), Some((b, grant_b.generation)));
}

#[test]
fn a_key_deleted_under_a_live_lease_is_superseded() {
    let (server, etcd) = start();
    let grant = etcd.acquire(&ledger(), &worker("A"), Duration::from_secs(30)).unwrap();
    let key = base64_of(&etcd.key(&ledger()));
    raw_post(&server.endpoint(), "/v3/kv/deleterange", &format!(r#"{{"key":"{key}"}}"#));
    let newer = etcd.acquire(&ledger(), &worker("B"), Duration::from_secs(30)).unwrap();
    match etcd.renew(&grant) {
        Err(e @ EtcdError::Superseded { .. }) => assert_eq!(
            e.to_string(),
            format!(
                "the key of ledger no longer carries generation {}: it is held by B (generation {})",
                grant.generation, newer.generation
            )
        ),
        other => panic!("expected Superseded, got {other:?}"),
    }
}

#[test]
fn a_killed_etcd_is_unreachable_and_named() {
    let (server, etcd) = start();
    let etcd = etcd.with_timeout(Duration::from_secs(2));
    let grant = etcd.acquire(&ledger(), &worker("A"), TTL).unwrap();
    server.kill();
    for result in [
        etcd.acquire(&ledger(), &worker("B"), TTL).map(drop),
        etcd.renew(&grant).map(drop),
        etcd.release(&grant),
        etcd.current(&ledger()).map(drop),
    ] {
        match result {
            Err(e @ EtcdError::Unreachable { .. }) => {
                let message = e.to_string();
                assert!(message.contains(&server.endpoint()), "{message}");
                assert!(message.starts_with("cannot reach etcd at"), "{message}");
            }
            other => panic!("expected Unreachable, got {other:?}"),
        }
    }
}

#[test]
fn a_closed_port_is_unreachable() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let endpoint = format!("http://127.0.0.1:{port}");
    match EtcdAuthority::connect(&endpoint) {
        Err(e @ EtcdError::Unreachable { .. }) => {
            let message = e.to_string();
            assert!(
                message.starts_with(&format!("cannot reach etcd at {endpoint} (/v3/kv/range)")),
                "{message}"
            );
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[test]
fn an_endpoint_that_is_not_http_is_refused() {
    for (endpoint, problem) in [
        ("127.0.0.1:2379", "it must start with http://"),
        ("https://127.0.0.1:2379", "it must start with http://"),
        ("http://127.0.0.1:2379/v3", "without a path"),
        ("http://", "it names no host"),
        ("http:///", "it names no host"),
    ] {
        match EtcdAuthority::connect(endpoint) {
            Err(e @ EtcdError::BadEndpoint { .. }) => {
                assert!(e.to_string().contains(problem), "{e}");
            }
            other => panic!("{endpoint}: expected BadEndpoint, got {other:?}"),
        }
    }
}

#[test]
fn a_server_answering_garbage_is_not_http() {
    let endpoint = fake(|_, _| b"SSH-2.0-OpenSSH_9.2\r\nnot http at all\r\n\r\n".to_vec());
    match EtcdAuthority::connect(&endpoint) {
        Err(e @ EtcdError::NotHttp { .. }) => {
            let message = e.to_string();
            assert!(
                message.starts_with(&format!("{endpoint} did not answer /v3/kv/range in HTTP")),
                "{message}"
            );
        }
        other => panic!("expected NotHttp, got {other:?}"),
    }
}

#[test]
fn another_http_server_is_an_http_error() {
    let endpoint = fake(|_, _| http(404, "text/plain", "404 page not found"));
    match EtcdAuthority::connect(&endpoint) {
        Err(e @ EtcdError::Http { status: 404, .. }) => assert_eq!(
            e.to_string(),
            format!("etcd at {endpoint} answered /v3/kv/range with HTTP 404: 404 page not found")
        ),
        other => panic!("expected Http, got {other:?}"),
    }
}

/// Fails with `BadResponse`, naming the field.
fn assert_bad(result: Result<impl std::fmt::Debug, EtcdError>, path: &str, field: &str) {
    match result {
        Err(EtcdError::BadResponse { path: p, field: f, .. }) if p == path && f == field => {}
        other => panic!("expected BadResponse on {path} for {field}, got {other:?}"),
    }
}

#[test]
fn responses_without_the_fields_etcd_sends_are_bad_responses() {
    let endpoint = fake(|_, _| json("{}"));
    assert_bad(EtcdAuthority::connect(&endpoint), "/v3/kv/range", "header.revision");
    let endpoint = fake(|_, _| json(r#"{"header":{"revision":"seven"}}"#));
    let e = EtcdAuthority::connect(&endpoint).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("etcd at {endpoint} answered /v3/kv/range without a valid header.revision: \"seven\" is not a 64-bit integer")
    );
    let endpoint = fake(|_, _| json("not json"));
    assert_bad(EtcdAuthority::connect(&endpoint), "/v3/kv/range", "body");

    // A gateway that answers ranges but grants leases without an ID.
    let endpoint = fake(|path, _| match path {
        "/v3/lease/grant" => json(r#"{"header":{"revision":"1"},"TTL":"1"}"#),
        _ => json(r#"{"header":{"revision":"1"}}"#),
    });
    let etcd = EtcdAuthority::connect(&endpoint).unwrap();
    assert_bad(etcd.acquire(&ledger(), &worker("A"), TTL), "/v3/lease/grant", "ID");

    // A failed transaction must show the holder's key.
    let endpoint = fake(|path, _| match path {
        "/v3/lease/grant" => json(r#"{"header":{"revision":"1"},"ID":"7","TTL":"1"}"#),
        _ => json(r#"{"header":{"revision":"1"}}"#),
    });
    let etcd = EtcdAuthority::connect(&endpoint).unwrap();
    assert_bad(
        etcd.acquire(&ledger(), &worker("A"), TTL),
        "/v3/kv/txn",
        "responses.0.response_range.kvs.0",
    );

    // A keep-alive answer without its result is not an expiry, and neither is a 404 without
    // etcd's message.
    let endpoint = fake(|path, _| match path {
        "/v3/lease/revoke" => http(404, "text/plain", "404 page not found"),
        _ => json(r#"{"header":{"revision":"1"}}"#),
    });
    let etcd = EtcdAuthority::connect(&endpoint).unwrap();
    let grant = Grant {
        resource: ledger(),
        holder: worker("A"),
        generation: Generation::new(2).unwrap(),
        lease_id: 7,
        ttl: TTL,
    };
    assert_bad(etcd.renew(&grant), "/v3/lease/keepalive", "result");
    assert!(matches!(etcd.release(&grant), Err(EtcdError::Http { status: 404, .. })));

    // A holder that is not base64.
    let endpoint = fake(|_, _| {
        json(r#"{"header":{"revision":"3"},"kvs":[{"create_revision":"2","value":"%%"}]}"#)
    });
    let etcd = EtcdAuthority::connect(&endpoint).unwrap();
    assert_bad(etcd.current(&ledger()), "/v3/kv/range", "kvs.0.value");
}

#[test]
fn a_revision_of_zero_is_not_a_fencing_token() {
    let endpoint = fake(|path, _| match path {
        "/v3/lease/grant" => json(r#"{"header":{"revision":"1"},"ID":"7","TTL":"1"}"#),
        "/v3/kv/txn" => json(r#"{"header":{"revision":"0"},"succeeded":true}"#),
        _ => json(r#"{"header":{"revision":"1"}}"#),
    });
    let etcd = EtcdAuthority::connect(&endpoint).unwrap();
    match etcd.acquire(&ledger(), &worker("A"), TTL) {
        Err(e @ EtcdError::Revision { .. }) => assert_eq!(
            e.to_string(),
            format!("etcd at {endpoint} answered /v3/kv/txn with a header.revision that is not a fencing token: positive integer token required (got 0)")
        ),
        other => panic!("expected Revision, got {other:?}"),
    }
    let endpoint = fake(|_, _| {
        json(r#"{"header":{"revision":"3"},"kvs":[{"create_revision":"-4","value":"QQ=="}]}"#)
    });
    let etcd = EtcdAuthority::connect(&endpoint).unwrap();
    assert!(matches!(etcd.current(&ledger()), Err(EtcdError::Revision { .. })));
}

#[test]
fn a_server_that_cannot_start_reports_etcds_log() {
    // etcd refuses an election timeout shorter than five heartbeats and says so in its log.
    let settings = fencelab_etcd::testing::Settings {
        heartbeat: Duration::from_millis(100),
        election: Duration::from_millis(100),
        ..Default::default()
    };
    let Err(e) = EtcdServer::start_with(settings) else { panic!("etcd started") };
    let message = e.to_string();
    assert!(message.starts_with("etcd failed"), "{message}");
    assert!(message.contains("election-timeout"), "{message}");
}

fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// One request to a real server, as another client would send it, without this crate.
fn raw_post(endpoint: &str, path: &str, body: &str) -> String {
    let address = endpoint.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    answer
}

fn http(status: u16, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} Fake\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn json(body: &str) -> Vec<u8> {
    http(200, "application/json", body)
}

/// A fake server on a free port: reads each request (line, headers, body) and writes what
/// `answer` returns for its path and body, then closes the connection. It runs until the test
/// process ends.
fn fake(answer: fn(&str, &str) -> Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            let mut length = 0;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let _ = stream.write_all(&answer(&path, &String::from_utf8_lossy(&body)));
        }
    });
    endpoint
}
