//! The scenario file's JSON Schema (`docs/scenario.schema.json`) and its reference
//! (`docs/scenario-reference.md`) are generated from the scenario types; these tests regenerate
//! both and fail when the committed files differ. `FENCELAB_BLESS=1 cargo test -p fencelab-tests
//! --test it scenario_schema` rewrites them.

use fencelab_core::format::schema;
use fencelab_core::stories::library;
use fencelab_core::{fence::register::SameGenerationPolicy, names::Named, Scenario};
use serde_json::{json, Value};
use std::path::PathBuf;

/// A file of the repository, from the tests crate's folder.
fn repo_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(name)
}

/// Compares `generated` with the committed file, or rewrites it under `FENCELAB_BLESS=1`.
fn check_committed(name: &str, generated: &str) {
    let path = repo_file(name);
    if std::env::var("FENCELAB_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, generated).unwrap_or_else(|e| panic!("{name}: {e}"));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        committed == generated,
        "{name} is stale: the scenario types changed. Refresh it with\n  FENCELAB_BLESS=1 cargo test -p fencelab-tests --test it scenario_schema"
    );
}

#[test]
fn the_committed_schema_is_the_one_the_types_give() {
    let text =
        serde_json::to_string_pretty(&schema::scenario_schema()).expect("a JSON value") + "\n";
    check_committed("docs/scenario.schema.json", &text);
}

#[test]
fn the_committed_reference_is_the_one_the_schema_gives() {
    check_committed("docs/scenario-reference.md", &schema::reference(&library::all()));
}

/// The schema, compiled by an independent validator.
fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&schema::scenario_schema()).expect("the schema is a valid schema")
}

#[test]
fn every_built_in_story_matches_the_schema() {
    let validator = validator();
    let stories = library::all();
    assert!(stories.len() > 20, "every story and variant: {}", stories.len());
    for scenario in stories {
        let value: Value = serde_json::from_str(&scenario.to_json()).expect("JSON");
        let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}/{}: {errors:#?}", scenario.name, scenario.variant);
    }
}

/// A built-in story as a JSON value, to break.
fn base() -> Value {
    serde_json::from_str(&library::all()[0].to_json()).expect("JSON")
}

/// Files the schema and the reader both refuse, each with the field the reader's message names
/// and words it says.
#[test]
fn the_schema_and_the_reader_refuse_the_same_mistakes() {
    let validator = validator();
    let pause = json!({"pause_worker": {"worker": "A", "ticks": 3}});
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit, &str, &str)> = vec![
        (
            "a required field left out",
            Box::new(|v| drop(v.as_object_mut().unwrap().remove("title"))),
            ".",
            "missing field `title`",
        ),
        (
            "an unknown field",
            Box::new(|v| v["workers"][0]["colour"] = json!("red")),
            "workers[0].colour",
            "unknown field `colour`",
        ),
        (
            "a wrong type",
            Box::new(|v| v["authority"]["ttl"] = json!("ten")),
            "authority.ttl",
            "invalid type: string \"ten\", expected u64",
        ),
        (
            "a bad enum value",
            Box::new(|v| v["stores"][0]["enforcement"] = json!("sometimes")),
            "stores[0].enforcement",
            "unknown variant `sometimes`",
        ),
        (
            "a fault beside `at` instead of under `fault`",
            Box::new({
                let pause = pause.clone();
                move |v| v["faults"] = json!([{"at": 1, "pause_worker": pause["pause_worker"]}])
            }),
            "faults[0].pause_worker",
            "unknown field `pause_worker`",
        ),
        (
            "a fault's fields without its name",
            Box::new({
                let pause = pause.clone();
                move |v| v["faults"] = json!([{"at": 1, "fault": pause["pause_worker"]}])
            }),
            "faults[0].fault",
            "expected an object with one key, the name of what it is, holding its fields (e.g. {\"pause_worker\": {\"worker\": \"A\", \"ticks\": 3}}); this one has `ticks`, `worker`",
        ),
        (
            "a fault with fields written as its bare name",
            Box::new(|v| v["faults"] = json!([{"at": 1, "fault": "pause_worker"}])),
            "faults[0].fault.pause_worker",
            "`pause_worker` has fields, so it is written as an object holding them, {\"pause_worker\": {...}}, not as its bare name",
        ),
        (
            "two faults under one `fault`",
            Box::new({
                let pause = pause.clone();
                move |v| {
                    let both = json!({"pause_worker": pause["pause_worker"], "restart_store": {"store": "db"}});
                    v["faults"] = json!([{"at": 1, "fault": both}]);
                }
            }),
            "faults[0].fault",
            "this one has `pause_worker`, `restart_store`",
        ),
        (
            "a step not nested under its name",
            Box::new(|v| v["workers"][0]["script"][0] = json!({"resource": "ledger"})),
            "workers[0].script[0]",
            "unknown variant `resource`",
        ),
    ];
    for (what, edit, path, words) in cases {
        let mut value = base();
        edit(&mut value);
        assert!(!validator.is_valid(&value), "{what}: the schema accepts it");
        let err = Scenario::from_json(&value.to_string()).expect_err(what);
        assert_eq!(err.path, path, "{what}: {err}");
        assert!(err.problem.contains(words), "{what}: {err}");
    }
}

#[test]
fn policies_read_in_either_spelling_and_are_written_in_one() {
    for (written, policy) in [
        ("allow_same", SameGenerationPolicy::AllowSame),
        ("allow-same", SameGenerationPolicy::AllowSame),
        ("strictly_newer", SameGenerationPolicy::StrictlyNewer),
        ("strict", SameGenerationPolicy::StrictlyNewer),
    ] {
        let mut value = base();
        value["stores"][0]["policy"] = json!(written);
        let scenario = Scenario::from_json(&value.to_string()).expect(written);
        assert_eq!(scenario.stores[0].policy, policy, "{written}");
        let canonical = policy.name();
        assert!(scenario.to_json().contains(&format!("\"policy\": \"{canonical}\"")), "{written}");
    }
    let mut value = base();
    value["stores"][0]["policy"] = json!("Strict");
    let err = Scenario::from_json(&value.to_string()).expect_err("not a policy");
    assert_eq!(err.path, "stores[0].policy");
}

#[test]
fn comments_are_read_and_errors_keep_the_file_s_lines_and_columns() {
    let mut value = base();
    value["title"] = json!("a // inside a string is text /* too */");
    let plain = serde_json::to_string_pretty(&value).expect("JSON");
    let commented =
        format!("// A story.\n/* two\n   lines */\n{}", plain.replacen('{', "{ // open\n", 1));
    let scenario = Scenario::from_json(&commented).expect("comments are allowed");
    assert_eq!(scenario.title, "a // inside a string is text /* too */");
    // A missing comma after a block comment over three lines: the error is on the line the
    // file has it.
    let broken = "/* one\ntwo\nthree */\n{\n  \"name\": \"x\"\n  \"title\": \"y\"\n}";
    let err = Scenario::from_json(broken).expect_err("a missing comma");
    assert!(err.problem.contains("line 6 column 3"), "{err}");
    let err = Scenario::from_json("{ / }").expect_err("a lone slash");
    assert!(err.problem.contains("starts no comment"), "{err}");
}

#[test]
fn the_starting_scenario_of_fencelab_new_matches_the_schema() {
    let text = std::fs::read_to_string(repo_file("cli/src/new.jsonc")).expect("the starter");
    Scenario::from_json(&text).expect("it reads");
    let plain = json_comments::StripComments::new(text.as_bytes());
    let value: Value = serde_json::from_reader(plain).expect("JSON once its comments are gone");
    let errors: Vec<String> = validator().iter_errors(&value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}
