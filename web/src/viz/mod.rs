//! The visualizer's plain-Rust side: playing runs through the core, laying out the diagram, and
//! the view-state reducer. Nothing here renders, and nothing here re-implements a fencing rule.

pub mod decide;
pub mod explore;
pub mod frame;
pub mod history;
pub mod run;
pub mod state;
pub mod window;
pub mod words;
