//! What rust-hdf5 0.7.9 cannot write, written by us once it has closed the file: the global
//! heap (strings of any rank, vlen data, compounds holding either), and attributes whose value
//! is an array of a user-defined type or holds heap references.
//!
//! While the crate writes the file:
//! - a variable of such a type is created with its real datatype and layout, and its storage
//!   is allocated with null heap references;
//! - such an attribute is written as a *placeholder*: a scalar fixed-length string attribute
//!   of the same name whose encoded message is exactly as long as the real one, its value a
//!   random marker and a serial number;
//! - a compact variable of such a type gets data starting with the marker and a serial
//!   number (its references live in the object header).
//!
//! Then [`Deferred::finish`]:
//! 1. reopens the file with our reader to find each deferred variable's blocks;
//! 2. appends global heap collections at the end of the file while it lays out the values of
//!    the deferred variables and attributes (HDF5 file format spec III.E), writing the
//!    variables' references into their blocks (raw data carries no checksum);
//! 3. finds each placeholder by its marker, checks that the bytes before it are the
//!    placeholder message we asked for, overwrites the message with the real one (same
//!    length, so nothing moves: not the object header, not the fractal heap of dense
//!    attribute storage, whose name index hashes only the name) and recomputes the checksum
//!    of the block holding it (object header chunk `OHDR`/`OCHK` or fractal heap direct block
//!    `FHDB`, spec IV.A.1.b and III.G), which is validated before the change (a message of
//!    4 KiB or more in dense storage is a "huge" heap object, outside any such block, and is
//!    written as it is); compact variables' data the same way;
//! 4. writes the dimension scale attachments ([`super::dimscale`]) and the dense attribute
//!    storage of objects with many attributes ([`super::dense`]);
//! 5. moves the end-of-file address in the superblock (version 2/3, spec II.A) past what it
//!    appended.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use nc_dataset::{AtomicType, Attribute, DataSource, Dataset, NcType, VarId};
use rust_hdf5::format::checksum::checksum_metadata;
use rust_hdf5::format::fractal_heap::FractalHeapHeader;
use rust_hdf5::format::global_heap::{GlobalHeapCollection, GlobalHeapObject};
use rust_hdf5::format::messages::attribute::AttributeMessage;
use rust_hdf5::format::{FormatContext, LibverBound};
use rust_hdf5::DatatypeMessage;

use super::dense::Dense;
use super::dimscale::DimScales;
use super::locate::Locator;
use super::strtype;
use super::user::{self, HeapSink};
use super::{read_slab, slabs, SLAB_ELEMENTS};
use crate::read::Places;
use crate::{Hdf5Error, Nc4File};

/// A heap collection is closed once its objects reach this size (libhdf5's `H5HG_MAXSIZE`);
/// a bigger object gets a collection of its own.
const COLLECTION_BYTES: usize = 64 << 10;
/// Bytes of the marker that starts a placeholder attribute's value.
const MARKER_LEN: usize = 12;
/// How far before a placeholder we look for the start of the block holding it.
const MAX_BLOCK_SPAN: u64 = 4 << 20;
/// File bytes scanned at a time when looking for placeholders.
const SCAN_BLOCK: usize = 16 << 20;
/// From this file size on, the placeholder scan skips the variables' raw data (where no
/// placeholder ever is); a smaller file is read whole, which costs less than finding its
/// variables' blocks.
const SKIP_RAW_FROM: u64 = 64 << 20;

fn ctx() -> FormatContext {
    FormatContext::default_v3()
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Hdf5Error {
    let what = what.into();
    move |e| Hdf5Error::Write {
        what,
        message: e.to_string(),
    }
}

/// An attribute written as a placeholder.
struct DeferredAttr {
    serial: u32,
    /// "group /g" or "variable v", for messages.
    owner: String,
    attr: Attribute,
    /// The encoded placeholder message (what must be found in the file).
    placeholder: Vec<u8>,
    /// Where the marker sits in `placeholder`.
    marker_at: usize,
}

/// A placeholder attribute: what to give rust-hdf5, and how to find it after close.
pub(super) struct Placeholder {
    pub serial: u32,
    /// The encoded placeholder message (what must be found in the file).
    pub message: Vec<u8>,
    /// Where the marker sits in `message`.
    pub marker_at: usize,
    /// The datatype and value to write the placeholder attribute with.
    pub datatype: DatatypeMessage,
    pub value: Vec<u8>,
}

/// Work left for after rust-hdf5 closes the file.
pub(super) struct Deferred {
    marker: [u8; MARKER_LEN],
    attrs: Vec<DeferredAttr>,
    /// Variables whose heap references are written after close, with their group's path.
    vars: Vec<(VarId, String)>,
    /// Compact variables of heap references: their data (in the object header) starts with
    /// the marker and this serial number.
    compact: Vec<(VarId, u32)>,
    /// Serial numbers handed out (attributes and compact variables).
    serials: u32,
    /// Fill values of heap types: serial number, type, value (one element), stored size.
    fills: Vec<(u32, NcType, nc_dataset::Values, usize)>,
    /// Objects whose many attributes get dense storage from us.
    pub dense: Dense,
    /// Dimension scale attachments written after close.
    pub scales: DimScales,
}

/// True if attribute `a` cannot be written by rust-hdf5 directly: an array (or heap-holding
/// value) of a user-defined type, or strings (rust-hdf5 would give them its own string
/// datatype, not libhdf5's: see `strtype`; the heap pass also writes NILs and bytes that are
/// not UTF-8 as they are).
pub(super) fn attr_is_deferred(ds: &Dataset, a: &Attribute) -> bool {
    match a.ty {
        NcType::User(_) => a.values.len() != 1 || !user::is_fixed_size(ds, a.ty),
        NcType::Atomic(AtomicType::String) => true,
        NcType::Atomic(_) => false,
    }
}

/// True if the data of a variable of type `t` holds heap references.
pub(super) fn var_is_deferred(ds: &Dataset, t: NcType) -> bool {
    !user::is_fixed_size(ds, t)
}

fn random_marker() -> [u8; MARKER_LEN] {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut out = [0u8; MARKER_LEN];
    for (i, piece) in out.chunks_mut(8).enumerate() {
        let mut h = RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        let bytes = h.finish().to_le_bytes();
        piece.copy_from_slice(&bytes[..piece.len()]);
    }
    out
}

impl Deferred {
    pub fn new() -> Deferred {
        Deferred {
            marker: random_marker(),
            attrs: Vec::new(),
            vars: Vec::new(),
            compact: Vec::new(),
            serials: 0,
            fills: Vec::new(),
            dense: Dense::default(),
            scales: DimScales::default(),
        }
    }

    /// The fill value bytes (`bytes` of them, at least 16) to give a variable of heap type `t`
    /// whose fill is `value`: the marker and a serial number, replaced after close.
    pub fn fill_placeholder(
        &mut self,
        t: NcType,
        value: nc_dataset::Values,
        bytes: usize,
    ) -> Vec<u8> {
        let serial = self.serial();
        self.fills.push((serial, t, value, bytes));
        self.marked(serial, bytes)
    }

    /// `bytes` bytes (at least 16): the marker, `serial`, zeros.
    fn marked(&self, serial: u32, bytes: usize) -> Vec<u8> {
        let mut out = vec![0u8; bytes.max(MARKER_LEN + 4)];
        out[..MARKER_LEN].copy_from_slice(&self.marker);
        out[MARKER_LEN..MARKER_LEN + 4].copy_from_slice(&serial.to_le_bytes());
        out
    }

    fn serial(&mut self) -> u32 {
        self.serials += 1;
        self.serials - 1
    }

    /// The placeholder data of compact variable `v` of `bytes` bytes (at least 16): the marker,
    /// a serial number, zeros.
    pub fn compact_placeholder(&mut self, v: VarId, bytes: usize) -> Vec<u8> {
        let serial = self.serial();
        self.compact.push((v, serial));
        self.marked(serial, bytes)
    }

    /// The datatype and value of the placeholder to write in place of attribute `a`.
    ///
    /// # Errors
    /// When the type has no HDF5 datatype or the real message is too short to carry a marker.
    pub fn placeholder(
        &mut self,
        ds: &Dataset,
        owner: String,
        a: &Attribute,
    ) -> Result<(DatatypeMessage, Vec<u8>), Hdf5Error> {
        let what = format!("{owner}: attribute {}", a.name);
        let dt = user::datatype(ds, a.ty, false)?;
        let p = self.raw_placeholder(&a.name, dt, a.values.len(), &what)?;
        let out = (p.datatype.clone(), p.value.clone());
        self.attrs.push(DeferredAttr {
            serial: p.serial,
            owner,
            attr: a.clone(),
            placeholder: p.message,
            marker_at: p.marker_at,
        });
        Ok(out)
    }

    /// A placeholder for an attribute message named `name` of `n` values of datatype `dt`
    /// (a simple dataspace) whose value is written after close with [`replace_placeholder`];
    /// `what` names it in errors.
    ///
    /// # Errors
    /// When the real message is too short to carry a marker.
    pub fn raw_placeholder(
        &mut self,
        name: &str,
        dt: DatatypeMessage,
        n: usize,
        what: &str,
    ) -> Result<Placeholder, Hdf5Error> {
        let real_len = real_message(name, dt, n, Vec::new()).len();
        let short = AttributeMessage::scalar_numeric(name, fixed_string(1), vec![0])
            .encode_at(&ctx(), LibverBound::V18)
            .len();
        // the placeholder message grows one byte per byte of its string
        let size = (real_len + 1)
            .checked_sub(short)
            .filter(|&s| s >= MARKER_LEN + 4)
            .ok_or_else(|| {
                Hdf5Error::unsupported(what, "the attribute message is too short to place")
            })?;
        let serial = self.serial();
        let mut value = vec![0u8; size];
        value[..MARKER_LEN].copy_from_slice(&self.marker);
        value[MARKER_LEN..MARKER_LEN + 4].copy_from_slice(&serial.to_le_bytes());
        let dtype = fixed_string(size);
        let placeholder = AttributeMessage::scalar_numeric(name, dtype.clone(), value.clone())
            .encode_at(&ctx(), LibverBound::V18);
        if placeholder.len() != real_len {
            return Err(Hdf5Error::unsupported(
                what,
                format!(
                    "placeholder message of {} bytes for a {real_len}-byte message",
                    placeholder.len()
                ),
            ));
        }
        Ok(Placeholder {
            serial,
            marker_at: placeholder.len() - size,
            message: placeholder,
            datatype: dtype,
            value,
        })
    }

    /// Variable `v` (in the group at path `group`) gets its data after close.
    pub fn defer_var(&mut self, v: VarId, group: String) {
        self.vars.push((v, group));
    }

    pub fn is_empty(&self) -> bool {
        self.attrs.is_empty()
            && self.vars.is_empty()
            && self.compact.is_empty()
            && self.fills.is_empty()
            && self.dense.is_empty()
            && self.scales.is_empty()
    }

    /// Write the heap, the deferred variables' references and the real attribute messages
    /// into the closed file at `path`.
    ///
    /// # Errors
    /// When the file cannot be read or written, the source fails, or a placeholder is not
    /// found where it must be.
    pub fn finish(self, path: &Path, ds: &Dataset, src: &dyn DataSource) -> Result<(), Hdf5Error> {
        if self.is_empty() {
            return Ok(());
        }
        let mut file = File::options()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io("reopening the file"))?;
        let (eof_at, eof) = superblock_eof(&mut file)?;
        let len = file.metadata().map_err(io("reading the file size"))?.len();
        let start = eof.max(len).next_multiple_of(8);
        // 3a. find the placeholders before the heap goes in
        let hits = if self.attrs.is_empty()
            && self.compact.is_empty()
            && self.fills.is_empty()
            && self.scales.is_empty()
        {
            HashMap::new()
        } else {
            let skip = if start >= SKIP_RAW_FROM {
                raw_extents(path, ds)
            } else {
                Vec::new()
            };
            scan(&mut file, start, &self.marker, &skip)?
        };
        let mut heap = HeapWriter {
            file: &file,
            next: start,
            objects: Vec::new(),
            bytes: 0,
        };
        // 3a. fill values of heap types (in the fill value messages)
        for (serial, t, value, bytes) in &self.fills {
            let what = || format!("fill value of type {}", ds.type_name(*t));
            let real = user::heap_value_bytes(ds, *t, value, &mut heap)
                .map_err(|e| Hdf5Error::invalid(what(), e.to_string()))?;
            let placeholder = self.marked(*serial, *bytes);
            if real.len() != placeholder.len() {
                return Err(Hdf5Error::invalid(what(), "one value of the wrong size"));
            }
            replace_placeholder(heap.file, &hits, *serial, 0, &placeholder, &real, what())?;
        }
        // object header addresses, read once for the dimension scales and dense storage
        let mut loc = if self.dense.is_empty() && self.scales.is_empty() {
            None
        } else {
            Some(Locator::open(path)?)
        };
        // 3d. dimension scale attachments, before our reader opens the file for step 1 (it
        // reads DIMENSION_LIST, so that must be real and its heap collection written)
        if let Some(loc) = loc.as_mut().filter(|_| !self.scales.is_empty()) {
            self.scales.patch(loc, heap.file, ds, &hits, &mut heap)?;
        }
        // what the heap holds so far is referenced from the file now
        heap.flush()?;
        // 1. where the deferred variables' blocks are
        let mut places = Vec::with_capacity(self.vars.len());
        if !self.vars.is_empty() {
            let nc = Nc4File::open(path)?;
            let found = nc.dataset();
            let mut by_name: HashMap<(String, &str), VarId> = HashMap::new();
            for v in found.all_vars() {
                let var = found.var(v);
                by_name.insert((found.group_path(var.group), var.name.as_str()), v);
            }
            for (v, group) in &self.vars {
                let name = ds.var(*v).name.clone();
                let there = by_name
                    .get(&(group.clone(), name.as_str()))
                    .ok_or_else(|| {
                        Hdf5Error::invalid(
                            format!("variable {name}"),
                            "not found when reopening the file to write its data",
                        )
                    })?;
                places.push(nc.places(*there)?);
            }
        }
        // 2. the variables
        for ((v, _), place) in self.vars.iter().zip(&places) {
            write_var(ds, src, *v, place, &mut heap)?;
        }
        // 3b. compact variables: their data is in the object header
        for &(v, serial) in &self.compact {
            let var = ds.var(v);
            let what = || format!("variable {}", var.name);
            let shape = ds.shape(v);
            let vals = read_slab(ds, src, v, &vec![0; shape.len()], &shape)?;
            let real = user::heap_value_bytes(ds, var.ty, &vals, &mut heap)
                .map_err(|e| Hdf5Error::invalid(what(), e.to_string()))?;
            let placeholder = self.marked(serial, real.len());
            if placeholder.len() != real.len() {
                return Err(Hdf5Error::invalid(
                    what(),
                    "compact data too short to place",
                ));
            }
            replace_placeholder(heap.file, &hits, serial, 0, &placeholder, &real, what())?;
        }
        // 3c. the attributes
        for d in &self.attrs {
            let what = || format!("{}: attribute {}", d.owner, d.attr.name);
            let data = user::heap_value_bytes(ds, d.attr.ty, &d.attr.values, &mut heap)
                .map_err(|e| Hdf5Error::invalid(what(), e.to_string()))?;
            let dt = user::datatype(ds, d.attr.ty, false)?;
            let real = real_message(&d.attr.name, dt, d.attr.values.len(), data);
            if real.len() != d.placeholder.len() {
                return Err(Hdf5Error::invalid(
                    what(),
                    "the value's message changed size after it was placed",
                ));
            }
            replace_placeholder(
                heap.file,
                &hits,
                d.serial,
                d.marker_at as u64,
                &d.placeholder,
                &real,
                what(),
            )?;
        }
        // 3e. dense attribute storage of objects with many attributes: their messages (after
        // the placeholders above are real, as some are copied), then their heaps and indexes
        let laid = match loc.as_mut() {
            Some(loc) if !self.dense.is_empty() => {
                self.dense.encode(loc, heap.file, ds, &mut heap)?
            }
            _ => Vec::new(),
        };
        heap.flush()?;
        let mut end = heap.next;
        for l in laid {
            end = l.write(&file, end)?.next_multiple_of(8);
        }
        // 4. the end of the file
        if end > start {
            set_superblock_eof(&mut file, eof_at, end)?;
        }
        Ok(())
    }
}

fn fixed_string(size: usize) -> DatatypeMessage {
    DatatypeMessage::FixedString {
        size: size as u32,
        padding: 0,
        charset: 0,
    }
}

/// The encoded attribute message netCDF-C would write: a simple dataspace of `n` values (data
/// of the right length is made up when `data` is empty, for measuring), string datatypes as
/// libhdf5 encodes them.
pub(super) fn real_message(
    name: &str,
    dt: DatatypeMessage,
    n: usize,
    mut data: Vec<u8>,
) -> Vec<u8> {
    if data.is_empty() {
        data = vec![0; n * dt.element_size() as usize];
    }
    let data_len = data.len();
    let mut msg = AttributeMessage::array_numeric(name, dt, &[n as u64], data)
        .encode_at(&ctx(), LibverBound::V18);
    // the value comes last: only the name, datatype and dataspace before it are searched
    let head = msg.len().saturating_sub(data_len);
    strtype::fix_encoded(&mut msg[..head]);
    msg
}

/// Global heap collections appended from `next` on.
struct HeapWriter<'f> {
    file: &'f File,
    /// Address of the collection being filled (and of the next one, once flushed).
    next: u64,
    objects: Vec<GlobalHeapObject>,
    bytes: usize,
}

impl HeapWriter<'_> {
    fn flush(&mut self) -> Result<(), Hdf5Error> {
        if self.objects.is_empty() {
            return Ok(());
        }
        let mut gcol = GlobalHeapCollection::new();
        gcol.objects = std::mem::take(&mut self.objects);
        let bytes = gcol.encode(&ctx());
        write_at(
            self.file,
            self.next,
            &bytes,
            "writing a global heap collection",
        )?;
        self.next = (self.next + bytes.len() as u64).next_multiple_of(8);
        self.bytes = 0;
        Ok(())
    }
}

impl HeapSink for HeapWriter<'_> {
    fn store(&mut self, bytes: &[u8]) -> Result<(u64, u32), Hdf5Error> {
        let need = GlobalHeapCollection::object_disk_size(&ctx(), bytes.len());
        if !self.objects.is_empty()
            && (self.bytes + need > COLLECTION_BYTES
                || self.objects.len() >= usize::from(u16::MAX) - 1)
        {
            self.flush()?;
        }
        let index = self.objects.len() as u16 + 1;
        self.objects.push(GlobalHeapObject {
            index,
            ref_count: 0,
            data: bytes.to_vec(),
        });
        self.bytes += need;
        Ok((self.next, u32::from(index)))
    }
}

pub(super) fn write_at(
    mut file: &File,
    at: u64,
    bytes: &[u8],
    what: &str,
) -> Result<(), Hdf5Error> {
    file.seek(SeekFrom::Start(at)).map_err(io(what))?;
    file.write_all(bytes).map_err(io(what))
}

pub(super) fn read_at(
    mut file: &File,
    at: u64,
    len: usize,
    what: &str,
) -> Result<Vec<u8>, Hdf5Error> {
    let mut buf = vec![0; len];
    file.seek(SeekFrom::Start(at)).map_err(io(what))?;
    file.read_exact(&mut buf).map_err(io(what))?;
    Ok(buf)
}

/// The values of variable `v`, laid out with heap references, into its blocks.
fn write_var(
    ds: &Dataset,
    src: &dyn DataSource,
    v: VarId,
    place: &Places,
    heap: &mut HeapWriter<'_>,
) -> Result<(), Hdf5Error> {
    let var = ds.var(v);
    let shape = ds.shape(v);
    let es = user::disk_size(ds, var.ty) as u64;
    let what = || format!("variable {}", var.name);
    let encode = |heap: &mut HeapWriter<'_>, start: &[u64], count: &[u64]| {
        let vals = read_slab(ds, src, v, start, count)?;
        user::heap_value_bytes(ds, var.ty, &vals, heap)
            .map_err(|e| Hdf5Error::invalid(what(), e.to_string()))
    };
    match place {
        Places::Contiguous(addr) => {
            if shape.contains(&0) {
                return Ok(());
            }
            for (start, count) in slabs(&shape, SLAB_ELEMENTS) {
                let bytes = encode(heap, &start, &count)?;
                let at = addr + ravel(&start, &shape) * es;
                write_at(heap.file, at, &bytes, &format!("{}: writing data", what()))?;
            }
        }
        Places::Chunks {
            chunk,
            chunk_bytes,
            entries,
        } => {
            for (offsets, addr, size) in entries {
                if *size != *chunk_bytes || offsets.len() != shape.len() {
                    return Err(Hdf5Error::invalid(
                        what(),
                        format!("chunk at {offsets:?} is not an unfiltered chunk of {chunk_bytes} bytes"),
                    ));
                }
                if offsets.iter().zip(&shape).any(|(&o, &n)| o >= n) {
                    continue;
                }
                let count: Vec<u64> = offsets
                    .iter()
                    .zip(chunk)
                    .zip(&shape)
                    .map(|((&o, &c), &n)| c.min(n - o))
                    .collect();
                let bytes = encode(heap, offsets, &count)?;
                let full = super::pad_chunk(bytes, &count, chunk, &vec![0; es as usize]);
                write_at(
                    heap.file,
                    *addr,
                    &full,
                    &format!("{}: writing data", what()),
                )?;
            }
        }
        Places::Elsewhere => {
            if !shape.contains(&0) {
                return Err(Hdf5Error::unsupported(
                    what(),
                    "strings and vlens are written to contiguous or chunked storage only",
                ));
            }
        }
    }
    Ok(())
}

/// Row-major linear index of `start` in `shape`.
fn ravel(start: &[u64], shape: &[u64]) -> u64 {
    start.iter().zip(shape).fold(0, |acc, (&s, &n)| acc * n + s)
}

/// Superblock version 2 or 3 at offset 0: where its end-of-file address is, and the address.
fn superblock_eof(file: &mut File) -> Result<(u64, u64), Hdf5Error> {
    let sb = read_at(file, 0, 48, "reading the superblock")?;
    if &sb[..8] != b"\x89HDF\r\n\x1a\n" || !(2..=3).contains(&sb[8]) || sb[9] != 8 || sb[10] != 8 {
        return Err(Hdf5Error::unsupported(
            "superblock",
            "heap data needs a version 2 or 3 superblock with 8-byte addresses at offset 0",
        ));
    }
    if checksum_metadata(&sb[..44]) != u32::from_le_bytes(sb[44..48].try_into().unwrap_or_default())
    {
        return Err(Hdf5Error::invalid("superblock", "checksum mismatch"));
    }
    let eof = u64::from_le_bytes(sb[28..36].try_into().unwrap_or_default());
    Ok((28, eof))
}

fn set_superblock_eof(file: &mut File, at: u64, eof: u64) -> Result<(), Hdf5Error> {
    let mut sb = read_at(file, 0, 48, "reading the superblock")?;
    let at = at as usize;
    sb[at..at + 8].copy_from_slice(&eof.to_le_bytes());
    let sum = checksum_metadata(&sb[..44]);
    sb[44..48].copy_from_slice(&sum.to_le_bytes());
    write_at(file, 0, &sb, "writing the superblock")?;
    // the file reaches the new end even if the last collection was short of it
    if file.metadata().map_err(io("reading the file size"))?.len() < eof {
        file.set_len(eof).map_err(io("extending the file"))?;
    }
    Ok(())
}

/// The raw data blocks of the variables of `ds` in the closed file at `path` (contiguous
/// storage and chunks), sorted, as (address, length): bytes no placeholder can be in. A
/// variable whose blocks cannot be found is left out, and so is scanned like metadata.
fn raw_extents(path: &Path, ds: &Dataset) -> Vec<(u64, u64)> {
    // a reader of its own, dropped here: the headers it caches still hold the placeholders,
    // which the later passes (dense storage copies messages) must see replaced
    let Ok(mut loc) = Locator::open(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for v in ds.all_vars() {
        let var = ds.var(v);
        let addr = loc.child(ds, var.group, &var.name).or_else(|_| {
            let prefixed = format!("{}{}", super::NON_COORD_PREFIX, var.name);
            loc.child(ds, var.group, &prefixed)
        });
        let Ok(addr) = addr else { continue };
        let what = format!("variable \"{}\"", var.name);
        if let Ok(Some(info)) = crate::meta::info_at(&loc.h5, addr, &what) {
            if let Ok(e) = crate::read::raw_extents(&loc.h5, &info, &what) {
                out.extend(e);
            }
        }
    }
    out.sort_unstable();
    out
}

/// Every occurrence of `marker` before `end`, by the serial number that follows it; the
/// `skip` extents (sorted raw data blocks) are not read.
fn scan(
    file: &mut File,
    end: u64,
    marker: &[u8],
    skip: &[(u64, u64)],
) -> Result<HashMap<u32, Vec<u64>>, Hdf5Error> {
    let finder = memchr::memmem::Finder::new(marker);
    let mut out: HashMap<u32, Vec<u64>> = HashMap::new();
    let len = end.min(file.metadata().map_err(io("reading the file size"))?.len());
    let mut from = 0u64;
    for &(at, n) in skip.iter().chain(std::iter::once(&(len, 0))) {
        let to = at.min(len);
        if to > from {
            scan_range(file, from, to, &finder, &mut out)?;
        }
        from = from.max(at.saturating_add(n));
        if from >= len {
            break;
        }
    }
    for v in out.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    Ok(out)
}

/// Add the markers found in bytes `from..to` of `file` to `out`.
fn scan_range(
    file: &File,
    from: u64,
    to: u64,
    finder: &memchr::memmem::Finder<'_>,
    out: &mut HashMap<u32, Vec<u64>>,
) -> Result<(), Hdf5Error> {
    let tail = MARKER_LEN + 4 - 1;
    let mut pos = from;
    while pos < to {
        let n = (to - pos).min(SCAN_BLOCK as u64) as usize;
        // overlap the next block by a marker, so one across the boundary is seen once
        let buf = read_at(file, pos, n, "looking for attribute placeholders")?;
        for i in finder.find_iter(&buf) {
            if let Some(s) = buf.get(i + MARKER_LEN..i + MARKER_LEN + 4) {
                let serial = u32::from_le_bytes(s.try_into().unwrap_or_default());
                out.entry(serial).or_default().push(pos + i as u64);
            }
        }
        if pos + n as u64 >= to {
            break;
        }
        pos += (n - tail) as u64;
    }
    Ok(())
}

/// Overwrite every copy of placeholder `serial` (its marker found at `hits`, `marker_at` bytes
/// into `placeholder`) with `real`; there must be at least one. `what` names the value.
pub(super) fn replace_placeholder(
    file: &File,
    hits: &HashMap<u32, Vec<u64>>,
    serial: u32,
    marker_at: u64,
    placeholder: &[u8],
    real: &[u8],
    what: String,
) -> Result<(), Hdf5Error> {
    let mut done = 0;
    for &hit in hits.get(&serial).map(Vec::as_slice).unwrap_or(&[]) {
        let Some(at) = hit.checked_sub(marker_at) else {
            continue;
        };
        if patch_message(file, at, placeholder, real)? {
            done += 1;
        }
    }
    if done == 0 {
        return Err(Hdf5Error::invalid(
            what,
            "its placeholder was not found in the file",
        ));
    }
    Ok(())
}

/// Overwrite the placeholder message at `body` with `real` if `body` holds exactly
/// `placeholder` inside a block whose checksum we can validate and renew. False when the
/// bytes there are not the placeholder (a stray copy of the marker).
pub(super) fn patch_message(
    file: &File,
    body: u64,
    placeholder: &[u8],
    real: &[u8],
) -> Result<bool, Hdf5Error> {
    let here = read_at(file, body, placeholder.len(), "reading a placeholder")
        .ok()
        .filter(|b| b == placeholder);
    if here.is_none() {
        return Ok(false);
    }
    let Some(block) = enclosing_block(file, body, placeholder.len() as u64)? else {
        // not inside a checksummed block: a "huge" object of dense attribute storage (a
        // message of at least the heap's largest managed object, 4 KiB), stored as it is
        write_at(file, body, real, "writing an attribute message")?;
        return Ok(true);
    };
    let mut image = read_at(
        file,
        block.start,
        block.len as usize,
        "reading a metadata block",
    )?;
    let at = (body - block.start) as usize;
    image[at..at + real.len()].copy_from_slice(real);
    seal_block(&block, &mut image);
    write_at(file, block.start, &image, "writing an attribute message")?;
    Ok(true)
}

/// Renew the checksum (if it has one) of `image`, the changed bytes of `block`.
pub(super) fn seal_block(block: &Block, image: &mut [u8]) {
    if let Some(sum_at) = block.checksum_at {
        let sum_at = sum_at as usize;
        let sum = if block.zeroed_checksum {
            image[sum_at..sum_at + 4].fill(0);
            checksum_metadata(image)
        } else {
            checksum_metadata(&image[..sum_at])
        };
        image[sum_at..sum_at + 4].copy_from_slice(&sum.to_le_bytes());
    }
}

/// A checksummed metadata block.
#[derive(Debug, PartialEq)]
pub(super) struct Block {
    pub start: u64,
    /// Bytes, checksum included.
    pub len: u64,
    /// Offset of the checksum in the block (None: the block has none).
    checksum_at: Option<u64>,
    /// The checksum covers the whole block with its own field zeroed (fractal heap direct
    /// blocks) rather than the bytes before it.
    zeroed_checksum: bool,
    /// The stored checksum matches (or there is none).
    valid: bool,
}

/// The object header chunk or fractal heap direct block holding `[at, at + len)`: the nearest
/// signature before it whose structure spans the range and whose checksum is valid.
///
/// Blocks are small: a window of 4 KiB either side is tried first (one patch per variable
/// header must not read much more than the header), then wider ones up to
/// [`MAX_BLOCK_SPAN`] (a range inside no block, a "huge" attribute, is only known as such there).
pub(super) fn enclosing_block(file: &File, at: u64, len: u64) -> Result<Option<Block>, Hdf5Error> {
    let flen = file.metadata().map_err(io("reading the file size"))?.len();
    let mut span = 4 << 10;
    loop {
        if let Some(b) = block_within(file, at, len, span, flen)? {
            return Ok(Some(b));
        }
        if span >= MAX_BLOCK_SPAN {
            return Ok(None);
        }
        span = (span * 8).min(MAX_BLOCK_SPAN);
    }
}

/// [`enclosing_block`] within `span` bytes either side of the range.
fn block_within(
    file: &File,
    at: u64,
    len: u64,
    span: u64,
    flen: u64,
) -> Result<Option<Block>, Hdf5Error> {
    let from = at.saturating_sub(span);
    let to = (at + len + span).min(flen);
    let window = read_at(file, from, (to - from) as usize, "reading metadata")?;
    let rel = (at - from) as usize;
    let mut i = rel;
    while i >= 4 {
        i -= 1;
        let sig = &window[i..i + 4];
        let block = match sig {
            b"OHDR" => ohdr_block(&window, i),
            b"OCHK" => ochk_block(&window, i, rel + len as usize),
            b"FHDB" => fhdb_block(file, &window, i)?,
            _ => continue,
        };
        let Some(mut b) = block else {
            continue;
        };
        if (i as u64) + b.len < (rel as u64) + len {
            continue;
        }
        if !b.valid {
            // a block that spans the message but whose checksum we cannot confirm: do not
            // touch it (a stray signature would be a coincidence of 2^-32)
            return Err(Hdf5Error::invalid(
                format!("metadata block at {:#x}", from + i as u64),
                "its checksum does not match before the attribute is written into it",
            ));
        }
        b.start += from;
        return Ok(Some(b));
    }
    Ok(None)
}

fn le(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
    u64::from_le_bytes(b)
}

fn checksum_ok(w: &[u8], start: usize, sum_at: usize) -> bool {
    w.get(sum_at..sum_at + 4)
        .is_some_and(|s| checksum_metadata(&w[start..sum_at]) == le(s) as u32)
}

/// Object header version 2, first chunk (spec IV.A.1.b).
fn ohdr_block(w: &[u8], s: usize) -> Option<Block> {
    if *w.get(s + 4)? != 2 {
        return None;
    }
    let flags = *w.get(s + 5)?;
    let mut p = s + 6;
    if flags & 0x20 != 0 {
        p += 16;
    }
    if flags & 0x10 != 0 {
        p += 4;
    }
    let width = 1usize << (flags & 3);
    let size = le(w.get(p..p + width)?) as usize;
    let sum_at = p + width + size;
    w.get(sum_at + 3)?;
    Some(Block {
        start: s as u64,
        len: (sum_at + 4 - s) as u64,
        checksum_at: Some((sum_at - s) as u64),
        zeroed_checksum: false,
        valid: checksum_ok(w, s, sum_at),
    })
}

/// Highest object header message type (spec IV.A.2: 0x00 to 0x18).
const MAX_MESSAGE_TYPE: u8 = 0x18;

/// A continuation chunk of a version 2 object header: its length is not stored in it, so walk
/// its messages (with or without creation order fields) until a valid checksum follows.
fn ochk_block(w: &[u8], s: usize, need_end: usize) -> Option<Block> {
    for header in [4usize, 6] {
        let mut q = s + 4;
        for _ in 0..65536 {
            for gap in 0..header {
                let e = q + gap;
                if e >= need_end && checksum_ok(w, s, e) {
                    return Some(Block {
                        start: s as u64,
                        len: (e + 4 - s) as u64,
                        checksum_at: Some((e - s) as u64),
                        zeroed_checksum: false,
                        valid: true,
                    });
                }
            }
            let ty = *w.get(q)?;
            let size = le(w.get(q + 1..q + 3)?) as usize;
            // past the chunk's real end (zeros, a huge placeholder, unknown message types):
            // stop, or every step would checksum ever longer stretches of the window
            if (ty == 0 && size == 0) || ty > MAX_MESSAGE_TYPE {
                break;
            }
            q += header + size;
            if q + 4 > w.len() {
                break;
            }
        }
    }
    None
}

/// A fractal heap direct block (spec III.G): its size comes from the heap header's doubling
/// table and its offset in the heap.
fn fhdb_block(file: &File, w: &[u8], s: usize) -> Result<Option<Block>, Hdf5Error> {
    let Some(hdr_addr) = w.get(s + 5..s + 13).map(le) else {
        return Ok(None);
    };
    if w.get(s + 4) != Some(&0) {
        return Ok(None);
    }
    let Ok(raw) = read_at(file, hdr_addr, 256, "reading a fractal heap header") else {
        return Ok(None);
    };
    let Ok(h) = FractalHeapHeader::decode(&raw, &ctx()) else {
        return Ok(None);
    };
    let off_size = usize::from(h.heap_off_size);
    let Some(offset) = w.get(s + 13..s + 13 + off_size).map(le) else {
        return Ok(None);
    };
    let size = if h.curr_root_rows == 0 {
        // the root block is this direct block: it spans the heap's managed space (it doubles
        // from the starting size until an indirect block takes over)
        h.man_size.max(h.start_block_size)
    } else {
        let Some(size) = direct_block_size(
            offset,
            h.start_block_size,
            u64::from(h.table_width),
            h.max_direct_size,
        ) else {
            return Ok(None);
        };
        size
    };
    let sum_at = 13 + off_size;
    let mut block = Block {
        start: s as u64,
        len: size,
        checksum_at: h.checksum_dblocks.then_some(sum_at as u64),
        zeroed_checksum: true,
        valid: true,
    };
    let end = s + size as usize;
    if end > w.len() {
        return Ok(None);
    }
    if h.checksum_dblocks {
        let mut image = w[s..end].to_vec();
        let stored = le(&image[sum_at..sum_at + 4]) as u32;
        image[sum_at..sum_at + 4].fill(0);
        block.valid = checksum_metadata(&image) == stored;
    }
    Ok(Some(block))
}

/// Size of the direct block at heap offset `offset` of a fractal heap whose root is an
/// indirect block (spec III.G, doubling table): rows 0 and 1 hold blocks of the starting size,
/// each later row blocks twice the previous row's, `width` blocks a row. A row whose blocks
/// are bigger than the largest direct block holds indirect blocks, each spanning that size
/// with a doubling table of its own from the starting size, so the offset is followed into it.
fn direct_block_size(mut offset: u64, start: u64, width: u64, max_direct: u64) -> Option<u64> {
    if start == 0 || width == 0 {
        return None;
    }
    // each step enters a child indirect block: bounded by the heap's 64-bit offsets
    for _ in 0..64 {
        let (mut row_start, mut size) = (0u64, start);
        for row in 0..64 {
            let span = size.checked_mul(width)?;
            if offset < row_start.checked_add(span)? {
                break;
            }
            row_start += span;
            if row >= 1 {
                size = size.checked_mul(2)?;
            }
        }
        if size <= max_direct {
            return Some(size);
        }
        offset = (offset - row_start) % size;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_block_sizes_follow_the_doubling_table() {
        // width 4, 1 KiB start, 64 KiB largest direct block (rust-hdf5's dense attributes)
        let size = |o| direct_block_size(o, 1024, 4, 65536);
        assert_eq!(size(0), Some(1024));
        assert_eq!(size(5 * 1024), Some(1024)); // row 1
        assert_eq!(size(8 * 1024), Some(2048)); // row 2
        assert_eq!(size(256 * 1024), Some(65536)); // row 7, the last direct row
                                                   // row 8 holds indirect blocks of 128 KiB: their tables start at 1 KiB again
        assert_eq!(size(512 * 1024), Some(1024));
        assert_eq!(size(512 * 1024 + 8 * 1024), Some(2048));
        assert_eq!(size(640 * 1024), Some(1024));
        assert_eq!(direct_block_size(0, 0, 4, 65536), None);
    }

    #[test]
    fn ravel_is_row_major() {
        assert_eq!(ravel(&[1, 2], &[3, 4]), 6);
        assert_eq!(ravel(&[], &[]), 0);
    }

    #[test]
    fn ohdr_block_is_found_by_its_checksum() {
        // a minimal version 2 header: flags 0 (1-byte chunk size), 6 bytes of messages
        let mut b = b"OHDR\x02\x00\x06".to_vec();
        b.extend_from_slice(&[1, 2, 3, 4, 5, 6]);
        let sum = checksum_metadata(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        let got = ohdr_block(&b, 0).expect("valid header");
        assert_eq!(got.len, b.len() as u64);
        assert_eq!(got.checksum_at, Some(13));
        // a damaged checksum is not a block
        let last = b.len() - 1;
        b[last] ^= 1;
        assert!(!ohdr_block(&b, 0).expect("still parses").valid);
    }

    #[test]
    fn ochk_block_ends_at_the_first_valid_checksum() {
        // one message: type 1, size 3, flags 0, then a 2-byte gap
        let mut b = b"OCHK".to_vec();
        b.extend_from_slice(&[1, 3, 0, 0, 9, 9, 9, 0, 0]);
        let sum = checksum_metadata(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        let got = ochk_block(&b, 0, 8).expect("valid chunk");
        assert_eq!(got.len, b.len() as u64);
    }
}
