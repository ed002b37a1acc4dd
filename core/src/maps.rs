//! Serde support for the sorted-vector maps (`LiteMap`) that hold a handful of entries.

use crate::memory::HeapSize;
use litemap::LiteMap;
use serde::{Serialize, Serializer};

/// Writes a map with string-like keys as a JSON object even when it is empty (litemap writes an
/// empty map as a list), so durable records keep one shape. Its own deserializer reads it back.
pub(crate) fn as_object<K: Serialize, V: Serialize, S: Serializer>(
    map: &LiteMap<K, V>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(map.iter())
}

/// Each name mapped to its position in `names`: the lookup from a name in a scenario to the index
/// of its lane, resource or store. Inserted one by one, so no sort routine is compiled for it.
pub(crate) fn index_by_name<'a>(names: impl Iterator<Item = &'a str>) -> LiteMap<String, usize> {
    let mut index = LiteMap::new();
    for (i, name) in names.enumerate() {
        index.insert(name.to_string(), i);
    }
    index
}

/// A set of strings kept as a sorted vector. Scenarios hold a handful of names and operation
/// ids, so a binary search beats a B-tree here.
/// It serializes as a sorted JSON list, as `BTreeSet<String>` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub(crate) struct StringSet(pub(crate) Vec<String>);

impl StringSet {
    /// An empty set.
    pub fn new() -> Self {
        StringSet(Vec::new())
    }

    /// Adds `name`; returns whether it was new.
    pub fn insert(&mut self, name: String) -> bool {
        match self.0.binary_search(&name) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, name);
                true
            }
        }
    }

    /// Whether `name` is in the set.
    pub fn contains(&self, name: &str) -> bool {
        self.0.binary_search_by(|n| n.as_str().cmp(name)).is_ok()
    }
}

impl<'de> serde::Deserialize<'de> for StringSet {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut names = Vec::<String>::deserialize(deserializer)?;
        names.sort_unstable();
        names.dedup();
        Ok(StringSet(names))
    }
}

impl HeapSize for crate::maps::StringSet {
    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::StringSet;
    use proptest::prelude::*;

    proptest! {
        /// The set answers like a `BTreeSet` after any inserts, and writes the same sorted list.
        #[test]
        fn string_set_matches_btreeset(names in proptest::collection::vec("[a-d]{0,3}", 0..40)) {
            let mut set = StringSet::new();
            let mut model = std::collections::BTreeSet::new();
            for name in &names {
                prop_assert_eq!(set.insert(name.clone()), model.insert(name.clone()));
            }
            for probe in ["", "a", "ab", "dd", "e"] {
                prop_assert_eq!(set.contains(probe), model.contains(probe));
            }
            let json = serde_json::to_string(&set).unwrap();
            prop_assert_eq!(&json, &serde_json::to_string(&model).unwrap());
            let back: StringSet = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(back, set);
        }
    }
}
