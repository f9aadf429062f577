//! ncdump-rs
fn main() {}
