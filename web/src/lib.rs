//! Fencelab in the browser: the step-by-step visualizer of the built-in stories, and the
//! single-register playground, both driven by `fencelab-core` compiled to WebAssembly.
//!
//! The page ships as two wasm modules built from this one crate. The viewer (built without the
//! `tools` feature) is what every visit and every embed downloads: stories, the diagram, the
//! controls, captions, panels, the log, the transcript and share links. The tools module (the
//! `tools` feature: compare mode, the editor, the explorer's search, export and import, the
//! register playground) loads on first use and takes the page over, the view carried across in
//! the address fragment. See `index.html` for the loader.

mod app;
mod components;
mod io;
mod playground;
mod viz;

use std::cell::RefCell;

use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::Element;
use yew::AppHandle;

/// Whether this build carries the tools. A constant rather than `cfg` attributes, so both builds
/// type-check every path and the optimizer drops the tools' code from the viewer.
pub const TOOLS: bool = cfg!(feature = "tools");

// Talc instead of the default dlmalloc: a few kilobytes less wasm, and faster on wasm.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

thread_local! {
    /// The mounted page and its host element, so the viewer can step aside for the tools.
    static PAGE: RefCell<Option<(AppHandle<app::App>, Element)>> = const { RefCell::new(None) };
}

/// Mounts the page into a host element of its own at the end of `<body>`, so that [`stop`]
/// takes away everything the page attached, Yew's event listeners on the host included. The
/// viewer's `main` calls it; the tools module's loader calls it once the viewer has stopped.
#[wasm_bindgen]
pub fn mount() {
    // One page at a time: a second mount would leave the first running unseen.
    if PAGE.with(|page| page.borrow().is_some()) {
        return;
    }
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let (Some(body), Ok(host)) = (document.body(), document.create_element("div")) else {
        return;
    };
    host.set_class_name("fencelab-page");
    if body.append_child(&host).is_err() {
        return;
    }
    let handle = yew::Renderer::<app::App>::with_root(host.clone()).render();
    PAGE.with(|page| *page.borrow_mut() = Some((handle, host)));
}

/// Unmounts the page (its timers and listeners go with it) after writing the address of the
/// view on screen, which the next page to mount opens.
#[wasm_bindgen]
pub fn stop() {
    app::flush_address();
    if let Some((handle, host)) = PAGE.with(|page| page.borrow_mut().take()) {
        handle.destroy();
        host.remove();
    }
}
