//! Fencelab in the browser: the step-by-step visualizer of the built-in stories, and the
//! single-register playground, both driven by `fencelab-core` compiled to WebAssembly.

mod app;
mod components;
mod io;
mod playground;
mod viz;

// Talc instead of the default dlmalloc: a few kilobytes less wasm, and faster on wasm.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

fn main() {
    yew::Renderer::<app::App>::new().render();
}
