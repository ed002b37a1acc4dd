//! Auditing a history: reading JSON Lines with `JsonlParser` and judging every entry with the
//! `Checker`, timed with divan. Prints figures; asserts nothing about time.
//!
//! Run with `cargo bench -p fencelab-core --bench audit`. The history is the 103,900-step run of
//! 500 workers taking 22 turns each, written as JSON Lines once before timing. The baseline,
//! measured in the same run, parses the same lines into `serde_json::Value`s and does nothing
//! else, so the ratio of the two is what reading events as typed entries, checking how they link
//! and judging them costs over reading JSON at all.

use divan::counter::ItemsCount;
use divan::Bencher;
use fencelab_core::stories::library;
use fencelab_core::{history::JsonlParser, Checker, Engine};
use std::sync::OnceLock;

fn main() {
    divan::main();
}

/// The history's lines, made once.
fn lines() -> &'static [String] {
    static LINES: OnceLock<Vec<String>> = OnceLock::new();
    LINES.get_or_init(|| {
        let mut engine = Engine::new(library::generated(500, 100, 22)).expect("a valid scenario");
        engine.run().expect("the run ends");
        engine.history().to_jsonl().lines().map(str::to_string).collect()
    })
}

#[divan::bench(sample_count = 10)]
fn audit(bencher: Bencher) {
    let lines = lines();
    bencher.counter(ItemsCount::new(lines.len() - 1)).bench(|| {
        let mut parser = JsonlParser::new();
        let mut checker: Option<Checker> = None;
        let (mut step, mut found) = (0, 0);
        for line in lines {
            let Some(entry) = parser.line(line).expect("a valid history") else { continue };
            let checker = checker
                .get_or_insert_with(|| Checker::new(parser.setup().cloned().unwrap_or_default()));
            found += checker.feed(step, &entry).violations.len();
            step += 1;
        }
        found
    });
}

#[divan::bench(sample_count = 10)]
fn audit_baseline_parse_json(bencher: Bencher) {
    let lines = lines();
    bencher.counter(ItemsCount::new(lines.len() - 1)).bench(|| {
        lines
            .iter()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .map_or(0, |v| v.as_object().map_or(0, |o| o.len()))
            })
            .sum::<usize>()
    });
}
