//! The HDF5 reader's chunk decoder, backed by the filters engine (built-in codecs first, then
//! HDF5 plugins found on `HDF5_PLUGIN_PATH`, loaded on first need so metadata never needs them).

use std::sync::OnceLock;

use nc_dataset::FilterSpec;
use nc_filters::{FilterContext, Registry};

/// Decodes HDF5 chunks through an [`nc_filters::Registry`].
#[derive(Default)]
pub struct RegistryDecoder {
    registry: OnceLock<Registry>,
}

impl std::fmt::Debug for RegistryDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryDecoder").finish_non_exhaustive()
    }
}

impl RegistryDecoder {
    /// The registry: built-ins plus the plugins on the default search path.
    pub fn registry(&self) -> &Registry {
        self.registry.get_or_init(|| {
            let mut r = Registry::with_builtins();
            if std::env::var_os("NC_FILTERS_PREFER_PLUGIN").is_some_and(|v| v == "1") {
                r.set_prefer_plugins(true);
            }
            let _report = r.load_default_plugins();
            r
        })
    }
}

impl nc_hdf5::ChunkDecoder for RegistryDecoder {
    fn supports(&self, id: u32) -> bool {
        self.registry().is_available(id)
    }

    fn decode(
        &self,
        filters: &[FilterSpec],
        type_size: usize,
        chunk_shape: &[u64],
        data: Vec<u8>,
    ) -> Result<Vec<u8>, String> {
        let reg = self.registry();
        let pipe = reg
            .pipeline_stored(filters, FilterContext::new(type_size, chunk_shape))
            .map_err(|e| e.to_string())?;
        pipe.decode(&data).map_err(|e| e.to_string())
    }
}
