//! Share links: every view state survives the trip through a URL fragment, and every kind of
//! broken link is refused with the parameter named.

use fencelab_core::scenario::library;
use fencelab_core::scenario::switches::Switch;
use fencelab_core::share::{Embed, LinkScenario, ShareLink, MAX_LINK_LEN};
use fencelab_core::SameGenerationPolicy;

#[test]
fn a_full_view_round_trips() {
    let mut link = ShareLink::builtin("check-then-write", "check-then-write");
    link.policy = Some(SameGenerationPolicy::StrictlyNewer);
    link.step = 17;
    link.compare = Some("atomic".into());
    link.autoplay = true;
    link.speed = 250;
    link.switches = vec![Switch::UnfencedStore, Switch::WallClockTokens];
    link.embed = Some(Embed { controls: true, caption: false });
    let fragment = link.to_fragment();
    assert_eq!(
        fragment,
        "scenario=check-then-write&variant=check-then-write&policy=strict&step=17&compare=atomic&play=1&speed=250&break=unfenced_store,wall_clock_tokens&embed=controls"
    );
    assert_eq!(ShareLink::parse(&format!("#{fragment}")).unwrap(), link);
    assert_eq!(
        ShareLink::parse("scenario=paused-worker").unwrap(),
        ShareLink::builtin("paused-worker", "fenced")
    );
}

#[test]
fn a_custom_scenario_travels_inside_the_link() {
    let mut scenario = library::scenario("paused-worker", Some("broken")).unwrap();
    scenario.title = "My own story: ünïcode & symbols = fine".into();
    let mut link = ShareLink::builtin("", "");
    link.scenario = LinkScenario::Custom(Box::new(scenario.clone()));
    let fragment = link.to_fragment();
    assert!(fragment.len() < 4_000, "{} bytes", fragment.len());
    let back = ShareLink::parse(&fragment).unwrap();
    assert_eq!(back.resolve().unwrap(), scenario);
}

#[test]
fn policy_and_switches_apply_when_resolving() {
    let mut link = ShareLink::builtin("paused-worker", "fenced");
    link.policy = Some(SameGenerationPolicy::StrictlyNewer);
    link.switches = vec![Switch::UnfencedStore];
    let scenario = link.resolve().unwrap();
    assert!(Switch::UnfencedStore.is_on(&scenario) && Switch::StrictlyNewer.is_on(&scenario));
}

#[test]
fn broken_links_name_what_is_wrong() {
    let cases = [
        ("scenario=nope", "link parameter `scenario`: there is no built-in scenario \"nope\""),
        ("scenario=paused-worker&variant=sideways", "link parameter `variant`: paused-worker has no variant \"sideways\"; it has fenced, broken"),
        ("scenario=paused-worker&step=abc", "link parameter `step`: \"abc\" is not a step number"),
        ("scenario=paused-worker&speed=9000", "link parameter `speed`: \"9000\" is not a speed from 25 to 400 (percent)"),
        ("scenario=paused-worker&break=teleport", "link parameter `break`: unknown switch \"teleport\""),
        ("scenario=paused-worker&policy=maybe", "link parameter `policy`: \"maybe\" is not a policy (use allow-same or strict)"),
        ("scenario=paused-worker&embed=popup", "link parameter `embed`: unknown part \"popup\" (use controls, caption or diagram)"),
        ("scenario=paused-worker&colour=red", "link parameter `colour`: unknown parameter"),
        ("step=3", "link parameter `scenario`: the link names no scenario"),
        ("custom=%%%", "link parameter `custom`: the scenario in the link is damaged or cut off"),
    ];
    for (fragment, message) in cases {
        let err = ShareLink::parse(fragment).unwrap_err().to_string();
        assert!(err.starts_with(message), "{fragment}: {err}");
    }
    let mut link = ShareLink::builtin("", "");
    link.scenario =
        LinkScenario::Custom(Box::new(library::scenario("payment-capture", None).unwrap()));
    let fragment = link.to_fragment();
    let truncated = &fragment[..fragment.len() * 2 / 3];
    let err = ShareLink::parse(truncated).unwrap_err();
    assert_eq!(err.param, "custom");
    assert!(err.problem.contains("cut off") || err.problem.contains("damaged"), "{err}");
    let huge = format!("scenario=paused-worker&compare={}", "x".repeat(MAX_LINK_LEN));
    assert!(ShareLink::parse(&huge).unwrap_err().problem.contains("the limit is"));
}
