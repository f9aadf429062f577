//! nccopy-rs
fn main() {}
