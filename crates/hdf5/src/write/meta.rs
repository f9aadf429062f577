//! The metadata of a netCDF-4 file as HDF5 objects: groups, committed types, dimension
//! scales and variables, each an object header with its messages, attributes compact or
//! dense, links compact or dense, dimension lists and reference lists, and the global heap
//! objects they hold.
//!
//! Everything here is encoded twice by the same code: once with every address 0, to
//! measure (object header sizes, dense storage sizes, heap collections: no size depends on
//! an address's value), and once, after the data is written, with the real addresses, to
//! write each structure once in the region reserved for it.

use std::collections::HashMap;

use nc_dataset::{
    AtomicType, Attribute, Dataset, DimId, GroupId, Layout, NcType, TypeId, Values, VarId, ROOT,
};

use super::heap::MetaHeap;
use super::types::{atomic_bytes, atomic_datatype};
use super::user::{self, HeapSink};
use super::{VarPlan, Writer, DIM_WITHOUT_VAR, NC_PROPERTIES};
use crate::format::datatype::{Datatype, Member};
use crate::format::dense::{self, LaidDense, MAX_COMPACT};
use crate::format::message::{self, Allocation, DenseAddrs, PipelineFilter};
use crate::format::object_header::{flag, kind, Message, ObjectHeader, MAX_MESSAGE};
use crate::format::UNDEF;
use crate::Hdf5Error;

/// The attribute marking a dimension scale, and its value.
const CLASS: &str = "CLASS";
const DIMENSION_SCALE: &str = "DIMENSION_SCALE";
const NAME: &str = "NAME";
pub(super) const DIMENSION_LIST: &str = "DIMENSION_LIST";
pub(super) const REFERENCE_LIST: &str = "REFERENCE_LIST";

/// One HDF5 object of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Obj {
    Group(GroupId),
    Type(TypeId),
    /// The scale of a dimension without a coordinate variable.
    Scale(DimId),
    Var(VarId),
}

/// Every object, in the order they are laid out (a group, then its types, dimension scales,
/// variables and subgroups, as netCDF-C creates them), and how they refer to each other.
pub(super) struct Objects {
    pub list: Vec<Obj>,
    /// Each group object's links: name and object index, in creation order.
    links: HashMap<usize, Vec<(String, usize)>>,
    /// The object holding each dimension's scale (its coordinate variable or its own).
    scale_of: HashMap<DimId, usize>,
    /// Each scale object's references: (variable object, dimension index), in order.
    refs: HashMap<usize, Vec<(usize, u32)>>,
    /// Each variable's object.
    pub var_obj: HashMap<VarId, usize>,
}

impl Objects {
    pub fn collect(w: &Writer) -> Objects {
        let mut o = Objects {
            list: Vec::new(),
            links: HashMap::new(),
            scale_of: HashMap::new(),
            refs: HashMap::new(),
            var_obj: HashMap::new(),
        };
        o.group(w, ROOT);
        for (k, obj) in o.list.iter().enumerate() {
            if let Obj::Var(v) = *obj {
                if w.is_coord(v) {
                    o.scale_of.insert(w.ds.var(v).dims[0], k);
                }
            }
        }
        let mut refs: HashMap<usize, Vec<(usize, u32)>> = HashMap::new();
        for (k, obj) in o.list.iter().enumerate() {
            let Obj::Var(v) = *obj else { continue };
            if w.is_coord(v) {
                continue;
            }
            for (i, d) in w.ds.var(v).dims.iter().enumerate() {
                if let Some(&s) = o.scale_of.get(d) {
                    refs.entry(s).or_default().push((k, i as u32));
                }
            }
        }
        o.refs = refs;
        o
    }

    fn push(&mut self, obj: Obj) -> usize {
        self.list.push(obj);
        self.list.len() - 1
    }

    fn group(&mut self, w: &Writer, g: GroupId) {
        let ds = w.ds;
        let grp = ds.group(g);
        let me = self.push(Obj::Group(g));
        let mut links = Vec::new();
        for &t in &grp.types {
            links.push((ds.user_type(t).name.clone(), self.push(Obj::Type(t))));
        }
        for &d in &grp.dims {
            if w.coord_var(d).is_none() {
                let k = self.push(Obj::Scale(d));
                self.scale_of.insert(d, k);
                links.push((ds.dim(d).name.clone(), k));
            }
        }
        for &v in &grp.vars {
            let k = self.push(Obj::Var(v));
            self.var_obj.insert(v, k);
            links.push((w.dataset_name(v), k));
        }
        for &c in &grp.groups {
            let k = self.list.len();
            links.push((ds.group(c).name.clone(), k));
            self.group(w, c);
        }
        self.links.insert(me, links);
    }
}

/// The addresses of everything the metadata points to (all 0 while measuring).
pub(super) struct Addrs {
    pub header: Vec<u64>,
    pub dense_links: Vec<u64>,
    pub dense_attrs: Vec<u64>,
    /// Each variable's data: contiguous storage or chunk index ([`UNDEF`] when none).
    pub data: HashMap<VarId, u64>,
}

impl Addrs {
    pub fn zero(n: usize) -> Addrs {
        Addrs {
            header: vec![0; n],
            dense_links: vec![0; n],
            dense_attrs: vec![0; n],
            data: HashMap::new(),
        }
    }
}

/// One object's metadata: its header and its dense storage.
pub(super) struct Parts {
    pub header: ObjectHeader,
    pub links: Option<LaidDense>,
    pub attrs: Option<LaidDense>,
}

/// A named attribute message.
type Named = (String, Vec<u8>);

/// The object `k`'s header and dense storage, addresses from `at`.
pub(super) fn parts(
    w: &Writer,
    objs: &Objects,
    k: usize,
    at: &Addrs,
    heap: &mut MetaHeap,
) -> Result<Parts, Hdf5Error> {
    let ds = w.ds;
    let mut header = ObjectHeader {
        track_attr_order: true,
        messages: Vec::new(),
    };
    let atts = match objs.list[k] {
        Obj::Type(t) => {
            let dt = user::datatype(ds, NcType::User(t), false)?;
            header.track_attr_order = false;
            header.messages.push(Message::new(
                kind::DATATYPE,
                flag::CONSTANT | flag::NOT_SHARED,
                dt.encoded(),
            ));
            return Ok(Parts {
                header,
                links: None,
                attrs: None,
            });
        }
        Obj::Group(g) => {
            let links: Vec<(&str, Vec<u8>)> = objs
                .links
                .get(&k)
                .map(|l| {
                    l.iter()
                        .enumerate()
                        .map(|(i, (name, child))| {
                            (
                                name.as_str(),
                                message::hard_link(name, i as u64, at.header[*child]),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let atts = group_attributes(w, g, heap)?;
            let dense_links = if links.len() > MAX_COMPACT {
                let laid = dense::lay_out(dense::Kind::Links, &links, at.dense_links[k]);
                header.messages.push(Message::new(
                    kind::LINK_INFO,
                    0,
                    message::link_info(links.len(), laid.addrs),
                ));
                Some(laid)
            } else {
                header.messages.push(Message::new(
                    kind::LINK_INFO,
                    0,
                    message::link_info(links.len(), DenseAddrs::COMPACT),
                ));
                None
            };
            header.messages.push(Message::new(
                kind::GROUP_INFO,
                flag::CONSTANT,
                message::group_info(),
            ));
            let attrs = attribute_messages(&mut header, &atts, at.dense_attrs[k]);
            if dense_links.is_none() {
                for (_, m) in links {
                    header.messages.push(Message::new(kind::LINK, 0, m));
                }
            }
            push_compact(&mut header, &atts, attrs.is_none());
            return Ok(Parts {
                header,
                links: dense_links,
                attrs,
            });
        }
        Obj::Scale(d) => {
            let dim = ds.dim(d);
            let len = if dim.unlimited { 0 } else { dim.len };
            let max = if dim.unlimited { None } else { Some(dim.len) };
            let dt = atomic_datatype(AtomicType::Float, true);
            header.messages.push(Message::new(
                kind::DATASPACE,
                0,
                message::dataspace(Some((&[len], &[max]))),
            ));
            header
                .messages
                .push(Message::new(kind::DATATYPE, flag::CONSTANT, dt.encoded()));
            let (alloc, layout) = if dim.unlimited {
                (
                    Allocation::Incremental,
                    message::layout(&message::Layout::Chunked {
                        btree: UNDEF,
                        chunk: &[1],
                        elem: 4,
                    }),
                )
            } else {
                (
                    Allocation::Late,
                    message::layout(&message::Layout::Contiguous {
                        addr: UNDEF,
                        size: dim.len * 4,
                    }),
                )
            };
            header.messages.push(Message::new(
                kind::FILL_VALUE,
                flag::CONSTANT,
                message::fill_value(alloc, false, None),
            ));
            header.messages.push(Message::new(kind::LAYOUT, 0, layout));
            let mut atts = scale_attributes(&format!("{DIM_WITHOUT_VAR}{:>10}", dim.len), d);
            if let Some(r) = objs.refs.get(&k) {
                atts.push(reference_list(r, at));
            }
            atts
        }
        Obj::Var(v) => {
            let plan = w.plans[v.0].as_ref().ok_or_else(|| {
                Hdf5Error::invalid(
                    format!("variable {}", ds.var(v).name),
                    "no storage plan (writer bug)",
                )
            })?;
            dataset_messages(w, v, plan, at, heap, &mut header)?;
            var_attributes(w, objs, k, v, at, heap)?
        }
    };
    let attrs = attribute_messages(&mut header, &atts, at.dense_attrs[k]);
    push_compact(&mut header, &atts, attrs.is_none());
    Ok(Parts {
        header,
        links: None,
        attrs,
    })
}

/// The Attribute Info message, and the dense storage when the attributes do not stay in the
/// header (more than [`MAX_COMPACT`], or one too long for a header message).
fn attribute_messages(
    header: &mut ObjectHeader,
    atts: &[Named],
    dense_at: u64,
) -> Option<LaidDense> {
    let dense = atts.len() > MAX_COMPACT || atts.iter().any(|(_, m)| m.len() > MAX_MESSAGE);
    let laid = if dense {
        let items: Vec<(&str, Vec<u8>)> =
            atts.iter().map(|(n, m)| (n.as_str(), m.clone())).collect();
        Some(dense::lay_out(dense::Kind::Attributes, &items, dense_at))
    } else {
        None
    };
    let addrs = laid.as_ref().map_or(DenseAddrs::COMPACT, |l| l.addrs);
    header.messages.push(Message::new(
        kind::ATTRIBUTE_INFO,
        flag::NOT_SHARED,
        message::attribute_info(atts.len(), addrs),
    ));
    laid
}

fn push_compact(header: &mut ObjectHeader, atts: &[Named], compact: bool) {
    if !compact {
        return;
    }
    for (i, (_, m)) in atts.iter().enumerate() {
        header.messages.push(Message {
            kind: kind::ATTRIBUTE,
            flags: 0,
            order: i as u16,
            body: m.clone(),
        });
    }
}

fn scalar_attr(name: &str, ty: &Datatype, data: &[u8]) -> Named {
    (
        name.to_string(),
        message::attribute(name, ty, &message::dataspace(None), data),
    )
}

fn i32_type() -> Datatype {
    atomic_datatype(AtomicType::Int, false)
}

/// `CLASS`, `NAME` and `_Netcdf4Dimid` of a dimension scale.
fn scale_attributes(name: &str, d: DimId) -> Vec<Named> {
    let text = |s: &str| {
        let mut b = s.as_bytes().to_vec();
        b.push(0);
        b
    };
    let class = text(DIMENSION_SCALE);
    let name_bytes = text(name);
    vec![
        scalar_attr(
            CLASS,
            &Datatype::FixedString {
                size: class.len() as u32,
            },
            &class,
        ),
        scalar_attr(
            NAME,
            &Datatype::FixedString {
                size: name_bytes.len() as u32,
            },
            &name_bytes,
        ),
        scalar_attr("_Netcdf4Dimid", &i32_type(), &(d.0 as i32).to_le_bytes()),
    ]
}

/// `REFERENCE_LIST`: the datasets that use a scale and the dimension they use it for.
fn reference_list(refs: &[(usize, u32)], at: &Addrs) -> Named {
    let ty = Datatype::Compound {
        size: 12,
        members: vec![
            Member {
                name: "dataset".into(),
                offset: 0,
                ty: Datatype::ObjectRef,
            },
            Member {
                name: "dimension".into(),
                offset: 8,
                ty: i32_type(),
            },
        ],
    };
    let mut data = Vec::with_capacity(refs.len() * 12);
    for &(obj, dim) in refs {
        data.extend_from_slice(&at.header[obj].to_le_bytes());
        data.extend_from_slice(&dim.to_le_bytes());
    }
    let space = message::fixed_dataspace(&[refs.len() as u64]);
    (
        REFERENCE_LIST.to_string(),
        message::attribute(REFERENCE_LIST, &ty, &space, &data),
    )
}

fn group_attributes(w: &Writer, g: GroupId, heap: &mut MetaHeap) -> Result<Vec<Named>, Hdf5Error> {
    let ds = w.ds;
    let mut out = Vec::new();
    if g == ROOT {
        let p = NC_PROPERTIES.as_bytes();
        out.push(scalar_attr(
            "_NCProperties",
            &Datatype::FixedString {
                size: p.len() as u32,
            },
            p,
        ));
        if w.opts.classic_model {
            out.push(scalar_attr("_nc3_strict", &i32_type(), &1i32.to_le_bytes()));
        }
    }
    let what = format!("group {}", ds.group_path(g));
    for a in &ds.group(g).atts {
        out.push((a.name.clone(), user_attribute(ds, a, heap, &what)?));
    }
    Ok(out)
}

fn var_attributes(
    w: &Writer,
    objs: &Objects,
    k: usize,
    v: VarId,
    at: &Addrs,
    heap: &mut MetaHeap,
) -> Result<Vec<Named>, Hdf5Error> {
    let ds = w.ds;
    let var = ds.var(v);
    let what = format!("variable {}", var.name);
    // in netCDF-C 4.9.0's order: the dimension ids, the scale attributes of a coordinate
    // variable, the user's attributes, then the scale links. (netCDF-C also gives a 1-D
    // variable that is not a coordinate its `_Netcdf4Coordinates`; we do not yet, as the
    // writer before us did not: the tests count attributes with h5py.)
    let mut out = Vec::new();
    let is_coord = w.is_coord(v);
    if var.dims.len() > 1 || is_coord {
        let ids: Vec<u8> = var
            .dims
            .iter()
            .flat_map(|d| (d.0 as i32).to_le_bytes())
            .collect();
        let space = message::fixed_dataspace(&[var.dims.len() as u64]);
        out.push((
            "_Netcdf4Coordinates".to_string(),
            message::attribute("_Netcdf4Coordinates", &i32_type(), &space, &ids),
        ));
    }
    if is_coord {
        out.extend(scale_attributes(&var.name, var.dims[0]));
    }
    for a in &var.atts {
        out.push((a.name.clone(), user_attribute(ds, a, heap, &what)?));
    }
    if !is_coord && var.dims.iter().any(|d| objs.scale_of.contains_key(d)) {
        // one sequence of one object reference per dimension, in the global heap
        let ty = Datatype::Vlen {
            base: Box::new(Datatype::ObjectRef),
        };
        let mut data = Vec::with_capacity(16 * var.dims.len());
        for d in &var.dims {
            match objs.scale_of.get(d) {
                Some(&s) => {
                    let (coll, index) = heap.store(&at.header[s].to_le_bytes())?;
                    data.extend_from_slice(&1u32.to_le_bytes());
                    data.extend_from_slice(&coll.to_le_bytes());
                    data.extend_from_slice(&index.to_le_bytes());
                }
                None => data.extend_from_slice(&[0; 16]),
            }
        }
        let space = message::fixed_dataspace(&[var.dims.len() as u64]);
        out.push((
            DIMENSION_LIST.to_string(),
            message::attribute(DIMENSION_LIST, &ty, &space, &data),
        ));
    }
    if is_coord {
        if let Some(r) = objs.refs.get(&k) {
            out.push(reference_list(r, at));
        }
    }
    Ok(out)
}

/// The attribute message of a netCDF attribute: text as a fixed-length string (scalar),
/// everything else an array of its values; strings and vlens in the global heap.
fn user_attribute(
    ds: &Dataset,
    a: &Attribute,
    heap: &mut dyn HeapSink,
    what: &str,
) -> Result<Vec<u8>, Hdf5Error> {
    let bad = || {
        Hdf5Error::invalid(
            format!("{what}: attribute {}", a.name),
            "the values do not fit the attribute's type",
        )
    };
    if let (NcType::Atomic(AtomicType::Char) | NcType::Atomic(_), Values::Char(x)) =
        (a.ty, &a.values)
    {
        let bytes = if x.is_empty() { vec![0] } else { x.clone() };
        let ty = Datatype::FixedString {
            size: bytes.len() as u32,
        };
        return Ok(message::attribute(
            &a.name,
            &ty,
            &message::dataspace(None),
            &bytes,
        ));
    }
    let (ty, data) = match a.ty {
        NcType::Atomic(AtomicType::String) | NcType::User(_) => (
            user::datatype(ds, a.ty, false)?,
            user::heap_value_bytes(ds, a.ty, &a.values, heap).map_err(|e| match e {
                Hdf5Error::Invalid { .. } => bad(),
                e => e,
            })?,
        ),
        NcType::Atomic(t) => (
            atomic_datatype(t, false),
            atomic_bytes(&a.values, false).ok_or_else(bad)?,
        ),
    };
    let space = message::fixed_dataspace(&[a.values.len() as u64]);
    Ok(message::attribute(&a.name, &ty, &space, &data))
}

/// Dataspace, datatype, fill value, layout and filter pipeline of variable `v`.
fn dataset_messages(
    w: &Writer,
    v: VarId,
    plan: &VarPlan,
    at: &Addrs,
    heap: &mut MetaHeap,
    header: &mut ObjectHeader,
) -> Result<(), Hdf5Error> {
    let ds = w.ds;
    let var = ds.var(v);
    let shape = w.stored_shape(v);
    let space = if var.dims.is_empty() {
        message::dataspace(None)
    } else {
        let max: Vec<Option<u64>> = var
            .dims
            .iter()
            .zip(&shape)
            .map(|(d, &n)| (!ds.dim(*d).unlimited).then_some(n))
            .collect();
        message::dataspace(Some((&shape, &max)))
    };
    header
        .messages
        .push(Message::new(kind::DATASPACE, 0, space));
    header.messages.push(Message::new(
        kind::DATATYPE,
        flag::CONSTANT,
        plan.datatype.encoded(),
    ));
    let alloc = match plan.layout {
        Layout::Compact => Allocation::Early,
        Layout::Chunked => Allocation::Incremental,
        Layout::Contiguous | Layout::Virtual => Allocation::Late,
    };
    let fill = if plan.no_fill {
        None
    } else {
        w.fill_bytes(v, plan, heap)?
    };
    header.messages.push(Message::new(
        kind::FILL_VALUE,
        flag::CONSTANT,
        message::fill_value(alloc, plan.no_fill, fill.as_deref()),
    ));
    let data = at.data.get(&v).copied().unwrap_or(UNDEF);
    let elem = plan.datatype.size();
    let layout = match plan.layout {
        Layout::Compact => {
            let bytes = w.compact_bytes(v, plan, fill.as_deref(), heap)?;
            if bytes.len() + 4 > MAX_MESSAGE {
                return Err(Hdf5Error::invalid(
                    format!("variable {}", var.name),
                    format!("compact data of {} bytes: compact storage holds at most 64 KiB; use contiguous or chunked storage", bytes.len()),
                ));
            }
            message::layout(&message::Layout::Compact(&bytes))
        }
        Layout::Chunked => {
            let chunk: Vec<u32> = plan.chunk.iter().map(|&c| c as u32).collect();
            message::layout(&message::Layout::Chunked {
                btree: data,
                chunk: &chunk,
                elem,
            })
        }
        Layout::Contiguous | Layout::Virtual => {
            let n: u64 = shape.iter().product();
            message::layout(&message::Layout::Contiguous {
                addr: data,
                size: n * u64::from(elem),
            })
        }
    };
    header.messages.push(Message::new(kind::LAYOUT, 0, layout));
    if !plan.chain.is_empty() {
        let mut filters = Vec::with_capacity(plan.chain.len());
        for f in &plan.chain {
            let id = u16::try_from(f.id).map_err(|_| {
                Hdf5Error::invalid(
                    format!("variable {}", var.name),
                    format!("filter id {} does not fit HDF5's 16-bit filter ids", f.id),
                )
            })?;
            // H5Pset_deflate / H5Pset_shuffle / H5Pset_szip (which netCDF-C calls) mark the
            // filter optional; fletcher32 and plugin filters (H5Pset_filter) are mandatory
            filters.push(PipelineFilter {
                id,
                optional: matches!(f.id, 1 | 2 | 4),
                // the name libhdf5 (or the plugin) writes; none for an id we do not know
                name: nc_filters::known(f.id).map_or("", |k| k.hdf5_name),
                params: &f.params,
            });
        }
        header.messages.push(Message::new(
            kind::FILTER_PIPELINE,
            flag::CONSTANT,
            message::filter_pipeline(&filters),
        ));
    }
    Ok(())
}
