//! The page's wasm module.

fn main() {
    fencelab_web::start();
}
