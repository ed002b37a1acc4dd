//! Fencelab in the browser: a single fenced register you can write to with any generation.

mod app;
mod state;
mod view;

fn main() {
    yew::Renderer::<app::App>::new().render();
}
