//! Small constructors that keep the tests about fencing rather than about building values.

use fencelab_core::*;
use fencelab_core::{
    fence::register::FencedRegister, fence::register::Revision,
    fence::register::SameGenerationPolicy,
};

pub fn g(token: u64) -> Generation {
    Generation::new(token).expect("test tokens are positive")
}

pub fn res(name: &str) -> ResourceId {
    ResourceId::new(name).expect("valid resource id")
}

pub fn worker(name: &str) -> WorkerId {
    WorkerId::new(name).expect("valid worker id")
}

pub fn op(name: &str) -> OperationId {
    OperationId::new(name).expect("valid operation id")
}

pub fn write(token: u64, operation: &str, value: &str) -> WriteRequest {
    WriteRequest::new(res("ledger"), g(token), op(operation), None, value)
}

pub fn conditional(token: u64, operation: &str, expected: u64, value: &str) -> WriteRequest {
    WriteRequest::new(res("ledger"), g(token), op(operation), Some(Revision(expected)), value)
}

pub fn register(policy: SameGenerationPolicy) -> FencedRegister {
    FencedRegister::new(res("ledger"), policy)
}
