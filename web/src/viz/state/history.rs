//! Recorded histories in the player: a `history=` link's file on its way, opening one (from a
//! file, a drop or that link), going back to the stories, choosing a finding and hiding lanes.

use super::address::past_end;
use super::{Mode, Viz};
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
    /// Why fetching or reading it failed, if it did (the link then stays in the address).
    pub failed: Option<String>,
}

/// Something the reader did with the recorded history on screen.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryAction {
    /// Choose a finding: seek to it and highlight its witness.
    ChooseFinding(usize),
    /// Hide a lane of the diagram, or show it again.
    ToggleLane(usize),
    /// Filter the lane chips by this text.
    LaneFilter(String),
    /// Show every lane (`true`), or only those the filter lists.
    ShowLanes(bool),
}

impl Viz {
    /// Reads `text`, called `name`, and shows it from the start (or at the step its link asks
    /// for), in place of whatever mode was on. A file that cannot be read leaves the view as it
    /// was and says why.
    pub(super) fn open_history(&mut self, name: String, text: &str, origin: Origin) {
        let (step, play) = match (&origin, &self.mode) {
            (Origin::Link(address), Mode::Fetching(fetch)) if *address == fetch.address => {
                (fetch.step, fetch.play)
            }
            // A link's answer that comes after the reader moved on is dropped.
            (Origin::Link(_), _) => return,
            (Origin::File, _) => (0, false),
        };
        match read_history(&name, text) {
            Ok(history) => {
                // A file the reader chose moves focus to its title; a link's opens where the
                // reader already is.
                if origin == Origin::File {
                    self.focus_title += 1;
                    // A note about the story's link means nothing for a file the reader chose.
                    self.link_note = None;
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
                // The story beneath is the whole story, as going back shows it.
                self.leave_decide();
                self.mode = Mode::History(Box::new(opened));
                self.file_error = None;
                self.story.close_editor();
                self.playing = false;
                self.position = 0;
                self.seek(step);
                if play {
                    self.toggle_play(self.position, self.track().len());
                }
            }
            Err(e) => {
                match &mut self.mode {
                    Mode::Fetching(fetch) if origin != Origin::File => fetch.failed = Some(e),
                    _ => self.file_error = Some(e),
                }
                self.status = None;
            }
        }
    }

    /// The link's history could not be fetched: say why, with the story left on screen;
    /// `false` for an address no longer awaited.
    pub(super) fn history_failed(&mut self, address: &str, problem: String) -> bool {
        match &mut self.mode {
            Mode::Fetching(fetch) if fetch.address == address => {
                fetch.failed = Some(problem);
                true
            }
            _ => false,
        }
    }

    /// Forgets what was wrong with the opening link or the last file; a history link that
    /// failed is given up, so the address follows the story on screen again.
    pub(super) fn dismiss_link_problems(&mut self) {
        self.link_error = None;
        self.link_note = None;
        self.file_error = None;
        if self.link_failed() {
            self.mode = Mode::Story;
        }
    }

    /// Why the last history could not be opened: the file the reader chose, else the link's.
    pub fn history_error(&self) -> Option<&str> {
        let failed = self.fetch().and_then(|f| f.failed.as_deref());
        self.file_error.as_deref().or(failed)
    }

    /// Whether a history link failed, so the story shown is a fallback.
    pub fn link_failed(&self) -> bool {
        self.fetch().is_some_and(|f| f.failed.is_some())
    }

    /// The address of the history link being fetched, while it is on its way.
    pub fn fetching(&self) -> Option<&str> {
        self.fetch().filter(|f| f.failed.is_none()).map(|f| f.address.as_str())
    }

    /// The address of the history link the shell should fetch now, if any.
    pub fn to_fetch(&self) -> Option<String> {
        self.fetching().map(str::to_string)
    }

    /// Back to the stories, at the start of the one picked before, from a recorded history or
    /// a history link; `false` when neither is on.
    pub(super) fn leave_history(&mut self) -> bool {
        let on = matches!(self.mode, Mode::History(_) | Mode::Fetching(_));
        if on {
            self.close_history();
        }
        on
    }

    fn close_history(&mut self) {
        if let Mode::History(_) = std::mem::take(&mut self.mode) {
            self.focus_title += 1;
            self.status = Some(format!("Back to the stories: {}.", self.story.run.scenario.title));
        }
        self.link_note = None;
        self.file_error = None;
        self.playing = false;
        self.position = 0;
        self.seek(0);
    }

    /// The recorded history's own actions; `false` when none is on screen.
    pub(super) fn history_action(&mut self, action: HistoryAction) -> bool {
        let Mode::History(opened) = &mut self.mode else { return false };
        match action {
            HistoryAction::ChooseFinding(index) => {
                let Some(step) = opened.findings.get(index).map(|f| f.step) else {
                    return false;
                };
                // The player moves to the step it was found at, and its witness is highlighted.
                opened.chosen = Some(index);
                opened.choices += 1;
                self.playing = false;
                self.seek(step.number());
            }
            HistoryAction::ToggleLane(lane) => opened.toggle_lane(lane),
            HistoryAction::LaneFilter(text) => opened.lane_filter = text,
            HistoryAction::ShowLanes(all) => opened.show_lanes(all),
        }
        true
    }

    /// What is highlighted: the chosen finding's witness and its own mark.
    pub fn highlight(&self) -> Highlight {
        self.opened().map_or_else(Highlight::default, Opened::highlight)
    }
}
