//! The view as an address: opening a link (`ShareLink`) and writing the view back into one, and
//! what an embed shows.

use std::rc::Rc;

use yew::Reducible;

use fencelab_links::{LinkError, LinkScenario, Part, ShareLink};

use fencelab_core::stories::course::course;

use super::{
    Action, Fetch, LearnAction, Mode, PolicyChoice, Progress, Side, Tab, Viz, GENERATED, SPEEDS,
    SPEED_PERCENT,
};
use crate::viz::history::Origin;
use crate::viz::words::count;

/// The entry of [`SPEEDS`] for a link's speed in percent: the first at least as fast.
fn speed_index(percent: u16) -> usize {
    SPEED_PERCENT.iter().position(|p| *p >= percent).unwrap_or(SPEEDS.len() - 1)
}

impl Viz {
    /// The page an address fragment (without `#`) asks for, for a reader with no progress; an
    /// empty one is the first story.
    #[cfg(test)]
    pub fn open(fragment: &str) -> Viz {
        Viz::open_with(fragment, Rc::default())
    }

    /// The page an address fragment asks for, with what the reader has done in the course and
    /// the quiz (a chapter link opens its first unfinished story).
    pub fn open_with(fragment: &str, progress: Rc<Progress>) -> Viz {
        if fragment.is_empty() {
            let mut state = Viz::new();
            state.learn.progress = progress;
            return state;
        }
        let mut state = Viz::from_link_with(ShareLink::parse(fragment), progress);
        // A link that asked to be an embed stays one, even when it cannot be opened.
        if state.link_error.is_some() {
            state.embed = ShareLink::embed_in(fragment);
            state.element = ShareLink::by_element(fragment);
        }
        state
    }

    /// The page a link asks for. A bad link opens the default story with the picker and says
    /// what was wrong with it.
    #[cfg(test)]
    pub fn from_link(link: Result<ShareLink, LinkError>) -> Viz {
        Viz::from_link_with(link, Rc::default())
    }

    /// The page a link asks for, with the reader's progress.
    fn from_link_with(link: Result<ShareLink, LinkError>, progress: Rc<Progress>) -> Viz {
        let fresh = || {
            let mut state = Viz::new();
            state.learn.progress = progress.clone();
            state
        };
        let link = match link {
            Ok(link) => link,
            Err(e) => {
                let mut state = fresh();
                state.link_error = Some(e.to_string());
                return state;
            }
        };
        // A recorded history is fetched by the shell; until it comes, the first story shows.
        if let Some(address) = &link.history {
            let mut state = fresh();
            let (address, step, play) = (address.clone(), link.step, link.autoplay);
            state.mode = Mode::Fetching(Fetch { address, step, play, failed: None });
            state.speed = speed_index(link.speed);
            state.embed = link.embed;
            state.element = link.element;
            state.theme = link.theme;
            state.title = link.title.clone();
            if !link.ignored.is_empty() {
                let names: Vec<String> = link.ignored.iter().map(|k| format!("`{k}`")).collect();
                state.link_note = Some(format!(
                    "the link's {} {} to stories, not to a recorded history, so the page ignores {}",
                    names.join(", "),
                    if names.len() == 1 { "applies only" } else { "apply only" },
                    if names.len() == 1 { "it" } else { "them" },
                ));
            }
            return state;
        }
        let mut state = Rc::new(fresh());
        let mut actions = Vec::new();
        let chapter =
            link.course.as_deref().and_then(|id| course().iter().position(|c| c.id == id));
        match &link.scenario {
            LinkScenario::Builtin { name, .. } if name.is_empty() => {
                actions.extend(chapter.map(|c| Action::Learn(LearnAction::Chapter(c))));
            }
            LinkScenario::Builtin { name, variant } => {
                actions.push(Action::Pick(name.clone()));
                if name != GENERATED {
                    actions.push(Action::Variant(variant.clone()));
                }
            }
            LinkScenario::Custom(scenario) => actions.push(Action::Load(scenario.clone())),
        }
        if let Some(policy) = link.policy {
            actions.push(Action::Policy(PolicyChoice::Force(policy)));
        }
        let named =
            !matches!(&link.scenario, LinkScenario::Builtin { name, .. } if name.is_empty());
        if let (Some(c), true) = (chapter, named) {
            actions.push(Action::Learn(LearnAction::Follow(c)));
        }
        actions.push(Action::Learn(LearnAction::Quiz(link.quiz.unwrap_or(chapter.is_some()))));
        if !link.switches.is_empty() {
            actions.push(Action::Switches(link.switches.clone()));
        }

        if let Some((left, right)) = link.compare {
            actions.push(Action::Compare(true));
            actions.push(Action::CompareMode(Side::Left, left));
            actions.push(Action::CompareMode(Side::Right, right));
        }
        for action in actions.drain(..) {
            state = state.reduce(action);
        }
        if matches!(link.scenario, LinkScenario::Custom(_)) {
            Rc::make_mut(&mut state).story.authored = true;
        }
        if let Some((schedule, injected)) = link.path {
            Rc::make_mut(&mut state).follow(schedule, injected);
        }
        // The mode starts where the path decided so far ends, then shows the link's step.
        if link.decide {
            actions.push(Action::Seek(link.steps.unwrap_or(0).max(link.step)));
            actions.push(Action::Decide(true));
        }
        actions.push(Action::Speed(speed_index(link.speed)));
        actions.push(Action::Seek(link.step));
        if link.autoplay {
            actions.push(Action::TogglePlay);
        }
        // An embed has no tabs: it shows the visualizer whatever the link says.
        if link.playground && link.embed.is_none() {
            actions.push(Action::Tab(Tab::Playground));
        }
        for action in actions {
            state = state.reduce(action);
        }
        let mut state = Rc::unwrap_or_clone(state);
        let (unit, end) =
            (if state.compare().is_some() { "tick" } else { "step" }, state.cursor().1);
        state.element = link.element;
        state.link_note = past_end(link.step, end, unit, "story", state.element);
        state.link_error = state.story.error.take();
        if state.link_error.is_none() {
            state.embed = link.embed;
            state.theme = link.theme;
            state.title = link.title;
        }
        state
    }

    /// The link to this view, as [`ShareLink::to_fragment`] writes it into the address.
    pub fn to_link(&self) -> ShareLink {
        // A history from a link keeps its link (while it is fetched, and when it failed, so the
        // reader sees what the link said).
        // Until the history opens, the link keeps asking to play.
        let history = match &self.mode {
            Mode::History(opened) => match &opened.origin {
                Origin::Link(address) => Some((address.clone(), self.position, false)),
                Origin::File => None,
            },
            Mode::Fetching(fetch) => Some((fetch.address.clone(), fetch.step, fetch.play)),
            _ => None,
        };
        // A history from a file has no link: the address names the story beneath it, at its
        // start, as going back shows it, with nothing of the history's place or playback.
        let beneath = self.opened().is_some();
        if let Some((address, step, waiting)) = history {
            let mut link = ShareLink::history(&address);
            link.step = step;
            link.autoplay = self.playing || waiting;
            link.speed = SPEED_PERCENT.get(self.speed).copied().unwrap_or(100);
            link.embed = self.embed;
            link.theme = self.theme;
            link.title = self.title.clone();
            return link;
        }
        let story = &self.story;
        let mut link = if story.edited {
            let mut link = ShareLink::builtin("", "");
            link.scenario = LinkScenario::Custom(Box::new((*story.base).clone()));
            link
        } else {
            ShareLink::builtin(&story.case, &story.variant)
        };
        if let PolicyChoice::Force(policy) = story.policy {
            link.policy = Some(policy);
        }
        link.step = self.cursor().0;
        link.compare = self.compare().map(|c| (c.left.mode, c.right.mode));
        link.autoplay = self.playing;
        link.speed = SPEED_PERCENT.get(self.speed).copied().unwrap_or(100);
        link.switches = story.switches.clone();
        if story.steered && !story.edited {
            link.path = Some((story.base.schedule.clone(), story.base.injected.clone()));
        }
        if let Some(decide) = self.decide() {
            link.decide = true;
            link.steps = (decide.steps > link.step).then_some(decide.steps);
        }
        if beneath {
            (link.step, link.autoplay, link.speed, link.decide, link.steps) =
                (0, false, 100, false, None);
        }
        link.embed = self.embed;
        link.theme = self.theme;
        link.title = self.title.clone();
        link.playground = self.tab == Tab::Playground && self.embed.is_none();
        link.course = self.in_course().map(|(_, chapter, _)| chapter.id.to_string());
        link.quiz = (self.learn.quiz != link.course.is_some()).then_some(self.learn.quiz);
        link
    }

    /// Whether this is an embed whose link could not be opened: it shows only what was wrong,
    /// never another story in the link's place.
    pub fn broken_embed(&self) -> Option<&str> {
        self.embed.and(self.link_error.as_deref().or(self.history_error()))
    }

    /// Whether the address should stay as it is rather than follow the view: a history link
    /// that failed stays for the reader to see. A history opened from a file has no address of
    /// its own, so the address names the story beneath it, never a history link it replaced.
    pub fn keeps_address(&self) -> bool {
        self.broken_embed().is_some() || self.link_failed()
    }

    /// Whether an embedded page shows `part` (the full page shows everything).
    pub fn shows(&self, part: Part) -> bool {
        self.embed.is_none_or(|embed| embed.has(part))
    }
}

/// What to tell the reader when a link's `step` is past the end (`end`, counted in `unit`s) of
/// the story or history it opens: the page shows the last one instead, and says so, naming the
/// `<fencelab-player>` element's attribute when an `element` wrote the link.
pub fn past_end(step: usize, end: usize, unit: &str, what: &str, element: bool) -> Option<String> {
    let asked = if element { "attribute `step`" } else { "the link's `step`" };
    (step > end).then(|| {
        format!(
            "{asked} {} is past the end of this {what} ({} {unit}{}), so the page shows its last {unit}",
            count(step),
            count(end),
            if end == 1 { "" } else { "s" }
        )
    })
}
