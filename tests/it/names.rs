//! Every fieldless enum's `Named` table spells each variant exactly as serde writes and reads it,
//! so share links, the page and the scenario reader agree with JSON files.

use fencelab_core::scenario::diagram::{ArrowKind, MarkKind};
use fencelab_core::scenario::model::{Enforcement, PauseReason, TokenSource};
use fencelab_core::scenario::switches::Switch;
use fencelab_core::*;
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
fn every_name_table_matches_serde() {
    // Each table is complete by construction: its name match must be exhaustive to compile.
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
    // The public arrays list the same variants, in the same order, as the name tables.
    assert_eq!(InvariantKind::ALL.as_slice(), InvariantKind::VARIANTS);
    assert_eq!(Switch::ALL.as_slice(), Switch::VARIANTS);
}
