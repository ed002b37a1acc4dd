//! This crate only hosts the integration tests in `it/`; it has no library code of its own.
