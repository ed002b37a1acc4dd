//! `fencelab lab`, run as a user runs it: real worker processes, a real SIGSTOP, real stores.
//! Leases last 800 ms and the pause 2 s, so each run takes about two seconds plus the store's
//! start-up.

// The tests signal the lab and its workers through the C library.
#![allow(unsafe_code)]

use fencelab_core::{invariant::InvariantKind, Checker, Event, History, WriteOutcome};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

fn fencelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fencelab")).args(args).output().expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the lab with an 800 ms lease and a 2 s pause, writing its history into `dir`. The
/// lease is long enough for a worker to renew it on a loaded machine (at 300 ms, one whose two
/// cores were busy compiling missed a renewal, and the lab rightly refused to show a stale write).
fn lab(dir: &Path, extra: &[&str]) -> (Output, PathBuf) {
    let out = dir.join("lab.jsonl");
    let mut args = vec!["lab", "--ttl-ms", "800", "--pause-ms", "2000", "--out"];
    args.push(out.to_str().expect("a UTF-8 path"));
    args.extend_from_slice(extra);
    (fencelab(&args), out)
}

fn read_history(path: &Path) -> History {
    History::from_jsonl(&std::fs::read_to_string(path).expect("the history was written"))
        .expect("the history reads back")
}

/// A's write after it was resumed: the one sent with its old token.
fn late_write(history: &History) -> WriteOutcome {
    let granted = history
        .entries
        .iter()
        .find_map(|e| match &e.event {
            Event::LeaseGranted { worker, generation, .. } if worker == "A" => Some(*generation),
            _ => None,
        })
        .expect("A was granted a lease");
    let resumed = history
        .entries
        .iter()
        .position(|e| matches!(&e.event, Event::Resumed { worker, .. } if worker == "A"))
        .expect("A was resumed");
    history.entries[resumed..]
        .iter()
        .find_map(|e| match &e.event {
            Event::WriteArrived { worker, request, outcome, .. } if worker == "A" => {
                assert_eq!(request.generation, granted, "A writes with its old token");
                Some(outcome.clone())
            }
            _ => None,
        })
        .expect("A wrote after it was resumed")
}

/// The pause recorded (at least `pause_ms`) and the newer grant that happened while A was
/// frozen.
fn assert_real_pause(history: &History, pause_ms: u64) {
    let at = |pick: &dyn Fn(&Event) -> bool| {
        history.entries.iter().find(|e| pick(&e.event)).map(|e| e.wall_ns.expect("wall time"))
    };
    let paused = at(&|e| matches!(e, Event::Paused { worker, .. } if worker == "A")).unwrap();
    let resumed = at(&|e| matches!(e, Event::Resumed { worker, .. } if worker == "A")).unwrap();
    assert!(resumed - paused >= pause_ms * 1_000_000, "A was frozen for at least the pause");
    let newer = at(&|e| matches!(e, Event::LeaseGranted { worker, .. } if worker == "B")).unwrap();
    assert!(paused < newer && newer < resumed, "B took the lease while A was frozen");
}

#[test]
fn sqlite_fenced_the_database_refuses_the_stale_write() {
    let dir = tempfile::tempdir().unwrap();
    let (output, path) = lab(dir.path(), &["--fenced"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", text(&output.stderr));
    let history = read_history(&path);
    assert_real_pause(&history, 2000);
    assert!(matches!(late_write(&history), WriteOutcome::Rejected(_)));
    assert!(Checker::judge(&history).is_empty());
    assert!(stdout.contains("0 findings"), "{stdout}");
    assert!(stdout.contains("sqlite refused the stale write"), "{stdout}");
    assert!(stdout.contains("\"Open a history\""), "{stdout}");
    assert_eq!(fencelab(&["audit", path.to_str().unwrap()]).status.code(), Some(0));
}

#[test]
fn sqlite_unfenced_the_stale_write_lands_and_the_audit_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let (output, path) = lab(dir.path(), &["--unfenced", "--workers", "3"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{}", text(&output.stderr));
    let history = read_history(&path);
    assert_real_pause(&history, 2000);
    assert!(matches!(late_write(&history), WriteOutcome::Applied(_)));
    let found = Checker::judge(&history);
    assert!(found.iter().any(|v| v.invariant == InvariantKind::StaleWriteAccepted), "{found:?}");
    assert!(
        stdout.contains("stale_write_accepted: ledger in sqlite accepted A's write"),
        "{stdout}"
    );
    let audit = fencelab(&["audit", path.to_str().unwrap()]);
    assert_eq!(audit.status.code(), Some(1));
    assert!(text(&audit.stdout).contains("stale_write_accepted"));
}

#[test]
fn postgres_fenced_the_database_refuses_the_stale_write() {
    let dir = tempfile::tempdir().unwrap();
    let (output, path) = lab(dir.path(), &["--store", "postgres"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", text(&output.stderr));
    let history = read_history(&path);
    assert_real_pause(&history, 2000);
    assert!(matches!(late_write(&history), WriteOutcome::Rejected(_)));
    assert!(Checker::judge(&history).is_empty());
    assert!(stdout.contains("postgres refused the stale write"), "{stdout}");
    let folder = value_after(&stdout, "temporary folder: ");
    assert!(!Path::new(&folder).exists(), "{folder} was deleted");
}

#[test]
fn postgres_unfenced_the_stale_write_lands() {
    let dir = tempfile::tempdir().unwrap();
    let (output, path) = lab(dir.path(), &["--store", "postgres", "--unfenced"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{}", text(&output.stderr));
    let history = read_history(&path);
    assert!(matches!(late_write(&history), WriteOutcome::Applied(_)));
    let found = Checker::judge(&history);
    assert!(found.iter().any(|v| v.invariant == InvariantKind::StaleWriteAccepted), "{found:?}");
    assert!(stdout.contains("the stale write landed in postgres"), "{stdout}");
}

#[test]
fn etcd_authority_fenced_and_unfenced() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, code) in [("--fenced", 0), ("--unfenced", 1)] {
        let out = dir.path().join(format!("lab{mode}.jsonl"));
        let output = fencelab(&[
            "lab",
            "--authority",
            "etcd",
            "--ttl-ms",
            "1000",
            "--pause-ms",
            "1200",
            mode,
            "--out",
            out.to_str().unwrap(),
        ]);
        let stdout = text(&output.stdout);
        assert_eq!(output.status.code(), Some(code), "{stdout}\n{}", text(&output.stderr));
        let history = read_history(&out);
        assert_real_pause(&history, 1200);
        let found = Checker::judge(&history);
        match late_write(&history) {
            WriteOutcome::Rejected(_) => assert!(code == 0 && found.is_empty(), "{found:?}"),
            WriteOutcome::Applied(_) => assert!(
                code == 1 && found.iter().any(|v| v.invariant == InvariantKind::StaleWriteAccepted),
                "{found:?}"
            ),
            other => panic!("{other:?}"),
        }
        let folders: Vec<&str> =
            stdout.lines().filter_map(|l| l.strip_prefix("temporary folder: ")).collect();
        assert_eq!(folders.len(), 2, "the store's and etcd's: {stdout}");
        assert!(folders.iter().all(|f| !Path::new(f).exists()), "{folders:?} deleted");
    }
    let output = fencelab(&["lab", "--authority", "etcd", "--ttl-ms", "1500"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("whole number of seconds"));
}

#[test]
fn default_history_names_keep_authorities_apart() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .args(["lab", "--unfenced"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("the binary runs");
        assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
        text(&output.stdout)
    };
    let builtin = run(&["--ttl-ms", "800", "--pause-ms", "2000"]);
    assert!(builtin.contains("history: lab-sqlite-unfenced.jsonl ("), "{builtin}");
    let etcd = run(&["--authority", "etcd", "--ttl-ms", "1000", "--pause-ms", "1200"]);
    assert!(etcd.contains("history: lab-sqlite-etcd-unfenced.jsonl ("), "{etcd}");
    // The second run left the first one's history alone.
    let first = read_history(&dir.path().join("lab-sqlite-unfenced.jsonl"));
    assert!(first.entries.iter().any(|e| matches!(&e.event, Event::Resumed { .. })));
    let second = read_history(&dir.path().join("lab-sqlite-etcd-unfenced.jsonl"));
    assert_ne!(first, second);
}

/// The text after `prefix` on the first line that starts with it.
fn value_after(stdout: &str, prefix: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in:\n{stdout}"))
        .to_string()
}

/// A lab started with its output piped, read line by line until `until` (inclusive).
struct Running {
    child: Child,
    lines: Vec<String>,
    reader: BufReader<std::process::ChildStdout>,
}

impl Running {
    fn start(out: &Path, extra: &[&str]) -> Running {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fencelab"))
            .args(["lab", "--ttl-ms", "300", "--out", out.to_str().unwrap()])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let reader = BufReader::new(child.stdout.take().unwrap());
        Running { child, lines: Vec::new(), reader }
    }

    fn read_until(&mut self, start: &str) -> String {
        loop {
            let mut line = String::new();
            let read = self.reader.read_line(&mut line).unwrap();
            assert!(read > 0, "the lab ended before {start:?}:\n{}", self.lines.join(""));
            self.lines.push(line.clone());
            if line.starts_with(start) {
                return line.trim_end().to_string();
            }
        }
    }

    fn worker_pids(&self) -> Vec<u32> {
        self.lines
            .iter()
            .filter_map(|l| l.strip_prefix("worker ")?.split("pid ").nth(1)?.trim().parse().ok())
            .collect()
    }

    fn finish(mut self) -> (Option<i32>, String) {
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        (status.code(), stderr)
    }
}

/// Whether a lab worker runs as `pid` (a number the system may have given to another process
/// since).
fn is_lab_worker(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|cmdline| text(&cmdline).contains("lab-worker"))
}

fn signal(pid: i64, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(pid).unwrap();
    // SAFETY: sends a signal to a process this test started or the lab reported; no memory.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "{}", std::io::Error::last_os_error());
}

#[test]
fn ctrl_c_mid_run_stops_every_worker_and_deletes_the_temporary_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lab.jsonl");
    let mut lab = Running::start(&out, &["--pause-ms", "30000"]);
    let folder = lab.read_until("temporary folder: ");
    let folder = folder.trim_start_matches("temporary folder: ").to_string();
    lab.read_until("froze A");
    let pids = lab.worker_pids();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|p| is_lab_worker(*p)));
    signal(i64::from(lab.child.id()), libc::SIGINT);
    let (code, stderr) = lab.finish();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by Ctrl-C"), "{stderr}");
    for pid in pids {
        assert!(!is_lab_worker(pid), "worker {pid} is still there");
    }
    assert!(!Path::new(&folder).exists(), "{folder} is still there");
    let history = read_history(&out);
    assert_eq!(history.setup.incomplete.as_deref(), Some("interrupted by Ctrl-C"));
    assert!(history.entries.iter().any(|e| matches!(e.event, Event::Paused { .. })));
}

#[test]
fn ctrl_c_while_postgresql_starts_is_an_interrupt_and_leaves_no_folder() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    // The server's folder goes here; as root the server runs as `postgres`, who must enter it.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = dir.path().join("lab.jsonl");
    // Its own process group, as a terminal runs it: a Ctrl-C there signals the whole group.
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencelab"))
        .args(["lab", "--store", "postgres", "--ttl-ms", "300", "--out", out.to_str().unwrap()])
        .env("TMPDIR", &tmp)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(first.starts_with("fencelab lab: "), "{first}");
    // initdb is running now: it takes longer than this.
    std::thread::sleep(std::time::Duration::from_millis(300));
    signal(-i64::from(child.id()), libc::SIGINT);
    let mut stdout = first;
    std::io::Read::read_to_string(&mut reader, &mut stdout).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("error: interrupted by Ctrl-C"), "{stderr}");
    assert!(!stderr.contains("initdb"), "{stderr}");
    assert!(!stdout.contains("worker A: pid"), "interrupted before any worker: {stdout}");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let history = read_history(&out);
    assert_eq!(history.setup.incomplete.as_deref(), Some("interrupted by Ctrl-C"));
}

#[test]
fn a_killed_postmaster_ends_the_lab_with_an_incomplete_history() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lab.jsonl");
    let mut lab = Running::start(&out, &["--store", "postgres", "--pause-ms", "900"]);
    let store = lab.read_until("store: ");
    let postmaster: i64 = store
        .split("postmaster pid ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no postmaster pid in {store:?}"));
    let folder = lab.read_until("temporary folder: ");
    let folder = folder.trim_start_matches("temporary folder: ").to_string();
    // A is frozen; B is waiting for A's lease to end before it writes.
    lab.read_until("froze A");
    signal(postmaster, libc::SIGKILL);
    let pids = lab.worker_pids();
    let (code, stderr) = lab.finish();
    assert_eq!(code, Some(4), "{stderr}");
    assert!(stderr.contains("worker B failed: "), "{stderr}");
    assert!(stderr.contains("the connection to PostgreSQL was lost"), "{stderr}");
    // The server's own words, not the client's bare "db error".
    assert!(stderr.contains("FATAL 57P01 terminating connection"), "{stderr}");
    for pid in pids {
        assert!(!is_lab_worker(pid), "worker {pid} is still there");
    }
    assert!(!Path::new(&folder).exists(), "{folder} is still there");
    let history = read_history(&out);
    let why = history.setup.incomplete.clone().expect("marked incomplete");
    assert!(why.starts_with("worker B failed"), "{why}");
    // B's connection broke before it sent anything: its look at the store before its write
    // failed, so no write of B's is in the history, neither sent nor of unknown outcome.
    assert!(
        stderr.contains("worker B failed: before its write, reading ledger failed"),
        "{stderr}"
    );
    assert!(!history.entries.iter().any(|e| matches!(
        &e.event,
        Event::WriteSent { worker, .. } | Event::WriteUnknown { worker, .. } if worker == "B"
    )));
    // What the recording left out may hold a finding: the audit is inconclusive, not clean.
    let audit = fencelab(&["audit", out.to_str().unwrap()]);
    assert_eq!(audit.status.code(), Some(3));
    assert!(text(&audit.stdout).contains("incomplete: the recording stopped before the run ended"));
}

#[test]
fn bad_options_are_refused_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lab.jsonl");
    let output =
        fencelab(&["lab", "--ttl-ms", "300", "--pause-ms", "300", "--out", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("--pause-ms (300) must be longer than --ttl-ms (300)"), "{stderr}");
    assert!(!path.exists());
    // A lease this short runs out before A can be frozen: refused at once, not a 20 s stall.
    let output =
        fencelab(&["lab", "--ttl-ms", "5", "--pause-ms", "20", "--out", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("--ttl-ms (5) must be at least 100"), "{stderr}");
    assert!(!path.exists());
    let output = fencelab(&["lab", "--workers", "1"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("invalid value '1' for '--workers <N>'"), "{stderr}");
    let help = text(&fencelab(&["lab", "--help"]).stdout);
    for code in ["0 ", "1 ", "2 ", "3 ", "4 ", "130"] {
        assert!(help.contains(&format!("\n  {code}")), "exit code {code} in:\n{help}");
    }
}
