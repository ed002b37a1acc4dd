//! The still as text: an SVG drawn from the page's own layout, and the figure around it. The
//! SVG carries its own styles, so it reads the same in any page, in a feed and on paper.

use std::fmt::Write;

use super::layout::{
    clip, num, ArrowGeom, Fit, MarkGeom, SpanGeom, BOTTOM, CHAR_W, GUTTER, MONO_W, ROW,
};
use super::{Played, Scheme, Still};
use crate::draw::LaneKind;

/// The band above the lanes that names them.
const HEAD: f64 = 30.0;

/// How far right of its mark a mark's label starts, as on the page.
const LABEL_DX: f64 = 16.0;

/// The light palette, then the dark one: the page's colours (`web/style.css`), as custom
/// properties on the picture so a page's own styles leave them alone.
const LIGHT: &str = "--bg:#fff;--text:#17202b;--muted:#5a6574;--line:#c9d0da;--ok:#13703a;\
--ok-bg:#e4f4ea;--bad:#b42318;--bad-bg:#fdebe9;--warn:#a15c00;--warn-bg:#fff3dc;--grant:#5b3fc4;\
--write:#2455c3;--effect:#b86a00;--lease:#2f9e5b;--belief:#5b7fd1;--pause:#8a94a3;\
--now:rgba(36,85,195,.09)";
const DARK: &str = "--bg:#161c23;--text:#e5e9ee;--muted:#9ba6b3;--line:#3a444f;--ok:#63d294;\
--ok-bg:#12301f;--bad:#ff8b80;--bad-bg:#3b1714;--warn:#f2b450;--warn-bg:#382808;--grant:#a591ff;\
--write:#7da2ff;--effect:#f2b450;--lease:#4cc27d;--belief:#8fa9ec;--pause:#7d8794;\
--now:rgba(125,162,255,.12)";

/// The shapes' styles, under the picture's class so they touch nothing else on the page.
const SHAPES: &str = ".fl-still{background:var(--bg);color:var(--text);\
font:12px system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}\
.fl-still .bg{fill:var(--bg)}.fl-still text{fill:var(--text)}\
.fl-still .lane-line{stroke:var(--line)}.fl-still .tick{fill:var(--muted);text-anchor:end}\
.fl-still .head{font-weight:600}.fl-still .now{fill:var(--now)}\
.fl-still .wire{fill:none;stroke:currentColor;stroke-width:2}.fl-still .grant{color:var(--grant)}\
.fl-still .write{color:var(--write)}.fl-still .effect{color:var(--effect)}\
.fl-still .flying .wire,.fl-still .lost .wire{stroke-dasharray:5 4}\
.fl-still .pill rect{fill:var(--bg);stroke:currentColor}.fl-still .pill text{fill:currentColor;font-weight:600;text-anchor:middle}\
.fl-still .forged .pill rect{stroke-dasharray:3 2}\
.fl-still .arrow-label,.fl-still .note{fill:var(--muted)}.fl-still .note{font-family:ui-monospace,Menlo,monospace;font-size:11px}\
.fl-still .mark circle{fill:var(--bg);stroke:var(--muted);stroke-width:2}\
.fl-still .ok circle{fill:var(--ok-bg);stroke:var(--ok)}.fl-still .bad circle{fill:var(--bad-bg);stroke:var(--bad)}\
.fl-still .violation circle{fill:var(--bad);stroke:var(--bad)}.fl-still .violation .sym{fill:var(--bg)}\
.fl-still .bad .label{fill:var(--bad)}.fl-still .violation .label{fill:var(--bad);font-weight:700}\
.fl-still .possible circle{fill:var(--warn-bg);stroke:var(--warn)}.fl-still .possible .sym{fill:var(--warn)}\
.fl-still .possible .label{fill:var(--warn)}\
.fl-still .sym{text-anchor:middle;font-size:10px;font-weight:700}\
.fl-still .lease{fill:var(--lease)}.fl-still .validity{fill:var(--lease);opacity:.25}\
.fl-still .belief{fill:var(--belief)}.fl-still .pause{fill:var(--pause);opacity:.55}";

/// The picture's styles. Every still on a page brings the same rules, so each scheme is
/// scoped by the picture's own class (`fl-auto`, `fl-light`, `fl-dark`, `fl-book`) and stills
/// of different schemes side by side keep their own colours. Print is always light, and its
/// rule outranks the book's (0,4,0 against 0,3,1): paper is white whatever the screen's scheme. A picture printed
/// wider than the paper is scaled down to it, and a figure is kept on one page where it fits.
fn style() -> String {
    let book: Vec<String> =
        super::BOOK_DARK.iter().map(|theme| format!("html.{theme} .fl-still.fl-book")).collect();
    format!(
        "<style>.fl-still{{{LIGHT}}}.fl-still.fl-dark{{{DARK}}}\
         @media (prefers-color-scheme:dark){{.fl-still.fl-auto{{{DARK}}}}}{book}{{{DARK}}}\
         @media print{{:root .fl-still.fl-still.fl-still{{{LIGHT};max-width:100%;height:auto}}\
         .fencelab-still{{break-inside:avoid}}.fencelab-still .fl-scroll{{mask-image:none}}}}{SCROLL}{SHAPES}</style>",
        book = book.join(","),
    )
}

/// A figure's picture cut at the right by a narrow screen fades out there until it is scrolled to
/// its end, so a reader sees there is more; the fade follows the scrolling, without script.
/// `&lt;` stands for `<`: the style sits in an SVG, read as XML or as an HTML page's foreign
/// content, where a bare `<` would start a tag.
const SCROLL: &str =
    "@property --fl-fade{syntax:\"&lt;length&gt;\";inherits:false;initial-value:0px}\
@keyframes fl-fade{0%,90%{--fl-fade:2rem}to{--fl-fade:0px}}\
.fencelab-still .fl-scroll{mask-image:linear-gradient(to left,transparent,#000 var(--fl-fade));\
animation-name:fl-fade;animation-timing-function:linear;animation-fill-mode:both;\
animation-timeline:scroll(self inline)}";

/// The class that picks a picture's colours.
fn scheme_class(scheme: Scheme) -> &'static str {
    match scheme {
        Scheme::Auto => "fl-auto",
        Scheme::Light => "fl-light",
        Scheme::Dark => "fl-dark",
        Scheme::Book => "fl-book",
    }
}

/// `text` safe inside a double-quoted attribute or as element text, in HTML and in SVG.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The tone a mark is drawn in: accepted, refused or broken, else neutral.
fn tone(m: &MarkGeom) -> &'static str {
    match (m.kind.as_str(), m.possible) {
        ("violation", true) => "possible",
        ("violation", false) => "violation",
        ("applied" | "delivered", _) => "ok",
        ("rejected" | "dropped", _) => "bad",
        _ => "",
    }
}

/// A mark's symbol inside its circle, so the tone is never the only cue (as the page's glyphs).
fn symbol(m: &MarkGeom) -> &'static str {
    match (m.kind.as_str(), m.possible) {
        ("violation", true) => "?",
        ("violation", false) => "!",
        ("applied" | "delivered" | "checked", _) => "✓",
        ("rejected" | "dropped", _) => "✗",
        ("granted" | "renewed", _) => "g",
        ("expired" | "released", _) => "–",
        ("unknown", _) => "?",
        ("lost", _) => "×",
        _ => "·",
    }
}

/// The SVG of `played` after `position` steps: what has happened so far, messages in flight
/// where they are, the current step's row shaded.
///
/// It ends a little below what has happened: the rest of a long run would be blank lanes. With
/// `fluid` it shrinks to the width it is given (a picture on its own); inside a figure it keeps
/// its size and the figure scrolls.
pub(super) fn diagram(played: &Played, position: usize, scheme: Scheme, fluid: bool) -> String {
    let layout = &played.layout;
    let lanes = &played.diagram.lanes;
    let fit = Fit::natural(lanes.len());
    let now = position.checked_sub(1).and_then(|i| played.timeline.get(i)).map_or(0, |r| r.at.0);
    let now_y = layout.now_y(position);
    let drawn = layout
        .marks
        .iter()
        .filter(|m| m.step < position)
        .map(|m| m.y)
        .chain(
            layout
                .arrows
                .iter()
                .filter(|a| a.sent_step < position)
                .map(|a| a.y2.min(now_y + 2.0 * ROW)),
        )
        .fold(now_y, f64::max);
    let (width, height) = (fit.width(), (drawn + BOTTOM + ROW).min(layout.height) + HEAD);
    let mut out = String::new();
    let title =
        format!("{}: the diagram after step {position} of {}", played.title(), played.len());
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"fl-still {class}\" role=\"img\" \
         width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" aria-label=\"{t}\" \
         data-position=\"{position}\"{fluid}>{style}\
         <rect class=\"bg\" width=\"{w}\" height=\"{h}\"/><g transform=\"translate(0 {head})\">",
        class = scheme_class(scheme),
        w = num(width),
        h = num(height),
        t = escape(&title),
        fluid = if fluid { " style=\"max-width:100%;height:auto\"" } else { "" },
        style = style(),
        head = num(HEAD),
    );
    head_names(&mut out, played, fit);
    for (lane, x) in lanes.iter().zip(&layout.lane_x) {
        let _ = write!(
            out,
            "<line class=\"lane-line{store}\" x1=\"{x}\" x2=\"{x}\" y1=\"-4\" y2=\"{bottom}\"/>",
            x = num(fit.x(*x)),
            store = if lane.kind == LaneKind::Store { " store" } else { "" },
            bottom = num(layout.height - 10.0),
        );
    }
    if position > 0 {
        let _ = write!(
            out,
            "<rect class=\"now\" x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            num(now_y - ROW / 2.0),
            num(width),
            num(ROW)
        );
    }
    for (y, t) in layout.ticks.iter().filter(|(y, _)| position > 0 && *y <= now_y) {
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{}\" y=\"{}\">t={t}</text>",
            num(GUTTER - 8.0),
            num(y + 4.0)
        );
    }
    for span in layout.spans.iter().filter(|s| s.start_step < position) {
        span_svg(&mut out, span, if span.ongoing(position) { now_y } else { span.y2 }, fit);
    }
    for arrow in layout.arrows.iter().filter(|a| a.sent_step < position) {
        arrow_svg(&mut out, arrow, arrow.progress(position, now).unwrap_or(1.0), fit);
    }
    for mark in layout.marks.iter().filter(|m| m.step < position) {
        mark_svg(&mut out, mark, fit);
    }
    out.push_str("</g></svg>");
    out
}

/// The lanes' names, above their lines (`HEAD` pixels above the drawing's origin).
fn head_names(out: &mut String, played: &Played, fit: Fit) {
    for (lane, x) in played.diagram.lanes.iter().zip(&played.layout.lane_x) {
        let name =
            clip(&lane.label, fit.lane_w - 8.0, CHAR_W).unwrap_or_else(|| lane.label.clone());
        let _ = write!(
            out,
            "<text class=\"head\" x=\"{}\" y=\"-10\" text-anchor=\"middle\">{}</text>",
            num(fit.x(*x)),
            escape(&name)
        );
    }
}

/// The lanes' names again, in a strip that stays at the top of the figure's scrolling box, over
/// the picture's own: a still scrolled down to its step still says whose lanes they are.
fn sticky_heads(played: &Played, scheme: Scheme) -> String {
    let fit = Fit::natural(played.diagram.lanes.len());
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"fl-still {class}\" aria-hidden=\"true\" \
         width=\"{w}\" height=\"{h}\" style=\"display:block;position:sticky;top:0;margin-bottom:-{h}px\">\
         <rect class=\"bg\" width=\"{w}\" height=\"{h}\"/><g transform=\"translate(0 {h})\">",
        class = scheme_class(scheme),
        w = num(fit.width()),
        h = num(HEAD),
    );
    head_names(&mut out, played, fit);
    out.push_str("</g></svg>");
    out
}

fn span_svg(out: &mut String, span: &SpanGeom, shown_to: f64, fit: Fit) {
    let centre = fit.x(span.x);
    let (width, x) = if span.kind == "pause" { (20.0, centre - 10.0) } else { (5.0, centre - 2.5) };
    let shown = shown_to.max(span.y1).min(span.y2);
    if span.kind == "lease" {
        let _ = write!(
            out,
            "<rect class=\"validity\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\"/>",
            num(x),
            num(span.y1),
            num(width),
            num((span.y2 - span.y1).max(2.0))
        );
    }
    let _ = write!(
        out,
        "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\"><title>{}</title></rect>",
        span.kind,
        num(x),
        num(span.y1),
        num(width),
        num((shown - span.y1).max(2.0)),
        escape(&span.label)
    );
    if span.kind == "pause" {
        let _ = write!(
            out,
            "<text class=\"arrow-label\" x=\"{}\" y=\"{}\">{}</text>",
            num(centre + 14.0),
            num(span.y1 + 13.0),
            escape(&span.label)
        );
    }
}

fn arrow_svg(out: &mut String, a: &ArrowGeom, progress: f64, fit: Fit) {
    let (x1, x2) = (fit.x(a.x1), fit.x(a.x2));
    let (dx, dy) = (x2 - x1, a.y2 - a.y1);
    let length = (dx * dx + dy * dy).sqrt().max(1.0);
    let trim = 10.0 / length;
    let reach = progress.min(1.0) * (1.0 - trim);
    let (end_x, end_y) = (x1 + dx * reach, a.y1 + dy * reach);
    let state = if a.lost {
        " lost"
    } else if progress < 1.0 {
        " flying"
    } else {
        ""
    };
    let forged = if a.token == "lease" { "" } else { " forged" };
    let _ = write!(
        out,
        "<g class=\"{}{state}{forged}\"><title>{} · generation {} · {}</title>\
         <path class=\"wire\" d=\"M{} {}L{} {}\"/>",
        a.kind,
        escape(&a.label),
        a.generation,
        a.token.replace('_', " "),
        num(x1),
        num(a.y1),
        num(end_x),
        num(end_y)
    );
    if progress >= 1.0 && !a.lost {
        // The head, drawn as a small triangle pointing along the line.
        let (ux, uy) = (dx / length, dy / length);
        let (bx, by) = (end_x - ux * 7.0, end_y - uy * 7.0);
        let _ = write!(
            out,
            "<path d=\"M{} {}L{} {}L{} {}z\" fill=\"currentColor\" stroke=\"none\"/>",
            num(end_x),
            num(end_y),
            num(bx - uy * 4.0),
            num(by + ux * 4.0),
            num(bx + uy * 4.0),
            num(by - ux * 4.0)
        );
    }
    if a.kind != "grant" {
        let (label_x, anchor) = if dx >= 0.0 { (x1 + 8.0, "start") } else { (x1 - 8.0, "end") };
        let text = clip(&a.label, dx.abs() - 16.0, CHAR_W).unwrap_or_else(|| a.label.clone());
        let _ = write!(
            out,
            "<text class=\"arrow-label\" x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            num(label_x),
            num(a.y1 - 5.0),
            escape(&text)
        );
    }
    // The token rides along the line, as on the page: most of the way once delivered.
    let badge = (1.0 - trim) * if progress >= 1.0 { 0.72 } else { progress * 0.72 };
    let (bx, by) = (x1 + dx * badge, a.y1 + dy * badge);
    let pill = format!("g{}", a.generation);
    let pill_w = 8.0 + pill.chars().count() as f64 * 7.0;
    let _ = write!(
        out,
        "<g class=\"pill\" transform=\"translate({} {})\"><rect x=\"{}\" y=\"-8\" width=\"{}\" height=\"16\" rx=\"8\"/>\
         <text y=\"4\">{pill}</text></g></g>",
        num(bx),
        num(by),
        num(-pill_w / 2.0),
        num(pill_w)
    );
}

fn mark_svg(out: &mut String, m: &MarkGeom, fit: Fit) {
    let violation = m.kind == "violation";
    let text = match (violation, m.possible) {
        (true, true) => format!("possibly violated: {}", m.label.replace('_', " ")),
        (true, false) => format!("violated: {}", m.label.replace('_', " ")),
        _ => m.label.clone(),
    };
    let x = fit.x(m.x);
    let room = fit.room(x, LABEL_DX);
    let char_w = if violation { CHAR_W * 1.12 } else { CHAR_W };
    let shown = clip(&text, room, char_w).unwrap_or_else(|| text.clone());
    let label_y = if m.kind == "granted" { m.y - 6.0 } else { m.y + 4.0 };
    let _ = write!(
        out,
        "<g class=\"mark {tone}\" data-step=\"{index}\"><title>step {step}: {whole}</title>\
         <circle cx=\"{x}\" cy=\"{y}\" r=\"{r}\"/><text class=\"sym\" x=\"{x}\" y=\"{sy}\">{sym}</text>\
         <text class=\"label\" x=\"{lx}\" y=\"{ly}\">{shown}</text>",
        tone = tone(m),
        index = m.step,
        step = m.step + 1,
        whole = escape(&match &m.note {
            Some(note) => format!("{text} {note}"),
            None => text.clone(),
        }),
        x = num(x),
        y = num(m.y),
        r = if violation { 9 } else { 8 },
        sy = num(m.y + 3.5),
        sym = symbol(m),
        lx = num(x + LABEL_DX),
        ly = num(label_y),
        shown = escape(&shown),
    );
    if let Some(note) = &m.note {
        let note = clip(note, room, MONO_W).unwrap_or_else(|| note.clone());
        let _ = write!(
            out,
            "<text class=\"note\" x=\"{}\" y=\"{}\">{}</text>",
            num(x + LABEL_DX),
            num(m.y - 10.0),
            escape(&note)
        );
    }
    out.push_str("</g>");
}

/// The figure, in the player's order: the title, the step's caption, the verdict, the link,
/// then the picture (which scrolls sideways inside it on a narrow screen, and, inside a
/// `<fencelab-player>` that sets `--fl-still-h`, down too; the player also sets `--fl-lines`
/// to keep a long caption to a few lines, leaving the picture its room). Inline styles only,
/// so it needs nothing from the page around it.
pub(super) fn figure(still: &Still<'_>, link: Option<&str>, scheme: Scheme) -> String {
    let played = still.played;
    let step = still.position;
    let link = link.map_or_else(String::new, |href| {
        format!(" <a href=\"{}\">Play this story step by step</a>", escape(href))
    });
    format!(
        "<figure class=\"fencelab-still\" style=\"margin:0;max-width:100%\">\
         <figcaption style=\"font-weight:600\">{title} \
         <span style=\"font-weight:400\">· step {step} of {steps}</span></figcaption>\
         <p style=\"margin:.4em 0;display:-webkit-box;-webkit-box-orient:vertical;\
         -webkit-line-clamp:var(--fl-lines,none);overflow:hidden\">{caption}</p>\
         <p style=\"margin:.4em 0\"><b>{verdict}</b>{link}</p>\
         <div class=\"fl-scroll\" role=\"region\" tabindex=\"0\" aria-label=\"The diagram (scrolls)\" \
         style=\"overflow:auto;max-height:var(--fl-still-h,none);position:relative\">{heads}{svg}{aim}</div></figure>",
        title = escape(&played.title()),
        steps = played.len(),
        caption = escape(still.caption()),
        verdict = escape(&still.verdict()),
        heads = sticky_heads(played, scheme),
        svg = diagram(played, step, scheme, false),
        aim = aim(played, step),
    )
}

/// Where the figure's box first scrolls to, without script: just left of what the step drew, on
/// its row, so a narrow screen opens on the step rather than on the lanes' left edge.
fn aim(played: &Played, position: usize) -> String {
    let Some((from, _)) = position.checked_sub(1).and_then(|step| played.layout.focus_x(step))
    else {
        return String::new();
    };
    format!(
        "<span aria-hidden=\"true\" style=\"position:absolute;left:{}px;top:{}px;width:1px;\
         height:1px;scroll-initial-target:nearest\"></span>",
        num((Fit::natural(played.diagram.lanes.len()).x(from) - 40.0).max(0.0)),
        num(played.layout.now_y(position) + HEAD)
    )
}
