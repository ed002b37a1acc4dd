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
//! which is what a reader sees without JavaScript. The link, its embed parts and themes, and the
//! element's attributes (which a block's keys are named after) are `fencelab-links`' spelling,
//! the page's own. The element makes the iframe and fits it to
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
use fencelab_core::format::model::Scenario;
use fencelab_core::names::Named;
use fencelab_core::picture::{escape, Played, Scheme, MAX_STEPS};
use fencelab_core::{stories::library, stories::library::UnknownStory};
use fencelab_links::{self as links, Attribute, LinkScenario, ShareLink, Theme, BOOK_THEME};
use mdbook_preprocessor::book::{Book, Chapter};
use mdbook_preprocessor::{Preprocessor, PreprocessorContext};
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde::Deserialize;
use std::fmt;
use std::path::{Component, Path};
use std::sync::Arc;

/// The code block language this preprocessor expands.
pub const LANGUAGE: &str = "fencelab";

/// The block's theme that leaves the player to the reader's system setting: the element gets
/// no `theme` attribute.
pub const AUTO_THEME: &str = "auto";

/// The themes a block may ask for: one the page forces (`light`, `dark`), the element's
/// [`BOOK_THEME`] (the default: the player follows the theme the reader picked in mdBook's
/// menu) or [`AUTO_THEME`].
pub fn themes() -> Vec<&'static str> {
    let forced = Theme::VARIANTS.iter().map(|t| t.name());
    forced.chain([BOOK_THEME, AUTO_THEME]).collect()
}

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

/// A checked block, ready to render.
#[derive(Debug, Clone)]
pub struct Embed {
    /// The view the player opens: the story or scenario, the first step, the embed parts and a
    /// theme the block forces.
    pub link: ShareLink,
    /// Without a forced theme, whether the player follows the book's theme ([`BOOK_THEME`],
    /// the default) rather than the reader's system setting ([`AUTO_THEME`]).
    pub follow_book: bool,
    /// The first height, before the page reports its own.
    pub height: u32,
    /// The accessible name of the embedded frame.
    pub label: String,
    /// The run, played while the book builds, whose still shows until the player is ready.
    pub played: Arc<Played>,
    /// The step the still shows: the block's, else the story's key step.
    pub still_at: usize,
}

/// Two embeds are the same view; the run is played from it.
impl PartialEq for Embed {
    fn eq(&self, other: &Self) -> bool {
        (&self.link, self.follow_book, self.height, &self.label, self.still_at)
            == (&other.link, other.follow_book, other.height, &other.label, other.still_at)
    }
}

impl Eq for Embed {}

impl Embed {
    /// Reads and checks the text inside a `fencelab` block. Errors name the field; the caller
    /// adds the chapter and the line.
    pub fn parse(body: &str) -> Result<Embed, Problem> {
        let spec = if body.trim_start().starts_with('{') {
            BlockSpec { scenario: Some(body.to_string()), ..BlockSpec::default() }
        } else {
            toml::from_str::<BlockSpec>(body).map_err(|e| toml_problem(body, &e))?
        };
        let (shown, scenario) = match (&spec.scenario, &spec.story) {
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
                (LinkScenario::Custom(Box::new(scenario.clone())), scenario)
            }
            (None, Some(name)) => {
                let scenario =
                    library::scenario(name, spec.variant.as_deref()).map_err(|e| match e {
                        UnknownStory::Story { .. } => field("story", e.to_string()),
                        UnknownStory::Variant { .. } => field("variant", e.to_string()),
                    })?;
                let variant = scenario.variant.clone();
                (LinkScenario::Builtin { name: name.clone(), variant }, scenario)
            }
            (None, None) => {
                return Err(field(".", "name a `story` (and `variant`), or give a `scenario`"))
            }
        };
        let parts = match &spec.parts {
            Some(parts) => read_parts(parts)?,
            None => links::Embed::USUAL,
        };
        let theme = spec.theme.as_deref().unwrap_or(BOOK_THEME);
        if !themes().contains(&theme) {
            let problem = format!("\"{theme}\" is not a theme (use {})", themes().join(" or "));
            return Err(field("theme", problem));
        }
        let title = scenario.full_title();
        let played = Played::play(scenario, MAX_STEPS).map_err(|e| field(".", e.to_string()))?;
        // Without a step the player opens where its still shows the story's point.
        let step = spec.step.unwrap_or_else(|| played.key_position());
        if let Some(why) = played.stopped.as_ref().filter(|_| step > 0) {
            return Err(field("step", format!("{title} cannot be played to its end: {why}")));
        }
        let steps = played.len();
        if step > steps {
            return Err(field(
                "step",
                format!("{title} has {steps} steps; use a step from 0 to {steps}"),
            ));
        }
        if spec.height == Some(0) {
            return Err(field("height", "use a height in CSS pixels above 0"));
        }
        let link = ShareLink {
            scenario: shown,
            step,
            embed: Some(parts),
            theme: Theme::from_name(theme),
            ..ShareLink::builtin("", "")
        };
        Ok(Embed {
            link,
            follow_book: theme == BOOK_THEME,
            height: spec.height.unwrap_or(DEFAULT_HEIGHT),
            label: spec.label.unwrap_or_else(|| format!("Fencelab: {title}")),
            still_at: step,
            played: Arc::new(played),
        })
    }

    /// The page's link fragment for this view, without the `#`.
    pub fn fragment(&self) -> String {
        self.link.to_fragment()
    }

    /// The element for this block, with its still inside (for readers without JavaScript, and
    /// until the player is ready), which links to the story at the same step on the page.
    /// `player` is the page's address as seen from the chapter.
    pub fn html(&self, player: &str) -> String {
        let mut attributes = Vec::new();
        match &self.link.scenario {
            LinkScenario::Builtin { name, variant } => {
                attributes.push((Attribute::Story, name.clone()));
                attributes.push((Attribute::Variant, variant.clone()));
            }
            LinkScenario::Custom(scenario) => {
                attributes.push((Attribute::Scenario, links::scenario_text(scenario)));
            }
        }
        if self.link.step > 0 {
            attributes.push((Attribute::Step, self.link.step.to_string()));
        }
        // What the element writes as the link's `embed=`.
        let parts = self.link.embed.unwrap_or(links::Embed::USUAL);
        attributes.push((Attribute::Parts, parts.value()));
        // A forced theme is the page's; the book's is the element's to follow.
        match (self.link.theme, self.follow_book) {
            (Some(theme), _) => attributes.push((Attribute::Theme, theme.name().into())),
            (None, true) => attributes.push((Attribute::Theme, BOOK_THEME.into())),
            (None, false) => {}
        }
        let src = links::page_address(player);
        attributes.push((Attribute::Height, self.height.to_string()));
        attributes.push((Attribute::Label, self.label.clone()));
        attributes.push((Attribute::Src, src.clone()));
        let attributes: Vec<String> = attributes
            .into_iter()
            .map(|(attribute, value)| format!("{}=\"{}\"", attribute.name(), escape(&value)))
            .collect();
        // The link leaves the book for the whole page at the same step, with its stories and
        // its course around the story, rather than for the bare player.
        let page = ShareLink { embed: None, ..self.link.clone() };
        let href = format!("{src}#{}", page.to_fragment());
        // The opening tag alone on its line starts Markdown's HTML block, which a blank line
        // would end, so the still has none.
        format!(
            "<fencelab-player {attributes}>\n{still}\n</fencelab-player>",
            attributes = attributes.join(" "),
            still = self
                .played
                .still(self.still_at)
                .html(Some(&href), self.scheme())
                .replace('\n', " "),
        )
    }

    /// The still's colours: the theme the block forces, else the book's or the reader's.
    fn scheme(&self) -> Scheme {
        match (self.link.theme, self.follow_book) {
            (Some(Theme::Light), _) => Scheme::Light,
            (Some(Theme::Dark), _) => Scheme::Dark,
            (_, true) => Scheme::Book,
            (_, false) => Scheme::Auto,
        }
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

/// The parts a block names, as the page reads them: names around commas may carry spaces.
fn read_parts(value: &str) -> Result<links::Embed, Problem> {
    let names: Vec<&str> = value.split(',').map(str::trim).collect();
    links::Embed::read(&names.join(",")).map_err(|e| field("parts", e.problem))
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
    let folder = match links::page_address(player).rsplit_once('/') {
        Some((folder, _)) => format!("{folder}/"),
        None => String::new(),
    };
    out.push_str(&format!("\n\n<script src=\"{}{ELEMENT_SCRIPT}\"></script>\n", escape(&folder)));
    Ok(Some(out))
}

#[cfg(test)]
mod tests;
