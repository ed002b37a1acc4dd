//! The fencing building blocks: generations, the lease authority, the fenced register and the
//! full write boundary, the side-effect gateway, the operation log, and the store interface.
//! Each is a plain value with pure methods; every front drives them the same way.

pub(crate) mod authority;
pub mod boundary;
pub(crate) mod gateway;
pub(crate) mod generation;
pub(crate) mod idempotency;
pub(crate) mod log;
pub(crate) mod register;
pub(crate) mod shared;
pub mod store;
