//! Bad input in every format: one clear error naming the line and the field, never a panic.

use fencelab_interop::{jepsen, otlp, pattern, ImportError, StepsBack};

fn jepsen_err(text: &str) -> ImportError {
    match jepsen::read_jepsen(text) {
        Ok(imported) => panic!("read without error: {:?}", imported.history),
        Err(e) => e,
    }
}

fn says(e: &ImportError, line: usize, field: Option<&str>, words: &str) {
    assert_eq!(e.line, line, "{e}");
    assert_eq!(e.field.as_deref(), field, "{e}");
    assert!(e.problem.contains(words), "{e}");
}

const ACQUIRE: &str = r#"{"type":"invoke","process":0,"f":"acquire","time":0,"value":{"resource":"ledger"}}
{"type":"ok","process":0,"f":"acquire","time":1000000,"value":{"resource":"ledger","generation":1,"ttl":100}}
"#;

fn write(generation: &str) -> String {
    format!(
        r#"{{"type":"invoke","process":0,"f":"write","time":2000000,"value":{{"resource":"ledger","store":"db","generation":{generation},"value":"v","op":"a"}}}}"#
    )
}

#[test]
fn a_truncated_line_is_named() {
    let text = format!("{ACQUIRE}{{\"type\":\"invoke\",\"process\":0,\"f\":\"wri\n");
    let e = jepsen_err(&text);
    says(&e, 3, None, "JSON: EOF while parsing a string");
    let e = jepsen_err("[{:type :invoke, :process 0, :f :acquire,\n :value {:resource \"ledger\"");
    says(&e, 2, None, "the input ends before the '{' opened on line 2 is closed");
}

#[test]
fn an_unknown_f_is_named() {
    let e = jepsen_err(r#"{"type":"invoke","process":0,"f":"cas","time":0,"value":[1,2]}"#);
    says(&e, 1, Some("f"), "unknown :f \"cas\"");
    assert_eq!(e.op, Some(0));
}

#[test]
fn time_that_runs_backwards_is_named() {
    let text = ACQUIRE.replace("\"time\":1000000", "\"time\":0").replace(
        r#""time":0,"value":{"resource":"ledger"}}"#,
        r#""time":5000000000,"value":{"resource":"ledger"}}"#,
    );
    let e = jepsen_err(&text);
    says(
        &e,
        2,
        Some("time"),
        "time runs backwards by 5000 ms from the entry above; steps back of up to 1000 ms",
    );
    let e = jepsen_err(r#"{"type":"invoke","process":0,"f":"acquire","time":-5}"#);
    says(&e, 1, Some("time"), "whole number");
}

#[test]
fn bad_generations_are_named() {
    for (generation, words) in [
        ("0", "positive integer token required (got 0)"),
        ("-3", "positive integer token required (got -3)"),
        ("18446744073709551616", "larger than the largest generation"),
        ("1.5", "positive integer token required (got 1.5)"),
        ("\"seven\"", "positive integer token required"),
    ] {
        let e = jepsen_err(&format!("{ACQUIRE}{}", write(generation)));
        says(&e, 3, Some("value.generation"), words);
    }
    let missing = write("1").replace(r#""generation":1,"#, "");
    let e = jepsen_err(&format!("{ACQUIRE}{missing}"));
    says(&e, 3, Some("value.generation"), "missing");
    // EDN reads integers beyond 64 bits and names them the same way.
    let e = jepsen_err(
        "{:type :invoke, :process 0, :f :write, :value {:resource \"r\", :store \"db\", :generation 18446744073709551616, :value \"v\"}}",
    );
    says(&e, 1, Some("value.generation"), "larger than the largest generation");
    // A grant without a generation.
    let e = jepsen_err(&ACQUIRE.replace(r#""generation":1,"#, ""));
    says(&e, 2, Some("value.generation"), "must carry its generation");
}

#[test]
fn a_completion_without_its_invocation_is_named() {
    let e = jepsen_err(r#"{"type":"ok","process":3,"f":"write","time":0,"value":{}}"#);
    says(&e, 1, Some("type"), "a completion of p3's write without its invocation");
    let e = jepsen_err("{:type :fail, :process 0, :f :acquire}");
    says(&e, 1, Some("type"), "without its invocation");
}

#[test]
fn invalid_utf8_is_named_with_its_line() {
    let mut bytes = ACQUIRE.as_bytes().to_vec();
    bytes.extend_from_slice(b"{\"type\":\"invoke\",\"process\":\"\xff\"}\n");
    let e = jepsen::read_jepsen_bytes(&bytes).expect_err("not UTF-8");
    says(&e, 3, None, "invalid UTF-8 at column 29");
    let e = otlp::read_otlp_bytes(b"{\"resourceSpans\":[]}\n\xc3(").expect_err("not UTF-8");
    says(&e, 2, None, "invalid UTF-8");
    let e = pattern::read_pattern_bytes(b"ok\n\xe2\x82", "(?P<actor>a)(?P<kind>b)")
        .expect_err("not UTF-8");
    says(&e, 2, None, "invalid UTF-8");
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let deep = "[".repeat(200_000);
    assert!(jepsen::read_jepsen_edn(&deep).is_err());
    assert!(jepsen::read_jepsen_json(&deep).is_err());
    let deep_map = format!("{{:type :invoke, :value {}}}", "{:a ".repeat(100_000));
    let e = jepsen::read_jepsen_edn(&deep_map).expect_err("too deep");
    assert!(e.problem.contains("nested deeper than"), "{e}");
}

#[test]
fn absurd_sizes_are_refused() {
    let long = format!("{{\"type\":\"invoke\",\"process\":0,\"f\":\"{}\"}}\n", "x".repeat(2 << 20));
    let e = jepsen::read_jepsen_json(&long).expect_err("too long");
    says(&e, 1, None, "the longest read is");
    let e = otlp::read_otlp(&long).expect_err("too long");
    says(&e, 1, None, "the longest read is");
}

fn span(name: &str, attrs: &str, start: u64, end: u64) -> String {
    format!(
        r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.instance.id","value":{{"stringValue":"w1"}}}}]}},"scopeSpans":[{{"spans":[{{"name":"{name}","startTimeUnixNano":"{start}","endTimeUnixNano":"{end}","attributes":[{attrs}]}}]}}]}}]}}"#
    )
}

fn attr(key: &str, value: &str) -> String {
    format!(r#"{{"key":"{key}","value":{value}}}"#)
}

#[test]
fn otlp_errors_name_the_line_and_attribute() {
    let acquire = |g: &str| {
        let attrs = [
            attr("fencing.resource", r#"{"stringValue":"r"}"#),
            attr("fencing.generation", &format!(r#"{{"intValue":"{g}"}}"#)),
            attr("lease.ttl_ms", r#"{"intValue":"100"}"#),
        ]
        .join(",");
        span("lease.acquire", &attrs, 1_000_000, 2_000_000)
    };
    let e = otlp::read_otlp(&format!("{{\"resourceSpans\":[]}}\n{}\n", acquire("0")))
        .expect_err("zero");
    says(
        &e,
        2,
        Some("resourceSpans[0].scopeSpans[0].spans[0].attributes.fencing.generation"),
        "positive integer token required (got 0)",
    );
    let e = otlp::read_otlp(&acquire("18446744073709551616")).expect_err("too large");
    says(
        &e,
        1,
        Some("resourceSpans[0].scopeSpans[0].spans[0].attributes.fencing.generation"),
        "larger than the largest generation",
    );
    let backwards = span("lease.release", "", 5_000_000, 1_000_000);
    let e = otlp::read_otlp(&backwards).expect_err("ends before it starts");
    says(
        &e,
        1,
        Some("resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano"),
        "ends before it starts",
    );
    let bad_time = span("lease.release", "", 1, 1).replace("\"1\"", "\"soon\"");
    let e = otlp::read_otlp(&bad_time).expect_err("not a time");
    assert!(e.field.as_deref().is_some_and(|f| f.ends_with("startTimeUnixNano")), "{e}");
    let outcome = [
        attr("fencing.resource", r#"{"stringValue":"r"}"#),
        attr("fencing.store", r#"{"stringValue":"db"}"#),
        attr("fencing.generation", r#"{"intValue":"1"}"#),
        attr("fencing.value", r#"{"stringValue":"v"}"#),
        attr("fencing.outcome", r#"{"stringValue":"maybe"}"#),
    ]
    .join(",");
    let e = otlp::read_otlp(&span("fencing.write", &outcome, 1, 2)).expect_err("bad outcome");
    says(&e, 1, Some("fencing.outcome"), "is not an outcome");
    let e = otlp::read_otlp("{\"resourceSpans\": [\n").expect_err("truncated");
    says(&e, 1, None, "JSON: EOF");
}

const LOG_RE: &str = r"^(?P<time>\d+) (?P<actor>\w+) (?P<kind>\w+)(?: r=(?P<resource>\w+))?(?: g=(?P<generation>\S+))?(?: ttl=(?P<ttl>\S+))?(?: op=(?P<op>\S+))?(?: v=(?P<value>\S+))?";

#[test]
fn log_errors_name_the_line_and_group() {
    let e = pattern::read_pattern("1 a acquire r=x g=0 ttl=10\n", LOG_RE).expect_err("zero");
    says(&e, 1, Some("generation"), "positive integer token required (got 0)");
    let e = pattern::read_pattern("noise\n1 a acquire r=x g=1 ttl=ten\n", LOG_RE).expect_err("ttl");
    says(&e, 2, Some("ttl"), "not a whole number");
    let e = pattern::read_pattern("1 a explode\n", LOG_RE).expect_err("kind");
    says(&e, 1, Some("kind"), "is not a kind this reader knows");
    let e = pattern::read_pattern("5000 a pause\n3 a resume\n", LOG_RE).expect_err("backwards");
    says(&e, 2, Some("time"), "time runs backwards by 4997 ms");
    // Dated stamps: measured from the line above, also when a stamp is before the first.
    let dated = r"^(?P<time>\S+) (?P<actor>\w+) (?P<kind>\w+)";
    let log = "2024-05-01T12:00:00.000Z a pause\n2024-05-01T12:00:00.500Z a resume\n2024-05-01T11:59:58.302Z a pause\n";
    let e = pattern::read_pattern(log, dated).expect_err("backwards");
    says(&e, 3, Some("time"), "time runs backwards by 2198 ms from the entry above");
    // A misspelt group is named rather than read as absent.
    let e = pattern::read_pattern("1 a pause\n", r"^(?P<time>\d+) (?P<actr>\w+) (?P<kind>\w+)")
        .expect_err("a misspelt group");
    assert!(
        e.to_string().contains("the pattern's group `actr` is not one this reader knows"),
        "{e}"
    );
    let e = pattern::read_pattern("1 a write_ok op=w1\n", LOG_RE).expect_err("no invocation");
    says(&e, 1, Some("op"), "without its invocation");
    let e = pattern::read_pattern("1 a pause\n", "(?P<actor>a)").expect_err("no kind group");
    assert!(e.problem.contains("no group named `kind`"), "{e}");
    let e = pattern::read_pattern("", "(?P<actor>(").expect_err("bad regex");
    assert!(e.problem.starts_with("the pattern:"), "{e}");
}

/// A worker is named by what the system calls it, often a host or pod name: one as long as a DNS
/// name is read, and one longer than any name is refused at the attribute that gave it.
#[test]
fn a_worker_named_like_a_host_is_read_and_an_overlong_name_is_refused() {
    let acquire = |holder: &str| {
        let attrs = [
            attr("lease.holder", &format!(r#"{{"stringValue":"{holder}"}}"#)),
            attr("fencing.resource", r#"{"stringValue":"r"}"#),
            attr("fencing.generation", r#"{"intValue":"1"}"#),
            attr("lease.ttl_ms", r#"{"intValue":"100"}"#),
        ]
        .join(",");
        span("lease.acquire", &attrs, 1_000_000, 2_000_000)
    };
    let host = format!("billing-{}.pods.cluster.local", "a".repeat(200));
    let read = otlp::read_otlp(&acquire(&host)).expect("a host-length name is a worker");
    assert_eq!(read.history.setup.workers, [host]);
    let e = otlp::read_otlp(&acquire(&"w".repeat(300))).expect_err("too long");
    says(
        &e,
        1,
        Some("resourceSpans[0].scopeSpans[0].spans[0].attributes.lease.holder"),
        "worker id is 300 characters long; the limit is 256",
    );
}

/// Processes that run at once log a little out of time order: a Jepsen `:time` that steps back
/// by under a millisecond across a millisecond's edge, or a log line stamped a few milliseconds
/// before the one above it, is read as the time of the entry above and counted.
#[test]
fn time_stamps_a_little_out_of_order_are_read_in_the_file_s_order() {
    let text = ACQUIRE
        .replace(r#""time":0,"value""#, r#""time":2000100,"value""#)
        .replace(r#""time":1000000,"value""#, r#""time":1999700,"value""#);
    let read = jepsen::read_jepsen(&text).expect("a step back of 0.4 ms reads");
    assert_eq!(read.stepped_back, StepsBack { count: 1, largest_ms: 1, first_line: 2 });
    assert!(read.history.entries.iter().all(|e| e.at.0 == 2), "{:?}", read.history.entries);
    let read = pattern::read_pattern("5 a pause\n3 a resume\n", LOG_RE).expect("2 ms back reads");
    assert_eq!(read.stepped_back, StepsBack { count: 1, largest_ms: 2, first_line: 2 });
    let stamped = "2024-12-31T07:50:16.609Z a pause\n2024-12-31T07:50:16.601Z a resume\n";
    let stamped_re = r"^(?P<time>\S+) (?P<actor>\w+) (?P<kind>\w+)";
    let read = pattern::read_pattern(stamped, stamped_re).expect("8 ms before the first reads");
    assert_eq!(read.stepped_back, StepsBack { count: 1, largest_ms: 8, first_line: 2 });
    // log4j's time stamps: no offset, a comma before the milliseconds.
    let log4j = "2024-12-31 07:50:16,609 a pause\n2024-12-31 07:50:17,010 a resume\n";
    let log4j_re = r"^(?P<time>\S+ \S+) (?P<actor>\w+) (?P<kind>\w+)";
    let read = pattern::read_pattern(log4j, log4j_re).expect("log4j time stamps read");
    let at: Vec<u64> = read.history.entries.iter().map(|e| e.at.0).collect();
    assert_eq!(at, [0, 401], "{:?}", read.history.entries);
    assert_eq!(read.history.entries[0].wall_ns, Some(1_735_631_416_609_000_000));
}

/// A worker the nemesis pauses that does nothing else is most likely a typo for another process,
/// and is named as such rather than drawn as a lane of its own.
#[test]
fn a_nemesis_acting_on_a_worker_that_does_nothing_else_is_named() {
    let nemesis = |worker: &str, time: u64| {
        format!(
            "{{\"type\":\"invoke\",\"process\":\"nemesis\",\"f\":\"pause\",\"time\":{time},\"value\":{{\"worker\":\"{worker}\"}}}}\n{{\"type\":\"info\",\"process\":\"nemesis\",\"f\":\"pause\",\"time\":{time}}}\n"
        )
    };
    let typo = format!("{ACQUIRE}{}", nemesis("p7", 3_000_000));
    let e = jepsen_err(&typo);
    says(&e, 4, Some("value.worker"), "the nemesis acts on p7, which does nothing else");
    let right = format!("{ACQUIRE}{}", nemesis("p0", 3_000_000));
    jepsen::read_jepsen(&right).expect("a pause of a worker that acts reads");
}

/// A `kind_NAME` group names its kind when it takes part in the match, even when it matches no
/// text.
#[test]
fn a_kind_group_that_matches_no_text_still_names_its_kind() {
    let re = r"^(?P<time>\d+) (?P<actor>\w+) (?:paused(?P<kind_pause>)|woke(?P<kind_resume>))";
    let read = pattern::read_pattern("1 a paused\n5 a woke\n", re).expect("both lines read");
    assert_eq!(read.history.entries.len(), 2, "{:?}", read.history.entries);
    // A misspelt kind is named when the pattern is read, before any line.
    let typo = re.replace("kind_resume", "kind_resme");
    let e = pattern::read_pattern("1 a paused\n", &typo).expect_err("a misspelt kind");
    assert!(e.to_string().contains("`kind_resme` names no kind this reader knows"), "{e}");
}

/// What a reader returns holds together: two writes on their way under one message id, or a
/// completion naming a path's data other than the setup's, are refused at their line.
#[test]
fn a_history_that_would_not_hold_together_is_refused_at_its_line() {
    let sent = |message: u64| {
        format!(
            r#"{{"type":"invoke","process":0,"f":"write","time":2000000,"value":{{"resource":"ledger","store":"db","generation":1,"value":"v","op":"a{message}","message":2}}}}"#
        )
    };
    let twice = format!("{ACQUIRE}{}\n{}\n", sent(1), sent(2));
    says(&jepsen_err(&twice), 4, Some("value.message"), "message 2 is already on its way");
    let done = r#"{"type":"ok","process":0,"f":"write","time":3000000,"value":{"resource":"ledger","store":"db","generation":1,"value":"v","op":"a1","message":2,"data":"elsewhere"}}"#;
    let setup = r#"{"type":"info","process":"fencelab","f":"setup","time":0,"value":{"workers":["p0"],"resources":["ledger"],"stores":[{"name":"db","critical":true,"paths":[{"name":"primary","data":"primary","enforcement":"fenced"}]}]}}"#;
    let other_data = format!("{setup}\n{ACQUIRE}{}\n{done}\n", sent(1));
    says(&jepsen_err(&other_data), 5, None, "writes \"primary\", not \"elsewhere\"");
}
