//! A bounded fuzz run of the link parser: whatever the fragment, [`ShareLink::parse`] refuses it
//! with an error that names a parameter, or accepts a link that reads back as itself and
//! resolves to a scenario the engine runs. Fragments are random `name=value` pairs, mostly known
//! names with values near what each accepts, and valid links with one pair added, dropped or
//! changed, including custom scenarios carried in the link.

use super::{Embed, LinkError, LinkScenario, Param, Part, ShareLink, Theme, GENERATED};
use base64::Engine as _;
use fencelab_core::draw::diagram;
use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::library;
use fencelab_core::stories::switches::Switch;
use fencelab_core::{
    fence::register::SameGenerationPolicy, names::Named, record::ScheduleMode, Engine, Scenario,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::sync::LazyLock;

/// The parameters the generated pairs mostly name: those of a story's view, whose values
/// [`value`] knows how to come near.
const PARAMS: &[Param] = &[
    Param::Scenario,
    Param::Variant,
    Param::Custom,
    Param::Policy,
    Param::Step,
    Param::Compare,
    Param::Play,
    Param::Speed,
    Param::Break,
    Param::Embed,
    Param::Tab,
    Param::Theme,
];

/// The most engine steps run on an accepted link's scenario: enough to reach the interesting
/// parts of every built-in story, little enough to keep an input cheap.
const RUN_CAP: usize = 300;

/// What the generators start from: the built-in stories, their variants and their JSON.
struct Seeds {
    cases: Vec<(String, Vec<String>)>,
    variants: Vec<String>,
    texts: Vec<String>,
}

static SEEDS: LazyLock<Seeds> = LazyLock::new(|| {
    let cases: Vec<(String, Vec<String>)> =
        library::cases().into_iter().map(|c| (c.name, c.variants)).collect();
    let mut variants: Vec<String> = cases.iter().flat_map(|(_, v)| v.clone()).collect();
    variants.sort();
    variants.dedup();
    let texts = library::all().iter().map(Scenario::to_json).collect();
    Seeds { cases, variants, texts }
});

fn one_of(items: &[&'static str]) -> BoxedStrategy<String> {
    prop::sample::select(items.to_vec()).prop_map(str::to_string).boxed()
}

/// Odd text: separators and escapes a fragment gives meaning to, unusual characters, names at and
/// past the identifier limit, random characters, and real case and variant names.
fn odd_string() -> BoxedStrategy<String> {
    prop_oneof![
        one_of(&[
            "",
            " ",
            "\t",
            "\u{0}",
            "é",
            "🦀",
            "\u{202e}",
            "a\"b",
            "\\",
            "null",
            "-1",
            "0",
            "%20",
            "a,b",
            "a&b=c",
            "#",
            "=",
            "18446744073709551616",
        ]),
        prop::sample::select(vec![127usize, 128, 129, 1000]).prop_map(|n| "x".repeat(n)),
        ".{1,8}",
        prop::sample::select(SEEDS.variants.clone()),
        prop::sample::select(SEEDS.cases.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>()),
    ]
    .boxed()
}

/// A comma-separated list of up to four of `items`.
fn list(items: Vec<&'static str>) -> BoxedStrategy<String> {
    prop::collection::vec(prop::sample::select(items), 0..=4).prop_map(|v| v.join(",")).boxed()
}

/// A `custom` value: base64url of a built-in scenario, of one cut off or with a stray token in
/// it, or of random bytes; sometimes itself cut off or with a character base64url does not use.
fn custom_value() -> BoxedStrategy<String> {
    let text = prop::sample::select(SEEDS.texts.clone());
    let json = prop_oneof![
        2 => text.clone(),
        1 => (text.clone(), any::<prop::sample::Index>())
            .prop_map(|(t, at)| t[..boundary(&t, at)].to_string()),
        1 => (text, any::<prop::sample::Index>(), one_of(&["{", "}", "]", ",", "\"", "1e999"]))
            .prop_map(|(mut t, at, token)| {
                t.insert_str(boundary(&t, at), &token);
                t
            }),
        1 => prop::collection::vec(any::<u8>(), 0..64)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ];
    let damage = prop_oneof![
        6 => Just(None),
        1 => any::<prop::sample::Index>().prop_map(Some),
    ];
    let suffix = prop_oneof![6 => Just(""), 1 => prop::sample::select(vec!["=", "==", "+", "/", "%3D", " "])];
    (json, damage, suffix)
        .prop_map(|(json, cut, suffix)| {
            let mut value = super::B64.encode(json);
            if let Some(at) = cut {
                value.truncate(at.index(value.len() + 1));
            }
            value + suffix
        })
        .boxed()
}

/// A char boundary of `text` picked by `at`.
fn boundary(text: &str, at: prop::sample::Index) -> usize {
    let mut i = at.index(text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A value for parameter `name`: usually near what it accepts, sometimes odd text.
fn value(name: &str) -> BoxedStrategy<String> {
    let near = match name {
        "scenario" => prop_oneof![
            1 => Just(GENERATED.to_string()),
            3 => prop::sample::select(
                SEEDS.cases.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>()
            ),
        ]
        .boxed(),
        "variant" => prop::sample::select(SEEDS.variants.clone()).boxed(),
        "custom" => custom_value(),
        "policy" => one_of(&["allow-same", "allow_same", "strict", "strictly_newer", "Strict", ""]),
        "step" | "speed" => prop_oneof![
            (0..500u32).prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            one_of(&[
                "0",
                "24",
                "25",
                "400",
                "401",
                "-1",
                "+5",
                "65535",
                "65536",
                "18446744073709551616",
                "1e3",
                " 1",
                "",
            ]),
        ]
        .boxed(),
        "compare" => prop_oneof![
            1 => one_of(&["0", "1", "true", "false", "", ","]),
            3 => list(Enforcement::VARIANTS.iter().map(|e| e.name()).collect()),
        ]
        .boxed(),
        "play" => one_of(&["0", "1", "true", "false", "", "2", "yes"]),
        "break" => list(Switch::ALL.iter().map(|s| s.name()).chain([""]).collect()),
        "embed" => list(Part::VARIANTS.iter().map(|p| p.name()).chain([""]).collect()),
        "tab" => one_of(&["playground", "visualizer", "Playground", "", "1"]),
        "theme" => one_of(
            &Theme::VARIANTS
                .iter()
                .map(|t| t.name())
                .chain(["Dark", "", "auto"])
                .collect::<Vec<_>>(),
        ),
        _ => odd_string(),
    };
    prop_oneof![9 => near, 1 => odd_string()].boxed()
}

/// One `name=value` pair, mostly with a known name; sometimes without `=` or with two.
fn pair() -> BoxedStrategy<String> {
    let name = prop_oneof![
        9 => prop::sample::select(PARAMS).prop_map(|p| p.name().to_string()),
        1 => odd_string(),
    ];
    name.prop_flat_map(|name| (value(&name), 0..30u8, Just(name)))
        .prop_map(|(value, form, name)| match form {
            0 => name,
            1 => format!("{name}=={value}"),
            _ => format!("{name}={value}"),
        })
        .boxed()
}

/// A link the parser must accept: a built-in story, the generated load or a custom scenario,
/// with a random policy, step, compare mode, playback, switches, embed parts and tab.
fn valid_link() -> impl Strategy<Value = ShareLink> {
    let case = prop::sample::select(SEEDS.cases.clone()).prop_flat_map(|(name, variants)| {
        prop::sample::select(variants).prop_map(move |v| ShareLink::builtin(&name, &v))
    });
    let custom = prop::sample::select(SEEDS.texts.clone()).prop_map(|text| {
        let scenario = Scenario::from_json(&text).expect("built-in scenarios are valid");
        ShareLink {
            scenario: LinkScenario::Custom(Box::new(scenario)),
            ..ShareLink::builtin("", "")
        }
    });
    let scenario = prop_oneof![
        1 => Just(ShareLink::builtin(GENERATED, "")),
        1 => custom,
        6 => case,
    ];
    let modes = prop::sample::select(Enforcement::VARIANTS);
    let embed = prop::option::weighted(
        0.3,
        any::<[bool; 6]>().prop_map(|[controls, caption, picker, legend, panels, log]| Embed {
            controls,
            caption,
            picker,
            legend,
            panels,
            log,
        }),
    );
    (
        scenario,
        prop::option::weighted(0.3, prop::sample::select(SameGenerationPolicy::VARIANTS)),
        prop_oneof![Just(0usize), 0..400usize],
        prop::option::weighted(0.2, (modes.clone(), modes)),
        prop::bool::weighted(0.3),
        prop_oneof![Just(100u16), 25..=400u16],
        prop::collection::vec(prop::sample::select(Switch::ALL.to_vec()), 0..=2),
        embed,
        (prop::bool::weighted(0.1), prop::option::of(prop::sample::select(Theme::VARIANTS))),
    )
        .prop_map(
            |(
                link,
                policy,
                step,
                compare,
                autoplay,
                speed,
                switches,
                embed,
                (playground, theme),
            )| {
                ShareLink {
                    theme,
                    policy,
                    step,
                    compare,
                    autoplay,
                    speed,
                    switches,
                    embed,
                    playground,
                    ..link
                }
            },
        )
}

/// A valid link's fragment with perhaps one pair added, dropped or given another value.
fn edited_link() -> impl Strategy<Value = String> {
    (valid_link(), 0..4u8, any::<prop::sample::Index>(), pair())
        .prop_flat_map(|(link, edit, at, extra)| {
            let mut pairs: Vec<String> =
                link.to_fragment().split('&').map(str::to_string).collect();
            let i = at.index(pairs.len());
            match edit {
                0 => {
                    pairs.push(extra);
                    Just(pairs).boxed()
                }
                1 => {
                    pairs.remove(i);
                    Just(pairs).boxed()
                }
                2 => {
                    let name = pairs[i].split('=').next().unwrap_or_default().to_string();
                    value(&name)
                        .prop_map(move |v| {
                            let mut pairs = pairs.clone();
                            pairs[i] = format!("{name}={v}");
                            pairs
                        })
                        .boxed()
                }
                _ => Just(pairs).boxed(),
            }
        })
        .prop_map(|pairs| pairs.join("&"))
}

/// Any fragment: random pairs or an edited valid link, perhaps with a leading `#`.
fn fragment() -> impl Strategy<Value = String> {
    let pairs = prop::collection::vec(pair(), 0..=7).prop_map(|p| p.join("&"));
    (prop_oneof![pairs, edited_link()], prop::bool::weighted(0.3)).prop_map(|(body, hash)| {
        if hash {
            format!("#{body}")
        } else {
            body
        }
    })
}

/// Whether `err` names a parameter the link knows or one the fragment has (`.` is the link as a
/// whole), and says so in its message.
fn names_a_parameter(err: &LinkError, fragment: &str) -> bool {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    let in_fragment = fragment.split('&').any(|p| p.split('=').next() == Some(&*err.param));
    let known = err.param == "." || Param::from_name(&err.param).is_some() || in_fragment;
    known
        && !err.problem.is_empty()
        && err.to_string().starts_with(&format!("link parameter `{}`: ", err.param))
}

/// Parses `fragment` and checks the promises; returns whether it was accepted.
fn exercise(fragment: &str) -> Result<bool, TestCaseError> {
    let link = match ShareLink::parse(fragment) {
        Err(err) => {
            prop_assert!(names_a_parameter(&err, fragment), "{err}\n{fragment}");
            return Ok(false);
        }
        Ok(link) => link,
    };
    let back = ShareLink::parse(&link.to_fragment());
    prop_assert_eq!(back.as_ref(), Ok(&link), "{}", fragment);
    let scenario = link.resolve();
    prop_assert!(scenario.is_ok(), "an accepted link does not resolve: {scenario:?}\n{fragment}");
    run_bounded(scenario.expect("checked above"))?;
    Ok(true)
}

/// Runs a resolved scenario for at most [`RUN_CAP`] steps (the schedule read leniently, as the
/// page plays it), seeks to the middle and back, and draws the diagram of what ran.
fn run_bounded(scenario: Scenario) -> Result<(), TestCaseError> {
    let engine = Engine::new(scenario);
    prop_assert!(engine.is_ok(), "a resolved link's scenario is refused: {:?}", engine.err());
    let mut engine = engine.expect("checked above").with_schedule_mode(ScheduleMode::Lenient);
    let mut steps = 0;
    while steps < RUN_CAP && matches!(engine.step(), Ok(Some(_))) {
        steps += 1;
    }
    for to in [steps / 2, steps] {
        prop_assert!(engine.seek(to).is_ok() && engine.position() == to, "seek to {to} of {steps}");
    }
    diagram(&engine.history(), &engine.verdict().violations);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    #[test]
    fn any_fragment_is_refused_naming_a_parameter_or_read_back_and_run(f in fragment()) {
        exercise(&f)?;
    }
}

/// Generated fragments name real stories and parameters often enough to get past the first
/// check, so the run above reaches the engine.
#[test]
fn generated_fragments_are_often_accepted() {
    let mut runner = TestRunner::deterministic();
    let strategy = fragment();
    let accepted = (0..400)
        .filter(|_| {
            let f = strategy.new_tree(&mut runner).expect("the strategy generates").current();
            exercise(&f).expect("the promises hold")
        })
        .count();
    assert!(accepted >= 40, "only {accepted} of 400 generated fragments were accepted");
}

/// A fragment just over the length limit is refused as a whole, before any parameter is read.
#[test]
fn an_oversized_fragment_is_refused_as_a_whole() {
    let fragment = format!("step={}", "1".repeat(super::MAX_LINK_LEN));
    let err = ShareLink::parse(&fragment).unwrap_err();
    assert_eq!(err.param, ".");
    assert!(names_a_parameter(&err, &fragment));
}
