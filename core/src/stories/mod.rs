//! The built-in stories ([`library`]) and the changes a reader can make to one: the "break the
//! protocol" switches and the page's policy and enforcement overrides ([`switches`]).

pub mod course;
pub mod library;
pub mod switches;
