//! The layering of `fencelab-core`, written down once ([`LAYERS`]) and checked against every
//! `crate::` and `super::` path in `core/src`, read with `syn`.
//!
//! A module may use the modules its row lists and, through them, whatever those may use; it
//! never uses a module above it or beside it. Code under `#[cfg(test)]` is not counted: a unit
//! test may build its fixtures from any part of the crate, as the integration tests do. A parent
//! reaching its children by a relative path (`mod child; use child::X;`) is how a folder is
//! built and is not counted either.

use proc_macro2::TokenTree;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Each of the crate's top-level modules (a folder under `core/src`, or a file beside `lib.rs`)
/// and the modules it may use directly. This table is the one statement of the layering;
/// ARCHITECTURE.md describes it in words.
const LAYERS: &[(&str, &[&str])] = &[
    // Vocabulary every layer shares: memory estimates (the `HeapSize` trait, whose impls sit
    // beside their types), logical time and a run's steps, names, small maps, the fingerprint hasher.
    ("memory", &[]),
    ("clock", &["memory"]),
    ("ids", &["memory"]),
    ("names", &[]),
    ("maps", &["memory"]),
    ("fingerprint", &[]),
    // The building blocks, then the scenario format and the invariants' names that it uses.
    ("fence", &["clock", "ids", "maps", "memory", "names"]),
    ("invariant", &["clock", "memory", "names"]),
    ("format", &["fence", "invariant"]),
    // What happened: the one thing the simulator, the checker and the diagram exchange.
    ("history", &["fence", "format"]),
    // Playing and judging, each knowing only the history.
    ("sim", &["history", "fingerprint"]),
    ("check", &["history"]),
    ("draw", &["history"]),
    ("stories", &["format"]),
    // Drivers: the recorder plays the simulator and feeds the checker; the explorer and the
    // conformance kit drive those and the recorder.
    ("record", &["sim", "check"]),
    ("drive", &["record", "stories"]),
    // Pictures of a played run: the layout every front draws from, and stills.
    ("picture", &["record", "draw"]),
    // The crate's entry points, which gather everything.
    ("error", &["drive"]),
    ("prelude", &["drive", "error"]),
];

/// The crate root declares the modules and re-exports their items; it may use all of them.
const ROOT: &str = "lib";

/// A `crate::` or `super::` path in a file under `core/src`, resolved to the module it names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Reference {
    /// The file, relative to `core/src`, e.g. `format/model.rs`.
    file: String,
    /// The module that file belongs to, e.g. `["format", "model"]`.
    from: Vec<String>,
    /// The module path the reference names, from the crate root, e.g. `["check", "invariant",
    /// "InvariantKind"]`.
    to: Vec<String>,
    /// The path as written, for the message.
    written: String,
}

/// The references of one file to one module that the table forbids.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Violation {
    file: String,
    /// The paths as written.
    written: BTreeSet<String>,
    rule: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paths: Vec<String> = self.written.iter().map(|w| format!("`{w}`")).collect();
        write!(f, "{} uses {}, but {}", self.file, paths.join(", "), self.rule)
    }
}

/// The module path of a file under `core/src`: `lib.rs` is the root, `a/mod.rs` is `a`.
fn module_of(file: &str) -> Vec<String> {
    let path = file.strip_suffix(".rs").unwrap_or(file);
    let mut parts: Vec<String> = path.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == ROOT) {
        parts.pop();
    }
    parts
}

/// Collects the `crate::` and `super::` paths of one file, skipping `#[cfg(test)]` items.
struct Collector<'a> {
    file: &'a str,
    /// The module the visitor is in: the file's, plus any inline `mod` it has entered.
    module: Vec<String>,
    found: Vec<Reference>,
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .meta
                .require_list()
                .is_ok_and(|list| list.tokens.clone().into_iter().any(|t| t.to_string() == "test"))
    })
}

impl Collector<'_> {
    /// Records `segments` if it starts at the crate root or a parent module.
    fn record(&mut self, segments: &[String]) {
        let mut to = match segments.first().map(String::as_str) {
            Some("crate") => Vec::new(),
            Some("super") => self.module.clone(),
            _ => return,
        };
        let mut rest = segments;
        if rest[0] == "crate" {
            rest = &rest[1..];
        }
        while let Some((first, tail)) = rest.split_first() {
            match first.as_str() {
                "super" => {
                    to.pop();
                }
                "self" => {}
                _ => break,
            }
            rest = tail;
        }
        to.extend(rest.iter().cloned());
        self.found.push(Reference {
            file: self.file.to_string(),
            from: self.module.clone(),
            to,
            written: segments.join("::"),
        });
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            // `use a::b::{self, ..}` names `a::b` itself.
            syn::UseTree::Name(n) if n.ident == "self" => self.record(&prefix.clone()),
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.record(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.record(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.record(&prefix.clone()),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// Finds `crate :: a :: b` and `super :: a` inside a macro's tokens, which syn leaves
    /// unparsed (`format!("{}", crate::sim::MAX_RUN_STEPS)`).
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let tokens: Vec<_> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.record(&segments);
                    }
                    i = j;
                    continue;
                }
                // Paths written in strings: serde's and schemars' `with = "crate::..."`.
                TokenTree::Literal(literal) => {
                    let text = literal.to_string();
                    let text = text.trim_matches('"');
                    if text.starts_with("crate::") || text.starts_with("super::") {
                        let segments: Vec<String> = text.split("::").map(str::to_string).collect();
                        self.record(&segments);
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.record(&segments);
        syn::visit::visit_path(self, path);
    }

    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {
        // `pub(crate)` and `pub(super)` say who may see an item, not what it uses.
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        if attr.path().is_ident("doc") {
            return;
        }
        // `#[cfg_attr(feature = "schema", schemars(range(max = crate::...)))]` and the like.
        if let syn::Meta::List(list) = &attr.meta {
            self.tokens(list.tokens.clone());
        }
        if let syn::Meta::NameValue(pair) = &attr.meta {
            self.visit_expr(&pair.value);
        }
    }

    fn visit_lit_str(&mut self, literal: &'ast syn::LitStr) {
        let text = literal.value();
        if text.starts_with("crate::") || text.starts_with("super::") {
            let segments: Vec<String> = text.split("::").map(str::to_string).collect();
            self.record(&segments);
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }
}

/// The `crate::` and `super::` references of one file's source.
fn references(file: &str, source: &str) -> Result<Vec<Reference>, String> {
    let ast = syn::parse_file(source).map_err(|e| format!("{file}: cannot parse: {e}"))?;
    let mut collector = Collector { file, module: module_of(file), found: Vec::new() };
    collector.visit_file(&ast);
    Ok(collector.found)
}

/// The layer table as a map from each module to everything it may use, directly or not.
fn allowed() -> Result<BTreeMap<&'static str, BTreeSet<&'static str>>, String> {
    let direct: BTreeMap<_, _> = LAYERS.iter().copied().collect();
    let mut closed = BTreeMap::new();
    for (name, _) in LAYERS {
        let mut seen = BTreeSet::new();
        let mut todo = vec![*name];
        while let Some(next) = todo.pop() {
            let uses = direct
                .get(next)
                .ok_or_else(|| format!("the layer table names `{next}`, which has no row"))?;
            for used in *uses {
                if *used == *name {
                    return Err(format!("the layer table lets `{name}` use itself through others"));
                }
                if seen.insert(*used) {
                    todo.push(used);
                }
            }
        }
        closed.insert(*name, seen);
    }
    Ok(closed)
}

/// The references among `references` that the table forbids.
fn violations(references: &[Reference]) -> Result<Vec<Violation>, String> {
    let allowed = allowed()?;
    let mut found: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for r in references {
        let Some(from) = r.from.first() else { continue };
        let to = r.to.first().filter(|to| is_module(&allowed, to)).map_or(ROOT, |t| t);
        if from == to {
            continue;
        }
        let rule = match allowed.get(from.as_str()) {
            None => format!("`{from}` has no row in the layer table (core/tests/layering.rs)"),
            Some(uses) if uses.contains(to) => continue,
            Some(_) if to == ROOT => {
                "an item of the crate root is a re-export: name the module it comes from instead"
                    .into()
            }
            Some(_) => {
                let row = LAYERS.iter().find(|(name, _)| name == from).map_or(&[][..], |r| r.1);
                format!("`{from}` may use only {}, not `{to}`", list(row))
            }
        };
        found.entry((r.file.clone(), rule)).or_default().insert(r.written.clone());
    }
    Ok(found.into_iter().map(|((file, rule), written)| Violation { file, written, rule }).collect())
}

/// Whether `name` is a module of the table, rather than an item the crate root re-exports.
fn is_module(allowed: &BTreeMap<&'static str, BTreeSet<&'static str>>, name: &str) -> bool {
    allowed.contains_key(name)
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        return "no other module".into();
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    format!("{} (and what they may use)", quoted.join(", "))
}

/// The files under `root`, relative to it, with `/` between folders.
fn rust_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(dir) = todo.pop() {
        let entries = std::fs::read_dir(root.join(&dir)).expect("core/src is readable");
        for entry in entries {
            let entry = entry.expect("core/src is readable");
            let relative = dir.join(entry.file_name());
            if entry.file_type().expect("core/src is readable").is_dir() {
                todo.push(relative);
            } else if relative.extension().is_some_and(|e| e == "rs") {
                let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
                files.push(parts.join("/"));
            }
        }
    }
    files.sort();
    files
}

/// The file a module path lands in: its longest prefix that is a file of the crate.
fn file_of(files: &BTreeSet<String>, path: &[String]) -> Option<String> {
    (0..=path.len()).rev().find_map(|n| {
        let module = path[..n].join("/");
        if n == 0 {
            return files.contains("lib.rs").then(|| "lib.rs".to_string());
        }
        [format!("{module}.rs"), format!("{module}/mod.rs")].into_iter().find(|f| files.contains(f))
    })
}

/// The circles in a graph: its strongly connected components of more than one node, each sorted.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm, written out with an explicit stack of (node, next edge) frames.
    let nodes: BTreeSet<&String> =
        edges.keys().chain(edges.values().flat_map(|to| to.iter())).collect();
    let mut index: BTreeMap<&String, usize> = BTreeMap::new();
    let mut low: BTreeMap<&String, usize> = BTreeMap::new();
    let mut on_stack = BTreeSet::new();
    let mut stack = Vec::new();
    let mut found = Vec::new();
    let empty = BTreeSet::new();
    for start in &nodes {
        if index.contains_key(start) {
            continue;
        }
        let mut frames: Vec<(&String, Vec<&String>)> = Vec::new();
        let visit = |node: &'_ String| edges.get(node).unwrap_or(&empty).iter().rev().collect();
        index.insert(start, index.len());
        low.insert(start, index[start]);
        stack.push(*start);
        on_stack.insert(*start);
        frames.push((start, visit(start)));
        while let Some((node, next)) = frames.last_mut() {
            let node = *node;
            if let Some(to) = next.pop() {
                if !index.contains_key(to) {
                    index.insert(to, index.len());
                    low.insert(to, index[to]);
                    stack.push(to);
                    on_stack.insert(to);
                    frames.push((to, visit(to)));
                } else if on_stack.contains(to) {
                    low.insert(node, low[node].min(index[to]));
                }
                continue;
            }
            frames.pop();
            if let Some((parent, _)) = frames.last() {
                low.insert(parent, low[parent].min(low[node]));
            }
            if low[node] == index[node] {
                let mut component = Vec::new();
                while let Some(top) = stack.pop() {
                    on_stack.remove(top);
                    component.push(top.clone());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    found.push(component);
                }
            }
        }
    }
    found.sort();
    found
}

/// The file-to-file and folder-to-folder edges of `references`.
fn graphs(
    files: &BTreeSet<String>,
    references: &[Reference],
) -> (BTreeMap<String, BTreeSet<String>>, BTreeMap<String, BTreeSet<String>>) {
    let (mut by_file, mut by_module) = (BTreeMap::new(), BTreeMap::new());
    for r in references {
        if let Some(to) = file_of(files, &r.to).filter(|to| *to != r.file) {
            by_file.entry(r.file.clone()).or_insert_with(BTreeSet::new).insert(to);
        }
        if let (Some(from), Some(to)) = (r.from.first(), r.to.first()) {
            if from != to {
                by_module.entry(from.clone()).or_insert_with(BTreeSet::new).insert(to.clone());
            }
        }
    }
    (by_file, by_module)
}

fn crate_references() -> (BTreeSet<String>, Vec<Reference>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = rust_files(&root);
    let mut all = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(root.join(file)).expect("a source file is readable");
        all.extend(references(file, &source).unwrap_or_else(|e| panic!("{e}")));
    }
    (files.into_iter().collect(), all)
}

#[test]
fn every_import_follows_the_layer_table() {
    let (_, references) = crate_references();
    let found = violations(&references).unwrap_or_else(|e| panic!("{e}"));
    let lines: Vec<String> = found.iter().map(Violation::to_string).collect();
    assert!(lines.is_empty(), "{} imports break the layering:\n{}", lines.len(), lines.join("\n"));
}

#[test]
fn no_files_or_folders_import_each_other_in_a_circle() {
    let (files, references) = crate_references();
    let (by_file, by_module) = graphs(&files, &references);
    let mut found: Vec<String> = Vec::new();
    for circle in circles(&by_module) {
        found.push(format!("folders {}", circle.join(", ")));
    }
    for circle in circles(&by_file) {
        found.push(format!("files {}", circle.join(", ")));
    }
    assert!(found.is_empty(), "import circles in core/src:\n{}", found.join("\n"));
}

#[test]
fn every_module_of_the_crate_has_a_row() {
    let (files, _) = crate_references();
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(f).first().cloned().unwrap_or_else(|| ROOT.to_string()))
        .filter(|m| m != ROOT)
        .collect();
    let rows: BTreeSet<String> = LAYERS.iter().map(|(name, _)| name.to_string()).collect();
    assert_eq!(modules, rows, "the layer table and core/src's modules differ");
}

/// The check itself: a low module importing a high one, written as source, is reported with
/// its file, its path and the rule.
#[test]
fn a_wrong_import_is_reported() {
    let source = r#"
        use crate::clock::Tick;
        use crate::{fence::register::WriteRequest, sim::Simulator};
        pub fn limit() -> usize { crate::record::MAX_RUN_STEPS + 1 }
        pub fn text() -> String { format!("{}", crate::check::OPS_REMEMBERED) }
        pub struct Wire { #[serde(with = "crate::sim::codec")] pub at: u64 }
        #[cfg(test)]
        mod tests { use crate::stories::library; }
    "#;
    let found = references("format/model.rs", source).unwrap();
    let found: Vec<String> = violations(&found).unwrap().iter().map(Violation::to_string).collect();
    assert_eq!(
        found,
        [
            "format/model.rs uses `crate::check::OPS_REMEMBERED`, but `format` may use only \
             `fence`, `invariant` (and what they may use), not `check`",
            "format/model.rs uses `crate::record::MAX_RUN_STEPS`, but `format` may use only \
             `fence`, `invariant` (and what they may use), not `record`",
            "format/model.rs uses `crate::sim::Simulator`, `crate::sim::codec`, but `format` may \
             use only `fence`, `invariant` (and what they may use), not `sim`",
        ]
    );
    // `super::super::` from a nested file climbs to the crate root, then down.
    let climbed = references("sim/compiled.rs", "use super::super::record::Engine;").unwrap();
    assert_eq!(climbed[0].to, ["record", "Engine"]);
    assert_eq!(violations(&climbed).unwrap().len(), 1);
}

#[test]
fn a_circle_is_found() {
    let edge = |a: &str, b: &str| (a.to_string(), BTreeSet::from([b.to_string()]));
    let graph = BTreeMap::from([edge("a.rs", "b.rs"), edge("b.rs", "c.rs"), edge("c.rs", "a.rs")]);
    assert_eq!(circles(&graph), [["a.rs", "b.rs", "c.rs"]]);
    let graph = BTreeMap::from([edge("a.rs", "b.rs"), edge("b.rs", "c.rs")]);
    assert!(circles(&graph).is_empty());
}
