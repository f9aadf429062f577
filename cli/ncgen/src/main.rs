//! ncgen-rs
fn main() {}
