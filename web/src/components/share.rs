//! The "Share and export" panel: the link to this view, the embed code, the run as JSON (and
//! importing one), the diagram as SVG, the run's history as JSON Lines or Mermaid, and the run
//! as a Rust test. Files and the clipboard go
//! through [`crate::io`]; importing dispatches [`Action::Import`]. Its only state is the
//! transient status line and the last generated test.

use std::rc::Rc;

use fencelab_core::record::export::RunExport;
use fencelab_core::{names::Named, Scenario};
use fencelab_links::Param;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::components::controls::click;
use crate::components::icons::icon;
use crate::io;
use crate::viz::run::RunRef;
use crate::viz::state::Action;
use crate::viz::window::Crop;

#[derive(Properties, PartialEq)]
pub struct ShareProps {
    /// The run on screen.
    pub run: RunRef,
    /// How many steps of it have played.
    pub position: usize,
    /// The fragment of this view (what the address bar holds).
    pub fragment: AttrValue,
    /// The fragment of this view embedded (diagram, controls and caption).
    pub embed_fragment: AttrValue,
    /// The title shown (the link's, the history's or the story's), which the embed code names.
    pub title: AttrValue,
    /// The chosen finding in words, which an SVG export names.
    #[prop_or_default]
    pub finding: Option<AttrValue>,
    pub on: Callback<Action>,
    /// The recorded history on screen instead of the run, if one is.
    #[prop_or_default]
    pub history: Option<HistoryShare>,
    /// What an SVG export of a long run holds: the part of the diagram drawn around the view.
    #[prop_or_default]
    pub crop: Option<Crop>,
}

/// What the panel needs of a recorded history on screen: only its diagram exports, and its link
/// when a link opened it.
#[derive(Clone, PartialEq)]
pub struct HistoryShare {
    /// Its file name or link.
    pub name: AttrValue,
    /// Whether a `history=` link opened it (a file has no address to share).
    pub linked: bool,
}

/// A file name for this run: the scenario's name and variant.
fn file_stem(scenario: &Scenario) -> String {
    format!("{}-{}", scenario.name, scenario.variant)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect()
}

/// The height of a copied embed before its first height message: enough for the default embed
/// (title, controls, caption, diagram) at the width of an article's column.
pub const EMBED_HEIGHT: u32 = 680;

/// The iframe snippet that embeds `fragment` of the page at `url`, and the few lines of script
/// that fit each Fencelab iframe on the page to the height it reports (`io::HEIGHT_MESSAGE`),
/// telling frames apart by the window a message comes from.
pub fn embed_code(url: &str, fragment: &str, title: &str) -> String {
    let title = title.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    format!(
        "<iframe src=\"{url}#{fragment}\" title=\"Fencelab: {title}\" width=\"100%\" height=\"{EMBED_HEIGHT}\" \
         style=\"border:0;max-width:100%\" loading=\"lazy\"></iframe>\n\
         <script>\n\
         // Fits each Fencelab iframe to the height its page reports.\n\
         addEventListener(\"message\", function (e) {{\n\
         \x20 var d = e.data;\n\
         \x20 if (!d || d.type !== \"{message}\" || !(d.height > 0)) return;\n\
         \x20 document.querySelectorAll(\"iframe\").forEach(function (f) {{\n\
         \x20   if (f.contentWindow === e.source) f.style.height = d.height + \"px\";\n\
         \x20 }});\n\
         }});\n\
         </script>",
        message = io::HEIGHT_MESSAGE,
    )
}

/// The lines above an exported diagram: what it shows (and, cropped, which steps), then the
/// chosen finding if there is one.
pub fn export_heading(title: &str, crop: Option<&Crop>, finding: Option<&str>) -> Vec<String> {
    let shows = match crop {
        Some(crop) => format!("{title} · {}", crop.title),
        None => title.to_string(),
    };
    std::iter::once(shows).chain(finding.map(str::to_string)).collect()
}

#[component]
pub fn ShareExport(props: &ShareProps) -> Html {
    let status = use_state(String::new);
    let rust = use_state(|| None::<Rc<String>>);
    let url = io::page_url();
    let link = format!("{url}#{}", props.fragment);
    let history = props.history.as_ref();
    let embed = embed_code(&url, &props.embed_fragment, &props.title);
    // A history's files are named after it, without its folders and extension.
    let stem = history.map_or_else(
        || file_stem(&props.run.scenario),
        |h| {
            let base = h.name.rsplit('/').next().unwrap_or_default();
            let base = base.rsplit_once('.').map_or(base, |(b, _)| b);
            base.chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
                .collect()
        },
    );
    let linked = history.is_none_or(|h| h.linked);

    let copy = |id: &'static str, what: &'static str| {
        let status = status.clone();
        Callback::from(move |_: MouseEvent| {
            let done = io::copy_from(id);
            status.set(if done {
                format!("Copied the {what}.")
            } else {
                format!("The {what} is selected: press Ctrl+C (⌘C) to copy it.")
            });
        })
    };
    let download_json = {
        let (status, run, position) = (status.clone(), props.run.clone(), props.position);
        Callback::from(move |_: MouseEvent| {
            let result = run.export_json(position).and_then(|json| {
                io::download(
                    &format!("{}.fencelab-run.json", file_stem(&run.scenario)),
                    "application/json",
                    &json,
                )
            });
            status.set(match result {
                Ok(()) => format!("Downloaded the run up to step {position} as JSON."),
                Err(e) => format!("Could not export the run: {e}."),
            });
        })
    };
    let download_svg = {
        let (status, stem, crop) = (status.clone(), stem.clone(), props.crop.clone());
        let heading = export_heading(&props.title, crop.as_ref(), props.finding.as_deref());
        Callback::from(move |_: MouseEvent| {
            let result = io::diagram_svg(crop.as_ref(), &heading)
                .and_then(|svg| io::download(&format!("{stem}.svg"), "image/svg+xml", &svg));
            status.set(match (result, &crop) {
                (Ok(()), Some(crop)) => {
                    format!("Downloaded the diagram around the view as SVG: {}.", crop.title)
                }
                (Ok(()), None) => "Downloaded the diagram as SVG.".to_string(),
                (Err(e), _) => format!("Could not export the diagram: {e}."),
            });
        })
    };
    let download_history = |mermaid: bool| {
        let (status, run) = (status.clone(), props.run.clone());
        Callback::from(move |_: MouseEvent| {
            let (extension, kind, what) = if mermaid {
                ("mmd", "text/plain", "a Mermaid diagram")
            } else {
                ("jsonl", "application/jsonl", "a history (JSON Lines)")
            };
            let result = run.history_text(mermaid).and_then(|text| {
                io::download(&format!("{}.{extension}", file_stem(&run.scenario)), kind, &text)
            });
            status.set(match result {
                Ok(()) => format!("Downloaded the whole run as {what}."),
                Err(e) => format!("Could not export the run: {e}."),
            });
        })
    };
    let make_test = {
        let (status, run, rust) = (status.clone(), props.run.clone(), rust.clone());
        Callback::from(move |_: MouseEvent| match run.rust_test() {
            Ok(text) => {
                rust.set(Some(Rc::new(text)));
                status.set(
                    "The Rust test is below; copy it into any crate that depends on fencelab-core."
                        .into(),
                );
            }
            Err(e) => status.set(format!("Could not write a test: {e}.")),
        })
    };
    let import = {
        let (status, on) = (status.clone(), props.on.clone());
        Callback::from(move |event: Event| {
            let Some(input) = event.target().and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            else {
                return;
            };
            let (status, on) = (status.clone(), on.clone());
            io::read_file(&input, move |_, text| {
                // The status says what the core made of the file, next to the control pressed.
                match RunExport::import(&text) {
                    Ok(_) => status.set("Imported the run.".into()),
                    Err(e) => status.set(format!("Not imported: {e}.")),
                }
                on.emit(Action::Import(Rc::new(text)));
            });
        })
    };

    html! {
        <section class="card share" aria-labelledby="share-title">
            <h2 id="share-title" class="card-title">{ icon("compare") }{ "Share and export" }</h2>
            if linked {
                <div class="share-row">
                    <label for="share-link">{ "Link to this view" }</label>
                    <div class="copy-field">
                        <textarea id="share-link" class="mono" rows="1" readonly=true value={link} />
                        <button id="copy-link" type="button" class="chip" onclick={copy("share-link", "link")}>{ "Copy link" }</button>
                    </div>
                </div>
                <div class="share-row">
                    <label for="embed-code">{ "Embed code" }</label>
                    <div class="copy-field">
                        <textarea id="embed-code" class="mono" rows="4" readonly=true value={embed} />
                        <button id="copy-embed" type="button" class="chip" onclick={copy("embed-code", "embed code")}>{ "Copy embed code" }</button>
                    </div>
                </div>
            } else {
                <p id="share-no-address" class="muted">
                    { "A history opened from a file has no address, so it has no link or embed code: put the file \
                       on the same site as the page and link it with " }<code>{ format!("#{}=ADDRESS", Param::History.name()) }</code>{ "." }
                </p>
            }
            <div class="share-actions">
                if history.is_none() {
                    <button id="export-json" type="button" class="chip" onclick={download_json}>{ "Download run (JSON)" }</button>
                    <input id="import-json" class="sr-only" type="file" accept=".json,application/json" onchange={import} />
                    <label class="chip file-chip" for="import-json">{ "Import run (JSON)" }</label>
                }
                <button id="export-svg" type="button" class="chip" onclick={download_svg}
                    aria-describedby={props.crop.is_some().then_some("export-svg-note")}>
                    { if props.crop.is_some() { "Download diagram around the view (SVG)" } else { "Download diagram (SVG)" } }
                </button>
                if history.is_none() {
                    <button id="export-history" type="button" class="chip" onclick={download_history(false)}>{ "Download history (JSON Lines)" }</button>
                    <button id="export-mermaid" type="button" class="chip" onclick={download_history(true)}>{ "Download as Mermaid" }</button>
                    <button id="make-rust-test" type="button" class="chip" onclick={make_test}>{ "Write as a Rust test" }</button>
                }
            </div>
            if let Some(crop) = &props.crop {
                <p id="export-svg-note" class="muted hint">
                    { format!("A long run's diagram is exported around the view, as drawn there ({}). \
                       Scroll or move the player to export another part.", crop.title) }
                </p>
            }
            <p id="share-status" class="share-status" role="status" aria-live="polite">{ (*status).clone() }</p>
            if let Some(text) = &*rust {
                <div class="share-row">
                    <label for="rust-test">{ "Rust test (replays this scenario and schedule, asserts the verdict)" }</label>
                    <div class="copy-field">
                        <textarea id="rust-test" class="mono" rows="10" readonly=true value={text.to_string()} />
                        <button id="copy-rust-test" type="button" class="chip" onclick={copy("rust-test", "Rust test")}>{ "Copy" }</button>
                    </div>
                </div>
            }
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct LinkProblemProps {
    /// What was wrong with the link.
    pub error: AttrValue,
    pub on: Callback<Action>,
}

/// Says what was wrong with the opening link and, if a custom scenario was saved in this
/// browser, offers it back.
#[component]
pub fn LinkProblem(props: &LinkProblemProps) -> Html {
    let saved = io::load(io::CUSTOM_KEY).and_then(|json| Scenario::from_json(&json).ok());
    let restore = saved.map(|scenario| {
        let title = scenario.title.clone();
        let scenario = Box::new(scenario);
        let onclick = click(&props.on, Action::Load(scenario));
        html! {
            <button id="restore-custom" type="button" class="chip" onclick={onclick}>
                { format!("Restore your last custom scenario (“{title}”)") }
            </button>
        }
    });
    html! {
        <div id="link-error" class="error link-error" role="alert">
            <p>{ "This link could not be opened: " }{ props.error.clone() }
                { ". Showing the first story instead: choose another in the Story menu above." }</p>
            <div class="link-error-actions">
                { for restore }
                <button id="dismiss-link-error" type="button" class="chip"
                    onclick={click(&props.on, Action::DismissLinkError)}>{ "Dismiss" }</button>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_is_headed_with_what_it_shows_its_steps_and_the_chosen_finding() {
        assert_eq!(export_heading("The paused worker", None, None), ["The paused worker"]);
        let crop = Crop { top: 0.0, height: 90.0, title: "Steps 1 to 3 of 9".into() };
        assert_eq!(
            export_heading("History: a.jsonl", Some(&crop), Some("Finding: x at step 2: y")),
            ["History: a.jsonl · Steps 1 to 3 of 9", "Finding: x at step 2: y"]
        );
    }

    #[test]
    fn the_embed_code_is_an_iframe_and_the_script_that_fits_it() {
        let code = embed_code("https://example.org/f/", "scenario=paused-worker", "A \"b\" <c>");
        assert!(code.starts_with(
            "<iframe src=\"https://example.org/f/#scenario=paused-worker\" \
             title=\"Fencelab: A &quot;b&quot; &lt;c>\" width=\"100%\" height=\"680\""
        ));
        assert!(code.contains("d.type !== \"fencelab:height\""));
        assert!(code.contains("f.contentWindow === e.source"));
        assert!(code.ends_with("</script>"));
        // The README shows the same script, so what it documents is what the page copies.
        let script = &code[code.find("<script>").unwrap()..];
        assert!(include_str!("../../../README.md").contains(script));
    }
}
