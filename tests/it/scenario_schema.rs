//! The scenario file's JSON Schema (`docs/scenario.schema.json`) and its reference
//! (`docs/scenario-reference.md`) are generated from the scenario types; these tests regenerate
//! both and fail when the committed files differ. `FENCELAB_BLESS=1 cargo test -p fencelab-tests
//! --test it scenario_schema` rewrites them.

use fencelab_core::format::schema;
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
    check_committed("docs/scenario-reference.md", &schema::reference());
}
