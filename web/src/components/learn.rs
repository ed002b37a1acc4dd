//! The quiz and the course on the page: the "Predict the outcome" and "Start here" chips, the
//! question (or its feedback) beside the player, a chapter's bar above its story and the course's
//! table of contents. Everything they say comes from the reducer (`Viz::shown`, `in_course`,
//! `Progress`); they only render it.

use fencelab_core::stories::course::{course, Chapter};
use fencelab_core::stories::library::CaseInfo;
use yew::prelude::*;

use crate::components::controls::click;
use crate::components::icons::icon;
use crate::viz::run::step_no;
use crate::viz::state::{Action, LearnAction, Progress, Shown, Viz};

fn learn(on: &Callback<Action>, action: LearnAction) -> Callback<MouseEvent> {
    click(on, Action::Learn(action))
}

/// The chips in the story card: the course's contents and the quiz, with its progress and reset.
pub fn learn_modes(state: &Viz, on: &Callback<Action>) -> Html {
    let (quiz, contents) = (state.learn.quiz, state.learn.contents);
    let new_here = state.learn.progress.done.is_empty();
    let (answered, questions) = state.answered_count();
    html! {
        <>
            <button id="course-toggle" type="button" class={classes!("chip", contents.then_some("on"))}
                aria-pressed={contents.to_string()} onclick={learn(on, LearnAction::Contents(!contents))}>
                { icon("list") }{ if new_here { "New here? Start the course" } else { "The course" } }
            </button>
            <button id="quiz-toggle" type="button" class={classes!("chip", quiz.then_some("on"))}
                aria-pressed={quiz.to_string()} onclick={learn(on, LearnAction::Quiz(!quiz))}>
                { icon("unknown") }{ "Predict the outcome" }
            </button>
            if quiz && questions > 0 {
                <span class="muted quiz-count">{ format!("{answered} of {questions} answered") }</span>
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
        Some(Shown::Answered(a, chosen)) if chosen == a.answer => "Right.".to_string(),
        Some(Shown::Answered(a, _)) => format!("Not quite: the answer is {}.", a.options[a.answer]),
        None => String::new(),
    };
    html! { <p id="quiz-status" class="sr-only" role="status">{ said }</p> }
}

/// The open question, or the feedback on the answer with the caption of the step that answered
/// it.
pub fn quiz_card(state: &Viz, on: &Callback<Action>) -> Html {
    let Some(shown) = state.shown() else {
        return Html::default();
    };
    match shown {
        Shown::Asking(asked) => html! {
            <section id="quiz" class="card quiz" aria-label="Predict the outcome">
                <fieldset id="quiz-question" tabindex="-1">
                    <legend>{ asked.question.clone() }</legend>
                    <p class="muted">{ format!("Step {} answers it. Predict, then see.", step_no(asked.step)) }</p>
                    <div class="options">
                        { for asked.options.iter().enumerate().map(|(i, option)| html! {
                            <button type="button" class="option" data-option={i.to_string()}
                                onclick={learn(on, LearnAction::Answer(i))}>{ option.clone() }</button>
                        }) }
                    </div>
                </fieldset>
            </section>
        },
        Shown::Answered(asked, chosen) => {
            let right = chosen == asked.answer;
            let answer = &asked.options[asked.answer];
            let explained = state.current().filter(|r| r.index == asked.step);
            html! {
                <section id="quiz" class={classes!("card", "quiz", if right { "right" } else { "wrong" })}
                    aria-labelledby="quiz-feedback">
                    <h2 id="quiz-feedback" tabindex="-1">
                        { icon(if right { "check" } else { "cross" }) }
                        { if right { "Right" } else { "Not quite" } }
                    </h2>
                    <p class="verdict">
                        { asked.question.clone() }{ " " }
                        if right {
                            { format!("{answer}.") }
                        } else {
                            { format!("You said “{}”; the answer is “{answer}”.", asked.options[chosen]) }
                        }
                    </p>
                    if let Some(record) = explained {
                        <p class="explain" data-testid="quiz-caption">
                            <span class="step-no mono">{ format!("#{}", step_no(record.index)) }</span>
                            { record.caption.clone() }
                        </p>
                    }
                    <button id="quiz-continue" type="button" class="chip on" onclick={learn(on, LearnAction::Continue)}>
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

/// The bar above a course story: its chapter (linkable), the chapter's intro, where the story
/// sits in it and the way to the stories before and after it.
pub fn course_bar(state: &Viz, on: &Callback<Action>) -> Html {
    let Some((index, chapter, Some(story))) = state.in_course() else {
        return Html::default();
    };
    let count = chapter.stories.len();
    let previous = match story {
        0 => index.checked_sub(1).map(|c| (c, course()[c].stories.len() - 1)),
        s => Some((index, s - 1)),
    };
    let next = if story + 1 < count {
        Some((index, story + 1))
    } else {
        (index + 1 < course().len()).then_some((index + 1, 0))
    };
    let step = |id: &str, label: &str, to: Option<(usize, usize)>| match to {
        Some((c, s)) => html! {
            <button id={id.to_string()} type="button" class="chip" onclick={learn(on, LearnAction::Story(c, s))}>
                { format!("{label}: {}", story_title(&state.cases, course()[c].stories[s])) }
            </button>
        },
        None => Html::default(),
    };
    html! {
        <nav id="course-bar" class="course-bar" aria-label="Course">
            <p class="course-where">
                <a href={format!("#course={}", chapter.id)}>{ chapter.title }</a>
                <span class="muted">{ format!(" · story {} of {count} · {} of {count} done", story + 1,
                    state.learn.progress.done_in(chapter)) }</span>
            </p>
            <details class="course-intro" open=true>
                <summary>{ "About this chapter" }</summary>
                <p>{ chapter.intro }</p>
            </details>
            <div class="modes">
                { step("course-previous", "Previous", previous) }
                { step("course-next", "Next", next) }
                <button id="course-contents" type="button" class="chip" onclick={learn(on, LearnAction::Contents(true))}>
                    { "All chapters" }
                </button>
            </div>
        </nav>
    }
}

/// The course's table of contents: every chapter in order, its intro, its stories with a mark
/// on each one finished, and how many are. A plain function rather than a component: it shows
/// only while the reader chooses, and a component would add Yew's per-component code.
pub fn course_contents(cases: &[CaseInfo], progress: &Progress, on: &Callback<Action>) -> Html {
    let chapter = |(index, chapter): (usize, &Chapter)| {
        let done = progress.done_in(chapter);
        let count = chapter.stories.len();
        html! {
            <li class="chapter">
                <h3 id={format!("chapter-{}", chapter.id)}>
                    <a href={format!("#course={}", chapter.id)}>{ chapter.title }</a>
                    <span class={classes!("muted", "chapter-done", (done == count).then_some("all"))}>
                        { format!("{done} of {count} done") }
                    </span>
                </h3>
                <details class="course-intro">
                    <summary>{ "Introduction" }</summary>
                    <p>{ chapter.intro }</p>
                </details>
                <ol class="course-stories">
                    { for chapter.stories.iter().enumerate().map(|(s, story)| {
                        let finished = progress.is_done(*story);
                        html! {
                            <li>
                                <button type="button" class="link" onclick={learn(on, LearnAction::Story(index, s))}>
                                    { story_title(cases, *story) }
                                </button>
                                if finished {
                                    <span class="done">{ icon("check") }<span class="sr-only">{ " (done)" }</span></span>
                                }
                            </li>
                        }
                    }) }
                </ol>
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
            <ol class="chapters">{ for course().iter().enumerate().map(chapter) }</ol>
            <div class="modes">
                <button id="course-close" type="button" class="chip" onclick={learn(on, LearnAction::Contents(false))}>
                    { "Close" }
                </button>
                if !progress.done.is_empty() || !progress.answers.is_empty() {
                    <button id="course-reset" type="button" class="chip" onclick={learn(on, LearnAction::ResetCourse)}>
                        { "Reset course progress" }
                    </button>
                }
            </div>
        </section>
    }
}
