//! The tools module: the whole page, tools included, loaded when a reader first uses one.
//!
//! Its `main` mounts nothing: the loader in `index.html` instantiates the module first, then
//! stops the viewer and calls the exported `mount`, so a module that fails to load or start
//! leaves the viewer up. `main` only names `mount`, which makes the linker keep the library and
//! its exports: an unreferenced library is left out of a binary.

fn main() {
    std::hint::black_box(fencelab_web::mount as fn());
}
