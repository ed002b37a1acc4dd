//! The side-effect gateway: stale and repeated effects never reach the partner.

use crate::support::*;
use fencelab_core::*;
use fencelab_core::{
    fence::gateway::DropReason, fence::gateway::Effect, fence::gateway::EffectRequest,
    fence::gateway::GatewayOutcome, fence::gateway::SideEffectGateway,
    fence::register::SameGenerationPolicy, ids::WorkflowKey,
};

fn capture(token: u64, operation: &str, cents: u64) -> EffectRequest {
    EffectRequest {
        workflow: WorkflowKey::new("order-42").unwrap(),
        generation: g(token),
        operation: op(operation),
        effect: Effect::CapturePayment { amount_cents: cents },
    }
}

#[test]
fn a_stale_retry_is_dropped_before_the_partner_call() {
    let mut gw = SideEffectGateway::new(SameGenerationPolicy::AllowSame);
    assert!(matches!(
        gw.submit(capture(41, "capture-a", 1999), Tick(1)),
        GatewayOutcome::Delivered(_)
    ));
    assert!(matches!(
        gw.submit(capture(42, "capture-b", 1999), Tick(2)),
        GatewayOutcome::Delivered(_)
    ));
    let late = gw.submit(capture(41, "capture-a-retry", 1999), Tick(3));
    assert_eq!(
        late,
        GatewayOutcome::Dropped(DropReason::Stale { presented: g(41), highest: g(42) })
    );
    assert_eq!(gw.delivered().len(), 2, "the partner saw exactly two captures");
    assert_eq!(gw.highest(&WorkflowKey::new("order-42").unwrap()), Some(g(42)));
}

#[test]
fn the_same_operation_is_never_delivered_twice() {
    let mut gw = SideEffectGateway::new(SameGenerationPolicy::AllowSame);
    gw.submit(capture(1, "capture", 500), Tick(1));
    let again = gw.submit(capture(1, "capture", 500), Tick(9));
    assert_eq!(
        again,
        GatewayOutcome::Dropped(DropReason::Duplicate {
            operation: op("capture"),
            delivered_at: Tick(1)
        })
    );
    // Even a newer owner cannot deliver an operation that already happened.
    assert!(matches!(gw.submit(capture(2, "capture", 500), Tick(10)), GatewayOutcome::Dropped(_)));
    assert_eq!(gw.delivered().len(), 1);
}

#[test]
fn workflows_are_fenced_independently_and_effects_describe_themselves() {
    let mut gw = SideEffectGateway::new(SameGenerationPolicy::AllowSame);
    gw.submit(capture(9, "x", 100), Tick(1));
    let email = EffectRequest {
        workflow: WorkflowKey::new("welcome-mail").unwrap(),
        generation: g(1),
        operation: op("mail-1"),
        effect: Effect::SendEmail { to: "ada@example.org".into(), subject: "Welcome".into() },
    };
    let GatewayOutcome::Delivered(delivery) = gw.submit(email, Tick(2)) else { panic!() };
    assert_eq!(delivery.request.effect.to_string(), "send email \"Welcome\" to ada@example.org");
    assert_eq!(capture(1, "y", 1999).effect.to_string(), "capture payment of 19.99");
}
