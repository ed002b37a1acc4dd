//! `fencelab render`: a scenario drawn at one step, as the page draws it, for pages that show a
//! story before the player loads, without scripts, or on paper.

use clap::ValueEnum;
use fencelab_core::picture::{Played, Scheme, MAX_STEPS};
use fencelab_core::Scenario;
use fencelab_links::{page_address, LinkScenario, ShareLink};

use crate::{say, BadInput};

/// What `render` writes.
#[derive(Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Picture {
    /// A figure: the title, the diagram, the step's caption, the verdict and a link to play it.
    #[default]
    Html,
    /// The diagram alone, a self-contained SVG document.
    Svg,
}

/// The colours of the picture (it always prints light).
#[derive(Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Colours {
    /// Follow the reader's system setting.
    #[default]
    Auto,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
    /// Follow the mdBook theme the reader picked.
    Book,
}

impl From<Colours> for Scheme {
    fn from(colours: Colours) -> Scheme {
        match colours {
            Colours::Auto => Scheme::Auto,
            Colours::Light => Scheme::Light,
            Colours::Dark => Scheme::Dark,
            Colours::Book => Scheme::Book,
        }
    }
}

/// Where the figure's link goes: an address given whole, or the player's page with this view.
pub enum Link {
    /// No link.
    None,
    /// This address.
    To(String),
    /// The player's page at this address (a folder or its `index.html`), showing the story at
    /// the still's step with the usual embed parts.
    Player(String),
}

/// Plays `scenario` and prints its still after `step` steps (by default its key step).
pub fn render(
    scenario: Scenario,
    from_file: bool,
    label: &str,
    step: Option<usize>,
    to: Picture,
    link: Link,
    colours: Colours,
) -> Result<std::process::ExitCode, BadInput> {
    // A scenario file travels in the link whole; a built-in story by its name.
    let shown = if from_file {
        LinkScenario::Custom(Box::new(scenario.clone()))
    } else {
        LinkScenario::Builtin { name: scenario.name.clone(), variant: scenario.variant.clone() }
    };
    let played =
        Played::play(scenario, MAX_STEPS).map_err(|e| BadInput(format!("{label}: {e}")))?;
    if let Some(why) = &played.stopped {
        eprintln!("note: {label} was drawn from {} steps: {why}", played.len());
    }
    let position = match step {
        Some(step) if step > played.len() => {
            return Err(BadInput(format!(
                "--step {step}: {label} has {} steps; use a step from 0 to {}",
                played.len(),
                played.len()
            )))
        }
        Some(step) => step,
        None => {
            let key = played.key_position();
            eprintln!(
                "note: drew step {key} of {}, the story's key step; a player that opens there says step=\"{key}\"",
                played.len()
            );
            key
        }
    };
    let href = match link {
        Link::None => None,
        Link::To(href) => Some(href),
        Link::Player(player) => {
            // The whole page at the same step, with its stories and course around the story.
            let view = ShareLink { scenario: shown, step: position, ..ShareLink::builtin("", "") };
            Some(format!("{}#{}", page_address(&player), view.to_fragment()))
        }
    };
    let still = played.still(position);
    match to {
        Picture::Html => say!("{}", still.html(href.as_deref(), colours.into())),
        Picture::Svg => {
            if href.is_some() {
                return Err(BadInput(
                    "--link and --player go with --to html: an SVG has no link".into(),
                ));
            }
            say!("{}", still.svg(colours.into()))
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}
