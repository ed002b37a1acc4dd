//! The `<fencelab-player>` custom element's attributes and the link parameter each one writes.
//! The element itself is JavaScript (`web/fencelab-player.js`), which cannot use this crate:
//! the tests below read the script and fail, naming the difference, when its attribute list or
//! its mapping differs from this one.

use fencelab_core::names::Named;
use serde::Serialize;

use crate::names::Param;

/// An attribute of `<fencelab-player>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum Attribute {
    /// A built-in story by name (`scenario=`).
    Story,
    /// The story's variant (`variant=`).
    Variant,
    /// The step shown first (`step=`).
    Step,
    /// The embed parts, default [`Embed::USUAL`](crate::Embed::USUAL) (`embed=`).
    Parts,
    /// `light`, `dark`, or [`BOOK_THEME`] to follow the mdBook theme around it (`theme=`).
    Theme,
    /// A scenario's JSON instead of a story (`custom=`, which carries it as base64url).
    Scenario,
    /// A recorded history's address on the embedding site (`history=`, relative to the page).
    History,
    /// The title the player shows (`title=`).
    Title,
    /// The player's page; its own fragment is kept where no attribute names another view.
    Src,
    /// The frame's accessible name.
    Label,
    /// The frame's first height in CSS pixels, before the page reports its own.
    Height,
}

impl Attribute {
    /// The link parameter this attribute writes; `None` for the element's own attributes.
    pub fn param(self) -> Option<Param> {
        match self {
            Attribute::Story => Some(Param::Scenario),
            Attribute::Variant => Some(Param::Variant),
            Attribute::Step => Some(Param::Step),
            Attribute::Parts => Some(Param::Embed),
            Attribute::Theme => Some(Param::Theme),
            Attribute::Scenario => Some(Param::Custom),
            Attribute::History => Some(Param::History),
            Attribute::Title => Some(Param::Title),
            Attribute::Src | Attribute::Label | Attribute::Height => None,
        }
    }

    /// The attribute that writes `param`, if one does.
    pub fn writing(param: Param) -> Option<Attribute> {
        Attribute::VARIANTS.iter().copied().find(|a| a.param() == Some(param))
    }
}

/// The `theme` attribute's value that follows the theme the reader picked in mdBook's menu.
pub const BOOK_THEME: &str = "book";

/// What the script in `js` declares differently from this crate: its observed attributes, its
/// attribute-to-parameter table (`PARAMETERS`), its default parts (`DEFAULT_PARTS`) and the
/// marker it adds to every link. Empty when they agree.
pub fn script_differences(js: &str) -> Vec<String> {
    let mut found = Vec::new();
    let observed = match declared(js, "static observedAttributes = [", ']') {
        Ok(text) => quoted(text),
        Err(e) => return vec![e],
    };
    let mine: Vec<&str> = Attribute::VARIANTS.iter().map(|a| a.name()).collect();
    for name in &observed {
        if !mine.contains(&name.as_str()) {
            found.push(format!("the element observes `{name}`, which the crate does not list"));
        }
    }
    for name in &mine {
        if !observed.iter().any(|o| o == name) {
            found.push(format!("the crate lists `{name}`, which the element does not observe"));
        }
    }
    let table = match declared(js, "const PARAMETERS = {", '}') {
        Ok(text) => quoted(text),
        Err(e) => return [found, vec![e]].concat(),
    };
    let pairs: Vec<(&str, &str)> =
        table.chunks(2).filter_map(|p| Some((p.first()?.as_str(), p.get(1)?.as_str()))).collect();
    if table.len() % 2 != 0 {
        found.push("the element's PARAMETERS table is not `attribute: 'parameter'` pairs".into());
    }
    for attribute in Attribute::VARIANTS {
        let theirs = pairs.iter().find(|(a, _)| *a == attribute.name()).map(|(_, p)| *p);
        let ours = attribute.param().map(Param::name);
        if theirs != ours {
            let say = |p: Option<&str>| p.map_or("no parameter".into(), |p| format!("`{p}`"));
            found.push(format!(
                "attribute `{}` writes {} in the crate but {} in the element",
                attribute.name(),
                say(ours),
                say(theirs)
            ));
        }
    }
    for (attribute, _) in &pairs {
        if Attribute::from_name(attribute).is_none() {
            found.push(format!("the element maps `{attribute}`, which the crate does not list"));
        }
    }
    let usual = crate::Embed::USUAL.value();
    match declared(js, "const DEFAULT_PARTS = ", ';').map(|t| t.trim().trim_matches('\'')) {
        Ok(parts) if parts == usual => {}
        Ok(parts) => {
            found.push(format!("the element's default parts are `{parts}`, the crate's `{usual}`"))
        }
        Err(e) => found.push(e),
    }
    let marker = crate::names::element_marker();
    if !js.contains(&format!("'{marker}'")) {
        found.push(format!("the element does not add '{marker}' to its links"));
    }
    if !js.contains(&format!("'{BOOK_THEME}'")) {
        found.push(format!("the element does not know the theme '{BOOK_THEME}'"));
    }
    // The stills darken under the same mdBook themes as the element's players.
    for theme in fencelab_core::picture::BOOK_DARK {
        if !js.contains(&format!("{theme}: 'dark'")) {
            found.push(format!("the element does not darken under the mdBook theme `{theme}`"));
        }
    }
    found
}

/// The text after `start` up to `end`.
fn declared<'a>(js: &'a str, start: &str, end: char) -> Result<&'a str, String> {
    let from = js.find(start).ok_or_else(|| format!("the element has no `{start}`"))?;
    let rest = &js[from + start.len()..];
    let to = rest.find(end).ok_or_else(|| format!("`{start}` is not closed by `{end}`"))?;
    Ok(&rest[..to])
}

/// The single-quoted strings in `text`, and the bare keys of an object literal, in order.
fn quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for item in text.split([',', ':']).map(str::trim).filter(|s| !s.is_empty()) {
        out.push(item.trim_matches('\'').to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = include_str!("../../web/fencelab-player.js");

    #[test]
    fn the_element_script_agrees_with_the_crate() {
        let differences = script_differences(SCRIPT);
        assert!(differences.is_empty(), "web/fencelab-player.js:\n{}", differences.join("\n"));
    }

    /// Each kind of drift in the script is named.
    #[test]
    fn a_script_that_drifted_is_named() {
        let check = |from: &str, to: &str, said: &str| {
            assert!(SCRIPT.contains(from), "the script no longer has {from}");
            let differences = script_differences(&SCRIPT.replacen(from, to, 1));
            assert!(differences.iter().any(|d| d.contains(said)), "{said}: {differences:?}");
        };
        check("'label', 'height'", "'label', 'height', 'autoplay'", "observes `autoplay`");
        check("'label', 'height'", "'label'", "lists `height`, which the element does not");
        check(
            "parts: 'embed'",
            "parts: 'embeds'",
            "`parts` writes `embed` in the crate but `embeds`",
        );
        check("title: 'title'", "title: 'title', speed: 'speed'", "maps `speed`");
        check("title: 'title'", "", "`title` writes `title` in the crate but no parameter");
        check("'controls,caption'", "'controls'", "default parts");
        check("'host=element'", "'host=frame'", "does not add 'host=element'");
        check("const PARAMETERS", "const PARAMS", "has no `const PARAMETERS = {`");
    }

    #[test]
    fn every_attribute_names_its_parameter_once() {
        let mut params: Vec<Param> = Attribute::VARIANTS.iter().filter_map(|a| a.param()).collect();
        let all = params.len();
        params.sort_by_key(|p| p.name());
        params.dedup();
        assert_eq!(params.len(), all, "two attributes write one parameter");
        assert_eq!(Attribute::writing(Param::Embed), Some(Attribute::Parts));
        assert_eq!(Attribute::writing(Param::Custom), Some(Attribute::Scenario));
        assert_eq!(Attribute::writing(Param::Policy), None);
    }
}
