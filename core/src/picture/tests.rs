use super::*;
use crate::stories::library;

fn played(name: &str, variant: &str) -> Played {
    Played::play(library::scenario(name, Some(variant)).unwrap(), MAX_STEPS).unwrap()
}

/// The elements of `xml` with `class` among their classes.
fn with_class<'a>(doc: &'a roxmltree::Document, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.attribute("class").is_some_and(|c| c.split(' ').any(|c| c == class)))
        .collect()
}

#[test]
fn every_story_draws_well_formed_svg_at_every_step_with_only_what_has_happened() {
    for scenario in library::all() {
        let name = scenario.full_title();
        let played = Played::play(scenario, MAX_STEPS).unwrap();
        for position in 0..=played.len() {
            let svg = played.still(position).svg(Scheme::System);
            let doc = roxmltree::Document::parse(&svg)
                .unwrap_or_else(|e| panic!("{name} at {position}: {e}"));
            let marks = with_class(&doc, "mark").len();
            let happened = played.layout.marks.iter().filter(|m| m.step < position).count();
            assert_eq!(marks, happened, "{name} at {position}");
            let lanes = with_class(&doc, "head").len();
            assert_eq!(lanes, played.diagram.lanes.len(), "{name}");
            assert_eq!(with_class(&doc, "now").len(), usize::from(position > 0), "{name}");
        }
    }
}

#[test]
fn the_key_step_is_just_after_the_first_broken_invariant_else_the_first_refusal() {
    let broken = played("paused-worker", "broken");
    let violation = broken.layout.marks.iter().find(|m| m.kind == "violation").unwrap();
    assert_eq!(broken.key_position(), violation.step + 1);
    let fenced = played("paused-worker", "fenced");
    let refused = fenced.layout.marks.iter().find(|m| m.kind == "rejected").unwrap();
    assert_eq!(fenced.key_position(), refused.step + 1);
    assert!(fenced.still(fenced.key_position()).caption().contains("rejects"));
}

#[test]
fn the_verdict_names_what_broke_and_a_limit_of_fencing() {
    let broken = played("paused-worker", "broken");
    let verdict = broken.still(0).verdict();
    assert!(verdict.starts_with("Broken: stale write accepted"), "{verdict}");
    assert!(!verdict.contains("limit"), "{verdict}");
    assert_eq!(
        played("paused-worker", "fenced").still(3).verdict(),
        "Holds: every invariant holds in this run."
    );
    let limits: Vec<String> = library::all()
        .into_iter()
        .map(|s| Played::play(s, MAX_STEPS).unwrap())
        .filter(|p| p.scenario.fully_fenced() && !p.findings.is_empty())
        .map(|p| p.still(0).verdict())
        .collect();
    assert!(!limits.is_empty(), "a story shows a limit of fencing");
    assert!(limits.iter().all(|v| v.ends_with("(a limit of fencing).")), "{limits:?}");
}

#[test]
fn the_figure_escapes_what_it_quotes_and_links_where_it_is_told() {
    let mut scenario = library::scenario("paused-worker", Some("broken")).unwrap();
    scenario.title = "Tom & Jerry's <lease>".into();
    let played = Played::play(scenario, MAX_STEPS).unwrap();
    let html =
        played.still(played.key_position()).html(Some("player.html#a=1&b=\"2\""), Scheme::Light);
    let doc = roxmltree::Document::parse(&html).unwrap();
    let caption = doc.descendants().find(|n| n.has_tag_name("figcaption")).unwrap();
    let text: String = caption.descendants().filter_map(|n| n.text()).collect();
    assert!(text.starts_with("Tom & Jerry's <lease> (broken)"), "{text}");
    let link = doc.descendants().find(|n| n.has_tag_name("a")).unwrap();
    assert_eq!(link.attribute("href"), Some("player.html#a=1&b=\"2\""));
    assert!(played.still(0).html(None, Scheme::Light).matches("<a ").count() == 0);
}

#[test]
fn each_scheme_styles_the_picture_and_every_one_prints_light() {
    let played = played("paused-worker", "broken");
    let svg = |scheme| played.still(5).svg(scheme);
    assert!(!svg(Scheme::Light).contains("#161c23"), "light has no dark colours outside print");
    assert!(svg(Scheme::Dark).contains("#161c23"));
    assert!(svg(Scheme::System).contains("prefers-color-scheme:dark"));
    assert!(svg(Scheme::Book).contains("html.coal .fl-still"));
    for scheme in [Scheme::System, Scheme::Light, Scheme::Dark, Scheme::Book] {
        let css = svg(scheme);
        let print = css.find("@media print").expect("a print rule");
        assert!(css[print..].starts_with("@media print{.fl-still{--bg:#fff"), "{scheme:?}");
    }
}
