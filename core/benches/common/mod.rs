//! What the benches read about the process's own memory, from /proc (Linux only; elsewhere the
//! figures print as "n/a"). The core never does this: it only estimates.

/// A field of /proc/self/status in MiB, e.g. `VmHWM` (the peak resident memory) or `VmRSS`.
fn status_mib(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line =
        status.lines().find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The process's peak resident memory since the last [`reset_peak`], in MiB.
pub fn peak_rss() -> Option<f64> {
    status_mib("VmHWM")
}

/// The process's resident memory now, in MiB.
pub fn rss() -> Option<f64> {
    status_mib("VmRSS")
}

/// Starts a new peak from the current resident memory, so each case reports its own peak rather
/// than the largest so far (Linux 4.0 and later). Returns whether it worked.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// `mib` with no decimals, or "n/a".
pub fn mib(mib: Option<f64>) -> String {
    mib.map_or_else(|| "n/a".into(), |m| format!("{m:.0} MiB"))
}

/// Whether this is a timed run (`cargo bench`) rather than `cargo test --benches`, which runs each
/// bench once and has no use for the memory figures printed before the table.
pub fn is_bench_run() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list")
}
