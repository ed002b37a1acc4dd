//! Serde support for the sorted-vector maps (`LiteMap`) that hold a handful of entries.

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
