//! Assertions on a [`Verdict`] for tests, whose panic messages set the scenario's expectations
//! beside what the run did, violation by violation.

use super::Verdict;
use crate::invariant::{InvariantKind, Violation};
use std::fmt::Write;

impl Verdict {
    /// Panics unless the run met its scenario's expectations ([`Verdict::met`]): exactly the
    /// invariants it expects broken were broken, and the rejection counts it pins (if any) match.
    ///
    /// ```
    /// use fencelab_core::prelude::*;
    ///
    /// let verdict = Engine::new(library::scenario("paused-worker", Some("broken"))?)?.run()?;
    /// verdict.assert_met(); // The broken variant expects its stale write.
    /// # Ok::<(), fencelab_core::Error>(())
    /// ```
    #[track_caller]
    pub fn assert_met(&self) {
        if !self.met {
            panic!("{}", self.report("the run did not meet its scenario's expectations"));
        }
    }

    /// Panics if the run broke any invariant, whatever its scenario expects.
    #[track_caller]
    pub fn assert_no_violation(&self) {
        if let [first, ..] = self.violations.as_slice() {
            let count = self.violations.len();
            let plural = if count == 1 { "" } else { "s" };
            let headline = format!(
                "expected no violation, but the run has {count} violation{plural}, the first at step {}",
                first.step
            );
            panic!("{}", self.report(&headline));
        }
    }

    /// Panics unless the run broke `kind` (certainly or possibly), and returns the first
    /// violation of it, so that a test can pin where it broke.
    ///
    /// ```
    /// use fencelab_core::prelude::*;
    ///
    /// let verdict = Engine::new(library::scenario("paused-worker", Some("broken"))?)?.run()?;
    /// let stale = verdict.assert_violation(InvariantKind::StaleWriteAccepted);
    /// assert_eq!(stale.step.index(), 18);
    /// assert_eq!(stale.step.to_string(), "19"); // As the page and the command line number it.
    /// # Ok::<(), fencelab_core::Error>(())
    /// ```
    #[track_caller]
    pub fn assert_violation(&self, kind: InvariantKind) -> &Violation {
        match self.violations.iter().find(|v| v.invariant == kind) {
            Some(violation) => violation,
            None => panic!(
                "{}",
                self.report(&format!(
                    "expected {kind} ({}), but the run did not break it",
                    kind.broken()
                ))
            ),
        }
    }

    /// The headline, then the scenario's expectations beside what the run did, then every
    /// violation with its step (counted from 1, as the page and the command line count them).
    fn report(&self, headline: &str) -> String {
        let names = |kinds: &mut dyn Iterator<Item = InvariantKind>| {
            let names: Vec<String> = kinds.map(|k| k.to_string()).collect();
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        };
        let mut out = String::from(headline);
        if !self.finished {
            out.push_str(" (the run has not ended: this is the verdict so far)");
        }
        // Writing to a String cannot fail.
        let _ = writeln!(out, "\n  expected broken: {}", names(&mut self.expected.iter().copied()));
        let broken = InvariantKind::ALL
            .into_iter()
            .filter(|k| self.violations.iter().any(|v| v.invariant == *k));
        let _ = write!(out, "  broken:          {}", names(&mut broken.into_iter()));
        if !self.unexpected.is_empty() {
            let _ =
                write!(out, "\n  not expected:    {}", names(&mut self.unexpected.iter().copied()));
        }
        if !self.missing.is_empty() {
            let _ =
                write!(out, "\n  not broken:      {}", names(&mut self.missing.iter().copied()));
        }
        if self.rejections_mismatch {
            let counts: Vec<String> =
                self.rejections.iter().map(|(reason, n)| format!("{reason}: {n}")).collect();
            let counts = if counts.is_empty() { "none".to_string() } else { counts.join(", ") };
            let _ =
                write!(out, "\n  rejections:      {counts}, not the counts the scenario expects");
        }
        for v in &self.violations {
            let possibly = if v.possible { "possibly " } else { "" };
            let _ = write!(out, "\n  step {}: {possibly}{}: {}", v.step, v.invariant, v.detail);
        }
        out
    }
}
