//! `fencelab export`: writes a run's or a history file's history in another format.

use crate::{load, say, BadInput};
use clap::ValueEnum;
use fencelab_core::draw::mermaid;
use fencelab_core::{Checker, Engine, History};
use std::process::ExitCode;

/// What `export` writes.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum To {
    /// Fencelab's history, JSON Lines.
    Jsonl,
    /// A Mermaid `sequenceDiagram` (renders in GitHub Markdown), with the findings as notes.
    Mermaid,
}

/// Exports `source`: a history file (read and judged as it is), or a scenario (run to its end).
pub fn export(source: &str, variant: Option<&str>, to: To) -> Result<ExitCode, BadInput> {
    let path = std::path::Path::new(source);
    let text = path.is_file().then(|| std::fs::read_to_string(path));
    let (history, violations) = match text {
        Some(Ok(text)) if text.trim_start().starts_with("{\"fencelab_history\"") => {
            let history =
                History::from_jsonl(&text).map_err(|e| BadInput(format!("{source}: {e}")))?;
            let violations = Checker::judge(&history);
            (history, violations)
        }
        Some(Err(e)) => return Err(BadInput(format!("cannot read {source}: {e}"))),
        _ => {
            let scenario = load(source, variant)?;
            let label = format!("{} ({})", scenario.name, scenario.variant);
            let mut engine = Engine::new(scenario).map_err(|e| BadInput(e.to_string()))?;
            engine.run().map_err(|e| BadInput(format!("{label}: {e}")))?;
            (engine.history(), engine.violations().to_vec())
        }
    };
    match to {
        To::Jsonl => say!("{}", history.to_jsonl().trim_end()),
        To::Mermaid => say!("{}", mermaid(&history, &violations).trim_end()),
    }
    Ok(ExitCode::SUCCESS)
}
