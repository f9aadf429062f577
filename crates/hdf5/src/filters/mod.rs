//! The two filters only HDF5 has, nbit (5) and scaleoffset (6), as codecs of nc-filters'
//! engine: decoded by `hdf5-reader`, encoded by our own encoders (`nbit.rs`,
//! `scaleoffset.rs`, bit for bit libhdf5's), with the parameters HDF5's `set_local` stores in
//! the pipeline message. The reader's chunk decoder is nc-filters' [`ChunkDecoder`] (built-in
//! codecs and plugins) with these two added; the writer registers them in its registry.

use std::sync::Arc;

use nc_filters::{ChunkDecoder, Filter, FilterContext, FilterError, FilterFactory, FilterId};

/// The name of an HDF5 filter id for messages (`"unknown"` for an id the table lacks); see
/// [`nc_filters::known`] for the name a pipeline message carries.
pub fn filter_name(id: u32) -> &'static str {
    nc_filters::filter_name(id).unwrap_or("unknown")
}

/// The decoder the HDF5 reader uses by default: nc-filters' codecs and plugins, and HDF5's own
/// nbit and scaleoffset.
pub fn chunk_decoder() -> ChunkDecoder {
    ChunkDecoder::with_codecs(hdf5_only())
}

/// The factories of nbit and scaleoffset (encode and decode; their parameters are the stored
/// ones, as `nbit::params_for` and `scaleoffset::params_for` make them).
pub(crate) fn hdf5_only() -> Vec<Arc<dyn FilterFactory>> {
    vec![Arc::new(Hdf5Only(NBIT)), Arc::new(Hdf5Only(SCALEOFFSET))]
}

pub(crate) mod nbit;
pub(crate) mod scaleoffset;

/// HDF5's nbit filter id.
pub(crate) const NBIT: FilterId = 5;
/// HDF5's scale-offset filter id.
pub(crate) const SCALEOFFSET: FilterId = 6;

/// The factory (and, configured, the filter) of one of HDF5's own filters.
#[derive(Clone)]
struct Hdf5Only(FilterId);

/// One configured nbit or scaleoffset filter.
struct Configured {
    id: FilterId,
    params: Vec<u32>,
    limit: usize,
}

impl FilterFactory for Hdf5Only {
    fn id(&self) -> FilterId {
        self.0
    }
    fn name(&self) -> &str {
        filter_name(self.0)
    }
    fn build(&self, params: &[u32], ctx: &FilterContext) -> Result<Box<dyn Filter>, FilterError> {
        Ok(Box::new(Configured {
            id: self.0,
            params: params.to_vec(),
            limit: ctx.max_decoded,
        }))
    }
}

impl Filter for Configured {
    fn id(&self) -> FilterId {
        self.id
    }
    fn name(&self) -> &str {
        filter_name(self.id)
    }
    fn encode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let encoded = if self.id == NBIT {
            nbit::encode(chunk, &self.params)
        } else {
            scaleoffset::encode(chunk, &self.params)
        };
        *out = encoded.map_err(|reason| FilterError::BadParams {
            id: self.id,
            name: filter_name(self.id).to_string(),
            params: self.params.clone(),
            reason,
        })?;
        Ok(())
    }
    fn decode(&self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), FilterError> {
        let decoded = if self.id == NBIT {
            hdf5_reader::filters::nbit::decompress_with_limit(chunk, &self.params, self.limit)
        } else {
            hdf5_reader::filters::scaleoffset::decompress_with_limit(
                chunk,
                &self.params,
                self.limit,
            )
        };
        *out = decoded.map_err(|e| FilterError::Corrupt {
            id: self.id,
            name: filter_name(self.id),
            what: e.to_string(),
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nc_dataset::FilterSpec;

    #[test]
    fn names_come_from_the_table() {
        assert_eq!(filter_name(1), "deflate");
        assert_eq!(filter_name(5), "nbit");
        assert_eq!(filter_name(6), "scaleoffset");
        assert_eq!(filter_name(32008), "bitshuffle");
        assert_eq!(filter_name(40000), "unknown");
    }

    #[test]
    fn the_reader_decodes_hdf5s_own_filters_and_the_builtins() {
        let d = chunk_decoder();
        for id in [1, 2, 3, 4, 5, 6, 305, 307, 32000, 32001, 32004, 32015] {
            assert!(d.supports(id), "{id}");
        }
        // a corrupt nbit chunk is the filter's error, naming it
        let nbit = FilterSpec {
            id: NBIT,
            params: vec![8, 0, 4, 1, 4, 0, 32, 0],
        };
        let e = d
            .decode(&[nbit], FilterContext::new(4, &[4]), &[])
            .unwrap_err();
        assert!(e.to_string().starts_with("filter 5 (nbit): "), "{e}");
        let e = Configured {
            id: SCALEOFFSET,
            params: vec![],
            limit: 1,
        }
        .encode(&[1], &mut Vec::new())
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("filter 6 (scaleoffset): bad parameters"),
            "{e}"
        );
    }
}
