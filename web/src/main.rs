//! Fencelab in the browser: the step-by-step visualizer of the built-in stories, and the
//! single-register playground, both driven by `fencelab-core` compiled to WebAssembly.

mod app;
mod components;
mod io;
mod playground;
mod viz;

fn main() {
    yew::Renderer::<app::App>::new().render();
}
