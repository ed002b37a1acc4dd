//! `fencelab render`: a scenario drawn at one step, as the page draws it, for pages that show a
//! story before the player loads, without scripts, or on paper.

use clap::ValueEnum;
use fencelab_core::picture::{Played, Scheme, MAX_STEPS};
use fencelab_core::Scenario;

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
    System,
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
            Colours::System => Scheme::System,
            Colours::Light => Scheme::Light,
            Colours::Dark => Scheme::Dark,
            Colours::Book => Scheme::Book,
        }
    }
}

/// Plays `scenario` and prints its still after `step` steps (by default its key step).
pub fn render(
    scenario: Scenario,
    label: &str,
    step: Option<usize>,
    to: Picture,
    link: Option<&str>,
    colours: Colours,
) -> Result<std::process::ExitCode, BadInput> {
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
        None => played.key_position(),
    };
    let still = played.still(position);
    match to {
        Picture::Html => say!("{}", still.html(link, colours.into())),
        Picture::Svg => {
            if link.is_some() {
                return Err(BadInput("--link goes with --to html: an SVG has no link".into()));
            }
            say!("{}", still.svg(colours.into()))
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}
