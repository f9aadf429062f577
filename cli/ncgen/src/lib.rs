//! ncgen-rs as a library: its command line ([`command`], [`Args`]) and the C code generator
//! behind `-l c` ([`gen_c`]). The binary (`src/main.rs`) maps the arguments onto these.

mod args;
pub mod gen_c;

pub use args::{command, Args};
