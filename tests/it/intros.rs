//! Every variant of a built-in story has its own intro: the set-up all variants share, then a
//! line that says how this variant is set up; and its own outcome, which says what the run does.
//! A learner reads them above the diagram, so neither may describe what another variant does,
//! and the intro, shown to a reader predicting the outcome, must not give the outcome away.

use fencelab_core::stories::library;

/// The intro of one built-in variant.
fn intro(name: &str, variant: &str) -> String {
    library::scenario(name, Some(variant)).unwrap_or_else(|e| panic!("{e}")).intro
}

/// Everything a built-in variant tells without the quiz: its intro, then its outcome.
fn told(name: &str, variant: &str) -> String {
    let scenario = library::scenario(name, Some(variant)).unwrap();
    format!("{} {}", scenario.intro, scenario.outcome)
}

/// The longest common prefix of `intros` that ends at a sentence: the shared set-up.
fn shared_set_up(intros: &[String]) -> &str {
    let first = &intros[0];
    let mut common = first.len();
    for other in &intros[1..] {
        common = first.bytes().zip(other.bytes()).take(common).take_while(|(a, b)| a == b).count();
    }
    // With one variant there is nothing to compare: its line is its last sentence.
    if intros.len() == 1 {
        common = first.trim_end_matches('.').len();
    }
    first[..common].rfind(". ").map_or("", |end| &first[..=end])
}

#[test]
fn each_variant_has_its_own_line_after_the_shared_set_up() {
    for case in library::cases() {
        let intros: Vec<String> = case.variants.iter().map(|v| intro(&case.name, v)).collect();
        let shared = shared_set_up(&intros);
        assert!(!shared.is_empty(), "{}: no shared set-up before the variants' lines", case.name);
        for (variant, text) in case.variants.iter().zip(&intros) {
            let line = &text[shared.len()..];
            assert!(
                line.starts_with(' ') && line.trim().len() > 20,
                "{}/{variant}: no line of its own after the set-up: {text:?}",
                case.name
            );
            let others = case.variants.iter().zip(&intros).filter(|(v, _)| *v != variant);
            for (other, other_text) in others {
                assert_ne!(text, other_text, "{}: {variant} and {other} read the same", case.name);
            }
        }
        // The default variant's intro is the one the picker shows first.
        let default = library::scenario(&case.name, None).unwrap();
        assert_eq!(default.intro, intros[0], "{}", case.name);
    }
}

#[test]
fn an_intro_names_what_the_checker_flags_only_when_the_run_breaks_something() {
    for scenario in library::all() {
        let flags = scenario.outcome.contains("checker flags");
        let breaks = !scenario.expect.violations.is_empty();
        assert_eq!(
            flags, breaks,
            "{}/{}: expects {:?}, outcome: {}",
            scenario.name, scenario.variant, scenario.expect.violations, scenario.outcome
        );
    }
}

/// Phrases that tell what a run does to a write, which only an outcome may say.
const RESULTS: &[&str] = &[
    "checker flags",
    "is refused",
    "are refused",
    "refuses A",
    "lands",
    "replaces",
    "stored result",
    "drops",
    "is accepted",
    "accepts it",
    "debited once",
    "charged twice",
];

#[test]
fn an_intro_sets_the_scene_and_the_outcome_tells_the_result() {
    for scenario in library::all() {
        let label = format!("{}/{}", scenario.name, scenario.variant);
        assert!(scenario.outcome.len() > 20, "{label}: no outcome");
        for phrase in RESULTS {
            assert!(!scenario.intro.contains(phrase), "{label}: the intro says {phrase:?}");
        }
        assert!(!scenario.intro.contains(&scenario.outcome));
    }
}

/// `(case, variant, must say, must not say)`: facts about what each variant really does.
const FACTS: &[(&str, &str, &[&str], &[&str])] = &[
    ("payment-capture", "fenced", &["drops A's late request"], &["twice"]),
    ("payment-capture", "broken", &["checks no tokens", "charged twice"], &["drop", "remembers"]),
    ("wall-clock-tokens", "fenced", &["authority's counter", "A's late write"], &["B is refused"]),
    (
        "wall-clock-tokens",
        "broken",
        &["clock readings as tokens", "B is refused"],
        &["authority's counter"],
    ),
    ("check-then-write", "atomic", &["in one step", "A's write is refused"], &["on top"]),
    (
        "check-then-write",
        "check-then-write",
        &["separate step", "lands on top"],
        &["is refused", "one step"],
    ),
    ("duplicate-capture", "fenced", &["drops B's capture as a duplicate"], &["captured a second"]),
    ("duplicate-capture", "broken", &["captured a second time"], &["drop"]),
    ("authority-restart", "fenced", &["generation 3"], &["refuses C"]),
    ("authority-restart", "broken", &["refuses C"], &["generation 3"]),
    ("forged-token", "authenticated", &["M's forged token fails"], &["M's write lands"]),
    ("forged-token", "unauthenticated", &["M's write lands"], &["fails the check"]),
    ("same-owner-updates", "strict", &["refused as stale"], &["in order."]),
    ("same-owner-updates", "expected-revision", &["apply in order"], &["refused as stale"]),
    ("retention-window", "expected-revision", &["debited once"], &["second time"]),
    ("retention-window", "unconditional", &["second time"], &["debited once"]),
];

#[test]
fn each_intro_says_what_its_own_variant_does() {
    for (name, variant, says, omits) in FACTS {
        let text = told(name, variant);
        for phrase in *says {
            assert!(text.contains(phrase), "{name}/{variant} should say {phrase:?}: {text}");
        }
        for phrase in *omits {
            assert!(!text.contains(phrase), "{name}/{variant} should not say {phrase:?}: {text}");
        }
    }
}
