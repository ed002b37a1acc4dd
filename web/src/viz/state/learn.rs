//! Learning: "Predict the outcome" (the player stops before a checkpoint's step, asks, then plays
//! the step so its caption explains) and the guided course (chapters of stories, progress
//! remembered). Where to stop and the right answer come from the core's `checkpoint::place` on
//! the run on screen (`Run::asked`); nothing here decides an outcome.

use std::rc::Rc;

use fencelab_core::check::checkpoint::Asked;
use fencelab_core::{stories::course::course, stories::course::Chapter};

use super::{Mode, Viz};

/// A story's place in the course: its chapter and its index there.
pub type Place = (&'static Chapter, usize);

/// The local-storage key the shell keeps [`Progress`] under.
pub const PROGRESS_KEY: &str = "fencelab-learn";

/// What the reader has done, kept in this browser: answers and finished stories. They are a
/// few dozen at most, so plain lists searched in order keep the page's code small.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Progress {
    /// Each answered question's key (story, label and question) and the option chosen.
    pub answers: Vec<(String, String)>,
    /// The stories finished, as `case/variant`.
    pub done: Vec<String>,
}

impl Progress {
    /// Reads the stored text: one `a<TAB>key<TAB>answer` or `d<TAB>story` per line. Lines it
    /// does not understand are skipped, so a damaged record loses only those lines.
    pub fn from_text(text: &str) -> Progress {
        let mut progress = Progress::default();
        for line in text.lines() {
            let mut fields = line.split('\t');
            match (fields.next(), fields.next(), fields.next()) {
                (Some("a"), Some(key), Some(answer)) => progress.set_answer(key, answer),
                (Some("d"), Some(story), None) => progress.set_done(story),
                _ => {}
            }
        }
        progress
    }

    /// The text [`Progress::from_text`] reads. Names with a tab or a line break (only an
    /// edited scenario could have them) are left out rather than written ambiguously.
    pub fn to_text(&self) -> String {
        let plain = |s: &str| !s.contains(['\t', '\n', '\r']);
        let mut out = String::new();
        for (key, answer) in self.answers.iter().filter(|(k, a)| plain(k) && plain(a)) {
            out.push_str(&format!("a\t{key}\t{answer}\n"));
        }
        for story in self.done.iter().filter(|s| plain(s)) {
            out.push_str(&format!("d\t{story}\n"));
        }
        out
    }

    /// The option a question was answered with.
    pub fn answer(&self, key: &str) -> Option<&str> {
        self.answers.iter().find(|(k, _)| k == key).map(|(_, a)| a.as_str())
    }

    /// Remembers an answer, replacing an earlier one to the same question.
    pub fn set_answer(&mut self, key: &str, answer: &str) {
        self.answers.retain(|(k, _)| k != key);
        self.answers.push((key.into(), answer.into()));
    }

    /// Marks a story finished.
    pub fn set_done(&mut self, story: &str) {
        if !self.done.iter().any(|s| s == story) {
            self.done.push(story.into());
        }
    }

    /// Whether a course story is finished.
    pub fn is_done(&self, (case, variant): (&str, &str)) -> bool {
        self.done.contains(&format!("{case}/{variant}"))
    }

    /// How many of a chapter's stories are finished.
    pub fn done_in(&self, chapter: &Chapter) -> usize {
        chapter.stories.iter().filter(|s| self.is_done(**s)).count()
    }
}

/// The quiz and the course as the page shows them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Learn {
    /// Whether the player stops to ask at checkpoints ("Predict the outcome").
    pub quiz: bool,
    /// The course chapter being followed (an index into `course()`), while its story shows.
    pub chapter: Option<usize>,
    /// Whether the course's table of contents is open.
    pub contents: bool,
    /// The question being asked (an index into `Run::asked`); it shows at its step.
    pub asking: Option<usize>,
    /// The questions just answered at one place, in the order asked, whose feedback shows
    /// (after their step has played) until the reader moves on.
    pub answered: Vec<usize>,
    /// Whether autoplay stopped for the question, so continuing plays on.
    pub resume: bool,
    /// What is remembered; the shell saves it whenever it changes.
    pub progress: Rc<Progress>,
}

/// Something the reader did about the quiz or the course.
#[derive(Debug, Clone, PartialEq)]
pub enum LearnAction {
    /// Turn "Predict the outcome" on or off.
    Quiz(bool),
    /// Answer the open question with this option.
    Answer(usize),
    /// Close the feedback and go on (playing again if autoplay stopped for the question).
    Continue,
    /// Forget the answers to this story's questions, so they are asked again.
    ResetAnswers,
    /// Forget every answer and every finished story.
    ResetCourse,
    /// Open or close the course's table of contents.
    Contents(bool),
    /// Open a chapter at its first unfinished story.
    Chapter(usize),
    /// Follow this chapter with the story on screen (a link that names both).
    Follow(usize),
}

/// The question on screen and what the reader said, for the quiz card.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown<'a> {
    /// Waiting for an answer.
    Asking(&'a Asked),
    /// Answered: each question answered at this place and the option chosen, in the order
    /// asked. Their step has played, so its caption explains them all.
    Answered(Vec<(&'a Asked, usize)>),
}

impl Viz {
    /// Whether the quiz applies to what is on screen: a simulated story played on its own or
    /// decided step by step, not compared, and no history (on its way or open).
    fn quizzing(&self) -> bool {
        self.learn.quiz && matches!(self.mode, Mode::Story | Mode::Decide(_))
    }

    /// The key an answer is remembered under: the story, what runs (variant or `edited`, and
    /// the switches) and the question.
    fn answer_key(&self, asked: &Asked) -> String {
        format!("{}/{}/{}", self.story.case, self.badge().label, asked.question)
    }

    /// The remembered answer to a question, as an index into its options.
    fn remembered(&self, asked: &Asked) -> Option<usize> {
        let answer = self.learn.progress.answer(&self.answer_key(asked))?;
        asked.options.iter().position(|o| o == answer)
    }

    /// The first unanswered question that stops the player at `position`.
    fn unanswered_at(&self, position: usize) -> Option<usize> {
        if !self.quizzing() {
            return None;
        }
        let asked = &self.story.run.asked;
        (0..asked.len())
            .find(|&i| asked[i].step.index() == position && self.remembered(&asked[i]).is_none())
    }

    /// Moves to the end, or in a quiz to the next unanswered question on the way there and asks
    /// it: skipping ahead never skips a question, nor finishes a story whose questions wait.
    pub(super) fn end_or_ask(&mut self, end: usize) {
        match (self.position..end).find(|&p| self.unanswered_at(p).is_some()) {
            Some(question) => {
                self.seek(question);
                self.learn.answered.clear();
                self.ask_here(false);
            }
            None => self.seek(end),
        }
    }

    /// Opens the question at the current position, if one is unanswered there, and pauses.
    fn ask_here(&mut self, resume: bool) -> bool {
        let Some(i) = self.unanswered_at(self.position) else {
            return false;
        };
        self.learn.asking = Some(i);
        self.learn.resume = resume;
        self.playing = false;
        true
    }

    /// One step on (`ticking`: the autoplay timer's), unless a question waits here; a step that
    /// reaches a question's place stops there and asks.
    pub(super) fn forward_or_ask(&mut self, ticking: bool) {
        if self.ask_here(ticking) {
            return;
        }
        if ticking {
            // A fast speed plays several steps a tick, but never past a question.
            let next =
                (self.position + 1..self.cursor().1).find(|&p| self.unanswered_at(p).is_some());
            self.tick(next);
        } else {
            self.step_by(true, 1);
        }
        self.learn.answered.clear();
        self.ask_here(ticking);
    }

    /// What the quiz card shows now, if anything: a question waiting at this place first, then
    /// the feedback on the ones answered here.
    pub fn shown(&self) -> Option<Shown<'_>> {
        if !self.quizzing() {
            return None;
        }
        let asked = &self.story.run.asked;
        if let Some(a) = self.learn.asking.and_then(|i| asked.get(i)) {
            if a.step.index() == self.position {
                return Some(Shown::Asking(a));
            }
        }
        let answered: Vec<(&Asked, usize)> = (self.learn.answered.iter())
            .filter_map(|&i| asked.get(i).and_then(|a| Some((a, self.remembered(a)?))))
            .collect();
        (!answered.is_empty()).then_some(Shown::Answered(answered))
    }

    /// Whether the story's outcome may show below its intro: always without the quiz, and with
    /// it once the run has ended or every question is answered, so it never gives an answer away.
    pub fn shows_outcome(&self) -> bool {
        let (answered, questions) = self.answered_count();
        !self.quizzing()
            || self.position == self.story.run.track.len()
            || questions > 0 && answered == questions
    }

    /// How many of the run's questions have an answer, and how many there are.
    pub fn answered_count(&self) -> (usize, usize) {
        let asked = &self.story.run.asked;
        (asked.iter().filter(|a| self.remembered(a).is_some()).count(), asked.len())
    }

    /// The course's chapter being followed and the story's index in it, if it is one of its
    /// stories.
    pub fn in_course(&self) -> Option<(usize, &'static Chapter, Option<usize>)> {
        let index = self.learn.chapter?;
        let chapter = course().get(index)?;
        let story = (!self.story.edited).then(|| self.story_in(chapter)).flatten();
        Some((index, chapter, story))
    }

    /// The course's stories just before and just after the one shown, each as its chapter and
    /// its index there (the next chapter's first story follows a chapter's last).
    pub fn course_neighbours(&self) -> Option<(Option<Place>, Option<Place>)> {
        let (index, chapter, story) = self.in_course()?;
        let story = story?;
        let chapters = course();
        let previous = match story {
            0 => index.checked_sub(1).map(|c| (&chapters[c], chapters[c].stories.len() - 1)),
            s => Some((chapter, s - 1)),
        };
        let next = if story + 1 < chapter.stories.len() {
            Some((chapter, story + 1))
        } else {
            chapters.get(index + 1).map(|c| (c, 0))
        };
        Some((previous, next))
    }

    fn story_in(&self, chapter: &Chapter) -> Option<usize> {
        chapter.stories.iter().position(|(c, v)| *c == self.story.case && *v == self.story.variant)
    }

    /// Applies a quiz or course action.
    pub(super) fn learn(&mut self, action: LearnAction) {
        match action {
            LearnAction::Quiz(on) => {
                self.learn.quiz = on;
                self.learn.asking = None;
                self.learn.answered.clear();
            }
            LearnAction::Answer(option) => self.answer(option),
            LearnAction::Continue => {
                self.learn.answered.clear();
                let (at, end) = self.cursor();
                self.playing = self.learn.resume && at < end;
            }
            LearnAction::ResetAnswers => {
                let prefix = format!("{}/{}/", self.story.case, self.badge().label);
                let progress = Rc::make_mut(&mut self.learn.progress);
                progress.answers.retain(|(key, _)| !key.starts_with(&prefix));
                self.learn.answered.clear();
                self.ask_here(false);
            }
            LearnAction::ResetCourse => {
                self.learn.progress = Rc::default();
                self.learn.answered.clear();
            }
            LearnAction::Contents(open) => self.learn.contents = open,
            LearnAction::Chapter(index) => {
                if let Some(chapter) = course().get(index) {
                    let progress = &self.learn.progress;
                    let first = chapter.stories.iter().position(|s| !progress.is_done(*s));
                    self.open_story(index, first.unwrap_or(0));
                }
            }
            LearnAction::Follow(index) => {
                if index < course().len() {
                    self.learn.chapter = Some(index);
                    self.learn.contents = false;
                }
            }
        }
    }

    /// Answers the open question and remembers the answer. Another question waiting at the same
    /// place is asked next; once none waits, the step that answers them all plays, so the
    /// feedback on each comes with that step's caption.
    fn answer(&mut self, option: usize) {
        let Some(i) = self.learn.asking.filter(|_| self.quizzing()) else {
            return;
        };
        let Some(asked) = self.story.run.asked.get(i).filter(|a| a.step.index() == self.position)
        else {
            return;
        };
        let Some(chosen) = asked.options.get(option) else {
            return;
        };
        let (key, chosen) = (self.answer_key(asked), chosen.clone());
        Rc::make_mut(&mut self.learn.progress).set_answer(&key, &chosen);
        self.learn.asking = None;
        self.learn.answered.push(i);
        if !self.ask_here(self.learn.resume) {
            self.step_by(true, 1);
        }
    }

    /// Opens a course story at its start, following its chapter, with the quiz on.
    fn open_story(&mut self, chapter: usize, story: usize) {
        let Some(&(case, variant)) = course().get(chapter).and_then(|c| c.stories.get(story))
        else {
            return;
        };
        self.pick(case.into());
        if self.story.variant != variant {
            self.switch_variant(variant.into());
        }
        self.learn.chapter = Some(chapter);
        self.learn.contents = false;
        self.learn.quiz = true;
    }

    /// Keeps the quiz and the course true to what an action did: a question shows only at its
    /// place and feedback only until the reader moves; a story off the chapter leaves it; a
    /// story played to its end, or whose questions are all answered, is finished.
    pub(super) fn settle_learning(&mut self, before: &Viz, by_learning: bool) {
        let same_run = Rc::ptr_eq(&before.story.run.0, &self.story.run.0);
        if !by_learning && (!same_run || before.position != self.position) {
            self.learn.answered.clear();
            let asking = self.learn.asking.and_then(|i| self.story.run.asked.get(i));
            if asking.is_none_or(|a| a.step.index() != self.position || !same_run) {
                self.learn.asking = None;
            }
        }
        if self.in_course().is_some_and(|(_, _, story)| story.is_none()) {
            self.learn.chapter = None;
        }
        let (answered, questions) = self.answered_count();
        let finished = self.position > 0 && self.position == self.story.run.track.len()
            || questions > 0 && answered == questions;
        let story = format!("{}/{}", self.story.case, self.story.variant);
        // Only the story as written counts, played on its own or decided.
        let plain = matches!(self.mode, Mode::Story | Mode::Decide(_) | Mode::Fetching(_));
        if finished
            && plain
            && !self.story.edited
            && self.story.switches.is_empty()
            && !self.learn.progress.done.contains(&story)
        {
            Rc::make_mut(&mut self.learn.progress).set_done(&story);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viz::state::Action;
    use fencelab_core::stories::course::chapter;
    use yew::Reducible;

    fn apply(state: Rc<Viz>, actions: impl IntoIterator<Item = Action>) -> Rc<Viz> {
        actions.into_iter().fold(state, Reducible::reduce)
    }

    fn learn(action: LearnAction) -> Action {
        Action::Learn(action)
    }

    /// The fenced paused-worker story with the quiz on, at the start.
    fn quizzing() -> Rc<Viz> {
        apply(Rc::new(Viz::new()), [learn(LearnAction::Quiz(true))])
    }

    /// The question the story asks first.
    fn first(state: &Viz) -> Asked {
        state.story.run.asked.iter().min_by_key(|a| a.step).unwrap().clone()
    }

    /// Answers every question waiting at this place, each rightly.
    fn answer_all_here(mut state: Rc<Viz>) -> Rc<Viz> {
        while let Some(Shown::Asking(a)) = state.shown() {
            let right = a.answer;
            state = apply(state, [learn(LearnAction::Answer(right))]);
        }
        state
    }

    fn forward_until_asked(mut state: Rc<Viz>) -> Rc<Viz> {
        for _ in 0..state.story.run.track.len() {
            if matches!(state.shown(), Some(Shown::Asking(_))) {
                break;
            }
            state = apply(state, [Action::Forward]);
        }
        state
    }

    #[test]
    fn stepping_stops_before_the_step_that_answers_and_waits_for_the_answer() {
        let state = forward_until_asked(quizzing());
        let asked = first(&state);
        assert_eq!(state.position, asked.step.index());
        assert_eq!(state.shown(), Some(Shown::Asking(&asked)));
        // Forward again does not pass an unanswered question.
        let held = apply(state.clone(), [Action::Forward, Action::Forward]);
        assert_eq!(held.position, asked.step.index());
        // The answer is remembered. The story asks about A's write and the final value at one
        // place (A's write settles both), so the second is asked before the step plays.
        let wrong = (asked.answer + 1) % asked.options.len();
        let answered = apply(held, [learn(LearnAction::Answer(wrong))]);
        let Some(Shown::Asking(second)) = answered.shown() else { panic!("no second question") };
        let second = second.clone();
        assert_ne!(second, asked);
        assert_eq!((answered.position, second.step), (asked.step.index(), asked.step));
        // Once both are answered the step plays, and the feedback on each shows with its caption.
        let answered = apply(answered, [learn(LearnAction::Answer(second.answer))]);
        assert_eq!(answered.position, asked.step.number());
        assert_eq!(
            answered.shown(),
            Some(Shown::Answered(vec![(&asked, wrong), (&second, second.answer)]))
        );
        assert_eq!(answered.current().map(|r| r.index), Some(asked.step.index()));
        // Moving on closes the feedback; the answered question is not asked again.
        let on = apply(answered, [Action::Forward]);
        assert_eq!(on.shown(), None);
        let again = forward_until_asked(apply(on, [Action::ToStart]));
        assert!(again.position > asked.step.index());
    }

    #[test]
    fn autoplay_pauses_at_a_question_and_continues_after_the_answer() {
        let mut state = apply(quizzing(), [Action::TogglePlay]);
        let asked = first(&state);
        while state.playing {
            state = apply(state, [Action::Tick]);
        }
        assert_eq!(state.position, asked.step.index());
        assert!(state.learn.resume);
        let state = apply(answer_all_here(state), [learn(LearnAction::Continue)]);
        assert_eq!(state.shown(), None);
        assert!(state.playing);
    }

    #[test]
    fn the_fastest_autoplay_still_stops_at_a_question() {
        let fastest = Action::Speed(crate::viz::state::SPEEDS.len() - 1);
        let mut state = apply(quizzing(), [fastest, Action::TogglePlay]);
        let asked = first(&state);
        while state.playing {
            state = apply(state, [Action::Tick]);
        }
        assert_eq!(state.position, asked.step.index());
        assert_eq!(state.shown(), Some(Shown::Asking(&asked)));
    }

    #[test]
    fn seeking_past_a_question_is_not_trapped_and_off_means_no_questions() {
        let state = quizzing();
        let step = first(&state).step;
        let past = apply(state.clone(), [Action::Seek(step.number()), Action::Forward]);
        assert_eq!(past.position, step.number() + 1);
        // Seeking onto the question's place does not open it; stepping on from there does.
        let onto = apply(state.clone(), [Action::Seek(step.index())]);
        assert_eq!(onto.shown(), None);
        assert!(matches!(apply(onto, [Action::Forward]).shown(), Some(Shown::Asking(_))));
        let off = apply(Rc::new(Viz::new()), [Action::Seek(step.index()), Action::Forward]);
        assert_eq!((off.position, off.shown()), (step.number(), None));
    }

    #[test]
    fn the_answer_follows_the_run_when_a_switch_changes_it() {
        let fenced = forward_until_asked(quizzing());
        let fenced_answer = first(&fenced).answer;
        let broken = apply(
            quizzing(),
            [Action::Switches(vec![fencelab_core::stories::switches::Switch::UnfencedStore])],
        );
        let broken = forward_until_asked(broken);
        assert_ne!(first(&broken).answer, fenced_answer);
        // Answers to the switched run are kept apart from the story's own.
        let answered = apply(broken, [learn(LearnAction::Answer(0))]);
        assert!(answered.learn.progress.answers.iter().any(|(k, _)| k.contains(" + ")));
    }

    #[test]
    fn reset_forgets_this_storys_answers_only() {
        let state = forward_until_asked(quizzing());
        let state = apply(state, [learn(LearnAction::Answer(0))]);
        let mut progress = (*state.learn.progress).clone();
        progress.set_answer("other/fenced/Q?", "Yes");
        let mut state = (*state).clone();
        state.learn.progress = Rc::new(progress);
        let reset = apply(Rc::new(state), [learn(LearnAction::ResetAnswers)]);
        let keys: Vec<&str> =
            reset.learn.progress.answers.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["other/fenced/Q?"]);
    }

    #[test]
    fn two_questions_at_one_place_are_asked_in_turn_then_explained_by_one_step() {
        // The broken paused-worker story asks about A's write and the final value at one step.
        let state = apply(quizzing(), [Action::Variant("broken".into())]);
        let state = forward_until_asked(state);
        let step = state.position;
        let first = state.learn.asking.unwrap();
        let answered = apply(state, [learn(LearnAction::Answer(0))]);
        // The second is asked at once, before any feedback: the step would give it away.
        assert_eq!(answered.position, step);
        let Some(Shown::Asking(asked)) = answered.shown() else { panic!("no second question") };
        assert_ne!(answered.learn.asking, Some(first));
        let answer = asked.answer;
        let done = apply(answered, [learn(LearnAction::Answer(answer))]);
        assert_eq!(done.position, step + 1);
        let Some(Shown::Answered(both)) = done.shown() else { panic!("no feedback") };
        assert_eq!(both.len(), 2);
        assert_eq!(both[0].0, &done.story.run.asked[first]);
        assert!(both[1].1 == both[1].0.answer);
        assert!(both.iter().all(|(a, _)| a.step.index() == step));
        assert_eq!(done.current().map(|r| r.index), Some(step));
    }

    #[test]
    fn the_outcome_shows_only_once_it_gives_nothing_away() {
        assert!(Viz::new().shows_outcome());
        let state = quizzing();
        assert!(!state.shows_outcome());
        // The end key stops at the first question on the way, and gives nothing away.
        let skipped = apply(state.clone(), [Action::ToEnd]);
        assert!(matches!(skipped.shown(), Some(Shown::Asking(_))));
        assert!(!skipped.shows_outcome());
        let answered = answer_all_here(forward_until_asked(state));
        assert!(answered.shows_outcome());
        assert!(to_the_end(answered).shows_outcome());
    }

    /// The end of the story, each question on the way answered right.
    fn to_the_end(mut state: Rc<Viz>) -> Rc<Viz> {
        for _ in 0..=2 * state.story.run.asked.len() + 1 {
            state = match state.shown() {
                Some(Shown::Asking(a)) => {
                    let answer = a.answer;
                    apply(state.clone(), [learn(LearnAction::Answer(answer))])
                }
                _ => apply(state, [Action::ToEnd]),
            };
        }
        state
    }

    #[test]
    fn progress_reads_back_what_it_writes_and_skips_damaged_lines() {
        let mut progress = Progress::default();
        progress.set_answer("paused-worker/fenced/Will db apply A's write?", "No");
        progress.set_answer("bad\tkey", "x");
        progress.set_done("paused-worker/broken");
        progress.set_answer("paused-worker/fenced/Will db apply A's write?", "Yes");
        let text = progress.to_text();
        let read = Progress::from_text(&format!("{text}garbage\nd\ta\tb\n"));
        progress.answers.retain(|(k, _)| !k.contains('\t'));
        assert_eq!(read, progress);
        assert_eq!(read.answers.len(), 1);
    }

    #[test]
    fn a_chapter_opens_at_its_first_unfinished_story_and_counts_progress() {
        let the_fence = course().iter().position(|c| c.id == "the-fence").unwrap();
        let chapter = chapter("the-fence").unwrap();
        let state = apply(Rc::new(Viz::new()), [learn(LearnAction::Chapter(the_fence))]);
        assert_eq!((state.story.case.as_str(), state.story.variant.as_str()), chapter.stories[0]);
        assert!(state.learn.quiz);
        assert_eq!(state.in_course().map(|c| c.2), Some(Some(0)));
        // The end key stops at a question, and the story is not done while one waits.
        let asked = apply(state.clone(), [Action::ToEnd]);
        assert!(!asked.learn.progress.is_done(chapter.stories[0]));
        // Playing to the end, answering on the way, finishes it; the chapter then opens at the
        // next one.
        let done = to_the_end(state);
        assert_eq!(done.position, done.story.run.track.len());
        assert!(done.learn.progress.is_done(chapter.stories[0]));
        assert_eq!(done.learn.progress.done_in(chapter), 1);
        let next = apply(done, [learn(LearnAction::Chapter(the_fence))]);
        assert_eq!((next.story.case.as_str(), next.story.variant.as_str()), chapter.stories[1]);
        // Picking a story outside the chapter leaves it.
        let left = apply(next, [Action::Pick("payment-capture".into())]);
        assert_eq!(left.learn.chapter, None);
    }

    #[test]
    fn answering_every_question_finishes_a_story() {
        let mut state = quizzing();
        for _ in 0..state.story.run.track.len() * 2 {
            state = match state.shown() {
                Some(Shown::Asking(a)) => {
                    apply(state.clone(), [learn(LearnAction::Answer(a.answer))])
                }
                _ => apply(state, [Action::Forward]),
            };
            if state.learn.progress.is_done(("paused-worker", "fenced")) {
                break;
            }
        }
        assert_eq!(state.answered_count().0, state.story.run.asked.len());
        assert!(state.learn.progress.is_done(("paused-worker", "fenced")));
    }

    #[test]
    fn a_course_link_opens_the_first_unfinished_story_and_keeps_the_chapter() {
        let mut progress = Progress::default();
        let chapter = chapter("the-fence").unwrap();
        let (case, variant) = chapter.stories[0];
        progress.set_done(&format!("{case}/{variant}"));
        let state = Viz::open_with("course=the-fence", Rc::new(progress));
        assert_eq!((state.story.case.as_str(), state.story.variant.as_str()), chapter.stories[1]);
        assert!(state.learn.quiz && state.link_error.is_none());
        let link = state.to_link();
        assert_eq!(link.course.as_deref(), Some("the-fence"));
        assert_eq!(link.quiz, None);
        let back = Viz::open_with(&link.to_fragment(), state.learn.progress.clone());
        assert_eq!(
            (back.story.case.as_str(), back.learn.chapter),
            (state.story.case.as_str(), state.learn.chapter)
        );
        let quiz = Viz::open("scenario=paused-worker&quiz=1");
        assert!(quiz.learn.quiz && quiz.learn.chapter.is_none());
        assert!(Viz::open("course=nowhere").link_error.is_some_and(|e| e.contains("course")));
    }
}
