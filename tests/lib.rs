//! End-to-end tests live in `tests/*.rs` of this package.
