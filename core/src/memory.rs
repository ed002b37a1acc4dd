//! Memory estimates: what a run's bookkeeping and a search's states take, in bytes, so that the
//! engine and the explorer stop within a budget instead of exhausting the machine.
//!
//! The estimate is read off the data itself (string lengths, entry counts, the inline size of
//! each element, a typical allocator's header and rounding), not measured, so the core stays
//! pure: no allocator hooks and no reading of the process's memory. Strings and lists count
//! their length rather than their spare capacity, so that the figures depend on the content alone
//! (a copy of a scenario gives the same ones); the engine's and the explorer's own growing lists
//! count their capacity, which they control. Parts of a state kept behind `Arc` (workers, store
//! cells, the checker's cells) are charged to the state that allocated them and never twice;
//! `SimState::heap_bytes_beyond` says what one state holds that another does not share.
//!
//! This module holds the `HeapSize` trait and its walks of the standard containers; each of
//! the crate's own types has its impl beside it, so this module, below all of them, uses none.
//!
//! Why not a crate: `deepsize` and `get-size2` derive this walk, but support neither `litemap`
//! (which the orphan rule keeps us from adding), nor a question like "what does this state hold
//! that its parent does not", which snapshots and the explorer's frontier need; they would also
//! put a derive on every model type and a proc-macro in the page's build.

use litemap::LiteMap;
use std::collections::BTreeMap;
use std::fmt;
use std::mem::size_of;
use std::sync::Arc;

/// One kibibyte.
pub const KIB: usize = 1 << 10;
/// One mebibyte.
pub const MIB: usize = 1 << 20;
/// One gibibyte.
pub const GIB: usize = 1 << 30;

/// The memory budget of a run or a search unless the caller sets one: well under what a laptop or
/// a CI machine has, and far more than any built-in story needs.
pub const DEFAULT_MEMORY_BUDGET: usize = 512 * MIB;

/// A number of bytes, shown and read the way people write memory sizes (`512 MiB`, `2GiB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some((unit, size)) = [("GiB", GIB), ("MiB", MIB), ("KiB", KIB)]
            .into_iter()
            .find(|(_, size)| self.0 >= *size)
        else {
            return write!(f, "{} bytes", self.0);
        };
        // Whole units and rounded tenths in integers, in u64, as ten times a remainder can
        // overflow a 32-bit usize.
        let (mut whole, rest, size) =
            (self.0 as u64 / size as u64, (self.0 % size) as u64, size as u64);
        let mut tenths = (rest * 10 + size / 2) / size;
        if tenths == 10 {
            (whole, tenths) = (whole + 1, 0);
        }
        if tenths == 0 {
            write!(f, "{whole} {unit}")
        } else {
            write!(f, "{whole}.{tenths} {unit}")
        }
    }
}

/// Why a memory size could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BytesError {
    /// Nothing was given.
    #[error("no memory size given; write a number and a unit, e.g. 256MiB or 2GiB")]
    Empty,
    /// The text does not start with a number.
    #[error("{text:?} is not a memory size; write a number and a unit, e.g. 256MiB or 2GiB")]
    NotANumber {
        /// What was given.
        text: String,
    },
    /// The unit is not one of the known ones.
    #[error("unknown unit {unit:?} in {text:?}; use B, KiB, MiB, GiB or TiB (or KB, MB, GB, TB for powers of 1000)")]
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// What was given.
        text: String,
    },
    /// The size does not fit in this machine's address space.
    #[error("{text:?} is more memory than this machine can address")]
    TooLarge {
        /// What was given.
        text: String,
    },
}

impl std::str::FromStr for Bytes {
    type Err = BytesError;

    fn from_str(text: &str) -> Result<Bytes, BytesError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(BytesError::Empty);
        }
        let split =
            trimmed.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(split);
        let not_a_number = || BytesError::NotANumber { text: text.to_string() };
        let value: f64 = number.parse().map_err(|_| not_a_number())?;
        let unit = unit.trim();
        let multiplier: f64 = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "k" | "kib" => KIB as f64,
            "m" | "mib" => MIB as f64,
            "g" | "gib" => GIB as f64,
            "t" | "tib" => GIB as f64 * 1024.0,
            "kb" => 1e3,
            "mb" => 1e6,
            "gb" => 1e9,
            "tb" => 1e12,
            _ => {
                return Err(BytesError::UnknownUnit {
                    unit: unit.to_string(),
                    text: text.to_string(),
                })
            }
        };
        let bytes = value * multiplier;
        if !bytes.is_finite() || bytes >= usize::MAX as f64 {
            return Err(BytesError::TooLarge { text: text.to_string() });
        }
        Ok(Bytes(bytes as usize))
    }
}

/// What `bytes` cost as one heap allocation: a typical allocator adds an 8-byte header and rounds
/// up to 16 bytes, with 32 bytes at least. Nothing is allocated for zero bytes.
pub(crate) fn block(bytes: usize) -> usize {
    if bytes == 0 {
        0
    } else {
        (bytes + 8).next_multiple_of(16).max(32)
    }
}

/// The bytes of a buffer of `capacity` elements of type `T`.
pub(crate) fn buffer<T>(capacity: usize) -> usize {
    block(capacity.saturating_mul(size_of::<T>()))
}

/// The bytes of a `BTreeMap<K, V>`'s nodes for `len` entries. A node holds up to 11 entries;
/// filled by inserts, nodes are half to two thirds full (7 entries are assumed), and internal
/// nodes (one per six or so below) add 12 child pointers.
pub(crate) fn btree_nodes<K, V>(len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    let leaf = 16 + 11 * (size_of::<K>() + size_of::<V>());
    let leaves = len.div_ceil(7);
    let internal = if leaves > 1 { leaves.div_ceil(6) } else { 0 };
    leaves * block(leaf) + internal * block(leaf + 12 * size_of::<usize>())
}

/// The bytes of a `HashSet<u64>`-like table that can hold `capacity` entries without growing:
/// a power of two of buckets (an eighth kept free), a control byte each and one group of 16.
pub(crate) fn hash_table<T>(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        (capacity + 1).next_power_of_two()
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    block(buckets * (size_of::<T>() + 1) + 16)
}

/// What a value owns on the heap, in bytes, beyond its own inline size.
pub(crate) trait HeapSize {
    /// Whether a value of this type can own anything on the heap. Collections of types that
    /// cannot skip the walk over their elements (the agenda's thousands of keys, say).
    const OWNS_HEAP: bool = true;

    /// The estimate, allocator overhead included.
    fn heap_bytes(&self) -> usize;
}

/// Says that values of each type own nothing on the heap.
macro_rules! no_heap {
    ($($ty:ty),+ $(,)?) => {$(
        impl $crate::memory::HeapSize for $ty {
            const OWNS_HEAP: bool = false;

            fn heap_bytes(&self) -> usize {
                0
            }
        }
    )+};
}
pub(crate) use no_heap;

/// The heap bytes of the elements `items`, not walked when no element can own any.
fn owned<'a, T: HeapSize + 'a>(items: impl Iterator<Item = &'a T>) -> usize {
    if T::OWNS_HEAP {
        items.map(T::heap_bytes).sum()
    } else {
        0
    }
}

/// Like [`owned`], for the entries of a map.
fn owned_entries<'a, K: HeapSize + 'a, V: HeapSize + 'a>(
    entries: impl Iterator<Item = (&'a K, &'a V)>,
) -> usize {
    if K::OWNS_HEAP || V::OWNS_HEAP {
        entries.map(|(k, v)| k.heap_bytes() + v.heap_bytes()).sum()
    } else {
        0
    }
}

no_heap!(u32, u64, usize, bool);

impl HeapSize for String {
    fn heap_bytes(&self) -> usize {
        block(self.len())
    }
}

impl<T: HeapSize> HeapSize for Option<T> {
    const OWNS_HEAP: bool = T::OWNS_HEAP;

    fn heap_bytes(&self) -> usize {
        self.as_ref().map_or(0, T::heap_bytes)
    }
}

impl<T: HeapSize> HeapSize for Vec<T> {
    fn heap_bytes(&self) -> usize {
        buffer::<T>(self.len()) + owned(self.iter())
    }
}

impl<K: HeapSize, V: HeapSize> HeapSize for BTreeMap<K, V> {
    fn heap_bytes(&self) -> usize {
        btree_nodes::<K, V>(self.len()) + owned_entries(self.iter())
    }
}

impl<K: HeapSize + Ord, V: HeapSize> HeapSize for LiteMap<K, V> {
    fn heap_bytes(&self) -> usize {
        buffer::<(K, V)>(self.len()) + owned_entries(self.iter())
    }
}

impl<A: HeapSize, B: HeapSize> HeapSize for (A, B) {
    const OWNS_HEAP: bool = A::OWNS_HEAP || B::OWNS_HEAP;

    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes() + self.1.heap_bytes()
    }
}

impl<A: HeapSize, B: HeapSize, C: HeapSize> HeapSize for (A, B, C) {
    const OWNS_HEAP: bool = A::OWNS_HEAP || B::OWNS_HEAP || C::OWNS_HEAP;

    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes() + self.1.heap_bytes() + self.2.heap_bytes()
    }
}

/// The whole allocation behind an `Arc`: its two counts, the value and what the value owns.
/// Callers that share `Arc`s between states decide whether a holder pays for it.
impl<T: HeapSize> HeapSize for Arc<T> {
    fn heap_bytes(&self) -> usize {
        block(2 * size_of::<usize>() + size_of::<T>()) + (**self).heap_bytes()
    }
}

/// The heap bytes of a map of shared values that `base` (the same map in another state) does not
/// share: the map's own buffer and keys always, a value only when `base` holds another one.
pub(crate) fn shared_map<K: HeapSize + Ord, V: HeapSize>(
    map: &LiteMap<K, Arc<V>>,
    base: Option<&LiteMap<K, Arc<V>>>,
) -> usize {
    let entries: usize = map
        .iter()
        .map(|(key, value)| {
            let shared = base.and_then(|b| b.get(key)).is_some_and(|b| Arc::ptr_eq(b, value));
            key.heap_bytes() + if shared { 0 } else { value.heap_bytes() }
        })
        .sum();
    buffer::<(K, Arc<V>)>(map.len()) + entries
}

/// The heap bytes that dropping `shared` frees: the whole allocation when this was the last
/// holder, else nothing. Asking as the reference is dropped, rather than reading the count first,
/// gives each allocation to exactly one holder even when threads drop holders at once.
pub(crate) fn freed<T: HeapSize>(shared: Arc<T>) -> usize {
    Arc::into_inner(shared)
        .map_or(0, |value| block(2 * size_of::<usize>() + size_of::<T>()) + value.heap_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_in_the_largest_unit_that_fits() {
        assert_eq!(Bytes(512 * MIB).to_string(), "512 MiB");
        assert_eq!(Bytes(2 * GIB).to_string(), "2 GiB");
        assert_eq!(Bytes(MIB + MIB / 2).to_string(), "1.5 MiB");
        assert_eq!(Bytes(1000).to_string(), "1000 bytes");
        assert_eq!(Bytes(3 * KIB).to_string(), "3 KiB");
        assert_eq!(Bytes(MIB - 1).to_string(), "1024 KiB");
        assert_eq!(Bytes(GIB + 999 * MIB).to_string(), "2 GiB");
        assert_eq!(Bytes(GIB + 900 * MIB).to_string(), "1.9 GiB");
    }

    #[test]
    fn sizes_read_with_binary_and_decimal_units() {
        let read = |s: &str| s.parse::<Bytes>().map(|b| b.0);
        assert_eq!(read("256MiB"), Ok(256 * MIB));
        assert_eq!(read("2GiB"), Ok(2 * GIB));
        assert_eq!(read(" 2 gib "), Ok(2 * GIB));
        assert_eq!(read("1.5G"), Ok(GIB + GIB / 2));
        assert_eq!(read("512MB"), Ok(512_000_000));
        assert_eq!(read("4096"), Ok(4096));
        assert_eq!(read(""), Err(BytesError::Empty));
        let unknown = read("12XB").unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "unknown unit \"XB\" in \"12XB\"; use B, KiB, MiB, GiB or TiB (or KB, MB, GB, TB for powers of 1000)"
        );
        assert!(matches!(read("lots"), Err(BytesError::NotANumber { .. })));
        assert!(matches!(read("1.2.3MiB"), Err(BytesError::NotANumber { .. })));
        assert!(matches!(read("99999999999TiB"), Err(BytesError::TooLarge { .. })));
    }

    #[test]
    fn strings_and_lists_count_their_length_and_the_allocators_share() {
        assert_eq!(String::new().heap_bytes(), 0);
        assert_eq!(String::with_capacity(100).heap_bytes(), 0, "spare capacity is not content");
        assert_eq!("x".repeat(100).heap_bytes(), 112);
        let v: Vec<u64> = (0..10).collect();
        assert_eq!(v.heap_bytes(), 96);
        let names = vec!["a".to_string(); 3];
        assert_eq!(names.heap_bytes(), block(3 * size_of::<String>()) + 3 * 32);
    }
}
