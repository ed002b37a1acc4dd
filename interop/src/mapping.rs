//! A history in its own words: the names a real system's history gives its operations and
//! fields, mapped to the ones the readers know, its opaque tokens, and the lease length it does
//! not log.
//!
//! A lock test records `:f :lock` and `:unlock`, a field `:lock-name` and a token such as
//! `"lt-7f3a"`; Fencelab's Jepsen reader knows `:acquire`, `:release`, `:resource` and
//! `:generation`. A [`Mapping`] renames the one into the other before the reader sees an op, so
//! the history is read as it was written:
//!
//! ```
//! use fencelab_interop::{jepsen::read_jepsen_mapped, mapping::Mapping};
//!
//! let mapping: Mapping = "lock=acquire,unlock=release,lock-name=resource,value=generation"
//!     .parse()
//!     .unwrap();
//! let mapping = Mapping { opaque_tokens: true, ttl: Some(5_000), ..mapping };
//! let history = r#"
//! {:type :invoke, :f :lock, :process 0, :time 0, :lock-name "alpha"}
//! {:type :ok, :f :lock, :process 0, :time 1000000, :lock-name "alpha", :value "lt-7f3a"}
//! {:type :invoke, :f :unlock, :process 0, :time 2000000, :lock-name "alpha"}
//! {:type :ok, :f :unlock, :process 0, :time 3000000, :lock-name "alpha"}"#;
//! let read = read_jepsen_mapped(history, &mapping).unwrap();
//! assert_eq!(read.history.entries.len(), 3);
//! assert_eq!(read.tokens, [("alpha".to_string(), "lt-7f3a".to_string(), 1)]);
//! ```

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::str::FromStr;

/// The operation kinds a worker's op can mean.
pub const OPS: [&str; 5] = ["acquire", "renew", "release", "write", "effect"];

/// The fields a worker's op can carry (see the `jepsen` module's table).
pub const FIELDS: [&str; 17] = [
    "resource",
    "generation",
    "ttl",
    "store",
    "path",
    "value",
    "op",
    "holder",
    "highest",
    "workflow",
    "effect",
    "token",
    "message",
    "enforcement",
    "retry",
    "valid-until",
    "arrives-at",
];

/// How to read a history written in a system's own words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapping {
    /// The history's names for operations (`:f`), each with the kind it means (one of [`OPS`]).
    pub ops: BTreeMap<String, String>,
    /// The history's names for fields, each with the field it means (`resource`,
    /// `generation`, `ttl`, `store`, `value`, `op`, ...). A field is looked for in the op's
    /// `:value` and beside it, at the op's top level. The name `value` stands for an op's
    /// `:value` that is not a map (a lock service's token, say).
    pub fields: BTreeMap<String, String>,
    /// Tokens are opaque (a UUID, a lock key): compared for equality, not order. Each distinct
    /// token of a resource becomes a generation: a token handed out by a grant is numbered by
    /// that grant's request, in the order the requests were made, so a token granted twice is a
    /// generation issued twice; a token first seen on a write is numbered above every grant's,
    /// so a write with a token nobody was granted carries one the authority never issued. The
    /// numbers say nothing else: read [`crate::Imported::tokens`] for which is which.
    pub opaque_tokens: bool,
    /// How long a lease lasts, in milliseconds, when its grant or renewal does not say: the
    /// length the service is configured with.
    pub ttl: Option<u64>,
    /// The resource of an op that names none: the one lock a test takes.
    pub resource: Option<String>,
    /// How a log writes its time stamps, as `strftime` spells it (`%d/%b/%Y:%H:%M:%S %z`), for
    /// a log whose stamps are neither RFC 3339 nor log4j's; a stamp without an offset is UTC.
    pub time_format: Option<String>,
}

impl FromStr for Mapping {
    type Err = String;

    /// Reads renames written `NAME=MEANING`, separated by commas: `lock=acquire` renames an
    /// operation (the meaning is one of [`OPS`]), `lock-name=resource` a field.
    fn from_str(text: &str) -> Result<Mapping, String> {
        let mut mapping = Mapping::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            mapping.add(part)?;
        }
        Ok(mapping)
    }
}

impl Mapping {
    /// Adds one rename, written `NAME=MEANING`.
    pub fn add(&mut self, rename: &str) -> Result<(), String> {
        let Some((name, meaning)) = rename.split_once('=') else {
            return Err(format!(
                "{rename:?} is not a rename; write NAME=MEANING, such as lock=acquire or lock-name=resource"
            ));
        };
        let (name, meaning) = (name.trim(), meaning.trim());
        if name.is_empty() || meaning.is_empty() {
            return Err(format!("{rename:?} names nothing on one side of its `=`"));
        }
        let map = if OPS.contains(&meaning) {
            &mut self.ops
        } else if FIELDS.contains(&meaning) {
            &mut self.fields
        } else {
            return Err(format!(
                "{meaning:?} is neither an operation ({}) nor a field ({})",
                OPS.join(", "),
                FIELDS.join(", ")
            ));
        };
        if let Some(before) = map.insert(name.to_string(), meaning.to_string()) {
            if before != meaning {
                return Err(format!("{name} is mapped twice, to {before} and to {meaning}"));
            }
        }
        Ok(())
    }

    /// Whether the mapping changes nothing about an op.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
            && self.fields.is_empty()
            && !self.opaque_tokens
            && self.resource.is_none()
    }
}

/// The opaque tokens seen so far and the generations that stand for them. A token first handed
/// out by a grant is numbered by that grant's invocation, so grants whose calls overlap are
/// numbered in the order they were asked for, and no order of theirs looks like a generation
/// going backwards. A token first seen on a write or an effect was handed out by no grant seen
/// so far: it is numbered above every grant's.
#[derive(Debug, Default)]
pub(crate) struct Tokens {
    numbers: BTreeMap<(String, String), u64>,
    /// Acquires invoked so far.
    asked: u64,
    /// Each process's open acquire: its number.
    open: BTreeMap<String, u64>,
    /// Tokens first seen outside a grant.
    unknown: u64,
    /// (resource, token, generation) in order of first appearance.
    pub seen: Vec<(String, String, u64)>,
    /// The mapping's field names that some op has carried so far: a rename that matched none
    /// when the reading fails is probably misspelt.
    pub renamed: std::collections::BTreeSet<String>,
}

impl Tokens {
    /// The mapping's field renames that no op carried, as `NAME=MEANING`.
    pub(crate) fn unmatched(&self, mapping: &Mapping) -> Vec<String> {
        let unused = mapping.fields.iter().filter(|(from, _)| !self.renamed.contains(*from));
        unused.map(|(from, to)| format!("{from}={to}")).collect()
    }
}

/// Where the numbers of tokens no grant handed out start: far above any grant's.
const UNGRANTED: u64 = 1 << 62;

impl Tokens {
    /// The generation that stands for `token` of `resource`, handed out by the open acquire of
    /// `granted_to` when it is one.
    fn number(&mut self, resource: &str, token: &str, granted_to: Option<&str>) -> u64 {
        let key = (resource.to_string(), token.to_string());
        if let Some(n) = self.numbers.get(&key) {
            return *n;
        }
        let n = match granted_to.and_then(|p| self.open.get(p)) {
            Some(n) => *n,
            None => {
                self.unknown += 1;
                UNGRANTED + self.unknown
            }
        };
        self.numbers.insert(key, n);
        self.seen.push((resource.to_string(), token.to_string(), n));
        n
    }
}

/// Jepsen's own keys of an op, which are never a field of its value.
const OP_KEYS: [&str; 8] = ["type", "f", "process", "time", "index", "value", "error", "wall-ns"];

/// Rewrites one Jepsen op as the mapping says: its `:f`, the fields in and beside its value, and
/// its opaque tokens.
pub(crate) fn apply(mapping: &Mapping, tokens: &mut Tokens, op: &mut Map<String, Value>) {
    // The nemesis and Fencelab's own ops speak Fencelab's words already.
    let worker = !matches!(op.get("process").and_then(Value::as_str), Some("nemesis" | "fencelab"));
    if mapping.is_empty() || !worker {
        return;
    }
    if let Some(Value::String(f)) = op.get_mut("f") {
        if let Some(kind) = mapping.ops.get(f.as_str()) {
            *f = kind.clone();
        }
    }
    let process =
        op.get("process").map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_string));
    let acquire = op.get("f").and_then(Value::as_str) == Some("acquire");
    let kind = op.get("type").and_then(Value::as_str).map(str::to_string);
    let kind = kind.as_deref();
    if let (true, Some(process), Some("invoke")) =
        (mapping.opaque_tokens && acquire, &process, kind)
    {
        tokens.asked += 1;
        tokens.open.insert(process.clone(), tokens.asked);
    }
    let f = op.get("f").and_then(Value::as_str).unwrap_or_default();
    let payload = matches!(f, "write" | "effect");
    let mut value = match op.remove("value") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => Map::new(),
        Some(scalar) => {
            // A write's bare value is what it writes; a lease op's is what the mapping says.
            let field = if payload {
                Some("value")
            } else {
                mapping.fields.get("value").map(String::as_str)
            };
            let mut m = Map::new();
            if let Some(field) = field {
                m.insert(field.to_string(), scalar);
                if !payload {
                    tokens.renamed.insert("value".into());
                }
            }
            m
        }
    };
    // Fields beside the value, named by the mapping, move into it.
    let beside: Vec<String> = op
        .keys()
        .filter(|k| !OP_KEYS.contains(&k.as_str()) && mapping.fields.contains_key(k.as_str()))
        .cloned()
        .collect();
    for key in beside {
        if let Some(v) = op.remove(&key) {
            value.entry(key).or_insert(v);
        }
    }
    let renamed: Vec<(String, String)> = value
        .keys()
        .filter(|k| k.as_str() != "value")
        .filter_map(|k| mapping.fields.get(k.as_str()).map(|to| (k.clone(), to.clone())))
        .collect();
    for (from, to) in renamed {
        if let Some(v) = value.remove(&from) {
            value.insert(to, v);
            tokens.renamed.insert(from);
        }
    }
    if let Some(resource) = &mapping.resource {
        value.entry("resource").or_insert_with(|| Value::String(resource.clone()));
    }
    if mapping.opaque_tokens {
        if let Some(token) = value.get("generation").filter(|t| !t.is_null()) {
            let token = match token {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let resource = value.get("resource").and_then(Value::as_str).unwrap_or("").to_string();
            let granted_to = process.as_deref().filter(|_| acquire && kind == Some("ok"));
            let number = tokens.number(&resource, &token, granted_to);
            value.insert("generation".into(), number.into());
        }
    }
    if !value.is_empty() {
        op.insert("value".into(), Value::Object(value));
    }
}
