//! Every fieldless enum's `Named` names are the ones serde writes and reads, so share links, the
//! page and the SQLite store agree with JSON files.

use fencelab_core::stories::switches::Switch;
use fencelab_core::{draw::ArrowKind, draw::MarkKind};
use fencelab_core::{
    drive::explore::Bound, fence::register::RejectionReason, fence::register::SameGenerationPolicy,
    history::event::TokenKind, invariant::InvariantKind, names::Named,
};
use fencelab_core::{
    format::model::Enforcement, format::model::PauseReason, format::model::TokenSource,
};
use serde::{de::DeserializeOwned, Serialize};
use serde_json::Value;

fn check<T: Named + Serialize + DeserializeOwned + std::fmt::Debug>() {
    for &v in T::VARIANTS {
        assert_eq!(serde_json::to_value(v).unwrap(), Value::String(v.name().into()), "{v:?}");
        let back: T = serde_json::from_value(Value::String(v.name().into())).unwrap();
        assert_eq!(back, v);
        assert_eq!(T::from_name(v.name()), Some(v));
    }
    assert_eq!(T::from_name("no_such_name"), None);
}

#[test]
fn every_name_is_the_one_serde_writes() {
    // `VARIANTS` is derived (strum's `VariantArray`), so it lists every variant; each name is read
    // from serde's derived `Serialize`, and reading it back must give the same variant.
    check::<TokenSource>();
    check::<Enforcement>();
    check::<PauseReason>();
    check::<SameGenerationPolicy>();
    check::<RejectionReason>();
    check::<InvariantKind>();
    check::<ArrowKind>();
    check::<MarkKind>();
    check::<TokenKind>();
    check::<Switch>();
    check::<Bound>();
    assert_eq!(InvariantKind::StaleWriteAccepted.to_string(), "stale_write_accepted");
    // The public arrays list the same variants, in the same order, as the derived lists.
    assert_eq!(InvariantKind::ALL.as_slice(), InvariantKind::VARIANTS);
    assert_eq!(Switch::ALL.as_slice(), Switch::VARIANTS);
}

#[test]
fn steps_and_faults_are_named_as_serde_writes_them() {
    use fencelab_core::{format::model::Fault, format::model::Step};
    let name = |value: Value| match value {
        Value::String(s) => s,
        Value::Object(map) => map.keys().next().expect("one key").clone(),
        other => panic!("not a variant: {other}"),
    };
    for scenario in fencelab_core::stories::library::all() {
        for step in scenario.workers.iter().flat_map(|w| &w.script) {
            assert_eq!(step.name(), name(serde_json::to_value(step).unwrap()), "{step:?}");
        }
        for fault in scenario.faults.iter().map(|f| &f.fault) {
            assert_eq!(fault.name(), name(serde_json::to_value(fault).unwrap()), "{fault:?}");
        }
    }
    assert_eq!(Step::Compute { ticks: 1 }.name(), "compute");
    assert_eq!(Fault::RestartAuthority.name(), "restart_authority");
}
