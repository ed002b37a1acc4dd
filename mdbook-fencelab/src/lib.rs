//! An mdBook preprocessor that turns fenced `fencelab` code blocks into embedded Fencelab players.
//!
//! A block names a built-in story in `key = value` lines (TOML):
//!
//! ````markdown
//! ```fencelab
//! story = "paused-worker"
//! variant = "broken"
//! step = 19
//! parts = "controls,caption"
//! ```
//! ````
//!
//! or holds a scenario of its own, as JSON on its own or in a `scenario = '''...'''` line beside
//! the other keys. Everything is checked while the book builds: an unknown story, variant, part
//! or theme, a step past the story's end or a scenario the core refuses fails the build with the
//! chapter's file, the block's line and the field. A reader's browser then finds nothing wrong
//! that the author could have been told about.
//!
//! Each block becomes a `<fencelab-player>` element (the custom element the page build ships as
//! `fencelab-player.js`, loaded once per chapter) with a plain link to the same view inside it,
//! which is what a reader sees without JavaScript. The element makes the iframe and fits it to
//! the height the embedded page reports, which a plain iframe in Markdown could not do without a
//! script on the page anyway.
//!
//! The player's address comes from `book.toml`:
//!
//! ```toml
//! [preprocessor.fencelab]
//! player = "fencelab"   # relative to the book's root, or an absolute URL
//! ```
//!
//! A relative player is looked for in the book's source folder (`src/fencelab/`), which mdBook
//! copies into the output on every build; the build warns when it is not there.

use anyhow::bail;
use base64::Engine as _;
use fencelab_core::format::model::Scenario;
use fencelab_core::stories::library::{self, UnknownStory};
use mdbook_preprocessor::book::{Book, Chapter};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde::Deserialize;
use std::fmt;
use std::path::{Component, Path};

/// The code block language this preprocessor expands.
pub const LANGUAGE: &str = "fencelab";

/// The embed parts the page knows (its `embed=` link parameter), in the page's spelling.
pub const PARTS: [&str; 7] =
    ["diagram", "controls", "caption", "legend", "panels", "log", "picker"];

/// The themes a block may ask for: the page forced `light` or `dark`, `book` (the default: the
/// element follows the theme the reader picked in mdBook's menu) or `auto` (the reader's system
/// setting).
pub const THEMES: [&str; 4] = ["light", "dark", "book", "auto"];

/// The theme a block without one gets: the book's own.
pub const DEFAULT_THEME: &str = "book";

/// The parts an embed shows when its block names none.
pub const DEFAULT_PARTS: &str = "controls,caption";

/// The file the page build ships the custom element in.
pub const ELEMENT_SCRIPT: &str = "fencelab-player.js";

/// The first height an embed takes, in CSS pixels, before the page reports its own.
const DEFAULT_HEIGHT: u32 = 640;

/// The preprocessor, as mdBook runs it.
pub struct Fencelab;

impl Preprocessor for Fencelab {
    fn name(&self) -> &str {
        "fencelab"
    }

    fn run(&self, ctx: &PreprocessorContext, mut book: Book) -> anyhow::Result<Book> {
        let config: Config = ctx.config.get("preprocessor.fencelab")?.unwrap_or_default();
        if let Some(warning) = missing_player(&ctx.root.join(&ctx.config.book.src), &config.player)
        {
            eprintln!("mdbook-fencelab: warning: {warning}");
        }
        let mut errors = Vec::new();
        book.for_each_chapter_mut(|chapter| match expand_chapter(&config, chapter) {
            Ok(Some(content)) => chapter.content = content,
            Ok(None) => {}
            Err(mut found) => errors.append(&mut found),
        });
        if !errors.is_empty() {
            // Named from the book's folder, where the author's editor opens them.
            for error in &mut errors {
                error.chapter = ctx.config.book.src.join(&error.chapter).display().to_string();
            }
            let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
            bail!("{} bad fencelab block(s):\n{}", errors.len(), lines.join("\n"));
        }
        Ok(book)
    }

    /// Only the HTML renderer runs the element; others keep the blocks as code.
    fn supports_renderer(&self, renderer: &str) -> anyhow::Result<bool> {
        Ok(renderer == "html")
    }
}

/// The `[preprocessor.fencelab]` table of `book.toml` (mdBook's own keys there are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    /// Where the Fencelab page build is: a path relative to the book's root (the folder the HTML
    /// renderer writes), a root-relative path or an absolute URL.
    #[serde(default = "default_player")]
    pub player: String,
}

fn default_player() -> String {
    "fencelab".into()
}

impl Default for Config {
    fn default() -> Self {
        Config { player: default_player() }
    }
}

/// A field of a block (`.` for the whole block) and what is wrong with it.
pub type Problem = (String, String);

/// A bad block: where it is and what is wrong, naming the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockError {
    /// The chapter's source file, relative to the book's folder (`src/intro.md`).
    pub chapter: String,
    /// The line of the block's opening fence, counting from 1.
    pub line: usize,
    /// The key of the block, or the path of a field inside an inline scenario
    /// (`scenario.workers[0].script`); `.` for the block as a whole.
    pub field: String,
    /// What is wrong and what would be right.
    pub problem: String,
}

impl fmt::Display for BlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: fencelab block, `{}`: {}",
            self.chapter, self.line, self.field, self.problem
        )
    }
}

/// What a block may say. Unknown keys are errors, so a misspelt key is not silently ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockSpec {
    story: Option<String>,
    variant: Option<String>,
    step: Option<usize>,
    parts: Option<String>,
    theme: Option<String>,
    height: Option<u32>,
    scenario: Option<String>,
    label: Option<String>,
}

/// What a block shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A built-in story and one of its variants.
    Story {
        /// The story's name.
        name: String,
        /// The variant's name.
        variant: String,
    },
    /// A scenario written in the block, as compact JSON.
    Inline(String),
}

/// A checked block, ready to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embed {
    /// The story or scenario.
    pub source: Source,
    /// The step shown first.
    pub step: usize,
    /// The embed parts besides the diagram, comma-separated.
    pub parts: String,
    /// The theme: `light`, `dark`, `book` or `auto` (see [`THEMES`]).
    pub theme: String,
    /// The first height, before the page reports its own.
    pub height: u32,
    /// The accessible name of the embedded frame.
    pub label: String,
}

impl Embed {
    /// Reads and checks the text inside a `fencelab` block. Errors name the field; the caller
    /// adds the chapter and the line.
    pub fn parse(body: &str) -> Result<Embed, Problem> {
        let spec = if body.trim_start().starts_with('{') {
            BlockSpec { scenario: Some(body.to_string()), ..BlockSpec::default() }
        } else {
            toml::from_str::<BlockSpec>(body).map_err(|e| toml_problem(body, &e))?
        };
        let (source, scenario) = match (&spec.scenario, &spec.story) {
            (Some(_), Some(_)) => {
                return Err(field(
                    "story",
                    "a block shows either a story or a `scenario`, not both",
                ))
            }
            (Some(json), None) => {
                if spec.variant.is_some() {
                    return Err(field("variant", "an inline scenario has no variants"));
                }
                let scenario = Scenario::from_json(json).map_err(|e| {
                    let path = if e.path == "." {
                        "scenario".into()
                    } else {
                        format!("scenario.{}", e.path)
                    };
                    (path, e.problem)
                })?;
                let compact = serde_json::to_string(&scenario)
                    .map_err(|e| field("scenario", e.to_string()))?;
                (Source::Inline(compact), scenario)
            }
            (None, Some(name)) => {
                let scenario =
                    library::scenario(name, spec.variant.as_deref()).map_err(|e| match e {
                        UnknownStory::Story { .. } => field("story", e.to_string()),
                        UnknownStory::Variant { .. } => field("variant", e.to_string()),
                    })?;
                let variant = scenario.variant.clone();
                (Source::Story { name: name.clone(), variant }, scenario)
            }
            (None, None) => {
                return Err(field(".", "name a `story` (and `variant`), or give a `scenario`"))
            }
        };
        let parts = check_parts(spec.parts.as_deref().unwrap_or(DEFAULT_PARTS))?;
        if let Some(theme) = &spec.theme {
            if !THEMES.contains(&theme.as_str()) {
                return Err(field(
                    "theme",
                    format!("\"{theme}\" is not a theme (use {})", THEMES.join(" or ")),
                ));
            }
        }
        let title = scenario_title(&scenario);
        let step = spec.step.unwrap_or(0);
        if step > 0 {
            let steps = step_count(&scenario).map_err(|problem| field("step", problem))?;
            if step > steps {
                return Err(field(
                    "step",
                    format!("{title} has {steps} steps; use a step from 0 to {steps}"),
                ));
            }
        }
        if spec.height == Some(0) {
            return Err(field("height", "use a height in CSS pixels above 0"));
        }
        Ok(Embed {
            source,
            step,
            parts,
            theme: spec.theme.unwrap_or_else(|| DEFAULT_THEME.into()),
            height: spec.height.unwrap_or(DEFAULT_HEIGHT),
            label: spec.label.unwrap_or_else(|| format!("Fencelab: {title}")),
        })
    }

    /// The page's link fragment for this view, without the `#`.
    pub fn fragment(&self) -> String {
        let mut out = match &self.source {
            Source::Story { name, variant } => format!("scenario={name}&variant={variant}"),
            Source::Inline(json) => {
                let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
                format!("custom={}", engine.encode(json))
            }
        };
        if self.step > 0 {
            out.push_str(&format!("&step={}", self.step));
        }
        out.push_str(&format!(
            "&embed={}",
            if self.parts.is_empty() { "diagram" } else { &self.parts }
        ));
        // Only a forced theme is the page's: the book's is the element's to follow.
        if matches!(self.theme.as_str(), "light" | "dark") {
            out.push_str(&format!("&theme={}", self.theme));
        }
        out
    }

    /// The element for this block, with a plain link to the same view inside it for readers
    /// without JavaScript. `player` is the page's address as seen from the chapter.
    pub fn html(&self, player: &str) -> String {
        let mut attrs = match &self.source {
            Source::Story { name, variant } => {
                format!(r#"story="{}" variant="{}""#, escape(name), escape(variant))
            }
            Source::Inline(json) => format!(r#"scenario="{}""#, escape(json)),
        };
        if self.step > 0 {
            attrs.push_str(&format!(r#" step="{}""#, self.step));
        }
        attrs.push_str(&format!(r#" parts="{}""#, escape(&self.parts)));
        if self.theme != "auto" {
            attrs.push_str(&format!(r#" theme="{}""#, escape(&self.theme)));
        }
        format!(
            "<fencelab-player {attrs} height=\"{height}\" label=\"{label}\" src=\"{src}\">\n\
             <a href=\"{src}#{fragment}\">{label} (opens the interactive player)</a>\n\
             </fencelab-player>",
            height = self.height,
            label = escape(&self.label),
            src = escape(&page_address(player)),
            fragment = escape(&self.fragment()),
        )
    }
}

fn field(name: &str, problem: impl Into<String>) -> Problem {
    (name.to_string(), problem.into())
}

/// A TOML error as (key, problem): the key the error's span sits on when there is one.
fn toml_problem(body: &str, e: &toml::de::Error) -> Problem {
    let message = e.message().trim().to_string();
    let Some(span) = e.span() else { return field(".", message) };
    let line_start = body[..span.start.min(body.len())].rfind('\n').map_or(0, |i| i + 1);
    let line = &body[line_start..];
    let line = line.split('\n').next().unwrap_or_default();
    let key = line.split('=').next().unwrap_or_default().trim();
    let known = key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if key.is_empty() || !known { "." } else { key };
    let row = body[..line_start].matches('\n').count() + 1;
    field(key, format!("{message} (line {row} of the block)"))
}

fn check_parts(value: &str) -> Result<String, Problem> {
    let mut parts = Vec::new();
    for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if !PARTS.contains(&part) {
            return Err(field(
                "parts",
                format!("unknown part \"{part}\" (use {})", PARTS.join(", ")),
            ));
        }
        // The diagram always shows; the page takes `diagram` alone to mean nothing else.
        if part != "diagram" && !parts.contains(&part) {
            parts.push(part);
        }
    }
    Ok(parts.join(","))
}

fn scenario_title(scenario: &Scenario) -> String {
    match (scenario.title.trim(), scenario.variant.trim()) {
        ("", _) => scenario.name.clone(),
        (title, "") => title.to_string(),
        (title, variant) => format!("{title} ({variant})"),
    }
}

/// How many steps a scenario's run takes, played to its end.
fn step_count(scenario: &Scenario) -> Result<usize, String> {
    let mut engine = fencelab_core::Engine::new(scenario.clone()).map_err(|e| e.to_string())?;
    engine.run().map_err(|e| e.to_string())?;
    Ok(engine.position())
}

/// What is wrong with a relative `player` when the book's source folder `src` lacks the page
/// build there: mdBook empties its output folder on every build and copies `src/` into it, so a
/// page build anywhere else is gone from the book. An absolute or root-relative address is
/// served by something else, which the build cannot see, so it is not checked.
pub fn missing_player(src: &Path, player: &str) -> Option<String> {
    if player.starts_with('/') || player.contains("://") {
        return None;
    }
    let folder = if player.ends_with(".html") {
        player.rsplit_once('/').map_or("", |(folder, _)| folder)
    } else {
        player.trim_end_matches('/')
    };
    let script = src.join(folder).join(ELEMENT_SCRIPT);
    (!script.is_file()).then(|| {
        format!(
            "the player is set to \"{player}\", but {} does not exist, so every player in the \
             book will be a plain link to a missing page. mdBook empties its output folder on \
             each build and copies the book's source folder into it: put the page build there \
             (trunk build --release --dist {})",
            script.display(),
            src.join(folder).display()
        )
    })
}

/// The page's `index.html` under `player`: a folder gets the file name, so the link works on a
/// host that lists folders instead of serving their index.
fn page_address(player: &str) -> String {
    if player.ends_with(".html") {
        player.to_string()
    } else {
        format!("{}/index.html", player.trim_end_matches('/'))
    }
}

/// The player's folder as seen from a chapter at `chapter` (relative to `src/`): a relative
/// `player` is relative to the book's root, so a chapter in a sub-folder climbs out of it first.
pub fn player_from(player: &str, chapter: &Path) -> String {
    let absolute = player.starts_with('/') || player.contains("://");
    if absolute {
        return player.trim_end_matches('/').to_string();
    }
    let depth = chapter
        .parent()
        .map_or(0, |dir| dir.components().filter(|c| matches!(c, Component::Normal(_))).count());
    format!("{}{}", "../".repeat(depth), player.trim_end_matches('/'))
}

/// The chapter's content with every `fencelab` block expanded and the element's script added
/// once; `None` when it has no such block.
pub fn expand_chapter(
    config: &Config,
    chapter: &Chapter,
) -> Result<Option<String>, Vec<BlockError>> {
    let Some(path) = chapter.source_path.as_ref().or(chapter.path.as_ref()) else {
        return Ok(None);
    };
    let player = player_from(&config.player, path);
    expand(&chapter.content, &player).map_err(|found| {
        found
            .into_iter()
            .map(|(line, (field, problem))| BlockError {
                chapter: path.display().to_string(),
                line,
                field,
                problem,
            })
            .collect()
    })
}

/// Expands the `fencelab` blocks of one chapter's Markdown, with the player at `player` (as seen
/// from the chapter). Errors carry the line of each bad block's fence.
pub fn expand(markdown: &str, player: &str) -> Result<Option<String>, Vec<(usize, Problem)>> {
    let mut blocks = Vec::new();
    let mut open: Option<(std::ops::Range<usize>, String)> = None;
    for (event, range) in Parser::new(markdown).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                if info.split(|c: char| c.is_whitespace() || c == ',').next() == Some(LANGUAGE) =>
            {
                open = Some((range, String::new()));
            }
            Event::Text(text) => {
                if let Some((_, body)) = open.as_mut() {
                    body.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((range, body)) = open.take() {
                    blocks.push((range, body));
                }
            }
            _ => {}
        }
    }
    if blocks.is_empty() {
        return Ok(None);
    }
    let mut out = String::with_capacity(markdown.len());
    let mut errors = Vec::new();
    let mut at = 0;
    for (range, body) in blocks {
        out.push_str(&markdown[at..range.start]);
        let line = markdown[..range.start].matches('\n').count() + 1;
        match Embed::parse(&body) {
            // Blank lines around the element make it an HTML block of its own.
            Ok(embed) => out.push_str(&format!("\n{}\n", embed.html(player))),
            Err(e) => errors.push((line, e)),
        }
        at = range.end;
    }
    out.push_str(&markdown[at..]);
    if !errors.is_empty() {
        return Err(errors);
    }
    // The element's script sits beside the page in the build.
    let folder = match page_address(player).rsplit_once('/') {
        Some((folder, _)) => format!("{folder}/"),
        None => String::new(),
    };
    out.push_str(&format!("\n\n<script src=\"{}{ELEMENT_SCRIPT}\"></script>\n", escape(&folder)));
    Ok(Some(out))
}

/// `text` safe inside a double-quoted HTML attribute or as element text.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
