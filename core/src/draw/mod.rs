//! The swimlane diagram of a run, as data: lanes, arrows, marks and spans, each tagged with the
//! steps that create it. A front end draws what is visible at its current step and animates
//! arrows in flight; it never needs to interpret events itself.

mod mermaid;

pub use mermaid::mermaid;

use crate::clock::Tick;
use crate::fence::generation::Generation;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::WriteRejection;
use crate::format::model::PauseReason;
use crate::history::event::{Event, TokenKind};
use crate::history::{Entry, History, StoreSetup};
use crate::invariant::{Place, Violation};
use litemap::LiteMap;
use serde::{Deserialize, Serialize};

/// The whole diagram of a computed timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagram {
    /// Lanes, left to right: the authority, the workers, the store paths, the gateway, the partner.
    pub lanes: Vec<Lane>,
    /// The last tick anything happens at.
    pub end: Tick,
    /// Messages between lanes.
    pub arrows: Vec<Arrow>,
    /// Things that happen at one lane at one moment.
    pub marks: Vec<Mark>,
    /// Periods on a lane: leases, beliefs, pauses.
    pub spans: Vec<Span>,
}

/// One actor's lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lane {
    /// Stable id, e.g. `worker:A` or `store:db/object`.
    pub id: String,
    /// What to print at the top.
    pub label: String,
    /// What kind of actor it is.
    pub kind: LaneKind,
}

/// Kinds of actors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaneKind {
    /// The lease authority.
    Authority,
    /// A worker.
    Worker,
    /// A store's write path.
    Store,
    /// The side-effect gateway.
    Gateway,
    /// The partner behind the gateway.
    Partner,
}

/// A message travelling between lanes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrow {
    /// The engine's message id.
    pub message: u64,
    /// What it carries.
    pub kind: ArrowKind,
    /// Index of the sending lane.
    pub from: usize,
    /// Index of the receiving lane.
    pub to: usize,
    /// When it left.
    pub sent_at: Tick,
    /// When it arrives.
    pub arrives_at: Tick,
    /// The step that sent it.
    pub sent_step: usize,
    /// The step that delivered it, if the timeline got that far.
    pub arrived_step: Option<usize>,
    /// The step at which the network lost it, if it did: it then never arrives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_step: Option<usize>,
    /// The token it carries (the generation badge).
    pub generation: Generation,
    /// Where the token came from.
    pub token: TokenKind,
    /// A short label, e.g. `write "B: total=120"`.
    pub label: String,
}

/// What an arrow carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum ArrowKind {
    /// A lease grant (the token handoff).
    Grant,
    /// A write.
    Write,
    /// A side-effect request.
    Effect,
}

/// Something that happens at one lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// The step it belongs to.
    pub step: usize,
    /// Index of its lane.
    pub lane: usize,
    /// When.
    pub at: Tick,
    /// What.
    pub kind: MarkKind,
    /// A short label, e.g. `stale: 7 < 8`.
    pub label: String,
}

/// Kinds of marks. Each has its own glyph, so colour is never the only cue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    /// The authority granted a lease.
    Granted,
    /// A lease request found the lease held.
    Busy,
    /// A lease expired.
    Expired,
    /// A lease was renewed.
    Renewed,
    /// A lease was released.
    Released,
    /// A store accepted a write.
    Applied,
    /// A store refused a write.
    Rejected,
    /// A store returned a stored result for a retry.
    Replayed,
    /// A check-then-write store's check passed; the write comes later.
    Checked,
    /// The gateway passed an effect on (or the partner received one).
    Delivered,
    /// The gateway dropped an effect.
    Dropped,
    /// Nobody learned whether a write or an effect took effect.
    Unknown,
    /// A worker read a value.
    Read,
    /// A worker checked its lease on its own clock.
    LeaseChecked,
    /// An actor restarted.
    Restarted,
    /// The network slowed down for a worker.
    Slowed,
    /// The network lost one of a worker's messages.
    Lost,
    /// A worker's clock jumped.
    Skewed,
    /// A worker stopped early.
    Stopped,
    /// An invariant broke here.
    Violation,
}

/// A period on a lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// Index of its lane.
    pub lane: usize,
    /// What kind of period.
    pub kind: SpanKind,
    /// When it starts.
    pub from: Tick,
    /// When it ends (for a lease: its validity as the authority sees it).
    pub to: Tick,
    /// The step that starts it.
    pub start_step: usize,
}

/// Kinds of periods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SpanKind {
    /// The authority honours this worker's lease.
    Lease {
        /// Its generation.
        generation: Generation,
    },
    /// The worker believes it holds this generation (it may be wrong).
    Belief {
        /// The generation it believes in.
        generation: Generation,
    },
    /// The worker is frozen.
    Pause {
        /// Why.
        reason: PauseReason,
    },
}

/// When and by which step a message left.
struct Sent {
    message: u64,
    step: usize,
    at: Tick,
    arrives_at: Tick,
}

struct Builder {
    lanes: Vec<Lane>,
    index: LiteMap<String, usize>,
    diagram: Diagram,
    /// Open belief spans per worker lane.
    beliefs: LiteMap<usize, usize>,
    /// Open lease spans per resource.
    leases: LiteMap<String, usize>,
}

impl Builder {
    fn lane(&self, id: &str) -> usize {
        self.index.get(id).copied().unwrap_or(0)
    }

    fn worker(&self, name: &str) -> usize {
        self.lane(&format!("worker:{name}"))
    }

    fn store(&self, store: &str, path: &str) -> usize {
        let with_path = format!("store:{store}/{path}");
        self.index.get(&with_path).copied().unwrap_or_else(|| self.lane(&format!("store:{store}")))
    }

    fn mark(&mut self, step: usize, lane: usize, at: Tick, kind: MarkKind, label: String) {
        self.diagram.marks.push(Mark { step, lane, at, kind, label });
    }

    fn close_belief(&mut self, lane: usize, at: Tick) {
        if let Some(span) = self.beliefs.remove(&lane) {
            self.diagram.spans[span].to = at;
        }
    }

    fn close_lease(&mut self, resource: &str, at: Tick) {
        if let Some(span) = self.leases.remove(resource) {
            let span = &mut self.diagram.spans[span];
            span.to = span.to.min(at);
        }
    }

    fn add(&mut self, step: usize, entry: &Entry) {
        let at = entry.at;
        let authority = self.lane("authority");
        match &entry.event {
            Event::LeaseGranted {
                worker,
                resource,
                generation,
                valid_until,
                arrives_at,
                message,
            } => {
                let w = self.worker(worker);
                self.mark(
                    step,
                    authority,
                    at,
                    MarkKind::Granted,
                    format!("gen {generation} → {worker}"),
                );
                self.diagram.arrows.push(Arrow {
                    message: *message,
                    kind: ArrowKind::Grant,
                    from: authority,
                    to: w,
                    sent_at: at,
                    arrives_at: *arrives_at,
                    sent_step: step,
                    arrived_step: None,
                    lost_step: None,
                    generation: *generation,
                    token: TokenKind::Lease,
                    label: format!("lease gen {generation}"),
                });
                self.close_lease(resource, at);
                self.leases.insert(resource.as_str().to_owned(), self.diagram.spans.len());
                self.diagram.spans.push(Span {
                    lane: w,
                    kind: SpanKind::Lease { generation: *generation },
                    from: at,
                    to: *valid_until,
                    start_step: step,
                });
            }
            Event::LeaseBusy { worker, holder, valid_until, .. } => {
                let label = format!("held by {holder} until {valid_until}");
                self.mark(step, self.worker(worker), at, MarkKind::Busy, label);
            }
            Event::GrantReceived { worker, generation, message, .. } => {
                self.arrived(*message, step);
                let w = self.worker(worker);
                self.close_belief(w, at);
                self.beliefs.insert(w, self.diagram.spans.len());
                let generation = *generation;
                self.diagram.spans.push(Span {
                    lane: w,
                    kind: SpanKind::Belief { generation },
                    from: at,
                    to: self.diagram.end,
                    start_step: step,
                });
            }
            Event::Renewed { worker, resource, valid_until, .. } => {
                if let Some(&span) = self.leases.get(resource.as_str()) {
                    self.diagram.spans[span].to = *valid_until;
                }
                self.mark(
                    step,
                    self.worker(worker),
                    at,
                    MarkKind::Renewed,
                    format!("renewed until {valid_until}"),
                );
            }
            Event::RenewFailed { worker, .. } => {
                let w = self.worker(worker);
                self.close_belief(w, at);
                self.mark(step, w, at, MarkKind::Stopped, "renewal refused".into());
            }
            Event::Released { worker, resource, generation } => {
                let w = self.worker(worker);
                self.close_lease(resource, at);
                self.close_belief(w, at);
                self.mark(step, w, at, MarkKind::Released, format!("released gen {generation}"));
            }
            Event::LeaseExpired { resource, generation, .. } => {
                self.close_lease(resource, at);
                self.mark(
                    step,
                    authority,
                    at,
                    MarkKind::Expired,
                    format!("gen {generation} expired"),
                );
            }
            Event::Paused { worker, ticks, reason, .. } => {
                let w = self.worker(worker);
                self.diagram.spans.push(Span {
                    lane: w,
                    kind: SpanKind::Pause { reason: *reason },
                    from: at,
                    to: at.after(*ticks),
                    start_step: step,
                });
            }
            Event::Resumed { .. }
            | Event::Computing { .. }
            | Event::WorkerFinished { .. }
            | Event::PauseSkipped { .. }
            | Event::PauseIgnored { .. } => {}
            Event::ReadValue { worker, revision, .. } => {
                self.mark(
                    step,
                    self.worker(worker),
                    at,
                    MarkKind::Read,
                    format!("read {revision}"),
                );
            }
            Event::LeaseChecked { worker, local_time, believes_valid, .. } => {
                let verdict = if *believes_valid { "looks valid" } else { "ran out" };
                self.mark(
                    step,
                    self.worker(worker),
                    at,
                    MarkKind::LeaseChecked,
                    format!("own clock t={local_time}: {verdict}"),
                );
            }
            Event::WriteSent {
                worker,
                message,
                store,
                path,
                request,
                token,
                arrives_at,
                retry,
            } => {
                let (from, to) = (self.worker(worker), self.store(store, path));
                let verb = if *retry { "retry" } else { "write" };
                let label = format!("{verb} \"{}\"", request.value);
                let sent = Sent { message: *message, step, at, arrives_at: *arrives_at };
                self.send(ArrowKind::Write, from, to, sent, request.generation, *token, label);
            }
            Event::WriteArrived { message, store, path, outcome, misfenced, .. } => {
                self.arrived(*message, step);
                let lane = self.store(store, path);
                let (kind, label) = match outcome {
                    WriteOutcome::Applied(a) => (
                        MarkKind::Applied,
                        format!("applied gen {} → {}", a.generation, a.revision),
                    ),
                    WriteOutcome::Replayed(s) => {
                        (MarkKind::Replayed, format!("replayed {}", s.applied.revision))
                    }
                    WriteOutcome::Rejected(WriteRejection::Stale { presented, highest })
                        if misfenced.is_some() =>
                    {
                        let source = match misfenced {
                            Some(TokenKind::Forged) => "forged",
                            Some(TokenKind::WallClock) => "clock",
                            _ => "reset",
                        };
                        (
                            MarkKind::Rejected,
                            format!("owner refused: {presented} < {highest} ({source})"),
                        )
                    }
                    WriteOutcome::Rejected(r) => (MarkKind::Rejected, r.short()),
                };
                self.mark(step, lane, at, kind, label);
            }
            Event::CheckPassed { message, store, path, request, writes_at, .. } => {
                self.arrived(*message, step);
                let label =
                    format!("check ok for gen {}, writes at {writes_at}", request.generation);
                self.mark(step, self.store(store, path), at, MarkKind::Checked, label);
            }
            Event::WriteCommitted { store, path, request, .. } => {
                let label = format!("wrote gen {} unchecked", request.generation);
                self.mark(step, self.store(store, path), at, MarkKind::Applied, label);
            }
            Event::WriteUnknown { message, store, path, request, .. } => {
                self.arrived(*message, step);
                let label = format!("gen {}: outcome unknown", request.generation);
                self.mark(step, self.store(store, path), at, MarkKind::Unknown, label);
            }
            Event::EffectUnknown { message, .. } => {
                self.arrived(*message, step);
                let gateway = self.lane("gateway");
                self.mark(step, gateway, at, MarkKind::Unknown, "outcome unknown".into());
            }
            Event::EffectSent { worker, message, request, token, arrives_at, retry, .. } => {
                let (from, to) = (self.worker(worker), self.lane("gateway"));
                let label = format!("{}{}", if *retry { "retry: " } else { "" }, request.effect);
                let sent = Sent { message: *message, step, at, arrives_at: *arrives_at };
                self.send(ArrowKind::Effect, from, to, sent, request.generation, *token, label);
            }
            Event::EffectArrived { message, request, dropped, .. } => {
                self.arrived(*message, step);
                let gateway = self.lane("gateway");
                match dropped {
                    Some(reason) => self.mark(step, gateway, at, MarkKind::Dropped, reason.short()),
                    None => {
                        self.mark(step, gateway, at, MarkKind::Delivered, "passed on".into());
                        let partner = self.lane("partner");
                        self.mark(
                            step,
                            partner,
                            at,
                            MarkKind::Delivered,
                            request.effect.to_string(),
                        );
                    }
                }
            }
            Event::MessagesDelayed { worker, ticks, .. } => {
                self.mark(
                    step,
                    self.worker(worker),
                    at,
                    MarkKind::Slowed,
                    format!("network +{ticks}"),
                );
            }
            Event::MessageLost { worker, message } => {
                // Named by what it carried, as its arrow is: the engine's number is not shown.
                let carried = self.arrow(*message).map(|arrow| {
                    arrow.lost_step = Some(step);
                    arrow.kind
                });
                let label = match carried {
                    Some(ArrowKind::Grant) => "grant lost".to_string(),
                    Some(ArrowKind::Write) => "write lost".to_string(),
                    Some(ArrowKind::Effect) => "effect lost".to_string(),
                    None => format!("message {message} lost"),
                };
                self.mark(step, self.worker(worker), at, MarkKind::Lost, label);
            }
            Event::LossIgnored { .. } => {}
            Event::ClockSkewed { worker, by, .. } => {
                let label = format!("clock {by:+}");
                self.mark(step, self.worker(worker), at, MarkKind::Skewed, label);
            }
            Event::AuthorityRestarted { counter_kept } => {
                let label =
                    if *counter_kept { "restart, counter kept" } else { "restart, counter lost" };
                if !counter_kept {
                    let open: Vec<String> = self.leases.keys().cloned().collect();
                    for resource in open {
                        self.close_lease(&resource, at);
                    }
                }
                self.mark(step, authority, at, MarkKind::Restarted, label.into());
            }
            Event::StoreRestarted { store, highest_kept } => {
                let label =
                    if *highest_kept { "restart, highest kept" } else { "restart, highest lost" };
                let lanes: Vec<usize> = self
                    .lanes
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| {
                        l.id == format!("store:{store}")
                            || l.id.starts_with(&format!("store:{store}/"))
                    })
                    .map(|(i, _)| i)
                    .collect();
                for lane in lanes {
                    self.mark(step, lane, at, MarkKind::Restarted, label.into());
                }
            }
            Event::WorkerStopped { worker, reason } => {
                let w = self.worker(worker);
                self.close_belief(w, at);
                self.mark(step, w, at, MarkKind::Stopped, reason.clone());
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        kind: ArrowKind,
        from: usize,
        to: usize,
        sent: Sent,
        generation: Generation,
        token: TokenKind,
        label: String,
    ) {
        self.diagram.arrows.push(Arrow {
            message: sent.message,
            kind,
            from,
            to,
            sent_at: sent.at,
            arrives_at: sent.arrives_at,
            sent_step: sent.step,
            arrived_step: None,
            lost_step: None,
            generation,
            token,
            label,
        });
    }

    fn arrived(&mut self, message: u64, step: usize) {
        if let Some(arrow) = self.arrow(message) {
            arrow.arrived_step = Some(step);
        }
    }

    /// The arrow that carries `message`, searched from the latest, where arrivals usually are.
    fn arrow(&mut self, message: u64) -> Option<&mut Arrow> {
        self.diagram.arrows.iter_mut().rev().find(|a| a.message == message)
    }
}

/// The id of a store path's lane: `store:NAME` for a store with one path, `store:NAME/PATH`
/// for each path of a store with several.
pub fn store_lane_id(store: &StoreSetup, path: &str) -> String {
    if store.paths.len() <= 1 {
        format!("store:{}", store.name)
    } else {
        format!("store:{}/{path}", store.name)
    }
}

/// The lane an event is drawn on, by the same rules as [`diagram`]; used to place violations.
fn event_lane(builder: &Builder, event: &Event) -> usize {
    match event {
        Event::WriteArrived { store, path, .. }
        | Event::CheckPassed { store, path, .. }
        | Event::WriteCommitted { store, path, .. }
        | Event::WriteUnknown { store, path, .. } => builder.store(store, path),
        Event::EffectArrived { .. } | Event::EffectUnknown { .. } => builder.lane("partner"),
        Event::LeaseGranted { .. }
        | Event::LeaseExpired { .. }
        | Event::AuthorityRestarted { .. } => builder.lane("authority"),
        other => builder.worker(other.actor()),
    }
}

/// Builds the diagram of a history, marking each of `violations` (what the checker found in
/// that history) at the step that broke it. It reads nothing but the history, so a history
/// recorded elsewhere draws the same way as a simulated one.
pub fn diagram(history: &History, violations: &[Violation]) -> Diagram {
    let setup = &history.setup;
    let timeline = &history.entries;
    let mut lanes = vec![Lane {
        id: "authority".into(),
        label: "lease authority".into(),
        kind: LaneKind::Authority,
    }];
    for w in &setup.workers {
        lanes.push(Lane { id: format!("worker:{w}"), label: w.clone(), kind: LaneKind::Worker });
    }
    for s in &setup.stores {
        for path in &s.paths {
            let label = if s.paths.len() <= 1 {
                s.name.clone()
            } else {
                format!("{}/{}", s.name, path.name)
            };
            lanes.push(Lane { id: store_lane_id(s, &path.name), label, kind: LaneKind::Store });
        }
    }
    if let Some(g) = &setup.gateway {
        lanes.push(Lane { id: "gateway".into(), label: "gateway".into(), kind: LaneKind::Gateway });
        lanes.push(Lane {
            id: "partner".into(),
            label: g.partner.clone(),
            kind: LaneKind::Partner,
        });
    }
    let end = timeline.last().map_or(Tick::ZERO, |r| r.at);
    let index = crate::maps::index_by_name(lanes.iter().map(|l| l.id.as_str()));
    let mut builder = Builder {
        lanes: lanes.clone(),
        index,
        diagram: Diagram { lanes, end, arrows: Vec::new(), marks: Vec::new(), spans: Vec::new() },
        beliefs: LiteMap::new(),
        leases: LiteMap::new(),
    };
    for (step, entry) in timeline.iter().enumerate() {
        builder.add(step, entry);
    }
    for v in violations {
        if let Some(record) = timeline.get(v.step.index()) {
            let id = match &v.place {
                Some(Place::Authority) => Some("authority".to_string()),
                Some(Place::Partner) => Some("partner".to_string()),
                Some(Place::Store { store, path, .. }) => {
                    setup.store(store).map(|s| store_lane_id(s, path))
                }
                None => None,
            };
            let lane = match id {
                Some(id) if builder.index.contains_key(&*id) => builder.lane(&id),
                _ => event_lane(&builder, &record.event),
            };
            builder.mark(
                v.step.index(),
                lane,
                record.at,
                MarkKind::Violation,
                v.invariant.to_string(),
            );
        }
    }
    let mut diagram = builder.diagram;
    // Messages still travelling when the timeline stops extend it, so they can be drawn whole.
    diagram.end = diagram.arrows.iter().map(|a| a.arrives_at).fold(end, Tick::max);
    diagram
}
