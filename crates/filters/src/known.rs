//! The one table of the filters this project knows by id: their HDF5 ids, the names each
//! format and tool uses for them, their Zarr codecs, and the built-in codec when there is one.
//! Every crate asks this table (through [`known`], [`filter_name`], [`filter_id_by_name`],
//! [`hdf5_id_for_codec`]) instead of keeping its own list.
//!
//! Sources: the HDF5 "Registered Filter Plugins" list (ids), libhdf5's own filter names
//! (`deflate`, `shuffle`, `fletcher32`, `szip`, `nbit`, `scaleoffset`), the names the plugins
//! give themselves (as `h5dump` prints them for files written by h5py, hdf5plugin and
//! netCDF-C's plugins), netCDF-C's filters documentation (`_Filter`, `nccopy -F`), numcodecs'
//! codec ids and the Zarr v3 codec registry.

use crate::codecs::{self, BuildFn, WorkingFn};
use crate::filter::FilterId;

/// How a filter appears in Zarr stores (numcodecs codec ids, Zarr v2 and NCZarr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numcodecs {
    /// No Zarr codec stands for this filter.
    None,
    /// numcodecs' codec of this id reads the HDF5 filter's chunks as they are stored (a
    /// kerchunk reference may point at them).
    Same(&'static str),
    /// Only NCZarr (netCDF-C's codec plugins) knows this codec id; numcodecs has none.
    Nczarr(&'static str),
    /// numcodecs has a codec of this id with a chunk framing of its own: a Zarr chain holding
    /// the filter is written with it (and its framing), but the codec is never read as the
    /// HDF5 filter.
    Reframed(&'static str),
}

impl Numcodecs {
    /// The codec id, whatever the kind.
    pub fn id(self) -> Option<&'static str> {
        match self {
            Numcodecs::None => None,
            Numcodecs::Same(c) | Numcodecs::Nczarr(c) | Numcodecs::Reframed(c) => Some(c),
        }
    }
}

/// A built-in codec's two functions: configure a filter from working parameters, and turn
/// visible parameters into working ones (HDF5's `set_local`).
#[derive(Clone, Copy)]
pub(crate) struct Codec {
    pub(crate) build: BuildFn,
    pub(crate) working: WorkingFn,
}

/// One filter of the table.
#[derive(Clone, Copy)]
pub struct KnownFilter {
    /// HDF5 filter id.
    pub id: FilterId,
    /// The name netCDF-C, ncdump and our messages use (`filter 307 (bzip2)`), accepted in
    /// `_Filter` and `-F` (case-insensitive).
    pub name: &'static str,
    /// More names accepted in `_Filter` and `-F` (case-insensitive).
    pub aliases: &'static [&'static str],
    /// The name written into an HDF5 filter pipeline message: libhdf5's for its own filters,
    /// the name the plugin gives itself for registered ones (some builds of a plugin write a
    /// longer sentence; this is the short form netCDF-C's and h5py's plugins write).
    pub hdf5_name: &'static str,
    /// Its Zarr v2 / NCZarr codec.
    pub numcodecs: Numcodecs,
    /// The Zarr v3 codec name the v3 writer uses for it, when there is one.
    pub zarr3: Option<&'static str>,
    /// The built-in codec, `None` when only a plugin (or, for HDF5's own nbit and
    /// scaleoffset, nc-hdf5) implements it.
    pub(crate) codec: Option<Codec>,
    /// Decoded on reading but never encoded here (PyTables' LZO): a copy stores the data
    /// without it.
    pub read_only: bool,
}

impl std::fmt::Debug for KnownFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownFilter")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("aliases", &self.aliases)
            .field("hdf5_name", &self.hdf5_name)
            .field("numcodecs", &self.numcodecs)
            .field("zarr3", &self.zarr3)
            .field("builtin", &self.codec.is_some())
            .field("read_only", &self.read_only)
            .finish()
    }
}

impl KnownFilter {
    /// True when this crate has a codec for it.
    pub fn is_builtin(&self) -> bool {
        self.codec.is_some()
    }
}

const fn row(id: FilterId, name: &'static str) -> KnownFilter {
    KnownFilter {
        id,
        name,
        aliases: &[],
        hdf5_name: name,
        numcodecs: Numcodecs::None,
        zarr3: None,
        codec: None,
        read_only: false,
    }
}

const fn with(build: BuildFn, working: WorkingFn) -> Option<Codec> {
    Some(Codec { build, working })
}

/// Every filter we know, by id. To add a codec: a row here (with its `codec`) and its module
/// in `codecs/`.
pub static FILTERS: &[KnownFilter] = &[
    KnownFilter {
        aliases: &["zlib"],
        numcodecs: Numcodecs::Same("zlib"),
        zarr3: Some("gzip"),
        codec: with(codecs::deflate::build, codecs::same),
        ..row(1, "deflate")
    },
    KnownFilter {
        numcodecs: Numcodecs::Same("shuffle"),
        zarr3: Some("numcodecs.shuffle"),
        codec: with(codecs::shuffle::build, codecs::shuffle::working),
        ..row(2, "shuffle")
    },
    KnownFilter {
        numcodecs: Numcodecs::Same("fletcher32"),
        zarr3: Some("numcodecs.fletcher32"),
        codec: with(codecs::fletcher32::build, codecs::same),
        ..row(3, "fletcher32")
    },
    KnownFilter {
        numcodecs: Numcodecs::Nczarr("szip"),
        codec: with(codecs::szip::build, codecs::szip::working),
        ..row(4, "szip")
    },
    row(5, "nbit"),
    row(6, "scaleoffset"),
    KnownFilter {
        codec: with(codecs::lzo::build, codecs::same),
        read_only: true,
        ..row(305, "lzo")
    },
    KnownFilter {
        aliases: &["bz2"],
        numcodecs: Numcodecs::Same("bz2"),
        zarr3: Some("numcodecs.bz2"),
        codec: with(codecs::bzip2::build, codecs::same),
        ..row(307, "bzip2")
    },
    KnownFilter {
        codec: with(codecs::lzf::build, codecs::lzf::working),
        ..row(32000, "lzf")
    },
    KnownFilter {
        numcodecs: Numcodecs::Same("blosc"),
        zarr3: Some("blosc"),
        codec: with(codecs::blosc::build, codecs::blosc::working),
        ..row(32001, "blosc")
    },
    KnownFilter {
        numcodecs: Numcodecs::Reframed("lz4"),
        zarr3: Some("numcodecs.lz4"),
        codec: with(codecs::lz4::build, codecs::same),
        ..row(32004, "lz4")
    },
    row(32008, "bitshuffle"),
    row(32013, "zfp"),
    KnownFilter {
        aliases: &["zstandard"],
        numcodecs: Numcodecs::Same("zstd"),
        zarr3: Some("zstd"),
        codec: with(codecs::zstd::build, codecs::same),
        ..row(32015, "zstd")
    },
    row(32017, "sz"),
];

/// The table's row for `id`.
pub fn known(id: FilterId) -> Option<&'static KnownFilter> {
    FILTERS.iter().find(|k| k.id == id)
}

/// The name of a known filter id (`307` → `"bzip2"`).
pub fn filter_name(id: FilterId) -> Option<&'static str> {
    known(id).map(|k| k.name)
}

/// The id of a known filter name or alias, case-insensitive (`"BZ2"` → 307).
pub fn filter_id_by_name(name: &str) -> Option<FilterId> {
    FILTERS
        .iter()
        .find(|k| {
            k.name.eq_ignore_ascii_case(name)
                || k.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
        .map(|k| k.id)
}

/// The HDF5 id of a Zarr codec id that stands for an HDF5 filter's chunks (`"zlib"` → 1), or of
/// such a filter's own name (`"deflate"`, `"bzip2"`). A codec with its own framing (numcodecs'
/// `lz4`) is not one.
pub fn hdf5_id_for_codec(codec: &str) -> Option<FilterId> {
    FILTERS
        .iter()
        .find(|k| match k.numcodecs {
            Numcodecs::Same(c) | Numcodecs::Nczarr(c) => c == codec || k.name == codec,
            Numcodecs::None | Numcodecs::Reframed(_) => false,
        })
        .map(|k| k.id)
}

/// True when numcodecs decodes the chunks of filter `id` as HDF5 stored them.
pub fn numcodecs_reads_stored(id: FilterId) -> bool {
    known(id).is_some_and(|k| matches!(k.numcodecs, Numcodecs::Same(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_id_or_name_twice_and_names_round_trip() {
        let mut ids: Vec<FilterId> = FILTERS.iter().map(|k| k.id).collect();
        let sorted = {
            let mut s = ids.clone();
            s.sort_unstable();
            s
        };
        assert_eq!(ids, sorted, "rows in id order");
        ids.dedup();
        assert_eq!(ids.len(), FILTERS.len(), "an id twice");
        let mut names: Vec<String> = FILTERS
            .iter()
            .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()))
            .map(str::to_ascii_lowercase)
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "a name twice: {names:?}");
        for k in FILTERS {
            assert_eq!(filter_name(k.id), Some(k.name));
            assert_eq!(filter_id_by_name(k.name), Some(k.id));
            assert_eq!(filter_id_by_name(&k.name.to_ascii_uppercase()), Some(k.id));
            for a in k.aliases {
                assert_eq!(filter_id_by_name(a), Some(k.id), "{a}");
            }
            assert!(!k.hdf5_name.is_empty() && k.hdf5_name.is_ascii());
            if let Some(c) = k.numcodecs.id() {
                let back = hdf5_id_for_codec(c);
                match k.numcodecs {
                    Numcodecs::Reframed(_) => assert_eq!(back, None, "{c}"),
                    _ => assert_eq!(back, Some(k.id), "{c}"),
                }
            }
        }
        assert_eq!(filter_name(40000), None);
        assert_eq!(filter_id_by_name("nosuch"), None);
    }

    #[test]
    fn every_builtin_codec_has_a_row_with_its_id() {
        let reg = crate::Registry::with_builtins();
        let built: Vec<FilterId> = FILTERS
            .iter()
            .filter(|k| k.is_builtin())
            .map(|k| k.id)
            .collect();
        assert_eq!(built, [1, 2, 3, 4, 305, 307, 32000, 32001, 32004, 32015]);
        for id in built {
            let f = reg.builtin(id).expect("registered");
            assert_eq!(f.id(), id);
            assert_eq!(f.name(), filter_name(id).unwrap_or(""));
            let filter = f
                .build(&[], &crate::FilterContext::new(4, &[8]))
                .or_else(|_| f.build(&[32, 8], &crate::FilterContext::new(4, &[8])))
                .expect("builds");
            assert_eq!(filter.id(), id, "codec of row {id} says another id");
        }
        // decoded only: a copy leaves them out
        let read_only: Vec<FilterId> = FILTERS
            .iter()
            .filter(|k| k.read_only)
            .map(|k| k.id)
            .collect();
        assert_eq!(read_only, [305]);
        // HDF5's own nbit and scaleoffset have rows but no codec here (nc-hdf5 has them)
        assert!(!known(5).is_some_and(KnownFilter::is_builtin));
        assert!(reg.builtin(5).is_none());
    }

    #[test]
    fn zarr_lookups() {
        assert_eq!(hdf5_id_for_codec("zlib"), Some(1));
        assert_eq!(hdf5_id_for_codec("deflate"), Some(1));
        assert_eq!(hdf5_id_for_codec("bzip2"), Some(307));
        assert_eq!(hdf5_id_for_codec("szip"), Some(4));
        assert_eq!(hdf5_id_for_codec("lz4"), None);
        assert_eq!(hdf5_id_for_codec("zstandard"), None);
        let refs: Vec<FilterId> = FILTERS
            .iter()
            .map(|k| k.id)
            .filter(|&id| numcodecs_reads_stored(id))
            .collect();
        assert_eq!(refs, [1, 2, 3, 307, 32001, 32015]);
        assert_eq!(known(32015).and_then(|k| k.zarr3), Some("zstd"));
    }
}
