//! From HDF5 objects to the netCDF data model: groups, dimensions (dimension scales,
//! `_Netcdf4Dimid`, `_Netcdf4Coordinates`, `DIMENSION_LIST`, phony dimensions), user types
//! (committed datatypes), variables, attributes (hidden ones removed) and storage settings.
//! Soft links are resolved in their file; external links open the target file (once, through
//! [`Files`]) and its objects join the walk, keyed by (file, address); a virtual dataset's
//! mappings are read and their sources resolved here (see `vds.rs`).
//!
//! netCDF File Formats, "The NetCDF-4 Format": creation order, dimension scales, dimensions
//! without dimension scales, `_nc4_non_coord_`, hidden attributes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use hdf5_reader::messages::attribute::AttributeMessage;
use hdf5_reader::messages::dataspace::{DataspaceMessage, DataspaceType};
use hdf5_reader::messages::datatype::{Datatype, StringSize, VarLenKind};
use hdf5_reader::messages::layout::DataLayout;
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::object_header::ObjectHeader;
use hdf5_reader::ByteOrder;
use nc_dataset::{
    Attribute, CompoundField, Dataset, Endianness, EnumMember, FileInfo, FilterSpec, Format,
    GroupId, Layout, NcType, Storage, UserTypeKind, Values, VarId,
};

use crate::convert::{atomic, byte_order, stored_size, Decoder, TypeTable};
use crate::h5::{file_id, Files, LinkTo, H5};
use crate::vds;
use crate::Hdf5Error;

/// Deepest group nesting we follow.
const MAX_GROUP_DEPTH: usize = 100;
/// Most groups we read (a group reached by several links is read once per link).
const MAX_GROUPS: usize = 1 << 16;
/// Most coordinates the point lists of a file's virtual dataset selections hold together.
const MAX_VIRTUAL_COORDS: u64 = 1 << 26;
/// Most virtual datasets nested as sources of each other.
const MAX_VIRTUAL_DEPTH: usize = 8;
/// Most soft links followed in a row (HDF5's default traversal limit).
const MAX_SOFT_LINKS: usize = 16;
/// netCDF-C's text in the `NAME` attribute of a dimension without a coordinate variable.
const DIM_WITHOUT_VARIABLE: &str = "This is a netCDF dimension but not a netCDF variable";
/// Prefix netCDF-C puts on a variable that has a dimension's name but is not its coordinate.
const NON_COORD_PREFIX: &str = "_nc4_non_coord_";
/// netCDF-C 4.9.0's reserved attribute names (dimension-scale bookkeeping, netCDF bookkeeping,
/// and the names it computes or shows only as special attributes): hidden on every object read
/// from HDF5, variables and groups alike, whatever their type (PyTables, hickle and mdtraj
/// write `CLASS` on every group: netCDF-C shows none of them, nor do we), and refused by the
/// writer, as netCDF-C refuses them ("String match to name in use"), since a file holding them
/// would show nothing of them.
pub(crate) const RESERVED_ATTS: &[&str] = &[
    "CLASS",
    "DIMENSION_LIST",
    "NAME",
    "REFERENCE_LIST",
    "_Netcdf4Dimid",
    "_Netcdf4Coordinates",
    "_nc3_strict",
    "_NCProperties",
    "_IsNetcdf4",
    "_SuperblockVersion",
    "_Format",
    "_ARRAY_DIMENSIONS",
    "_Codecs",
    "_NCZARR_ATTR",
];
/// Attribute names that mark an HDF5 file as written by netCDF (`_IsNetcdf4` needs two).
const MARKER_ATTS: &[&str] = &[
    "CLASS",
    "DIMENSION_LIST",
    "NAME",
    "REFERENCE_LIST",
    "_Netcdf4Coordinates",
    "_Netcdf4Dimid",
    "_nc3_strict",
    "_NCProperties",
];

/// What the data reader needs about one variable.
#[derive(Debug, Clone)]
pub(crate) struct VarInfo {
    /// The file holding the dataset (another one when reached through an external link).
    pub file: Arc<H5>,
    /// The mappings of a virtual dataset (then `layout` is a placeholder).
    pub virt: Option<Arc<vds::Virtual>>,
    /// Stored datatype.
    pub dt: Datatype,
    /// Data layout.
    pub layout: DataLayout,
    /// Current extent of the HDF5 dataset.
    pub shape: Vec<u64>,
    /// Maximum extent (for extensible-array chunk indexes).
    pub max_dims: Option<Vec<u64>>,
    /// Filter pipeline in write order.
    pub filters: Vec<FilterSpec>,
    /// Stored fill value (one element), if defined.
    pub fill: Option<Vec<u8>>,
    /// Bytes per stored element.
    pub elem_size: usize,
    /// Raw data in other files (external storage): file name, offset in it, bytes (the
    /// last slot may say `u64::MAX`, "to the end").
    pub external: Option<Vec<(String, u64, u64)>>,
    /// An integer type with fewer significant bits than its size (nbit filter): precision and
    /// bit offset, as the filter's parameters give them; values are shifted down and
    /// sign-extended after decoding, as HDF5 converts them to a native type.
    pub nbit_bits: Option<(u32, u32)>,
    /// The object header of an integer dataset, whose datatype's own precision and offset
    /// ([`VarInfo::int_bits`]) are read once, when its data is first read: hdf5-reader's
    /// datatype has none, and reading every integer dataset's header again when the file is
    /// opened cost a third more time on a file of 20,000 of them.
    pub int_header: Option<u64>,
    /// The datatype's precision and offset, once read.
    pub dt_bits: std::sync::OnceLock<Option<(u32, u32)>>,
}

impl VarInfo {
    /// Precision and bit offset of an integer type with fewer significant bits than its size
    /// (the nbit filter's parameters, else the datatype's); `None` when every bit counts.
    pub fn int_bits(&self) -> Option<(u32, u32)> {
        self.nbit_bits.or_else(|| {
            let addr = self.int_header?;
            *self.dt_bits.get_or_init(|| {
                crate::format::object_header::read::integer_bits(&self.file, addr)
                    .ok()
                    .flatten()
            })
        })
    }
}

/// A file's dataset model, the reader's facts per variable, and the warnings.
type Built = (Dataset, Vec<Option<VarInfo>>, Vec<String>);

/// The storage messages of a dataset's object header.
struct Stored {
    space: DataspaceMessage,
    dt: Datatype,
    layout: Option<DataLayout>,
    fill: Option<hdf5_reader::messages::fill_value::FillValueMessage>,
    filters: Vec<FilterSpec>,
    external: Option<Vec<(String, u64, u64)>>,
    /// Global heap id of a virtual dataset's mapping block.
    virt: Option<(u64, u32)>,
    /// Address of the dataset's object header.
    addr: u64,
}

struct RawDataset {
    /// Position in the walk (netCDF-C's order of reading objects).
    seq: usize,
    group: GroupId,
    name: String,
    /// The file holding it.
    h5: Arc<H5>,
    addr: u64,
    st: Stored,
    virt: Option<Arc<vds::Virtual>>,
    atts: Vec<AttributeMessage>,
    /// Index into the dimension list when this is a dimension scale.
    scale: Option<usize>,
    dim_only: bool,
}

struct RawDim {
    key: u64,
    group: GroupId,
    name: String,
    len: u64,
    unlimited: bool,
}

struct RawType {
    seq: usize,
    group: GroupId,
    name: String,
    dt: Datatype,
}

struct Walker<'a> {
    /// The file opened.
    h5: &'a Arc<H5>,
    /// Every file read (external link targets, virtual dataset sources).
    files: &'a Files,
    ds: Dataset,
    datasets: Vec<RawDataset>,
    dims: Vec<RawDim>,
    types: Vec<RawType>,
    group_atts: Vec<(Arc<H5>, Vec<AttributeMessage>)>,
    /// Groups walked so far (bounds a file whose groups link to each other many times).
    groups_walked: usize,
    next_dimid: u64,
    markers: usize,
    /// Objects seen so far (datasets and committed types), for [`RawDataset::seq`].
    seq: usize,
    /// What was left out, for the user (see [`crate::Nc4File::warnings`]).
    warnings: Vec<String>,
    /// Coordinates held by the point lists of resolved virtual dataset selections, all
    /// mappings of the file together (bounded: a few bytes of mapping block can name an
    /// irregular selection of millions of elements).
    vds_coords: u64,
}

/// Build the dataset model of an opened file (metadata only, no data is decoded).
/// Also returns warnings naming what netCDF cannot represent and was left out.
pub(crate) fn build(h5: &Arc<H5>, files: &Files, name: &str) -> Result<Built, Hdf5Error> {
    let mut w = Walker {
        h5,
        files,
        ds: Dataset::new(name),
        datasets: Vec::new(),
        dims: Vec::new(),
        types: Vec::new(),
        group_atts: vec![(h5.clone(), Vec::new())],
        groups_walked: 0,
        next_dimid: 0,
        markers: 0,
        seq: 0,
        warnings: Vec::new(),
        vds_coords: 0,
    };
    let root = h5.root_addr()?;
    w.walk(GroupId(0), h5, root, &mut vec![(file_id(h5), root)], "/")?;
    w.finish()
}

fn space_dims(space: &DataspaceMessage) -> Vec<u64> {
    match space.dataspace_type {
        DataspaceType::Simple => space.dims.clone(),
        _ => Vec::new(),
    }
}

fn is_unlimited(space: &DataspaceMessage, d: usize) -> bool {
    space
        .max_dims
        .as_ref()
        .and_then(|m| m.get(d))
        .is_some_and(|&m| m == u64::MAX)
}

impl Walker<'_> {
    fn next_seq(&mut self) -> usize {
        self.seq += 1;
        self.seq
    }

    /// Read group `g` (at `addr`, path `path`): its attributes, then its links in order
    /// (datasets and committed types at once, child groups after), as netCDF-C does.
    /// `ancestors` holds the addresses of the groups from the root down to this one.
    fn walk(
        &mut self,
        g: GroupId,
        h5: &Arc<H5>,
        addr: u64,
        ancestors: &mut Vec<(usize, u64)>,
        path: &str,
    ) -> Result<(), Hdf5Error> {
        if ancestors.len() > MAX_GROUP_DEPTH {
            return Err(Hdf5Error::TooDeep {
                what: format!("group \"{path}\""),
                limit: MAX_GROUP_DEPTH,
            });
        }
        self.groups_walked += 1;
        if self.groups_walked > MAX_GROUPS {
            return Err(Hdf5Error::invalid(
                format!("group \"{path}\""),
                format!("more than {MAX_GROUPS} groups (groups linked to each other many times?)"),
            ));
        }
        let what = format!("group \"{path}\"");
        let hdr = h5.header(addr)?;
        self.group_atts[g.0] = (h5.clone(), h5.attributes(addr, &hdr, &what)?);
        let links = h5.links(&hdr, &what)?;
        let mut children = Vec::new();
        for link in links {
            let child_path = if path == "/" {
                format!("/{}", link.name)
            } else {
                format!("{path}/{}", link.name)
            };
            let (file, target) = match &link.to {
                LinkTo::Hard(a) => (h5.clone(), *a),
                LinkTo::Soft(to) => match self.resolve(h5, to, addr, 0)? {
                    Ok(a) => (h5.clone(), a),
                    Err(why) => {
                        self.warnings.push(format!(
                            "soft link \"{child_path}\" to \"{to}\" left out: {why}"
                        ));
                        continue;
                    }
                },
                LinkTo::External { file, path: to } => match self.external(h5, file, to) {
                    Ok(found) => found,
                    Err(why) => {
                        self.warnings.push(format!(
                            "external link \"{child_path}\" to \"{to}\" in file \"{file}\" left out: {why}"
                        ));
                        continue;
                    }
                },
            };
            let child = file.header(target)?;
            match classify(&child) {
                Kind::Dataset => self.dataset(g, &file, &link.name, target, &child, &child_path)?,
                Kind::Type(dt) => {
                    let seq = self.next_seq();
                    self.types.push(RawType {
                        seq,
                        group: g,
                        name: link.name.clone(),
                        dt,
                    })
                }
                Kind::Group => {
                    let key = (file_id(&file), target);
                    if key == (file_id(h5), addr) || ancestors.contains(&key) {
                        // netCDF-C 4.9 recurses into such a group until it runs out of stack
                        self.warnings.push(format!(
                            "group \"{child_path}\" left out: it is one of the groups that contain it (a cycle)"
                        ));
                        continue;
                    }
                    let id = self.ds.add_group(g, link.name.clone());
                    self.group_atts.push((file.clone(), Vec::new()));
                    children.push((id, file, target, child_path));
                }
            }
        }
        for (id, file, a, p) in children {
            ancestors.push((file_id(&file), a));
            let r = self.walk(id, &file, a, ancestors, &p);
            ancestors.pop();
            r?;
        }
        Ok(())
    }

    /// The object a soft link's value names, from the group at `here`; `Ok(Err(why))` when
    /// it names nothing this file holds (HDF5 follows at most 16 nested soft links).
    fn resolve(
        &self,
        h5: &H5,
        to: &str,
        here: u64,
        nested: usize,
    ) -> Result<Result<u64, String>, Hdf5Error> {
        if nested >= MAX_SOFT_LINKS {
            return Ok(Err(format!(
                "more than {MAX_SOFT_LINKS} soft links in a row (a cycle?)"
            )));
        }
        let mut at = if to.starts_with('/') {
            h5.root_addr()?
        } else {
            here
        };
        for part in to.split('/').filter(|p| !p.is_empty() && *p != ".") {
            let hdr = h5.header(at)?;
            let links = h5.links(&hdr, &format!("soft link target \"{to}\""))?;
            let Some(l) = links.into_iter().find(|l| l.name == part) else {
                return Ok(Err(format!("\"{part}\" does not exist")));
            };
            at = match l.to {
                LinkTo::Hard(a) => a,
                LinkTo::Soft(next) => match self.resolve(h5, &next, at, nested + 1)? {
                    Ok(a) => a,
                    Err(why) => return Ok(Err(why)),
                },
                LinkTo::External { .. } => {
                    return Ok(Err(format!("\"{part}\" is an external link")))
                }
            };
        }
        Ok(Ok(at))
    }

    /// The object an external link names: its file (opened once) and address; `Err(why)`
    /// when the file or the object is not there or cannot be read.
    fn external(&mut self, from: &Arc<H5>, file: &str, to: &str) -> Result<(Arc<H5>, u64), String> {
        let Some(target) = self.files.open_named(from, file) else {
            return Err(
                "the file is not found (looked for beside the linking file, then in the current directory)"
                    .to_string(),
            );
        };
        let target = target.map_err(|e| e.to_string())?;
        let shown = target.name().to_string();
        let root = target.root_addr().map_err(|e| e.to_string())?;
        match self.resolve(&target, to, root, 0) {
            Ok(Ok(a)) => Ok((target, a)),
            Ok(Err(why)) => Err(format!("{why} in {shown}")),
            Err(e) => Err(format!("{shown}: {e}")),
        }
    }

    /// The mappings of the virtual dataset `what` (stored as `st` in `h5`, its mapping block
    /// at global heap id `heap`), each source opened and checked. A source file or dataset
    /// that is not there reads as the fill value (with a warning, where netCDF-C is
    /// silent); one that cannot be used (a cycle, a printf-style name, another datatype)
    /// keeps the reason, the error of a read. `chain` holds the virtual datasets being
    /// resolved, the outermost first.
    fn virtual_maps(
        &mut self,
        h5: &Arc<H5>,
        heap: (u64, u32),
        st: &mut Stored,
        what: &str,
        chain: &mut Vec<(usize, u64)>,
    ) -> Result<Arc<vds::Virtual>, Hdf5Error> {
        let block = h5.heap_object(
            heap.0,
            heap.1,
            &format!("{what}: virtual dataset mapping block"),
        )?;
        let entries = vds::parse_block(&block, h5.ls, what)?;
        let mut maps = Vec::with_capacity(entries.len());
        // unlimited mappings: the extent along their unlimited dimension is where the
        // sources that exist end (HDF5's default view, the last available source): for
        // printf-style names the last source file there, else the source's own extent
        let mut grown: Option<(usize, u64)> = None;
        for e in &entries {
            let end = match vds::printf_extent(e, |file, dset| {
                self.source_shape(h5, file, dset).is_some()
            }) {
                Some(x) => Some(x),
                // an unlimited mapping of one source: where that source's blocks end
                None if vds::is_unlimited(e) => vds::literal_name(&e.file)
                    .and_then(|f| Ok((f, vds::literal_name(&e.dataset)?)))
                    .ok()
                    .and_then(|(f, d)| self.source_shape(h5, &f, &d))
                    .and_then(|shape| vds::unlimited_extent(e, &shape)),
                None => None,
            };
            if let Some((d, end)) = end {
                let end = grown.filter(|g| g.0 == d).map_or(end, |g| g.1.max(end));
                grown = Some((d, end));
            }
        }
        if let Some((d, end)) = grown {
            if let Some(x) = st.space.dims.get_mut(d) {
                *x = end;
            }
        }
        let vshape = space_dims(&st.space);
        for entry in entries {
            // an unlimited mapping becomes one mapping per block inside the current extent
            let expanded = match vds::expand_unlimited(&entry, &vshape) {
                Ok(Some(v)) => v,
                Ok(None) => vec![entry],
                Err(why) => {
                    maps.push(vds::Source::Unusable(why));
                    continue;
                }
            };
            for e in expanded {
                let source = match self.virtual_source(h5, &e, st, what, chain) {
                    Ok(s) => s,
                    Err(why) => vds::Source::Unusable(why),
                };
                maps.push(source);
            }
        }
        Ok(Arc::new(vds::Virtual { maps }))
    }

    /// The current extent of dataset `dset` of the source file `file` (as stored, escapes
    /// undone), when it is there.
    fn source_shape(&mut self, h5: &Arc<H5>, file: &str, dset: &str) -> Option<Vec<u64>> {
        let src = if file == "." {
            h5.clone()
        } else {
            self.files.open_named(h5, file)?.ok()?
        };
        let root = src.root_addr().ok()?;
        let addr = self.resolve(&src, dset, root, 0).ok()?.ok()?;
        let hdr = src.header(addr).ok()?;
        hdr.messages.iter().find_map(|m| match m {
            HdfMessage::Dataspace(s) => Some(space_dims(s)),
            _ => None,
        })
    }

    /// The source of one mapping (see [`Self::virtual_maps`]); `Err(why)` when it cannot be used.
    fn virtual_source(
        &mut self,
        h5: &Arc<H5>,
        e: &vds::Entry,
        vst: &Stored,
        what: &str,
        chain: &mut Vec<(usize, u64)>,
    ) -> Result<vds::Source, String> {
        let file = vds::literal_name(&e.file)?;
        let dset = vds::literal_name(&e.dataset)?;
        let src = if file == "." {
            h5.clone()
        } else {
            let Some(opened) = self.files.open_named(h5, &file) else {
                self.warnings.push(format!(
                    "{what}: source file \"{file}\" of virtual dataset mapping not found (looked for beside the file, then in the current directory): its elements read as the fill value"
                ));
                return Ok(vds::Source::Missing);
            };
            opened.map_err(|e| format!("source file {file}: {e}"))?
        };
        let swhat = format!("source dataset \"{dset}\" in \"{file}\"");
        let root = src.root_addr().map_err(|e| format!("{swhat}: {e}"))?;
        let addr = match self.resolve(&src, &dset, root, 0) {
            Ok(Ok(a)) => a,
            Ok(Err(why)) => {
                self.warnings.push(format!(
                    "{what}: {swhat} of virtual dataset mapping not found ({why}): its elements read as the fill value"
                ));
                return Ok(vds::Source::Missing);
            }
            Err(e) => return Err(format!("{swhat}: {e}")),
        };
        let key = (file_id(&src), addr);
        if chain.contains(&key) {
            return Err(format!(
                "{swhat} leads back to a virtual dataset that maps it (a cycle of virtual datasets)"
            ));
        }
        if chain.len() >= MAX_VIRTUAL_DEPTH {
            return Err(format!(
                "{swhat}: virtual datasets nested deeper than {MAX_VIRTUAL_DEPTH} levels"
            ));
        }
        let hdr = src.header(addr).map_err(|e| format!("{swhat}: {e}"))?;
        if !matches!(classify(&hdr), Kind::Dataset) {
            return Err(format!("{swhat} is not a dataset"));
        }
        let mut sst = stored(&src, addr, &hdr, &swhat).map_err(|e| e.to_string())?;
        if sst.dt != vst.dt {
            return Err(format!(
                "{swhat} has another datatype than the virtual dataset (type conversion is not supported)"
            ));
        }
        let svirt = match sst.virt {
            Some(id) => {
                chain.push(key);
                let r = self.virtual_maps(&src, id, &mut sst, &swhat, chain);
                chain.pop();
                Some(r.map_err(|e| e.to_string())?)
            }
            None => None,
        };
        let info = info_of(&src, &sst, svirt)
            .ok_or_else(|| format!("{swhat}: its storage cannot be read"))?;
        if !Arc::ptr_eq(&src, h5) && crate::convert::has_heap_refs(&info.dt) {
            return Err(format!(
                "{swhat}: variable-length data from another file is not supported"
            ));
        }
        let vsel = vds::resolve(&e.virtual_sel, &space_dims(&vst.space))
            .map_err(|why| format!("mapping of {swhat}: virtual selection: {why}"))?;
        let ssel = vds::resolve(&e.source, &info.shape)
            .map_err(|why| format!("mapping of {swhat}: source selection: {why}"))?;
        self.vds_coords = self
            .vds_coords
            .saturating_add(vsel.coords_held())
            .saturating_add(ssel.coords_held());
        if self.vds_coords > MAX_VIRTUAL_COORDS {
            return Err(format!(
                "mapping of {swhat}: the file's irregular virtual dataset selections hold more than {MAX_VIRTUAL_COORDS} coordinates"
            ));
        }
        Ok(vds::Source::Found(Box::new(vds::Found {
            info,
            name: swhat,
            vsel,
            ssel,
            cache: crate::read::ReadCache::default(),
        })))
    }

    fn dataset(
        &mut self,
        g: GroupId,
        h5: &Arc<H5>,
        name: &str,
        addr: u64,
        hdr: &ObjectHeader,
        path: &str,
    ) -> Result<(), Hdf5Error> {
        let what = format!("dataset \"{path}\"");
        let mut st = stored(h5, addr, hdr, &what)?;
        let virt = match st.virt {
            Some(id) => {
                let mut chain = vec![(file_id(h5), addr)];
                Some(self.virtual_maps(h5, id, &mut st, &what, &mut chain)?)
            }
            None => None,
        };
        let atts = h5.attributes(addr, hdr, &what)?;
        self.markers += atts
            .iter()
            .filter(|a| MARKER_ATTS.contains(&a.name.as_str()))
            .count();
        let dec = Decoder { h5, what: &what };
        let text = |a: &AttributeMessage| -> Option<String> {
            let n = a.dataspace.num_elements().ok()? as usize;
            match dec.decode(&a.datatype, &a.raw_data, n, false).ok()? {
                Values::Char(b) => Some(
                    String::from_utf8_lossy(&b)
                        .trim_end_matches('\0')
                        .to_string(),
                ),
                Values::String(s) => s
                    .into_iter()
                    .next()
                    .flatten()
                    .map(|s| s.to_str_lossy().into_owned()),
                _ => None,
            }
        };
        let class = atts.iter().find(|a| a.name == "CLASS").and_then(text);
        let mut scale = None;
        let mut dim_only = false;
        if class.as_deref() == Some("DIMENSION_SCALE") {
            let dimid = atts
                .iter()
                .find(|a| a.name == "_Netcdf4Dimid")
                .and_then(|a| dec.decode(&a.datatype, &a.raw_data, 1, false).ok())
                .and_then(|v| v.get_i128(0))
                .and_then(|v| u64::try_from(v).ok());
            dim_only = atts
                .iter()
                .find(|a| a.name == "NAME")
                .and_then(text)
                .is_some_and(|t| t.starts_with(DIM_WITHOUT_VARIABLE));
            let key = dimid.unwrap_or(self.next_dimid);
            self.next_dimid = self.next_dimid.max(key.saturating_add(1));
            let dims = space_dims(&st.space);
            scale = Some(self.dims.len());
            self.dims.push(RawDim {
                key,
                group: g,
                name: name.to_string(),
                len: dims.first().copied().unwrap_or(0),
                // length 0 is netCDF's NC_UNLIMITED: a 0-length dimension is unlimited, as
                // netCDF-C makes it whatever the scale's maximum size
                unlimited: is_unlimited(&st.space, 0) || dims.first().copied().unwrap_or(0) == 0,
            });
        }
        let seq = self.next_seq();
        self.datasets.push(RawDataset {
            seq,
            group: g,
            name: name.to_string(),
            h5: h5.clone(),
            addr,
            st,
            virt,
            atts,
            scale,
            dim_only,
        });
        Ok(())
    }

    fn finish(mut self) -> Result<Built, Hdf5Error> {
        let (table, var_types) = self.build_types();
        let h5 = self.h5;

        // variable dimensions (as dimid keys); phony dimensions are made children-first, as
        // netCDF-C matches dimension scales depth-first after reading the whole file
        let key_of_addr: HashMap<(usize, u64), u64> = self
            .datasets
            .iter()
            .filter_map(|d| {
                d.scale
                    .map(|s| ((file_id(&d.h5), d.addr), self.dims[s].key))
            })
            .collect();
        let known_keys: HashSet<u64> = self.dims.iter().map(|d| d.key).collect();
        let mut var_dims: Vec<Option<Vec<u64>>> = vec![None; self.datasets.len()];
        let order = post_order(&self.ds);
        for g in order {
            for (i, d) in self.datasets.iter().enumerate() {
                // datasets netCDF cannot type are skipped before their dimensions are made
                if d.group != g || d.dim_only || var_types[i].is_none() {
                    continue;
                }
                let what = format!("variable \"{}\"", d.name);
                let shape = space_dims(&d.st.space);
                let rank = shape.len();
                let mut keys: Vec<Option<u64>> = vec![None; rank];
                let dec = Decoder {
                    h5: &d.h5,
                    what: &what,
                };
                let coords = d
                    .atts
                    .iter()
                    .find(|a| a.name == "_Netcdf4Coordinates")
                    .and_then(|a| dec.decode(&a.datatype, &a.raw_data, rank, false).ok());
                if let Some(c) = coords {
                    for (k, slot) in keys.iter_mut().enumerate() {
                        *slot = c
                            .get_i128(k)
                            .and_then(|v| u64::try_from(v).ok())
                            .filter(|v| known_keys.contains(v));
                    }
                }
                if let (Some(s), Some(first)) = (d.scale, keys.first_mut()) {
                    if first.is_none() {
                        *first = Some(self.dims[s].key);
                    }
                }
                if keys.iter().any(Option::is_none) {
                    if let Some(list) = d.atts.iter().find(|a| a.name == "DIMENSION_LIST") {
                        let refs = dimension_list(&d.h5, list, rank, &what)?;
                        let file = file_id(&d.h5);
                        for (slot, r) in keys.iter_mut().zip(refs) {
                            if slot.is_none() {
                                *slot = r.and_then(|a| key_of_addr.get(&(file, a)).copied());
                            }
                        }
                    }
                }
                let mut resolved = Vec::with_capacity(rank);
                for (k, slot) in keys.into_iter().enumerate() {
                    let key = match slot {
                        Some(key) => key,
                        None => {
                            let len = shape[k];
                            let unl = is_unlimited(&d.st.space, k);
                            let found = self.dims.iter().find(|x| {
                                x.group == g
                                    && x.len == len
                                    && x.unlimited == unl
                                    && !resolved.contains(&x.key)
                            });
                            match found {
                                Some(x) => x.key,
                                None => {
                                    let key = self.next_dimid;
                                    self.next_dimid += 1;
                                    self.dims.push(RawDim {
                                        key,
                                        group: g,
                                        name: format!("phony_dim_{key}"),
                                        len,
                                        // a 0-length one is unlimited (NC_UNLIMITED is 0),
                                        // and then shared only by extendible axes
                                        unlimited: unl || len == 0,
                                    });
                                    key
                                }
                            }
                        }
                    };
                    resolved.push(key);
                }
                var_dims[i] = Some(resolved);
            }
        }

        // unlimited dimensions are as long as the longest variable along them
        for (d, keys) in self.datasets.iter().zip(&var_dims) {
            let Some(keys) = keys else { continue };
            let shape = space_dims(&d.st.space);
            for (k, key) in keys.iter().enumerate() {
                if let Some(x) = self.dims.iter_mut().find(|x| x.key == *key) {
                    if x.unlimited {
                        x.len = x.len.max(shape.get(k).copied().unwrap_or(0));
                    }
                }
            }
        }

        // dimensions in dimid order
        let mut dims = std::mem::take(&mut self.dims);
        dims.sort_by_key(|d| d.key);
        let mut dim_of_key = HashMap::new();
        for d in dims {
            let id = self.ds.add_dim(d.group, d.name, d.len, d.unlimited);
            dim_of_key.insert(d.key, id);
        }

        // variables, in link order within each group
        let mut infos = Vec::new();
        for (i, d) in self.datasets.iter().enumerate() {
            let Some(keys) = &var_dims[i] else { continue };
            let Some(ty) = var_types[i] else {
                continue;
            };
            let name = d
                .name
                .strip_prefix(NON_COORD_PREFIX)
                .unwrap_or(&d.name)
                .to_string();
            let dims: Vec<_> = keys
                .iter()
                .filter_map(|k| dim_of_key.get(k).copied())
                .collect();
            let what = format!("variable \"{name}\"");
            let atts = convert_atts(
                &d.h5,
                &table,
                &d.atts,
                RESERVED_ATTS,
                &what,
                &mut self.warnings,
            )?;
            // the stored datatype without the compound members the netCDF type leaves out
            let info = var_info(d).map(|mut info| {
                info.dt = crate::convert::typed_part(&info.dt, &table, &mut Vec::new());
                info
            });
            let storage = storage_of(d, &info);
            let v = self.ds.add_var(d.group, name, ty, dims);
            let var = self.ds.var_mut(v);
            var.atts = atts;
            var.storage = storage;
            let fill = property_fill(&self.ds, v, info.as_ref());
            self.ds.var_mut(v).storage.fill_value = fill;
            debug_assert_eq!(v, VarId(infos.len()));
            infos.push(info);
        }

        // group attributes; the root's netCDF bookkeeping goes into FileInfo / format
        let mut strict = false;
        let mut props = None;
        for g in 0..self.ds.groups.len() {
            let gh5 = self.group_atts[g].0.clone();
            let raw = std::mem::take(&mut self.group_atts[g].1);
            let what = format!("group \"{}\"", self.ds.group_path(GroupId(g)));
            if g == 0 {
                strict = raw.iter().any(|a| a.name == "_nc3_strict");
                if let Some(p) = raw.iter().find(|a| a.name == "_NCProperties") {
                    let dec = Decoder { h5, what: &what };
                    let n = p.dataspace.num_elements().unwrap_or(0) as usize;
                    props = match dec.decode(&p.datatype, &p.raw_data, n, false) {
                        Ok(Values::Char(b)) => Some(
                            String::from_utf8_lossy(&b)
                                .trim_end_matches('\0')
                                .to_string(),
                        ),
                        Ok(Values::String(s)) => s
                            .into_iter()
                            .next()
                            .flatten()
                            .map(|s| s.to_str_lossy().into_owned()),
                        _ => None,
                    };
                }
            }
            self.ds.groups[g].atts =
                convert_atts(&gh5, &table, &raw, RESERVED_ATTS, &what, &mut self.warnings)?;
        }
        self.ds.format = Some(if strict {
            Format::Netcdf4Classic
        } else {
            Format::Netcdf4
        });
        self.ds.info = FileInfo {
            nc_properties: props,
            superblock_version: Some(u32::from(h5.superblock_version())),
            // netCDF-C 4.9 answers 0 for classic-model files, else counts netCDF marker
            // attributes on datasets and wants two
            is_netcdf4: Some(!strict && self.markers >= 2),
        };
        Ok((self.ds, infos, self.warnings))
    }

    /// Add the user types, and find each dataset's netCDF type. Objects are taken in the
    /// order netCDF-C reads them: a committed datatype becomes a user type where it is met; a
    /// dataset of an enum, compound, vlen or opaque type that matches no user type met
    /// before it gets a type of its own, `_Anonymous<Class><n>` in its group (netCDF-C 4.10;
    /// 4.9 leaves such datasets out). Datasets of types netCDF has no place for are left
    /// out with a warning.
    fn build_types(&mut self) -> (TypeTable, Vec<Option<NcType>>) {
        let mut table = TypeTable::default();
        let raw = std::mem::take(&mut self.types);
        let mut committed = Vec::new();
        let mut var_types = vec![None; self.datasets.len()];
        let mut anonymous = 0u32;
        let mut next_type = raw.iter().peekable();
        // a committed datatype of a user class becomes a user type (its kind is filled in
        // once every type is known)
        let mut commit = |ds: &mut Dataset, table: &mut TypeTable, t: &RawType| {
            if is_user_class(&t.dt) {
                let id = ds.add_type(t.group, t.name.clone(), UserTypeKind::Opaque { size: 0 });
                table.entries.push((id, t.dt.clone()));
                committed.push((id, t.dt.clone()));
            }
        };
        for (i, d) in self.datasets.iter().enumerate() {
            while let Some(t) = next_type.next_if(|t| t.seq < d.seq) {
                commit(&mut self.ds, &mut table, t);
            }
            if d.dim_only {
                continue;
            }
            if let Some(ty) = table.nc_type(&d.st.dt, true).or_else(|| widened(&d.st.dt)) {
                var_types[i] = Some(ty);
                continue;
            }
            let path = dataset_path(&self.ds, d.group, &d.name);
            let class = match &d.st.dt {
                Datatype::Enum { .. } => Some("Enum"),
                Datatype::Compound { .. } => Some("Compound"),
                Datatype::VarLen {
                    kind: VarLenKind::Sequence,
                    ..
                } => Some("Vlen"),
                Datatype::Opaque { .. } => Some("Opaque"),
                _ => None,
            };
            match class.and_then(|c| Some((c, user_kind(&d.st.dt, &table)?))) {
                Some((class, kind)) => {
                    anonymous += 1;
                    let id =
                        self.ds
                            .add_type(d.group, format!("_Anonymous{class}{anonymous}"), kind);
                    table.entries.push((id, d.st.dt.clone()));
                    var_types[i] = Some(NcType::User(id));
                    let name = self.ds.user_type(id).name.clone();
                    members_left_out(&d.st.dt, &table, &name, &mut self.warnings);
                }
                None => self.warnings.push(format!(
                    "dataset \"{path}\" left out: netCDF has no type for its HDF5 datatype ({})",
                    type_class(&d.st.dt)
                )),
            }
        }
        for t in next_type {
            commit(&mut self.ds, &mut table, t);
        }
        for (id, dt) in committed {
            if let Some(kind) = user_kind(&dt, &table) {
                self.ds.types[id.0].kind = kind;
                let name = self.ds.user_type(id).name.clone();
                members_left_out(&dt, &table, &name, &mut self.warnings);
            }
        }
        (table, var_types)
    }
}

/// The storage messages of the dataset whose header `hdr` is at `addr` in `h5`.
fn stored(h5: &H5, addr: u64, hdr: &ObjectHeader, what: &str) -> Result<Stored, Hdf5Error> {
    let mut space = None;
    let mut dt = None;
    let mut layout = None;
    let mut fill = None;
    let mut filters = Vec::new();
    let mut external = None;
    let mut virt = None;
    for m in &hdr.messages {
        match m {
            HdfMessage::ExternalFiles(e) => external = Some(h5.external_slots(e, what)?),
            HdfMessage::Dataspace(s) => space = Some(s.clone()),
            HdfMessage::Datatype(t) => dt = Some(t.datatype.clone()),
            HdfMessage::DataLayout(l) => layout = Some(l.layout.clone()),
            // a layout of class 3, passed through by our header walk (`format/object_header/read.rs`)
            HdfMessage::Unknown { type_id: 8, data } => {
                virt = Some(vds::heap_id(data, h5.os).ok_or_else(|| {
                    Hdf5Error::invalid(what, "virtual data layout message too short")
                })?);
            }
            HdfMessage::FillValue(f) => fill = Some(f.clone()),
            HdfMessage::FilterPipeline(p) => {
                filters = p
                    .filters
                    .iter()
                    .map(|f| FilterSpec {
                        id: u32::from(f.id),
                        params: f.client_data.clone(),
                    })
                    .collect()
            }
            _ => {}
        }
    }
    // layout messages of version 1/2 (object header version 1 files): decode them ourselves
    if hdr.version == 1 {
        if let Some(l) = crate::format::object_header::read::legacy_layout(h5, addr)? {
            layout = Some(l);
        }
    }
    if virt.is_some() && layout.is_none() {
        // a placeholder: the reader reads a virtual dataset through its mappings
        layout = Some(DataLayout::Contiguous {
            address: undefined_address(h5.os),
            size: 0,
        });
    }
    let (Some(space), Some(dt)) = (space, dt) else {
        return Err(Hdf5Error::invalid(
            what,
            "dataset without dataspace or datatype",
        ));
    };
    Ok(Stored {
        space,
        dt,
        layout,
        fill,
        filters,
        external,
        virt,
        addr,
    })
}

/// The undefined address of a file with `os`-byte offsets (all bits set).
fn undefined_address(os: u8) -> u64 {
    if os >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * u32::from(os))) - 1
    }
}

/// Committed datatypes netCDF shows as user types.
fn is_user_class(dt: &Datatype) -> bool {
    matches!(
        dt,
        Datatype::Enum { .. }
            | Datatype::Opaque { .. }
            | Datatype::Compound { .. }
            | Datatype::VarLen {
                kind: VarLenKind::Sequence,
                ..
            }
    )
}

/// The HDF5 class of a datatype, for messages.
fn type_class(dt: &Datatype) -> String {
    match dt {
        Datatype::FixedPoint { size, .. } => format!("{size}-byte integer"),
        Datatype::FloatingPoint { size, .. } => format!("{size}-byte float"),
        Datatype::Bitfield { size, .. } => format!("{size}-byte bitfield"),
        Datatype::Reference { .. } => "reference".to_string(),
        Datatype::Array { .. } => "array".to_string(),
        Datatype::Enum { .. } => "enum of a base type netCDF lacks".to_string(),
        Datatype::Compound { .. } => "compound with members netCDF cannot type".to_string(),
        Datatype::VarLen { .. } => "variable-length of a base type netCDF lacks".to_string(),
        Datatype::Opaque { .. } => "opaque".to_string(),
        Datatype::String { .. } => "string".to_string(),
        #[allow(unreachable_patterns)]
        _ => "unknown class".to_string(),
    }
}

/// `/g/name` of an object named `name` in group `g`.
fn dataset_path(ds: &Dataset, g: GroupId, name: &str) -> String {
    let gp = ds.group_path(g);
    if gp == "/" {
        format!("/{name}")
    } else {
        format!("{gp}/{name}")
    }
}

enum Kind {
    Dataset,
    Type(Datatype),
    Group,
}

fn classify(hdr: &ObjectHeader) -> Kind {
    let mut space = false;
    let mut dt = None;
    for m in &hdr.messages {
        match m {
            HdfMessage::Dataspace(_) => space = true,
            HdfMessage::Datatype(t) => dt = Some(t.datatype.clone()),
            _ => {}
        }
    }
    match (space, dt) {
        (true, Some(_)) => Kind::Dataset,
        (false, Some(t)) => Kind::Type(t),
        _ => Kind::Group,
    }
}

/// Groups children-first (post-order), children in link order.
fn post_order(ds: &Dataset) -> Vec<GroupId> {
    fn rec(ds: &Dataset, g: GroupId, out: &mut Vec<GroupId>) {
        for &c in &ds.groups[g.0].groups {
            rec(ds, c, out);
        }
        out.push(g);
    }
    let mut out = Vec::new();
    rec(ds, GroupId(0), &mut out);
    out
}

/// The first object address referenced for each dimension by a `DIMENSION_LIST` attribute.
fn dimension_list(
    h5: &H5,
    a: &AttributeMessage,
    rank: usize,
    what: &str,
) -> Result<Vec<Option<u64>>, Hdf5Error> {
    let rs = h5.vlen_ref_size();
    let os = usize::from(h5.os);
    let mut out = Vec::with_capacity(rank);
    for k in 0..rank {
        let Some(r) = a.raw_data.get(k * rs..(k + 1) * rs) else {
            out.push(None);
            continue;
        };
        let (count, bytes) = h5.vlen_bytes(r, os, what)?;
        out.push((count > 0).then(|| {
            let mut b = [0u8; 8];
            b[..os].copy_from_slice(&bytes[..os]);
            u64::from_le_bytes(b)
        }));
    }
    Ok(out)
}

/// Warn for each member of user type `name` (HDF5 datatype `dt`) that netCDF cannot type
/// and the type leaves out (h5py's bool or complex members, an uncommitted nested compound).
fn members_left_out(dt: &Datatype, table: &TypeTable, name: &str, warnings: &mut Vec<String>) {
    let mut dropped = Vec::new();
    crate::convert::typed_part(dt, table, &mut dropped);
    for (member, mdt) in dropped {
        warnings.push(format!(
            "type \"{name}\": member \"{member}\" left out: netCDF has no type for its HDF5 \
             datatype ({}); its values are not read",
            why_untyped(&mdt, "members")
        ));
    }
}

/// Why netCDF cannot type `dt` where `what` (attributes, members) of it are met.
fn why_untyped(dt: &Datatype, what: &str) -> String {
    match dt {
        Datatype::Reference { .. } => "a reference".to_string(),
        Datatype::Enum { .. }
        | Datatype::Compound { .. }
        | Datatype::Opaque { .. }
        | Datatype::VarLen { .. } => format!(
            "an uncommitted {}: netCDF types {what} of user types only by a type committed in \
             the file",
            type_class(dt).split(' ').next().unwrap_or("type")
        ),
        other => type_class(other),
    }
}

/// An integer of a width netCDF has no type for (PyTables' 128-bit ones, 3-byte ones) as
/// netCDF-C types it: the native integer HDF5 converts it to (`convert::widened_integer`).
fn widened(dt: &Datatype) -> Option<NcType> {
    match dt {
        Datatype::FixedPoint { size, signed, .. } => {
            crate::convert::widened_integer(*size, *signed).map(NcType::Atomic)
        }
        _ => None,
    }
}

fn user_kind(dt: &Datatype, table: &TypeTable) -> Option<UserTypeKind> {
    Some(match dt {
        Datatype::Enum { base, members } => {
            let b = atomic(base, false)?;
            let (size, signed, order) = match base.as_ref() {
                Datatype::FixedPoint {
                    size,
                    signed,
                    byte_order,
                } => (usize::from(*size), *signed, *byte_order),
                _ => return None,
            };
            let members = members
                .iter()
                .map(|m| EnumMember {
                    name: m.name.clone(),
                    value: int_value(&m.value, size, signed, order),
                })
                .collect();
            UserTypeKind::Enum { base: b, members }
        }
        Datatype::Opaque { size, .. } => UserTypeKind::Opaque {
            size: *size as usize,
        },
        // a vlen of fixed-length strings (h5py `vlen_dtype('S3')`) is a vlen of strings, as
        // its elements read (`convert::Decoder`); one-byte strings stay char
        Datatype::VarLen { base, .. } => UserTypeKind::Vlen {
            base: table.nc_type(base, true)?,
        },
        Datatype::Compound { size, fields } => {
            // netCDF's layout: a string field is a C pointer (8 bytes) where HDF5 stores a
            // 16-byte heap reference, and the later fields sit lower by the difference
            let mut order: Vec<usize> = (0..fields.len()).collect();
            order.sort_by_key(|&i| fields[i].byte_offset);
            let mut nc_offset = vec![0u64; fields.len()];
            let mut shrunk = 0u64;
            for i in order {
                let f = &fields[i];
                nc_offset[i] = u64::from(f.byte_offset).saturating_sub(shrunk);
                shrunk += heap_growth(&f.datatype, 0);
            }
            UserTypeKind::Compound {
                size: (u64::from(*size).saturating_sub(shrunk)) as usize,
                fields: fields
                    .iter()
                    .zip(nc_offset)
                    .filter_map(|(f, offset)| {
                        let (base, mut dims): (&Datatype, Vec<usize>) = match &f.datatype {
                            Datatype::Array { base, dims } => {
                                (base.as_ref(), dims.iter().map(|&d| d as usize).collect())
                            }
                            other => (other, Vec::new()),
                        };
                        // a fixed-length string field (h5py's `S4`) is a char array of its
                        // length, every byte kept (netCDF-C 4.9.0 keeps only the first)
                        if let Datatype::String {
                            size: StringSize::Fixed(w),
                            ..
                        } = base
                        {
                            if *w > 1 {
                                dims.push(*w as usize);
                            }
                        }
                        Some(CompoundField {
                            name: f.name.clone(),
                            ty: table.nc_type(base, false)?,
                            dims,
                            offset: offset as usize,
                        })
                    })
                    .collect(),
            }
        }
        _ => return None,
    })
}

/// How much bigger a stored value of `dt` is than netCDF's in-memory one: 8 bytes per
/// variable-length string (a 16-byte heap reference for an 8-byte pointer).
fn heap_growth(dt: &Datatype, depth: usize) -> u64 {
    if depth > 32 {
        return 0;
    }
    match dt {
        Datatype::String {
            size: StringSize::Variable,
            ..
        }
        | Datatype::VarLen {
            kind: VarLenKind::String,
            ..
        } => 8,
        Datatype::Compound { fields, .. } => fields
            .iter()
            .map(|f| heap_growth(&f.datatype, depth + 1))
            .sum(),
        Datatype::Array { base, dims } => dims
            .iter()
            .copied()
            .product::<u64>()
            .saturating_mul(heap_growth(base, depth + 1)),
        _ => 0,
    }
}

fn int_value(bytes: &[u8], size: usize, signed: bool, order: ByteOrder) -> i128 {
    let mut b = bytes.get(..size).unwrap_or(&[]).to_vec();
    if order == ByteOrder::BigEndian {
        b.reverse();
    }
    let mut v: u128 = 0;
    for (i, &x) in b.iter().enumerate().take(16) {
        v |= u128::from(x) << (8 * i);
    }
    if signed && size > 0 && size < 16 && (v >> (8 * size - 1)) & 1 == 1 {
        (v as i128) - (1i128 << (8 * size))
    } else {
        v as i128
    }
}

fn convert_atts(
    h5: &H5,
    table: &TypeTable,
    raw: &[AttributeMessage],
    hidden: &[&str],
    what: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<Attribute>, Hdf5Error> {
    let mut out = Vec::with_capacity(raw.len());
    for a in raw {
        if hidden.contains(&a.name.as_str()) {
            continue;
        }
        // attributes of types netCDF cannot name (references, uncommitted compounds and enums
        // such as h5py's bool) are left out, as netCDF-C leaves them out, and said
        let Some(ty) = table
            .nc_type(&a.datatype, false)
            .or_else(|| widened(&a.datatype))
        else {
            let why = why_untyped(&a.datatype, "attributes");
            warnings.push(format!(
                "{what}: attribute \"{}\" left out: netCDF has no type for its HDF5 datatype \
                 ({why})",
                a.name
            ));
            continue;
        };
        let n = match a.dataspace.dataspace_type {
            DataspaceType::Null => 0,
            _ => usize::try_from(a.dataspace.num_elements().unwrap_or(0)).unwrap_or(0),
        };
        // fixed-length strings in an array (a simple dataspace, even of one element) are a
        // string attribute, as netCDF-C 4.9.0 reads them; a scalar one is char text (which is
        // how netCDF-C writes char attributes)
        let fixed_strings = n >= 1
            && matches!(a.dataspace.dataspace_type, DataspaceType::Simple)
            && matches!(
                a.datatype,
                Datatype::String {
                    size: StringSize::Fixed(_),
                    ..
                }
            );
        let ty = if fixed_strings {
            NcType::Atomic(nc_dataset::AtomicType::String)
        } else {
            ty
        };
        let awhat = format!("{what}: attribute \"{}\"", a.name);
        let dec = Decoder { h5, what: &awhat };
        // without the compound members its type leaves out (named where the type is made)
        let dt = crate::convert::typed_part(&a.datatype, table, &mut Vec::new());
        let values = match dec.decode(&dt, &a.raw_data, n, fixed_strings)? {
            // one-byte strings come back as char text (how a netCDF char dataset is stored):
            // here each is a string of its own
            Values::Char(bytes) if fixed_strings => Values::String(
                bytes
                    .chunks(1)
                    .map(|b| Some(crate::convert::fixed_string(b)))
                    .collect(),
            ),
            v => v,
        };
        out.push(Attribute {
            name: a.name.clone(),
            ty,
            values,
        });
    }
    Ok(out)
}

fn var_info(d: &RawDataset) -> Option<VarInfo> {
    info_of(&d.h5, &d.st, d.virt.clone())
}

/// What the data reader needs about a dataset stored as `st` in `h5`; `None` when its
/// storage cannot be read (no layout, a datatype of unknown size).
fn info_of(h5: &Arc<H5>, st: &Stored, virt: Option<Arc<vds::Virtual>>) -> Option<VarInfo> {
    let shape = space_dims(&st.space);
    let layout = match st.layout.clone()? {
        DataLayout::Chunked {
            address,
            mut dims,
            element_size,
            chunk_indexing,
        } => {
            // layout versions 1-3 (and 4) carry the element size as an extra last dimension
            if dims.len() == shape.len() + 1 {
                dims.pop();
            }
            DataLayout::Chunked {
                address,
                dims,
                element_size,
                chunk_indexing,
            }
        }
        other => other,
    };
    let elem_size = stored_size(&st.dt, h5)?;
    let fill = st.fill.as_ref().and_then(|f| {
        f.value
            .clone()
            .filter(|v| f.defined && v.len() == elem_size)
    });
    Some(VarInfo {
        file: h5.clone(),
        virt,
        dt: st.dt.clone(),
        layout,
        shape,
        max_dims: st.space.max_dims.clone(),
        filters: st.filters.clone(),
        fill,
        elem_size,
        external: st.external.clone(),
        nbit_bits: nbit_int_bits(&st.dt, &st.filters),
        int_header: matches!(st.dt, Datatype::FixedPoint { .. }).then_some(st.addr),
        dt_bits: std::sync::OnceLock::new(),
    })
}

/// Precision and offset of an integer dataset packed by the nbit filter (5), whose parameters
/// (HDF5 `set_local`) are: count, no-op flag, elements, class 1 (atomic), size, order,
/// precision, offset. `None` when every bit counts.
fn nbit_int_bits(dt: &Datatype, filters: &[FilterSpec]) -> Option<(u32, u32)> {
    let Datatype::FixedPoint { size, .. } = dt else {
        return None;
    };
    let f = filters.iter().find(|f| f.id == 5)?;
    match f.params.as_slice() {
        [_, _, _, 1, s, _, precision, offset, ..]
            if *s == u32::from(*size)
                && *precision > 0
                && precision.checked_add(*offset).is_some_and(|e| e <= s * 8)
                && (*precision < s * 8 || *offset > 0) =>
        {
            Some((*precision, *offset))
        }
        _ => None,
    }
}

/// The parameters netCDF-C reports for a stored filter. szip's are rewritten by HDF5's
/// `set_local` (flags added to the options mask, scanline values appended); netCDF-C shows the
/// user's two: the coding method bits (EC = 4, NN = 32) and the pixels per block.
fn netcdf_params(id: u32, stored: &[u32]) -> Vec<u32> {
    match (id, stored) {
        (4, [mask, ppb, ..]) => vec![mask & (4 | 32), *ppb],
        _ => stored.to_vec(),
    }
}

/// The HDF5 fill value property of a variable with no `_FillValue` attribute (h5py's
/// `fillvalue=`), when it is not netCDF's default fill: its unwritten elements read as it,
/// so a copy keeps it as the output's stored fill (`Dataset::stored_fill`) and leaves them
/// unwritten too. Not shown, as netCDF-C shows no attribute for it. Atomic types other than
/// strings only; not for integers with unused bits (their fill is unpacked when read).
fn property_fill(ds: &Dataset, v: VarId, info: Option<&VarInfo>) -> Option<Values> {
    let info = info.filter(|i| i.virt.is_none())?;
    let var = ds.var(v);
    let a = match var.ty {
        NcType::Atomic(a) if a != nc_dataset::AtomicType::String => a,
        _ => return None,
    };
    if var.att("_FillValue").is_some() {
        return None;
    }
    let mut le = info.fill.clone()?;
    if le.len() != a.size() {
        return None;
    }
    if var.storage.endianness == Some(Endianness::Big) {
        le.reverse();
    }
    let default = crate::write::types::atomic_bytes(&nc_dataset::default_fill(a), false)?;
    if le == default || info.int_bits().is_some() {
        return None;
    }
    Values::from_le_bytes(a, &le)
}

fn storage_of(d: &RawDataset, info: &Option<VarInfo>) -> Storage {
    let mut s = Storage::default();
    // a virtual dataset: ncdump -s says "virtual" as netCDF-C means it to (4.9.0 and 4.10
    // print "unknown": their HDF5 layer tests `#ifdef H5D_VIRTUAL`, an enum value, not a macro)
    if info.as_ref().is_some_and(|i| i.virt.is_some()) {
        s.layout = Some(Layout::Virtual);
    }
    if let Some(info) = info.as_ref().filter(|i| i.virt.is_none()) {
        match &info.layout {
            DataLayout::Compact { .. } => s.layout = Some(Layout::Compact),
            DataLayout::Contiguous { .. } => s.layout = Some(Layout::Contiguous),
            DataLayout::Chunked { dims, .. } => {
                s.layout = Some(Layout::Chunked);
                s.chunk_sizes = Some(dims.iter().map(|&c| u64::from(c)).collect());
            }
        }
    }
    s.filters =
        d.st.filters
            .iter()
            .map(|f| FilterSpec {
                id: f.id,
                params: netcdf_params(f.id, &f.params),
            })
            .collect();
    s.endianness = byte_order(&d.st.dt).map(|o| match o {
        ByteOrder::LittleEndian => Endianness::Little,
        ByteOrder::BigEndian => Endianness::Big,
    });
    // netCDF-C reports no fill when no user fill value is defined (H5Pfill_value_defined):
    // its NOFILL variables have fill time "never" and no value; a value with fill time
    // "never" (what we write for variables written whole) is a fill value
    let no_fill =
        d.st.fill
            .as_ref()
            .is_none_or(|f| !f.defined || f.value.is_none());
    if no_fill {
        s.no_fill = Some(true);
    }
    s
}
