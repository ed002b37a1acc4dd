//! Runs the `mdbook-fencelab` binary the way mdBook does: `supports <renderer>`, then a book as
//! JSON on standard input.

use mdbook_preprocessor::book::{Book, BookItem, Chapter};
use mdbook_preprocessor::config::Config;
use mdbook_preprocessor::PreprocessorContext;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mdbook-fencelab");

/// The JSON mdBook writes to a preprocessor for a book with these chapters (path, content).
fn book_json(player: &str, chapters: &[(&str, &str)]) -> String {
    let config: Config =
        format!("[preprocessor.fencelab]\nplayer = \"{player}\"\n").parse().unwrap();
    let ctx = PreprocessorContext::new(PathBuf::from("/book"), config, "html".into());
    let mut book = Book::new();
    for (path, content) in chapters {
        book.push_item(Chapter::new(path, content.to_string(), PathBuf::from(path), Vec::new()));
    }
    serde_json::to_string(&(ctx, book)).unwrap()
}

fn run(input: &str) -> Output {
    let mut child = Command::new(BIN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn supports_says_html_only() {
    assert!(Command::new(BIN).args(["supports", "html"]).status().unwrap().success());
    assert!(!Command::new(BIN).args(["supports", "markdown"]).status().unwrap().success());
}

#[test]
fn a_book_comes_back_with_its_blocks_expanded() {
    let intro =
        "# Intro\n\n```fencelab\nstory = \"paused-worker\"\nvariant = \"broken\"\nstep = 19\n```\n";
    let nested = "# Nested\n\n```fencelab\nstory = \"paused-worker\"\nvariant = \"fenced\"\ntheme = \"dark\"\n```\n";
    let plain = "# Plain\n\nNo embeds here.\n";
    let out = run(&book_json(
        "fencelab",
        &[("intro.md", intro), ("more/nested.md", nested), ("plain.md", plain)],
    ));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let book: Book = serde_json::from_slice(&out.stdout).unwrap();
    let contents: Vec<String> = book
        .items
        .iter()
        .map(|item| match item {
            BookItem::Chapter(c) => c.content.clone(),
            other => panic!("unexpected item {other:?}"),
        })
        .collect();
    assert!(
        contents[0]
            .contains("<fencelab-player story=\"paused-worker\" variant=\"broken\" step=\"19\""),
        "{}",
        contents[0]
    );
    assert!(contents[0].contains("<script src=\"fencelab/fencelab-player.js\"></script>"));
    assert!(contents[1].contains(" theme=\"dark\" "), "{}", contents[1]);
    assert!(contents[1].contains("src=\"../fencelab/index.html\""), "{}", contents[1]);
    assert!(contents[1].contains("<script src=\"../fencelab/fencelab-player.js\"></script>"));
    assert_eq!(contents[2], plain, "a chapter without blocks is left alone");
}

#[test]
fn a_bad_block_fails_the_build_naming_chapter_line_and_field() {
    let bad =
        "# Bad\n\nSome text.\n\n```fencelab\nstory = \"paused-worker\"\nvariant = \"fencd\"\n```\n";
    let scenario =
        "# Inline\n\n```fencelab\n{\"name\": \"x\", \"authority\": {\"ttl\": \"ten\"}}\n```\n";
    let out = run(&book_json("fencelab", &[("bad.md", bad), ("inline.md", scenario)]));
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "no book is written when a block is bad");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 bad fencelab block(s)"), "{stderr}");
    assert!(
        stderr.contains(
            "bad.md:5: fencelab block, `variant`: paused-worker has no variant \"fencd\""
        ),
        "{stderr}"
    );
    assert!(stderr.contains("src/inline.md:3: fencelab block, `scenario."), "{stderr}");
}
