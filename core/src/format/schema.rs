//! The scenario file's JSON Schema, derived from the types of [`model`](crate::format::model) by
//! `schemars`: their doc comments become descriptions, serde's defaults become `default`, and
//! objects that refuse unknown fields say `additionalProperties: false`. Built only with the
//! `schema` feature, so the page's wasm does not carry it.

use crate::format::model::Scenario;
use schemars::transform::{transform_subschemas, Transform};
use schemars::Schema;
use serde_json::Value;

/// The JSON Schema of a scenario file (draft 2020-12).
pub fn scenario_schema() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with_transform(Prose);
    settings.into_generator().into_root_schema_for::<Scenario>().to_value()
}

/// Turns doc comments into prose for a file's reader: lines of one paragraph joined, and
/// rustdoc's links to items (`` [`place`](crate::check::checkpoint::place) ``) kept as their
/// text, since a scenario's author reads them outside the Rust docs.
#[derive(Clone)]
struct Prose;

impl Transform for Prose {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(Value::String(text)) = schema.get_mut("description") {
            *text = prose(text);
        }
        transform_subschemas(self, schema);
    }
}

fn prose(doc: &str) -> String {
    let joined = doc
        .split("\n\n")
        .map(|paragraph| paragraph.split('\n').map(str::trim).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut out = String::with_capacity(joined.len());
    let mut rest = joined.as_str();
    while let Some(start) = rest.find("](crate::") {
        let Some(end) = rest[start..].find(')') else { break };
        let Some(open) = rest[..start].rfind('[') else { break };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..start]);
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::prose;

    #[test]
    fn prose_joins_lines_and_keeps_link_text() {
        assert_eq!(
            prose(
                "Faults injected (see\n[`Engine::inject`](crate::Engine::inject)), each.\n\nNext."
            ),
            "Faults injected (see `Engine::inject`), each.\n\nNext."
        );
        assert_eq!(
            prose("A [plain](https://example.org) link."),
            "A [plain](https://example.org) link."
        );
    }
}

/// The scenario file reference (`docs/scenario-reference.md`): every object of the schema with
/// its fields, whether each is required, its type, its default and an example, and every
/// variant of the enums. Examples are values the `examples` use (the built-in stories, which the
/// format does not know of, so the caller passes them in), found by walking their files
/// alongside the schema.
pub fn reference(examples: &[Scenario]) -> String {
    let schema = scenario_schema();
    let mut samples = Samples::default();
    for scenario in examples {
        let value = serde_json::to_value(scenario).expect("a scenario serializes");
        samples.walk(&schema, &schema, &value);
    }
    let mut out = String::from(REFERENCE_INTRO);
    let mut queue = vec![("Scenario".to_string(), &schema)];
    let mut seen = std::collections::BTreeSet::from(["Scenario".to_string()]);
    let mut i = 0;
    while i < queue.len() {
        let (name, def) = (queue[i].0.clone(), queue[i].1);
        i += 1;
        let mut refs = Vec::new();
        Section { schema: &schema, samples: &samples, out: &mut out, refs: &mut refs }
            .def(&name, def);
        for r in refs {
            if seen.insert(r.clone()) {
                queue.push((r.clone(), &schema["$defs"][&r]));
            }
        }
    }
    out
}

const REFERENCE_INTRO: &str = "\
# Scenario file reference

<!-- Generated from the scenario types (core/src/format/model.rs) by
`FENCELAB_BLESS=1 cargo test -p fencelab-tests --test it scenario_schema`: edit their doc
comments, not this file. -->

A scenario file is one JSON object. `//` line comments and `/* */` block comments are allowed.
Its JSON Schema, generated from the same types, is [`scenario.schema.json`](scenario.schema.json):
point an editor at it for completion and inline errors. `fencelab new` prints a commented
starting point that runs as it is; `fencelab show NAME` prints any built-in story.

Every object refuses fields it does not know, and a field may appear once. A field marked
optional may be left out, and then takes its default. Beyond its shape, a file is checked when
it is read: names must refer to resources, stores, workers and paths it declares, and sizes have
limits; each problem is reported with the path of its field (`workers[1].script[0].acquire.resource`).
Examples are taken from the built-in stories.

";

/// The first value each field and each variant has in the built-in stories, preferring one that
/// differs from the field's default.
#[derive(Default)]
struct Samples {
    /// By definition name and field or variant name: the value, and whether it is the default.
    first: std::collections::BTreeMap<(String, String), (Value, bool)>,
}

impl Samples {
    fn note(&mut self, def: &str, key: &str, value: &Value, default: Option<&Value>) {
        let is_default = default == Some(value);
        let entry = self.first.entry((def.to_string(), key.to_string()));
        let kept = entry.or_insert_with(|| (value.clone(), is_default));
        if kept.1 && !is_default {
            *kept = (value.clone(), false);
        }
    }

    fn get(&self, def: &str, key: &str) -> Option<&Value> {
        self.first.get(&(def.to_string(), key.to_string())).map(|(value, _)| value)
    }

    /// Records `value`'s fields, read as `node` says, under the definition `def`.
    fn walk(&mut self, root: &Value, node: &Value, value: &Value) {
        self.walk_in(root, "Scenario", node, value);
    }

    fn walk_in(&mut self, root: &Value, def: &str, node: &Value, value: &Value) {
        if let Some(name) = ref_name(node) {
            return self.walk_in(root, name, &root["$defs"][name], value);
        }
        if let Some(options) = node.get("anyOf").or(node.get("oneOf")).and_then(Value::as_array) {
            let option = options.iter().find(|option| matches(root, option, value));
            if let Some(option) = option {
                if let Some(key) = variant_name(option) {
                    self.note(def, key, value, None);
                }
                self.walk_in(root, def, option, value);
            }
            return;
        }
        match value {
            Value::Object(fields) => {
                for (key, field) in fields {
                    let Some(sub) = node.get("properties").and_then(|p| p.get(key)) else {
                        continue;
                    };
                    self.note(def, key, field, sub.get("default"));
                    self.walk_in(root, def, sub, field);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk_in(root, def, &node["items"], item);
                }
            }
            _ => {}
        }
    }
}

/// The definition a `$ref` points at.
fn ref_name(node: &Value) -> Option<&str> {
    node.get("$ref")?.as_str()?.strip_prefix("#/$defs/")
}

/// The name of an enum variant's schema: its constant, its one key, or its `kind` tag.
fn variant_name(option: &Value) -> Option<&str> {
    if let Some(name) = option.get("const").and_then(Value::as_str) {
        return Some(name);
    }
    if let Some(kind) = option.pointer("/properties/kind/const").and_then(Value::as_str) {
        return Some(kind);
    }
    let required = option.get("required")?.as_array()?;
    match (required.as_slice(), option.get("properties")?.as_object()?.len()) {
        ([only], 1) => only.as_str(),
        _ => None,
    }
}

/// Whether `value` is written as `option` describes it, as far as telling the alternatives of
/// an enum or an optional field apart needs.
fn matches(root: &Value, option: &Value, value: &Value) -> bool {
    if let Some(name) = ref_name(option) {
        return matches(root, &root["$defs"][name], value);
    }
    if let Some(options) = option.get("oneOf").or(option.get("anyOf")).and_then(Value::as_array) {
        return options.iter().any(|o| matches(root, o, value));
    }
    if option.get("type") == Some(&Value::String("null".into())) {
        return value.is_null();
    }
    if let Some(constant) = option.get("const") {
        return constant == value;
    }
    match (variant_name(option), value) {
        (Some(kind), Value::Object(fields)) if option.pointer("/properties/kind").is_some() => {
            fields.get("kind").and_then(Value::as_str) == Some(kind)
        }
        (Some(name), Value::Object(fields)) => fields.contains_key(name),
        (Some(_), _) => false,
        (None, value) => !value.is_null(),
    }
}

/// Writes one definition's section and collects the definitions it refers to.
struct Section<'a> {
    schema: &'a Value,
    samples: &'a Samples,
    out: &'a mut String,
    refs: &'a mut Vec<String>,
}

impl Section<'_> {
    fn def(&mut self, name: &str, def: &Value) {
        self.out.push_str(&format!("## {name}\n\n"));
        self.paragraph(def);
        if def.get("properties").is_some() {
            self.fields(name, def);
            return;
        }
        let Some(options) = def.get("oneOf").and_then(Value::as_array) else { return };
        if options.iter().all(|o| o.get("const").is_some()) {
            self.out.push_str("One of:\n\n");
            for option in options {
                let value = option["const"].as_str().unwrap_or_default();
                let text = description(option);
                self.out.push_str(&format!("- `\"{value}\"`: {text}\n"));
            }
            self.out.push('\n');
            return;
        }
        for option in options {
            let Some(variant) = variant_name(option) else { continue };
            self.out.push_str(&format!("### `{variant}`\n\n"));
            self.paragraph(option);
            if option.get("const").is_some() {
                self.out.push_str(&format!(
                    "Written as the string `\"{variant}\"`; it has no fields.\n\n"
                ));
                continue;
            }
            if option.pointer("/properties/kind").is_some() {
                self.out.push_str(&format!(
                    "Written with `\"kind\": \"{variant}\"` beside its fields.\n\n"
                ));
                self.fields(name, option);
            } else {
                let inner = &option["properties"][variant];
                let (inner_name, inner) = match ref_name(inner) {
                    Some(r) => (r, &self.schema["$defs"][r]),
                    None => (name, inner),
                };
                if inner.get("properties").is_some() {
                    self.fields(inner_name, inner);
                } else {
                    let kind = self.type_name(inner);
                    self.out.push_str(&format!("Holds {kind}.\n\n"));
                }
            }
            let example = self.samples.get(name, variant).cloned();
            if let Some(example) = example.or_else(|| made_up(self.schema, option)) {
                self.out.push_str(&format!("Example: `{}`\n\n", compact(&example)));
            }
        }
    }

    fn paragraph(&mut self, node: &Value) {
        let text = description(node);
        if !text.is_empty() {
            self.out.push_str(&format!("{text}\n\n"));
        }
    }

    /// The fields of an object: the required ones in the order the type declares them, then the
    /// optional ones by name.
    fn fields(&mut self, def_name: &str, def: &Value) {
        let Some(properties) = def.get("properties").and_then(Value::as_object) else { return };
        let required: Vec<&str> = def
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut names: Vec<&str> = required
            .iter()
            .copied()
            .filter(|n| properties.contains_key(*n) && *n != "kind")
            .collect();
        names.extend(properties.keys().map(String::as_str).filter(|n| !required.contains(n)));
        for field in names {
            let node = &properties[field];
            let mut line = format!("- `{field}` ({}", self.type_name(node));
            if required.contains(&field) {
                line.push_str(", required");
            } else {
                match node.get("default") {
                    Some(default) => {
                        line.push_str(&format!(", optional, default `{}`", compact(default)))
                    }
                    None => line.push_str(", optional"),
                }
            }
            line.push_str(&format!("). {}", description(node)));
            let example = node
                .pointer("/examples/0")
                .or_else(|| self.samples.get(def_name, field))
                .cloned()
                .and_then(shorten)
                .or_else(|| made_up(self.schema, node).and_then(shorten));
            if let Some(example) = example {
                line.push_str(&format!(" Example: `\"{field}\": {}`.", compact(&example)));
            }
            self.out.push_str(line.trim_end());
            self.out.push('\n');
        }
        self.out.push('\n');
    }

    /// A field's type in words, with a link to the section of a definition it refers to.
    fn type_name(&mut self, node: &Value) -> String {
        if let Some(name) = ref_name(node) {
            self.refs.push(name.to_string());
            return format!("[{name}](#{})", name.to_lowercase());
        }
        if let Some(options) = node.get("anyOf").and_then(Value::as_array) {
            let named: Vec<String> = options
                .iter()
                .filter(|o| o.get("type") != Some(&Value::String("null".into())))
                .map(|o| self.type_name(o))
                .collect();
            return named.join(" or ");
        }
        let kinds: Vec<&str> = match node.get("type") {
            Some(Value::String(kind)) => vec![kind.as_str()],
            Some(Value::Array(kinds)) => {
                kinds.iter().filter_map(Value::as_str).filter(|k| *k != "null").collect()
            }
            _ => Vec::new(),
        };
        match kinds.first().copied() {
            Some("string") => "text".to_string(),
            Some("boolean") => "true or false".to_string(),
            Some("integer") => match (node.get("minimum"), node.get("maximum")) {
                (Some(min), Some(max)) => format!("integer from {min} to {max}"),
                (Some(min), None) if min == 0 => "integer ≥ 0".to_string(),
                (Some(min), None) => format!("integer ≥ {min}"),
                _ => "integer".to_string(),
            },
            Some("array") => {
                let items = self.type_name(&node["items"]);
                let mut words = format!("list of {items}");
                if let Some(min) = node.get("minItems") {
                    words.push_str(&format!(", at least {min}"));
                }
                words
            }
            Some("object") => {
                let keys = node.get("propertyNames").map(|k| self.type_name(k));
                let values = node.get("additionalProperties").map(|v| self.type_name(v));
                match (keys, values) {
                    (Some(keys), Some(values)) => format!("map from {keys} to {values}"),
                    _ => "object".to_string(),
                }
            }
            _ => "any value".to_string(),
        }
    }
}

fn description(node: &Value) -> &str {
    node.get("description").and_then(Value::as_str).unwrap_or_default()
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).expect("a JSON value")
}

/// An example short enough to read on one line: the value, or a list cut to its first item.
fn shorten(value: Value) -> Option<Value> {
    let fits = |v: &Value| compact(v).len() <= 100;
    match value {
        value if fits(&value) => Some(value),
        Value::Array(items) => items.into_iter().next().filter(fits).map(|i| Value::Array(vec![i])),
        _ => None,
    }
}

/// An example built from the schema where no story has one: a field's own example or default,
/// the first variant of an enum, or an object of its required fields.
fn made_up(root: &Value, node: &Value) -> Option<Value> {
    if let Some(example) = node.pointer("/examples/0") {
        return Some(example.clone());
    }
    if let Some(name) = ref_name(node) {
        return made_up(root, &root["$defs"][name]);
    }
    if let Some(options) = node.get("oneOf").and_then(Value::as_array) {
        return options.iter().find_map(|o| made_up(root, o));
    }
    if let Some(constant) = node.get("const") {
        return Some(constant.clone());
    }
    if let Some(default) = node.get("default") {
        return Some(default.clone());
    }
    let properties = node.get("properties")?.as_object()?;
    let mut object = serde_json::Map::new();
    for name in node.get("required")?.as_array()?.iter().filter_map(Value::as_str) {
        object.insert(name.to_string(), made_up(root, &properties[name])?);
    }
    Some(Value::Object(object))
}
