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
    /// A Jepsen history in JSON: an array of ops, one per line, every event included.
    JepsenJson,
    /// A Jepsen `history.edn`: a vector of op maps, one per line, every event included.
    JepsenEdn,
    /// The Informal Trace Format of Apalache and Quint: one state per step.
    Itf,
}

/// Exports `source`: a history file (Fencelab's, or a Jepsen or OTLP file, or with `pattern` a
/// text log, read and judged as it is), or a scenario (run to its end).
pub fn export(
    source: &str,
    variant: Option<&str>,
    to: To,
    reading: &crate::import::Reading,
) -> Result<ExitCode, BadInput> {
    let pattern = reading.pattern.as_deref();
    let path = std::path::Path::new(source);
    if let Some(variant) = variant.filter(|_| pattern.is_some() || crate::is_file(source)) {
        return Err(crate::variant_of_a_file(variant, source));
    }
    if pattern.is_some() {
        let bytes =
            std::fs::read(path).map_err(|e| BadInput(format!("cannot read {source}: {e}")))?;
        let history =
            crate::import::history(source, &bytes, crate::import::Format::Pattern, reading)?;
        return write(&history, &Checker::judge(&history), to);
    }
    let text = path.is_file().then(|| std::fs::read(path));
    let foreign = match &text {
        Some(Ok(bytes)) => crate::import::foreign(bytes).map(|format| (format, bytes)),
        _ => None,
    };
    let text = match foreign {
        Some((format, bytes)) => {
            let history = crate::import::history(source, bytes, format, reading)?;
            let violations = Checker::judge(&history);
            return write(&history, &violations, to);
        }
        None => text.map(|t| {
            t.and_then(|b| {
                String::from_utf8(b)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
            })
        }),
    };
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
    write(&history, &violations, to)
}

fn write(
    history: &History,
    violations: &[fencelab_core::Violation],
    to: To,
) -> Result<ExitCode, BadInput> {
    let text = match to {
        To::Jsonl => history.to_jsonl(),
        To::Mermaid => mermaid(history, violations),
        To::JepsenJson => fencelab_interop::jepsen::to_jepsen_json(history),
        To::JepsenEdn => fencelab_interop::jepsen::to_jepsen_edn(history),
        To::Itf => fencelab_interop::itf::to_itf(history),
    };
    say!("{}", text.trim_end());
    Ok(ExitCode::SUCCESS)
}
