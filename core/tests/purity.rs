//! `fencelab-core` is pure: no I/O, no clock, no randomness, and nothing of the browser, so the
//! same scenario and schedule always give the same history, and the page and the command line
//! drive the same code. This test reads the crate's manifest and every source file for what
//! would break that.

use std::path::{Path, PathBuf};

/// Crates that do I/O, read a clock, draw random numbers or tie the core to the browser.
const FORBIDDEN_CRATES: &[&str] = &[
    "yew",
    "web-sys",
    "js-sys",
    "wasm-bindgen",
    "gloo",
    "tokio",
    "async-std",
    "rand",
    "getrandom",
    "fastrand",
    "chrono",
    "time",
    "ureq",
    "reqwest",
    "rusqlite",
    "postgres",
    "libc",
];

/// What in a source line reaches the outside world: files, the network, processes, the
/// environment, the clock, standard output.
const FORBIDDEN_PATHS: &[&str] = &[
    "std::fs",
    "std::net",
    "std::process",
    "std::env",
    "Instant::now",
    "SystemTime",
    "thread_rng",
    "stdin()",
    "stdout()",
    "stderr()",
    "println!",
    "eprintln!",
    "print!(",
    "eprint!(",
];

fn core_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The forbidden uses in one file's text, as `line: text`; comments (documentation included:
/// its examples are run as tests, not by the crate) are not code.
fn impure_lines(text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .filter(|(_, line)| FORBIDDEN_PATHS.iter().any(|p| line.contains(p)))
        .map(|(i, line)| format!("{}: {}", i + 1, line.trim()))
        .collect()
}

/// The names of the `[dependencies]` of a manifest (not dev-dependencies: tests and benches may
/// read files and clocks).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut in_dependencies = false;
    let mut names = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies && !line.starts_with('#') {
            // `name = "1"`, `name = { ... }` or `name.workspace = true`.
            if let Some((key, _)) = line.split_once('=') {
                let name = key.trim().split('.').next().unwrap_or_default();
                names.push(name.to_string());
            }
        }
    }
    names
}

fn forbidden(name: &str) -> bool {
    FORBIDDEN_CRATES.iter().any(|f| name == *f || name.starts_with(&format!("{f}-")))
}

#[test]
fn the_core_depends_on_no_crate_that_does_io_reads_a_clock_or_knows_the_browser() {
    let manifest = std::fs::read_to_string(core_dir().join("Cargo.toml")).unwrap();
    let names = dependencies(&manifest);
    assert!(names.iter().any(|n| n == "serde"), "the manifest was not read: {names:?}");
    let bad: Vec<&String> = names.iter().filter(|n| forbidden(n)).collect();
    assert!(bad.is_empty(), "fencelab-core depends on {bad:?}, which the core must not");
}

#[test]
fn no_source_file_of_the_core_reaches_files_the_network_processes_or_the_clock() {
    let mut files = Vec::new();
    rust_files(&core_dir().join("src"), &mut files);
    assert!(files.len() > 20, "the sources were not found: {files:?}");
    let found: Vec<String> = files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let name = file.strip_prefix(core_dir()).unwrap().display().to_string();
            impure_lines(&text).into_iter().map(move |line| format!("{name}:{line}"))
        })
        .collect();
    assert!(found.is_empty(), "the core must not do I/O or read a clock:\n{}", found.join("\n"));
}

/// The test of the test: what it must catch, it catches.
#[test]
fn the_purity_checks_catch_a_clock_a_file_and_a_browser_crate() {
    let source = "use std::time::Instant;\nfn f() { let t = Instant::now(); }\n\
                  // Instant::now in a comment is fine\nfn g() { std::fs::read(\"x\"); }\n";
    assert_eq!(impure_lines(source).len(), 2, "{:?}", impure_lines(source));
    let manifest = "[package]\nname = \"x\"\n[dependencies]\nserde.workspace = true\n\
                    web-sys = \"0.3\"\n[dev-dependencies]\nrand = \"0.9\"\n";
    let bad: Vec<String> = dependencies(manifest).into_iter().filter(|n| forbidden(n)).collect();
    assert_eq!(bad, ["web-sys"]);
}
