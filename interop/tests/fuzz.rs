//! Every reader on arbitrary bytes and on damaged valid input: an error or a history, never a
//! panic.

use fencelab_core::stories::library;
use fencelab_core::Engine;
use fencelab_interop::{jepsen, otlp, pattern};
use proptest::prelude::*;

fn sample(name: &str) -> String {
    let path = format!("{}/../examples/histories/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_default()
}

fn story() -> fencelab_core::History {
    let scenario = library::scenario("paused-worker", Some("broken")).expect("a built-in story");
    let mut engine = Engine::new(scenario).expect("compiles");
    engine.run().expect("runs");
    engine.history()
}

/// A damage to a text: cut a range out, splice bytes in, or repeat a line.
#[derive(Debug, Clone)]
enum Damage {
    Cut(usize, usize),
    Splice(usize, Vec<u8>),
    RepeatLine(usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 1..40usize).prop_map(|(at, len)| Damage::Cut(at, len)),
        (
            any::<usize>(),
            prop::collection::vec(
                prop_oneof![
                    Just(b'{'),
                    Just(b'}'),
                    Just(b'['),
                    Just(b'"'),
                    Just(b':'),
                    Just(b'-'),
                    Just(b'0'),
                    Just(b'\n'),
                    Just(b'\\'),
                    any::<u8>()
                ],
                1..8,
            )
        )
            .prop_map(|(at, bytes)| Damage::Splice(at, bytes)),
        any::<usize>().prop_map(Damage::RepeatLine),
    ]
}

fn apply(text: &str, damages: &[Damage]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for d in damages {
        let n = bytes.len().max(1);
        match d {
            Damage::Cut(at, len) => {
                let at = at % n;
                let end = (at + len).min(bytes.len());
                if at < end {
                    bytes.drain(at..end);
                }
            }
            Damage::Splice(at, new) => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, new.iter().copied());
            }
            Damage::RepeatLine(i) => {
                let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
                let line = lines[i % lines.len()].to_vec();
                let mut out = Vec::new();
                for (j, l) in lines.iter().enumerate() {
                    out.extend_from_slice(l);
                    out.push(b'\n');
                    if j == i % lines.len() {
                        out.extend_from_slice(&line);
                        out.push(b'\n');
                    }
                }
                bytes = out;
            }
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = jepsen::read_jepsen_bytes(&bytes);
        let _ = otlp::read_otlp_bytes(&bytes);
        let _ = pattern::read_pattern_bytes(&bytes, sample("app.pattern").trim_end());
    }

    #[test]
    fn damaged_jepsen_never_panics(damages in prop::collection::vec(damage(), 1..4)) {
        let history = story();
        for text in [jepsen::to_jepsen_edn(&history), jepsen::to_jepsen_json(&history), sample("jepsen.edn")] {
            let _ = jepsen::read_jepsen_bytes(&apply(&text, &damages));
        }
    }

    #[test]
    fn damaged_traces_and_logs_never_panic(damages in prop::collection::vec(damage(), 1..4)) {
        let _ = otlp::read_otlp_bytes(&apply(&sample("otlp.jsonl"), &damages));
        let _ = pattern::read_pattern_bytes(&apply(&sample("app.log"), &damages), sample("app.pattern").trim_end());
    }
}

#[test]
fn the_damage_reaches_the_readers() {
    // A repeated line is a second completion without its invocation: the fuzzing above does
    // exercise the readers' checks, not only their parsers.
    let text = sample("jepsen.edn");
    let completion = text.lines().position(|l| l.contains(":index 9,")).expect("op 9");
    let damaged = apply(&text, &[Damage::RepeatLine(completion)]);
    let e = jepsen::read_jepsen_bytes(&damaged).expect_err("a repeated completion");
    assert!(e.problem.contains("without its invocation"), "{e}");
}
