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

use yew::AppHandle;

/// Whether this build carries the tools. A constant rather than `cfg` attributes, so both builds
/// type-check every path and the optimizer drops the tools' code from the viewer.
pub const TOOLS: bool = cfg!(feature = "tools");

// Talc instead of the default dlmalloc: a few kilobytes less wasm, and faster on wasm.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

thread_local! {
    /// The mounted page, so the viewer can step aside for the tools module.
    static PAGE: RefCell<Option<AppHandle<app::App>>> = const { RefCell::new(None) };
}

/// Mounts the page into `<body>`; both binaries' `main`.
pub fn start() {
    let handle = yew::Renderer::<app::App>::new().render();
    PAGE.with(|page| *page.borrow_mut() = Some(handle));
}

/// Unmounts the page (its timers and listeners go with it). The loader calls this on the viewer
/// once the tools module is ready to take over.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn stop() {
    if let Some(handle) = PAGE.with(|page| page.borrow_mut().take()) {
        handle.destroy();
    }
}
