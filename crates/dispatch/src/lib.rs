//! Open datasets by their magic bytes (never by file extension), create them in a chosen
//! format with atomic output, and choose formats as the tools' documented rules say.

mod copy;
mod decode;
mod kind;
mod open;

pub use copy::*;
pub use decode::*;
pub use kind::*;
pub use open::*;
