//! The hasher of fingerprints, shared by the simulator's state, the checker's and the searches
//! that tell states apart by them.

/// The hasher of the explorer's fingerprints: foldhash tuned for quality, whose 64-bit hashes
/// collide as rarely as a strong hash's (a collision would skip a state unseen), with a fixed
/// seed so that fingerprints are the same on every run and the core draws no random numbers.
pub(crate) const FINGERPRINTS: foldhash::quality::FixedState =
    foldhash::quality::FixedState::with_seed(0x5eed_f3c3_fe0c_e1ab);
