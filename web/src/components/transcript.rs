//! The text transcript: every step of the run in words, as an ordered list, or, for a run too
//! long to list on the page, as a text file to download.

use yew::prelude::*;

use crate::io;
use crate::viz::run::{step_no, TrackRef};

/// The most steps the transcript lists on the page. A longer run's transcript is a download:
/// listing it would put every step on the page at once, which the log's window avoids.
pub const TRANSCRIPT_STEPS: usize = 2_000;

#[derive(Properties, PartialEq)]
pub struct TranscriptProps {
    pub run: TrackRef,
}

/// Every step's number, time and caption, so the whole run can be read (or heard) without the
/// diagram. The list's own markers are off: each item carries the page's step number.
/// It re-renders only when the run changes.
#[component]
pub fn Transcript(props: &TranscriptProps) -> Html {
    let steps = props.run.len();
    let status = use_state(String::new);
    let download = {
        let (run, status) = (props.run.clone(), status.clone());
        Callback::from(move |_: MouseEvent| {
            status.set(
                match io::download("fencelab-transcript.txt", "text/plain", &run.transcript()) {
                    Ok(()) => "Downloaded the transcript.".to_string(),
                    Err(e) => format!("Could not save the transcript: {e}."),
                },
            );
        })
    };
    html! {
        <details id="transcript" class="card transcript">
            <summary>{ format!("Text transcript ({steps} steps)") }</summary>
            if steps <= TRANSCRIPT_STEPS {
                <ol>
                    { for props.run.timeline.iter().map(|r| html! {
                        <li><span class="mono step-no">{ format!("#{} · t={}", step_no(r.index), r.at.0) }</span>{ r.caption.clone() }</li>
                    }) }
                </ol>
            } else {
                <p>{ format!("This run has {steps} steps, more than the page lists at once: the event log shows \
                    them as you scroll, and the transcript is a text file with one line per step.") }</p>
                <button id="download-transcript" type="button" class="chip" onclick={download}>
                    { "Download the transcript (text)" }</button>
                <p class="muted" role="status">{ (*status).clone() }</p>
            }
        </details>
    }
}
