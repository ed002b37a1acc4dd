//! "You decide": what a reader can do next, in words. The choices and faults come from the
//! engine (`Engine::choices`, `Engine::possible_faults`); this only names them and says which
//! ones act on which lane of the diagram, and never adds one of its own.

use fencelab_core::{draw::ArrowKind, draw::Diagram};
use fencelab_core::{format::model::Fault, sim::Choice, sim::Next, sim::Way};

/// What the reader can do at the position on screen, as the engine lists it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Options {
    /// The events that can run next; the `n`-th is the engine's choice `n`.
    pub choices: Vec<Choice>,
    /// The faults that can be injected now, with the engine's suggested sizes.
    pub faults: Vec<Fault>,
    /// How many steps after the position a decision here replaces.
    pub later: usize,
    /// What each message in flight carries, in words, by the engine's number: the reader never
    /// sees that number, so a loss is offered by what it would lose.
    pub messages: Vec<(u64, String)>,
}

impl Options {
    /// A fault in plain words, a lost message named by what it carries.
    pub fn fault_label(&self, fault: &Fault) -> String {
        if let Fault::LoseMessage { message } = fault {
            if let Some((_, name)) = self.messages.iter().find(|(m, _)| m == message) {
                return format!("Lose {name} in flight");
            }
        }
        fault_label(fault)
    }
}

/// What message `message` of `diagram` carries, in words: `the grant to A (g2)`, `B's write
/// ("B: total=120")`.
pub fn message_name(diagram: &Diagram, message: u64) -> Option<String> {
    let arrow = diagram.arrows.iter().rev().find(|a| a.message == message)?;
    let lane = |i: usize| diagram.lanes.get(i).map_or("?", |l| l.label.as_str());
    Some(match arrow.kind {
        ArrowKind::Grant => format!("the grant to {} (g{})", lane(arrow.to), arrow.generation),
        ArrowKind::Write | ArrowKind::Effect => {
            let (what, carried) = match arrow.label.split_once(' ') {
                Some((verb, value)) => (verb.trim_end_matches(':'), value),
                None => ("effect", arrow.label.as_str()),
            };
            format!("{}'s {what} ({carried})", lane(arrow.from))
        }
    })
}

/// `n` of a noun, e.g. `1 tick`, `3 ticks`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A choice in plain words: which worker steps, which message arrives, whether an optional pause
/// happens, how late the message a step sends is.
pub fn choice_label(choice: &Choice) -> String {
    let event = match &choice.what {
        Next::Fault { fault, .. } => format!("The story's fault: {}", fault_label(fault)),
        Next::Injected { fault, .. } => format!("Your fault: {}", fault_label(fault)),
        Next::Expire { resource } => format!("The lease on {resource} runs out"),
        Next::Deliver { worker, carries: "grant", .. } => format!("The grant reaches {worker}"),
        Next::Deliver { worker, carries: "effect", .. } => {
            format!("{worker}'s effect reaches the gateway")
        }
        Next::Deliver { worker, .. } => format!("{worker}'s write reaches the store"),
        Next::Commit { worker, .. } => format!("{worker}'s checked write is written"),
        Next::Resume { worker } => format!("{worker} wakes up"),
        Next::WorkerStep { worker } => format!("{worker} takes its next step"),
    };
    match choice.way {
        Way::Only => event,
        Way::PauseTaken => format!("{event}: its optional pause happens"),
        Way::PauseSkipped => format!("{event}: it skips its optional pause"),
        Way::Jitter { ticks: 0 } => format!("{event}; the message it sends is on time"),
        Way::Jitter { ticks } => {
            format!("{event}; the message it sends is {} late", count(ticks, "tick"))
        }
    }
}

/// A fault in plain words, with its size.
pub fn fault_label(fault: &Fault) -> String {
    match fault {
        Fault::PauseWorker { worker, ticks, .. } => {
            format!("Pause {worker} for {}", count(*ticks, "tick"))
        }
        Fault::DelayMessages { worker, ticks, count: 1 } => {
            format!("Delay {worker}'s next message by {}", count(*ticks, "tick"))
        }
        Fault::DelayMessages { worker, ticks, count: n } => {
            format!("Delay {worker}'s next {n} messages by {}", count(*ticks, "tick"))
        }
        Fault::RestartAuthority => "Restart the lease authority".into(),
        Fault::RestartStore { store } => format!("Restart the store {store}"),
        Fault::SkewClock { worker, by } if *by > 0 => {
            format!("Set {worker}'s clock {} ahead", count(by.unsigned_abs(), "tick"))
        }
        Fault::SkewClock { worker, by } => {
            format!("Set {worker}'s clock {} back", count(by.unsigned_abs(), "tick"))
        }
        Fault::LoseMessage { message } => format!("Lose message {message} in flight"),
    }
}

/// How many ticks a fault lasts or moves a clock, for those that have a size (pauses, delays
/// and clock jumps).
pub fn fault_ticks(fault: &Fault) -> Option<u64> {
    match fault {
        Fault::PauseWorker { ticks, .. } | Fault::DelayMessages { ticks, .. } => Some(*ticks),
        Fault::SkewClock { by, .. } => Some(by.unsigned_abs()),
        Fault::RestartAuthority | Fault::RestartStore { .. } | Fault::LoseMessage { .. } => None,
    }
}

/// `fault` sized `ticks` instead, when it has a size and `ticks` is given: a clock jump keeps
/// its direction. The engine still judges the result (a fault of zero ticks is refused there).
pub fn with_ticks(fault: &Fault, ticks: Option<u64>) -> Fault {
    let mut fault = fault.clone();
    let Some(n) = ticks else { return fault };
    match &mut fault {
        Fault::PauseWorker { ticks: t, .. } | Fault::DelayMessages { ticks: t, .. } => *t = n,
        Fault::SkewClock { by, .. } => {
            let n = i64::try_from(n).unwrap_or(i64::MAX);
            *by = if *by > 0 { n } else { -n };
        }
        Fault::RestartAuthority | Fault::RestartStore { .. } | Fault::LoseMessage { .. } => {}
    }
    fault
}

/// Whether `fault` acts on the diagram's lane `lane` (the core's lane ids: `authority`,
/// `worker:A`, `store:db` or `store:db/path`, `gateway`, `partner`).
pub fn acts_on(fault: &Fault, lane: &str) -> bool {
    match fault {
        Fault::PauseWorker { worker, .. }
        | Fault::DelayMessages { worker, .. }
        | Fault::SkewClock { worker, .. } => lane.strip_prefix("worker:") == Some(worker),
        // A lost message is offered in the panel: no lane owns a message in flight.
        Fault::LoseMessage { .. } => false,
        Fault::RestartAuthority => lane == "authority",
        Fault::RestartStore { store } => lane
            .strip_prefix("store:")
            .is_some_and(|rest| rest.split_once('/').map_or(rest, |(s, _)| s) == store),
    }
}

/// The choice that delivers `message` now, if the engine lists one.
pub fn deliver_choice(choices: &[Choice], message: u64) -> Option<usize> {
    choices.iter().position(|c| {
        matches!(c.what, Next::Deliver { message: m, .. } if m == message) && c.way == Way::Only
    })
}

/// What a decision taken `later` steps before the end says it does to them.
pub fn replaces(later: usize) -> Option<String> {
    match later {
        0 => None,
        1 => Some("Choosing here replaces the 1 later step.".into()),
        n => Some(format!("Choosing here replaces the {n} later steps.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencelab_core::format::model::PauseReason;

    fn choice(what: Next, way: Way) -> Choice {
        Choice { what, way }
    }

    fn pause(worker: &str, ticks: u64) -> Fault {
        Fault::PauseWorker { worker: worker.into(), ticks, reason: PauseReason::default() }
    }

    #[test]
    fn choices_are_named_from_their_event_and_way() {
        let step = || Next::WorkerStep { worker: "A".into() };
        let deliver = |carries| Next::Deliver { message: 3, worker: "B".into(), carries };
        let cases = [
            (choice(step(), Way::Only), "A takes its next step"),
            (choice(step(), Way::PauseTaken), "A takes its next step: its optional pause happens"),
            (
                choice(step(), Way::PauseSkipped),
                "A takes its next step: it skips its optional pause",
            ),
            (
                choice(step(), Way::Jitter { ticks: 0 }),
                "A takes its next step; the message it sends is on time",
            ),
            (
                choice(step(), Way::Jitter { ticks: 1 }),
                "A takes its next step; the message it sends is 1 tick late",
            ),
            (
                choice(step(), Way::Jitter { ticks: 2 }),
                "A takes its next step; the message it sends is 2 ticks late",
            ),
            (choice(deliver("grant"), Way::Only), "The grant reaches B"),
            (choice(deliver("write"), Way::Only), "B's write reaches the store"),
            (choice(deliver("effect"), Way::Only), "B's effect reaches the gateway"),
            (
                choice(Next::Commit { message: 4, worker: "A".into() }, Way::Only),
                "A's checked write is written",
            ),
            (choice(Next::Resume { worker: "A".into() }, Way::Only), "A wakes up"),
            (
                choice(Next::Expire { resource: "ledger".into() }, Way::Only),
                "The lease on ledger runs out",
            ),
            (
                choice(Next::Injected { index: 0, fault: pause("A", 9) }, Way::Only),
                "Your fault: Pause A for 9 ticks",
            ),
            (
                choice(Next::Fault { index: 1, fault: Fault::RestartAuthority }, Way::Only),
                "The story's fault: Restart the lease authority",
            ),
        ];
        for (choice, want) in cases {
            assert_eq!(choice_label(&choice), want, "{choice:?}");
        }
    }

    #[test]
    fn faults_are_named_with_their_size() {
        let delay = |count| Fault::DelayMessages { worker: "B".into(), ticks: 1, count };
        assert_eq!(fault_label(&pause("A", 1)), "Pause A for 1 tick");
        assert_eq!(fault_label(&delay(1)), "Delay B's next message by 1 tick");
        assert_eq!(fault_label(&delay(2)), "Delay B's next 2 messages by 1 tick");
        assert_eq!(
            fault_label(&Fault::RestartStore { store: "db".into() }),
            "Restart the store db"
        );
    }

    #[test]
    fn a_new_length_changes_only_faults_that_last() {
        assert_eq!(with_ticks(&pause("A", 9), Some(3)), pause("A", 3));
        assert_eq!(with_ticks(&pause("A", 9), None), pause("A", 9));
        assert_eq!(with_ticks(&Fault::RestartAuthority, Some(3)), Fault::RestartAuthority);
        let skew = |by| Fault::SkewClock { worker: "A".into(), by };
        assert_eq!(with_ticks(&skew(-11), Some(5)), skew(-5));
        assert_eq!(with_ticks(&skew(11), Some(5)), skew(5));
        assert_eq!(fault_ticks(&skew(-11)), Some(11));
        assert_eq!(fault_ticks(&with_ticks(&pause("A", 9), Some(4))), Some(4));
        assert_eq!(fault_ticks(&Fault::RestartAuthority), None);
    }

    #[test]
    fn faults_act_on_their_own_lane_only() {
        let store = Fault::RestartStore { store: "db".into() };
        assert!(acts_on(&pause("A", 2), "worker:A"));
        assert!(!acts_on(&pause("A", 2), "worker:AB"));
        assert!(!acts_on(&pause("A", 2), "store:A"));
        assert!(acts_on(&Fault::RestartAuthority, "authority"));
        assert!(!acts_on(&Fault::RestartAuthority, "worker:authority"));
        assert!(acts_on(&store, "store:db"));
        assert!(acts_on(&store, "store:db/metadata"));
        assert!(!acts_on(&store, "store:dbx"));
        assert!(!acts_on(&store, "gateway"));
    }

    #[test]
    fn only_a_listed_delivery_is_offered_on_a_message() {
        let choices = [
            choice(Next::WorkerStep { worker: "A".into() }, Way::Only),
            choice(Next::Deliver { message: 7, worker: "A".into(), carries: "write" }, Way::Only),
        ];
        assert_eq!(deliver_choice(&choices, 7), Some(1));
        assert_eq!(deliver_choice(&choices, 8), None);
        assert_eq!(replaces(0), None);
        assert_eq!(replaces(1).as_deref(), Some("Choosing here replaces the 1 later step."));
        assert_eq!(replaces(4).as_deref(), Some("Choosing here replaces the 4 later steps."));
    }
}
