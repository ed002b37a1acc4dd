//! The viewer: the first (and, for most readers, only) wasm module the page loads.

fn main() {
    fencelab_web::mount();
}
