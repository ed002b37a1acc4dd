//! Fencing tokens: the generation numbers a lease authority issues, one per grant.

use crate::memory::{no_heap, HeapSize};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::num::NonZeroU64;
use std::str::FromStr;

/// A fencing token: the generation of one lease grant.
///
/// Generations are positive 64-bit integers. Zero is not a generation, so "no generation yet" is
/// always spelled `None` and can never be confused with a real, very old token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Generation(NonZeroU64);

/// Why a value is not a usable fencing token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
// Tagged "problem" rather than "kind" so it nests inside the rejections that carry it.
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum TokenError {
    /// Zero, a negative number, a fraction or text where a token belongs.
    #[error("positive integer token required (got {got})")]
    NotPositive {
        /// The offending input, as written.
        got: String,
    },
    /// A whole number beyond the 64-bit range of generations.
    #[error("positive integer token required: {got} is larger than the largest generation {max}", max = u64::MAX)]
    TooLarge {
        /// The offending input, as written.
        got: String,
    },
    /// The token carries no valid proof from the authority: someone made it up. Stores that
    /// verify proofs refuse it, so a forged high token cannot fence everyone else out.
    #[error(
        "token {generation} was not issued by the lease authority (its proof does not verify)"
    )]
    Forged {
        /// The generation the forged token claims.
        generation: Generation,
    },
    /// The authority has issued the largest generation; wrapping to 1 would re-authorize every
    /// stale owner, so it stops instead.
    #[error("generation counter exhausted: no generation after {last}", last = u64::MAX)]
    Exhausted,
}

impl Generation {
    /// The first generation an authority issues.
    pub const FIRST: Generation = Generation(NonZeroU64::MIN);
    /// The largest generation; there is no next one.
    pub const MAX: Generation = Generation(NonZeroU64::MAX);

    /// Wraps a token, refusing zero.
    pub fn new(token: u64) -> Result<Self, TokenError> {
        NonZeroU64::new(token)
            .map(Generation)
            .ok_or_else(|| TokenError::NotPositive { got: token.to_string() })
    }

    /// The token as a plain integer, e.g. for storage in a database column.
    pub fn get(self) -> u64 {
        self.0.get()
    }

    /// The generation after this one. At the maximum this is an error, never a wrap to 1.
    pub fn next(self) -> Result<Self, TokenError> {
        self.0.checked_add(1).map(Generation).ok_or(TokenError::Exhausted)
    }

    /// Parses a token from any integer type wider than `u64`, reporting negatives and overflow.
    pub fn from_i128(token: i128) -> Result<Self, TokenError> {
        match u64::try_from(token) {
            Ok(t) => Generation::new(t),
            Err(_) if token < 0 => Err(TokenError::NotPositive { got: token.to_string() }),
            Err(_) => Err(TokenError::TooLarge { got: token.to_string() }),
        }
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for Generation {
    type Err = TokenError;

    /// Parses a decimal token as typed by a person or read from a text field.
    fn from_str(text: &str) -> Result<Self, TokenError> {
        let trimmed = text.trim();
        let shown = if trimmed.is_empty() { "nothing".to_string() } else { trimmed.to_string() };
        let digits = trimmed.strip_prefix('+').unwrap_or(trimmed);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return match digits.parse::<u64>() {
                Ok(t) => Generation::new(t).map_err(|_| TokenError::NotPositive { got: shown }),
                Err(_) => Err(TokenError::TooLarge { got: shown }),
            };
        }
        Err(TokenError::NotPositive { got: shown })
    }
}

impl Serialize for Generation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.get())
    }
}

impl<'de> Deserialize<'de> for Generation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(GenerationVisitor)
    }
}

/// Accepts only JSON-style positive integers and turns everything else into a [`TokenError`]
/// message, so a bad scenario file says "positive integer token required" instead of a serde
/// type-mismatch message.
struct GenerationVisitor;

impl<'de> Visitor<'de> for GenerationVisitor {
    type Value = Generation;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a positive integer fencing token")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Generation, E> {
        Generation::new(v).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Generation, E> {
        Generation::from_i128(v.into()).map_err(E::custom)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Generation, E> {
        Err(E::custom(TokenError::TooLarge { got: v.to_string() }))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Generation, E> {
        Generation::from_i128(v).map_err(E::custom)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Generation, E> {
        // JSON reads a number with a fraction or an exponent, or one beyond 64 bits, as a float,
        // whose digits past its precision are not the file's: say what kind of number it is.
        if v >= u64::MAX as f64 {
            return Err(E::custom(TokenError::TooLarge { got: "the number".into() }));
        }
        let kind = if v.fract() == 0.0 && v >= 1.0 {
            "written with a fraction or exponent"
        } else {
            "not a whole positive number"
        };
        Err(E::custom(TokenError::NotPositive { got: format!("{v:?}, {kind}") }))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Generation, E> {
        Err(E::custom(TokenError::NotPositive { got: format!("the text {v:?}") }))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Generation, E> {
        Err(E::custom(TokenError::NotPositive { got: v.to_string() }))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Generation, E> {
        Err(E::custom(TokenError::NotPositive { got: "null".into() }))
    }
}

no_heap!(Generation);

impl HeapSize for TokenError {
    fn heap_bytes(&self) -> usize {
        match self {
            TokenError::NotPositive { got } | TokenError::TooLarge { got } => got.heap_bytes(),
            TokenError::Forged { .. } | TokenError::Exhausted => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_people_type() {
        assert_eq!("7".parse::<Generation>().unwrap().get(), 7);
        assert_eq!(" +8 ".parse::<Generation>().unwrap().get(), 8);
        for bad in ["0", "-3", "abc", "", "7.5", "1e3"] {
            let err = bad.parse::<Generation>().unwrap_err();
            assert!(err.to_string().starts_with("positive integer token required"), "{bad}: {err}");
        }
        let err = "99999999999999999999".parse::<Generation>().unwrap_err();
        assert!(matches!(err, TokenError::TooLarge { .. }), "{err}");
    }
}
