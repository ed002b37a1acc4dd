//! The built-in stories: every case from the source material, most in a fenced and a broken
//! variant, ready to play, embed or check.

use crate::gateway::Effect;
use crate::idempotency::Retention;
use crate::register::{RejectionReason, SameGenerationPolicy};
use crate::scenario::invariant::InvariantKind::{self, *};
use crate::scenario::model::*;
use serde::{Deserialize, Serialize};

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
    intro: &'static str,
    variants: &'static [&'static str],
    build: fn(&str, Scenario) -> Scenario,
}

/// Every built-in case, in teaching order.
pub fn cases() -> Vec<CaseInfo> {
    CASES
        .iter()
        .map(|c| CaseInfo {
            name: c.name.into(),
            title: c.title.into(),
            variants: c.variants.iter().map(|v| v.to_string()).collect(),
        })
        .collect()
}

/// One built-in scenario by case name and variant (`None` for the default variant).
pub fn scenario(name: &str, variant: Option<&str>) -> Option<Scenario> {
    let case = CASES.iter().find(|c| c.name == name)?;
    let variant = variant.unwrap_or(case.variants[0]);
    case.variants.contains(&variant).then(|| {
        let base = Scenario {
            name: case.name.into(),
            variant: variant.into(),
            title: case.title.into(),
            intro: case.intro.into(),
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
            expect: Expectations::default(),
            schedule: Vec::new(),
        };
        (case.build)(variant, base)
    })
}

/// Every built-in scenario, every variant.
pub fn all() -> Vec<Scenario> {
    CASES.iter().flat_map(|c| c.variants.iter().filter_map(|v| scenario(c.name, Some(v)))).collect()
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
        title: "A paused worker wakes up after its lease expired",
        intro: "Worker A holds the lease and is computing account totals when a stop-the-world GC pause freezes it for longer than the lease lasts. The authority hands the lease to B, which writes fresh totals. Then A wakes up, still sure it owns the lease, and writes totals computed from old inputs. Watch what the store does with that late write.",
        variants: &["fenced", "broken"],
        build: |v, s| paused_story(v, s, 10, 15),
    },
    Case {
        name: "longer-lease",
        title: "A longer lease does not fix it",
        intro: "The same story with a lease three times longer. A longer lease makes the race rarer, not impossible: a pause only has to outlast it. Only the check at the store closes the gap.",
        variants: &["fenced", "broken"],
        build: |v, s| paused_story(v, s, 30, 40),
    },
    Case {
        name: "same-owner-updates",
        title: "One owner, several writes: same generation, strict policy and expected revisions",
        intro: "A single owner sends a sequence of updates under one generation, and the network delivers the first one last. Allowing equal generations lets the owner write several times, but does not order or de-duplicate those writes. A strictly-newer policy refuses the owner's own follow-up writes. Expected revisions keep the sequence in order.",
        variants: &["expected-revision", "allow-same", "strict"],
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
        title: "The limit: a stale write that arrives first is accepted",
        intro: "A fence rejects generations it knows to be superseded, nothing more. Here stale A's write reaches the store before new owner B has written anything, so the store has no reason to refuse it. Once B writes, A is fenced out. Fencing protects the order of generations; it does not prove every write happened during a valid lease.",
        variants: &["fenced"],
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
        title: "Check-then-write races; a conditional write does not",
        intro: "The broken store reads the highest generation, then writes in a separate step. A and B's writes arrive together: both checks pass, B's write lands, then A's write lands on top of it. The atomic store compares and writes in one step, so A is refused. A single-threaded test never sees this; the schedule of this run makes the interleaving explicit.",
        variants: &["atomic", "check-then-write"],
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
        title: "Retries: operation ids return the stored result",
        intro: "A's first attempt is slow, so A retries the same operation. Both copies arrive. With operation ids the store recognises the second copy and returns the stored result; without them the debit happens twice, even though every copy carries a valid generation.",
        variants: &["fenced", "broken"],
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
        title: "A newer owner's retry still fences the old owner out",
        intro: "A runs job-1 and then freezes. B takes over and, not knowing whether job-1 finished, sends it again under generation 2. The store recognises the operation and returns the stored result, but it also remembers that generation 2 has shown up. When A wakes and sends new work under generation 1, it is refused: a replayed request still raises the fence.",
        variants: &["fenced", "broken"],
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
        title: "A retry after the retention window",
        intro: "The store remembers operation ids for 5 ticks only. A's retry comes much later, after the id was forgotten, so the store treats it as new. With an expected revision the late retry fails harmlessly: the first attempt already moved the revision on. Without one it applies a second time.",
        variants: &["expected-revision", "unconditional"],
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
        title: "Side effects: a gateway in front of the payment provider",
        intro: "Capturing a payment cannot be rolled back. A is paused before capturing; B takes over and captures. When A resumes, it sends its own capture of the same order. The gateway remembers the highest generation per order and drops A's late request before the provider is called.",
        variants: &["fenced", "broken"],
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
        title: "A newer owner's duplicate capture still fences the old owner out",
        intro: "A captures the payment for order 7 and freezes. B takes over and, unsure whether the capture went through, sends the same capture again under generation 2. The gateway drops it as a duplicate, and remembers generation 2 for the order. When A wakes and sends the receipt under generation 1, the gateway drops it too: a dropped duplicate still raises the fence.",
        variants: &["fenced", "broken"],
        build: |v, mut s| {
            s.resources = vec!["order-7".into()];
            s.gateway = Some(GatewaySpec { partner: "payments".into(), enforcement: fence(v), policy: SameGenerationPolicy::AllowSame });
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
        title: "Side effects: emails and webhooks from a stale worker",
        intro: "An email cannot be unsent and a partner acts on a webhook at once. B has taken over the shipment workflow and notified the customer and the partner. A stale A resumes and sends its own notifications. Only a token check in the gateway stops them.",
        variants: &["fenced", "broken"],
        build: |v, mut s| {
            s.resources = vec!["shipment-7".into()];
            s.gateway = Some(GatewaySpec { partner: "mail+partner".into(), enforcement: fence(v), policy: SameGenerationPolicy::AllowSame });
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
        title: "The forgotten write path: metadata fenced, object not",
        intro: "The report's metadata row checks tokens, but the object body is written through a second path that does not. Stale A is refused on the metadata and succeeds on the object, leaving a new row pointing at an old body. Every write path needs the fence.",
        variants: &["fenced", "broken"],
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
        title: "A second path into the same ledger needs the same fence",
        intro: "The ledger is written by the service's main path and by an admin endpoint. B, the new owner, writes through the main path. Stale A then writes through the admin endpoint. Both paths reach the same rows, so they share one fencing record: when the admin path checks tokens too, A is refused; when it does not, A's old value replaces B's.",
        variants: &["fenced", "broken"],
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
        title: "Wall-clock timestamps are not fencing tokens",
        intro: "Here workers use their own clock readings as tokens, and A's clock runs 30 ticks fast. New owner B's honest timestamp looks older than A's, so B is refused, and stale A's later write is accepted. Only a counter the authority increases with every grant orders owners.",
        variants: &["fenced", "broken"],
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
            expect(&mut s, v == "broken", &[StaleWriteAccepted, FinalValueNotFromLatestOwner, WriteOutsideLease]);
            s
        },
    },
    Case {
        name: "authority-restart",
        title: "An authority that forgets its counter on restart",
        intro: "A and B each held the lease in turn and wrote. Then the authority restarts. If its counter lived only in memory it starts again at generation 1: the next owner, C, gets a generation the store already considers stale, and is locked out. The counter must be durable.",
        variants: &["fenced", "broken"],
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
        title: "A store that loses its highest generation on restart",
        intro: "The store kept its highest accepted generation in memory, apart from the data. It restarts and forgets it, so the next write from stale A looks fine. The record must be persisted with the protected state, in the same transaction.",
        variants: &["fenced", "broken"],
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
        title: "A forged high token fences everyone out",
        intro: "M never held the lease but sends a write with token 1000. If stores accept any number, that write goes through and the real owner's generation now looks stale forever. When tokens carry a proof from the authority that the store verifies, the forged token is refused.",
        variants: &["authenticated", "unauthenticated"],
        build: |v, mut s| {
            s.authority.authenticated = v == "authenticated";
            let mut forged = write("ledger", "M: hijacked");
            forged.forge = Some(1000);
            s.workers = vec![
                worker("A", 0, vec![acquire("ledger"), write("ledger", "A: first").step(), compute(6), write("ledger", "A: update").step()]),
                worker("M", 3, vec![forged.step()]),
            ];
            expect(&mut s, v == "unauthenticated", &[WriteOutsideLease, FinalValueNotFromLatestOwner, StaleWriteAccepted]);
            s
        },
    },
    Case {
        name: "network-delay",
        title: "A slow network delivers old work late",
        intro: "A sends its write while it still holds the lease, but the network holds the message for 15 ticks. Meanwhile the lease passes to B, which writes. The old message then arrives. A was honest when it sent; the store still must refuse it.",
        variants: &["fenced", "broken"],
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
        title: "Rejected writes are evidence: count them",
        intro: "A resumes after a long pause and tries three writes. With fencing, all three are refused and the rejection counter shows stale_generation = 3: two workers believed they owned the ledger, which is worth an alert. Without fencing nothing is rejected and nothing looks wrong, while the data is corrupted.",
        variants: &["fenced", "broken"],
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
        title: "Checking the lease before writing is not enough",
        intro: "A checks its lease right before writing, by its own clock, which runs 4 ticks slow. The check passes, but the lease has already expired and B has written. Even with a correct clock, time passes between the check and the write's arrival. Only the store's check closes that gap.",
        variants: &["fenced", "broken"],
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
        title: "A descheduled scheduler replays its queued mutations",
        intro: "A scheduler reconciling resource metadata is descheduled by a noisy neighbour for longer than its lease. A new scheduler completes the reconciliation. The old one resumes with its open connections and queued mutations and replays them, rolling the metadata back unless each write is fenced.",
        variants: &["fenced", "broken"],
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
        title: "When fencing is unnecessary",
        intro: "Two workers both render the same thumbnail into a cache after a lease handoff. The work is duplicated, but the cache holds nothing correctness-critical and both write the same result, so nothing breaks. Fencing would add complexity for no safety gain.",
        variants: &["unfenced"],
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
/// `resources` resources (at most [`MAX_ITEMS`](crate::scenario::validate::MAX_ITEMS)), and each
/// worker, `rounds` times over, acquires its resource, reads, writes twice and releases.
pub fn generated(workers: usize, resources: usize, rounds: usize) -> Scenario {
    use crate::scenario::validate::{MAX_ITEMS, MAX_SCRIPT_STEPS, MAX_TOTAL_STEPS, MAX_WORKERS};
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
