//! The page's view state: one fenced register and what the reader has done to it.
//!
//! Every decision lives here (and, below it, in `fencelab-core`); the components in `app.rs` and
//! `view.rs` only render this state and dispatch [`Action`]s. That keeps the logic testable with
//! plain `cargo test`, without a browser.

use std::collections::VecDeque;
use std::rc::Rc;

use fencelab_core::{
    fence::generation::TokenError, fence::register::FencedRegister,
    fence::register::SameGenerationPolicy, Generation, OperationId, ResourceId, WriteRequest,
};
use yew::Reducible;

/// The one resource the page guards.
pub const RESOURCE: &str = "ledger";

/// How many attempts the history list keeps (newest first).
pub const HISTORY_LIMIT: usize = 8;

/// What one write attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The register accepted the write.
    Applied {
        /// The generation the write carried.
        generation: String,
        /// The register's revision after the write.
        revision: String,
    },
    /// The register refused the write.
    Rejected {
        /// The core's own explanation, from its `Display`.
        reason: String,
    },
}

impl Outcome {
    /// A short machine-friendly name, used for CSS classes and `data-kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Applied { .. } => "applied",
            Outcome::Rejected { .. } => "rejected",
        }
    }
}

/// One press of the Write button.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// 1 for the first attempt on the page, then counting up.
    pub seq: u64,
    /// The generation field exactly as it was typed.
    pub generation: String,
    /// The value the write tried to store.
    pub value: String,
    /// What happened.
    pub outcome: Outcome,
}

/// Something the reader did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The generation field changed.
    SetGeneration(String),
    /// The value field changed.
    SetValue(String),
    /// The Write button was pressed (or Enter in the form).
    Write,
    /// The highlight of attempt `seq` has run its course.
    EndFlash(u64),
}

/// Everything the page shows.
#[derive(Debug, Clone)]
pub struct RegisterView {
    resource: ResourceId,
    register: FencedRegister,
    generation_input: String,
    value_input: String,
    attempts: u64,
    history: VecDeque<Attempt>,
    flashing: Option<u64>,
    /// What is wrong with the generation field, when the last press of Write found no token in
    /// it. Such a press never reaches the register, so it is no attempt and no rejection.
    generation_error: Option<String>,
    /// How many presses of Write found no token, so the page moves focus to the field each time.
    input_errors: u64,
}

/// The longest part of a mistyped token an error message repeats.
const ECHO: usize = 24;

/// Why the generation field holds no token, in words that say what a token is.
fn token_problem(text: &str, error: &TokenError) -> String {
    const WHAT: &str = "a token is a positive whole number, like 1, 2 or 3";
    let shown = |got: &str| {
        let mut echo: String = got.chars().take(ECHO).collect();
        if got.chars().count() > ECHO {
            echo.push('…');
        }
        echo
    };
    match error {
        _ if text.trim().is_empty() => format!("Type a token: {WHAT}."),
        TokenError::NotPositive { got } => format!("“{}” is not a token: {WHAT}.", shown(got)),
        TokenError::TooLarge { got } => format!(
            "“{}” is too large: the largest token is {}.",
            shown(got),
            Generation::MAX.get()
        ),
        other => format!("{other}."),
    }
}

impl Default for RegisterView {
    fn default() -> Self {
        Self::new()
    }
}

impl RegisterView {
    /// An empty register for [`RESOURCE`] that lets the current owner write again with the same
    /// generation ([`SameGenerationPolicy::AllowSame`]).
    pub fn new() -> Self {
        // `Display`, not `expect`'s `Debug`: the message shows the name as written.
        let resource = ResourceId::new(RESOURCE)
            .unwrap_or_else(|e| unreachable!("the constant resource name is valid, yet {e}"));
        Self {
            register: FencedRegister::new(resource.clone(), SameGenerationPolicy::AllowSame),
            resource,
            generation_input: "1".to_string(),
            value_input: "first draft".to_string(),
            attempts: 0,
            history: VecDeque::with_capacity(HISTORY_LIMIT),
            flashing: None,
            generation_error: None,
            input_errors: 0,
        }
    }

    /// The guarded resource's name.
    pub fn resource(&self) -> &str {
        self.resource.as_str()
    }

    /// The highest generation the register has accepted, if any.
    pub fn highest(&self) -> Option<Generation> {
        self.register.highest()
    }

    /// The register's current value, if anything was ever written.
    pub fn current_value(&self) -> Option<&str> {
        self.register.value()
    }

    /// The register's revision, as text.
    pub fn revision(&self) -> String {
        self.register.revision().to_string()
    }

    /// The generation field's text.
    pub fn generation_input(&self) -> &str {
        &self.generation_input
    }

    /// The value field's text.
    pub fn value_input(&self) -> &str {
        &self.value_input
    }

    /// The most recent attempt, if any.
    pub fn last(&self) -> Option<&Attempt> {
        self.history.front()
    }

    /// Recent attempts, newest first, at most [`HISTORY_LIMIT`].
    pub fn history(&self) -> impl ExactSizeIterator<Item = &Attempt> {
        self.history.iter()
    }

    /// How many writes were attempted on this page in total.
    pub fn attempts(&self) -> u64 {
        self.attempts
    }

    /// What is wrong with the generation field, if the last press of Write found no token.
    pub fn generation_error(&self) -> Option<&str> {
        self.generation_error.as_deref()
    }

    /// How many presses of Write found no token in the generation field.
    pub fn input_errors(&self) -> u64 {
        self.input_errors
    }

    /// The attempt whose outcome is highlighted right now, if any.
    pub fn flashing(&self) -> Option<u64> {
        self.flashing
    }

    /// Sends the form's contents to the register and records what it said. A field that holds
    /// no token is an input error on the field and reaches no register.
    fn write(&mut self) {
        let generation = match self.generation_input.parse::<Generation>() {
            Ok(generation) => generation,
            Err(e) => {
                self.generation_error = Some(token_problem(&self.generation_input, &e));
                self.input_errors += 1;
                return;
            }
        };
        self.generation_error = None;
        let seq = self.attempts + 1;
        let outcome = match self.try_write(seq, generation) {
            Ok(outcome) | Err(outcome) => outcome,
        };
        self.attempts = seq;
        self.history.push_front(Attempt {
            seq,
            generation: self.generation_input.clone(),
            value: self.value_input.clone(),
            outcome,
        });
        self.history.truncate(HISTORY_LIMIT);
        self.flashing = Some(seq);
    }

    fn try_write(&mut self, seq: u64, generation: Generation) -> Result<Outcome, Outcome> {
        let rejected = |reason: String| Outcome::Rejected { reason };
        // Each press is a new logical operation, so each gets its own id.
        let operation =
            OperationId::new(format!("web-{seq}")).map_err(|e| rejected(e.to_string()))?;
        let request = WriteRequest::new(
            self.resource.clone(),
            generation,
            operation,
            None,
            self.value_input.clone(),
        );
        let applied = self.register.write(&request).map_err(|e| rejected(e.to_string()))?;
        Ok(Outcome::Applied {
            generation: applied.generation.to_string(),
            revision: applied.revision.to_string(),
        })
    }
}

impl Reducible for RegisterView {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        match action {
            Action::SetGeneration(text) if text == self.generation_input => self,
            Action::SetValue(text) if text == self.value_input => self,
            Action::EndFlash(seq) if self.flashing != Some(seq) => self,
            action => {
                let mut next = Rc::unwrap_or_clone(self);
                match action {
                    Action::SetGeneration(text) => {
                        // Editing the field is fixing it: the error waits for the next press.
                        next.generation_input = text;
                        next.generation_error = None;
                    }
                    Action::SetValue(text) => next.value_input = text,
                    Action::Write => next.write(),
                    Action::EndFlash(_) => next.flashing = None,
                }
                Rc::new(next)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(
        state: Rc<RegisterView>,
        actions: impl IntoIterator<Item = Action>,
    ) -> Rc<RegisterView> {
        actions.into_iter().fold(state, Reducible::reduce)
    }

    fn write(state: Rc<RegisterView>, generation: &str, value: &str) -> Rc<RegisterView> {
        apply(
            state,
            [
                Action::SetGeneration(generation.into()),
                Action::SetValue(value.into()),
                Action::Write,
            ],
        )
    }

    fn reason(state: &RegisterView) -> String {
        match &state.last().expect("an attempt was made").outcome {
            Outcome::Rejected { reason } => reason.clone(),
            other => panic!("expected a rejection, got {other:?}"),
        }
    }

    #[test]
    fn starts_empty() {
        let state = RegisterView::new();
        assert_eq!(state.resource(), "ledger");
        assert_eq!(state.highest(), None);
        assert_eq!(state.current_value(), None);
        assert!(state.last().is_none());
        assert_eq!(state.history().len(), 0);
    }

    #[test]
    fn newer_applies_stale_is_fenced_off_same_generation_applies() {
        let state = write(Rc::new(RegisterView::new()), "8", "replacement");
        assert_eq!(state.last().unwrap().outcome.kind(), "applied");
        let revision_after_first = state.revision();

        let state = write(state, "7", "stale");
        assert!(reason(&state).contains("stale owner"), "{}", reason(&state));
        assert_eq!(state.current_value(), Some("replacement"));
        assert_eq!(state.highest().map(|g| g.get()), Some(8));
        assert_eq!(state.revision(), revision_after_first);

        let state = write(state, "8", "again");
        assert_eq!(state.last().unwrap().outcome.kind(), "applied");
        assert_eq!(state.current_value(), Some("again"));
        assert_ne!(state.revision(), revision_after_first);
        assert_eq!(state.history().len(), 3);
    }

    #[test]
    fn text_that_is_no_token_is_an_input_error_not_a_rejection() {
        let mut state = write(Rc::new(RegisterView::new()), "8", "kept");
        let long = "x".repeat(40);
        let cases = [
            ("0", "“0” is not a token: a token is a positive whole number, like 1, 2 or 3."),
            ("abc", "“abc” is not a token: a token is a positive whole number, like 1, 2 or 3."),
            ("-3", "“-3” is not a token"),
            ("7.5", "“7.5” is not a token"),
            ("", "Type a token: a token is a positive whole number"),
            (" ", "Type a token"),
            (
                "99999999999999999999",
                "“99999999999999999999” is too large: the largest token is 18446744073709551615.",
            ),
            (long.as_str(), "“xxxxxxxxxxxxxxxxxxxxxxxx…” is not a token"),
        ];
        for (n, (bad, message)) in cases.into_iter().enumerate() {
            state = write(state, bad, "nope");
            let error = state.generation_error().expect("an input error");
            assert!(error.starts_with(message), "{bad:?}: {error}");
            assert_eq!(state.input_errors(), n as u64 + 1);
            // Nothing reached the register, and nothing was logged.
            assert_eq!(state.attempts(), 1);
            assert_eq!(state.history().len(), 1);
            assert_eq!(state.last().unwrap().outcome.kind(), "applied");
            assert_eq!(state.current_value(), Some("kept"));
            assert_eq!(state.highest().map(|g| g.get()), Some(8));
        }
        // Editing the field clears the error; a good token is written as usual.
        let state = apply(state, [Action::SetGeneration("9".into())]);
        assert_eq!(state.generation_error(), None);
        let state = write(state, "9", "fixed");
        assert_eq!(state.generation_error(), None);
        assert_eq!((state.attempts(), state.current_value()), (2, Some("fixed")));
    }

    #[test]
    fn history_is_newest_first_and_bounded() {
        let mut state = Rc::new(RegisterView::new());
        for n in 1..=(HISTORY_LIMIT as u64 + 3) {
            state = write(state, &n.to_string(), &format!("v{n}"));
        }
        let seqs: Vec<u64> = state.history().map(|a| a.seq).collect();
        assert_eq!(seqs.len(), HISTORY_LIMIT);
        assert_eq!(seqs[0], HISTORY_LIMIT as u64 + 3);
        assert!(seqs.windows(2).all(|w| w[0] == w[1] + 1));
        assert_eq!(state.attempts(), HISTORY_LIMIT as u64 + 3);
    }

    #[test]
    fn flash_ends_only_for_the_latest_attempt() {
        let state = write(Rc::new(RegisterView::new()), "1", "a");
        assert_eq!(state.flashing(), Some(1));
        let state = write(state, "2", "b");
        assert_eq!(state.flashing(), Some(2));
        // A timer left over from attempt 1 must not cut attempt 2's highlight short.
        let stale_timer = Rc::clone(&state).reduce(Action::EndFlash(1));
        assert!(Rc::ptr_eq(&stale_timer, &state));
        let state = state.reduce(Action::EndFlash(2));
        assert_eq!(state.flashing(), None);
    }

    #[test]
    fn unchanged_input_keeps_the_same_state() {
        let state = Rc::new(RegisterView::new());
        let same = Rc::clone(&state).reduce(Action::SetGeneration(state.generation_input().into()));
        assert!(Rc::ptr_eq(&same, &state));
    }
}
