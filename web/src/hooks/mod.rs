//! The shells' effects as named hooks, one concern each: keys, autoplay, the address, the
//! diagram's pane, keeping the current step in view, recorded histories (a link's, a dropped
//! file), the saved custom scenario, the quiz's and the course's memory and focus, undo in "You
//! decide" mode, the playground's flash and focus, the explorer's search, a link's forced
//! theme and the document's title. Each starts what it needs when it is needed and stops it when dropped.

mod use_address;
mod use_autoplay;
mod use_counterexample;
mod use_explore_origin;
mod use_flash;
mod use_focus_on_error;
mod use_follow_step;
mod use_history_sources;
mod use_keep_custom;
mod use_keys;
mod use_learn;
mod use_pane_width;
mod use_search;
mod use_theme;
mod use_undo_key;
mod use_window;

pub use use_address::use_address;
pub use use_autoplay::use_autoplay;
pub use use_counterexample::use_counterexample;
pub use use_explore_origin::use_explore_origin;
pub use use_flash::use_flash;
pub use use_focus_on_error::{use_focus_on_error, use_focus_title};
pub use use_follow_step::{
    use_follow_step, use_show_chosen, use_step_on_screen, FollowRefs, HEADS,
};
pub use use_history_sources::{use_drop_history, use_fetch_history};
pub use use_keep_custom::use_keep_custom;
pub use use_keys::use_keys;
pub use use_learn::{remembered, use_learn};
pub use use_pane_width::use_pane_width;
pub use use_search::use_search;
pub use use_theme::{use_document_title, use_report_title, use_theme};
pub use use_undo_key::use_undo_key;
pub use use_window::{use_sticky_axis, use_window};
