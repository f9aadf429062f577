//! Which side a writer's failure belongs to, asked of a [`DispatchError`] so callers need not
//! know a backend's error variants.

use crate::DispatchError;

impl DispatchError {
    /// The data source's message when a writer failed because reading the input's data failed
    /// inside the writer (the netCDF-4 writer decodes a chunk it copies raw, so a corrupt input
    /// chunk fails the write without the source being asked); `None` for a failure of the
    /// output itself.
    pub fn input_read_message(&self) -> Option<String> {
        let DispatchError::Hdf5(h) = self else {
            return None;
        };
        let h = match h {
            nc_hdf5::Hdf5Error::InFile { inner, .. } => inner.as_ref(),
            other => other,
        };
        match h {
            nc_hdf5::Hdf5Error::Source { message, .. } => Some(message.clone()),
            _ => None,
        }
    }
}
