//! The scenario editor, and scenarios shown from elsewhere (a link, an imported run, local
//! storage) as edits.

use std::rc::Rc;

use fencelab_core::record::export::RunExport;
use fencelab_core::{format::error::ScenarioError, Scenario};

use super::{Action, Mode, PolicyChoice, Story, Viz};

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

impl Story {
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

    /// Closes the editor (a recorded history has none).
    pub(super) fn close_editor(&mut self) {
        self.editor.open = false;
    }

    /// Puts the current scenario's JSON back into the editor.
    pub(super) fn revert_edit(&mut self) {
        self.editor.open = true;
        self.sync_editor();
    }
}

impl Viz {
    /// The editor's text changed: a valid scenario replays, an invalid one says what is wrong and
    /// keeps the last valid run.
    pub(super) fn edit(&mut self, text: String) {
        let parsed = Scenario::from_json(&text);
        let story = &mut self.story;
        story.editor.text = Rc::new(text);
        match parsed {
            Ok(scenario) => {
                story.editor.error = None;
                story.base = Rc::new(scenario);
                story.edited = true;
                story.authored = false;
                self.replay();
                if let Some(e) = self.story.error.take() {
                    self.story.editor.error = Some(ScenarioError { path: ".".into(), problem: e });
                }
            }
            Err(e) => story.editor.error = Some(e),
        }
    }

    /// Shows `scenario` as an edit, from the start, with no policy forced, no switch on, and
    /// outside "You decide" mode (a scenario from elsewhere, a counterexample or a run file, is
    /// shown whole).
    pub(super) fn load(&mut self, scenario: Scenario) {
        let story = &mut self.story;
        story.base = Rc::new(scenario);
        story.edited = true;
        story.authored = false;
        story.steered = false;
        story.policy = PolicyChoice::AsWritten;
        story.switches.clear();
        self.playing = false;
        self.position = 0;
        match &mut self.mode {
            Mode::Decide(_) => self.mode = Mode::Story,
            Mode::Compare(c) => c.cursor = 0,
            _ => {}
        }
        self.replay();
        self.story.sync_editor();
    }

    /// Replays an exported run file (JSON) to the step it was exported at, in single mode.
    pub(super) fn import(&mut self, json: &str) {
        match RunExport::import(json) {
            Ok((export, _)) => {
                self.apply(Action::Load(Box::new(export.scenario)));
                self.set_compare(false);
                self.seek(export.position);
            }
            Err(e) => {
                self.story.error = Some(format!("That file could not be imported: {e}"));
            }
        }
    }
}
