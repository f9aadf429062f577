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

/// HDF5-only filters the registry has no codec for: nbit (5) and scaleoffset (6), decoded by
/// the HDF5 reader's built-in decoder (read side only; nothing writes them).
fn hdf5_only(reg: &Registry, id: u32) -> bool {
    matches!(id, 5 | 6) && !reg.is_available(id)
}

impl nc_hdf5::ChunkDecoder for RegistryDecoder {
    fn supports(&self, id: u32) -> bool {
        let reg = self.registry();
        reg.is_available(id) || hdf5_only(reg, id)
    }

    fn decode(
        &self,
        filters: &[FilterSpec],
        type_size: usize,
        chunk_shape: &[u64],
        data: Vec<u8>,
    ) -> Result<Vec<u8>, String> {
        let reg = self.registry();
        let ctx = FilterContext::new(type_size, chunk_shape);
        if !filters.iter().any(|f| hdf5_only(reg, f.id)) {
            let pipe = reg
                .pipeline_stored(filters, ctx)
                .map_err(|e| e.to_string())?;
            return pipe.decode(&data).map_err(|e| e.to_string());
        }
        // undo the chain one filter at a time, last applied first
        let mut data = data;
        for f in filters.iter().rev() {
            let one = std::slice::from_ref(f);
            data = if hdf5_only(reg, f.id) {
                nc_hdf5::BuiltinDecoder.decode(one, type_size, chunk_shape, data)?
            } else {
                let pipe = reg
                    .pipeline_stored(one, FilterContext::new(type_size, chunk_shape))
                    .map_err(|e| e.to_string())?;
                pipe.decode(&data).map_err(|e| e.to_string())?
            };
        }
        Ok(data)
    }
}
