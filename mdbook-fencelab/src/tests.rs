use super::*;
use base64::Engine as _;
use std::path::PathBuf;

/// The (field, problem) a block is refused with.
fn refused(body: &str) -> (String, String) {
    Embed::parse(body).expect_err("the block should be refused")
}

const PAUSED_BROKEN: &str = "story = \"paused-worker\"\nvariant = \"broken\"\nstep = 19\n";

#[test]
fn a_story_block_becomes_a_link_fragment_and_an_element() {
    let embed = Embed::parse(PAUSED_BROKEN).unwrap();
    assert_eq!(
        embed.link.scenario,
        LinkScenario::Builtin { name: "paused-worker".into(), variant: "broken".into() }
    );
    assert_eq!(
        embed.fragment(),
        "scenario=paused-worker&variant=broken&step=19&embed=controls,caption"
    );
    // The page reads what the book writes.
    assert_eq!(ShareLink::parse(&embed.fragment()), Ok(embed.link.clone()));
    let html = embed.html("../fencelab");
    assert!(html.starts_with(
        "<fencelab-player story=\"paused-worker\" variant=\"broken\" step=\"19\" parts=\"controls,caption\" theme=\"book\" height=\"640\" label=\"Fencelab: "
    ), "{html}");
    assert!(html.contains("src=\"../fencelab/index.html\""), "{html}");
    assert!(html.contains(
        "<a href=\"../fencelab/index.html#scenario=paused-worker&amp;variant=broken&amp;step=19\">"
    ), "{html}");
}

#[test]
fn the_element_holds_the_still_at_its_step_or_the_key_step_in_the_block_s_colours() {
    let at = |html: &str| {
        let svg = html.find("<svg").unwrap();
        html[svg..].matches("class=\"mark").count()
    };
    let embed = Embed::parse(PAUSED_BROKEN).unwrap();
    let html = embed.html("../fencelab");
    // The still is inside the element, on lines with no blank between them.
    let inside = &html[html.find(">\n").unwrap()..html.rfind("</fencelab-player>").unwrap()];
    assert!(inside.contains("<figure class=\"fencelab-still\""), "{html}");
    assert!(!html.contains("\n\n"));
    let marks_to_19 = embed.played.layout.marks.iter().filter(|m| m.step < 19).count();
    assert_eq!(at(&html), marks_to_19);
    assert!(html.contains("class=\"fl-still fl-book\""), "follows the book's theme");
    // No step: the key step, where the story's point is made.
    let unset = Embed::parse("story = \"paused-worker\"\nvariant = \"broken\"").unwrap();
    assert_eq!(unset.still_at, unset.played.key_position());
    assert!(unset.still_at > 0);
    let dark = Embed::parse("story = \"paused-worker\"\ntheme = \"dark\"").unwrap();
    assert!(dark.html("p").contains("class=\"fl-still fl-dark\""));
}

#[test]
fn defaults_the_first_variant_no_step_and_the_usual_parts() {
    let embed = Embed::parse("story = \"paused-worker\"").unwrap();
    let first =
        &library::cases().into_iter().find(|c| c.name == "paused-worker").unwrap().variants[0];
    assert_eq!(
        embed.link.scenario,
        LinkScenario::Builtin { name: "paused-worker".into(), variant: first.clone() }
    );
    // No step: the story's key step, where the player opens and its still shows it.
    assert_eq!(embed.link.step, embed.played.key_position());
    assert_eq!(embed.still_at, embed.link.step);
    assert_eq!(embed.link.embed, Some(links::Embed::USUAL));
    assert!(embed.fragment().contains(&format!("step={}", embed.still_at)));
}

#[test]
fn parts_theme_height_and_label_pass_through() {
    let embed = Embed::parse(
        "story = \"paused-worker\"\nparts = \"diagram, log,caption\"\ntheme = \"dark\"\nheight = 420\nlabel = \"A's write\"",
    )
    .unwrap();
    let parts = links::Embed { log: true, caption: true, ..links::Embed::default() };
    assert_eq!(embed.link.embed, Some(parts));
    // Written in the page's order, whatever the block's.
    assert!(embed.fragment().ends_with("&embed=caption,log&theme=dark"), "{}", embed.fragment());
    assert!(embed.html("/fencelab/").contains(" parts=\"caption,log\" "));
    let html = embed.html("/fencelab/");
    assert!(
        html.contains(
            " theme=\"dark\" height=\"420\" label=\"A&#39;s write\" src=\"/fencelab/index.html\""
        ),
        "{html}"
    );
    // The diagram alone: the page's spelling for no other part.
    let bare = Embed::parse("story = \"paused-worker\"\nparts = \"diagram\"").unwrap();
    assert!(bare.fragment().ends_with("&embed=diagram"));
    assert!(bare.html("fencelab").contains(" parts=\"diagram\" "));
}

#[test]
fn an_unknown_story_names_the_known_ones() {
    let (field, problem) = refused("story = \"paused-wroker\"");
    assert_eq!(field, "story");
    assert!(problem.contains("there is no story \"paused-wroker\""), "{problem}");
    for case in library::cases() {
        assert!(problem.contains(&case.name), "{problem} lacks {}", case.name);
    }
}

#[test]
fn an_unknown_variant_names_the_story_s_variants() {
    let (field, problem) = refused("story = \"paused-worker\"\nvariant = \"fencd\"");
    assert_eq!(field, "variant");
    assert!(problem.starts_with("paused-worker has no variant \"fencd\"; it has "), "{problem}");
    assert!(problem.contains("fenced") && problem.contains("broken"), "{problem}");
}

#[test]
fn a_step_past_the_end_says_how_many_there_are() {
    let (field, problem) = refused("story = \"paused-worker\"\nvariant = \"broken\"\nstep = 10000");
    assert_eq!(field, "step");
    let mut engine =
        fencelab_core::Engine::new(library::scenario("paused-worker", Some("broken")).unwrap())
            .unwrap();
    engine.run().unwrap();
    let steps = engine.position();
    assert!(
        problem.contains(&format!("has {steps} steps; use a step from 0 to {steps}")),
        "{problem}"
    );
    assert!(Embed::parse(&format!(
        "story = \"paused-worker\"\nvariant = \"broken\"\nstep = {steps}"
    ))
    .is_ok());
}

#[test]
fn bad_keys_parts_and_themes_are_named() {
    assert_eq!(refused("story = \"paused-worker\"\nvarient = \"broken\"").0, "varient");
    let (field, problem) = refused("story = \"paused-worker\"\nparts = \"controls,captions\"");
    assert_eq!(field, "parts");
    assert!(problem.starts_with("unknown part \"captions\" (parts are: diagram, "), "{problem}");
    assert_eq!(refused("story = \"paused-worker\"\ntheme = \"sepia\"").0, "theme");
    assert_eq!(refused("story = \"paused-worker\"\nheight = 0").0, "height");
    assert_eq!(refused("story = \"paused-worker\"\nstep = \"nine\"").0, "step");
    assert_eq!(refused("variant = \"broken\"").0, ".");
    let (field, problem) = refused("story = paused-worker");
    assert_eq!(field, "story");
    assert!(problem.contains("line 1 of the block"), "{problem}");
}

/// A small valid scenario: one worker that acquires and writes once.
fn scenario_json() -> String {
    library::scenario("paused-worker", Some("fenced")).unwrap().to_json()
}

#[test]
fn an_inline_scenario_is_checked_and_carried_in_the_link() {
    let json = scenario_json();
    for body in [json.clone(), format!("parts = \"caption\"\nscenario = '''\n{json}\n'''")] {
        let embed = Embed::parse(&body).unwrap();
        let LinkScenario::Custom(scenario) = &embed.link.scenario else {
            panic!("not inline: {embed:?}")
        };
        assert!(!links::scenario_text(scenario).contains('\n'));
        let encoded = embed.fragment();
        let encoded = encoded.strip_prefix("custom=").unwrap().split('&').next().unwrap();
        let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(encoded).unwrap();
        let back = Scenario::from_json(std::str::from_utf8(&decoded).unwrap()).unwrap();
        assert_eq!(back, Scenario::from_json(&json).unwrap());
        assert!(embed.html("fencelab").contains(" scenario=\"{&quot;"));
    }
}

#[test]
fn a_bad_inline_scenario_names_the_field_inside_it() {
    let mut value: serde_json::Value = serde_json::from_str(&scenario_json()).unwrap();
    value["authority"]["ttl"] = serde_json::json!("ten");
    let (field, problem) = refused(&value.to_string());
    assert_eq!(field, "scenario.authority.ttl", "{problem}");
    let (field, _) = refused("{\"name\": ");
    assert!(field.starts_with("scenario"), "{field}");
    let (field, _) =
        refused(&format!("story = \"paused-worker\"\nscenario = '''{}'''", scenario_json()));
    assert_eq!(field, "story");
}

#[test]
fn the_player_is_climbed_to_from_nested_chapters() {
    assert_eq!(player_from("fencelab", Path::new("intro.md")), "fencelab");
    assert_eq!(player_from("fencelab/", Path::new("a/b/c.md")), "../../fencelab");
    assert_eq!(player_from("/fencelab/", Path::new("a/c.md")), "/fencelab");
    assert_eq!(
        player_from("https://example.org/fl", Path::new("a/c.md")),
        "https://example.org/fl"
    );
}

#[test]
fn a_chapter_gets_its_blocks_expanded_and_the_script_once() {
    let markdown = format!(
        "# Title\n\nText.\n\n```fencelab\n{PAUSED_BROKEN}```\n\nMiddle.\n\n```rust\nlet x = 1;\n```\n\n```fencelab\nstory = \"paused-worker\"\nvariant = \"fenced\"\n```\nEnd.\n"
    );
    let out = expand(&markdown, "../fencelab").unwrap().unwrap();
    assert_eq!(out.matches("<fencelab-player ").count(), 2, "{out}");
    assert_eq!(out.matches("<script src=\"../fencelab/fencelab-player.js\"></script>").count(), 1);
    assert!(out.contains("```rust\nlet x = 1;\n```"), "other code blocks stay: {out}");
    assert!(!out.contains("```fencelab"));
    assert!(out.starts_with("# Title\n\nText.\n\n\n<fencelab-player "), "{out}");
    assert!(out.contains("</fencelab-player>\n\n\nMiddle."), "{out}");
    assert_eq!(expand("# No blocks\n\n```toml\na = 1\n```\n", "fencelab").unwrap(), None);
}

#[test]
fn bad_blocks_are_all_reported_with_chapter_and_line() {
    let chapter = Chapter::new(
        "Broken",
        "# Broken\n\n```fencelab\nstory = \"nope\"\n```\n\nok\n\n```fencelab\nstory = \"paused-worker\"\nvariant = \"x\"\n```\n".into(),
        PathBuf::from("part/broken.md"),
        Vec::new(),
    );
    let errors = expand_chapter(&Config::default(), &chapter).unwrap_err();
    let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 2, "{lines:?}");
    assert!(
        lines[0]
            .starts_with("part/broken.md:3: fencelab block, `story`: there is no story \"nope\""),
        "{lines:?}"
    );
    assert!(lines[1].starts_with("part/broken.md:9: fencelab block, `variant`: "), "{lines:?}");
}

#[test]
fn the_config_defaults_and_reads_the_player() {
    let config: mdbook_preprocessor::config::Config =
        "[preprocessor.fencelab]\nplayer = \"../play\"\n".parse().unwrap();
    let read: Config = config.get("preprocessor.fencelab").unwrap().unwrap();
    assert_eq!(read.player, "../play");
    let empty: mdbook_preprocessor::config::Config = "[preprocessor.fencelab]\n".parse().unwrap();
    let read: Config = empty.get("preprocessor.fencelab").unwrap().unwrap();
    assert_eq!(read.player, "fencelab");
}

#[test]
fn only_the_html_renderer_is_supported() {
    assert!(Fencelab.supports_renderer("html").unwrap());
    assert!(!Fencelab.supports_renderer("markdown").unwrap());
}

#[test]
fn players_follow_the_book_theme_unless_told_otherwise() {
    let plain = Embed::parse("story = \"paused-worker\"").unwrap();
    assert!(plain.html("fencelab").contains(" theme=\"book\" "), "{}", plain.html("fencelab"));
    assert!(!plain.fragment().contains("theme="), "{}", plain.fragment());
    let auto = Embed::parse("story = \"paused-worker\"\ntheme = \"auto\"").unwrap();
    assert!(!auto.html("fencelab").contains("theme="), "{}", auto.html("fencelab"));
}

#[test]
fn a_player_missing_from_the_source_folder_is_warned_about() {
    let src = std::env::temp_dir().join(format!("fencelab-book-src-{}", std::process::id()));
    std::fs::create_dir_all(&src).unwrap();
    let warning = missing_player(&src, "fencelab").expect("nothing is there yet");
    assert!(warning.contains("fencelab-player.js") && warning.contains("empties"), "{warning}");
    std::fs::create_dir_all(src.join("fencelab")).unwrap();
    std::fs::write(src.join("fencelab").join(ELEMENT_SCRIPT), "").unwrap();
    assert_eq!(missing_player(&src, "fencelab"), None);
    assert_eq!(missing_player(&src, "fencelab/index.html"), None);
    // Served from elsewhere: the build cannot look.
    assert_eq!(missing_player(&src, "/fencelab"), None);
    assert_eq!(missing_player(&src, "https://example.org/fencelab"), None);
    std::fs::remove_dir_all(&src).unwrap();
}
