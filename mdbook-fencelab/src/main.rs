//! The `mdbook-fencelab` command, as mdBook calls it: `supports <renderer>` answers by exit
//! status; without a subcommand it reads the book as JSON on standard input and writes the
//! expanded book to standard output.

use clap::{Parser, Subcommand};
use mdbook_fencelab::Fencelab;
use mdbook_preprocessor::Preprocessor;
use std::io;
use std::process::ExitCode;

/// Turns ```fencelab code blocks into embedded Fencelab players.
#[derive(Parser)]
#[command(name = "mdbook-fencelab", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Exits 0 when the preprocessor works with the renderer, 1 when it does not.
    Supports {
        /// The renderer's name, e.g. `html`.
        renderer: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Supports { renderer }) => {
            return match Fencelab.supports_renderer(&renderer) {
                Ok(true) => ExitCode::SUCCESS,
                _ => ExitCode::FAILURE,
            };
        }
        None => preprocess(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mdbook-fencelab: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn preprocess() -> anyhow::Result<()> {
    let (ctx, book) = mdbook_preprocessor::parse_input(io::stdin())?;
    if ctx.mdbook_version != mdbook_preprocessor::MDBOOK_VERSION {
        eprintln!(
            "mdbook-fencelab: built for mdBook {}, called by {}; the book format may differ",
            mdbook_preprocessor::MDBOOK_VERSION,
            ctx.mdbook_version
        );
    }
    let book = Fencelab.run(&ctx, book)?;
    serde_json::to_writer(io::stdout().lock(), &book)?;
    Ok(())
}
