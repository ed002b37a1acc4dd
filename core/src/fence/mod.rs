//! The fencing building blocks: generations, the lease authority, the fenced register and the
//! full write boundary, the side-effect gateway, the operation log, and the store interface.
//! Each is a plain value with pure methods; every front drives them the same way.

pub mod authority;
pub mod boundary;
pub mod gateway;
pub mod generation;
pub mod idempotency;
pub mod log;
pub mod register;
pub mod shared;
pub mod store;
