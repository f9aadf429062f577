//! [`ZarrFile`]: an opened store, its [`Dataset`], and hyperslab reads that assemble chunks
//! (missing chunks read as the fill value; chunks are decoded in parallel, a bounded batch
//! at a time).

use crate::convert;
use crate::dtype::Kind;
use crate::error::ZarrError;
use crate::meta::{join, Loader, VarInfo};
use crate::modes::{Opening, ZarrModes};
use crate::store::Store;
use crate::v3;
use nc_dataset::{ChunkRequest, MaybeBytes, Slab};
use nc_dataset::{DataError, DataSource, Dataset, NcString, Values, VarId};
use nc_filters::{FilterContext, Pipeline, Registry};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Chunks decoded at once by one read (bounds the memory of a read to this many chunks
/// beyond its result).
const BATCH: usize = 64;

/// Largest result of one read (bytes).
const MAX_READ: u64 = 1 << 34;

/// An NCZarr or Zarr store opened for reading.
pub struct ZarrFile {
    /// The store as shown in messages.
    shown: String,
    store: Box<dyn Store>,
    ds: Dataset,
    vars: Vec<VarInfo>,
    registry: OnceLock<Registry>,
    warnings: Vec<String>,
    /// Shard indexes read so far, by shard key (Zarr v3 sharding; cleared when large).
    shard_indexes: Mutex<HashMap<String, ShardIndex>>,
    /// Shards with codecs of their own, decoded (Zarr v3 sharding).
    decoded: Mutex<DecodedShards>,
}

/// A shard's index: (offset, length) of each inner chunk, C order.
type ShardIndex = Arc<Vec<(u64, u64)>>;

/// Shard indexes kept at once (each is 16 bytes per inner chunk).
const SHARD_INDEX_CACHE: usize = 256;

/// Bytes of decoded shards kept at once (shards with codecs of their own, which are read and
/// decoded whole); the last one decoded is kept whatever its size.
const DECODED_SHARDS_BYTES: usize = 1 << 30;

/// Where the bytes of a shard are: a range of the store object, or a shard decoded in
/// memory.
#[derive(Debug, Clone)]
enum ShardBytes {
    /// Bytes `base..base + len` of the object.
    Store { base: u64, len: u64 },
    /// Bytes `base..base + len` of a decoded shard.
    Mem {
        buf: Arc<Vec<u8>>,
        base: usize,
        len: usize,
    },
}

impl ShardBytes {
    fn len(&self) -> u64 {
        match self {
            ShardBytes::Store { len, .. } => *len,
            ShardBytes::Mem { len, .. } => *len as u64,
        }
    }

    /// Bytes `offset..offset + len` of these (checked by the caller to lie inside).
    fn sub(&self, offset: u64, len: u64) -> ShardBytes {
        match self {
            ShardBytes::Store { base, .. } => ShardBytes::Store {
                base: base + offset,
                len,
            },
            ShardBytes::Mem { buf, base, .. } => ShardBytes::Mem {
                buf: buf.clone(),
                base: base + offset as usize,
                len: len as usize,
            },
        }
    }
}

/// Decoded shards by cache name: a slot per shard (filled by the first thread wanting it),
/// and the order they were filled in with their sizes.
#[derive(Default)]
struct DecodedShards {
    slots: HashMap<String, DecodedSlot>,
    order: std::collections::VecDeque<(String, usize)>,
    bytes: usize,
}

type DecodedSlot = Arc<Mutex<Option<Arc<Vec<u8>>>>>;

/// A chunk error of the shard layer, given the variable's path.
fn with_var(e: ZarrError, var: &str) -> ZarrError {
    match e {
        ZarrError::Chunk { var: v, key, what } if v.is_empty() => ZarrError::Chunk {
            var: var.to_string(),
            key,
            what,
        },
        other => other,
    }
}

/// The metadata of a version 2 or version 3 store.
fn load_any(store: &dyn Store, location: &Opening<'_>) -> Result<v3::Loaded, ZarrError> {
    if v3::is_v3(store)? {
        return v3::load(store, location);
    }
    let l = Loader::load(store, location)?;
    Ok((l.ds, l.vars, l.warnings))
}

impl std::fmt::Debug for ZarrFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZarrFile")
            .field("store", &self.shown)
            .finish()
    }
}

impl ZarrFile {
    /// Read the metadata of an open store: `shown` names it in messages, `name` is the
    /// dataset name, `modes` say NCZarr or pure Zarr and whether XArray's names are read.
    ///
    /// # Errors
    /// A missing `.zgroup` (or `zarr.json`), malformed metadata (the error names the object
    /// key), store failures.
    pub fn open(
        store: Box<dyn Store>,
        shown: &str,
        name: &str,
        modes: &ZarrModes,
    ) -> Result<ZarrFile, ZarrError> {
        let opening = Opening {
            shown,
            name,
            modes: *modes,
        };
        let (ds, vars, warnings) = load_any(store.as_ref(), &opening)?;
        Ok(ZarrFile {
            shown: shown.to_string(),
            store,
            ds,
            vars,
            registry: OnceLock::new(),
            warnings,
            shard_indexes: Mutex::default(),
            decoded: Mutex::default(),
        })
    }

    /// Read a store that is already open (a [`crate::MemStore`], a custom store). `name` is
    /// the dataset name and the name shown; `pure_zarr` and `xarray` as in [`ZarrModes`].
    ///
    /// # Errors
    /// As [`ZarrFile::open`].
    pub fn from_store(
        store: Box<dyn Store>,
        name: &str,
        pure_zarr: bool,
        xarray: bool,
    ) -> Result<ZarrFile, ZarrError> {
        let modes = ZarrModes {
            pure_zarr,
            xarray,
            v3: false,
        };
        ZarrFile::open(store, name, name, &modes)
    }

    /// Decode with a filter registry of the caller's (instead of the built-in codecs plus
    /// the plugins of `HDF5_PLUGIN_PATH`, loaded at the first data read).
    pub fn with_registry(self, registry: Registry) -> ZarrFile {
        let _ = self.registry.set(registry);
        self
    }

    /// The dataset: groups, dimensions, variables, attributes and storage settings.
    pub fn dataset(&self) -> &Dataset {
        &self.ds
    }

    /// What the reader left out (one sentence each, naming the array), for the tool to
    /// print on stderr.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The store as shown in messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    fn registry(&self) -> &Registry {
        self.registry.get_or_init(|| {
            let mut r = Registry::with_builtins();
            let _ = r.load_default_plugins();
            r
        })
    }

    fn pipeline(&self, v: &VarInfo) -> Result<Option<Pipeline>, ZarrError> {
        if v.codecs.is_empty() {
            return Ok(None);
        }
        let mut ctx = FilterContext::new(v.dtype.size(), &v.chunks);
        if v.dtype.kind == Kind::VlenUtf8 {
            // vlen-utf8 chunks have no fixed size: the 4-byte count, and per string its
            // 4-byte length and bytes; decoded sizes keep the default bound, no length check
            ctx.type_size = 1;
            ctx.chunk_shape = Vec::new();
        } else if v.dtype.kind == Kind::Char {
            // `S1` / `U1`: one byte per element, or four when NumPy wrote `U1` (UCS-4); the
            // reader checks which (`load_chunk`)
            ctx.max_decoded = ctx.chunk_bytes().map_or(ctx.max_decoded, |n| {
                n.saturating_mul(4).saturating_add(1024)
            });
            ctx.chunk_shape = Vec::new();
        } else {
            // decoded chunks are exactly one chunk (plus checksum framing): a larger claim is
            // an error
            ctx.max_decoded = ctx
                .chunk_bytes()
                .map_or(ctx.max_decoded, |n| n.saturating_add(1024));
        }
        let akey = join(&v.key, ".zarray");
        crate::codecs::pipeline(&v.codecs, self.registry(), ctx, &v.path, &akey).map(Some)
    }

    /// The key of the chunk (of a sharded array: of the shard) holding chunk `idx` (of a
    /// sharded array: inner chunk `idx`).
    fn chunk_key(v: &VarInfo, idx: &[u64]) -> String {
        let sep = v.sep.to_string();
        if let Some(l) = &v.v3 {
            let coords: Vec<String> = match &l.shard {
                // the innermost chunks along each dimension of a shard
                Some(s) => idx
                    .iter()
                    .zip(s.shape.iter().zip(&v.chunks))
                    .map(|(i, (s, c))| (i / (s / c)).to_string())
                    .collect(),
                None => idx.iter().map(u64::to_string).collect(),
            };
            return match (l.default_keys, l.scalar) {
                (true, true) => join(&v.key, "c"),
                (true, false) => join(&v.key, &format!("c{sep}{}", coords.join(&sep))),
                (false, true) => join(&v.key, "0"),
                (false, false) => join(&v.key, &coords.join(&sep)),
            };
        }
        let parts: Vec<String> = idx.iter().map(u64::to_string).collect();
        let tail = if parts.is_empty() {
            "0".to_string()
        } else {
            parts.join(&sep)
        };
        // the key is "" for a store that is one array: its chunks are at the root
        join(&v.key, &tail)
    }

    /// One chunk in C order, `None` when absent; for an object array the slots (1-based
    /// indices into the chunk's strings, see [`Kind::VlenUtf8`]) and the strings.
    fn load_chunk(
        &self,
        v: &VarInfo,
        pipe: Option<&Pipeline>,
        idx: &[u64],
        chunk_elems: usize,
    ) -> Result<Option<LoadedChunk>, ZarrError> {
        let key = Self::chunk_key(v, idx);
        let raw = match v.v3.as_ref().and_then(|l| l.shard.as_ref()) {
            Some(shard) => self.inner_chunk(v, shard, &key, idx)?,
            None => self.store.get(&key)?,
        };
        let Some(raw) = raw else {
            return Ok(None);
        };
        let bad = |what: String| ZarrError::Chunk {
            var: v.path.clone(),
            key: key.clone(),
            what,
        };
        let mut data = match pipe {
            Some(p) => p.decode(&raw).map_err(|e| ZarrError::Filter {
                var: v.path.clone(),
                source: e.for_variable(&v.path),
            })?,
            None => raw,
        };
        let mut strings = Vec::new();
        if v.dtype.kind == Kind::VlenUtf8 {
            strings = vlen_utf8_decode(&data, chunk_elems).map_err(bad)?;
            data = (1..=strings.len() as u64)
                .flat_map(u64::to_le_bytes)
                .collect();
        }
        let want = chunk_elems * v.dtype.size();
        if data.len() != want {
            if v.dtype.kind == Kind::Char && data.len() == 4 * want {
                // `<U1` written by NumPy: one UCS-4 code point per char, which a char holds
                // when it is at most U+00FF (its Latin-1 byte); past that it is an error, not
                // a silently cut byte
                let big = v.dtype.big_endian();
                let mut chars = Vec::with_capacity(want);
                for c in data.chunks_exact(4) {
                    let u = if big {
                        u32::from_be_bytes([c[0], c[1], c[2], c[3]])
                    } else {
                        u32::from_le_bytes([c[0], c[1], c[2], c[3]])
                    };
                    let b = u8::try_from(u).map_err(|_| {
                        bad(format!(
                            "holds the character U+{u:04X}, which a char (one byte, dtype \
                             \"{}U1\") cannot hold; read it with zarr-python",
                            if big { '>' } else { '<' }
                        ))
                    })?;
                    chars.push(b);
                }
                data = chars;
            } else {
                return Err(bad(format!(
                    "decodes to {} bytes, expected {want} ({} elements of {} bytes)",
                    data.len(),
                    chunk_elems,
                    v.dtype.size()
                )));
            }
        }
        if v.fortran && v.chunks.len() > 1 {
            data = f_to_c(&data, &v.chunks, v.dtype.size());
        }
        if let Some(order) = v.v3.as_ref().and_then(|l| l.transpose.as_ref()) {
            data = v3::untranspose(&data, &v.chunks, order, v.dtype.size());
        }
        Ok(Some((data, strings)))
    }

    /// The stored bytes of inner chunk `idx` of a sharded array, from the shard at `key`
    /// (`None`: the shard or the inner chunk is absent, so it reads as fill). Each level of
    /// a nested sharding gives the bytes of the next level's shard; a shard with codecs of its
    /// own is read whole and decoded (once: see [`ZarrFile::decoded_shard`]), else only its
    /// index and the one inner chunk are read.
    fn inner_chunk(
        &self,
        v: &VarInfo,
        shard: &v3::Shard,
        key: &str,
        idx: &[u64],
    ) -> Result<Option<Vec<u8>>, ZarrError> {
        let Some(size) = self.store.size(key)? else {
            return Ok(None);
        };
        let mut src = ShardBytes::Store { base: 0, len: size };
        let mut level = shard;
        // names this level's shard in the caches: the key, then the inner chunk of each level
        let mut name = key.to_string();
        loop {
            if !level.codecs.is_empty() {
                src = self.decoded_shard(v, level, key, &name, &src)?;
            }
            let index = self.shard_index(v, level, key, &name, &src)?;
            // the inner chunk of this level holding innermost chunk `idx`
            let inner = level.inner_shape(&v.chunks);
            let mut lin = 0u64;
            for (((i, c), ic), per) in idx
                .iter()
                .zip(&v.chunks)
                .zip(inner)
                .zip(level.per_shard(&v.chunks))
            {
                lin = lin * per + (i * c / ic) % per;
            }
            let Some(&(offset, len)) = index.get(lin as usize) else {
                return Ok(None);
            };
            if offset == u64::MAX && len == u64::MAX {
                return Ok(None);
            }
            let sub = src.sub(offset, len);
            match level.inner.as_deref() {
                Some(next) => {
                    if len > next.max_stored() {
                        return Err(ZarrError::Chunk {
                            var: v.path.clone(),
                            key: key.to_string(),
                            what: format!(
                                "inner shard {lin} holds {len} bytes, more than its metadata \
                                 allows ({}): the shard is corrupt",
                                next.max_stored()
                            ),
                        });
                    }
                    name = format!("{name}#{lin}");
                    src = sub;
                    level = next;
                }
                None => {
                    return self
                        .shard_bytes(key, &sub)
                        .map(Some)
                        .map_err(|e| with_var(e, &v.path))
                }
            }
        }
    }

    /// Bytes `src` of the shard at `key`.
    fn shard_bytes(&self, key: &str, src: &ShardBytes) -> Result<Vec<u8>, ZarrError> {
        match src {
            ShardBytes::Store { base, len } => {
                self.store
                    .get_range(key, *base, *len)?
                    .ok_or_else(|| ZarrError::Chunk {
                        var: String::new(),
                        key: key.to_string(),
                        what: "the shard vanished while it was read".into(),
                    })
            }
            ShardBytes::Mem { buf, base, len } => Ok(buf[*base..*base + *len].to_vec()),
        }
    }

    /// The shard `src` (of the object at `key`; `name` for the cache) read whole and decoded
    /// through the codecs of `level`. Decoded shards are kept (up to [`DECODED_SHARDS_BYTES`])
    /// so the inner chunks of one shard, read by any thread, decode it once.
    fn decoded_shard(
        &self,
        v: &VarInfo,
        level: &v3::Shard,
        key: &str,
        name: &str,
        src: &ShardBytes,
    ) -> Result<ShardBytes, ZarrError> {
        let bad = |what: String| ZarrError::Chunk {
            var: v.path.clone(),
            key: key.to_string(),
            what,
        };
        let slot = {
            let mut c = self.decoded.lock().unwrap_or_else(|p| p.into_inner());
            c.slots.entry(name.to_string()).or_default().clone()
        };
        // one thread decodes, the others wanting the same shard wait for it
        let mut held = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(buf) = held.as_ref() {
            let len = buf.len();
            return Ok(ShardBytes::Mem {
                buf: buf.clone(),
                base: 0,
                len,
            });
        }
        let stored = src.len();
        if stored > level.max_stored() {
            return Err(bad(format!(
                "the shard holds {stored} bytes, more than its codecs can make of the {} bytes \
                 its metadata allows: the shard is corrupt",
                level.max_bytes
            )));
        }
        let raw = self
            .shard_bytes(key, src)
            .map_err(|e| with_var(e, &v.path))?;
        let mut ctx = FilterContext::new(1, &[]);
        ctx.max_decoded = usize::try_from(level.max_stored()).unwrap_or(usize::MAX);
        let pipe = crate::codecs::pipeline(
            &level.codecs,
            self.registry(),
            ctx,
            &v.path,
            &join(&v.key, "zarr.json"),
        )?;
        let data = pipe
            .decode(&raw)
            .map_err(|e| bad(format!("decoding the whole shard: {e}")))?;
        if data.len() as u64 > level.max_bytes {
            return Err(bad(format!(
                "the shard decodes to {} bytes, more than the {} bytes its metadata allows: \
                 the shard is corrupt",
                data.len(),
                level.max_bytes
            )));
        }
        let len = data.len();
        let buf = Arc::new(data);
        *held = Some(buf.clone());
        drop(held);
        let mut c = self.decoded.lock().unwrap_or_else(|p| p.into_inner());
        c.order.push_back((name.to_string(), len));
        c.bytes += len;
        while c.bytes > DECODED_SHARDS_BYTES && c.order.len() > 1 {
            if let Some((k, n)) = c.order.pop_front() {
                c.slots.remove(&k);
                c.bytes -= n;
            }
        }
        Ok(ShardBytes::Mem { buf, base: 0, len })
    }

    /// The (offset, length) entries of the index of shard `src` (of the object at `key`;
    /// `name` for the cache), each checked to lie inside the shard.
    fn shard_index(
        &self,
        v: &VarInfo,
        shard: &v3::Shard,
        key: &str,
        name: &str,
        src: &ShardBytes,
    ) -> Result<ShardIndex, ZarrError> {
        if let Some(ix) = self
            .shard_indexes
            .lock()
            .ok()
            .and_then(|m| m.get(name).cloned())
        {
            return Ok(ix);
        }
        let bad = |what: String| ZarrError::Chunk {
            var: v.path.clone(),
            key: key.to_string(),
            what,
        };
        let size = src.len();
        let ilen = shard.index_len(&v.chunks);
        let which = if name == key {
            String::new()
        } else {
            format!("inner shard {}: ", &name[key.len() + 1..])
        };
        if size < ilen {
            return Err(bad(format!(
                "{which}the shard holds {size} bytes, fewer than its {ilen}-byte index"
            )));
        }
        let at = if shard.index_at_start { 0 } else { size - ilen };
        let raw = self
            .shard_bytes(key, &src.sub(at, ilen))
            .map_err(|e| with_var(e, &v.path))?;
        let entries_len = if shard.index_crc {
            raw.len() - 4
        } else {
            raw.len()
        };
        let (body, sum) = raw.split_at(entries_len);
        if shard.index_crc {
            let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
            let computed = nc_filters::crc32c(body);
            if stored != computed {
                return Err(bad(format!(
                    "{which}the shard index checksum does not match (stored {stored:#010x}, \
                     computed {computed:#010x}): the shard is corrupt"
                )));
            }
        }
        let word = |b: &[u8]| {
            let a = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
            if shard.index_big {
                u64::from_be_bytes(a)
            } else {
                u64::from_le_bytes(a)
            }
        };
        let mut entries = Vec::with_capacity(body.len() / 16);
        for (i, e) in body.chunks_exact(16).enumerate() {
            let (offset, len) = (word(&e[..8]), word(&e[8..]));
            let empty = offset == u64::MAX && len == u64::MAX;
            if !empty && offset.checked_add(len).is_none_or(|end| end > size) {
                return Err(bad(format!(
                    "{which}shard index entry {i} points at bytes {offset}+{len}, outside the \
                     {size}-byte shard: the shard is corrupt"
                )));
            }
            entries.push((offset, len));
        }
        let ix = Arc::new(entries);
        if let Ok(mut m) = self.shard_indexes.lock() {
            if m.len() >= SHARD_INDEX_CACHE {
                m.clear();
            }
            m.insert(name.to_string(), ix.clone());
        }
        Ok(ix)
    }

    /// Read a hyperslab of variable `var` (row-major result).
    ///
    /// # Errors
    /// A request outside the variable, a missing or failing codec, a malformed chunk.
    pub fn read_var(&self, var: VarId, start: &[u64], count: &[u64]) -> Result<Values, ZarrError> {
        let (v, out, strings) = self.read_bytes(var, start, count)?;
        if v.dtype.kind == Kind::VlenUtf8 {
            let resolved = out
                .chunks_exact(8)
                .map(|slot| {
                    let mut k = [0u8; 8];
                    k.copy_from_slice(slot);
                    let k = u64::from_le_bytes(k) as usize;
                    let s = k.checked_sub(1).and_then(|i| strings.get(i));
                    Some(s.cloned().unwrap_or_default())
                })
                .collect();
            return Ok(Values::String(resolved));
        }
        Ok(convert::decode(&out, &v.dtype))
    }

    /// A hyperslab of a variable of a fixed-size numeric or char type as little-endian
    /// element bytes, row-major (what a copy moves without converting twice); `None` for the
    /// other types (strings, half floats read as floats).
    ///
    /// # Errors
    /// As [`ZarrFile::read_var`].
    pub fn read_le(
        &self,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Option<Result<Vec<u8>, ZarrError>> {
        let v = self.vars.get(var.0)?;
        if !matches!(v.dtype.kind, Kind::Num(_) | Kind::Char) {
            return None;
        }
        Some(self.read_bytes(var, start, count).map(|(v, mut out, _)| {
            let es = v.dtype.size();
            if v.dtype.big_endian() && es > 1 {
                for e in out.chunks_exact_mut(es) {
                    e.reverse();
                }
            }
            out
        }))
    }

    /// The stored bytes (all codecs still applied) of the chunk of `var` beginning at
    /// `offsets`, when it has exactly the shape `chunk`, little-endian elements in C order,
    /// and exactly the codecs of HDF5 filter chain `chain` (ids and parameters, application
    /// order; codecs with other framing, such as a v3 `gzip`, never match): a copy to that
    /// chunking and those filters takes them as they are. `None` otherwise, or when the chunk
    /// is absent.
    pub fn raw_chunk(
        &self,
        var: VarId,
        offsets: &[u64],
        chunk: &[u64],
        chain: &[nc_dataset::FilterSpec],
    ) -> Option<Vec<u8>> {
        let v = self.vars.get(var.0)?;
        let numeric = match v.dtype.kind {
            Kind::Num(t) => t.size() == 1 || !v.dtype.big_endian(),
            _ => false,
        };
        let plain =
            v.v3.as_ref()
                .is_none_or(|l| l.transpose.is_none() && !l.scalar);
        if !numeric
            || !plain
            || v.fortran
            || v.chunks.as_slice() != chunk
            || offsets.len() != chunk.len()
            || v.codecs.len() != chain.len()
            || !v
                .codecs
                .iter()
                .zip(chain)
                .all(|(c, f)| c.spec.as_ref() == Some(f))
        {
            return None;
        }
        if offsets.iter().zip(chunk).any(|(o, c)| o % c != 0) {
            return None;
        }
        let idx: Vec<u64> = offsets.iter().zip(chunk).map(|(o, c)| o / c).collect();
        let key = Self::chunk_key(v, &idx);
        let raw = match v.v3.as_ref().and_then(|l| l.shard.as_ref()) {
            Some(shard) => self.inner_chunk(v, shard, &key, &idx).ok()??,
            None => self.store.get(&key).ok()??,
        };
        let bytes = chunk.iter().product::<u64>() * v.dtype.size() as u64;
        if chain.is_empty() && raw.len() as u64 != bytes {
            return None;
        }
        Some(raw)
    }

    /// The variable, the bytes of a hyperslab in the stored element order, and for an object
    /// array the strings its slots index.
    fn read_bytes(
        &self,
        var: VarId,
        start: &[u64],
        count: &[u64],
    ) -> Result<(&VarInfo, Vec<u8>, Vec<NcString>), ZarrError> {
        let v = self.vars.get(var.0).ok_or_else(|| ZarrError::Request {
            var: format!("#{}", var.0),
            what: "no such variable".into(),
        })?;
        let req = |what: String| ZarrError::Request {
            var: v.path.clone(),
            what,
        };
        let (start, count): (Vec<u64>, Vec<u64>) =
            if start.is_empty() && v.shape == [1] && self.ds.var(var).dims.is_empty() {
                (vec![0], vec![1])
            } else {
                (start.to_vec(), count.to_vec())
            };
        let rank = v.shape.len();
        // the variable's extent: its dimensions' lengths (a variable of an unlimited dimension
        // may be stored shorter than the dimension, and reads as fill past its records)
        let extent: Vec<u64> = if self.ds.var(var).dims.len() == rank {
            self.ds.shape(var)
        } else {
            v.shape.clone()
        };
        if start.len() != rank || count.len() != rank {
            return Err(req(format!(
                "hyperslab of rank {} for a variable of rank {rank}",
                start.len()
            )));
        }
        for i in 0..rank {
            if start[i].checked_add(count[i]).is_none_or(|e| e > extent[i]) {
                return Err(req(format!(
                    "hyperslab {}+{} exceeds dimension length {}",
                    start[i], count[i], extent[i]
                )));
            }
        }
        let esize = v.dtype.size();
        let total = count
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b))
            .filter(|&n| n.checked_mul(esize as u64).is_some_and(|b| b <= MAX_READ))
            .ok_or_else(|| req("request too large".into()))?;
        if total == 0 {
            return Ok((v, Vec::new(), Vec::new()));
        }
        let total = total as usize;
        let mut out = vec![0u8; total * esize];
        let pipe = self.pipeline(v)?;
        let chunk_elems = v.chunks.iter().product::<u64>() as usize;
        // chunk grid covering the request
        let lo: Vec<u64> = (0..rank).map(|i| start[i] / v.chunks[i]).collect();
        let hi: Vec<u64> = (0..rank)
            .map(|i| (start[i] + count[i] - 1) / v.chunks[i])
            .collect();
        // chunk indices are made a batch at a time (a request may cover very many chunks)
        let span: Vec<u64> = (0..rank).map(|i| hi[i] - lo[i] + 1).collect();
        let nchunks: u64 = span.iter().product();
        let index = |mut lin: u64| -> Vec<u64> {
            let mut idx = vec![0u64; rank];
            for i in (0..rank).rev() {
                idx[i] = lo[i] + lin % span[i];
                lin /= span[i];
            }
            idx
        };
        // the strings of an object array's chunks read so far (slot k is strings[k - 1])
        let mut strings: Vec<NcString> = Vec::new();
        let mut first = 0u64;
        while first < nchunks {
            let last = (first + BATCH as u64).min(nchunks);
            let batch: Vec<Vec<u64>> = (first..last).map(index).collect();
            let decoded: Vec<Result<Option<LoadedChunk>, ZarrError>> = batch
                .par_iter()
                .map(|idx| self.load_chunk(v, pipe.as_ref(), idx, chunk_elems))
                .collect();
            for (idx, d) in batch.iter().zip(decoded) {
                let d = match d? {
                    Some((mut data, s)) if !s.is_empty() => {
                        let base = strings.len() as u64;
                        for slot in data.chunks_exact_mut(8) {
                            let mut k = [0u8; 8];
                            k.copy_from_slice(slot);
                            let k = u64::from_le_bytes(k);
                            slot.copy_from_slice(&(k + base).to_le_bytes());
                        }
                        strings.extend(s);
                        Some(data)
                    }
                    other => other.map(|(data, _)| data),
                };
                copy_region(v, idx, &start, &count, d.as_deref(), &mut out);
            }
            first = last;
        }
        Ok((v, out, strings))
    }
}

/// A decoded chunk in C order, and for an object array the strings its slots index.
type LoadedChunk = (Vec<u8>, Vec<NcString>);

/// The strings of a `vlen-utf8` chunk: a little-endian u32 count, then per string a
/// little-endian u32 byte length and its UTF-8 bytes (numcodecs' VLenUTF8 format). The count
/// must be the chunk's element count; bytes that are not UTF-8 are kept as they are.
fn vlen_utf8_decode(data: &[u8], elems: usize) -> Result<Vec<NcString>, String> {
    let u32_at = |pos: &mut usize, what: &str| -> Result<usize, String> {
        let b = data
            .get(*pos..*pos + 4)
            .ok_or_else(|| format!("vlen-utf8: ends at byte {pos} before the {what}"))?;
        *pos += 4;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let mut pos = 0usize;
    let n = u32_at(&mut pos, "string count")?;
    if n != elems {
        return Err(format!(
            "vlen-utf8: holds {n} strings, the chunk has {elems} elements"
        ));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let len = u32_at(&mut pos, &format!("length of string {i}"))?;
        let bytes = pos
            .checked_add(len)
            .and_then(|end| data.get(pos..end))
            .ok_or_else(|| {
                format!("vlen-utf8: string {i} of {len} bytes runs past the chunk's end")
            })?;
        out.push(NcString::from(bytes));
        pos += len;
    }
    Ok(out)
}

/// Copy the part of chunk `idx` inside the request into `out` (fill when `data` is None).
fn copy_region(
    v: &VarInfo,
    idx: &[u64],
    start: &[u64],
    count: &[u64],
    data: Option<&[u8]>,
    out: &mut [u8],
) {
    let rank = v.shape.len();
    let es = v.dtype.size();
    if rank == 0 {
        let n = es.min(out.len());
        match data {
            Some(d) if d.len() >= n => out[..n].copy_from_slice(&d[..n]),
            _ => out[..n].copy_from_slice(&v.fill[..n]),
        }
        return;
    }
    let mut rlo = vec![0u64; rank];
    let mut rhi = vec![0u64; rank];
    for i in 0..rank {
        let c0 = idx[i] * v.chunks[i];
        rlo[i] = start[i].max(c0);
        rhi[i] = (start[i] + count[i]).min(c0 + v.chunks[i]);
        if rlo[i] >= rhi[i] {
            return;
        }
    }
    // strides (elements) of the chunk and of the output
    let mut cs = vec![1usize; rank];
    let mut os = vec![1usize; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        cs[i] = cs[i + 1] * v.chunks[i + 1] as usize;
        os[i] = os[i + 1] * count[i + 1] as usize;
    }
    let last = rank - 1;
    let run = (rhi[last] - rlo[last]) as usize;
    let mut pos = rlo.clone();
    loop {
        let mut co = 0usize;
        let mut oo = 0usize;
        for i in 0..rank {
            co += (pos[i] - idx[i] * v.chunks[i]) as usize * cs[i];
            oo += (pos[i] - start[i]) as usize * os[i];
        }
        let dst = &mut out[oo * es..(oo + run) * es];
        match data {
            Some(d) => dst.copy_from_slice(&d[co * es..(co + run) * es]),
            None => {
                for e in dst.chunks_exact_mut(es) {
                    e.copy_from_slice(&v.fill);
                }
            }
        }
        // next row
        let mut d = last;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            pos[d] += 1;
            if pos[d] < rhi[d] {
                break;
            }
            pos[d] = rlo[d];
        }
    }
}

/// Reorder a Fortran-order chunk into C order.
fn f_to_c(data: &[u8], chunks: &[u64], es: usize) -> Vec<u8> {
    let rank = chunks.len();
    let n = data.len() / es;
    let mut out = vec![0u8; data.len()];
    // F strides
    let mut fs = vec![1usize; rank];
    for i in 1..rank {
        fs[i] = fs[i - 1] * chunks[i - 1] as usize;
    }
    let mut pos = vec![0usize; rank];
    for c in 0..n {
        let f: usize = (0..rank).map(|i| pos[i] * fs[i]).sum();
        out[c * es..(c + 1) * es].copy_from_slice(&data[f * es..(f + 1) * es]);
        for d in (0..rank).rev() {
            pos[d] += 1;
            if pos[d] < chunks[d] as usize {
                break;
            }
            pos[d] = 0;
        }
    }
    out
}

impl DataSource for ZarrFile {
    fn read(&self, _ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        let Slab { start, count } = slab;

        self.read_var(var, start, count)
            .map_err(|e| Box::new(e) as DataError)
    }

    fn read_le_bytes(&self, _ds: &Dataset, var: VarId, slab: Slab) -> MaybeBytes {
        let Slab { start, count } = slab;

        self.read_le(var, start, count)
            .map(|r| r.map_err(|e| Box::new(e) as DataError))
    }

    fn raw_chunk(&self, _ds: &Dataset, var: VarId, chunk: ChunkRequest) -> Option<Vec<u8>> {
        ZarrFile::raw_chunk(self, var, chunk.offsets, chunk.shape, chunk.chain)
    }

    fn stored_regions(&self, ds: &Dataset, var: VarId) -> Option<Vec<nc_dataset::Region>> {
        self.chunk_regions(ds, var)
    }
}

impl ZarrFile {
    /// The regions of `var` its stored chunks (of a sharded array: shards) cover, from one
    /// listing of the array's keys: a missing chunk reads as the array's fill value, so a
    /// copy visits only these (see `DataSource::stored_regions`). Only for numeric arrays of
    /// rank one or more whose stored fill value is the variable's (`Dataset::stored_fill`); `None`
    /// otherwise, or when the store cannot list its keys.
    fn chunk_regions(&self, ds: &Dataset, var: VarId) -> Option<Vec<nc_dataset::Region>> {
        let v = self.vars.get(var.0)?;
        let rank = v.shape.len();
        let scalar = v.v3.as_ref().is_some_and(|l| l.scalar) || ds.var(var).dims.is_empty();
        if !matches!(v.dtype.kind, Kind::Num(_)) || scalar || rank == 0 {
            return None;
        }
        let mut want = Vec::new();
        crate::convert::encode(&ds.stored_fill(var)?, &v.dtype, &mut want);
        if want != v.fill {
            return None;
        }
        let unit: Vec<u64> = match v.v3.as_ref().and_then(|l| l.shard.as_ref()) {
            Some(s) => s.shape.clone(),
            None => v.chunks.clone(),
        };
        if unit.len() != rank || unit.contains(&0) {
            return None;
        }
        let sep = v.sep;
        // the part of a key after the array's own key: `c/1/2` (v3 default keys) or `1.2`
        let head = match &v.v3 {
            Some(l) if l.default_keys => format!("c{sep}"),
            _ => String::new(),
        };
        let keys = self.store.list(&v.key).ok()?;
        let base = if v.key.is_empty() {
            String::new()
        } else {
            format!("{}/", v.key)
        };
        let mut out = Vec::new();
        for key in keys {
            let Some(tail) = key.strip_prefix(&base).and_then(|t| t.strip_prefix(&head)) else {
                continue;
            };
            let idx: Option<Vec<u64>> = tail.split(sep).map(|p| p.parse().ok()).collect();
            let Some(idx) = idx.filter(|i| i.len() == rank) else {
                continue; // metadata, or a key of something else
            };
            let start = (0..rank).map(|d| idx[d].saturating_mul(unit[d])).collect();
            // a key past the array's end is never read: left out
            out.extend(nc_dataset::Region::chunk_at(start, &unit, &v.shape));
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::vlen_utf8_decode;

    fn chunk(count: u32, items: &[&[u8]]) -> Vec<u8> {
        let mut b = count.to_le_bytes().to_vec();
        for s in items {
            b.extend_from_slice(&(s.len() as u32).to_le_bytes());
            b.extend_from_slice(s);
        }
        b
    }

    #[test]
    fn vlen_utf8_chunks() {
        assert_eq!(
            vlen_utf8_decode(&chunk(3, &[b"ab", b"", "é".as_bytes()]), 3),
            Ok(vec!["ab".into(), "".into(), "é".into()])
        );
        // wrong count, truncated header, a length past the end (no allocation from it)
        let e = vlen_utf8_decode(&chunk(2, &[b"a", b"b"]), 3).unwrap_err();
        assert!(e.contains("holds 2 strings, the chunk has 3"), "{e}");
        assert!(vlen_utf8_decode(&[1, 0], 1)
            .unwrap_err()
            .contains("string count"));
        let mut huge = 1u32.to_le_bytes().to_vec();
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        huge.extend_from_slice(b"abc");
        let e = vlen_utf8_decode(&huge, 1).unwrap_err();
        assert!(e.contains("runs past the chunk's end"), "{e}");
        // bytes that are not UTF-8 are kept
        assert_eq!(
            vlen_utf8_decode(&chunk(1, &[&[0xff, b'a']]), 1),
            Ok(vec![nc_dataset::NcString::from_bytes(vec![0xff, b'a'])])
        );
    }
}
