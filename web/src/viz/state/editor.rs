//! The scenario editor, and scenarios shown from elsewhere (a link, an imported run, local
//! storage) as edits.

use std::rc::Rc;

use fencelab_core::record::export::RunExport;
use fencelab_core::{Scenario, ScenarioError};
use yew::Reducible;

use super::{Action, PolicyChoice, Viz};

/// The scenario editor.
#[derive(Debug, Clone, Default)]
pub struct Editor {
    /// Whether it is open.
    pub open: bool,
    /// The text in it.
    pub text: Rc<String>,
    /// What is wrong with the text, if anything.
    pub error: Option<ScenarioError>,
}

impl Viz {
    /// Puts the scenario on screen into the editor when it is open, and clears its error.
    pub(super) fn sync_editor(&mut self) {
        if self.editor.open {
            self.editor.text = Rc::new(self.base.to_json());
        }
        self.editor.error = None;
    }

    /// Opens or closes the editor.
    pub(super) fn toggle_editor(&mut self) {
        self.editor.open = !self.editor.open;
        self.sync_editor();
    }

    /// Puts the current scenario's JSON back into the editor.
    pub(super) fn revert_edit(&mut self) {
        self.editor.open = true;
        self.sync_editor();
    }

    /// The editor's text changed: a valid scenario replays, an invalid one says what is wrong and
    /// keeps the last valid run.
    pub(super) fn edit(&mut self, text: String) {
        let parsed = Scenario::from_json(&text);
        self.editor.text = Rc::new(text);
        match parsed {
            Ok(scenario) => {
                self.editor.error = None;
                self.base = Rc::new(scenario);
                self.edited = true;
                self.authored = false;
                self.replay();
                if let Some(e) = self.error.take() {
                    self.editor.error = Some(ScenarioError { path: ".".into(), problem: e });
                }
            }
            Err(e) => self.editor.error = Some(e),
        }
    }

    /// Shows `scenario` as an edit, from the start, with no policy forced, no switch on, and
    /// outside "You decide" mode.
    pub(super) fn load(&mut self, scenario: Scenario) {
        self.base = Rc::new(scenario);
        self.edited = true;
        self.authored = false;
        self.steered = false;
        // A scenario from elsewhere (a counterexample, a run file) is shown whole.
        self.decide = None;
        self.policy = PolicyChoice::AsWritten;
        self.switches.clear();
        self.playing = false;
        self.position = 0;
        if let Some(c) = &mut self.compare {
            c.cursor = 0;
        }
        self.replay();
        self.sync_editor();
    }

    /// Replays an exported run file (JSON) to the step it was exported at, in single mode.
    pub(super) fn import(self, json: &str) -> Rc<Viz> {
        match RunExport::import(json) {
            Ok((export, _)) => {
                let position = export.position;
                let mut state = Rc::new(self).reduce(Action::Load(Box::new(export.scenario)));
                if state.compare.is_some() {
                    state = state.reduce(Action::Compare(false));
                }
                state.reduce(Action::Seek(position))
            }
            Err(e) => {
                let mut next = self;
                next.error = Some(format!("That file could not be imported: {e}"));
                Rc::new(next)
            }
        }
    }
}
