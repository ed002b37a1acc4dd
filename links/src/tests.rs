//! Share links: every view state survives the trip through a URL fragment, and every kind of
//! broken link is refused with the parameter named.

use super::{Embed, LinkScenario, ShareLink, Theme, MAX_LINK_LEN};
use fencelab_core::fence::register::SameGenerationPolicy;
use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::library;
use fencelab_core::stories::switches::Switch;

#[test]
fn a_full_view_round_trips() {
    let mut link = ShareLink::builtin("check-then-write", "check-then-write");
    link.policy = Some(SameGenerationPolicy::StrictlyNewer);
    link.step = 17;
    link.compare = Some((Enforcement::CheckThenWrite, Enforcement::FencedIdempotent));
    link.autoplay = true;
    link.speed = 250;
    link.switches = vec![Switch::UnfencedStore, Switch::WallClockTokens];
    link.embed = Some(Embed { controls: true, log: true, ..Embed::default() });
    let fragment = link.to_fragment();
    assert_eq!(
        fragment,
        "scenario=check-then-write&variant=check-then-write&policy=strict&step=17&compare=check_then_write,fenced_idempotent&play=1&speed=250&break=unfenced_store,wall_clock_tokens&embed=controls,log"
    );
    assert_eq!(ShareLink::parse(&format!("#{fragment}")).unwrap(), link);
    // A link reads a policy in the links' spelling and in the scenario files'.
    for (written, policy) in [
        ("allow-same", SameGenerationPolicy::AllowSame),
        ("allow_same", SameGenerationPolicy::AllowSame),
        ("strict", SameGenerationPolicy::StrictlyNewer),
        ("strictly_newer", SameGenerationPolicy::StrictlyNewer),
    ] {
        let parsed = ShareLink::parse(&format!("scenario=paused-worker&policy={written}")).unwrap();
        assert_eq!(parsed.policy, Some(policy), "{written}");
    }
    assert_eq!(
        ShareLink::parse("scenario=paused-worker").unwrap(),
        ShareLink::builtin("paused-worker", "fenced")
    );
    // The older `compare=1` means unfenced against fenced; every embed part round-trips.
    let old = ShareLink::parse("scenario=paused-worker&compare=1&embed=diagram").unwrap();
    assert_eq!(old.compare, Some((Enforcement::Unfenced, Enforcement::Fenced)));
    assert_eq!(old.embed, Some(Embed::default()));
    let all =
        "scenario=paused-worker&variant=fenced&embed=picker,controls,caption,legend,panels,log";
    assert_eq!(ShareLink::parse(all).unwrap().to_fragment(), all);
    let generated = ShareLink::parse("scenario=generated").unwrap();
    assert!(generated.resolve().unwrap().workers.len() >= 20);
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
        ("scenario=nope", "link parameter `scenario`: no story \"nope\""),
        ("scenario=paused-wroker&host=element", "attribute `story`: no story \"paused-wroker\" (did you mean paused-worker?)"),
        ("scenario=paused-worker&embed=controls,bogus&host=element", "attribute `parts`: unknown part \"bogus\" (parts are: diagram, picker, controls, caption, legend, panels and log)"),
        ("scenario=paused-worker&host=page", "link parameter `host`: \"page\" is not a host (use element)"),
        ("scenario=paused-worker&variant=sideways", "link parameter `variant`: paused-worker has no variant \"sideways\"; it has fenced, broken"),
        ("scenario=paused-worker&step=abc", "link parameter `step`: \"abc\" is not a step number"),
        ("scenario=paused-worker&speed=90000", "link parameter `speed`: \"90000\" is not a speed from 25 to 64000 (percent)"),
        ("scenario=paused-worker&break=teleport", "link parameter `break`: unknown switch \"teleport\""),
        ("scenario=paused-worker&policy=maybe", "link parameter `policy`: \"maybe\" is not a policy (use allow-same or strict)"),
        ("scenario=paused-worker&embed=popup", "link parameter `embed`: unknown part \"popup\" (parts are: diagram, picker, controls, caption, legend, panels and log)"),
        ("scenario=paused-worker&compare=fenced", "link parameter `compare`: \"fenced\" is not two enforcement modes"),
        ("scenario=paused-worker&compare=fenced,sturdy", "link parameter `compare`: \"sturdy\" is not an enforcement mode"),
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
    let huge = format!("scenario=paused-worker&variant={}", "x".repeat(MAX_LINK_LEN));
    assert!(ShareLink::parse(&huge).unwrap_err().problem.contains("the limit is"));
}

#[test]
fn the_playground_tab_travels_in_the_link() {
    let mut link = ShareLink::builtin("paused-worker", "broken");
    link.step = 5;
    link.playground = true;
    let fragment = link.to_fragment();
    assert_eq!(fragment, "scenario=paused-worker&variant=broken&step=5&tab=playground");
    assert_eq!(ShareLink::parse(&fragment).unwrap(), link);
    // The visualizer is the default, so its links leave the tab out.
    let visualizer = ShareLink::parse("scenario=paused-worker&tab=visualizer").unwrap();
    assert!(!visualizer.playground);
    assert_eq!(visualizer.to_fragment(), "scenario=paused-worker&variant=fenced");
    let err = ShareLink::parse("scenario=paused-worker&tab=kitchen").unwrap_err().to_string();
    assert_eq!(
        err,
        "link parameter `tab`: \"kitchen\" is not a tab (use visualizer or playground)"
    );
}

#[test]
fn a_theme_is_forced_by_name_and_kept() {
    let link = ShareLink::parse("scenario=paused-worker&embed=caption&theme=dark").unwrap();
    assert_eq!(link.theme, Some(Theme::Dark));
    assert_eq!(
        link.to_fragment(),
        "scenario=paused-worker&variant=fenced&embed=caption&theme=dark"
    );
    assert_eq!(
        ShareLink::parse("scenario=paused-worker&theme=light").unwrap().theme,
        Some(Theme::Light)
    );
    // Without one the page follows the reader's setting, and the link says nothing.
    assert_eq!(ShareLink::parse("scenario=paused-worker").unwrap().theme, None);
    let err = ShareLink::parse("scenario=paused-worker&theme=sepia").unwrap_err().to_string();
    assert_eq!(err, "link parameter `theme`: \"sepia\" is not a theme (use light or dark)");
}

#[test]
fn a_bad_link_still_says_whether_it_is_an_embed() {
    let check = |fragment: &str, want: Option<Embed>| {
        assert_eq!(ShareLink::embed_in(fragment), want, "{fragment}");
    };
    let controls_caption = Some(Embed { controls: true, caption: true, ..Embed::default() });
    // The variant is misspelt: the link is refused, yet it asked to be an embed.
    let misspelt = "#scenario=paused-worker&variant=brokn&embed=controls,caption";
    assert_eq!(ShareLink::parse(misspelt).unwrap_err().param, "variant");
    check(misspelt, controls_caption);
    check("scenario=nope&embed=caption,controls&step=x", controls_caption);
    // Unknown parts are left out here; `parse` names them.
    check("scenario=paused-worker&embed=popup,log", Some(Embed { log: true, ..Embed::default() }));
    check("scenario=paused-worker&embed", Some(Embed::default()));
    check("scenario=paused-worker&embed=diagram", Some(Embed::default()));
    check("scenario=paused-worker&variant=brokn", None);
    check("scenario=paused-worker&embedded=log", None);
    // For a good link it agrees with `parse`.
    let good = "scenario=paused-worker&variant=broken&embed=panels,legend";
    check(good, ShareLink::parse(good).unwrap().embed);
}

#[test]
fn a_history_link_names_its_file_and_round_trips() {
    let link = ShareLink::parse("history=notes/paused%20broken.jsonl&step=4").unwrap();
    assert_eq!(link.history.as_deref(), Some("notes/paused broken.jsonl"));
    assert_eq!(link.step, 4);
    assert_eq!(ShareLink::parse(&link.to_fragment()).unwrap(), link);
    let odd = ShareLink::history("a&b#c%d.jsonl");
    assert_eq!(ShareLink::parse(&odd.to_fragment()).unwrap(), odd);
    let none = ShareLink::parse("history=").unwrap_err();
    assert_eq!(none.param, "history");
    let both = ShareLink::parse("scenario=paused-worker&history=x.jsonl").unwrap_err();
    assert!(both.problem.contains("not both"), "{both}");
}

#[test]
fn a_chapter_link_names_no_story_and_round_trips() {
    let id = fencelab_core::stories::course::course()[0].id;
    let link = ShareLink::chapter(id);
    assert_eq!(link.to_fragment(), format!("course={id}"));
    assert_eq!(ShareLink::parse(&link.to_fragment()), Ok(link));
    let mut story = ShareLink::builtin("paused-worker", "broken");
    story.course = Some(id.into());
    assert_eq!(story.to_fragment(), format!("scenario=paused-worker&variant=broken&course={id}"));
    assert_eq!(ShareLink::parse(&story.to_fragment()), Ok(story));
}
