//! The text transcript: every step of the run in words, as an ordered list; a run too long to
//! list on the page points to the event log, which lists the steps in view.

use yew::prelude::*;

use crate::viz::run::{step_no, TrackRef};
use crate::viz::words::count;

/// The most steps the transcript lists on the page: listing a longer run would put every step on
/// the page at once, which the log's window avoids.
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
    html! {
        <details id="transcript" class="card transcript">
            <summary>{ format!("Text transcript ({} {})", count(steps), if steps == 1 { "step" } else { "steps" }) }</summary>
            if steps <= TRANSCRIPT_STEPS {
                <ol>
                    { for props.run.timeline.iter().map(|r| html! {
                        <li><span class="mono step-no">{ format!("#{} · t={}", count(step_no(r.index)), r.at.0) }</span>{ r.caption.clone() }</li>
                    }) }
                </ol>
            } else {
                <p>{ format!("This run has {} steps, more than the {} the transcript lists: the event log \
                    lists every one of them in words as you scroll it.", count(steps), count(TRANSCRIPT_STEPS)) }</p>
            }
        </details>
    }
}
