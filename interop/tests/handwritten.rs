//! Small histories written by hand in each format, each with the findings it must show and the
//! steps that show them.

use fencelab_core::history::event::Event;
use fencelab_core::{
    fence::register::WriteRejection, invariant::InvariantKind, Checker, WriteOutcome,
};
use fencelab_interop::{itf, jepsen, otlp, pattern, Imported};
use InvariantKind::*;

fn found(imported: &Imported) -> Vec<(InvariantKind, usize)> {
    Checker::judge(&imported.history).iter().map(|v| (v.invariant, v.step.index())).collect()
}

#[test]
fn jepsen_json_reissued_generation_and_an_operation_applied_twice() {
    let text = r#"[
{"type":"invoke","process":0,"f":"acquire","time":0,"value":{"resource":"r"}},
{"type":"ok","process":0,"f":"acquire","time":1000000,"value":{"resource":"r","generation":3,"ttl":1000}},
{"type":"invoke","process":0,"f":"write","time":2000000,"value":{"resource":"r","store":"db","generation":3,"value":"x","op":"o1"}},
{"type":"ok","process":0,"f":"write","time":3000000},
{"type":"invoke","process":0,"f":"write","time":4000000,"value":{"resource":"r","store":"db","generation":3,"value":"x","op":"o1"}},
{"type":"ok","process":0,"f":"write","time":5000000},
{"type":"invoke","process":1,"f":"acquire","time":6000000,"value":{"resource":"r"}},
{"type":"ok","process":1,"f":"acquire","time":7000000,"value":{"resource":"r","generation":3,"ttl":1000}},
{"type":"invoke","process":0,"f":"write","time":8000000,"value":{"resource":"r","store":"db","generation":2,"value":"y","op":"o2"}},
{"type":"fail","process":0,"f":"write","time":9000000,"error":"stale"}
]"#;
    let imported = jepsen::read_jepsen_json(text).unwrap_or_else(|e| panic!("{e}"));
    // Entries: grant 0, received 1, sent 2, arrived 3, sent 4, arrived 5, grant 6, received 7,
    // sent 8, refused 9.
    // p1's grant comes while p0's lease still runs, by the authority's own record. The grant
    // took effect somewhere in its call (steps 6 to 7): the overlap is certain once the call
    // has returned with p0's lease not ended, which the next entry (8) shows.
    assert_eq!(
        found(&imported),
        [(OperationAppliedTwice, 5), (GenerationReissued, 6), (LeasesOverlap, 8)]
    );
    let refused = &imported.history.entries[9].event;
    let Event::WriteArrived {
        outcome: WriteOutcome::Rejected(WriteRejection::Stale { presented, highest }),
        ..
    } = refused
    else {
        panic!("{refused:?}")
    };
    assert_eq!((presented.get(), highest.get()), (2, 3));
    // Generation 2 was never granted to p0: the token is taken as made up.
    let sent = &imported.history.entries[8].event;
    assert!(
        matches!(
            sent,
            Event::WriteSent { token: fencelab_core::history::event::TokenKind::Forged, .. }
        ),
        "{sent:?}"
    );
}

#[test]
fn jepsen_edn_renewal_release_and_effects() {
    let text = r#"
{:type :invoke, :process :a, :f :acquire, :time 0}
{:type :ok, :process :a, :f :acquire, :time 0, :value {:resource "job", :generation 1, :ttl 10}}
{:type :invoke, :process :a, :f :renew, :time 5000000}
{:type :ok, :process :a, :f :renew, :time 6000000, :value {:ttl 10}}
{:type :invoke, :process :a, :f :write, :time 12000000, :value {:resource "job", :store "db", :generation 1, :value "in-lease", :op "w1"}}
{:type :ok, :process :a, :f :write, :time 13000000}
{:type :invoke, :process :a, :f :release, :time 14000000}
{:type :ok, :process :a, :f :release, :time 14000000}
{:type :invoke, :process :b, :f :acquire, :time 15000000}
{:type :ok, :process :b, :f :acquire, :time 15000000, :value {:resource "job", :generation 2, :ttl 10}}
{:type :invoke, :process :b, :f :effect, :time 16000000, :value {:workflow "order-1", :effect "charge", :op "e2", :generation 2}}
{:type :ok, :process :b, :f :effect, :time 17000000}
{:type :invoke, :process :a, :f :effect, :time 18000000, :value {:workflow "order-1", :effect "charge", :op "e1", :generation 1, :resource "job"}}
{:type :ok, :process :a, :f :effect, :time 19000000}
"#;
    let imported = jepsen::read_jepsen_edn(text).unwrap_or_else(|e| panic!("{e}"));
    let entries = &imported.history.entries;
    // The renewal carried the lease to 5 + 10 ms, past the write at 12 ms.
    assert!(matches!(entries[2].event, Event::Renewed { valid_until, .. } if valid_until.0 == 15));
    assert!(matches!(&entries[5].event, Event::Released { worker, .. } if worker == "a"));
    assert_eq!(
        imported.history.setup.gateway.as_ref().map(|g| g.partner.as_str()),
        Some("partner")
    );
    // a's effect, from a released lease, reaches the partner after b's: entry 11.
    assert_eq!(found(&imported), [(EffectFromSupersededOwner, 11)]);
}

fn attr(key: &str, value: &str) -> String {
    if value.parse::<u64>().is_ok() {
        format!(r#"{{"key":"{key}","value":{{"intValue":"{value}"}}}}"#)
    } else {
        format!(r#"{{"key":"{key}","value":{{"stringValue":"{value}"}}}}"#)
    }
}

fn span(name: &str, start_ms: u64, end_ms: u64, attrs: &[(&str, &str)], error: bool) -> String {
    let attrs: Vec<String> = attrs.iter().map(|(k, v)| attr(k, v)).collect();
    let status = if error { r#","status":{"code":2,"message":"deadline exceeded"}"# } else { "" };
    format!(
        r#"{{"name":"{name}","startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":[{}]{status}}}"#,
        1_000_000_000_000 + start_ms * 1_000_000,
        1_000_000_000_000 + end_ms * 1_000_000,
        attrs.join(",")
    )
}

#[test]
fn otlp_forged_generation_and_an_error_span() {
    let w = |op: &'static str, g: &'static str, outcome: Option<&'static str>| {
        let mut a = vec![
            ("fencing.resource", "cart"),
            ("fencing.store", "kv"),
            ("fencing.generation", g),
            ("fencing.value", op),
            ("fencing.operation", op),
        ];
        if let Some(o) = outcome {
            a.push(("fencing.outcome", o));
        }
        a
    };
    let spans = [
        span(
            "lease.acquire",
            0,
            1,
            &[
                ("lease.holder", "b"),
                ("fencing.resource", "cart"),
                ("fencing.generation", "5"),
                ("lease.ttl_ms", "100"),
            ],
            false,
        ),
        span(
            "fencing.write",
            2,
            3,
            &[&[("lease.holder", "b")][..], &w("b1", "5", None)].concat(),
            false,
        ),
        // c holds no lease and presents a made-up higher generation, and the store takes it.
        span(
            "fencing.write",
            4,
            5,
            &[&[("lease.holder", "c")][..], &w("c1", "9", Some("applied"))].concat(),
            false,
        ),
        // b's next write fails with an error status and no outcome: unknown.
        span(
            "fencing.write",
            6,
            9,
            &[&[("lease.holder", "b")][..], &w("b2", "5", None)].concat(),
            true,
        ),
        span("checkout", 0, 9, &[("lease.holder", "b")], false),
    ];
    let line =
        format!(r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#, spans.join(","));
    let imported = otlp::read_otlp(&line).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imported.skipped, 1);
    let entries = &imported.history.entries;
    assert!(
        matches!(&entries[4].event, Event::WriteSent { token: fencelab_core::history::event::TokenKind::Forged, worker, .. } if worker == "c")
    );
    assert!(matches!(&entries[7].event, Event::WriteUnknown { worker, .. } if worker == "b"));
    // c's write, which no lease backs, lands after b's: stale, outside any lease, with a
    // generation the authority never issued, and the value the store ends with.
    assert_eq!(
        found(&imported),
        [
            (StaleWriteAccepted, 5),
            (WriteOutsideLease, 5),
            (TokenNeverIssued, 5),
            (FinalValueNotFromLatestOwner, 7)
        ]
    );
    // The ITF trace shows the store's highest generation after c's write.
    let trace: serde_json::Value =
        serde_json::from_str(&itf::to_itf(&imported.history)).expect("JSON");
    assert_eq!(trace["states"][5]["highest"]["#map"][0][1]["#bigint"], "9");
    assert_eq!(trace["states"][5]["findings"][1]["invariant"], "write_outside_lease");
    assert_eq!(trace["states"][5]["findings"][1]["possible"], false);
    assert_eq!(trace["states"][0]["event"]["tag"], "LeaseGranted");
}

#[test]
fn log_with_a_refused_stale_write_and_a_retried_operation() {
    let re = r"^(?P<time>\d+) (?P<actor>\w+) (?P<kind>\w+)(?: r=(?P<resource>\w+))?(?: g=(?P<generation>\d+))?(?: ttl=(?P<ttl>\d+))?(?: op=(?P<op>\S+))?(?: v=(?P<value>\S+))?(?: highest=(?P<highest>\d+))?";
    let log = "\
0 a acquire r=doc g=1 ttl=50
1 a write r=doc g=1 op=a1 v=one
2 a write_ok op=a1
3 a pause
60 b acquire r=doc g=2 ttl=50
61 b write r=doc g=2 op=b1 v=two
62 b write_ok op=b1
63 a resume
64 a write r=doc g=1 op=a2 v=late
65 a write_rejected op=a2 highest=2
66 b write r=doc g=2 op=b1 v=two
67 b write_ok
some other line
";
    let imported = pattern::read_pattern(log, re).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imported.skipped, 1);
    // The stale write is refused (nothing to report); b's retry of b1 applies twice.
    assert_eq!(found(&imported), [(OperationAppliedTwice, 13)]);
    assert!(matches!(imported.history.entries[4].event, Event::Paused { ticks: 60, .. }));
}

#[test]
fn a_log_in_its_own_words_maps_them_with_one_group_per_kind() {
    let re = r"^(?P<time>\d+) (?P<actor>\w+) (?:(?P<kind_acquire>LOCK_ACQUIRED)|(?P<kind_write>PUT)|(?P<kind_write_ok>PUT_OK)) r=(?P<resource>\w+)(?: g=(?P<generation>\d+))?(?: ttl=(?P<ttl>\d+))?(?: op=(?P<op>\S+))?(?: v=(?P<value>\S+))?";
    let log = "\
0 a LOCK_ACQUIRED r=doc g=1 ttl=50
1 a PUT r=doc g=1 op=a1 v=one
2 a PUT_OK r=doc op=a1
60 b LOCK_ACQUIRED r=doc g=2 ttl=50
61 b PUT r=doc g=2 op=b1 v=two
62 b PUT_OK r=doc op=b1
64 a PUT r=doc g=1 op=a2 v=late
65 a PUT_OK r=doc op=a2
";
    let imported = pattern::read_pattern(log, re).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imported.skipped, 0);
    let kinds: Vec<_> = found(&imported).into_iter().map(|(kind, _)| kind).collect();
    assert!(kinds.contains(&StaleWriteAccepted), "{kinds:?}");
    // Without `kind` or a `kind_NAME` group the pattern is refused, saying how to write it.
    let error = pattern::read_pattern(log, r"^(?P<actor>\w+)").unwrap_err().to_string();
    assert!(error.contains("(?P<kind_acquire>LOCK_ACQUIRED)"), "{error}");
}

/// p0 holds generation 1 until 5 ms, p1 takes generation 2 at 6 ms; then `tail`.
fn jepsen_two_owners(tail: &str) -> Vec<fencelab_core::Violation> {
    let text = format!(
        r#"
{{:type :invoke, :process 0, :f :acquire, :time 0}}
{{:type :ok, :process 0, :f :acquire, :time 0, :value {{:resource "r", :generation 1, :ttl 5}}}}
{{:type :invoke, :process 1, :f :acquire, :time 6000000}}
{{:type :ok, :process 1, :f :acquire, :time 6000000, :value {{:resource "r", :generation 2, :ttl 5}}}}
{tail}"#
    );
    let imported = jepsen::read_jepsen_edn(&text).unwrap_or_else(|e| panic!("{e}"));
    Checker::judge(&imported.history)
}

fn stale(found: &[fencelab_core::Violation]) -> Vec<bool> {
    found.iter().filter(|v| v.invariant == StaleWriteAccepted).map(|v| v.possible).collect()
}

#[test]
fn jepsen_info_writes_are_weighed_both_ways() {
    // The stale write itself timed out: had it applied, it was stale.
    let found = jepsen_two_owners(
        r#"
{:type :invoke, :process 1, :f :write, :time 7000000, :value {:resource "r", :store "db", :generation 2, :value "b", :op "b1"}}
{:type :ok, :process 1, :f :write, :time 7000000}
{:type :invoke, :process 0, :f :write, :time 8000000, :value {:resource "r", :store "db", :generation 1, :value "a", :op "a1"}}
{:type :info, :process 0, :f :write, :time 9000000, :error :timeout}"#,
    );
    assert_eq!(stale(&found), [true], "{found:#?}");
    assert!(found.iter().all(|v| v.possible), "{found:#?}");
    // The newer owner's write timed out: had it reached db, the older one after it was stale.
    let found = jepsen_two_owners(
        r#"
{:type :invoke, :process 1, :f :write, :time 7000000, :value {:resource "r", :store "db", :generation 2, :value "b", :op "b1"}}
{:type :info, :process 1, :f :write, :time 7500000, :error :timeout}
{:type :invoke, :process 0, :f :write, :time 8000000, :value {:resource "r", :store "db", :generation 1, :value "a", :op "a1"}}
{:type :ok, :process 0, :f :write, :time 9000000}"#,
    );
    assert_eq!(stale(&found), [true], "{found:#?}");
    // Both acknowledged: certain.
    let found = jepsen_two_owners(
        r#"
{:type :invoke, :process 1, :f :write, :time 7000000, :value {:resource "r", :store "db", :generation 2, :value "b", :op "b1"}}
{:type :ok, :process 1, :f :write, :time 7500000}
{:type :invoke, :process 0, :f :write, :time 8000000, :value {:resource "r", :store "db", :generation 1, :value "a", :op "a1"}}
{:type :ok, :process 0, :f :write, :time 9000000}"#,
    );
    assert_eq!(stale(&found), [false], "{found:#?}");
}

/// A store's own log, shaped like a JournalNode's: it accepts the new writer's epoch 83 and
/// refuses the old active writer's epoch 82, saying only the epochs. Read as it is, with the
/// writers named after their epochs; the store did its job, so the audit is clean. Had it
/// accepted 82 after 83, that is a stale write, certain.
#[test]
fn a_store_s_own_refusal_log_audits_as_it_is() {
    let re = r"^(?P<time>\S+ \S+) \S+ \S+ (?P<store>jn\d): (?:(?P<kind_accepted>Accepted)|(?P<kind_refused>Refused):) .*?epoch (?P<generation>\d+)(?: is less than the last promised epoch (?P<highest>\d+))?";
    let log = "\
2024-12-31 07:50:16,101 INFO server.Journal jn1: Accepted epoch 83 for a new writer
2024-12-31 07:50:16,102 INFO server.Journal jn2: Accepted epoch 83 for a new writer
2024-12-31 07:50:16,104 INFO server.Journal jn3: Accepted epoch 83 for a new writer
2024-12-31 07:50:16,609 WARN ipc.Server jn1: Refused: IPC's epoch 82 is less than the last promised epoch 83
2024-12-31 07:50:16,611 WARN ipc.Server jn2: Refused: IPC's epoch 82 is less than the last promised epoch 83
2024-12-31 07:50:16,612 WARN ipc.Server jn3: Refused: IPC's epoch 82 is less than the last promised epoch 83
";
    let imported = pattern::read_pattern(log, re).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imported.skipped, 0);
    assert_eq!(imported.history.setup.workers, ["gen-83", "gen-82"]);
    assert_eq!(imported.history.setup.stores.len(), 3);
    assert!(!imported.history.setup.authority.is_recorded());
    let refused = imported.history.entries.iter().filter(|e| {
        matches!(
            &e.event,
            Event::WriteArrived {
                outcome: WriteOutcome::Rejected(WriteRejection::Stale { .. }),
                ..
            }
        )
    });
    assert_eq!(refused.count(), 3);
    assert_eq!(found(&imported), []);

    let stale = log.replace(
        "jn3: Refused: IPC's epoch 82 is less than the last promised epoch 83",
        "jn3: Accepted epoch 82 from the old writer",
    );
    let imported = pattern::read_pattern(&stale, re).unwrap_or_else(|e| panic!("{e}"));
    let kinds: Vec<_> = found(&imported).into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, [StaleWriteAccepted, FinalValueNotFromLatestOwner]);
}

/// A lock test's history in its own words: `:lock` and `:unlock`, the lock's name beside the
/// value, an opaque token as the value, and no lease length. Read through a mapping as it is:
/// a token handed out twice is a generation issued twice, whatever the token looks like.
#[test]
fn a_lock_history_in_its_own_words_reads_through_a_mapping() {
    use fencelab_interop::mapping::Mapping;
    let history = r#"{:type :invoke, :f :lock, :process 0, :time 0, :lock-name "alpha"}
{:type :ok, :f :lock, :process 0, :time 1000000, :lock-name "alpha", :value "lt-7f3a"}
{:type :invoke, :f :unlock, :process 0, :time 2000000, :lock-name "alpha"}
{:type :ok, :f :unlock, :process 0, :time 3000000, :lock-name "alpha"}
{:type :invoke, :f :lock, :process 1, :time 4000000, :lock-name "alpha"}
{:type :invoke, :f :lock, :process 2, :time 4100000, :lock-name "alpha"}
{:type :ok, :f :lock, :process 2, :time 5000000, :lock-name "alpha", :value "lt-0001"}
{:type :invoke, :f :unlock, :process 2, :time 6000000, :lock-name "alpha"}
{:type :ok, :f :unlock, :process 2, :time 7000000, :lock-name "alpha"}
{:type :ok, :f :lock, :process 1, :time 8000000, :lock-name "alpha", :value "lt-ffff"}"#;
    let error = jepsen::read_jepsen(history).unwrap_err().to_string();
    assert!(
        error.contains("`fencelab audit --map lock=MEANING`, MEANING one of acquire, renew"),
        "{error}"
    );
    let mut mapping: Mapping =
        "lock=acquire, unlock=release, lock-name=resource, value=generation".parse().unwrap();
    let error = jepsen::read_jepsen_mapped(history, &mapping).unwrap_err().to_string();
    assert!(error.contains("`fencelab audit --opaque-tokens`"), "{error}");
    // A misspelt rename that matched nothing is named beside the error it caused.
    let typo: Mapping =
        "lock=acquire, unlock=release, lock-nam=resource, value=generation".parse().unwrap();
    let error = jepsen::read_jepsen_mapped(history, &typo).unwrap_err().to_string();
    assert!(
        error.contains("the --map rename lock-nam=resource matched no field so far"),
        "{error}"
    );
    mapping.opaque_tokens = true;
    // Without a lease length, each lease may have ended at any moment before its release:
    // a grant beside one is at most a possible overlap, and says why.
    let read = jepsen::read_jepsen_mapped(history, &mapping).unwrap_or_else(|e| panic!("{e}"));
    let found = Checker::judge(&read.history);
    assert!(!found.is_empty() && found.iter().all(|v| v.possible), "{found:#?}");
    let unknown = "the history does not say how long it lasted";
    assert!(found.iter().any(|v| v.detail.contains(unknown)), "{found:#?}");
    mapping.ttl = Some(60_000);
    let read = jepsen::read_jepsen_mapped(history, &mapping).unwrap_or_else(|e| panic!("{e}"));
    // p1 asked before p2 and was answered after it: numbered by the requests, the tokens break
    // no order, and the hand-offs are blocking ones, at most possible overlaps.
    let tokens: Vec<u64> = read.tokens.iter().map(|t| t.2).collect();
    assert_eq!(tokens, [1, 3, 2]);
    let found = Checker::judge(&read.history);
    assert!(found.iter().all(|v| v.possible), "{found:#?}");
    assert!(found.iter().all(|v| v.invariant == LeasesOverlap), "{found:#?}");
    // The first token handed out again: certain, whatever the order.
    let reused = history.replace("\"lt-ffff\"", "\"lt-7f3a\"");
    let read = jepsen::read_jepsen_mapped(&reused, &mapping).unwrap_or_else(|e| panic!("{e}"));
    let found = Checker::judge(&read.history);
    assert!(found.iter().any(|v| v.invariant == GenerationReissued && !v.possible), "{found:#?}");
}
