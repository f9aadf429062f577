//! [`ChunkDecoder`]: how a reader undoes the filters of stored chunks. One path for every
//! backend: a [`Registry`] of the built-in codecs, the codecs a format adds (HDF5's nbit and
//! scaleoffset, from nc-hdf5) and the HDF5 plugins of the default search
//! path, built on first need so that reading metadata (`ncdump -h`, `-hs`) never loads a
//! plugin.

use std::sync::{Arc, OnceLock};

use crate::error::FilterError;
use crate::filter::{FilterContext, FilterFactory, FilterId};
use crate::registry::Registry;
use nc_dataset::FilterSpec;

/// Slack allowed over a chunk's logical size while decoding (a checksum's bytes, a compressor's
/// framing of incompressible data).
const DECODE_SLACK: usize = 4096;

/// Decodes stored chunks through a [`Registry`] made on first use.
pub struct ChunkDecoder {
    registry: OnceLock<Registry>,
    extra: Vec<Arc<dyn FilterFactory>>,
}

impl std::fmt::Debug for ChunkDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkDecoder")
            .field("registry", &self.registry.get())
            .finish_non_exhaustive()
    }
}

impl Default for ChunkDecoder {
    fn default() -> Self {
        ChunkDecoder::with_codecs(Vec::new())
    }
}

impl ChunkDecoder {
    /// The built-in codecs, then the plugins of `HDF5_PLUGIN_PATH` and the default directory
    /// (loaded on the first chunk).
    pub fn new() -> ChunkDecoder {
        ChunkDecoder::default()
    }

    /// [`ChunkDecoder::new`] plus codecs a format brings (such as HDF5's nbit); a built-in
    /// codec of the same id wins.
    pub fn with_codecs(extra: Vec<Arc<dyn FilterFactory>>) -> ChunkDecoder {
        ChunkDecoder {
            registry: OnceLock::new(),
            extra,
        }
    }

    /// A decoder over exactly this registry (no plugins are searched).
    pub fn with_registry(registry: Registry) -> ChunkDecoder {
        ChunkDecoder {
            registry: OnceLock::from(registry),
            extra: Vec::new(),
        }
    }

    /// The registry, made (and the plugins loaded) on first call.
    pub fn registry(&self) -> &Registry {
        self.registry.get_or_init(|| {
            let mut r = Registry::with_builtins();
            for f in &self.extra {
                // a built-in codec of the same id keeps its place
                let _taken = r.register(f.clone(), false);
            }
            let _report = r.load_default_plugins();
            r
        })
    }

    /// True when some codec decodes filter `id`.
    pub fn supports(&self, id: FilterId) -> bool {
        self.registry().is_available(id)
    }

    /// Undo `filters` (in the order they were applied, working parameters as stored) on one
    /// chunk of a variable whose elements and chunk shape `ctx` gives. No filter may make more
    /// than twice a full chunk (plus a little), so a corrupt chunk cannot inflate without end.
    ///
    /// # Errors
    /// [`FilterError::NotAvailable`] for a filter no codec decodes, the first codec's failure
    /// otherwise, [`FilterError::Length`] when the result is not one chunk.
    pub fn decode(
        &self,
        filters: &[FilterSpec],
        mut ctx: FilterContext,
        data: &[u8],
    ) -> Result<Vec<u8>, FilterError> {
        if let Some(bytes) = ctx.chunk_bytes() {
            let bound = bytes.saturating_mul(2).saturating_add(DECODE_SLACK);
            ctx.max_decoded = ctx.max_decoded.min(bound);
        }
        self.registry().pipeline_stored(filters, ctx)?.decode(data)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // test code

    use super::*;
    use crate::filter::Filter;

    fn spec(id: u32, params: &[u32]) -> FilterSpec {
        FilterSpec {
            id,
            params: params.to_vec(),
        }
    }

    fn encode(chain: &[FilterSpec], ctx: &FilterContext, data: &[u8]) -> Vec<u8> {
        Registry::with_builtins()
            .pipeline_stored(chain, ctx.clone())
            .unwrap()
            .encode(data)
            .unwrap()
    }

    #[test]
    fn shuffle_deflate_fletcher32_round_trip_and_corruption() {
        let values: Vec<u8> = (0u32..100).flat_map(|v| (v * 1000).to_le_bytes()).collect();
        let ctx = FilterContext::new(4, &[100]);
        let chain = [spec(2, &[4]), spec(1, &[5]), spec(3, &[])];
        let stored = encode(&chain, &ctx, &values);
        let d = ChunkDecoder::with_registry(Registry::with_builtins());
        assert_eq!(d.decode(&chain, ctx.clone(), &stored).unwrap(), values);
        let mut bad = stored;
        bad[3] ^= 0xff;
        let e = d.decode(&chain, ctx, &bad).unwrap_err().to_string();
        assert!(e.contains("fletcher32"), "{e}");
        assert!(e.contains("checksum"), "{e}");
    }

    #[test]
    fn inflation_is_bounded_by_the_chunk_size() {
        // 1 MiB of zeros in a chunk of 16 one-byte elements
        let ctx = FilterContext::new(1, &[16]);
        let big = FilterContext::new(1, &[1 << 20]);
        let bomb = encode(&[spec(1, &[9])], &big, &vec![0u8; 1 << 20]);
        let d = ChunkDecoder::with_registry(Registry::with_builtins());
        let e = d.decode(&[spec(1, &[9])], ctx, &bomb).unwrap_err();
        assert!(
            matches!(e, FilterError::TooLarge { id: 1, limit, .. } if limit == 2 * 16 + DECODE_SLACK),
            "{e:?}"
        );
    }

    #[test]
    fn unknown_filters_are_not_available_and_extra_codecs_are_used() {
        let d = ChunkDecoder::with_registry(Registry::empty());
        assert!(!d.supports(307));
        let e = d
            .decode(&[spec(307, &[9])], FilterContext::new(1, &[1]), &[1])
            .unwrap_err();
        assert!(
            matches!(e, FilterError::NotAvailable { id: 307, .. }),
            "{e:?}"
        );

        struct Twice;
        impl Filter for Twice {
            fn id(&self) -> u32 {
                40000
            }
            fn name(&self) -> &str {
                "twice"
            }
            fn encode(&self, c: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
                out.clear();
                out.extend(c.iter().flat_map(|&b| [b, b]));
                Ok(())
            }
            fn decode(&self, c: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
                out.clear();
                out.extend(c.iter().step_by(2));
                Ok(())
            }
        }
        struct TwiceFactory;
        impl FilterFactory for TwiceFactory {
            fn id(&self) -> u32 {
                40000
            }
            fn name(&self) -> &str {
                "twice"
            }
            fn build(&self, _: &[u32], _: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
                Ok(Box::new(Twice))
            }
        }
        let d = ChunkDecoder::with_codecs(vec![Arc::new(TwiceFactory)]);
        assert!(d.supports(40000) && d.supports(1));
        let got = d
            .decode(
                &[spec(40000, &[])],
                FilterContext::new(2, &[2]),
                &[1, 1, 2, 2, 3, 3, 4, 4],
            )
            .unwrap();
        assert_eq!(got, [1, 2, 3, 4]);
    }
}
