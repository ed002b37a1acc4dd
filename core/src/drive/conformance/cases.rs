//! Small hand-written cases, one per rule of a fenced store, for what the stories' runs may not
//! reach: replays by a newer owner, retries by a stale one, the order of checks, the strict
//! policy's own retry and forgetting by age and by count.

use super::{Case, StoryWrite};
use crate::clock::Tick;
use crate::fence::generation::Generation;
use crate::fence::idempotency::Retention;
use crate::fence::register::{Revision, SameGenerationPolicy, WriteRequest};
use crate::format::model::StoreSpec;
use crate::ids::{OperationId, ResourceId};
use std::num::NonZeroUsize;

/// One write of a case: `(tick, generation, operation, expected revision, value)`.
type Line = (u64, u64, &'static str, Option<u64>, &'static str);

/// A case: what it shows, the store's policy and retention, and its writes, each to the resource
/// it names.
type Row = (&'static str, SameGenerationPolicy, Retention, &'static [(&'static str, Line)]);

/// The kit's own cases: each plays a few writes to one resource that exercise one rule, with
/// the rule in its name.
///
/// ```
/// use fencelab_core::{drive::conformance::check_cases, drive::conformance::factory, drive::conformance::rule_cases};
/// use fencelab_core::fence::store::MemoryStore;
///
/// let cases = rule_cases();
/// assert!(cases.iter().any(|c| c.name.contains("stale owner retries")));
/// let fresh = factory(|spec| Ok(MemoryStore::new(spec.policy, spec.retention)));
/// assert_eq!(check_cases(&cases, fresh).unwrap().scenarios, cases.len());
/// ```
pub fn rule_cases() -> Vec<Case> {
    use SameGenerationPolicy::{AllowSame, StrictlyNewer};
    let forever = Retention::FOREVER;
    let by_age = Retention { max_entries: None, max_age: Some(5) };
    let by_count = Retention { max_entries: NonZeroUsize::new(1), max_age: None };
    // Generations whose text order differs from their number order ("10" < "9"), and the
    // extremes: a store that keeps tokens as text, or in a 32-bit or floating-point column,
    // passes every other case. The largest is the largest a signed 64-bit column (SQL's BIGINT,
    // Redis's counters, etcd's revisions) holds; the SQL stores refuse a larger one outright.
    const BIG: u64 = 1 << 31;
    const PAST_F64: u64 = (1 << 53) + 1;
    const LARGEST: u64 = i64::MAX as u64;
    let table: [(&str, SameGenerationPolicy, Retention, &[Line]); 12] = [
        (
            "fence: a stale owner is refused",
            AllowSame,
            forever,
            &[(0, 1, "a", None, "A1"), (1, 2, "b", None, "B1"), (2, 1, "c", None, "A2")],
        ),
        (
            "fence: generations are compared as numbers, across digit counts and up to 2^63 - 1",
            AllowSame,
            forever,
            &[
                (0, 9, "a", None, "9"),
                (1, 10, "b", None, "10"),
                (2, 9, "c", None, "9 again"),
                (3, 99, "d", None, "99"),
                (4, 100, "e", None, "100"),
                (5, BIG, "f", None, "2^31"),
                (6, PAST_F64, "g", None, "2^53 + 1"),
                (7, PAST_F64 - 1, "h", None, "2^53"),
                (8, LARGEST, "i", None, "2^63 - 1"),
                (9, LARGEST - 1, "j", None, "2^63 - 2"),
            ],
        ),
        (
            "fence raise: a newer generation replaying a remembered id raises the fence",
            AllowSame,
            forever,
            &[(0, 1, "a", None, "A1"), (1, 2, "a", None, "B1"), (2, 1, "c", None, "A2")],
        ),
        (
            "check order: a stale owner retries a remembered id and is refused",
            AllowSame,
            forever,
            &[(0, 1, "a", None, "A1"), (1, 2, "b", None, "B1"), (2, 1, "a", None, "A1")],
        ),
        (
            "check order: a remembered id is answered before its expected revision is checked",
            AllowSame,
            forever,
            &[(0, 1, "a", Some(0), "A1"), (1, 1, "a", Some(0), "A1")],
        ),
        (
            "expected revision: a conflict is refused and a newer generation's conflict raises the fence",
            AllowSame,
            forever,
            &[
                (0, 1, "a", None, "A1"),
                (1, 1, "b", Some(0), "A2"),
                (2, 2, "c", Some(0), "B1"),
                (3, 1, "d", None, "A3"),
            ],
        ),
        (
            "strict policy: the owner's own retry is replayed, a second write refused",
            StrictlyNewer,
            forever,
            &[(0, 1, "a", None, "A1"), (1, 1, "a", None, "A1"), (2, 1, "b", None, "A2")],
        ),
        (
            "strict policy: a generation that raised the fence without acting may still write once",
            StrictlyNewer,
            forever,
            &[
                (0, 1, "a", None, "A1"),
                (1, 2, "b", Some(0), "B conflict"),
                (2, 2, "c", None, "B1"),
                (3, 2, "d", None, "B2"),
            ],
        ),
        (
            "retention: an id past its age is forgotten and applies again",
            AllowSame,
            by_age,
            &[(0, 1, "a", None, "A1"), (2, 1, "a", None, "A1"), (10, 1, "a", None, "A1")],
        ),
        (
            "retention: an id exactly its age old is forgotten",
            AllowSame,
            by_age,
            &[(0, 1, "a", None, "A1"), (4, 1, "a", None, "A1"), (5, 1, "a", None, "A1")],
        ),
        (
            "retention: an id past the capacity is forgotten and applies again",
            AllowSame,
            by_count,
            &[(0, 1, "a", None, "A1"), (1, 1, "b", None, "A2"), (2, 1, "a", None, "A1")],
        ),
        (
            "strict policy: an own retry past its retention is refused",
            StrictlyNewer,
            by_age,
            &[(0, 1, "a", None, "A1"), (2, 1, "a", None, "A1"), (10, 1, "a", None, "A1")],
        ),
    ];
    // Cases over two resources of one store, each line with its resource.
    let two: [Row; 1] = [(
        "retention: each resource keeps its own ids up to the capacity",
        AllowSame,
        by_count,
        &[
            ("r", (0, 1, "a", None, "A1")),
            ("s", (1, 1, "b", None, "B1")),
            ("r", (2, 1, "a", None, "A1")),
        ],
    )];
    let one = table.iter().map(|(name, policy, retention, lines)| {
        (*name, *policy, *retention, lines.iter().map(|line| ("r", *line)).collect::<Vec<_>>())
    });
    let two = two
        .iter()
        .map(|(name, policy, retention, lines)| (*name, *policy, *retention, lines.to_vec()));
    one.chain(two)
        .enumerate()
        .map(|(n, (name, policy, retention, lines))| {
            let spec = StoreSpec::fenced(&format!("case{n}"), policy, retention);
            let writes = lines
                .iter()
                .map(|&(resource, (at, generation, operation, expected, value))| StoryWrite {
                    at: Tick(at),
                    request: WriteRequest::new(
                        ResourceId::new(format!("case{n}/{resource}")).expect("a short name"),
                        Generation::new(generation).expect("not zero"),
                        OperationId::new(operation).expect("a short name"),
                        expected.map(Revision),
                        value,
                    ),
                    spec: spec.clone(),
                    place: format!("case{n}/{resource}"),
                })
                .collect();
            Case { name: name.to_string(), schedule: Vec::new(), writes }
        })
        .collect()
}
