//! Presentational components: each renders its props and dispatches actions, nothing else.

pub mod compare;
pub mod controls;
pub mod decide;
pub mod diagram;
pub mod editor;
pub mod explore;
pub mod history;
pub mod icons;
pub mod learn;
pub mod log;
pub mod panels;
pub mod picker;
pub mod register;
pub mod share;
pub mod transcript;
