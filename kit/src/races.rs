//! The races the concurrency check runs: the articles' race and its relatives, written out, and
//! random ones from a seed.

use fencelab_core::format::model::StoreSpec;
use fencelab_core::{
    fence::idempotency::Retention, fence::register::Revision,
    fence::register::SameGenerationPolicy, Generation, OperationId,
};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use std::fmt;

/// The most writers of one race: every order of them is played on the reference.
pub const MAX_WRITERS: usize = 6;

/// One write of a race, without its resource (each round writes a resource of its own).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Write {
    /// Who writes, for messages.
    pub who: String,
    /// The writer's generation.
    pub generation: Generation,
    /// Its operation id.
    pub operation: OperationId,
    /// The revision it expects, if any.
    pub expected_revision: Option<Revision>,
    /// The value.
    pub value: String,
}

impl Write {
    /// A write by `who` under generation `generation`.
    pub fn new(who: &str, generation: u64, operation: &str, value: &str) -> Write {
        Write {
            who: who.into(),
            generation: Generation::new(generation).expect("generations start at 1"),
            operation: OperationId::new(operation).expect("a short operation id"),
            expected_revision: None,
            value: value.into(),
        }
    }

    /// The same write, conditional on `revision`.
    pub fn expecting(mut self, revision: u64) -> Write {
        self.expected_revision = Some(Revision(revision));
        self
    }
}

impl fmt::Display for Write {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}'s write {:?} under generation {}", self.who, self.value, self.generation)?;
        write!(f, " (operation {}", self.operation)?;
        if let Some(revision) = self.expected_revision {
            write!(f, ", expecting {revision}")?;
        }
        f.write_str(")")
    }
}

/// Writers that hit one resource at the same time, after some writes made one at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Race {
    /// What the race shows.
    pub name: String,
    /// The store's policy and retention.
    pub spec: StoreSpec,
    /// Writes made one at a time before the race.
    pub setup: Vec<Write>,
    /// The writes that race, at most [`MAX_WRITERS`].
    pub writers: Vec<Write>,
    /// In the held rounds, the writer the check holds in its store's gap until the others have
    /// written (see [`gap`](crate::gap)): the stale one, in the articles' race.
    pub held: usize,
}

fn spec(policy: SameGenerationPolicy) -> StoreSpec {
    StoreSpec::fenced("db", policy, Retention::FOREVER)
}

/// The articles' race: A wrote under generation 1 and was paused; its lease ran out and B got
/// generation 2. A wakes and writes while B writes, A's check before B's write lands.
///
/// ```
/// let race = fencelab_kit::articles_race();
/// assert_eq!(race.writers[race.held].who, "A");
/// ```
pub fn articles_race() -> Race {
    Race {
        name: "the articles' race: a stale owner checked before the newer owner's write lands"
            .into(),
        spec: spec(SameGenerationPolicy::AllowSame),
        setup: vec![Write::new("A", 1, "a-1", "A started")],
        writers: vec![Write::new("A", 1, "a-2", "A late"), Write::new("B", 2, "b-1", "B")],
        held: 0,
    }
}

/// The built-in races: the articles' race and its relatives (a newer owner's replay, a
/// conditional write, three owners, the strict policy, generations whose digits differ in
/// number, which a store that compares them as text orders wrongly).
///
/// ```
/// assert!(fencelab_kit::races().len() >= 5);
/// ```
pub fn races() -> Vec<Race> {
    use SameGenerationPolicy::{AllowSame, StrictlyNewer};
    vec![
        articles_race(),
        Race {
            name: "a stale owner races a newer owner replaying the stale owner's operation".into(),
            spec: spec(AllowSame),
            setup: vec![Write::new("A", 1, "a-1", "A started")],
            writers: vec![Write::new("A", 1, "a-2", "A late"), Write::new("B", 2, "a-1", "B")],
            held: 0,
        },
        Race {
            name: "two conditional writes expecting the same revision".into(),
            spec: spec(AllowSame),
            setup: vec![Write::new("A", 1, "a-1", "A started")],
            writers: vec![
                Write::new("A", 1, "a-2", "A late").expecting(1),
                Write::new("B", 2, "b-1", "B").expecting(1),
            ],
            held: 0,
        },
        Race {
            name: "three owners, the oldest held".into(),
            spec: spec(AllowSame),
            setup: vec![Write::new("A", 1, "a-1", "A started")],
            writers: vec![
                Write::new("A", 1, "a-2", "A late"),
                Write::new("B", 2, "b-1", "B"),
                Write::new("C", 3, "c-1", "C"),
            ],
            held: 0,
        },
        Race {
            name: "the articles' race under the strict policy".into(),
            spec: spec(StrictlyNewer),
            setup: Vec::new(),
            writers: vec![Write::new("A", 1, "a-1", "A"), Write::new("B", 2, "b-1", "B")],
            held: 0,
        },
        Race {
            name: "the articles' race between generations 99 and 100".into(),
            spec: spec(AllowSame),
            setup: vec![Write::new("A", 99, "a-1", "A started")],
            writers: vec![Write::new("A", 99, "a-2", "A late"), Write::new("B", 100, "b-1", "B")],
            held: 0,
        },
    ]
}

/// The generations random races draw from: small ones, and pairs whose digits differ in number
/// (9 and 10, 99 and 100), which a store comparing them as text orders wrongly.
const RACE_GENERATIONS: [u64; 6] = [1, 2, 9, 10, 99, 100];

/// `count` random races from `seed`, each with 2 to `max_writers` writers (at most
/// [`MAX_WRITERS`]) under generations from 1, 2, 9, 10, 99 and 100, some sharing an operation
/// id, some conditional,
/// after up to two writes made one at a time. The same seed gives the same races.
///
/// ```
/// let races = fencelab_kit::random_races(7, 4, 3);
/// assert_eq!(races, fencelab_kit::random_races(7, 4, 3));
/// assert!(races.iter().all(|r| (2..=3).contains(&r.writers.len())));
/// ```
pub fn random_races(seed: u64, count: usize, max_writers: usize) -> Vec<Race> {
    let max_writers = max_writers.clamp(2, MAX_WRITERS);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|n| {
            let policy = if rng.random_bool(0.2) {
                SameGenerationPolicy::StrictlyNewer
            } else {
                SameGenerationPolicy::AllowSame
            };
            let write = |rng: &mut ChaCha8Rng, who: usize| {
                let generation = RACE_GENERATIONS[rng.random_range(0..RACE_GENERATIONS.len())];
                let name = ["A", "B", "C", "D", "E", "F"][who % MAX_WRITERS];
                let operation = format!("op-{}", rng.random_range(0..4u32));
                let value = format!("{name}{}", rng.random_range(0..100u32));
                let write = Write::new(name, generation, &operation, &value);
                if rng.random_bool(0.25) {
                    write.expecting(rng.random_range(0..3u64))
                } else {
                    write
                }
            };
            let setup = (0..rng.random_range(0..=2usize)).map(|_| write(&mut rng, 0)).collect();
            let writers: Vec<Write> =
                (0..rng.random_range(2..=max_writers)).map(|w| write(&mut rng, w)).collect();
            let held = rng.random_range(0..writers.len());
            Race {
                name: format!("random race {n} of seed {seed}"),
                spec: spec(policy),
                setup,
                writers,
                held,
            }
        })
        .collect()
}
