//! Judging recorded histories: findings that only a recorded history can show (two holders at
//! once), and outcomes nobody learned, considered both ways.

use fencelab_core::{invariant::InvariantKind, Checker, History, Violation};
use InvariantKind::*;

/// A history of workers A and B on `ledger`, one fenced store `db`, from its entries' lines,
/// holding every grant the authority made.
fn history(entries: &[&str]) -> History {
    history_seen(entries, "recorded")
}

/// The same, with the setup saying whether the authority's grants are all in it.
fn history_seen(entries: &[&str], authority: &str) -> History {
    let head = format!(
        r#"{{"fencelab_history":1,"setup":{{"workers":["A","B"],"resources":["ledger"],"stores":[{{"name":"db","paths":[{{"name":"primary","data":"primary","enforcement":"unfenced"}}]}}],"authority":"{authority}"}}}}"#
    );
    let head = head.as_str();
    let text = std::iter::once(head).chain(entries.iter().copied()).collect::<Vec<_>>().join("\n");
    History::from_jsonl(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn grant(at: u64, worker: &str, generation: u64, until: u64, message: u64) -> [String; 2] {
    [
        format!(
            r#"{{"at":{at},"event":"lease_granted","worker":"{worker}","resource":"ledger","generation":{generation},"valid_until":{until},"arrives_at":{at},"message":{message}}}"#
        ),
        format!(
            r#"{{"at":{at},"event":"grant_received","worker":"{worker}","resource":"ledger","generation":{generation},"message":{message}}}"#
        ),
    ]
}

fn request(generation: u64, op: &str) -> String {
    format!(
        r#"{{"resource":"ledger","generation":{generation},"operation":"{op}","value":"{op}"}}"#
    )
}

fn sent(at: u64, worker: &str, generation: u64, op: &str, message: u64) -> String {
    format!(
        r#"{{"at":{at},"event":"write_sent","worker":"{worker}","message":{message},"store":"db","path":"primary","request":{},"token":"lease","arrives_at":{at},"retry":false}}"#,
        request(generation, op)
    )
}

fn applied(at: u64, worker: &str, generation: u64, op: &str, message: u64) -> String {
    format!(
        r#"{{"at":{at},"event":"write_arrived","worker":"{worker}","message":{message},"store":"db","path":"primary","data":"primary","enforcement":"unfenced","request":{},"outcome":{{"outcome":"applied","generation":{generation},"revision":1}},"value_after":"{op}","highest_after":{generation}}}"#,
        request(generation, op)
    )
}

fn unknown(at: u64, worker: &str, generation: u64, op: &str, message: u64) -> String {
    format!(
        r#"{{"at":{at},"event":"write_unknown","worker":"{worker}","message":{message},"store":"db","path":"primary","data":"primary","request":{}}}"#,
        request(generation, op)
    )
}

fn judge(lines: &[String]) -> Vec<Violation> {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    Checker::judge(&history(&lines))
}

/// Judges a history that may miss the authority's grants, as a store's own log does.
fn judge_unobserved(lines: &[String]) -> Vec<Violation> {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    Checker::judge(&history_seen(&lines, "unobserved"))
}

fn kinds(found: &[Violation]) -> Vec<(InvariantKind, usize, bool)> {
    found.iter().map(|v| (v.invariant, v.step.index(), v.possible)).collect()
}

/// A's lease (generation 1, until 10) then B's (generation 2 at 12): the classic paused worker.
fn two_leases() -> Vec<String> {
    let mut lines = grant(0, "A", 1, 10, 0).to_vec();
    lines.extend(grant(12, "B", 2, 22, 1));
    lines
}

#[test]
fn a_stale_write_after_a_newer_one_is_certain() {
    let mut lines = two_leases();
    lines.extend([sent(13, "B", 2, "b1", 10), applied(13, "B", 2, "b1", 10)]);
    lines.extend([sent(14, "A", 1, "a1", 11), applied(14, "A", 1, "a1", 11)]);
    let found = judge(&lines);
    assert!(kinds(&found).contains(&(StaleWriteAccepted, 7, false)), "{found:#?}");
    let stale = found.iter().find(|v| v.invariant == StaleWriteAccepted).expect("found");
    // Both grants and receipts, B's write and A's: everything but nothing else.
    assert_eq!(stale.witness, vec![0, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn a_stale_write_whose_outcome_is_unknown_is_possible() {
    let mut lines = two_leases();
    lines.extend([sent(13, "B", 2, "b1", 10), applied(13, "B", 2, "b1", 10)]);
    lines.extend([sent(14, "A", 1, "a1", 11), unknown(20, "A", 1, "a1", 11)]);
    let found = judge(&lines);
    assert!(kinds(&found).contains(&(StaleWriteAccepted, 7, true)), "{found:#?}");
    assert!(found.iter().all(|v| v.possible), "nothing certain: {found:#?}");
}

#[test]
fn a_newer_write_whose_outcome_is_unknown_makes_a_later_stale_write_possible() {
    let mut lines = two_leases();
    lines.extend([sent(13, "B", 2, "b1", 10), unknown(13, "B", 2, "b1", 10)]);
    lines.extend([sent(14, "A", 1, "a1", 11), applied(14, "A", 1, "a1", 11)]);
    let found = judge(&lines);
    let stale: Vec<_> = found.iter().filter(|v| v.invariant == StaleWriteAccepted).collect();
    assert_eq!(stale.len(), 1, "{found:#?}");
    assert!(stale[0].possible, "B's write may never have reached db: {found:#?}");
    // Once a newer write surely arrives, an older one is stale for certain.
    lines.extend([sent(15, "B", 2, "b2", 12), applied(15, "B", 2, "b2", 12)]);
    lines.extend([sent(16, "A", 1, "a2", 13), applied(16, "A", 1, "a2", 13)]);
    let found = judge(&lines);
    assert!(kinds(&found).contains(&(StaleWriteAccepted, 11, false)), "{found:#?}");
}

#[test]
fn an_operation_applied_and_then_perhaps_again_is_possible_twice() {
    let mut lines = grant(0, "A", 1, 10, 0).to_vec();
    lines.extend([sent(1, "A", 1, "op", 10), applied(1, "A", 1, "op", 10)]);
    lines.extend([sent(2, "A", 1, "op", 11), unknown(3, "A", 1, "op", 11)]);
    assert!(kinds(&judge(&lines)).contains(&(OperationAppliedTwice, 5, true)));
    lines.extend([sent(4, "A", 1, "op", 12), applied(4, "A", 1, "op", 12)]);
    assert!(kinds(&judge(&lines)).contains(&(OperationAppliedTwice, 7, false)));
}

#[test]
fn a_final_value_an_unknown_newer_write_may_have_replaced_is_possibly_stale() {
    let mut lines = two_leases();
    // B's first write applies, A's stale one lands after it, then B's retry is lost.
    lines.extend([sent(13, "B", 2, "b1", 10), applied(13, "B", 2, "b1", 10)]);
    lines.extend([sent(14, "A", 1, "a1", 11), applied(14, "A", 1, "a1", 11)]);
    let certain = judge(&lines);
    let last = certain.iter().find(|v| v.invariant == FinalValueNotFromLatestOwner);
    assert!(last.is_some_and(|v| !v.possible), "{certain:#?}");
    lines.extend([sent(15, "B", 2, "b2", 12), unknown(16, "B", 2, "b2", 12)]);
    let found = judge(&lines);
    let last = found.iter().find(|v| v.invariant == FinalValueNotFromLatestOwner);
    assert!(last.is_some_and(|v| v.possible), "B's lost write may have won: {found:#?}");
}

#[test]
fn two_holders_at_once_by_the_authority_s_own_record() {
    // B is granted the lease at 5 while A's runs until 10.
    let mut lines = grant(0, "A", 1, 10, 0).to_vec();
    lines.extend(grant(5, "B", 2, 15, 1));
    let found = judge(&lines);
    assert_eq!(kinds(&found), vec![(LeasesOverlap, 2, false)]);
    assert_eq!(found[0].witness, vec![0, 2]);
    assert!(
        found[0].detail.contains("while A's lease (generation 1) ran until t=10"),
        "{found:#?}"
    );
    // After the lease ran out, or once it was released, a new holder is fine.
    let mut lines = grant(0, "A", 1, 10, 0).to_vec();
    lines.extend(grant(10, "B", 2, 20, 1));
    assert!(judge(&lines).is_empty());
    let mut lines = grant(0, "A", 1, 10, 0).to_vec();
    lines.push(
        r#"{"at":3,"event":"released","worker":"A","resource":"ledger","generation":1}"#.into(),
    );
    lines.extend(grant(4, "B", 2, 14, 1));
    assert!(judge(&lines).is_empty());
}

#[test]
fn a_generation_the_authority_never_issued() {
    let mut lines = grant(0, "A", 1, 10, 0).to_vec();
    lines.extend([sent(1, "A", 7, "a1", 10), applied(1, "A", 7, "a1", 10)]);
    let found = judge(&lines);
    assert_eq!(kinds(&found), vec![(TokenNeverIssued, 3, false)]);
    assert!(found[0].detail.contains("generation 7, which the authority never issued"));
    // A history that holds every grant and shows none: the authority issued nothing, so the
    // write was made under no lease, with a token nobody issued (two workers forging tokens).
    let lines = [
        sent(1, "A", 5, "a1", 10),
        applied(1, "A", 5, "a1", 10),
        sent(2, "B", 6, "b1", 11),
        applied(2, "B", 6, "b1", 11),
    ];
    let found = judge(&lines);
    assert_eq!(
        kinds(&found),
        vec![
            (WriteOutsideLease, 1, false),
            (TokenNeverIssued, 1, false),
            (WriteOutsideLease, 3, false),
            (TokenNeverIssued, 3, false)
        ],
        "{found:#?}"
    );
    assert!(found[1].detail.contains("never issued (it had issued none)"));
    // A store's own log, which may miss the grants: there is nothing to compare with.
    assert!(judge_unobserved(&lines).is_empty(), "{:#?}", judge_unobserved(&lines));
}

#[test]
fn generations_that_go_backwards_at_the_authority() {
    let mut lines = grant(0, "A", 5, 10, 0).to_vec();
    lines.extend(grant(10, "B", 3, 20, 1));
    let found = judge(&lines);
    assert_eq!(kinds(&found), vec![(GenerationReissued, 2, false)]);
    assert_eq!(found[0].witness, vec![0, 2]);
}

#[test]
fn a_duplicate_is_recognised_within_the_window_of_remembered_operations() {
    use fencelab_core::check::OPS_REMEMBERED;
    // The lease runs past every write, so nothing but the duplicate can be found.
    let mut lines = grant(0, "A", 1, 1_000_000, 0).to_vec();
    let write = |lines: &mut Vec<String>, op: &str, message: u64| {
        lines.extend([sent(1, "A", 1, op, message), applied(1, "A", 1, op, message)]);
    };
    write(&mut lines, "first", 1);
    for n in 0..OPS_REMEMBERED - 1 {
        write(&mut lines, &format!("op{n}"), 2 + n as u64);
    }
    let mut again = lines.clone();
    write(&mut again, "first", 1_000_000);
    let found = judge(&again);
    assert_eq!(found.iter().map(|v| v.invariant).collect::<Vec<_>>(), vec![OperationAppliedTwice]);
    // One more operation in between, and the first has been forgotten, as a store forgets.
    write(&mut lines, "one-more", 999_999);
    write(&mut lines, "first", 1_000_000);
    assert!(judge(&lines).is_empty());
}

#[test]
fn a_history_built_in_code_is_validated_and_its_excerpts_keep_order() {
    let mut lines = two_leases();
    lines.extend([sent(13, "B", 2, "b1", 10), applied(13, "B", 2, "b1", 10)]);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut built = history(&lines);
    assert_eq!(built.validate(), Ok(()));
    // Steps given in any order, twice, or past the end, make a history that still reads.
    let excerpt = built.excerpt(&[5, 0, 0, 4, 99]);
    assert_eq!(excerpt.entries.len(), 3);
    assert!(History::from_jsonl(&excerpt.to_jsonl()).is_ok());
    // An answer that does not repeat its request is refused, naming the field.
    if let fencelab_core::Event::WriteArrived { request, .. } = &mut built.entries[5].event {
        request.generation = fencelab_core::Generation::new(3).unwrap();
    }
    let error = built.validate().unwrap_err();
    assert_eq!(error.line, 7);
    assert!(
        error
            .problem
            .contains("`request.generation`: message 10 was sent with 2, this answer says 3"),
        "{error}"
    );
}

#[test]
fn without_the_authority_s_record_writes_are_ordered_by_their_generations() {
    // A store's own log: writes and answers, no grants. Generation 4 applied, then 3.
    let lines = [
        sent(1, "B", 4, "b1", 10),
        applied(1, "B", 4, "b1", 10),
        sent(2, "A", 3, "a1", 11),
        applied(2, "A", 3, "a1", 11),
    ];
    let found = judge_unobserved(&lines);
    assert_eq!(
        kinds(&found),
        [(StaleWriteAccepted, 3, false), (FinalValueNotFromLatestOwner, 3, false)],
        "nothing about leases the history does not record: {found:#?}"
    );
    assert!(
        found[0].detail.contains(
            "accepted A's write with generation 3 after B presented generation 4 (the history records no lease for either)"
        ),
        "{}",
        found[0].detail
    );
    // In order, nothing is wrong.
    let lines = [
        sent(1, "A", 3, "a1", 10),
        applied(1, "A", 3, "a1", 10),
        sent(2, "B", 4, "b1", 11),
        applied(2, "B", 4, "b1", 11),
    ];
    assert!(judge_unobserved(&lines).is_empty());
}

/// The two lab runs checked in as examples judge as their modes promise: the fenced store refused
/// A's late write, the unfenced one took it over B's.
#[test]
fn the_checked_in_lab_histories_judge_as_their_modes_promise() {
    let read = |name: &str| {
        let path = format!("{}/../examples/histories/{name}", env!("CARGO_MANIFEST_DIR"));
        History::from_jsonl(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let fenced = read("sqlite-fenced.jsonl");
    let refused = fenced.entries.iter().filter(|e| {
        matches!(&e.event, fencelab_core::Event::WriteArrived { worker, outcome, .. }
            if worker == "A" && !outcome.is_applied())
    });
    assert_eq!(refused.count(), 1, "the fenced store refuses A's late write");
    assert_eq!(Checker::judge(&fenced), []);
    let unfenced = read("sqlite-unfenced.jsonl");
    let found = Checker::judge(&unfenced);
    let stale: Vec<&Violation> =
        found.iter().filter(|v| v.invariant == StaleWriteAccepted).collect();
    assert_eq!(stale.len(), 1, "{found:#?}");
    assert!(!stale[0].possible && stale[0].detail.contains("accepted A's write"), "{found:#?}");
}

/// A simulated run records every grant, so two workers that never held a lease and write with
/// made-up tokens are judged: no lease backed their writes, and nobody issued those tokens.
#[test]
fn a_simulated_run_in_which_forgers_write_is_judged() {
    let scenario = r#"{"name": "forgers", "title": "Two forgers", "resources": ["ledger"],
        "authority": {"ttl": 10}, "network": {"latency": 1},
        "stores": [{"name": "db", "enforcement": "fenced"}],
        "workers": [
            {"name": "F", "script": [{"write": {"resource": "ledger", "value": "f", "forge": 5}}]},
            {"name": "G", "start": 2, "script": [{"write": {"resource": "ledger", "value": "g", "forge": 6}}]}
        ]}"#;
    let scenario = fencelab_core::Scenario::from_json(scenario).expect("the scenario reads");
    let mut engine = fencelab_core::Engine::new(scenario).expect("the scenario is valid");
    engine.run().expect("the run ends");
    let history = History::from_jsonl(&engine.history().to_jsonl()).expect("the history reads");
    let found: Vec<InvariantKind> = Checker::judge(&history).iter().map(|v| v.invariant).collect();
    assert_eq!(
        found,
        [WriteOutsideLease, TokenNeverIssued, WriteOutsideLease, TokenNeverIssued],
        "{found:?}"
    );
}
