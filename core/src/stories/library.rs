//! The built-in stories: every case from the source material, most in a fenced and a broken
//! variant, ready to play, embed or check.

use crate::fence::gateway::Effect;
use crate::fence::idempotency::Retention;
use crate::fence::register::{RejectionReason, SameGenerationPolicy};
use crate::format::model::*;
use crate::invariant::InvariantKind::{self, *};
use serde::{Deserialize, Serialize};
use Ask::{Delivered, Final, FirstWrite, Write};

/// A built-in case and the variants it comes in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseInfo {
    /// Machine name, e.g. `paused-worker`.
    pub name: String,
    /// Title.
    pub title: String,
    /// Variant names; the first is the default.
    pub variants: Vec<String>,
}

struct Case {
    name: &'static str,
    title: &'static str,
    /// The set-up every variant shares: who does what, and nothing that only one variant shows.
    intro: &'static str,
    /// Each variant's name, its own set-up (a sentence that follows the shared one in the
    /// scenario's intro) and how it ends (the scenario's outcome, which a reader predicting the
    /// run sees only afterwards). The first variant is the default.
    variants: &'static [(&'static str, &'static str, &'static str)],
    build: fn(&str, Scenario) -> Scenario,
    /// What the case asks its reader at its key moments, in every variant: the run of each
    /// variant decides where each question stops the player and what the answer is.
    asks: &'static [Ask],
}

/// A question a case asks (see [`Checkpoint`]).
#[derive(Clone, Copy)]
enum Ask {
    /// Will the store apply this worker's last write?
    Write(&'static str),
    /// Will the store apply this worker's first write?
    FirstWrite(&'static str),
    /// Will the gateway let this worker's last effect through?
    Delivered(&'static str),
    /// Which value will this store's primary data hold at the end?
    Final(&'static str),
}

impl Ask {
    fn checkpoint(self) -> Checkpoint {
        match self {
            Ask::Write(worker) => Checkpoint::WriteAccepted { worker: worker.into(), nth: None },
            Ask::FirstWrite(worker) => {
                Checkpoint::WriteAccepted { worker: worker.into(), nth: Some(1) }
            }
            Ask::Delivered(worker) => {
                Checkpoint::EffectDelivered { worker: worker.into(), nth: None }
            }
            Ask::Final(store) => {
                Checkpoint::FinalValue { store: store.into(), data: "primary".into() }
            }
        }
    }
}

/// Every built-in case, in teaching order.
pub fn cases() -> Vec<CaseInfo> {
    CASES
        .iter()
        .map(|c| CaseInfo {
            name: c.name.into(),
            title: c.title.into(),
            variants: c.variants.iter().map(|(v, _, _)| v.to_string()).collect(),
        })
        .collect()
}

/// The set-up a case's variants share, without any variant's own line: what stays true when a
/// reader changes the story (a switch turned on, an edit).
pub fn setup(name: &str) -> Option<&'static str> {
    CASES.iter().find(|c| c.name == name).map(|c| c.intro)
}

/// A story name or variant that the library does not have. Its message lists what it has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownStory {
    /// No built-in story has this name.
    #[error("there is no story \"{name}\"; the stories are {}", .stories.join(", "))]
    Story {
        /// The name asked for.
        name: String,
        /// Every story's name, in teaching order.
        stories: Vec<String>,
    },
    /// The story exists, but not in this variant.
    #[error("{story} has no variant \"{variant}\"; it has {}", .variants.join(", "))]
    Variant {
        /// The story.
        story: String,
        /// The variant asked for.
        variant: String,
        /// The story's variants; the first is the default.
        variants: Vec<String>,
    },
}

/// One built-in scenario by case name and variant (`None` for the default variant). An unknown
/// name or variant is an [`UnknownStory`], whose message lists the stories or the variants.
///
/// ```
/// use fencelab_core::stories::library;
///
/// let scenario = library::scenario("paused-worker", Some("broken"))?;
/// assert_eq!(scenario.variant, "broken");
/// let wrong = library::scenario("paused-worker", Some("sideways")).unwrap_err();
/// assert_eq!(wrong.to_string(), "paused-worker has no variant \"sideways\"; it has fenced, broken");
/// # Ok::<(), library::UnknownStory>(())
/// ```
pub fn scenario(name: &str, variant: Option<&str>) -> Result<Scenario, UnknownStory> {
    let Some(case) = CASES.iter().find(|c| c.name == name) else {
        return Err(UnknownStory::Story {
            name: name.into(),
            stories: CASES.iter().map(|c| c.name.to_string()).collect(),
        });
    };
    let found = match variant {
        // Every case has at least one variant (the tests below hold the table to that).
        None => case.variants.first(),
        Some(wanted) => case.variants.iter().find(|(v, _, _)| *v == wanted),
    };
    let Some(&(variant, line, outcome)) = found else {
        return Err(UnknownStory::Variant {
            story: name.into(),
            variant: variant.unwrap_or_default().into(),
            variants: case.variants.iter().map(|(v, _, _)| v.to_string()).collect(),
        });
    };
    let base = Scenario {
        name: case.name.into(),
        variant: variant.into(),
        title: case.title.into(),
        intro: format!("{} {line}", case.intro),
        outcome: outcome.into(),
        resources: vec!["ledger".into()],
        authority: AuthoritySpec {
            ttl: 10,
            token_source: TokenSource::DurableCounter,
            authenticated: false,
        },
        stores: vec![store("db", Enforcement::Fenced)],
        gateway: None,
        network: NetworkSpec::default(),
        workers: Vec::new(),
        faults: Vec::new(),
        injected: Vec::new(),
        checkpoints: Vec::new(),
        expect: Expectations::default(),
        schedule: Vec::new(),
    };
    let mut scenario = (case.build)(variant, base);
    scenario.checkpoints = case.asks.iter().map(|a| a.checkpoint()).collect();
    Ok(scenario)
}

/// Every built-in scenario, every variant.
pub fn all() -> Vec<Scenario> {
    CASES
        .iter()
        .flat_map(|c| c.variants.iter().filter_map(|(v, _, _)| scenario(c.name, Some(v)).ok()))
        .collect()
}

fn store(name: &str, enforcement: Enforcement) -> StoreSpec {
    StoreSpec {
        name: name.into(),
        enforcement,
        policy: SameGenerationPolicy::AllowSame,
        retention: Retention::FOREVER,
        persist_highest: true,
        critical: true,
        check_write_gap: 1,
        paths: Vec::new(),
    }
}

fn worker(name: &str, start: u64, script: Vec<Step>) -> WorkerSpec {
    WorkerSpec { name: name.into(), start, clock_offset: 0, script }
}

fn acquire(resource: &str) -> Step {
    Step::Acquire { resource: resource.into() }
}

fn pause(ticks: u64, reason: PauseReason) -> Step {
    Step::Pause { ticks, reason, optional: false }
}

fn compute(ticks: u64) -> Step {
    Step::Compute { ticks }
}

fn read(resource: &str) -> Step {
    Step::Read { resource: resource.into(), store: None, path: None }
}

fn write(resource: &str, value: &str) -> WriteStep {
    WriteStep {
        resource: resource.into(),
        value: value.into(),
        operation: None,
        expected_revision: None,
        store: None,
        path: None,
        delay: 0,
        forge: None,
    }
}

impl WriteStep {
    fn op(mut self, operation: &str) -> Self {
        self.operation = Some(operation.into());
        self
    }
    fn delayed(mut self, ticks: u64) -> Self {
        self.delay = ticks;
        self
    }
    fn expecting(mut self, revision: ExpectedRevision) -> Self {
        self.expected_revision = Some(revision);
        self
    }
    fn on_path(mut self, path: &str) -> Self {
        self.path = Some(path.into());
        self
    }
    fn step(self) -> Step {
        Step::Write(self)
    }
}

fn effect(resource: &str, operation: &str, effect: Effect) -> Step {
    Step::Effect(EffectStep {
        resource: resource.into(),
        workflow: None,
        effect,
        operation: Some(operation.into()),
        delay: 0,
    })
}

fn expect(scenario: &mut Scenario, broken: bool, violations: &[InvariantKind]) {
    if broken {
        scenario.expect.violations = violations.to_vec();
    }
}

const STALE_OVERWRITE: &[InvariantKind] =
    &[StaleWriteAccepted, FinalValueNotFromLatestOwner, WriteOutsideLease];

fn fence(variant: &str) -> Enforcement {
    if variant == "broken" {
        Enforcement::Unfenced
    } else {
        Enforcement::Fenced
    }
}

/// A pauses past its lease; B takes over and writes; A resumes and writes.
fn paused_story(variant: &str, mut s: Scenario, ttl: u64, pause_ticks: u64) -> Scenario {
    s.resources = vec!["totals".into()];
    s.authority.ttl = ttl;
    s.stores = vec![store("db", fence(variant))];
    s.workers = vec![
        worker(
            "A",
            0,
            vec![
                acquire("totals"),
                read("totals"),
                compute(2),
                write("totals", "A: total=100").step(),
                pause(pause_ticks, PauseReason::GcPause),
                write("totals", "A: total=90 (from stale inputs)").step(),
            ],
        ),
        worker(
            "B",
            2,
            vec![acquire("totals"), read("totals"), write("totals", "B: total=120").step()],
        ),
    ];
    expect(&mut s, variant == "broken", STALE_OVERWRITE);
    s
}

const CASES: &[Case] = &[
    Case {
        name: "paused-worker",
        asks: &[Write("A"), Final("db")],
        title: "A paused worker wakes up after its lease expired",
        intro: "Worker A holds the lease and writes account totals. Then a stop-the-world GC pause freezes it for longer than the lease lasts. The authority hands the lease to B, which writes fresh totals. A wakes up, still sure it owns the lease, and writes totals computed from old inputs.",
        variants: &[
            (
                "fenced",
                "The store checks each write's generation.",
                "It refuses A's late write, because generation 1 is older than B's 2, and B's totals stay.",
            ),
            (
                "broken",
                "The store ignores tokens.",
                "So A's late write replaces B's totals. The checker flags a stale write accepted, a write outside its lease, and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, s| paused_story(v, s, 10, 15),
    },
    Case {
        name: "longer-lease",
        asks: &[Write("A")],
        title: "A longer lease does not fix it",
        intro: "The paused-worker story with a lease three times longer. A longer lease makes the race rarer, not impossible: A's pause only has to outlast it, and here it does. B takes over and writes, then A wakes and writes totals from old inputs.",
        variants: &[
            (
                "fenced",
                "The store checks each write's generation.",
                "Its generation check refuses A's late write, as it would with a lease of any length. B's totals stay.",
            ),
            (
                "broken",
                "The store checks no tokens.",
                "So A's late write replaces B's totals, just as with the short lease. The checker flags a stale write accepted, a write outside its lease, and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, s| paused_story(v, s, 30, 40),
    },
    Case {
        name: "same-owner-updates",
        asks: &[Write("A")],
        title: "One owner, several writes: same generation, strict policy and expected revisions",
        intro: "A single owner, A, sends three updates under one generation. The network delays step 1, so it arrives after step 2. Each variant gives the store a different rule for writes that carry the same generation.",
        variants: &[
            (
                "expected-revision",
                "Each write names the revision it expects.",
                "Step 2 arrives first and is refused with a revision conflict, because step 1 has not landed yet. A retries step 2 after step 1 lands, and the three steps apply in order.",
            ),
            (
                "allow-same",
                "The store accepts a generation equal to its highest.",
                "Step 2 lands, then the late step 1 replaces it, then step 3 lands. The checker flags one owner's writes applied out of order.",
            ),
            (
                "strict",
                "The store accepts only a generation newer than its highest.",
                "So A may write once. Step 2 lands; the late step 1 and then step 3 are refused as stale. Nothing is out of order, but A's own updates are lost and the ledger ends at step 2.",
            ),
        ],
        build: |v, mut s| {
            let idempotent = v == "expected-revision";
            let enforcement = if idempotent { Enforcement::FencedIdempotent } else { Enforcement::Fenced };
            s.stores = vec![store("db", enforcement)];
            if v == "strict" {
                s.stores[0].policy = SameGenerationPolicy::StrictlyNewer;
            }
            let rev = |w: WriteStep, n: u64| if idempotent { w.expecting(ExpectedRevision::Exactly(n)) } else { w };
            let mut script = vec![
                acquire("ledger"),
                rev(write("ledger", "step 1").op("step-1").delayed(3), 0).step(),
                rev(write("ledger", "step 2").op("step-2"), 1).step(),
                compute(5),
            ];
            // With expected revisions, step 2 is refused while step 1 is late, so A retries it.
            if idempotent {
                script.push(Step::Retry { operation: "step-2".into() });
            }
            script.push(rev(write("ledger", "step 3").op("step-3"), 2).step());
            s.workers = vec![worker("A", 0, script)];
            match v {
                "allow-same" => s.expect.violations = vec![WritesReordered],
                "strict" => {
                    s.expect.rejections = Some([(RejectionReason::StaleGeneration, 2)].into());
                }
                _ => {}
            }
            s
        },
    },
    Case {
        name: "fresh-register",
        asks: &[FirstWrite("A"), Write("A")],
        title: "The fresh register: a stale write that arrives first is accepted",
        intro: "A fence refuses only generations it knows to be superseded. A is descheduled past its lease while the new owner, B, computes and has not written yet. A wakes and writes first, then B writes, then A writes again.",
        variants: &[
            (
                "fenced",
                "The store checks each write's generation.",
                "It has seen no newer generation when A's first write arrives, so it accepts it, and the checker flags a write outside its lease. B's write raises the fence, and A's second write is refused. Fencing orders generations; it does not prove a write was sent during a valid lease.",
            ),
        ],
        build: |_, mut s| {
            s.workers = vec![
                worker(
                    "A",
                    0,
                    vec![
                        acquire("ledger"),
                        pause(15, PauseReason::Descheduled),
                        write("ledger", "A: stale but first").step(),
                        compute(10),
                        write("ledger", "A: stale again").step(),
                    ],
                ),
                // B computes for six ticks, well inside its lease (t=11 to t=20), so its write is
                // the current owner's and arrives just after A's stale one.
                worker("B", 2, vec![acquire("ledger"), compute(6), write("ledger", "B: current").step()]),
            ];
            s.expect.violations = vec![WriteOutsideLease];
            s
        },
    },
    Case {
        name: "check-then-write",
        asks: &[Write("A"), Final("db")],
        title: "Check-then-write races; a conditional write does not",
        intro: "A writes, then a network stall holds it past its lease, and B takes over. When A resumes, its stale write and B's write reach the store at the same tick, and the store handles B's first.",
        variants: &[
            (
                "atomic",
                "The store compares the generation and writes in one step.",
                "B's write lands and raises the fence, so A's write is refused.",
            ),
            (
                "check-then-write",
                "The store reads the highest generation, then writes in a separate step.",
                "Both checks pass before either write lands, so B's value lands and then A's lands on top of it. The checker flags a stale write accepted, a write outside its lease, and a final value that is not the latest owner's. A single-threaded test never sees this race; this run's schedule picks the interleaving.",
            ),
        ],
        build: |v, mut s| {
            let broken = v == "check-then-write";
            s.stores = vec![store("db", if broken { Enforcement::CheckThenWrite } else { Enforcement::Fenced })];
            s.workers = vec![
                worker(
                    "A",
                    0,
                    vec![
                        acquire("ledger"),
                        write("ledger", "A: start").step(),
                        pause(10, PauseReason::NetworkStall),
                        write("ledger", "A: stale").step(),
                    ],
                ),
                worker("B", 2, vec![acquire("ledger"), write("ledger", "B: current").step()]),
            ];
            // The first six choice points take the natural order. At t=12 both writes arrive and
            // B's is handled first; at t=13 (check-then-write only) both deferred writes are due
            // and B's lands first, so A's lands on top of it.
            s.schedule = vec![0, 0, 0, 0, 0, 0, 1, 1];
            expect(&mut s, broken, &[StaleWriteAccepted, FinalValueNotFromLatestOwner, WriteOutsideLease]);
            s
        },
    },
    Case {
        name: "idempotent-retry",
        asks: &[Write("A")],
        title: "Retries: one debit sent twice",
        intro: "A sends a debit and, hearing nothing back, retries the same operation. The retry arrives first and the slow first attempt two ticks later. Both copies carry A's valid generation, so the fence lets both through.",
        variants: &[
            (
                "fenced",
                "The store remembers operation ids.",
                "It recognises the late copy and returns the stored result, so the account is debited once.",
            ),
            (
                "broken",
                "The store checks generations but keeps no operation ids.",
                "It applies the late copy as a second debit, and the checker flags an operation applied twice.",
            ),
        ],
        build: |v, mut s| {
            let enforcement = if v == "broken" { Enforcement::Fenced } else { Enforcement::FencedIdempotent };
            s.stores = vec![store("db", enforcement)];
            s.workers = vec![worker(
                "A",
                0,
                vec![
                    acquire("ledger"),
                    write("ledger", "debit 10").op("debit-1").delayed(4).step(),
                    compute(2),
                    Step::Retry { operation: "debit-1".into() },
                ],
            )];
            expect(&mut s, v == "broken", &[OperationAppliedTwice]);
            s
        },
    },
    Case {
        name: "newer-owner-retry",
        asks: &[Write("A")],
        title: "A newer owner's retry still fences the old owner out",
        intro: "A runs job-1 and then freezes. B takes over and, not knowing whether job-1 finished, sends it again under generation 2. Then A wakes and sends new work, job-2, under generation 1.",
        variants: &[
            (
                "fenced",
                "The store checks tokens and remembers operation ids.",
                "It recognises job-1 and returns the stored result, but it also notes that generation 2 has shown up. A's job-2 is refused as stale: a replayed request still raises the fence.",
            ),
            (
                "broken",
                "The store checks neither tokens nor operation ids.",
                "B's copy of job-1 applies a second time, and A's stale job-2 lands last. The checker flags an operation applied twice, a stale write accepted, a write outside its lease, and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            s.resources = vec!["jobs".into()];
            let enforcement = if v == "broken" { Enforcement::Unfenced } else { Enforcement::FencedIdempotent };
            s.stores = vec![store("db", enforcement)];
            s.workers = vec![
                worker(
                    "A",
                    0,
                    vec![
                        acquire("jobs"),
                        write("jobs", "job-1 done by A").op("job-1").step(),
                        pause(15, PauseReason::GcPause),
                        write("jobs", "job-2 done by A (stale)").op("job-2").step(),
                    ],
                ),
                worker("B", 2, vec![acquire("jobs"), write("jobs", "job-1 done by B").op("job-1").step()]),
            ];
            expect(
                &mut s,
                v == "broken",
                &[OperationAppliedTwice, StaleWriteAccepted, FinalValueNotFromLatestOwner, WriteOutsideLease],
            );
            s
        },
    },
    Case {
        name: "retention-window",
        asks: &[Write("A")],
        title: "A retry after the retention window",
        intro: "The store remembers operation ids for 5 ticks only. A reads the ledger, sends a debit, and retries it 20 ticks later, after the store has forgotten the id. So the store treats the retry as a new operation.",
        variants: &[
            (
                "expected-revision",
                "The debit expects the revision A read.",
                "The first attempt already moved the revision on, so the late retry fails with a revision conflict and the ledger is debited once.",
            ),
            (
                "unconditional",
                "The debit expects no particular revision.",
                "So the late retry applies a second time. The checker flags an operation applied twice.",
            ),
        ],
        build: |v, mut s| {
            s.stores = vec![store("db", Enforcement::FencedIdempotent)];
            s.stores[0].retention = Retention { max_entries: None, max_age: Some(5) };
            s.authority.ttl = 100;
            let mut first = write("ledger", "debit 10").op("debit-1");
            if v == "expected-revision" {
                first = first.expecting(ExpectedRevision::LastRead);
            }
            s.workers = vec![worker(
                "A",
                0,
                vec![acquire("ledger"), read("ledger"), first.step(), compute(20), Step::Retry { operation: "debit-1".into() }],
            )];
            expect(&mut s, v == "unconditional", &[OperationAppliedTwice]);
            s
        },
    },
    Case {
        name: "payment-capture",
        asks: &[Delivered("A")],
        title: "Side effects: a gateway in front of the payment provider",
        intro: "Capturing a payment cannot be rolled back, so requests to the payment provider pass through a gateway. A freezes before capturing order 42. B takes over and captures it. When A resumes, it sends its own capture of the same order.",
        variants: &[
            (
                "fenced",
                "The gateway remembers the highest generation per order.",
                "It passes B's capture, then drops A's late request as stale before the provider is called.",
            ),
            (
                "broken",
                "The gateway checks no tokens.",
                "It passes A's request on too, so the customer is charged twice. The checker flags an effect delivered twice and an effect from a superseded owner.",
            ),
        ],
        build: |v, mut s| {
            s.resources = vec!["order-42".into()];
            s.gateway = Some(GatewaySpec { partner: "payments".into(), enforcement: fence(v), policy: SameGenerationPolicy::AllowSame });
            let capture = Effect::CapturePayment { amount_cents: 4999 };
            s.workers = vec![
                worker("A", 0, vec![acquire("order-42"), pause(15, PauseReason::GcPause), effect("order-42", "capture-order-42", capture.clone())]),
                worker("B", 2, vec![acquire("order-42"), effect("order-42", "capture-order-42", capture)]),
            ];
            expect(&mut s, v == "broken", &[EffectDeliveredTwice, EffectFromSupersededOwner]);
            s
        },
    },
    Case {
        name: "duplicate-capture",
        asks: &[Delivered("A")],
        title: "A newer owner's duplicate capture still fences the old owner out",
        intro: "A captures the payment for order 7 through the gateway and freezes. B takes over and, unsure whether the capture went through, sends the same capture again under generation 2. Then A wakes and sends the receipt email under generation 1.",
        variants: &[
            (
                "fenced",
                "The gateway checks tokens and remembers the operations it has passed on.",
                "It drops B's capture as a duplicate, and still remembers generation 2 for the order. So it drops A's receipt too, as stale: a dropped duplicate still raises the fence.",
            ),
            (
                "broken",
                "The gateway checks neither tokens nor operation ids.",
                "The payment is captured a second time, and A's receipt reaches the customer. The checker flags an effect delivered twice and an effect from a superseded owner.",
            ),
        ],
        build: |v, mut s| {
            s.resources = vec!["order-7".into()];
            s.gateway = Some(GatewaySpec { partner: "payments+mail".into(), enforcement: fence(v), policy: SameGenerationPolicy::AllowSame });
            let capture = Effect::CapturePayment { amount_cents: 2500 };
            let receipt = Effect::SendEmail { to: "customer@example.org".into(), subject: "Receipt for order 7".into() };
            s.workers = vec![
                worker(
                    "A",
                    0,
                    vec![
                        acquire("order-7"),
                        effect("order-7", "capture-7", capture.clone()),
                        pause(15, PauseReason::GcPause),
                        effect("order-7", "receipt-7", receipt),
                    ],
                ),
                worker("B", 2, vec![acquire("order-7"), effect("order-7", "capture-7", capture)]),
            ];
            expect(&mut s, v == "broken", &[EffectDeliveredTwice, EffectFromSupersededOwner]);
            s
        },
    },
    Case {
        name: "email-webhook",
        asks: &[Delivered("A")],
        title: "Side effects: emails and webhooks from a stale worker",
        intro: "An email cannot be unsent, and a partner acts on a webhook at once. A stalls on an overloaded event loop past its lease. B takes over the shipment workflow and notifies the customer and the partner through the gateway. Then A resumes and sends its own email and webhook.",
        variants: &[
            (
                "fenced",
                "The gateway checks tokens.",
                "It passes B's notifications and drops both of A's as stale before they leave.",
            ),
            (
                "broken",
                "The gateway checks no tokens.",
                "So the customer gets a second email and the partner a second webhook. The checker flags each as an effect from a superseded owner.",
            ),
        ],
        build: |v, mut s| {
            s.resources = vec!["shipment-7".into()];
            s.gateway = Some(GatewaySpec { partner: "mail/webhooks".into(), enforcement: fence(v), policy: SameGenerationPolicy::AllowSame });
            let mail = Effect::SendEmail { to: "customer@example.org".into(), subject: "Your order has shipped".into() };
            let hook = Effect::CallWebhook { endpoint: "partner/shipments".into(), payload: "{\"shipment\":7}".into() };
            s.workers = vec![
                worker("A", 0, vec![acquire("shipment-7"), pause(14, PauseReason::OverloadedEventLoop), effect("shipment-7", "a-mail", mail.clone()), effect("shipment-7", "a-hook", hook.clone())]),
                worker("B", 2, vec![acquire("shipment-7"), effect("shipment-7", "b-mail", mail), effect("shipment-7", "b-hook", hook)]),
            ];
            expect(&mut s, v == "broken", &[EffectFromSupersededOwner]);
            s
        },
    },
    Case {
        name: "secondary-path",
        asks: &[Write("A")],
        title: "The forgotten write path: metadata fenced, object not",
        intro: "A report is stored as a metadata row, which checks tokens, and an object body written through a second path. A freezes past its lease, B takes over and writes both parts, then A wakes and writes both parts too.",
        variants: &[
            (
                "fenced",
                "The object path checks tokens as well.",
                "Both of A's writes are refused, and the whole report stays B's.",
            ),
            (
                "broken",
                "The object path checks no tokens.",
                "A is refused on the metadata, but its old body replaces B's, so B's row now sits beside A's body. The checker flags a stale write accepted on the object path, a write outside its lease, and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            s.resources = vec!["report".into()];
            let mut st = store("storage", Enforcement::Fenced);
            st.paths = vec![PathSpec { name: "object".into(), enforcement: fence(v), data: None }];
            s.stores = vec![st];
            let both = |who: &str| {
                vec![
                    write("report", &format!("{who}: metadata")).step(),
                    write("report", &format!("{who}: object body")).on_path("object").step(),
                ]
            };
            let mut a = vec![acquire("report"), pause(15, PauseReason::GcPause)];
            a.extend(both("A"));
            let mut b = vec![acquire("report")];
            b.extend(both("B"));
            s.workers = vec![worker("A", 0, a), worker("B", 2, b)];
            expect(&mut s, v == "broken", STALE_OVERWRITE);
            s
        },
    },
    Case {
        name: "admin-path",
        asks: &[Write("A")],
        title: "A second path into the same ledger needs the same fence",
        intro: "The ledger is written by the service's main path and by an admin endpoint. Both reach the same rows, so they share one fencing record. A writes and freezes; B, the new owner, writes through the main path. Then stale A writes through the admin endpoint.",
        variants: &[
            (
                "fenced",
                "The admin endpoint checks tokens too.",
                "The shared record already holds B's generation 2, so A is refused and B's balance stays.",
            ),
            (
                "broken",
                "The admin endpoint checks no tokens.",
                "So A's old balance replaces B's. The checker flags a stale write accepted, a write outside its lease, and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            let mut st = store("db", Enforcement::Fenced);
            st.paths = vec![PathSpec { name: "admin".into(), enforcement: fence(v), data: Some("primary".into()) }];
            s.stores = vec![st];
            s.workers = vec![
                worker(
                    "A",
                    0,
                    vec![
                        acquire("ledger"),
                        write("ledger", "A: balance=100").step(),
                        pause(15, PauseReason::GcPause),
                        write("ledger", "A: balance=100 (admin fix, stale)").on_path("admin").step(),
                    ],
                ),
                worker("B", 2, vec![acquire("ledger"), write("ledger", "B: balance=80").step()]),
            ];
            expect(&mut s, v == "broken", STALE_OVERWRITE);
            s
        },
    },
    Case {
        name: "wall-clock-tokens",
        asks: &[Write("A")],
        title: "Wall-clock timestamps are not fencing tokens",
        intro: "A's clock runs 30 ticks fast. A writes, then a GC pause holds it past its lease. B takes over and writes, then A wakes and writes again. The variants differ in what the workers send as tokens.",
        variants: &[
            (
                "fenced",
                "Tokens are generations from the authority's counter, so A's clock does not matter.",
                "B's generation 2 lands, and A's late write with generation 1 is refused.",
            ),
            (
                "broken",
                "Workers send their own clock readings as tokens.",
                "B's honest reading, 11, looks older than A's 31, so B is refused; A's later write, stamped 46, is accepted. The checker flags a stale write accepted, a write outside its lease, and a final value that is not the latest owner's. Only a counter the authority increases with every grant orders owners.",
            ),
        ],
        build: |v, mut s| {
            if v == "broken" {
                s.authority.token_source = TokenSource::WallClock;
            }
            let mut a = worker(
                "A",
                0,
                vec![acquire("ledger"), write("ledger", "A: first").step(), pause(15, PauseReason::GcPause), write("ledger", "A: stale").step()],
            );
            a.clock_offset = 30;
            s.workers = vec![a, worker("B", 2, vec![acquire("ledger"), write("ledger", "B: current").step()])];
            // B's write is refused, yet it showed the store a newer lease: A's later write is a
            // stale write accepted, and its value is the final one.
            expect(&mut s, v == "broken", &[StaleWriteAccepted, FinalValueNotFromLatestOwner, WriteOutsideLease, TokenNeverIssued]);
            s
        },
    },
    Case {
        name: "authority-restart",
        asks: &[Write("C")],
        title: "An authority that forgets its counter on restart",
        intro: "A and B each hold the lease in turn and write, with generations 1 and 2. Then the lease authority restarts, and C asks for the lease.",
        variants: &[
            (
                "fenced",
                "The authority's counter is durable.",
                "So C gets generation 3 and its write lands.",
            ),
            (
                "broken",
                "The authority keeps its counter only in memory.",
                "So it starts again and gives C generation 1. The store has already seen 2, so it refuses C, the real owner, and B's value stays. The checker flags a reissued generation and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            if v == "broken" {
                s.authority.token_source = TokenSource::VolatileCounter;
            }
            let turn = |who: &str| {
                vec![acquire("ledger"), write("ledger", &format!("{who}'s update")).step(), Step::Release { resource: "ledger".into() }]
            };
            s.workers = vec![worker("A", 0, turn("A")), worker("B", 3, turn("B")), worker("C", 12, turn("C"))];
            s.faults = vec![FaultSpec { at: 10, fault: Fault::RestartAuthority }];
            expect(&mut s, v == "broken", &[GenerationReissued, FinalValueNotFromLatestOwner]);
            s
        },
    },
    Case {
        name: "store-restart",
        asks: &[Write("A")],
        title: "A store that loses its highest generation on restart",
        intro: "A writes, then freezes past its lease. B takes over and writes. The store restarts while A is still frozen, and then A wakes and writes under its old generation.",
        variants: &[
            (
                "fenced",
                "The store keeps its highest generation with the data, in the same transaction.",
                "So it still knows generation 2 after the restart, and A's write is refused.",
            ),
            (
                "broken",
                "The store keeps its highest generation in memory, apart from the data.",
                "The restart erases it, so A's stale write now looks fine and replaces B's value. The checker flags a stale write accepted, a write outside its lease, and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            s.stores[0].persist_highest = v != "broken";
            s.workers = vec![
                worker("A", 0, vec![acquire("ledger"), write("ledger", "A: first").step(), pause(20, PauseReason::Rescheduled), write("ledger", "A: stale").step()]),
                worker("B", 2, vec![acquire("ledger"), write("ledger", "B: current").step()]),
            ];
            s.faults = vec![FaultSpec { at: 15, fault: Fault::RestartStore { store: "db".into() } }];
            expect(&mut s, v == "broken", STALE_OVERWRITE);
            s
        },
    },
    Case {
        name: "forged-token",
        asks: &[Write("A")],
        title: "A forged high token fences everyone out",
        intro: "A holds the lease with generation 1 and writes. M never held the lease, but sends a write with a made-up token, 1000. Then A writes again.",
        variants: &[
            (
                "authenticated",
                "Each token carries a proof from the authority, and the store verifies it.",
                "M's forged token fails the check and is refused, and A's next write lands.",
            ),
            (
                "unauthenticated",
                "The store accepts any number as a token.",
                "M's write lands and raises the fence to 1000, so A, the real owner, is refused from then on. The checker flags a write with a token the authority never issued, a write outside any lease, and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            s.authority.authenticated = v == "authenticated";
            let mut forged = write("ledger", "M: hijacked");
            forged.forge = Some(1000);
            s.workers = vec![
                worker("A", 0, vec![acquire("ledger"), write("ledger", "A: first").step(), compute(6), write("ledger", "A: update").step()]),
                worker("M", 3, vec![forged.step()]),
            ];
            expect(&mut s, v == "unauthenticated", &[WriteOutsideLease, FinalValueNotFromLatestOwner, StaleWriteAccepted, TokenNeverIssued]);
            s
        },
    },
    Case {
        name: "network-delay",
        asks: &[Write("A")],
        title: "A slow network delivers old work late",
        intro: "A sends its write while it still holds the lease, but the network holds the message for 15 ticks. Meanwhile the lease passes to B, which writes. Then A's old message arrives. A was honest when it sent it.",
        variants: &[
            (
                "fenced",
                "The store checks each write's generation.",
                "It sees generation 1 after B's 2 and refuses the late message. B's value stays.",
            ),
            (
                "broken",
                "The store checks no tokens.",
                "So the late message replaces B's value. The checker flags a stale write accepted and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            s.stores = vec![store("db", fence(v))];
            s.workers = vec![
                worker("A", 0, vec![acquire("ledger"), write("ledger", "A: sent early, arrives late").step()]),
                worker("B", 2, vec![acquire("ledger"), write("ledger", "B: current").step()]),
            ];
            s.faults = vec![FaultSpec {
                at: 1,
                fault: Fault::DelayMessages { worker: "A".into(), ticks: 15, count: 1 },
            }];
            expect(&mut s, v == "broken", &[StaleWriteAccepted, FinalValueNotFromLatestOwner]);
            s
        },
    },
    Case {
        name: "monitoring",
        asks: &[Write("A")],
        title: "Rejected writes are evidence: count them",
        intro: "A freezes past its lease, and B takes over and writes. A resumes and sends three writes under its old generation. Watch the rejection counts at the end of the run.",
        variants: &[
            (
                "fenced",
                "The store checks each write's generation and counts what it refuses.",
                "All three writes are refused, and the store counts three stale-generation rejections. That means two workers believed they owned the ledger, which is worth an alert.",
            ),
            (
                "broken",
                "The store checks no tokens.",
                "All three writes land and nothing is rejected, so nothing looks wrong while A overwrites B's value. The checker flags each of A's writes as a stale write accepted and a write outside its lease, and the final value as not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            s.stores = vec![store("db", fence(v))];
            s.workers = vec![
                worker(
                    "A",
                    0,
                    vec![
                        acquire("ledger"),
                        pause(15, PauseReason::GcPause),
                        write("ledger", "A: 1").step(),
                        write("ledger", "A: 2").step(),
                        write("ledger", "A: 3").step(),
                    ],
                ),
                worker("B", 2, vec![acquire("ledger"), write("ledger", "B: current").step()]),
            ];
            if v == "broken" {
                s.expect.violations = STALE_OVERWRITE.to_vec();
                s.expect.rejections = Some(Default::default());
            } else {
                s.expect.rejections = Some([(RejectionReason::StaleGeneration, 3)].into());
            }
            s
        },
    },
    Case {
        name: "lease-check-gap",
        asks: &[Write("A")],
        title: "Checking the lease before writing is not enough",
        intro: "A checks its lease right before writing, by its own clock, which runs 4 ticks slow. The check passes, but the lease has already expired and B has written. Even with a correct clock, time passes between the check and the write's arrival.",
        variants: &[
            (
                "fenced",
                "The store checks each write's generation too.",
                "That check closes the gap: A's write arrives with generation 1 after B's 2 and is refused.",
            ),
            (
                "broken",
                "Nothing after A's own check looks at its token.",
                "So the write replaces B's value. The checker flags a stale write accepted, a write outside its lease, and a final value that is not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            s.stores = vec![store("db", fence(v))];
            let mut a = worker(
                "A",
                0,
                vec![acquire("ledger"), compute(11), Step::CheckLease { resource: "ledger".into() }, write("ledger", "A: late").step()],
            );
            a.clock_offset = -4;
            s.workers = vec![a, worker("B", 2, vec![acquire("ledger"), write("ledger", "B: current").step()])];
            expect(&mut s, v == "broken", STALE_OVERWRITE);
            s
        },
    },
    Case {
        name: "queued-mutations",
        asks: &[Write("old")],
        title: "A descheduled scheduler replays its queued mutations",
        intro: "A scheduler reconciling resource metadata is descheduled by a noisy neighbour for longer than its lease. A new scheduler reads the metadata and completes the reconciliation, setting replicas=8. The old one resumes with its open connections and replays two queued mutations.",
        variants: &[
            (
                "fenced",
                "The store checks each write's generation.",
                "Each replayed write carries the old generation and is refused, so the metadata stays at replicas=8.",
            ),
            (
                "broken",
                "The store checks no tokens.",
                "So the queued writes land and roll the metadata back to replicas=5. The checker flags each as a stale write accepted and a write outside its lease, and the final value as not the latest owner's.",
            ),
        ],
        build: |v, mut s| {
            s.resources = vec!["metadata".into()];
            s.stores = vec![store("db", fence(v))];
            s.workers = vec![
                worker(
                    "old",
                    0,
                    vec![
                        acquire("metadata"),
                        write("metadata", "replicas=3").step(),
                        pause(18, PauseReason::Descheduled),
                        write("metadata", "replicas=4 (queued)").step(),
                        write("metadata", "replicas=5 (queued)").step(),
                    ],
                ),
                worker("new", 2, vec![acquire("metadata"), read("metadata"), write("metadata", "replicas=8 (reconciled)").step()]),
            ];
            expect(&mut s, v == "broken", STALE_OVERWRITE);
            s
        },
    },
    Case {
        name: "fencing-unnecessary",
        // Both copies write the same thumbnail, so the final value has nothing to predict; whether
        // the stale copy lands is the question.
        asks: &[Write("A")],
        title: "When fencing is unnecessary",
        intro: "Two workers render the same thumbnail into a cache. A freezes past its lease, B takes over and writes the thumbnail, then A wakes and writes its copy too.",
        variants: &[
            (
                "unfenced",
                "The cache checks no tokens.",
                "Both writes land. The work is duplicated, but both write the same result and the cache holds nothing correctness-critical, so nothing breaks. Fencing would add complexity for no safety gain.",
            ),
        ],
        build: |_, mut s| {
            s.resources = vec!["thumbnail".into()];
            let mut cache = store("cache", Enforcement::Unfenced);
            cache.critical = false;
            s.stores = vec![cache];
            let render = |pause_ticks: u64| {
                let mut steps = vec![acquire("thumbnail"), compute(3)];
                if pause_ticks > 0 {
                    steps.push(pause(pause_ticks, PauseReason::GcPause));
                }
                steps.push(write("thumbnail", "thumbnail of photo-1").step());
                steps
            };
            s.workers = vec![worker("A", 0, render(15)), worker("B", 2, render(0))];
            s
        },
    },
];

/// A large, fully fenced scenario for benchmarks and stress tests: `workers` workers share
/// `resources` resources (at most [`MAX_ITEMS`](crate::format::limits::MAX_ITEMS)), and each
/// worker, `rounds` times over, acquires its resource, reads, writes twice and releases.
pub fn generated(workers: usize, resources: usize, rounds: usize) -> Scenario {
    use crate::format::limits::{MAX_ITEMS, MAX_SCRIPT_STEPS, MAX_TOTAL_STEPS, MAX_WORKERS};
    let workers = workers.clamp(1, MAX_WORKERS);
    let resources = resources.clamp(1, MAX_ITEMS);
    let rounds = rounds.clamp(1, (MAX_SCRIPT_STEPS / 6).min(MAX_TOTAL_STEPS / 6 / workers).max(1));
    let names: Vec<String> = (0..resources).map(|r| format!("r{r}")).collect();
    let mut scenario = scenario("paused-worker", Some("fenced")).expect("built in");
    scenario.name = "generated".into();
    scenario.title = format!("{workers} workers taking turns on {resources} resources");
    scenario.intro =
        "A generated load: every worker repeatedly acquires, reads, writes twice and releases."
            .into();
    scenario.outcome.clear();
    scenario.variant = "fenced".into();
    scenario.resources = names.clone();
    scenario.stores = vec![store("db", Enforcement::FencedIdempotent)];
    scenario.workers = (0..workers)
        .map(|w| {
            let r = &names[w % resources];
            let script = (0..rounds)
                .flat_map(|round| {
                    vec![
                        acquire(r),
                        read(r),
                        write(r, &format!("w{w} round {round}")).step(),
                        compute(1),
                        write(r, &format!("w{w} round {round} done"))
                            .expecting(ExpectedRevision::LastRead)
                            .step(),
                        Step::Release { resource: r.clone() },
                    ]
                })
                .collect();
            worker(&format!("w{w}"), (w / resources) as u64 * 3, script)
        })
        .collect();
    scenario.expect = Expectations::default();
    // A load, not a story: it asks nothing.
    scenario.checkpoints.clear();
    scenario
}

/// The paused-worker story with `workers` workers contending for one lease, each with an
/// optional pause, over a network with one tick of jitter: few steps, many interleavings. The
/// explorer's benchmark and tests use it; `enforcement` picks the store's protection.
pub fn contention(workers: usize, enforcement: Enforcement) -> Scenario {
    let workers = workers.clamp(1, 8);
    let mut s = scenario("paused-worker", Some("fenced")).expect("built in");
    s.name = "contention".into();
    s.variant = format!("{workers}-workers");
    s.title = format!("{workers} workers contend for one lease, any of them may pause");
    s.intro = "Each worker acquires the lease, writes, may pause for longer than the lease, and writes again. The network may add a tick to any message.".into();
    s.outcome.clear();
    s.resources = vec!["ledger".into()];
    s.stores = vec![store("db", enforcement)];
    s.network.jitter = 1;
    s.workers = (0..workers)
        .map(|w| {
            let name = ((b'A' + w as u8) as char).to_string();
            let mut script = vec![
                acquire("ledger"),
                write("ledger", &format!("{name}: first")).step(),
                Step::Pause { ticks: 12, reason: PauseReason::GcPause, optional: true },
                write("ledger", &format!("{name}: after the pause")).step(),
            ];
            script.push(Step::Release { resource: "ledger".into() });
            worker(&name, w as u64 * 2, script)
        })
        .collect();
    s.expect = Expectations::default();
    s.checkpoints = vec![Checkpoint::WriteAccepted { worker: "A".into(), nth: None }];
    s
}

/// The generated load with all `workers` workers starting at once on one resource whose lease
/// lasts a single tick: every tick each waiting worker asks again, so a run takes about `workers`
/// steps per tick and millions of steps in all, and a search has `workers` choices at every
/// step. The memory budget's tests and benchmarks use it.
pub fn stampede(workers: usize) -> Scenario {
    let mut scenario = generated(workers, 1, 1);
    scenario.name = "stampede".into();
    scenario.title =
        format!("{} workers rush for one lease that lasts one tick", scenario.workers.len());
    scenario.authority.ttl = 1;
    for worker in &mut scenario.workers {
        worker.start = 0;
    }
    scenario
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_story_has_a_default_variant() {
        for case in cases() {
            assert!(!case.variants.is_empty(), "{} has no variant", case.name);
            let default = scenario(&case.name, None).unwrap();
            assert_eq!(default.variant, case.variants[0]);
        }
    }

    #[test]
    fn an_unknown_story_lists_the_stories_and_an_unknown_variant_lists_the_variants() {
        let story = scenario("no-such-story", None).unwrap_err();
        let names: Vec<String> = cases().into_iter().map(|c| c.name).collect();
        assert_eq!(
            story,
            UnknownStory::Story { name: "no-such-story".into(), stories: names.clone() }
        );
        assert_eq!(
            story.to_string(),
            format!("there is no story \"no-such-story\"; the stories are {}", names.join(", "))
        );
        assert!(story.to_string().contains("paused-worker, "), "{story}");

        let variant = scenario("paused-worker", Some("sideways")).unwrap_err();
        assert_eq!(
            variant.to_string(),
            "paused-worker has no variant \"sideways\"; it has fenced, broken"
        );
    }
}
