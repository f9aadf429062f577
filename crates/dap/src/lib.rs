//! OPeNDAP client backend (temporary skeleton of the dap4 branch: the crate, `DapData` and
//! `DapError` are the dap2 branch's; this copy only lets `dap4` build until it is merged).

pub mod dap4;

use nc_dataset::{Values, VarId};

/// The decoded values of a response's variables, in the dataset returned with it: one entry
/// per variable that has data, every element row-major, as the [`Values`] variant of the
/// variable's type.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DapData {
    /// (variable, all its values row-major), at most one entry per variable.
    pub values: Vec<(VarId, Values)>,
}

/// Reading an OPeNDAP response failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DapError {
    /// The response text or bytes are not what the protocol says.
    #[error("{url}: malformed DAP response: {what}")]
    Malformed {
        /// the URL (or file) of the response
        url: String,
        /// what is wrong, and where
        what: String,
    },
    /// A DAP4 chunk's checksum does not match its bytes.
    #[error("{url}: variable \"{variable}\": DAP4 checksum mismatch (data corrupted in transit or at the server)")]
    Checksum {
        /// the URL (or file) of the response
        url: String,
        /// the variable whose checksum failed
        variable: String,
    },
    /// The server answered with an error response.
    #[error("{url}: the server answered with an error: code {code}: {message}")]
    Server {
        /// the URL asked
        url: String,
        /// the DAP error code (may be empty)
        code: String,
        /// the server's message
        message: String,
    },
    /// Something this reader does not do (yet).
    #[error("{url}: {what}")]
    Unsupported {
        /// the dataset's URL
        url: String,
        /// what is missing
        what: String,
    },
}
