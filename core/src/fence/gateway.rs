//! The side-effect gateway: the fence in front of calls that cannot be undone.

use crate::clock::Tick;
use crate::fence::generation::Generation;
use crate::fence::register::{
    stale_message, stale_short, Fence, RejectionReason, SameGenerationPolicy,
};
use crate::ids::{OperationId, WorkflowKey};
use crate::memory::{btree_nodes, buffer, HeapSize};
use litemap::LiteMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// An irreversible call to a partner outside the system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Effect {
    /// Capture a payment; money cannot be un-captured by a rollback.
    CapturePayment {
        /// The amount in the smallest currency unit.
        amount_cents: u64,
    },
    /// Send an email; it cannot be unsent.
    SendEmail {
        /// The recipient.
        to: String,
        /// The subject line.
        subject: String,
    },
    /// Call a partner's webhook; the partner acts on it at once.
    CallWebhook {
        /// The endpoint, as a label (nothing is ever called).
        endpoint: String,
        /// The payload.
        payload: String,
    },
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Effect::CapturePayment { amount_cents } => {
                write!(f, "capture payment of {}.{:02}", amount_cents / 100, amount_cents % 100)
            }
            Effect::SendEmail { to, subject } => write!(f, "send email \"{subject}\" to {to}"),
            Effect::CallWebhook { endpoint, .. } => write!(f, "call webhook {endpoint}"),
        }
    }
}

/// A worker's request to perform an effect, carrying the same separate fields as a write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(deny_unknown_fields)]
pub struct EffectRequest {
    /// The business workflow the effect belongs to; effects are ordered per workflow.
    pub workflow: WorkflowKey,
    /// The requester's fencing token.
    pub generation: Generation,
    /// The logical operation; one operation is delivered at most once.
    pub operation: OperationId,
    /// What to do.
    pub effect: Effect,
}

/// An effect the gateway let through. The gateway only decides; the driver makes the call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct Delivery {
    /// The request that was delivered.
    pub request: EffectRequest,
    /// When.
    pub at: Tick,
}

/// Why the gateway dropped an effect before it reached the partner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DropReason {
    /// A newer generation has been presented for this workflow (or, under the strict policy, this
    /// generation has already delivered an effect).
    #[error("{} for this workflow", stale_message(*.presented, *.highest))]
    Stale {
        /// The generation presented.
        presented: Generation,
        /// The highest generation accepted for the workflow.
        highest: Generation,
    },
    /// The token is not one the authority issued (a forged token at a verifying gateway).
    #[error("invalid token: {error}")]
    InvalidToken {
        /// What is wrong with it.
        #[source]
        error: crate::fence::generation::TokenError,
    },
    /// This operation was delivered already for this workflow; delivering it again would repeat
    /// the effect.
    #[error("duplicate: operation {operation} was delivered at {delivered_at}")]
    Duplicate {
        /// The operation.
        operation: OperationId,
        /// When it was delivered.
        delivered_at: Tick,
    },
}

impl DropReason {
    /// A few words for a diagram label, e.g. `stale: 1 < 2`.
    pub fn short(&self) -> String {
        match self {
            DropReason::Stale { presented, highest } => stale_short(*presented, *highest),
            DropReason::InvalidToken { .. } => "invalid token".into(),
            DropReason::Duplicate { .. } => "duplicate".into(),
        }
    }

    /// The reason without details, for counting.
    pub fn reason(&self) -> RejectionReason {
        match self {
            DropReason::Stale { .. } => RejectionReason::StaleGeneration,
            DropReason::Duplicate { .. } => RejectionReason::DuplicateEffect,
            DropReason::InvalidToken { .. } => RejectionReason::InvalidToken,
        }
    }
}

/// What the gateway decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum GatewayOutcome {
    /// Let through: the driver should now make the call.
    Delivered(Delivery),
    /// Dropped before the partner was called.
    Dropped(DropReason),
}

/// Keeps a fence per workflow and drops stale or repeated effects before the irreversible call.
/// Same-generation effects (one owner's several steps) are allowed by default.
///
/// Checks run in this order: the generation against the workflow's fence (a stale effect is
/// dropped and changes nothing); then the fence is raised to the presented generation, because
/// the request passed it; then the operation id, scoped to the workflow (a repeat is dropped as a
/// duplicate, but a newer owner's repeat has still fenced older owners out); then delivery.
///
/// ```
/// use fencelab_core::prelude::*;
/// use fencelab_core::fence::gateway::Effect;
///
/// let mut gateway = SideEffectGateway::new(SameGenerationPolicy::AllowSame);
/// let capture = |generation, op: &str| -> Result<EffectRequest, fencelab_core::Error> {
///     Ok(EffectRequest {
///         workflow: "order-7".parse()?,
///         generation: Generation::new(generation)?,
///         operation: op.parse()?,
///         effect: Effect::CapturePayment { amount_cents: 4_200 },
///     })
/// };
/// // The newer owner captures first; the paused old owner's capture is dropped, never made.
/// assert!(matches!(gateway.submit(capture(2, "capture")?, Tick(5)), GatewayOutcome::Delivered(_)));
/// let GatewayOutcome::Dropped(reason) = gateway.submit(capture(1, "capture")?, Tick(6)) else {
///     panic!("the stale capture went through");
/// };
/// assert_eq!(reason.to_string(), "stale owner: generation 1 < highest accepted 2 for this workflow");
/// assert_eq!(gateway.delivered().len(), 1);
/// # Ok::<(), fencelab_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, Hash)]
pub struct SideEffectGateway {
    policy: SameGenerationPolicy,
    #[serde(serialize_with = "crate::maps::as_object")]
    fences: LiteMap<WorkflowKey, Fence>,
    /// Delivered operations per workflow: the same operation id in two workflows is two
    /// operations, as it is for two resources of a store.
    delivered_ops: BTreeMap<WorkflowKey, BTreeMap<OperationId, Tick>>,
    delivered: Vec<Delivery>,
}

impl SideEffectGateway {
    /// An empty gateway with the given same-generation policy.
    pub fn new(policy: SameGenerationPolicy) -> Self {
        SideEffectGateway { policy, ..Default::default() }
    }

    /// Decides on one effect: stale generations and already delivered operations are dropped;
    /// anything else is recorded as delivered and handed back for the driver to perform.
    pub fn submit(&mut self, request: EffectRequest, now: Tick) -> GatewayOutcome {
        let fence = self.fences.get(&request.workflow).copied().unwrap_or_default();
        if let Some(highest) =
            fence.highest.filter(|_| !self.policy.admits(fence, request.generation))
        {
            // Under the strict policy the owner's own repeat presents the generation that has
            // already acted: it is a duplicate, as the register treats it as a retry.
            let delivered = self.delivered_ops.get(&request.workflow);
            let repeat = delivered.and_then(|ops| ops.get(&request.operation)).copied();
            if let Some(delivered_at) = repeat.filter(|_| request.generation == highest) {
                return GatewayOutcome::Dropped(DropReason::Duplicate {
                    operation: request.operation,
                    delivered_at,
                });
            }
            return GatewayOutcome::Dropped(DropReason::Stale {
                presented: request.generation,
                highest,
            });
        }
        let mut fence = fence;
        fence.pass(request.generation);
        self.fences.insert(request.workflow.clone(), fence);
        let ops = self.delivered_ops.entry(request.workflow.clone()).or_default();
        if let Some(&delivered_at) = ops.get(&request.operation) {
            return GatewayOutcome::Dropped(DropReason::Duplicate {
                operation: request.operation,
                delivered_at,
            });
        }
        ops.insert(request.operation.clone(), now);
        fence.act(request.generation);
        self.fences.insert(request.workflow.clone(), fence);
        let delivery = Delivery { request, at: now };
        self.delivered.push(delivery.clone());
        GatewayOutcome::Delivered(delivery)
    }

    /// The highest generation that has passed the fence for `workflow`.
    pub fn highest(&self, workflow: &WorkflowKey) -> Option<Generation> {
        self.fences.get(workflow).and_then(|f| f.highest)
    }

    /// Every effect delivered so far, in order: what the partner has seen.
    pub fn delivered(&self) -> &[Delivery] {
        &self.delivered
    }

    /// The same-generation policy in force.
    pub fn policy(&self) -> SameGenerationPolicy {
        self.policy
    }
}

impl HeapSize for Effect {
    fn heap_bytes(&self) -> usize {
        match self {
            Effect::CapturePayment { .. } => 0,
            Effect::SendEmail { to, subject } => to.heap_bytes() + subject.heap_bytes(),
            Effect::CallWebhook { endpoint, payload } => {
                endpoint.heap_bytes() + payload.heap_bytes()
            }
        }
    }
}

impl HeapSize for EffectRequest {
    fn heap_bytes(&self) -> usize {
        self.workflow.heap_bytes() + self.operation.heap_bytes() + self.effect.heap_bytes()
    }
}

impl HeapSize for DropReason {
    fn heap_bytes(&self) -> usize {
        match self {
            DropReason::Stale { .. } => 0,
            DropReason::InvalidToken { error } => error.heap_bytes(),
            DropReason::Duplicate { operation, .. } => operation.heap_bytes(),
        }
    }
}

impl HeapSize for Delivery {
    fn heap_bytes(&self) -> usize {
        self.request.heap_bytes()
    }
}

impl HeapSize for SideEffectGateway {
    fn heap_bytes(&self) -> usize {
        // The gateway keeps each delivery and an index of delivered operations by workflow; its
        // per-workflow fences are a handful and left out.
        let delivered = self.delivered();
        let ids: usize = delivered
            .iter()
            .map(|d| d.request.workflow.heap_bytes() + d.request.operation.heap_bytes())
            .sum();
        buffer::<Delivery>(delivered.len())
            + delivered.iter().map(Delivery::heap_bytes).sum::<usize>()
            + btree_nodes::<(WorkflowKey, OperationId), crate::clock::Tick>(delivered.len())
            + ids
    }
}
