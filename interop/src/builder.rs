//! Where the readers' operations become a history. Every reader (Jepsen, OpenTelemetry, text
//! logs) says what it saw: a lease acquired, a write invoked and how it ended, a pause. This
//! builder pairs each completion with its invocation and names the source's line and field in
//! its errors; the core's [`HistoryBuilder`] allocates message ids, fills in the fields the
//! simulator would have filled (the store's highest generation before and after a write, the
//! value afterwards, what a paused worker believes) from what it has seen so far, and infers the
//! setup, as it does for the live lab. So every format is judged by the same
//! checker in the same way, and a field the source does give always wins over one the builder
//! would infer.

use crate::error::{ImportError, Loc};
use fencelab_core::format::model::Enforcement;
use fencelab_core::Tick;
use fencelab_core::{
    fence::gateway::DropReason, fence::gateway::EffectRequest, fence::generation::TokenError,
    fence::register::Applied, fence::register::Revision, fence::register::WriteRejection,
    history::event::TokenKind, history::Authority, history::Decisions, history::Entry,
    history::Setup, Event, Generation, History, WriteOutcome, WriteRequest,
};
use fencelab_core::{
    history::builder::Beliefs, history::builder::HistoryBuilder, history::builder::Sent,
    history::builder::WriteAnswer,
};
use fencelab_core::{ResourceId, WorkerId};

/// What kind of operation an invocation starts, for pairing it with its completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    Acquire,
    Renew,
    Release,
    Write,
    Effect,
    /// An operation that only its completion describes (`compute`, `read`, ...).
    Other(String),
}

impl Op {
    pub(crate) fn name(&self) -> &str {
        match self {
            Op::Acquire => "acquire",
            Op::Renew => "renew",
            Op::Release => "release",
            Op::Write => "write",
            Op::Effect => "effect",
            Op::Other(name) => name,
        }
    }
}

/// A lease request, with what the source says about it up front.
#[derive(Debug, Clone, Default)]
pub(crate) struct AcquireCall {
    pub resource: Option<ResourceId>,
    pub generation: Option<Generation>,
    pub ttl: Option<u64>,
    pub valid_until: Option<Tick>,
    pub arrives_at: Option<Tick>,
    pub message: Option<u64>,
    /// The latest moment the grant may have happened, as a source that declares its setup
    /// writes it.
    pub by: Option<Tick>,
}

/// A write as its sender sent it.
#[derive(Debug, Clone)]
pub(crate) struct WriteCall {
    pub request: WriteRequest,
    pub store: String,
    pub path: Option<String>,
    pub token: Option<TokenKind>,
    pub arrives_at: Option<Tick>,
    pub retry: Option<bool>,
    pub message: Option<u64>,
    pub enforcement: Option<Enforcement>,
}

impl WriteCall {
    /// A write of `request` to `store`'s primary path, nothing else known.
    pub(crate) fn new(request: WriteRequest, store: String) -> WriteCall {
        WriteCall {
            request,
            store,
            path: None,
            token: None,
            arrives_at: None,
            retry: None,
            message: None,
            enforcement: None,
        }
    }
}

/// An effect as its sender sent it.
#[derive(Debug, Clone)]
pub(crate) struct EffectCall {
    pub request: EffectRequest,
    pub resource: Option<ResourceId>,
    pub token: Option<TokenKind>,
    pub arrives_at: Option<Tick>,
    pub retry: Option<bool>,
    pub message: Option<u64>,
}

/// An invocation.
#[derive(Debug, Clone)]
pub(crate) enum Call {
    Acquire(AcquireCall),
    Write(WriteCall),
    Effect(EffectCall),
    Plain(Op),
}

/// An invocation waiting for its completion.
#[derive(Debug, Clone)]
pub(crate) struct Open {
    worker: WorkerId,
    op: Op,
    message: Option<u64>,
    at: Tick,
    /// The entry the invocation holds a place for (a grant, a write sent).
    slot: usize,
    call: Call,
}

/// A grant as its completion reports it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Granted {
    pub resource: Option<ResourceId>,
    pub generation: Option<Generation>,
    pub ttl: Option<u64>,
    pub valid_until: Option<Tick>,
    pub arrives_at: Option<Tick>,
    pub message: Option<u64>,
}

/// How a write ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WriteResult {
    Applied,
    /// Refused, with the source's reason (`stale` when it gives none) and the highest
    /// generation it names.
    Rejected {
        error: Option<String>,
        highest: Option<Generation>,
    },
    Unknown,
}

/// A write's completion, with the fields the source gives.
#[derive(Debug, Clone)]
pub(crate) struct WriteDone {
    pub result: WriteResult,
    /// The second half of a check-then-write.
    pub committed: bool,
    pub data: Option<String>,
    pub enforcement: Option<Enforcement>,
    pub outcome: Option<WriteOutcome>,
    pub value_after: Option<Option<String>>,
    pub highest_before: Option<Option<Generation>>,
    pub highest_after: Option<Option<Generation>>,
    pub misfenced: Option<TokenKind>,
}

impl WriteDone {
    /// A completion that says only how the write ended.
    pub(crate) fn of(result: WriteResult) -> WriteDone {
        WriteDone {
            result,
            committed: false,
            data: None,
            enforcement: None,
            outcome: None,
            value_after: None,
            highest_before: None,
            highest_after: None,
            misfenced: None,
        }
    }
}

/// How an effect ended.
#[derive(Debug, Clone)]
pub(crate) struct EffectDone {
    /// `Some(None)`: delivered; `Some(Some(reason))`: dropped; `None`: unknown.
    pub dropped: Option<Option<DropReason>>,
    pub partner: Option<String>,
    pub enforcement: Option<Enforcement>,
}

/// A pause or a resume, with the fields the source gives.
pub(crate) type PauseFields = Beliefs;

/// How far a time stamp may step back from the one above it and still be read: processes that
/// run at once log slightly out of time order (a Jepsen history's `:time`, threads writing one
/// log), and the order of the file is the order of events. Further back is a broken clock or a
/// shuffled file, and is refused.
pub const STEP_BACK_TOLERANCE: Tick = Tick(1_000);

/// The time stamps that stepped back within [`STEP_BACK_TOLERANCE`], each read as the time of
/// the entry above it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepsBack {
    /// How many.
    pub count: usize,
    /// The largest step back, in milliseconds (0 when each was under a millisecond).
    pub largest_ms: u64,
    /// The line of the first.
    pub first_line: usize,
}

/// A history being built from observed operations.
#[derive(Debug)]
pub(crate) struct Builder {
    core: HistoryBuilder,
    /// The source line that filled each of the core's places (a grant's is its completion's).
    lines: Vec<usize>,
    /// The source line being read.
    line: usize,
    open: Vec<Open>,
    stepped_back: StepsBack,
    declared: bool,
    /// How long a lease lasts when its grant or renewal does not say.
    ttl: Option<u64>,
}

impl Builder {
    pub(crate) fn new() -> Builder {
        // A source that does not declare its setup is seen from outside the authority and the
        // stores: by clients, which see when they asked and when they heard back.
        let setup = Setup {
            authority: Authority::Unobserved,
            decisions: Decisions::Windowed,
            ..Setup::default()
        };
        let core = HistoryBuilder::new(setup).first_message(1);
        Builder {
            core,
            lines: Vec::new(),
            line: 0,
            open: Vec::new(),
            stepped_back: StepsBack::default(),
            declared: false,
            ttl: None,
        }
    }

    /// The lease length, in ms, for grants and renewals that do not give one.
    pub(crate) fn with_ttl(mut self, ttl: Option<u64>) -> Builder {
        self.ttl = ttl;
        self
    }

    /// Whether the source declared its setup (so it lists its workers itself).
    pub(crate) fn declared(&self) -> bool {
        self.declared
    }

    /// Takes the setup the source declares. Names the events use that it does not list are
    /// added to it.
    pub(crate) fn declare(&mut self, loc: &Loc, setup: Setup) -> Result<(), ImportError> {
        if !self.core.is_empty() {
            return Err(loc.whole("the setup must come before the first operation"));
        }
        self.core.set_setup(setup);
        self.declared = true;
        Ok(())
    }

    /// Moves the clock to `at` (milliseconds). A time stamp up to [`STEP_BACK_TOLERANCE`] before
    /// the one above it keeps that earlier entry's time and is counted; one further back is
    /// refused.
    pub(crate) fn time(
        &mut self,
        loc: &Loc,
        field: &str,
        at: Tick,
        wall_ns: Option<u64>,
    ) -> Result<(), ImportError> {
        let now = self.core.now();
        if at < now {
            self.step_back(loc, field, now.0 - at.0)?;
        }
        self.core.at(at, wall_ns);
        self.line = loc.line;
        Ok(())
    }

    /// A time stamp `back_ms` before the one above it: counted when within
    /// [`STEP_BACK_TOLERANCE`], refused when further back.
    pub(crate) fn step_back(
        &mut self,
        loc: &Loc,
        field: &str,
        back_ms: u64,
    ) -> Result<(), ImportError> {
        if back_ms > STEP_BACK_TOLERANCE.0 {
            return Err(loc.field(
                field,
                format!(
                    "time runs backwards by {back_ms} ms from the entry above; steps back of up to {} ms are read as the same moment (is the file in time order?)",
                    STEP_BACK_TOLERANCE.0
                ),
            ));
        }
        if self.stepped_back.count == 0 {
            self.stepped_back.first_line = loc.line;
        }
        self.stepped_back.count += 1;
        self.stepped_back.largest_ms = self.stepped_back.largest_ms.max(back_ms);
        Ok(())
    }

    pub(crate) fn now(&self) -> Tick {
        self.core.now()
    }

    fn message(&mut self, given: Option<u64>) -> u64 {
        self.core.message(given)
    }

    /// The places the core added since the last look were filled at the line being read.
    fn sync(&mut self) {
        self.lines.resize(self.core.len(), self.line);
    }

    fn slot(&mut self) -> usize {
        let slot = self.core.reserve();
        self.sync();
        slot
    }

    /// Appends an event at the current time.
    pub(crate) fn push(&mut self, event: Event) {
        self.core.push(event);
        self.sync();
    }

    /// Puts an event in a slot reserved earlier, at time `at`.
    fn fill(&mut self, slot: usize, at: Tick, event: Event) {
        self.core.fill(slot, at, event);
        self.filled(slot);
    }

    /// The event in `slot`, placed at its call's invocation, took effect at some moment up to
    /// now, when the call was answered: a client sees its call, not the moment the authority
    /// acted. A source that declares its setup (as Fencelab writes one) records events as
    /// Fencelab saw them, and gives a window itself (`given`) where there was one.
    ///
    /// A window is kept even within one millisecond, the history's finest time: what else
    /// happened in that millisecond may have come before or after. A release whose answer
    /// nobody learned ([`Tick::UNKNOWN`]) may have happened at any moment from its invocation on.
    fn window(&mut self, slot: usize, given: Option<Tick>) {
        let by =
            if self.declared || given == Some(Tick::UNKNOWN) { given } else { Some(self.now()) };
        if let (Some(entry), Some(by)) = (self.core.entry_mut(slot), by) {
            if by >= entry.at {
                entry.by = Some(by);
            }
        }
    }

    /// A slot reserved earlier was filled at the line being read.
    fn filled(&mut self, slot: usize) {
        if let Some(line) = self.lines.get_mut(slot) {
            *line = self.line;
        }
    }

    /// The worker's newest lease on `resource`, or on its only resource.
    fn held(&self, worker: &str, resource: Option<&str>) -> Option<(ResourceId, Generation)> {
        self.core.held(worker, resource)
    }

    /// Starts an operation; returns the message id it was given, if it has one yet (a write's,
    /// an effect's, a grant's whose generation is known), for the caller to pair its completion.
    pub(crate) fn invoke(
        &mut self,
        loc: &Loc,
        worker: &WorkerId,
        call: Call,
    ) -> Result<Option<u64>, ImportError> {
        let slot = self.slot();
        let at = self.now();
        let (op, message) = match &call {
            Call::Acquire(a) => {
                let ready = (
                    a.resource.clone(),
                    a.generation,
                    a.valid_until.or_else(|| a.ttl.or(self.ttl).map(|t| at.after(t))),
                );
                let mut message = a.message;
                if let (Some(resource), Some(generation), Some(valid_until)) = ready {
                    let id = self.message(a.message);
                    message = Some(id);
                    let arrives_at = a.arrives_at.unwrap_or(at);
                    let event = Event::LeaseGranted {
                        worker: worker.clone(),
                        resource,
                        generation,
                        valid_until,
                        arrives_at,
                        message: id,
                    };
                    self.fill(slot, at, event);
                }
                (Op::Acquire, message)
            }
            Call::Write(w) => {
                // The path's enforcement, when the source gives it, before anything registers
                // the path as fenced.
                let path = w.path.clone().unwrap_or_else(|| "primary".into());
                self.core.path(&w.store, &path, None, w.enforcement);
                let sent = Sent {
                    store: w.store.clone(),
                    path: Some(path),
                    request: w.request.clone(),
                    token: w.token,
                    arrives_at: w.arrives_at,
                    retry: w.retry,
                    message: w.message,
                };
                let id = self.core.fill_sent(slot, worker, sent);
                self.filled(slot);
                (Op::Write, Some(id))
            }
            Call::Effect(e) => {
                let id = self.message(e.message);
                let resource = match &e.resource {
                    Some(r) => r.clone(),
                    None => match (self.held(worker, None), self.core.setup().resources.as_slice())
                    {
                        (Some((r, _)), _) => r,
                        (None, [only]) => ResourceId::new(only.as_str())
                            .map_err(|e| loc.field("resource", e.to_string()))?,
                        _ => {
                            return Err(loc.field(
                                "resource",
                                "an effect needs the resource whose lease backs it: the worker holds no lease and the history has no single resource",
                            ))
                        }
                    },
                };
                let token = e
                    .token
                    .unwrap_or_else(|| self.core.token(worker, &resource, e.request.generation));
                let event = Event::EffectSent {
                    worker: worker.clone(),
                    message: id,
                    request: e.request.clone(),
                    resource,
                    token,
                    arrives_at: e.arrives_at.unwrap_or(at),
                    retry: e.retry.unwrap_or(false),
                };
                self.fill(slot, at, event);
                (Op::Effect, Some(id))
            }
            Call::Plain(op) => (op.clone(), None),
        };
        // Two messages on their way under one id cannot be told apart by their answers.
        if let Some(id) = message {
            if self.open.iter().any(|o| o.message == Some(id)) {
                return Err(
                    loc.field("value.message", format!("message {id} is already on its way"))
                );
            }
        }
        self.open.push(Open { worker: worker.clone(), op, message, at, slot, call });
        Ok(message)
    }

    /// Takes the open invocation a completion answers: the one of the same worker and kind with
    /// the same message when the completion names one, else the oldest.
    pub(crate) fn complete(
        &mut self,
        loc: &Loc,
        field: &str,
        worker: &str,
        op: &Op,
        message: Option<u64>,
    ) -> Result<Open, ImportError> {
        let mine = |o: &Open| o.worker == worker && &o.op == op;
        // A completion that names no message answers an invocation that named none before one
        // that did (a refused acquire, not the grant still on its way). With several such
        // invocations open it could answer any of them: guessing would pin an acknowledgement
        // on the wrong request, so it is refused.
        let found = match message {
            Some(m) => self.open.iter().position(|o| mine(o) && o.message == Some(m)),
            None => {
                let unnamed = self.open.iter().filter(|o| mine(o) && o.message.is_none()).count();
                if unnamed > 1 {
                    return Err(loc.field(
                        field,
                        format!(
                            "{worker} has {unnamed} {}s open, and this completion does not say which it answers (name its :op, or complete each before the next is invoked, as a Jepsen process does)",
                            op.name()
                        ),
                    ));
                }
                self.open
                    .iter()
                    .position(|o| mine(o) && o.message.is_none())
                    .or_else(|| self.open.iter().position(mine))
            }
        };
        match found {
            Some(i) => Ok(self.open.remove(i)),
            None => {
                let which = message.map_or(String::new(), |m| format!(" (message {m})"));
                Err(loc.field(
                    field,
                    format!(
                        "a completion of {worker}'s {}{which} without its invocation",
                        op.name()
                    ),
                ))
            }
        }
    }

    /// Takes the open write or effect of `worker` whose operation id is `operation`.
    pub(crate) fn complete_operation(&mut self, worker: &str, operation: &str) -> Option<Open> {
        let i = self
            .open
            .iter()
            .position(|o| o.worker == worker && o.operation() == Some(operation))?;
        Some(self.open.remove(i))
    }

    /// The open write (or effect) with message `message` of `worker`, left open.
    fn open_write(&self, worker: &str, message: Option<u64>) -> Option<&Open> {
        self.open.iter().find(|o| {
            o.worker == worker && o.op == Op::Write && message.is_none_or(|m| o.message == Some(m))
        })
    }

    /// An acquire's completion: the grant reached the worker.
    pub(crate) fn granted(&mut self, loc: &Loc, open: Open, g: Granted) -> Result<(), ImportError> {
        let call = match &open.call {
            Call::Acquire(a) => a.clone(),
            _ => AcquireCall::default(),
        };
        let worker = open.worker.clone();
        let (resource, generation, message) = match self.core.entry(open.slot) {
            Some(Entry {
                event: Event::LeaseGranted { resource, generation, message, .. },
                ..
            }) => {
                if g.generation.is_some_and(|x| x != *generation) {
                    return Err(loc.field(
                        "value.generation",
                        format!("the grant's generation {generation} was given at the invocation, and this completion says {}", g.generation.map_or(0, |x| x.get())),
                    ));
                }
                (resource.clone(), *generation, *message)
            }
            _ => {
                let resource =
                    g.resource.clone().or(call.resource.clone()).ok_or_else(|| {
                        loc.field("value.resource", "a grant must name its resource")
                    })?;
                let generation = g.generation.or(call.generation).ok_or_else(|| {
                    loc.field("value.generation", "a grant must carry its generation")
                })?;
                let ttl = g.ttl.or(call.ttl).or(self.ttl);
                // A lease whose length nobody gave lasts until released, at most.
                let valid_until = match (g.valid_until.or(call.valid_until), ttl) {
                    (Some(t), _) => t,
                    (None, Some(ttl)) => open.at.after(ttl),
                    (None, None) => Tick::UNKNOWN,
                };
                let message = self.message(g.message.or(call.message));
                let arrives_at = g.arrives_at.or(call.arrives_at).unwrap_or(self.now());
                let event = Event::LeaseGranted {
                    worker: worker.clone(),
                    resource: resource.clone(),
                    generation,
                    valid_until,
                    arrives_at,
                    message,
                };
                self.fill(open.slot, open.at, event);
                (resource, generation, message)
            }
        };
        self.window(open.slot, call.by);
        self.push(Event::GrantReceived { worker, resource, generation, message });
        Ok(())
    }

    /// An acquire refused because someone else holds the lease.
    pub(crate) fn busy(
        &mut self,
        loc: &Loc,
        open: Open,
        resource: Option<ResourceId>,
        holder: Option<WorkerId>,
        valid_until: Option<Tick>,
    ) -> Result<(), ImportError> {
        let call_resource = match &open.call {
            Call::Acquire(a) => a.resource.clone(),
            _ => None,
        };
        let resource = resource.or(call_resource).ok_or_else(|| {
            loc.field("value.resource", "a refused acquire must name its resource")
        })?;
        self.core.clear(open.slot);
        self.core.busy(&open.worker, &resource, holder, valid_until);
        self.sync();
        Ok(())
    }

    /// A renewal's completion.
    pub(crate) fn renewed(
        &mut self,
        loc: &Loc,
        open: Open,
        resource: Option<ResourceId>,
        generation: Option<Generation>,
        ttl: Option<u64>,
        valid_until: Option<Tick>,
    ) -> Result<(), ImportError> {
        let held = self.held(&open.worker, resource.as_deref());
        let resource = resource.or(held.as_ref().map(|h| h.0.clone())).ok_or_else(|| {
            loc.field(
                "value.resource",
                format!("{} renewed a lease it does not hold; name the resource", open.worker),
            )
        })?;
        let generation = generation.or(held.map(|h| h.1)).ok_or_else(|| {
            loc.field(
                "value.generation",
                format!("{} renewed a lease it does not hold; give the generation", open.worker),
            )
        })?;
        let valid_until = match (valid_until, ttl.or(self.ttl)) {
            (Some(t), _) => t,
            (None, Some(ttl)) => open.at.after(ttl),
            (None, None) => Tick::UNKNOWN,
        };
        self.push(Event::Renewed { worker: open.worker, resource, generation, valid_until });
        Ok(())
    }

    /// A renewal refused: the worker learns it lost the lease.
    pub(crate) fn renew_failed(
        &mut self,
        loc: &Loc,
        open: Open,
        resource: Option<ResourceId>,
        reason: Option<String>,
    ) -> Result<(), ImportError> {
        let held = self.held(&open.worker, resource.as_deref());
        let resource = resource.or(held.map(|h| h.0)).ok_or_else(|| {
            loc.field("value.resource", "a failed renewal must name its resource")
        })?;
        let reason = reason.unwrap_or_else(|| "the renewal failed".into());
        self.push(Event::RenewFailed { worker: open.worker, resource, reason });
        Ok(())
    }

    /// A release's completion.
    pub(crate) fn released(
        &mut self,
        loc: &Loc,
        open: Open,
        resource: Option<ResourceId>,
        generation: Option<Generation>,
        by: Option<Tick>,
    ) -> Result<(), ImportError> {
        let held = self.held(&open.worker, resource.as_deref());
        // A release that timed out from a worker that holds nothing changes nothing.
        if by == Some(Tick::UNKNOWN) && held.is_none() && generation.is_none() {
            return Ok(());
        }
        let resource = resource
            .or(held.as_ref().map(|h| h.0.clone()))
            .ok_or_else(|| loc.field("value.resource", "a release must name its resource"))?;
        let generation = generation.or(held.map(|h| h.1)).ok_or_else(|| {
            loc.field(
                "value.generation",
                format!(
                    "{} released {resource}, which it does not hold; give the generation",
                    open.worker
                ),
            )
        })?;
        self.fill(
            open.slot,
            open.at,
            Event::Released { worker: open.worker, resource, generation },
        );
        self.window(open.slot, by);
        Ok(())
    }

    /// The store's check of a check-then-write passed; the write stays open until it commits.
    pub(crate) fn check_passed(
        &mut self,
        loc: &Loc,
        worker: &WorkerId,
        message: Option<u64>,
        data: Option<String>,
        highest_seen: Option<Option<Generation>>,
        writes_at: Option<Tick>,
    ) -> Result<(), ImportError> {
        let Some(open) = self.open_write(worker, message) else {
            return Err(
                loc.field("value.message", format!("{worker} has no write on its way to check"))
            );
        };
        let (Some(id), Call::Write(w)) = (open.message, &open.call) else {
            return Err(loc.field("value.message", "not a write"));
        };
        let w = w.clone();
        let path = w.path.clone().unwrap_or_else(|| "primary".into());
        let data = data.unwrap_or_else(|| self.core.data(&w.store, &path));
        let highest = self.core.stored(&w.store, &data, w.request.resource.as_str()).highest;
        self.push(Event::CheckPassed {
            worker: worker.clone(),
            message: id,
            store: w.store,
            path,
            data,
            request: w.request,
            highest_seen: highest_seen.unwrap_or(highest),
            writes_at: writes_at.unwrap_or(self.core.now()),
        });
        Ok(())
    }

    /// A write's completion: applied, refused or unknown.
    pub(crate) fn write_done(
        &mut self,
        loc: &Loc,
        open: Open,
        done: WriteDone,
    ) -> Result<(), ImportError> {
        let (Some(message), Call::Write(w)) = (open.message, &open.call) else {
            return Err(loc.whole("a write completion answers something that is not a write"));
        };
        let w = w.clone();
        let now = self.core.now();
        // A write's arrival is known only now.
        if w.arrives_at.is_none() {
            if let Some(Entry { event: Event::WriteSent { arrives_at, .. }, .. }) =
                self.core.entry_mut(open.slot)
            {
                *arrives_at = now;
            }
        }
        let path = w.path.clone().unwrap_or_else(|| "primary".into());
        let data = done.data.clone().unwrap_or_else(|| self.core.data(&w.store, &path));
        let request = w.request;
        let generation = request.generation;
        let cell = self.core.stored(&w.store, &data, request.resource.as_str());
        let before = cell.highest;
        let enforcement =
            done.enforcement.unwrap_or_else(|| self.core.enforcement(&w.store, &path));
        let worker = open.worker;
        let store = w.store;
        if done.result == WriteResult::Unknown {
            self.push(Event::WriteUnknown { worker, message, store, path, data, request });
            return Ok(());
        }
        let outcome = match (&done.outcome, &done.result) {
            (Some(outcome), result) => {
                let fits = match result {
                    WriteResult::Applied => !matches!(outcome, WriteOutcome::Rejected(_)),
                    _ => matches!(outcome, WriteOutcome::Rejected(_)),
                };
                if !fits {
                    return Err(loc.field("value.outcome", "the outcome contradicts the operation's type (ok is applied, fail is rejected)"));
                }
                outcome.clone()
            }
            (None, WriteResult::Rejected { error, highest }) => WriteOutcome::Rejected(
                self.rejection(loc, error.as_deref(), *highest, before, &request, cell.revision)?,
            ),
            // Applied (unknown outcomes were handled above).
            (None, _) => WriteOutcome::Applied(Applied {
                generation,
                revision: Revision(cell.revision.saturating_add(1)),
            }),
        };
        if done.committed {
            self.push(Event::WriteCommitted {
                worker,
                message,
                store,
                path,
                data,
                request,
                outcome,
                highest_before: done.highest_before.unwrap_or(before),
            });
            return Ok(());
        }
        let answer = WriteAnswer {
            outcome: Some(outcome),
            data: Some(data),
            enforcement: Some(enforcement),
            value_after: done.value_after,
            highest_before: done.highest_before,
            highest_after: done.highest_after,
            misfenced: done.misfenced,
        };
        self.core.arrived(&worker, message, &store, &path, request, answer);
        self.sync();
        Ok(())
    }

    /// Why a store refused a write, from the source's reason.
    fn rejection(
        &self,
        loc: &Loc,
        error: Option<&str>,
        highest: Option<Generation>,
        before: Option<Generation>,
        request: &WriteRequest,
        revision: u64,
    ) -> Result<WriteRejection, ImportError> {
        let presented = request.generation;
        Ok(match error.unwrap_or("stale") {
            "stale" | "stale-owner" | "stale_owner" | "fenced" | "superseded" => WriteRejection::Stale {
                presented,
                highest: highest.or(before.filter(|b| *b > presented)).unwrap_or(presented),
            },
            "forged" | "invalid-token" | "invalid_token" => {
                WriteRejection::InvalidToken(TokenError::Forged { generation: presented })
            }
            "revision-conflict" | "revision_conflict" => WriteRejection::RevisionConflict {
                expected: request.expected_revision.unwrap_or_default(),
                actual: Revision(revision),
            },
            other => {
                return Err(loc.field(
                    "error",
                    format!("unknown reason {other:?} for a refused write (stale, forged, invalid-token or revision-conflict)"),
                ))
            }
        })
    }

    /// An effect's completion.
    pub(crate) fn effect_done(
        &mut self,
        loc: &Loc,
        open: Open,
        done: EffectDone,
    ) -> Result<(), ImportError> {
        let (Some(message), Call::Effect(e)) = (open.message, &open.call) else {
            return Err(loc.whole("an effect completion answers something that is not an effect"));
        };
        let e = e.clone();
        let now = self.core.now();
        if e.arrives_at.is_none() {
            if let Some(Entry { event: Event::EffectSent { arrives_at, .. }, .. }) =
                self.core.entry_mut(open.slot)
            {
                *arrives_at = now;
            }
        }
        let gateway = self.core.setup().gateway.clone();
        let partner = done
            .partner
            .or(gateway.as_ref().map(|g| g.partner.clone()))
            .unwrap_or_else(|| "partner".into());
        let worker = open.worker;
        let request = e.request;
        let Some(dropped) = done.dropped else {
            self.push(Event::EffectUnknown { worker, message, partner, request });
            return Ok(());
        };
        let enforcement =
            done.enforcement.or(gateway.map(|g| g.enforcement)).unwrap_or(Enforcement::Fenced);
        self.push(Event::EffectArrived { worker, message, partner, request, enforcement, dropped });
        Ok(())
    }

    /// A worker froze.
    pub(crate) fn pause(&mut self, worker: &WorkerId, f: PauseFields) {
        self.core.paused(worker, f);
        self.sync();
    }

    /// A worker woke up.
    pub(crate) fn resume(&mut self, worker: &WorkerId, f: PauseFields) {
        self.core.resumed(worker, f);
        self.sync();
    }

    /// The history: every event in order, and how many calls never completed. In a source that
    /// declares its setup (a file Fencelab wrote), an invocation never completed stays as it
    /// is: a write sent stays on its way. Elsewhere the run ended without its answer, as when a
    /// client crashed: a write, an effect or a release is read as one that timed out, which may
    /// have happened; an acquire or a renewal whose answer never came adds nothing.
    ///
    /// A history that does not hold together (a completion that names a path's data other than
    /// the setup's, say) is refused at the source line of the entry that breaks it: what a
    /// reader returns, the checker can judge.
    pub(crate) fn finish(mut self) -> Result<(History, Vec<usize>, StepsBack, usize), ImportError> {
        let unfinished = if self.declared { 0 } else { self.open.len() };
        if !self.declared {
            let loc = Loc::line(self.line);
            for open in std::mem::take(&mut self.open) {
                match open.call {
                    Call::Write(_) => {
                        self.write_done(&loc, open, WriteDone::of(WriteResult::Unknown))?
                    }
                    Call::Effect(_) => {
                        let done = EffectDone { dropped: None, partner: None, enforcement: None };
                        self.effect_done(&loc, open, done)?
                    }
                    Call::Plain(Op::Release) => {
                        self.released(&loc, open, None, None, Some(Tick::UNKNOWN))?
                    }
                    _ => {}
                }
            }
        }
        let lines = self.lines;
        let (history, places) = self.core.finish_with_places();
        let lines: Vec<usize> =
            places.into_iter().map(|p| lines.get(p).copied().unwrap_or_default()).collect();
        if let Err(e) = history.validate() {
            let source = e.line.checked_sub(2).and_then(|step| lines.get(step)).copied();
            return Err(Loc::line(source.unwrap_or_default()).whole(e.problem));
        }
        Ok((history, lines, self.stepped_back, unfinished))
    }
}

impl Open {
    /// The operation id of an open write or effect.
    pub(crate) fn operation(&self) -> Option<&str> {
        match &self.call {
            Call::Write(w) => Some(w.request.operation.as_str()),
            Call::Effect(e) => Some(e.request.operation.as_str()),
            _ => None,
        }
    }

    /// What a write or effect presented, for checking a completion that repeats it: its
    /// generation and, for a write, its value.
    pub(crate) fn presented(&self) -> Option<(Generation, Option<&str>)> {
        match &self.call {
            Call::Write(w) => Some((w.request.generation, Some(w.request.value.as_str()))),
            Call::Effect(e) => Some((e.request.generation, None)),
            _ => None,
        }
    }

    /// The generation an open effect presented.
    pub(crate) fn effect_generation(&self) -> Option<Generation> {
        match &self.call {
            Call::Effect(e) => Some(e.request.generation),
            _ => None,
        }
    }
}
