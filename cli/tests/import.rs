//! `fencelab audit` and `fencelab export` on other tools' histories: the samples in
//! examples/histories, bad input, and the export formats.

use std::process::{Command, Output};

fn fencelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/histories"))
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn audit_finds_the_stale_write_in_every_sample() {
    for args in [
        &["audit", "jepsen.edn"][..],
        &["audit", "--format", "jepsen", "jepsen.edn"],
        &["audit", "otlp.jsonl"],
        &["audit", "--pattern", "@app.pattern", "app.log"],
    ] {
        let out = fencelab(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out.stderr));
        let report = text(&out.stdout);
        assert!(report.contains("3 findings"), "{args:?}: {report}");
        assert!(report.contains("stale_write_accepted"), "{args:?}: {report}");
    }
}

#[test]
fn bad_input_exits_2_naming_the_file_line_and_field() {
    let dir = std::env::temp_dir().join(format!("fencelab-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let file = dir.join("bad.edn");
    std::fs::write(&file, "[{:type :invoke, :process 0, :f :write, :time 5,\n  :value {:resource \"r\", :store \"db\", :generation 0, :value \"v\"}}]\n")
        .expect("written");
    let out = fencelab(&["audit", file.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "bad.edn: line 1 (op 0): `value.generation`: positive integer token required (got 0)"
        ),
        "{err}"
    );
    let out = fencelab(&["audit", "--format", "pattern", "app.log"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--pattern"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn export_writes_jepsen_and_itf() {
    let out = fencelab(&["export", "paused-worker/broken", "--to", "jepsen-edn"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let edn = text(&out.stdout);
    assert!(edn.starts_with("[{:f :setup"), "{edn}");
    let json = text(&fencelab(&["export", "paused-worker/broken", "--to", "jepsen-json"]).stdout);
    let ops: serde_json::Value = serde_json::from_str(&json).expect("a JSON array");
    assert!(ops.as_array().is_some_and(|ops| ops.len() > 10));
    // A Jepsen file exports too, here as an ITF trace whose last state holds the findings.
    let out = fencelab(&["export", "jepsen.edn", "--to", "itf"]);
    let trace: serde_json::Value = serde_json::from_slice(&out.stdout).expect("ITF is JSON");
    let states = trace["states"].as_array().expect("states");
    assert_eq!(states.len(), 14);
    assert_eq!(states[13]["findings"][0]["invariant"], "stale_write_accepted");
    assert_eq!(states[13]["highest"]["#map"][0][0]["#tup"][0], "db");
}

#[test]
fn a_log_converts_to_a_history_the_page_opens_and_audit_judges_the_same() {
    let converted = fencelab(&["export", "app.log", "--pattern", "@app.pattern", "--to", "jsonl"]);
    assert_eq!(converted.status.code(), Some(0), "{}", text(&converted.stderr));
    let history = text(&converted.stdout);
    assert!(history.starts_with("{\"fencelab_history\":2,"), "{history}");
    let judged = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["audit", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().expect("a pipe").write_all(history.as_bytes())?;
            child.wait_with_output()
        })
        .expect("the binary runs");
    assert_eq!(judged.status.code(), Some(1));
    assert!(text(&judged.stdout).contains("-: 12 events, 3 findings"), "{}", text(&judged.stdout));
    // The timed-out Jepsen write can only be possible: inconclusive.
    let maybe = fencelab(&["audit", "jepsen-timeout.edn"]);
    assert_eq!(maybe.status.code(), Some(3), "{}", text(&maybe.stdout));
}

/// `fencelab audit` on a file named `name` holding `contents`, in a temporary folder removed
/// afterwards.
fn audit_text(name: &str, contents: &str) -> Output {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = dir.path().join(name);
    std::fs::write(&file, contents).expect("written");
    fencelab(&["audit", file.to_str().unwrap_or_default()])
}

/// Entries stamped a little before the one above them are read, and the audit says how many and
/// by how much.
#[test]
fn audit_reads_time_stamps_a_little_out_of_order_and_says_so() {
    let out = audit_text(
        "jitter.json",
        r#"[{"type":"invoke","process":0,"f":"acquire","time":3000000,"value":{"resource":"r"}},
{"type":"ok","process":0,"f":"acquire","time":2600000,"value":{"resource":"r","generation":1,"ttl":100}}]"#,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("jitter.json: 1 time stamp was earlier than the one above (by up to 1 ms; the first on line"),
        "{err}"
    );
}

/// A history with its header and nothing else is refused as an imported file with no events is:
/// an audit that judged nothing must not read as a clean bill.
#[test]
fn a_history_with_no_events_is_refused_like_an_empty_import() {
    let header =
        r#"{"fencelab_history":1,"setup":{"workers":["A"],"resources":["r"],"stores":[]}}"#;
    let out = audit_text("empty.jsonl", &format!("{header}\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("empty.jsonl: the history has its header and no events"));
}

/// An empty Jepsen history is named as one, and a cut-off EDN file says where the form it ends
/// in was opened.
#[test]
fn an_empty_jepsen_history_and_a_cut_off_one_are_named_as_such() {
    let empty_out = audit_text("empty.json", "[]\n");
    let cut_out = audit_text(
        "cut.edn",
        "[{:type :invoke, :process 0,\n :f :acquire, :value {:resource \"r\"",
    );
    assert_eq!(empty_out.status.code(), Some(2));
    assert!(text(&empty_out.stderr).contains("empty.json: the Jepsen history holds no operations"));
    assert_eq!(cut_out.status.code(), Some(2));
    let err = text(&cut_out.stderr);
    assert!(
        err.contains(
            "cut.edn: line 2: EDN: the input ends before the '{' opened on line 2 is closed"
        ),
        "{err}"
    );
}

/// A grant sits on its completion's line, after entries that come later in the history (here
/// a generation issued twice, found where the second grant's call began): the report lists
/// findings in the file's order of lines.
#[test]
fn findings_are_listed_in_the_order_of_the_file_s_lines() {
    let out = audit_text(
        "order.json",
        r#"[{"type":"invoke","process":0,"f":"acquire","time":0,"value":{"resource":"r"}},
{"type":"invoke","process":1,"f":"acquire","time":1000000,"value":{"resource":"r"}},
{"type":"ok","process":0,"f":"acquire","time":2000000,"value":{"resource":"r","generation":1,"ttl":1000}},
{"type":"invoke","process":0,"f":"write","time":3000000,"value":{"resource":"r","store":"db","generation":9,"value":"a","op":"a1"}},
{"type":"ok","process":0,"f":"write","time":4000000,"value":{"resource":"r","store":"db","generation":9,"value":"a","op":"a1"}},
{"type":"ok","process":1,"f":"acquire","time":5000000,"value":{"resource":"r","generation":1,"ttl":1000}}]"#,
    );
    let report = text(&out.stdout);
    let (five, six) = (report.find("  line 5 "), report.find("  line 6 "));
    assert!(five.is_some() && six.is_some() && five < six, "{report}");
}

/// A lock test in its own words reads through a mapping: the blocking hand-off is at most a
/// possible overlap, the token handed out twice is certain, and the report says which
/// generation stands for which token. Without the mapping, the message says how to give one.
#[test]
fn a_lock_history_in_its_own_words_audits_through_a_mapping() {
    let out = fencelab(&["audit", "lock.edn"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--map lock=MEANING"), "{}", text(&out.stderr));
    let out = fencelab(&[
        "audit",
        "lock.edn",
        "--map",
        "lock=acquire,unlock=release",
        "--map",
        "lock-name=resource,value=generation",
        "--opaque-tokens",
        "--ttl",
        "10000",
    ]);
    let (report, err) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{report}{err}");
    assert!(report.contains("2 findings"), "{report}");
    assert!(report.contains("leases_overlap (possible"), "{report}");
    assert!(report.contains("generation_reissued: the authority issued generation 1"), "{report}");
    assert!(err.contains(r#"alpha 1 = "lt-7f3a", alpha 2 = "lt-91c0""#), "{err}");
    // A rename is NAME=MEANING, and a log's pattern names its fields itself.
    // Without --ttl the leases are of unknown length, and the report says what that leaves.
    let mapped = ["lock=acquire,unlock=release,lock-name=resource,value=generation"];
    let out = fencelab(&["audit", "lock.edn", "--map", mapped[0], "--opaque-tokens"]);
    let report = text(&out.stdout);
    assert!(
        report.contains("3 lease grants (3 of unknown length: a write under such a lease"),
        "{report}"
    );
    let out = fencelab(&["audit", "lock.edn", "--map", "lock"]);
    assert!(text(&out.stderr).contains("is not a rename; write NAME=MEANING"));
    let out = fencelab(&["audit", "app.log", "--pattern", "@app.pattern", "--map", "lock=acquire"]);
    assert!(
        text(&out.stderr).contains("--map, --opaque-tokens and --resource read Jepsen histories")
    );
    // A typo in a meaning is named, with what it could be.
    let out = fencelab(&["audit", "lock.edn", "--map", "lock=aquire"]);
    assert!(
        text(&out.stderr).contains("\"aquire\" is neither an operation (acquire"),
        "{}",
        text(&out.stderr)
    );
}

/// A store's own log of what it accepted and refused, with log4j time stamps and no writer
/// names, audits as it is; a log in a format of its own reads through --time-format.
#[test]
fn a_store_s_own_log_audits_as_it_is() {
    let out = fencelab(&["audit", "journal.log", "--pattern", "@journal.pattern"]);
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}{}", text(&out.stderr));
    assert!(report.contains("6 writes decided"), "{report}");
    assert!(report.contains("(the history does not show the authority's grants)"), "{report}");

    let dir = std::env::temp_dir().join(format!("fencelab-timefmt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let log = dir.join("access.log");
    std::fs::write(
        &log,
        "[01/May/2024:14:00:00 +0200] db accepted epoch=5\n[01/May/2024:14:00:01 +0200] db accepted epoch=4\n",
    )
    .expect("written");
    let pattern = r"^\[(?P<time>[^\]]+)\] (?P<store>\w+) (?P<kind>accepted|refused) epoch=(?P<generation>\d+)";
    let log = log.to_str().expect("a UTF-8 path");
    let out = fencelab(&["audit", log, "--pattern", pattern]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--time-format"), "{}", text(&out.stderr));
    let out =
        fencelab(&["audit", log, "--pattern", pattern, "--time-format", "%d/%b/%Y:%H:%M:%S %z"]);
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}{}", text(&out.stderr));
    assert!(report.contains("stale_write_accepted"), "{report}");
    std::fs::remove_dir_all(&dir).ok();
}
