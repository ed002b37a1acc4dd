//! The diagram model of a run: what the visualizer draws, pinned for the paused-worker story.

use fencelab_core::stories::library;
use fencelab_core::*;
use fencelab_core::{
    draw::diagram, draw::ArrowKind, draw::LaneKind, draw::MarkKind, draw::SpanKind,
};

fn full_run(name: &str, variant: &str) -> (Scenario, Engine) {
    let scenario = library::scenario(name, Some(variant)).unwrap();
    let mut engine = Engine::new(scenario.clone()).unwrap();
    engine.run().unwrap();
    (scenario, engine)
}

#[test]
fn the_paused_worker_diagram_shows_handoffs_the_pause_and_the_rejection() {
    let (_, engine) = full_run("paused-worker", "fenced");
    let d = diagram(&engine.history(), engine.violations());
    let lanes: Vec<(&str, LaneKind)> = d.lanes.iter().map(|l| (l.id.as_str(), l.kind)).collect();
    assert_eq!(
        lanes,
        [
            ("authority", LaneKind::Authority),
            ("worker:A", LaneKind::Worker),
            ("worker:B", LaneKind::Worker),
            ("store:db", LaneKind::Store)
        ]
    );
    let arrows: Vec<_> = d
        .arrows
        .iter()
        .map(|a| {
            (
                a.kind,
                a.from,
                a.to,
                a.generation.get(),
                a.sent_step,
                a.arrived_step,
                a.label.as_str(),
            )
        })
        .collect();
    assert_eq!(
        arrows,
        [
            (ArrowKind::Grant, 0, 1, 1, 0, Some(1), "lease gen 1"),
            (ArrowKind::Write, 1, 3, 1, 5, Some(7), "write \"A: total=100\""),
            (ArrowKind::Grant, 0, 2, 2, 9, Some(10), "lease gen 2"),
            (ArrowKind::Write, 2, 3, 2, 12, Some(14), "write \"B: total=120\""),
            (ArrowKind::Write, 1, 3, 1, 16, Some(18), "write \"A: total=90 (from stale inputs)\""),
        ]
    );
    let rejected: Vec<_> = d.marks.iter().filter(|m| m.kind == MarkKind::Rejected).collect();
    assert_eq!(rejected.len(), 1);
    assert_eq!(
        (rejected[0].step, rejected[0].lane, rejected[0].label.as_str()),
        (18, 3, "stale: 1 < 2")
    );
    let expired = d.marks.iter().find(|m| m.kind == MarkKind::Expired).unwrap();
    assert_eq!((expired.at, expired.label.as_str()), (Tick(10), "gen 1 expired"));
    let a_spans: Vec<_> =
        d.spans.iter().filter(|s| s.lane == 1).map(|s| (s.kind.clone(), s.from, s.to)).collect();
    assert_eq!(
        a_spans,
        [
            (SpanKind::Lease { generation: Generation::new(1).unwrap() }, Tick(0), Tick(10)),
            (SpanKind::Belief { generation: Generation::new(1).unwrap() }, Tick(1), Tick(20)),
            (
                SpanKind::Pause { reason: fencelab_core::format::model::PauseReason::GcPause },
                Tick(3),
                Tick(18)
            ),
        ]
    );
    assert_eq!(d.end, Tick(20));
}

#[test]
fn violations_are_marked_at_the_step_and_lane_that_broke_them() {
    let (_, engine) = full_run("secondary-path", "broken");
    let d = diagram(&engine.history(), engine.violations());
    let object = d.lanes.iter().position(|l| l.id == "store:storage/object").unwrap();
    let marks: Vec<_> = d
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::Violation)
        .map(|m| (m.step, m.lane, m.label.as_str()))
        .collect();
    assert_eq!(
        marks,
        [
            (17, object, "stale_write_accepted"),
            (17, object, "write_outside_lease"),
            (18, object, "final_value_not_from_latest_owner")
        ]
    );
}

#[test]
fn gateway_stories_get_gateway_and_partner_lanes() {
    let (_, engine) = full_run("payment-capture", "fenced");
    let d = diagram(&engine.history(), engine.violations());
    assert_eq!(
        d.lanes.last().map(|l| (l.kind, l.label.as_str())),
        Some((LaneKind::Partner, "payments"))
    );
    let dropped: Vec<_> =
        d.marks.iter().filter(|m| m.kind == MarkKind::Dropped).map(|m| m.label.as_str()).collect();
    assert_eq!(dropped, ["stale: 1 < 2"]);
    let delivered = d.marks.iter().filter(|m| m.kind == MarkKind::Delivered).count();
    assert_eq!(delivered, 2, "one at the gateway, one at the partner");
}

#[test]
fn every_built_in_diagram_has_an_arrow_for_every_message_and_marks_on_real_lanes() {
    for scenario in library::all() {
        let mut engine = Engine::new(scenario.clone()).unwrap();
        engine.run().unwrap();
        let d = diagram(&engine.history(), engine.violations());
        for arrow in &d.arrows {
            assert!(arrow.from < d.lanes.len() && arrow.to < d.lanes.len());
            assert!(
                arrow.arrived_step.is_some(),
                "{}: message {} never arrived",
                scenario.name,
                arrow.message
            );
        }
        assert!(d.marks.iter().all(|m| m.lane < d.lanes.len() && m.step < engine.timeline().len()));
        assert_eq!(
            d.marks.iter().filter(|m| m.kind == MarkKind::Violation).count(),
            engine.violations().len()
        );
    }
}
