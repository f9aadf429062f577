//! The netCDF enhanced data model, independent of any file format.
//!
//! A [`Dataset`] holds flat tables of groups, dimensions, user types and variables addressed by
//! ids; values are typed vectors ([`Values`]); per-variable [`Storage`] settings carry what the
//! CDL special attributes say. Data can live in memory or be read by hyperslab through a
//! [`DataSource`].

pub mod chunking;
mod fill;
mod model;
mod ncstring;
mod placement;
pub mod quantize;
mod source;
mod storage;
pub mod subset;
mod types;
mod values;

pub use fill::*;
pub use model::*;
pub use ncstring::*;
pub use placement::*;
pub use source::*;
pub use storage::*;
pub use types::*;
pub use values::*;
