//! The tools module: the whole page, tools included, loaded when a reader first uses one.

fn main() {
    fencelab_web::start();
}
