//! Names of the things fencing talks about: resources, workers, operations and workflows.
//!
//! Each name is its own type so that a resource id can never be passed where an operation id is
//! expected; keeping those fields distinct is half of getting fencing right.

use crate::memory::{block, HeapSize};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum IdError {
    /// Names must say something: an empty name cannot route or identify anything.
    #[error("{kind} must not be empty")]
    Empty {
        /// Which kind of name was empty, e.g. "resource id".
        kind: String,
    },
    /// Names are labels, not payloads; a bound keeps logs and URLs readable.
    #[error("{kind} is {len} characters long; the limit is {max}")]
    TooLong {
        /// Which kind of name was too long.
        kind: String,
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
}

/// The longest name accepted, in characters. Real systems name workers by host or pod, and a DNS
/// name may be 253 characters long, so every such name fits.
pub const MAX_ID_LEN: usize = 256;

/// The rule every name follows, whatever it names: not blank, and at most [`MAX_ID_LEN`]
/// characters. `kind` says what the name is for, in the error.
pub fn check_name(kind: &str, name: &str) -> Result<(), IdError> {
    let len = name.chars().count();
    if name.trim().is_empty() {
        Err(IdError::Empty { kind: kind.into() })
    } else if len > MAX_ID_LEN {
        Err(IdError::TooLong { kind: kind.into(), len, max: MAX_ID_LEN })
    } else {
        Ok(())
    }
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
        #[serde(try_from = "String")]
        pub struct $name(String);

        impl $name {
            /// Checks and wraps a name; empty or overlong names are refused. `str::parse`,
            /// `TryFrom<&str>` and `TryFrom<String>` make the same checks.
            pub fn new(name: impl Into<String>) -> Result<Self, IdError> {
                let name = name.into();
                check_name($kind, &name)?;
                Ok(Self(name))
            }

            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdError;
            fn try_from(name: String) -> Result<Self, IdError> {
                Self::new(name)
            }
        }

        impl TryFrom<&str> for $name {
            type Error = IdError;
            fn try_from(name: &str) -> Result<Self, IdError> {
                Self::new(name)
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(name: &str) -> Result<Self, IdError> {
                Self::new(name)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        // Reading a name as text is always safe; only making one is checked. Dereferencing to
        // `str` lets every reader (captions, maps keyed by text, comparisons) use it as text.
        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        // Written as the text it holds, without the copy `serde(into)` would make.
        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

string_id!(
    /// Names one protected resource (a row, an object, a file). It routes a request to the register
    /// and the lease that guard it; it grants no authority by itself.
    ResourceId,
    "resource id"
);
string_id!(
    /// Names a worker (a lease holder or would-be holder).
    WorkerId,
    "worker id"
);
string_id!(
    /// Names one logical operation, so that a retry of it can be recognised. It says nothing about
    /// who owns the lease; that is the generation's job.
    OperationId,
    "operation id"
);
string_id!(
    /// Names a business workflow whose irreversible effects (a payment, an email) the gateway orders.
    WorkflowKey,
    "workflow key"
);

impl WorkerId {
    /// A name the simulator gives an actor that is not a scripted worker ("network", "store",
    /// "nobody") when it reports a state that should not happen. The names are short and not
    /// blank, so they pass the checks `new` makes.
    pub(crate) fn fixed(name: &'static str) -> Self {
        debug_assert!(Self::new(name).is_ok());
        Self(name.to_string())
    }
}

/// A name owns its text on the heap.
macro_rules! string_ids {
    ($($ty:ty),+) => {$(
        impl HeapSize for $ty {
            fn heap_bytes(&self) -> usize {
                block(self.as_str().len())
            }
        }
    )+};
}

string_ids!(ResourceId, WorkerId, OperationId, WorkflowKey);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_parses_from_text_with_the_same_checks_as_new() {
        let ledger: ResourceId = "ledger".parse().unwrap();
        assert_eq!(ledger, ResourceId::new("ledger").unwrap());
        assert_eq!(WorkerId::try_from("A").unwrap().as_str(), "A");
        assert_eq!(OperationId::try_from(String::from("op-1")).unwrap().as_str(), "op-1");
        assert_eq!("pay".parse::<WorkflowKey>().unwrap().as_str(), "pay");

        assert_eq!(" ".parse::<WorkerId>().unwrap_err().to_string(), "worker id must not be empty");
        let long = "x".repeat(MAX_ID_LEN + 1);
        assert_eq!(
            OperationId::try_from(long.as_str()).unwrap_err(),
            IdError::TooLong { kind: "operation id".into(), len: MAX_ID_LEN + 1, max: MAX_ID_LEN }
        );
        assert_eq!(
            WorkflowKey::try_from("").unwrap_err(),
            IdError::Empty { kind: "workflow key".into() }
        );
    }
}
