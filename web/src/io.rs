//! The browser's side of sharing and exporting: the address bar, local storage, downloads, the
//! clipboard, reading a chosen file and the diagram as a standalone SVG. Plain functions the
//! shell and the share panel call; none of them panics, and a failure is returned as a sentence.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, Document, HtmlAnchorElement, HtmlTextAreaElement, Url};

use fencelab_core::picture::layout::MONO_W;

/// Where the last custom scenario is kept, so a bad link never loses it.
pub const CUSTOM_KEY: &str = "fencelab.custom-scenario";

fn document() -> Option<Document> {
    web_sys::window()?.document()
}

/// The fragment of the page's address, without the `#`.
pub fn fragment() -> String {
    let hash = web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default();
    hash.trim_start_matches('#').to_string()
}

/// The page's address without its fragment.
pub fn page_url() -> String {
    let href = web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default();
    href.split('#').next().unwrap_or_default().to_string()
}

/// Puts `fragment` into the address bar, as a new history entry (Back returns to the one
/// before) or in place of the current one.
pub fn write_fragment(fragment: &str, new_entry: bool) {
    if fragment == self::fragment() {
        return;
    }
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let url = format!("#{fragment}");
        let _ = if new_entry {
            history.push_state_with_url(&JsValue::NULL, "", Some(&url))
        } else {
            history.replace_state_with_url(&JsValue::NULL, "", Some(&url))
        };
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// Reads a value from local storage.
pub fn load(key: &str) -> Option<String> {
    storage()?.get_item(key).ok().flatten()
}

/// Writes a value to local storage (silently nothing when storage is unavailable or full).
pub fn save(key: &str, value: &str) {
    if let Some(storage) = storage() {
        let _ = storage.set_item(key, value);
    }
}

/// The `type` of the message an embed sends the page around it with its content's height.
pub const HEIGHT_MESSAGE: &str = "fencelab:height";

/// Calls its function whenever the page's body changes size, until dropped.
pub struct SizeWatch {
    observer: web_sys::ResizeObserver,
    _changed: Closure<dyn FnMut()>,
}

impl Drop for SizeWatch {
    fn drop(&mut self) {
        self.observer.disconnect();
    }
}

/// Calls `changed` with the height of the page's content (CSS pixels, rounded up) now and each
/// time the body changes size: the window's width, or what the page shows.
pub fn watch_size(mut changed: impl FnMut(u32) + 'static) -> Option<SizeWatch> {
    let body = document()?.body()?;
    let target = body.clone();
    let changed = Closure::<dyn FnMut()>::new(move || {
        changed(target.get_bounding_client_rect().height().ceil() as u32);
    });
    let observer = web_sys::ResizeObserver::new(changed.as_ref().unchecked_ref()).ok()?;
    observer.observe(&body);
    Some(SizeWatch { observer, _changed: changed })
}

/// Sets the page's `--player-h` style property to the player's height (CSS pixels, rounded up).
pub fn note_player_height() {
    let Some(document) = document() else { return };
    let (Ok(Some(player)), Some(root)) =
        (document.query_selector(".player"), document.document_element())
    else {
        return;
    };
    let height = player.get_bounding_client_rect().height().ceil();
    if let Ok(root) = root.dyn_into::<web_sys::HtmlElement>() {
        let _ = root.style().set_property("--player-h", &format!("{height}px"));
    }
}

/// Tells the page that embeds this one how tall its content is:
/// `{type: "fencelab:height", height}`. The copied embed code carries the few lines of script
/// that size the iframe from it. Any origin may read it: a height is no secret, and the
/// embedding page tells its frames apart by the message's source.
pub fn report_height(height: u32) {
    let Some(parent) = web_sys::window().and_then(|w| w.parent().ok().flatten()) else {
        return;
    };
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &"type".into(), &HEIGHT_MESSAGE.into());
    let _ = js_sys::Reflect::set(&message, &"height".into(), &height.into());
    let _ = parent.post_message(&message, "*");
}

/// The `type` of the message an embed sends the page around it with what it shows, for the
/// frame's accessible name.
pub const TITLE_MESSAGE: &str = "fencelab:title";

/// Tells the page that embeds this one what it shows: `{type: "fencelab:title", title}`. The
/// `<fencelab-player>` element names its frame by it unless its author gave a label.
pub fn report_title(title: &str) {
    let Some(parent) = web_sys::window().and_then(|w| w.parent().ok().flatten()) else {
        return;
    };
    let message = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&message, &"type".into(), &TITLE_MESSAGE.into());
    let _ = js_sys::Reflect::set(&message, &"title".into(), &title.into());
    let _ = parent.post_message(&message, "*");
}

/// Offers `text` as a file download called `name`.
pub fn download(name: &str, mime: &str, text: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let blob = Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| "the browser could not make the file".to_string())?;
    let url = Url::create_object_url_with_blob(&blob)
        .map_err(|_| "the browser could not make the file".to_string())?;
    let anchor = document()
        .and_then(|d| d.create_element("a").ok())
        .and_then(|a| a.dyn_into::<HtmlAnchorElement>().ok())
        .ok_or_else(|| "the browser could not start the download".to_string())?;
    anchor.set_href(&url);
    anchor.set_download(name);
    anchor.click();
    // Revoke after the download has started.
    let revoke = Closure::once_into_js(move || {
        let _ = Url::revoke_object_url(&url);
    });
    if let Some(window) = web_sys::window() {
        let _ = window
            .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 1_000);
    }
    Ok(())
}

/// Selects the text of the text area with id `id` and copies it to the clipboard.
pub fn copy_from(id: &str) -> bool {
    let Some(document) = document() else { return false };
    let Some(area) =
        document.get_element_by_id(id).and_then(|e| e.dyn_into::<HtmlTextAreaElement>().ok())
    else {
        return false;
    };
    let _ = area.focus();
    area.select();
    document
        .dyn_into::<web_sys::HtmlDocument>()
        .ok()
        .and_then(|d| d.exec_command("copy").ok())
        .unwrap_or(false)
}

/// The name and size in bytes of the first file chosen in `input`.
pub fn chosen_file(input: &web_sys::HtmlInputElement) -> Option<(String, f64)> {
    input.files().and_then(|f| f.get(0)).map(|f| (f.name(), f.size()))
}

/// Reads the first file chosen in `input` as text and hands its name and text to `done`.
pub fn read_file(input: &web_sys::HtmlInputElement, done: impl FnOnce(String, String) + 'static) {
    let Some(file) = input.files().and_then(|f| f.get(0)) else { return };
    read_text(&file, done);
    input.set_value("");
}

/// Calls `f` once the browser has painted the next frame, so what the page shows now (a
/// status, say) is on screen before `f` holds the main thread.
fn after_paint(f: impl FnOnce() + 'static) {
    let Some(window) = web_sys::window() else { return f() };
    let later = window.clone();
    let f = Closure::once_into_js(f);
    let frame = Closure::once_into_js(move || {
        let _ = later.set_timeout_with_callback_and_timeout_and_arguments_0(f.unchecked_ref(), 0);
    });
    let _ = window.request_animation_frame(frame.unchecked_ref());
}

/// Reads `file` as text and hands its name and text to `done`, after a paint: opening a large
/// file takes a while, and the page's status says so meanwhile.
fn read_text(file: &web_sys::File, done: impl FnOnce(String, String) + 'static) {
    let Ok(reader) = web_sys::FileReader::new() else { return };
    let target = reader.clone();
    let name = file.name();
    let onload = Closure::once_into_js(move || {
        if let Some(text) = target.result().ok().and_then(|r| r.as_string()) {
            after_paint(move || done(name, text));
        }
    });
    reader.set_onload(Some(onload.unchecked_ref()));
    let _ = reader.read_as_text(file);
}

/// Calls `started` with the name and size in bytes of each file dropped on the page (the first
/// of several), then `dropped` with its name and text, until dropped. Dragging files over the
/// page shows that they can be dropped.
pub fn watch_drops(
    started: impl Fn(String, f64) + 'static,
    dropped: impl Fn(String, String) + 'static,
) -> Option<[gloo_events::EventListener; 2]> {
    use gloo_events::{EventListener, EventListenerOptions};
    let document = document()?;
    let carries_files = |event: &web_sys::Event| {
        let data = event.dyn_ref::<web_sys::DragEvent>().and_then(|e| e.data_transfer());
        data.is_some_and(|d| d.types().includes(&JsValue::from_str("Files"), 0))
    };
    let options = EventListenerOptions::enable_prevent_default();
    let over = EventListener::new_with_options(&document, "dragover", options, move |event| {
        // Without this, the browser would open the file in place of the page.
        if carries_files(event) {
            event.prevent_default();
        }
    });
    let dropped = std::rc::Rc::new(dropped);
    let on_drop = EventListener::new_with_options(&document, "drop", options, move |event| {
        let file = event
            .dyn_ref::<web_sys::DragEvent>()
            .and_then(|e| e.data_transfer())
            .and_then(|d| d.files())
            .and_then(|f| f.get(0));
        if let Some(file) = file {
            event.prevent_default();
            started(file.name(), file.size());
            let dropped = dropped.clone();
            read_text(&file, move |name, text| dropped(name, text));
        }
    });
    Some([over, on_drop])
}

/// Fetches the text at `address`, resolved against the page's own address; only the page's own
/// site is asked. The error says what went wrong, naming the address.
pub async fn fetch_text(address: &str) -> Result<String, String> {
    use wasm_bindgen_futures::JsFuture;
    let window = web_sys::window().ok_or_else(|| "there is no window".to_string())?;
    let location = window.location();
    let (page, origin) =
        (location.href().unwrap_or_default(), location.origin().unwrap_or_default());
    let url = Url::new_with_base(address, &page)
        .map_err(|_| format!("the link's history=“{address}” is not an address"))?;
    if url.origin() != origin {
        return Err(format!(
            "the link's history=“{address}” is on another site ({}); the page opens only files from its own site ({origin})",
            url.origin()
        ));
    }
    // The whole address fetched, as the page resolved it, so a wrong folder shows.
    let href = url.href();
    let failed = |why: &str| format!("“{address}” could not be fetched from {href}: {why}");
    let answer = JsFuture::from(window.fetch_with_str(&href))
        .await
        .map_err(|_| failed("the request failed (is the address right, and the site up?)"))?;
    let response: web_sys::Response =
        answer.dyn_into().map_err(|_| failed("the browser gave no response"))?;
    if !response.ok() {
        let status =
            format!("the server answered {} {}", response.status(), response.status_text());
        return Err(failed(status.trim_end()));
    }
    let text = response.text().map_err(|_| failed("its text could not be read"))?;
    let text = JsFuture::from(text).await.map_err(|_| failed("its text could not be read"))?;
    text.as_string().ok_or_else(|| failed("it is not text"))
}

/// The page's own style rules, for a standalone copy of the diagram.
fn page_css(document: &Document) -> String {
    let mut css = String::new();
    let sheets = document.style_sheets();
    for i in 0..sheets.length() {
        let Some(sheet) = sheets.item(i).and_then(|s| s.dyn_into::<web_sys::CssStyleSheet>().ok())
        else {
            continue;
        };
        let Ok(rules) = sheet.css_rules() else { continue };
        for j in 0..rules.length() {
            if let Some(rule) = rules.item(j) {
                css.push_str(&rule.css_text());
                css.push('\n');
            }
        }
    }
    css
}

/// Escapes text for XML.
fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Height of the row of lane names above the exported diagram.
const HEAD: u32 = 36;

/// Height of each line above the lane names that says what the export shows.
const TITLE_LINE: u32 = 20;

/// The diagram on screen as a standalone SVG document: `heading` (what it shows: the story or
/// history, the steps, the chosen finding) as lines above the lane names (HTML on the page,
/// text here), and the page's styles inside, so it looks the same opened on its own. Labels the
/// page cuts to their room show whole, the export widened to hold them. A long run's diagram is
/// drawn only around the view, so its export is `crop`: that band alone, through a viewport as
/// tall as it.
pub fn diagram_svg(
    crop: Option<&crate::viz::window::Crop>,
    heading: &[String],
) -> Result<String, String> {
    let document = document().ok_or_else(|| "no page".to_string())?;
    let svg = document
        .query_selector("svg.swimlanes")
        .ok()
        .flatten()
        .ok_or_else(|| "there is no diagram on screen".to_string())?;
    let frame = svg.get_bounding_client_rect();
    // Whole pixels: the SVG's size attributes need no fractions.
    let (mut width, height) = (frame.width().round() as u32, frame.height().round() as u32);
    // The room the cut labels need shown whole.
    if let Ok(cut) = svg.query_selector_all("text.clipped") {
        for i in 0..cut.length() {
            let Some(text) = cut.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) else {
                continue;
            };
            // Whole pixels are close enough, and parsing integers keeps float parsing out of
            // the module.
            let x = text.get_attribute("x").unwrap_or_default();
            let x: u32 = x.split('.').next().and_then(|x| x.parse().ok()).unwrap_or(0);
            let chars = text
                .query_selector(".full")
                .ok()
                .flatten()
                .and_then(|f| f.text_content())
                .map_or(0, |t| t.chars().count());
            if text.get_attribute("text-anchor").is_none() {
                width = width.max(x + (chars as f64 * MONO_W).ceil() as u32 + 8);
            }
        }
    }
    let lines = heading.len() as u32;
    let head = HEAD + TITLE_LINE * lines;
    // A copy to export: the band alone for a long run (the original is as tall as the whole
    // run, which no viewer draws), as wide as the labels need.
    let copy = svg
        .clone_node_with_deep(true)
        .ok()
        .and_then(|c| c.dyn_into::<web_sys::Element>().ok())
        .ok_or_else(|| "the browser could not copy the diagram".to_string())?;
    let (top, band) = crop.map_or((0, height), |c| (c.top.round() as u32, c.height.round() as u32));
    for (name, value) in [
        ("y", head.to_string()),
        ("width", width.to_string()),
        ("height", band.to_string()),
        ("viewBox", format!("0 {top} {width} {band}")),
    ] {
        let _ = copy.set_attribute(name, &value);
    }
    let markup = web_sys::XmlSerializer::new()
        .and_then(|s| s.serialize_to_string(&copy))
        .map_err(|_| "the browser could not copy the diagram".to_string())?;
    let mut names = String::new();
    let heads = svg
        .closest(".diagram")
        .ok()
        .flatten()
        .and_then(|d| d.query_selector_all(".lane-head").ok());
    if let Some(heads) = heads {
        for i in 0..heads.length() {
            let Some(head) = heads.item(i).and_then(|n| n.dyn_into::<web_sys::Element>().ok())
            else {
                continue;
            };
            let name = head
                .query_selector(".lane-name")
                .ok()
                .flatten()
                .and_then(|n| n.text_content())
                .unwrap_or_default();
            let rect = head.get_bounding_client_rect();
            let x = rect.left() + rect.width() / 2.0 - frame.left();
            names.push_str(&format!(
                "<text class=\"export-lane\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                fencelab_core::picture::layout::decimal(x, 0),
                24 + TITLE_LINE * lines,
                xml_text(name.trim())
            ));
        }
    }
    let mut titles = String::new();
    for (i, line) in heading.iter().enumerate() {
        titles.push_str(&format!(
            "<text class=\"export-title\" x=\"8\" y=\"{}\">{}</text>\n",
            16 + TITLE_LINE * i as u32,
            xml_text(line)
        ));
    }
    let css = page_css(&document).replace("]]>", "]]]]><![CDATA[>");
    let total = band + head;
    Ok(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{total}\" \
         viewBox=\"0 0 {width} {total}\">\n<title>{}</title>\n<style><![CDATA[\n{css}\
         .export-bg {{ fill: var(--surface); }}\n\
         .export-lane {{ fill: var(--text); font: 600 12px system-ui, sans-serif; }}\n\
         .export-title {{ fill: var(--text); font: 12px system-ui, sans-serif; }}\n\
         .clipped .short {{ display: none; }}\n.clipped .full {{ display: inline; }}\n\
         .clipped {{ paint-order: stroke; stroke: var(--surface); stroke-width: 4px; stroke-linejoin: round; }}\n\
         ]]></style>\n\
         <rect class=\"export-bg\" width=\"100%\" height=\"100%\" />\n{titles}{names}\n{markup}\n</svg>\n",
        xml_text(&heading.join(" · ")),
    ))
}
