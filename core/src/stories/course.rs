//! The guided course: the built-in stories in teaching order, grouped into chapters that each
//! open with a short introduction. It starts from first principles (a lease ends while its
//! holder still runs; a generation checked at the store stops the stale write) and ends at the
//! limits (what fencing cannot see, and when it is not needed).

use serde::Serialize;

/// One chapter of the course.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Chapter {
    /// A stable name for links, e.g. `the-paused-worker`.
    pub id: &'static str,
    /// The chapter's title.
    pub title: &'static str,
    /// What the chapter is about and what to watch for, before its first story.
    pub intro: &'static str,
    /// Its stories, in order: each a case name and variant.
    pub stories: &'static [(&'static str, &'static str)],
}

/// Every chapter, in order.
pub fn course() -> &'static [Chapter] {
    COURSE
}

/// The chapter with this id.
pub fn chapter(id: &str) -> Option<&'static Chapter> {
    COURSE.iter().find(|c| c.id == id)
}

const COURSE: &[Chapter] = &[
    Chapter {
        id: "the-paused-worker",
        title: "1. A lease can end while its holder is still running",
        intro: "A lease promises a worker sole ownership for a while, and the worker trusts that promise. But a worker can stop for longer than its lease without knowing it: a garbage collector freezes it, the host stops scheduling it, the network goes quiet. Meanwhile the lease passes to someone else. Watch what the stalled worker does when it carries on, first with no protection, then with a store that checks the lease's generation number, its fencing token. A longer lease only makes the race rarer.",
        stories: &[
            ("paused-worker", "broken"),
            ("paused-worker", "fenced"),
            ("longer-lease", "broken"),
        ],
    },
    Chapter {
        id: "the-fence",
        title: "2. The fence sits where the write happens",
        intro: "The authority numbers every grant, and the worker sends that generation number with each write: it is the fencing token. The store remembers the highest one it has accepted and refuses older ones. The check only protects what it guards, and only if it cannot be split from the write: a check done first and a write done later leaves a gap, and a second way into the same data needs the same check. Watch which writes each store lets through.",
        stories: &[
            ("check-then-write", "check-then-write"),
            ("check-then-write", "atomic"),
            ("same-owner-updates", "expected-revision"),
            ("admin-path", "broken"),
            ("secondary-path", "broken"),
            ("secondary-path", "fenced"),
        ],
    },
    Chapter {
        id: "retries",
        title: "3. Retries: the same request twice",
        intro: "A worker that hears nothing back sends again, and both copies may arrive. A generation says who may write, not whether this write has happened already: for that, each request carries an operation id that the store remembers for a while. Watch which copy is applied, which is answered from memory, and what happens when the memory runs out.",
        stories: &[
            ("idempotent-retry", "broken"),
            ("idempotent-retry", "fenced"),
            ("newer-owner-retry", "fenced"),
            ("retention-window", "unconditional"),
            ("retention-window", "expected-revision"),
        ],
    },
    Chapter {
        id: "side-effects",
        title: "4. Effects that cannot be taken back",
        intro: "A payment captured or an email sent cannot be undone by a later write. So the fence has to stand in front of the outside world too: a gateway that checks the same generations before it passes a request on. Watch which requests reach the provider.",
        stories: &[
            ("payment-capture", "broken"),
            ("payment-capture", "fenced"),
            ("duplicate-capture", "fenced"),
            ("email-webhook", "fenced"),
        ],
    },
    Chapter {
        id: "time-and-the-network",
        title: "5. Slow messages and clocks that lie",
        intro: "A worker can do everything right and still be late: its message waits in the network while the lease moves on, or it checks its lease by a clock that runs slow. Only the store, at the moment the write arrives, can tell. Refused writes are also worth counting: they are the evidence that a stale owner was at work.",
        stories: &[
            ("network-delay", "broken"),
            ("network-delay", "fenced"),
            ("lease-check-gap", "fenced"),
            ("queued-mutations", "fenced"),
            ("monitoring", "fenced"),
        ],
    },
    Chapter {
        id: "limits",
        title: "6. What the fence cannot see",
        intro: "A fence is a memory of the highest generation seen, and it is only as good as that memory and the numbers fed to it. A stale write that arrives before any newer one looks current. A store that forgets its record, or an authority that restarts its count, lets old owners back in. Timestamps are not generations, and a made-up high number locks everyone out unless the store can verify it.",
        stories: &[
            ("fresh-register", "fenced"),
            ("store-restart", "broken"),
            ("authority-restart", "broken"),
            ("wall-clock-tokens", "broken"),
            ("forged-token", "unauthenticated"),
            ("forged-token", "authenticated"),
        ],
    },
    Chapter {
        id: "when-not-to-fence",
        title: "7. When fencing is unnecessary",
        intro: "Some work is safe to do twice: every copy writes the same result, and nothing downstream counts how many times it happened. There a stale worker wastes effort but breaks nothing, and a fence would add cost without adding safety.",
        stories: &[("fencing-unnecessary", "unfenced")],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stories::library;
    use std::collections::BTreeSet;

    #[test]
    fn every_story_in_the_course_exists_and_every_case_is_taught() {
        let mut taught = BTreeSet::new();
        let mut ids = BTreeSet::new();
        for c in course() {
            assert!(ids.insert(c.id), "{} twice", c.id);
            assert_eq!(chapter(c.id), Some(c));
            assert!(!c.stories.is_empty());
            for (name, variant) in c.stories {
                assert!(
                    library::scenario(name, Some(variant)).is_ok(),
                    "{}: {name}/{variant} is not a built-in story",
                    c.id
                );
                taught.insert(*name);
            }
        }
        for case in library::cases() {
            assert!(taught.contains(case.name.as_str()), "{} is not in the course", case.name);
        }
    }
}
