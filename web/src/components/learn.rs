//! The quiz and the course on the page: the "Predict the outcome" and course chips, the
//! question (or its feedback) beside the player, a chapter's bar above its story and the course's
//! table of contents. Everything they say comes from the reducer (`Viz::shown`, `in_course`,
//! `Progress`); they only render it. Course stories are plain links (a chapter and a story in
//! the address), so they open in a new tab, and Back returns to the story before.

use fencelab_core::check::checkpoint::Asked;
use fencelab_core::stories::library::CaseInfo;
use fencelab_core::{stories::course::course, stories::course::Chapter};
use fencelab_links::ShareLink;
use yew::prelude::*;

use crate::components::controls::click;
use crate::components::icons::icon;
use crate::viz::state::{Action, LearnAction, Place, Progress, Shown, Viz};

fn learn(on: &Callback<Action>, action: LearnAction) -> Callback<MouseEvent> {
    click(on, Action::Learn(action))
}

fn chip(on: bool) -> &'static str {
    if on {
        "chip on"
    } else {
        "chip"
    }
}

/// The chips in the story card: the course's contents and the quiz, with its progress and reset.
pub fn learn_modes(state: &Viz, on: &Callback<Action>) -> Html {
    let (quiz, contents) = (state.learn.quiz, state.learn.contents);
    let new_here = state.learn.progress.done.is_empty();
    let (answered, questions) = state.answered_count();
    // Inside the course its bar has the contents; the invitation is for readers outside it.
    let in_course = state.in_course().is_some();
    // A story played to its end counts as done before its questions are answered.
    let watched = in_course
        && answered < questions
        && state.learn.progress.is_done((state.story.case.as_str(), state.story.variant.as_str()));
    html! {
        <>
            if !in_course {
                <button id="course-toggle" type="button" class={chip(contents)} aria-pressed={contents.to_string()}
                    onclick={learn(on, LearnAction::Contents(!contents))}>
                    { icon("list") }{ if new_here { "New here? Start the course" } else { "The course" } }
                </button>
            }
            <button id="quiz-toggle" type="button" class={chip(quiz)} aria-pressed={quiz.to_string()}
                onclick={learn(on, LearnAction::Quiz(!quiz))}>
                { icon("unknown") }{ "Predict the outcome" }
            </button>
            if quiz && questions > 0 {
                <span class="muted quiz-count">{ format!("{}{answered} of {questions} answered", if watched { "watched, " } else { "" }) }</span>
                if answered > 0 {
                    <button id="quiz-reset" type="button" class="chip" onclick={learn(on, LearnAction::ResetAnswers)}>
                        { "Reset my answers" }
                    </button>
                }
            }
        </>
    }
}

/// What a screen reader hears when a question opens or is answered (an always-present live
/// region, so the change is announced).
pub fn quiz_status(state: &Viz) -> Html {
    let said = match state.shown() {
        Some(Shown::Asking(a)) => format!("The player stopped for a question: {}", a.question),
        // Each verdict, marked right or not, in the order the questions were asked.
        Some(Shown::Answered(answered)) => {
            let each = answered.iter().map(|&(a, chosen)| verdict(a, chosen, true));
            each.collect::<Vec<_>>().join(" ")
        }
        None => String::new(),
    };
    html! { <p id="quiz-status" class="sr-only" role="status">{ said }</p> }
}

/// What the reader said to one question, and the answer; `marked` (several answered at once)
/// says first whether this one was right.
fn verdict(asked: &Asked, chosen: usize, marked: bool) -> String {
    let answer = &asked.options[asked.answer];
    let right = chosen == asked.answer;
    let mark = match (marked, right) {
        (false, _) => "",
        (true, true) => "Right: ",
        (true, false) => "Not quite: ",
    };
    let said = if right {
        format!("{answer}.")
    } else {
        format!("You said “{}”; the answer is “{answer}”.", asked.options[chosen])
    };
    format!("{mark}{} {said}", asked.question)
}

/// The open question, or the feedback on the answers, which the caption of the step that
/// answered them (shown above the card) explains. Focus moves to "Continue" (see
/// `use_learn`), so Enter goes on.
pub fn quiz_card(state: &Viz, on: &Callback<Action>) -> Html {
    match state.shown() {
        None => Html::default(),
        Some(Shown::Asking(asked)) => {
            // Answers already given at this place wait for the same step.
            let more =
                if state.learn.answered.is_empty() { "it" } else { "this one and the one before" };
            let note = format!("Step {} answers {more}. Predict, then see.", asked.step);
            html! {
                <section id="quiz" class="card quiz" aria-label="Predict the outcome">
                    <fieldset id="quiz-question" tabindex="-1">
                        <legend>{ asked.question.clone() }</legend>
                        <p class="muted">{ note }</p>
                        { for asked.options.iter().enumerate().map(|(i, option)| html! {
                            <button type="button" class="option" onclick={learn(on, LearnAction::Answer(i))}>
                                { option.clone() }
                            </button>
                        }) }
                    </fieldset>
                </section>
            }
        }
        Some(Shown::Answered(answered)) => {
            let right = answered.iter().filter(|(a, chosen)| *chosen == a.answer).count();
            let all = right == answered.len();
            let (class, glyph) =
                if all { ("card quiz right", "check") } else { ("card quiz wrong", "cross") };
            let heading = match (answered.len(), all) {
                (1, true) => "Right".to_string(),
                (1, false) => "Not quite".to_string(),
                (n, _) => format!("{right} of {n} right"),
            };
            let step = answered[0].0.step;
            let explained = state.current().filter(|r| r.index == step.index());
            html! {
                <section id="quiz" class={class} aria-labelledby="quiz-feedback">
                    <h2 id="quiz-feedback" tabindex="-1">{ icon(glyph) }{ heading }</h2>
                    { for answered.iter().map(|&(asked, chosen)| html! {
                        <p class="verdict">{ verdict(asked, chosen, answered.len() > 1) }</p>
                    }) }
                    // The caption just above, of the step that answered, says why: the card
                    // points to it rather than repeating it.
                    <button id="quiz-continue" type="button" class="chip on"
                        aria-describedby={explained.map(|_| "caption")}
                        onclick={learn(on, LearnAction::Continue)}>
                        { "Continue" }
                    </button>
                </section>
            }
        }
    }
}

/// A story's title in the course: the case's title and the variant.
fn story_title(cases: &[CaseInfo], (case, variant): (&str, &str)) -> String {
    let title = cases.iter().find(|c| c.name == case).map_or(case, |c| c.title.as_str());
    format!("{title} ({variant})")
}

/// The address of a chapter's story, which follows the chapter.
fn story_link(chapter: &Chapter, (case, variant): (&str, &str)) -> String {
    let link = ShareLink { course: Some(chapter.id.into()), ..ShareLink::builtin(case, variant) };
    format!("#{}", link.to_fragment())
}

/// The address of a chapter, which opens its first unfinished story.
fn chapter_link(chapter: &Chapter) -> String {
    format!("#{}", ShareLink::chapter(chapter.id).to_fragment())
}

/// The bar above a course story: its chapter (linkable), the chapter's intro, where the story
/// sits in it and links to the stories before and after it.
pub fn course_bar(state: &Viz, on: &Callback<Action>) -> Html {
    let (Some((_, chapter, Some(story))), Some((previous, next))) =
        (state.in_course(), state.course_neighbours())
    else {
        return Html::default();
    };
    let count = chapter.stories.len();
    let link = |id: &str, label: &str, to: Option<Place>| neighbour(state, id, label, to);
    let done = state.learn.progress.done_in(chapter);
    html! {
        <nav id="course-bar" class="course-bar" aria-label="Course">
            <p class="course-where">
                <a href={chapter_link(chapter)}>{ chapter.title }</a>
                <span class="course-progress">{ format!(" · story {} of {count} · {done} of {count} done", story + 1) }</span>
            </p>
            <details class="course-intro">
                <summary>{ "About this chapter" }</summary>
                <p>{ chapter.intro }</p>
            </details>
            if next.is_none() {
                <div id="course-end" class="course-end">
                    <p>{ "The end of the course: leases that end too soon, the fence, retries, effects, \
                          slow messages and clocks, the fence's limits, and when it is not needed. Next: \
                          steer a story yourself with “You decide”, pick any story from the Story menu, \
                          or read the README to write scenarios and embed players." }</p>
                </div>
            }
            <p class="modes">
                { link("course-previous", "Previous", previous) }
                { link("course-next", "Next", next) }
                <button id="course-contents" type="button" class="chip" onclick={learn(on, LearnAction::Contents(true))}>
                    { "All chapters" }
                </button>
            </p>
        </nav>
    }
}

/// A link to a story before or after this one in the course.
fn neighbour(state: &Viz, id: &str, label: &str, to: Option<Place>) -> Html {
    let Some((chapter, story)) = to else { return Html::default() };
    let to = chapter.stories[story];
    html! {
        <a id={id.to_string()} class="chip" href={story_link(chapter, to)}>
            { format!("{label}: {}", story_title(&state.cases, to)) }
        </a>
    }
}

/// At a course story's last step, where the reader is, the link to the next story (the course
/// bar's is above the story).
pub fn course_next(state: &Viz) -> Html {
    let (at, end) = state.cursor();
    match state.course_neighbours() {
        Some((_, next @ Some(_))) if at == end && state.shown().is_none() => html! {
            <p class="course-next">{ neighbour(state, "course-next-end", "Next", next) }</p>
        },
        _ => Html::default(),
    }
}

/// The course's table of contents: every chapter in order, its intro, its stories with a mark
/// on each one finished, and how many are. A plain function rather than a component: it shows
/// only while the reader chooses, and a component would add Yew's per-component code.
pub fn course_contents(cases: &[CaseInfo], progress: &Progress, on: &Callback<Action>) -> Html {
    let chapter = |chapter: &Chapter| {
        let stories = chapter.stories.iter().map(|story| {
            let done = progress.is_done(*story);
            html! {
                <li class={done.then_some("done")}>
                    <a href={story_link(chapter, *story)}>{ story_title(cases, *story) }</a>
                    { if done { " ✓ done" } else { "" } }
                </li>
            }
        });
        html! {
            <li>
                <h3>
                    <a href={chapter_link(chapter)}>{ chapter.title }</a>
                    { format!(" · {} of {} done", progress.done_in(chapter), chapter.stories.len()) }
                </h3>
                <details class="course-intro">
                    <summary>{ "Introduction" }</summary>
                    <p>{ chapter.intro }</p>
                </details>
                <ol>{ for stories }</ol>
            </li>
        }
    };
    html! {
        <section id="course" class="card course" aria-labelledby="course-title">
            <h2 id="course-title">{ "Start here: the guided course" }</h2>
            <p class="muted">
                { "Seven chapters, from a worker that pauses past its lease to when fencing is not needed. \
                   Each story stops to ask what happens next; a story is done when you play it to the end \
                   or answer its questions. Your progress is kept in this browser." }
            </p>
            <ol class="chapters">{ for course().iter().map(chapter) }</ol>
            <p class="modes">
                <button id="course-close" type="button" class="chip" onclick={learn(on, LearnAction::Contents(false))}>
                    { "Close" }
                </button>
                if !progress.done.is_empty() || !progress.answers.is_empty() {
                    <button id="course-reset" type="button" class="chip" onclick={learn(on, LearnAction::ResetCourse)}>
                        { "Reset course progress" }
                    </button>
                }
            </p>
        </section>
    }
}
