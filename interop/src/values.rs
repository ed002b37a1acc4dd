//! Reading fields out of parsed values, with errors that name the field, and the key spellings
//! the Jepsen format uses (`valid-until` there, `valid_until` in Fencelab's own types).

use crate::error::{ImportError, Loc};
use fencelab_core::{
    fence::generation::TokenError, ids::IdError, Generation, OperationId, ResourceId, Tick,
    WorkerId,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::str::FromStr;

/// A generation from a parsed number or text, refusing zero, negatives, fractions and numbers
/// beyond 64 bits with the core's own words ("positive integer token required ...").
pub(crate) fn generation(value: &Value) -> Result<Generation, String> {
    let err = |e: TokenError| e.to_string();
    match value {
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                Generation::new(u).map_err(err)
            } else if let Some(i) = n.as_i64() {
                Generation::from_i128(i.into()).map_err(err)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.fract() == 0.0 && f >= 18_446_744_073_709_551_616.0 {
                    Err(err(TokenError::TooLarge { got: format!("{f:.0}") }))
                } else {
                    Err(err(TokenError::NotPositive { got: n.to_string() }))
                }
            }
        }
        // Text that is no number at all is most likely a service's own opaque token.
        Value::String(s) => s.parse::<Generation>().map_err(|e| match s.trim().parse::<f64>() {
            Ok(_) => err(e),
            Err(_) => format!("{}; a token that is not a number is read as an opaque token (`fencelab audit --opaque-tokens`)", err(e)),
        }),
        Value::Null => Err(err(TokenError::NotPositive { got: "nil".into() })),
        other => Err(err(TokenError::NotPositive { got: other.to_string() })),
    }
}

/// Renames every object key, deep: `_` to `-` (`to_kebab`) or back.
pub(crate) fn rename_keys(value: Value, to_kebab: bool) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let k = if to_kebab { k.replace('_', "-") } else { k.replace('-', "_") };
                    (k, rename_keys(v, to_kebab))
                })
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| rename_keys(v, to_kebab)).collect())
        }
        other => other,
    }
}

/// The fields of one map, read with errors that name `prefix.key`.
pub(crate) struct Fields<'a> {
    pub map: Option<&'a Map<String, Value>>,
    pub loc: &'a Loc,
    pub prefix: &'a str,
}

impl<'a> Fields<'a> {
    pub(crate) fn name(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.prefix)
        }
    }

    fn err(&self, key: &str, problem: impl Into<String>) -> ImportError {
        self.loc.field(&self.name(key), problem)
    }

    /// The raw value of `key` (spelt with `-` or `_`), `None` when absent or nil.
    pub(crate) fn raw(&self, key: &str) -> Option<&'a Value> {
        let map = self.map?;
        let v = map.get(key).or_else(|| map.get(&key.replace('-', "_")))?;
        (!v.is_null()).then_some(v)
    }

    /// Whether `key` is there at all, nil included.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.map.is_some_and(|m| m.contains_key(key) || m.contains_key(&key.replace('-', "_")))
    }

    pub(crate) fn str(&self, key: &str) -> Result<Option<String>, ImportError> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(other) => Err(self.err(key, format!("expected a string, got {other}"))),
        }
    }

    pub(crate) fn req_str(&self, key: &str) -> Result<String, ImportError> {
        self.str(key)?.ok_or_else(|| self.err(key, "missing"))
    }

    /// A string field where nil is a value: `None` when absent, `Some(None)` for nil.
    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<Option<String>>, ImportError> {
        if !self.has(key) {
            return Ok(None);
        }
        Ok(Some(self.str(key)?))
    }

    /// A name of kind `T`, checked as every id is; the error names the field.
    fn id<T: FromStr<Err = IdError>>(&self, key: &str) -> Result<Option<T>, ImportError> {
        match self.str(key)? {
            Some(name) => name.parse().map(Some).map_err(|e: IdError| self.err(key, e.to_string())),
            None => Ok(None),
        }
    }

    pub(crate) fn resource(&self, key: &str) -> Result<Option<ResourceId>, ImportError> {
        self.id(key)
    }

    /// A resource where nil is a value ("none"): `None` when absent, `Some(None)` for nil.
    pub(crate) fn opt_resource(
        &self,
        key: &str,
    ) -> Result<Option<Option<ResourceId>>, ImportError> {
        if !self.has(key) {
            return Ok(None);
        }
        Ok(Some(self.resource(key)?))
    }

    pub(crate) fn worker(&self, key: &str) -> Result<Option<WorkerId>, ImportError> {
        self.id(key)
    }

    pub(crate) fn req_resource(&self, key: &str) -> Result<ResourceId, ImportError> {
        self.resource(key)?.ok_or_else(|| self.err(key, "missing"))
    }

    pub(crate) fn operation(&self, key: &str) -> Result<Option<OperationId>, ImportError> {
        self.id(key)
    }

    pub(crate) fn gen(&self, key: &str) -> Result<Option<Generation>, ImportError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => generation(v).map(Some).map_err(|p| self.err(key, p)),
        }
    }

    pub(crate) fn req_gen(&self, key: &str) -> Result<Generation, ImportError> {
        self.gen(key)?.ok_or_else(|| self.err(key, "missing: positive integer token required"))
    }

    /// A generation where nil is a value ("none yet").
    pub(crate) fn opt_gen(&self, key: &str) -> Result<Option<Option<Generation>>, ImportError> {
        if !self.has(key) {
            return Ok(None);
        }
        Ok(Some(self.gen(key)?))
    }

    pub(crate) fn u64(&self, key: &str) -> Result<Option<u64>, ImportError> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
            Some(other) => {
                Err(self.err(key, format!("expected a whole number from 0, got {other}")))
            }
        }
    }

    pub(crate) fn tick(&self, key: &str) -> Result<Option<Tick>, ImportError> {
        Ok(self.u64(key)?.map(Tick))
    }

    pub(crate) fn bool(&self, key: &str) -> Result<Option<bool>, ImportError> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.err(key, format!("expected true or false, got {other}"))),
        }
    }

    /// A field of one of Fencelab's own types, spelt in the source's key style.
    pub(crate) fn de<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, ImportError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => {
                // Names such as `:check-then-write` are spelt `check_then_write` in Fencelab.
                let v = match v {
                    Value::String(s) => Value::String(s.replace('-', "_")),
                    other => rename_keys(other.clone(), false),
                };
                serde_json::from_value(v).map(Some).map_err(|e| self.err(key, e.to_string()))
            }
        }
    }
}
