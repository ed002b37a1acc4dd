//! The text transcript: every step of the run in words, as an ordered list.

use yew::prelude::*;

use crate::viz::run::{step_no, TrackRef};

#[derive(Properties, PartialEq)]
pub struct TranscriptProps {
    pub run: TrackRef,
}

/// Every step's number, time and caption, so the whole run can be read (or heard) without the
/// diagram. The list's own markers are off: each item carries the page's step number.
/// It re-renders only when the run changes.
#[component]
pub fn Transcript(props: &TranscriptProps) -> Html {
    html! {
        <details id="transcript" class="card transcript">
            <summary>{ format!("Text transcript ({} steps)", props.run.len()) }</summary>
            <ol>
                { for props.run.timeline.iter().map(|r| html! {
                    <li><span class="mono step-no">{ format!("#{} · t={}", step_no(r.index), r.at.0) }</span>{ r.caption.clone() }</li>
                }) }
            </ol>
        </details>
    }
}
