//! Fencelab in the browser: the step-by-step visualizer of the built-in stories, and the
//! single-register playground, both driven by `fencelab-core` compiled to WebAssembly.
//!
//! The page is one wasm module: stories, the diagram, the controls, captions, panels, the log,
//! the transcript and share links, and the tools (compare mode, the editor, the explorer's
//! search, export and import, the register playground).

mod app;
mod components;
mod hooks;
mod io;
mod playground;
#[cfg(feature = "test-hooks")]
mod test_hooks;
mod viz;

// Talc instead of the default dlmalloc, which is slower on wasm.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// Mounts the page on `<body>`.
pub fn start() {
    yew::Renderer::<app::App>::new().render();
}
