//! A thin facade over `hdf5-reader`'s low-level structures: object headers, links (compact,
//! dense and symbol-table groups), attributes (compact and dense, in creation order), the global
//! heap, and raw byte ranges. Everything netCDF-specific lives in `meta.rs` and `read.rs`.
//!
//! HDF5 File Format Specification v3: IV.A.1 (object headers), IV.A.2.g (links), IV.A.2.m
//! (attributes), III.E (global heap), III.G (fractal heap), III.A.2 (v2 B-trees).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use hdf5_reader::btree_v2::{self, BTreeV2Header, BTreeV2Record};
use hdf5_reader::fractal_heap::{FractalHeap, FractalHeapDirectBlockCache};
use hdf5_reader::global_heap::GlobalHeapCollection;
use hdf5_reader::io::Cursor;
use hdf5_reader::local_heap::LocalHeap;
use hdf5_reader::messages::attribute::{self, AttributeMessage};
use hdf5_reader::messages::attribute_info::AttributeInfoMessage;
use hdf5_reader::messages::external_files::ExternalFilesMessage;
use hdf5_reader::messages::link::{self, LinkTarget};
use hdf5_reader::messages::link_info::LinkInfoMessage;
use hdf5_reader::messages::symbol_table_msg::SymbolTableMessage;
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::object_header::ObjectHeader;
use hdf5_reader::symbol_table::SymbolTableNode;
use hdf5_reader::{Hdf5File, OpenOptions};

use crate::Hdf5Error;

/// Largest object header we accept (all chunks together).
const MAX_HEADER_BYTES: usize = 64 << 20;
/// Largest single raw read (one contiguous variable, one chunk).
pub(crate) const MAX_READ_BYTES: u64 = 4 << 30;

/// Where a link of a group leads.
#[derive(Debug, Clone)]
pub(crate) enum LinkTo {
    /// An object of this file (hard link).
    Hard(u64),
    /// A path in this file, absolute or relative to the link's group (soft link).
    Soft(String),
    /// An object of another file (external link).
    External { file: String, path: String },
}

/// One link of a group.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    pub name: String,
    pub to: LinkTo,
    pub order: Option<u64>,
}

fn link_to(target: LinkTarget) -> LinkTo {
    match target {
        LinkTarget::Hard { address } => LinkTo::Hard(address),
        LinkTarget::Soft { path } => LinkTo::Soft(path),
        LinkTarget::External { filename, path } => LinkTo::External {
            file: filename,
            path,
        },
    }
}

/// An opened HDF5 file with the caches the netCDF layer needs.
pub(crate) struct H5 {
    file: Hdf5File,
    /// The file's bytes: raw reads go straight to it (a local file reads into a fresh buffer
    /// without zeroing it, nc-store's fast path), structures through hdf5-reader's storage
    /// over it.
    src: Arc<dyn nc_store::ByteSource>,
    pub os: u8,
    pub ls: u8,
    /// The file's path when opened from one (as given): where references to its bytes point.
    pub path: Option<std::path::PathBuf>,
    gheaps: Mutex<HashMap<u64, Arc<GlobalHeapCollection>>>,
    own_headers: Mutex<HashMap<u64, Arc<ObjectHeader>>>,
    /// The shared message indexes (message type flags, fractal heap address) of the file's
    /// SOHM table, read once (an error text when the table is corrupt).
    sohm: OnceLock<Result<Vec<(u16, u64)>, String>>,
}

impl std::fmt::Debug for H5 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H5")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn st(what: impl Into<String>) -> impl FnOnce(hdf5_reader::error::Error) -> Hdf5Error {
    let what = what.into();
    move |e| Hdf5Error::structure(what, e)
}

/// Most files one dataset reads from (its own, external link targets, virtual sources).
const MAX_FILES: usize = 256;

/// The files a dataset reads from: the one opened, and those its external links and virtual
/// datasets name, each opened once (keyed by the source's identity, its canonical path, so a
/// file reached twice, or the opened file reached again, is the same [`H5`]). Where a named
/// file is, is the byte source's question ([`nc_store::ByteSource::open_named`]).
#[derive(Default)]
pub(crate) struct Files {
    open: Mutex<HashMap<PathBuf, Arc<H5>>>,
    /// Files opened so far, with or without an identity (a bound on hostile sets of links).
    count: std::sync::atomic::AtomicUsize,
}

impl Files {
    /// Record the file opened first, so links back to it find it.
    pub fn register(&self, h5: &Arc<H5>) {
        if let (Some(id), Ok(mut m)) = (h5.src.identity(), self.open.lock()) {
            m.insert(id, h5.clone());
        }
    }

    /// The file `from` names as `name`, opened once; `None` when it is not found (beside
    /// `from`, then in the current directory).
    pub fn open_named(&self, from: &H5, name: &str) -> Option<Result<Arc<H5>, Hdf5Error>> {
        Some(match from.src.open_named(name)? {
            Ok(src) => self.open(src),
            Err(e) => Err(store_io(name, e)),
        })
    }

    fn open(&self, src: Arc<dyn nc_store::ByteSource>) -> Result<Arc<H5>, Hdf5Error> {
        let key = src.identity();
        if let Some(h) = key
            .as_ref()
            .and_then(|k| self.open.lock().ok()?.get(k).cloned())
        {
            return Ok(h);
        }
        let shown = PathBuf::from(src.name());
        if self
            .count
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            >= MAX_FILES
        {
            return Err(Hdf5Error::invalid(
                shown.display().to_string(),
                format!("more than {MAX_FILES} files linked (a hostile or cyclic set of files?)"),
            ));
        }
        let h = Arc::new(H5::from_source(src).map_err(|e| match e {
            e @ Hdf5Error::Io { .. } => e,
            e => Hdf5Error::InFile {
                path: shown,
                inner: Box::new(e),
            },
        })?);
        if let (Some(k), Ok(mut m)) = (key, self.open.lock()) {
            m.insert(k, h.clone());
        }
        Ok(h)
    }
}

/// A store error opening `name` as the I/O error that names it.
fn store_io(name: &str, e: nc_store::StoreError) -> Hdf5Error {
    Hdf5Error::Io {
        path: PathBuf::from(name),
        error: io_error(e),
    }
}

/// The OS error of a store error (its text, for one that is not the OS's).
pub(crate) fn io_error(e: nc_store::StoreError) -> std::io::Error {
    match e {
        nc_store::StoreError::Io { source, .. } => source,
        e => std::io::Error::other(e.to_string()),
    }
}

/// An identity of an opened file, for keying objects by (file, address).
pub(crate) fn file_id(h5: &Arc<H5>) -> usize {
    Arc::as_ptr(h5) as usize
}

/// Global heap collections kept parsed (see [`H5::global_heap`]).
const MAX_CACHED_HEAPS: usize = 64;

impl H5 {
    /// The file's name in messages (its path, or a URL).
    pub fn name(&self) -> &str {
        self.src.name()
    }

    /// The file this one names as `name` (an external raw data file), as a byte source;
    /// `None` when it is not found (see [`nc_store::ByteSource::open_named`]).
    pub fn open_named(
        &self,
        name: &str,
    ) -> Option<Result<Arc<dyn nc_store::ByteSource>, nc_store::StoreError>> {
        self.src.open_named(name)
    }

    /// Open an HDF5 file from any byte source (a local file, a remote object, memory); its
    /// structures are read through [`SourceStorage`]. Files it names (external links and raw
    /// data files) are found by the source ([`nc_store::ByteSource::open_named`]).
    pub fn from_source(src: Arc<dyn nc_store::ByteSource>) -> Result<H5, Hdf5Error> {
        let options = OpenOptions::default().with_max_object_header_bytes(MAX_HEADER_BYTES);
        let file =
            Hdf5File::from_storage_with_options(Arc::new(SourceStorage(src.clone())), options)
                .map_err(st("superblock"))?;
        let path = src.local_path().map(Path::to_path_buf);
        let mut h5 = H5::from_file(file, src)?;
        h5.path = path;
        Ok(h5)
    }

    pub fn from_bytes(bytes: Vec<u8>) -> Result<H5, Hdf5Error> {
        H5::from_source(Arc::new(nc_store::BytesSource::new(bytes, "memory")))
    }

    fn from_file(file: Hdf5File, src: Arc<dyn nc_store::ByteSource>) -> Result<H5, Hdf5Error> {
        let sb = file.superblock();
        let (os, ls) = (sb.offset_size, sb.length_size);
        if !matches!(os, 2 | 4 | 8) || !matches!(ls, 2 | 4 | 8) {
            return Err(Hdf5Error::invalid(
                "superblock",
                format!("offset size {os} / length size {ls}: expected 2, 4 or 8"),
            ));
        }
        let extension = sb.extension_address;
        let h5 = H5 {
            file,
            src,
            path: None,
            os,
            ls,
            gheaps: Mutex::new(HashMap::new()),
            own_headers: Mutex::new(HashMap::new()),
            sohm: OnceLock::new(),
        };
        // HDF5 reads the superblock extension (an object header) when it opens a file, and
        // fails on a corrupt one; hdf5-reader reads it only to find shared messages
        if let Some(ext) = extension.filter(|&a| !Cursor::is_undefined_offset(a, os)) {
            crate::format::object_header::read::check(&h5, ext).map_err(|e| match e {
                Hdf5Error::Checksum {
                    what,
                    stored,
                    computed,
                } => Hdf5Error::checksum(format!("superblock extension: {what}"), stored, computed),
                e => Hdf5Error::invalid("superblock extension", e.to_string()),
            })?;
        }
        Ok(h5)
    }

    /// The base address: HDF5 addresses are relative to it (it is the superblock's offset
    /// when the file has a user block), so file offset = base + address.
    pub fn base(&self) -> u64 {
        self.file.superblock().base_address
    }

    pub fn superblock_version(&self) -> u8 {
        self.file.superblock().version
    }

    pub fn root_addr(&self) -> Result<u64, Hdf5Error> {
        self.file
            .superblock()
            .root_object_header_address()
            .map_err(st("superblock root group"))
    }

    pub fn storage(&self) -> &dyn hdf5_reader::storage::Storage {
        self.file.storage()
    }

    /// The object header at `addr`, shared messages resolved (cached). Headers hdf5-reader
    /// refuses (attributes of committed types) are parsed by our own walk in `format/object_header/read.rs`, which
    /// verifies the same checksums. A checksum mismatch is never worked around: it is the error.
    pub fn header(&self, addr: u64) -> Result<Arc<ObjectHeader>, Hdf5Error> {
        match self.file.get_or_parse_header(addr) {
            Ok(h) => Ok(h),
            Err(hdf5_reader::error::Error::ChecksumMismatch { expected, actual }) => {
                // our walk names the block (first chunk or which continuation) that is corrupt
                Err(
                    match crate::format::object_header::read::check(self, addr) {
                        Err(e @ Hdf5Error::Checksum { .. }) => e,
                        _ => Hdf5Error::checksum(
                            format!("object header at {addr:#x}"),
                            expected,
                            actual,
                        ),
                    },
                )
            }
            Err(first) => {
                if let Some(h) = self
                    .own_headers
                    .lock()
                    .ok()
                    .and_then(|m| m.get(&addr).cloned())
                {
                    return Ok(h);
                }
                // keep the decoder's own message when our walk fails too, unless ours found
                // a checksum mismatch (the decoder then failed on something else first)
                let h = Arc::new(
                    crate::format::object_header::read::parse(self, addr).map_err(|e| match e {
                        e @ Hdf5Error::Checksum { .. } => e,
                        _ => Hdf5Error::structure(format!("object header at {addr:#x}"), first),
                    })?,
                );
                if let Ok(mut m) = self.own_headers.lock() {
                    m.insert(addr, h.clone());
                }
                Ok(h)
            }
        }
    }

    /// `len` bytes at `addr`, refusing ranges past the end of the file.
    pub fn read(&self, addr: u64, len: u64, what: &str) -> Result<Vec<u8>, Hdf5Error> {
        let file_len = self.storage().len();
        if addr.checked_add(len).is_none_or(|e| e > file_len) {
            return Err(Hdf5Error::invalid(
                what,
                format!("{len} bytes at {addr:#x} run past the end of the {file_len}-byte file (truncated?)"),
            ));
        }
        let n =
            usize::try_from(len).map_err(|_| Hdf5Error::invalid(what, "size exceeds memory"))?;
        // in range (checked above), so the base cannot overflow past the source's length
        let at = addr.saturating_add(self.base());
        self.src
            .read_vec(at, n)
            .map_err(|e| Hdf5Error::invalid(what, format!("reading {len} bytes at {addr:#x}: {e}")))
    }

    /// The links of a group, in netCDF iteration order: creation order when every link
    /// carries one, else name order (HDF5's name index).
    pub fn links(&self, hdr: &ObjectHeader, what: &str) -> Result<Vec<Link>, Hdf5Error> {
        let mut links = Vec::new();
        let mut info: Option<&LinkInfoMessage> = None;
        for m in &hdr.messages {
            match m {
                HdfMessage::Link(l) => links.push(Link {
                    name: l.name.clone(),
                    to: link_to(l.target.clone()),
                    order: l.creation_order,
                }),
                HdfMessage::LinkInfo(li) => info = Some(li),
                HdfMessage::SymbolTable(s) => self.symbol_table_links(s, what, &mut links)?,
                _ => {}
            }
        }
        if let Some(li) = info {
            if !Cursor::is_undefined_offset(li.fractal_heap_address, self.os) {
                self.dense_links(li, what, &mut links)?;
            }
        }
        if links.iter().all(|l| l.order.is_some()) {
            links.sort_by_key(|l| l.order);
        } else {
            links.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        }
        Ok(links)
    }

    fn dense_links(
        &self,
        li: &LinkInfoMessage,
        what: &str,
        out: &mut Vec<Link>,
    ) -> Result<(), Hdf5Error> {
        let s = self.storage();
        let heap = FractalHeap::parse_at_storage(s, li.fractal_heap_address, self.os, self.ls)
            .map_err(st(format!(
                "{what}: link heap at {:#x}",
                li.fractal_heap_address
            )))?;
        crate::format::verify::fractal_heap(self, &heap, &format!("{what}: link heap"))?;
        let index = li.btree_name_index_address;
        let bt = BTreeV2Header::parse_at_storage(s, index, self.os, self.ls)
            .map_err(st(format!("{what}: link name index at {index:#x}")))?;
        let records =
            btree_v2::collect_btree_v2_records_storage(s, &bt, self.os, self.ls, None, &[], None)
                .map_err(st(format!("{what}: link name index at {index:#x}")))?;
        let mut cache = FractalHeapDirectBlockCache::default();
        for r in records {
            let BTreeV2Record::LinkNameHash { heap_id, .. } = r else {
                continue;
            };
            let bytes = match crate::format::fractal_heap::read::managed_object(
                self, &heap, &heap_id, what,
            )? {
                Some(b) => b,
                None => heap
                    .get_object_storage_cached(&heap_id, s, self.os, self.ls, &mut cache)
                    .map_err(st(format!(
                        "{what}: link heap at {:#x}",
                        li.fractal_heap_address
                    )))?,
            };
            let l = link::parse(&mut Cursor::new(&bytes), self.os, self.ls, bytes.len())
                .map_err(st(format!("{what}: link message")))?;
            out.push(Link {
                name: l.name,
                to: link_to(l.target),
                order: l.creation_order,
            });
        }
        Ok(())
    }

    fn symbol_table_links(
        &self,
        stm: &SymbolTableMessage,
        what: &str,
        out: &mut Vec<Link>,
    ) -> Result<(), Hdf5Error> {
        let s = self.storage();
        let heap = LocalHeap::parse_at_storage(s, stm.heap_address, self.os, self.ls)
            .map_err(st(format!("{what}: local heap")))?;
        let leaves = hdf5_reader::btree_v1::collect_btree_v1_leaves_storage(
            s,
            stm.btree_address,
            self.os,
            self.ls,
            None,
            &[],
            None,
        )
        .map_err(st(format!("{what}: group B-tree")))?;
        let entry_len = 2 * u64::from(self.os) + 24;
        for (_, node_addr) in leaves {
            let prefix = self.read(node_addr, 8, what)?;
            if &prefix[..4] != b"SNOD" {
                return Err(Hdf5Error::invalid(
                    what,
                    format!("symbol table node at {node_addr:#x} has no SNOD signature"),
                ));
            }
            let n = u64::from(u16::from_le_bytes([prefix[6], prefix[7]]));
            let bytes = self.read(node_addr, 8 + n * entry_len, what)?;
            let node = SymbolTableNode::parse(&mut Cursor::new(&bytes), self.os, self.ls)
                .map_err(st(format!("{what}: symbol table node")))?;
            for e in node.entries {
                let name = heap
                    .get_string_storage(e.link_name_offset, s)
                    .map_err(st(format!("{what}: link name")))?;
                // cache type 2: a soft link, its value's heap offset in the scratch pad
                let to = if e.cache_type == 2 {
                    let at = u32::from_le_bytes([
                        e.scratch[0],
                        e.scratch[1],
                        e.scratch[2],
                        e.scratch[3],
                    ]);
                    LinkTo::Soft(
                        heap.get_string_storage(u64::from(at), s)
                            .map_err(st(format!("{what}: soft link \"{name}\" value")))?,
                    )
                } else {
                    LinkTo::Hard(e.object_header_address)
                };
                out.push(Link {
                    name,
                    to,
                    order: None,
                });
            }
        }
        Ok(())
    }

    /// The attributes of an object in netCDF iteration order: compact ones by their messages'
    /// creation order when tracked (else in the order HDF5 walks the header chunks), dense
    /// ones by the creation-order index when there is one, else in name-index (hash) order.
    pub fn attributes(
        &self,
        addr: u64,
        hdr: &ObjectHeader,
        what: &str,
    ) -> Result<Vec<AttributeMessage>, Hdf5Error> {
        let mut atts: Vec<AttributeMessage> = Vec::new();
        let mut info: Option<&AttributeInfoMessage> = None;
        for m in &hdr.messages {
            match m {
                HdfMessage::Attribute(a) => atts.push(a.clone()),
                HdfMessage::AttributeInfo(i) => info = Some(i),
                _ => {}
            }
        }
        if atts.len() > 1 {
            let orders = crate::format::object_header::read::attribute_orders(self, addr)?;
            if atts.iter().all(|a| orders.contains_key(a.name.as_bytes())) {
                atts.sort_by_key(|a| orders.get(a.name.as_bytes()).copied().unwrap_or((0, 0)));
            }
        }
        if let Some(info) = info {
            if !Cursor::is_undefined_offset(info.fractal_heap_address, self.os) {
                atts.extend(self.dense_attributes(info, what)?);
            }
        }
        Ok(atts)
    }

    fn dense_attributes(
        &self,
        info: &AttributeInfoMessage,
        what: &str,
    ) -> Result<Vec<AttributeMessage>, Hdf5Error> {
        let s = self.storage();
        let heap = FractalHeap::parse_at_storage(s, info.fractal_heap_address, self.os, self.ls)
            .map_err(st(format!(
                "{what}: attribute heap at {:#x}",
                info.fractal_heap_address
            )))?;
        crate::format::verify::fractal_heap(self, &heap, &format!("{what}: attribute heap"))?;
        let by_order = info
            .btree_creation_order_address
            .filter(|&a| !Cursor::is_undefined_offset(a, self.os));
        let index = by_order.unwrap_or(info.btree_name_index_address);
        let bt = BTreeV2Header::parse_at_storage(s, index, self.os, self.ls)
            .map_err(st(format!("{what}: attribute index at {index:#x}")))?;
        let records =
            btree_v2::collect_btree_v2_records_storage(s, &bt, self.os, self.ls, None, &[], None)
                .map_err(st(format!("{what}: attribute index at {index:#x}")))?;
        let mut keyed: Vec<(u64, Vec<u8>)> = Vec::with_capacity(records.len());
        for r in records {
            match r {
                BTreeV2Record::AttributeCreationOrder { order, heap_id } => {
                    keyed.push((u64::from(order), heap_id))
                }
                BTreeV2Record::AttributeNameHash { heap_id, .. } => keyed.push((0, heap_id)),
                _ => {}
            }
        }
        keyed.sort_by_key(|k| k.0);
        let mut cache = FractalHeapDirectBlockCache::default();
        let mut atts = Vec::with_capacity(keyed.len());
        for (_, id) in keyed {
            let bytes =
                match crate::format::fractal_heap::read::managed_object(self, &heap, &id, what)? {
                    Some(b) => b,
                    None => heap
                        .get_object_storage_cached(&id, s, self.os, self.ls, &mut cache)
                        .map_err(st(format!(
                            "{what}: attribute heap at {:#x}",
                            info.fractal_heap_address
                        )))?,
                };
            // hdf5-reader refuses attributes of committed (shared) datatypes: decode those ourselves
            let a = match attribute::parse(&mut Cursor::new(&bytes), self.os, self.ls, bytes.len())
            {
                Ok(a) => a,
                Err(e) => crate::format::object_header::read::attribute(self, &bytes, 0, what)
                    .map_err(|_| Hdf5Error::structure(format!("{what}: attribute message"), e))?,
            };
            atts.push(a);
        }
        // without a creation-order index HDF5 iterates the name index as stored: by the
        // names' hashes (Jenkins lookup3), which is the order netCDF-C lists them in
        Ok(atts)
    }

    /// The file names and byte ranges of an external raw data files message (HDF5 spec
    /// IV.A.2.h), names from its local heap.
    pub fn external_slots(
        &self,
        m: &ExternalFilesMessage,
        what: &str,
    ) -> Result<Vec<(String, u64, u64)>, Hdf5Error> {
        let s = self.storage();
        let heap = LocalHeap::parse_at_storage(s, m.heap_address, self.os, self.ls)
            .map_err(st(format!("{what}: external file name heap")))?;
        m.slots
            .iter()
            .map(|slot| {
                let name = heap
                    .get_string_storage(slot.name_offset, s)
                    .map_err(st(format!("{what}: external file name")))?;
                Ok((name, slot.offset, slot.size))
            })
            .collect()
    }

    /// Size in bytes of one vlen reference (length, heap collection address, object index).
    pub fn vlen_ref_size(&self) -> usize {
        8 + usize::from(self.os)
    }

    /// The bytes a vlen reference points to: `(element count, bytes)`. A null reference (address
    /// undefined or index 0) is an empty sequence.
    pub fn vlen_bytes(
        &self,
        reference: &[u8],
        elem_size: usize,
        what: &str,
    ) -> Result<(usize, Vec<u8>), Hdf5Error> {
        let mut c = Cursor::new(reference);
        let count = c.read_u32_le().map_err(st(what.to_string()))? as usize;
        let addr = c.read_offset(self.os).map_err(st(what.to_string()))?;
        let index = c.read_u32_le().map_err(st(what.to_string()))?;
        if Cursor::is_undefined_offset(addr, self.os) || index == 0 || addr == 0 {
            return Ok((0, Vec::new()));
        }
        let index = u16::try_from(index).map_err(|_| {
            Hdf5Error::invalid(what, format!("global heap object index {index} too large"))
        })?;
        let heap = self.global_heap(addr, what)?;
        let obj = heap.get_object(index).ok_or_else(|| {
            Hdf5Error::invalid(
                what,
                format!("global heap at {addr:#x} has no object {index}"),
            )
        })?;
        let want = count
            .checked_mul(elem_size)
            .filter(|&w| w <= obj.data.len())
            .ok_or_else(|| {
                Hdf5Error::invalid(
                    what,
                    format!(
                        "vlen of {count} elements of {elem_size} bytes exceeds its {}-byte heap object",
                        obj.data.len()
                    ),
                )
            })?;
        Ok((count, obj.data[..want].to_vec()))
    }

    /// The encoded message of type `ty` shared in the file's shared object header message
    /// heap under `heap_id` (HDF5 spec III.I: the superblock extension's shared message table
    /// message points to the `SMTB` table, whose index for a message type holds the fractal
    /// heap of those messages). Read by us: hdf5-reader 0.12.1 misreads that table.
    pub fn sohm_message(&self, ty: u16, heap_id: &[u8], what: &str) -> Result<Vec<u8>, Hdf5Error> {
        let indexes = self
            .sohm
            .get_or_init(|| self.sohm_indexes().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| Hdf5Error::invalid(what, format!("shared message table: {e}")))?;
        let flag = 1u32.checked_shl(u32::from(ty)).unwrap_or(0);
        let &(_, heap_addr) = indexes
            .iter()
            .find(|(flags, _)| u32::from(*flags) & flag != 0)
            .ok_or_else(|| {
                Hdf5Error::invalid(
                    what,
                    format!("message type {ty:#x} is shared but no shared message index holds that type"),
                )
            })?;
        let s = self.storage();
        let heap = FractalHeap::parse_at_storage(s, heap_addr, self.os, self.ls)
            .map_err(st(format!("{what}: shared message heap at {heap_addr:#x}")))?;
        crate::format::verify::fractal_heap(self, &heap, &format!("{what}: shared message heap"))?;
        if let Some(b) =
            crate::format::fractal_heap::read::managed_object(self, &heap, heap_id, what)?
        {
            return Ok(b);
        }
        let mut cache = FractalHeapDirectBlockCache::default();
        heap.get_object_storage_cached(heap_id, s, self.os, self.ls, &mut cache)
            .map_err(st(format!("{what}: shared message heap at {heap_addr:#x}")))
    }

    /// The indexes of the shared message table: type flags and heap address each.
    fn sohm_indexes(&self) -> Result<Vec<(u16, u64)>, Hdf5Error> {
        let what = "superblock extension";
        let Some(ext) = self
            .file
            .superblock()
            .extension_address
            .filter(|&a| !Cursor::is_undefined_offset(a, self.os))
        else {
            return Err(Hdf5Error::invalid(what, "no superblock extension"));
        };
        let os = usize::from(self.os);
        let msg = crate::format::object_header::read::raw_message(self, ext, 0x000F)?
            .ok_or_else(|| Hdf5Error::invalid(what, "no shared message table message"))?;
        // version, table address, number of indexes (IV.A.2.p)
        let bad = || Hdf5Error::invalid(what, "shared message table message too short");
        if msg.first() != Some(&0) {
            return Err(Hdf5Error::unsupported(
                what,
                format!("shared message table message version {:?}", msg.first()),
            ));
        }
        let mut a = [0u8; 8];
        a[..os].copy_from_slice(msg.get(1..1 + os).ok_or_else(bad)?);
        let table = u64::from_le_bytes(a);
        let n = usize::from(*msg.get(1 + os).ok_or_else(bad)?);
        // "SMTB", then per index: version, type, flags (2), minimum size (4), list cutoff (2),
        // B-tree cutoff (2), message count (2), index address, heap address; then a checksum
        let entry = 14 + 2 * os;
        let len = 4 + n * entry + 4;
        let bytes = self.read(table, len as u64, "shared message table")?;
        let body =
            crate::format::object_header::read::verified(&bytes, table, "shared message table")?;
        if &body[..4] != b"SMTB" {
            return Err(Hdf5Error::invalid(
                format!("shared message table at {table:#x}"),
                "no SMTB signature",
            ));
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let e = &body[4 + i * entry..4 + (i + 1) * entry];
            let flags = u16::from_le_bytes([e[2], e[3]]);
            let mut h = [0u8; 8];
            h[..os].copy_from_slice(&e[14 + os..14 + 2 * os]);
            out.push((flags, u64::from_le_bytes(h)));
        }
        Ok(out)
    }

    /// The bytes of object `index` of the global heap collection at `addr`.
    pub fn heap_object(&self, addr: u64, index: u32, what: &str) -> Result<Vec<u8>, Hdf5Error> {
        if Cursor::is_undefined_offset(addr, self.os) || index == 0 {
            return Err(Hdf5Error::invalid(
                what,
                format!("global heap id {addr:#x}/{index} is undefined"),
            ));
        }
        let i = u16::try_from(index).map_err(|_| {
            Hdf5Error::invalid(what, format!("global heap object index {index} too large"))
        })?;
        let heap = self.global_heap(addr, what)?;
        let obj = heap.get_object(i).ok_or_else(|| {
            Hdf5Error::invalid(
                what,
                format!("global heap at {addr:#x} has no object {index}"),
            )
        })?;
        Ok(obj.data.clone())
    }

    fn global_heap(&self, addr: u64, what: &str) -> Result<Arc<GlobalHeapCollection>, Hdf5Error> {
        if let Some(h) = self.gheaps.lock().ok().and_then(|m| m.get(&addr).cloned()) {
            return Ok(h);
        }
        let h = Arc::new(
            GlobalHeapCollection::parse_at_storage(self.storage(), addr, self.os, self.ls)
                .map_err(st(format!("{what}: global heap at {addr:#x}")))?,
        );
        if let Ok(mut m) = self.gheaps.lock() {
            // bound the cache: strings and vlens are read in file order, so a few collections
            // suffice, and a collection may be 64 KiB or more (a hostile file may have many)
            if m.len() >= MAX_CACHED_HEAPS {
                m.clear();
            }
            m.insert(addr, h.clone());
        }
        Ok(h)
    }
}

/// hdf5-reader's storage over one of our byte sources: the HDF5 structures are read from
/// wherever the source's bytes are, by range.
pub(crate) struct SourceStorage(pub Arc<dyn nc_store::ByteSource>);

impl hdf5_reader::storage::Storage for SourceStorage {
    fn len(&self) -> u64 {
        self.0.len()
    }

    fn read_range(
        &self,
        offset: u64,
        len: usize,
    ) -> hdf5_reader::error::Result<hdf5_reader::storage::StorageBuffer> {
        match self.0.read_vec(offset, len) {
            Ok(buf) => Ok(hdf5_reader::storage::StorageBuffer::from_vec(buf)),
            Err(nc_store::StoreError::Range {
                offset, end, size, ..
            }) => Err(hdf5_reader::error::Error::UnexpectedEof {
                offset,
                needed: end - offset,
                available: size.saturating_sub(offset),
            }),
            // the source's message names the URL or file and the cause
            Err(e) => Err(hdf5_reader::error::Error::Io(std::io::Error::other(
                e.to_string(),
            ))),
        }
    }
}
