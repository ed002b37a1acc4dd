//! Property tests: the fence's guarantees hold for every sequence, not just the hand-picked ones.

use crate::support::*;
use fencelab_core::*;
use fencelab_core::{
    fence::authority::LeaseAuthority, fence::boundary::FencedResource,
    fence::idempotency::Retention, fence::register::Revision,
    fence::register::SameGenerationPolicy,
};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::num::NonZeroU64;

fn policy() -> impl Strategy<Value = SameGenerationPolicy> {
    prop_oneof![Just(SameGenerationPolicy::AllowSame), Just(SameGenerationPolicy::StrictlyNewer)]
}

proptest! {
    /// Accepted generations never decrease (strictly increase under the strict policy), and the
    /// final value belongs to the write with the highest accepted generation.
    #[test]
    fn accepted_generations_never_decrease(tokens in prop::collection::vec(1u64..20, 1..60), policy in policy()) {
        let mut reg = register(policy);
        let mut accepted: Vec<(Generation, String)> = Vec::new();
        for (i, token) in tokens.iter().enumerate() {
            let value = format!("v{i}");
            if reg.write(&write(*token, &format!("op{i}"), &value)).is_ok() {
                accepted.push((g(*token), value));
            }
        }
        for pair in accepted.windows(2) {
            match policy {
                SameGenerationPolicy::AllowSame => prop_assert!(pair[0].0 <= pair[1].0),
                SameGenerationPolicy::StrictlyNewer => prop_assert!(pair[0].0 < pair[1].0),
            }
        }
        let (last_gen, last_value) = accepted.last().cloned().expect("the first write always applies");
        prop_assert_eq!(reg.highest(), Some(last_gen));
        prop_assert_eq!(reg.highest(), tokens.iter().copied().max().map(g));
        prop_assert_eq!(reg.value(), Some(last_value.as_str()));
        prop_assert_eq!(reg.revision(), Revision(accepted.len() as u64));
    }

    /// The authority never issues a generation twice for a resource, whatever the mix of grants,
    /// renewals, releases, expiries and durable restarts.
    #[test]
    fn the_authority_never_issues_a_generation_twice(
        ops in prop::collection::vec((0u8..5, 0usize..2, 0usize..3, 0u64..8), 1..120),
        ttl in 1u64..10,
    ) {
        let resources = [res("r0"), res("r1")];
        let workers = [worker("w0"), worker("w1"), worker("w2")];
        let mut auth = LeaseAuthority::new(NonZeroU64::new(ttl).unwrap());
        let mut now = Tick(0);
        let mut issued: BTreeMap<ResourceId, Vec<Generation>> = BTreeMap::new();
        for (kind, r, w, dt) in ops {
            now = now.after(dt);
            let (resource, who) = (&resources[r], &workers[w]);
            match kind {
                0 | 1 => {
                    if let Ok(lease) = auth.acquire(resource, who, now) {
                        issued.entry(resource.clone()).or_default().push(lease.generation);
                    }
                }
                2 => {
                    if let Some(lease) = auth.lease(resource, now).cloned() {
                        let _ = auth.renew(resource, &lease.holder, lease.generation, now);
                    }
                }
                3 => {
                    if let Some(lease) = auth.lease(resource, now).cloned() {
                        auth.release(resource, &lease.holder, lease.generation).unwrap();
                    }
                    auth.expire(now);
                }
                _ => {
                    let durable = serde_json::to_string(&auth).unwrap();
                    auth = serde_json::from_str(&durable).unwrap();
                }
            }
        }
        for generations in issued.values() {
            prop_assert!(generations.windows(2).all(|w| w[0] < w[1]), "{generations:?}");
        }
    }

    /// With unbounded retention, no operation id is ever applied twice, however often it is retried.
    #[test]
    fn no_operation_applies_twice(ops in prop::collection::vec((1u64..4, 0u8..6), 1..80)) {
        let mut r = FencedResource::new(register(SameGenerationPolicy::AllowSame), Retention::FOREVER);
        let mut applied_ops = std::collections::BTreeSet::new();
        for (t, (token, id)) in ops.into_iter().enumerate() {
            let name = format!("op{id}");
            if r.write(&write(token, &name, "v"), Tick(t as u64)).is_applied() {
                prop_assert!(applied_ops.insert(name), "applied twice");
            }
        }
    }
}
