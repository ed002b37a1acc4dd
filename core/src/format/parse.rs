//! Reads scenario files: JSON text to a value, then the value to a [`Scenario`] through serde's
//! derive, naming the path of every bad field (`workers[1].script[0].acquire.resource`).
//!
//! The text is read into a `serde_json::Value` first, by a reader that refuses a key written twice
//! in one object (serde_json would silently keep the last, hiding a copy-paste mistake in a
//! hand-edited file) and text after the value. The model's derived `Deserialize` then reads that
//! value, and `serde_path_to_error` says where it stopped.

use crate::format::error::ScenarioError;
use crate::format::limits::MAX_SCENARIO_BYTES;
use crate::format::model::Scenario;
use json_comments::CommentSettings;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::io::Read;

impl Scenario {
    /// Parses and checks a scenario file. A problem is a [`ScenarioError`] that names the field.
    /// The file may carry `//` and `/* */` comments (JSONC), as the one `fencelab new` prints does.
    ///
    /// ```
    /// use fencelab_core::prelude::*;
    ///
    /// // A pauses past its lease; B takes over at tick 12 and writes first.
    /// let json = r#"{
    ///   "name": "my-paused-worker", "title": "A pauses past its lease",
    ///   "resources": ["ledger"],
    ///   "authority": {"ttl": 10},
    ///   "stores": [{"name": "db", "enforcement": "fenced"}],
    ///   "workers": [
    ///     {"name": "A", "script": [{"acquire": {"resource": "ledger"}}, {"pause": {"ticks": 15}},
    ///                              {"write": {"resource": "ledger", "value": "a"}}]},
    ///     {"name": "B", "start": 12, "script": [{"acquire": {"resource": "ledger"}},
    ///                                           {"write": {"resource": "ledger", "value": "b"}}]}
    ///   ]
    /// }"#;
    /// let verdict = Engine::new(Scenario::from_json(json)?)?.run()?;
    /// verdict.assert_no_violation();
    /// assert_eq!(verdict.rejections[&RejectionReason::StaleGeneration], 1);
    ///
    /// let bad = Scenario::from_json(&json.replace(r#""ttl": 10"#, r#""ttl": 0"#)).unwrap_err();
    /// assert_eq!(bad.path, "authority.ttl");
    /// # Ok::<(), fencelab_core::Error>(())
    /// ```
    pub fn from_json(json: &str) -> Result<Scenario, ScenarioError> {
        if json.len() > MAX_SCENARIO_BYTES {
            return Err(ScenarioError::new(
                ".",
                format!("the file is {} bytes; the limit is {MAX_SCENARIO_BYTES}", json.len()),
            ));
        }
        Scenario::from_value(&json_text(&without_comments(json)?)?)
    }

    /// Reads and checks a scenario already parsed as a JSON value. The byte limit of
    /// [`Scenario::from_json`] is left to whoever parsed the text.
    pub fn from_value(value: &Value) -> Result<Scenario, ScenarioError> {
        // The path is where reading stopped: `.` for the value itself.
        let scenario: Scenario = serde_path_to_error::deserialize(value).map_err(|e| {
            let problem = explain(value, e.path(), e.inner().to_string());
            ScenarioError::new(e.path().to_string(), problem)
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// The scenario as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// `json` with its comments blanked out, byte for byte, and every line break kept, so that the
/// line and column of a parse error are those of the file as written.
fn without_comments(json: &str) -> Result<Cow<'_, str>, ScenarioError> {
    if !json.contains('/') {
        return Ok(Cow::Borrowed(json));
    }
    let mut bytes = Vec::with_capacity(json.len());
    let stripped =
        CommentSettings::c_style().strip_comments(json.as_bytes()).read_to_end(&mut bytes);
    if stripped.is_err() || bytes.len() != json.len() {
        return Err(ScenarioError::new(
            ".",
            "a `/` outside a string starts no comment (comments are `// ...` or `/* ... */`)",
        ));
    }
    // A block comment's line breaks are blanked too; put them back.
    for (byte, original) in bytes.iter_mut().zip(json.bytes()) {
        if original == b'\n' {
            *byte = b'\n';
        }
    }
    // Only whole characters inside comments were replaced, by spaces, so the text is still UTF-8.
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|e| ScenarioError::new(".", format!("not text after removing comments: {e}")))
}

/// Parses JSON text into a value, refusing a key that appears twice in one object and text after
/// the value. Errors carry the path of the value where parsing stopped.
pub(crate) fn json_text(json: &str) -> Result<Value, ScenarioError> {
    json_value(json).map_err(|(at, e)| error(&at, e.to_string()))
}

/// Parses JSON text into a value as [`json_text`] does; an error comes with the path of the value
/// where parsing stopped (empty for the whole text) and serde_json's error, for a reader that
/// words it otherwise.
pub(crate) fn json_value(json: &str) -> Result<Value, (String, serde_json::Error)> {
    let mut de = serde_json::Deserializer::from_str(json);
    let stopped = std::cell::RefCell::new(None);
    let seed = Strict { at: Segment::Root, stopped: &stopped };
    let value = serde::de::DeserializeSeed::deserialize(seed, &mut de)
        .map_err(|e| (stopped.into_inner().unwrap_or_default(), e))?;
    de.end().map_err(|e| (String::new(), e))?;
    Ok(value)
}

/// Where a value sits, built only when an error needs it.
#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a Segment<'a>, &'a str),
    Index(&'a Segment<'a>, usize),
}

impl Segment<'_> {
    fn path(&self) -> String {
        match *self {
            Segment::Root => String::new(),
            Segment::Key(parent, key) => field_path(&parent.path(), key),
            Segment::Index(parent, i) => format!("{}[{i}]", parent.path()),
        }
    }
}

/// Builds a `Value` like serde_json's own, but refuses duplicate keys and notes the path of the
/// innermost value whose reading failed.
struct Strict<'a> {
    at: Segment<'a>,
    stopped: &'a std::cell::RefCell<Option<String>>,
}

impl Strict<'_> {
    /// Records `at` as where reading stopped, unless a deeper value already did.
    fn stop_at<E>(&self, at: &Segment, e: E) -> E {
        self.stopped.borrow_mut().get_or_insert_with(|| at.path());
        e
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let at = Segment::Index(&self.at, items.len());
            let seed = Strict { at, stopped: self.stopped };
            match seq.next_element_seed(seed).map_err(|e| self.stop_at(&at, e))? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>().map_err(|e| self.stop_at(&self.at, e))? {
            let at = Segment::Key(&self.at, &key);
            if fields.contains_key(&key) {
                let e = serde::de::Error::custom(format_args!("duplicate field `{key}`"));
                return Err(self.stop_at(&at, e));
            }
            let seed = Strict { at, stopped: self.stopped };
            let value = map.next_value_seed(seed).map_err(|e| self.stop_at(&at, e))?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

/// Says what serde's messages about an enum's variant leave out: a step, a fault or a question
/// is an object with one key, its name, holding its fields.
fn explain(value: &Value, path: &serde_path_to_error::Path, problem: String) -> String {
    if problem.starts_with("invalid type: unit variant, expected") {
        let name = match path.iter().next_back() {
            Some(serde_path_to_error::Segment::Enum { variant }) => variant.as_str(),
            Some(serde_path_to_error::Segment::Map { key }) => key.as_str(),
            _ => "it",
        };
        return format!(
            "`{name}` has fields, so it is written as an object holding them, {{\"{name}\": {{...}}}}, not as its bare name"
        );
    }
    if !problem.contains("expected map with a single key") {
        return problem;
    }
    let mut at = Some(value);
    for segment in path.iter() {
        at = match segment {
            serde_path_to_error::Segment::Seq { index } => at.and_then(|v| v.get(index)),
            serde_path_to_error::Segment::Map { key } => at.and_then(|v| v.get(key)),
            _ => None,
        };
    }
    let keys = match at.and_then(Value::as_object) {
        Some(fields) if fields.is_empty() => "this one has none".to_string(),
        Some(fields) => {
            let keys: Vec<String> = fields.keys().map(|k| format!("`{k}`")).collect();
            format!("this one has {}", keys.join(", "))
        }
        None => "this one is not an object".to_string(),
    };
    format!(
        "expected an object with one key, the name of what it is, holding its fields (e.g. {{\"pause_worker\": {{\"worker\": \"A\", \"ticks\": 3}}}}); {keys}"
    )
}

fn error(at: &str, problem: String) -> ScenarioError {
    ScenarioError::new(if at.is_empty() { "." } else { at }, problem)
}

fn field_path(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}
