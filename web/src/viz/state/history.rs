//! Recorded histories in the player: opening one (from a file, a drop or a `history=` link),
//! going back to the stories, choosing a finding and hiding lanes.

use super::address::past_end;
use super::Viz;
use crate::viz::history::{read_history, Highlight, Opened, Origin};
use crate::viz::words::count;

/// A `history=` link whose file the shell is fetching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    /// The address, as the link wrote it.
    pub address: String,
    /// The step the link asks for, shown once the history is open.
    pub step: usize,
    /// Whether the link asks to play from that step once the history is open.
    pub play: bool,
    /// Whether fetching or reading it failed (the link then stays in the address).
    pub failed: bool,
}

impl Viz {
    /// Reads `text`, called `name`, and shows it from the start (or at the step its link asks
    /// for). A file that cannot be read leaves the view as it was and says why.
    pub(super) fn open_history(&mut self, name: String, text: &str, origin: Origin) {
        let (step, play) = match (&origin, &self.fetching) {
            (Origin::Link(address), Some(fetch)) if *address == fetch.address => {
                (fetch.step, fetch.play)
            }
            // A link's answer that comes after the reader moved on is dropped.
            (Origin::Link(_), _) => return,
            (Origin::File, _) => (0, false),
        };
        match read_history(&name, text) {
            Ok(history) => {
                self.fetching = None;
                // A file the reader chose moves focus to its title; a link's opens where the
                // reader already is.
                if origin == Origin::File {
                    self.focus_title += 1;
                }
                let opened = Opened::new(name, origin, history);
                self.status = Some(format!(
                    "Opened {}: {} {}, {}.",
                    opened.name,
                    count(opened.track.len()),
                    if opened.track.len() == 1 { "entry" } else { "entries" },
                    opened.findings_summary()
                ));
                if let Some(past) =
                    past_end(step, opened.track.len(), "step", "history", self.element)
                {
                    self.link_note = Some(match self.link_note.take() {
                        Some(note) => format!("{note}; {past}"),
                        None => past,
                    });
                }
                self.opened = Some(opened);
                self.history_error = None;
                self.compare = None;
                self.editor.open = false;
                self.playing = false;
                self.position = 0;
                self.seek(step);
                if play {
                    self.toggle_play(self.position, self.track().len());
                }
            }
            Err(e) => {
                if let (Origin::Link(_), Some(fetch)) = (&origin, &mut self.fetching) {
                    fetch.failed = true;
                }
                self.history_error = Some(e);
                self.status = None;
            }
        }
    }

    /// The link's history could not be fetched: say why, with the story left on screen.
    pub(super) fn history_failed(&mut self, address: &str, problem: String) {
        if let Some(fetch) = self.fetching.as_mut().filter(|f| f.address == address) {
            fetch.failed = true;
            self.history_error = Some(problem);
        }
    }

    /// Forgets what was wrong with the opening link; a history link that failed is given up,
    /// so the address follows the story on screen again.
    pub(super) fn dismiss_link_problems(&mut self) {
        self.link_error = None;
        self.link_note = None;
        if self.fetching.as_ref().is_some_and(|f| f.failed) {
            self.fetching = None;
            self.history_error = None;
        }
    }

    /// Whether the history error on screen is a link's that failed, so the story shown is a
    /// fallback.
    pub fn link_failed(&self) -> bool {
        self.history_error.is_some() && self.fetching.as_ref().is_some_and(|f| f.failed)
    }

    /// The address of the history link the shell should fetch now, if any.
    pub fn to_fetch(&self) -> Option<String> {
        self.fetching.as_ref().filter(|f| !f.failed).map(|f| f.address.clone())
    }

    /// Back to the stories, at the start of the one picked before.
    pub(super) fn close_history(&mut self) {
        if self.opened.take().is_some() {
            self.focus_title += 1;
            self.status = Some(format!("Back to the stories: {}.", self.run.scenario.title));
        }
        self.link_note = None;
        self.fetching = None;
        self.history_error = None;
        self.playing = false;
        self.position = 0;
        self.seek(0);
    }

    /// Chooses finding `index`: the player moves to the step it was found at, and its witness
    /// is highlighted.
    pub(super) fn choose_finding(&mut self, index: usize) {
        let Some(opened) = &mut self.opened else { return };
        let Some(step) = opened.findings.get(index).map(|f| f.step) else { return };
        opened.chosen = Some(index);
        opened.choices += 1;
        self.playing = false;
        self.seek(step + 1);
    }

    /// Hides lane `lane` of the history's diagram, or shows it again.
    pub(super) fn toggle_lane(&mut self, lane: usize) {
        if let Some(opened) = &mut self.opened {
            opened.toggle_lane(lane);
        }
    }

    /// What is highlighted: the chosen finding's witness and its own mark.
    pub fn highlight(&self) -> Highlight {
        self.opened.as_ref().map_or_else(Highlight::default, Opened::highlight)
    }
}
