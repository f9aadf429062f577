//! Writing a dataset as an NCZarr (or pure Zarr) store.
//!
//! The default layout is the one netCDF-C 4.10 writes and reads (netCDF4-python bundles it):
//! the NCZarr keys inside `.zattrs`, unlimited dimensions marked, char as `>S1`.
//! [`NczarrLayout::NetcdfC490`] writes what netCDF-C 4.9.0 reads (upper-case
//! `_NCZARR_SUPERBLOCK` / `_NCZARR_GROUP` / `_NCZARR_ARRAY` / `_NCZARR_ATTR` keys in the Zarr
//! objects, char data as `<U1` with one byte per element); [`NczarrLayout::Documented`] what
//! the NCZarr documentation describes (lower-case keys, `>S1`). Neither netCDF-C reads the
//! other's layout right (attribute types live under a key the other shows as an attribute).
//! Pure Zarr (`mode=zarr`) has no NCZarr keys and stores char as `|S1`.
//!
//! Choices (netCDF-C differs where noted):
//! - Strings are fixed-length `|Sn`, n = `_nczarr_maxstrlen` of the variable, else the root
//!   group's `_nczarr_default_maxstrlen`, else 128. A longer string is an error naming the
//!   variable, element and the attribute to raise (netCDF-C truncates silently).
//! - Unlimited dimensions keep their flag in the 4.10 layout; in the 4.9 layout they are
//!   written as fixed ones of their current length (netCDF-C 4.9.0 has no unlimited ones),
//!   and chunks no longer than the array (4.9.0 refuses longer ones).
//! - Scalar and string variables are written unfiltered (as netCDF-C does).
//! - Chunks equal to the fill value everywhere are not written (they read back as fill),
//!   unless the variable has no fill value (`_NoFill`, `fill_value: null`).

use crate::attrs;
use crate::convert;
use crate::dtype::{numeric_dtype, Dtype, Endian, Kind};
use crate::error::ZarrError;
use crate::json::float_value;
use crate::modes::ZarrModes;
use crate::store::Store;
use nc_dataset::Slab;
use nc_dataset::{
    default_fill, AtomicType, DataSource, Dataset, Endianness, FilterSpec, GroupId, Layout,
    NcString, NcType, Values, VarId, ROOT,
};
use nc_filters::codec_json::ZarrCodec;
use nc_filters::{FilterContext, Pipeline, Registry};
use rayon::prelude::*;
use serde_json::{json, Map, Value};

/// HDF5 filter id of szip (no numcodecs codec).
const SZIP_ID: u32 = 4;

/// Which NCZarr metadata spelling to write. No one layout is read right by both netCDF-C
/// 4.9.0 and 4.10 (`docs/compat.md`, "NCZarr / Zarr"): the default is 4.10's, the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NczarrLayout {
    /// What netCDF-C 4.9.0 writes and reads: upper-case keys, char as `<U1`. 4.9.0 has no
    /// unlimited or 0-length dimensions, no strings and cannot read scalars' data: unlimited
    /// dimensions are written fixed, string attributes as char text, scalars as 0-d arrays.
    NetcdfC490,
    /// What the NCZarr documentation describes: lower-case keys, char as `>S1`
    /// (netCDF-C 4.9.0 cannot read it).
    Documented,
    /// What netCDF-C 4.10 writes and reads (netCDF4-python's bundled library), the default:
    /// the NCZarr keys inside `.zattrs`, `dimensions` (an unlimited one as
    /// `{"size": n, "unlimited": 1}`), `arrays`, `dimension_references`, scalars as
    /// `"scalar": 1` with `_ARRAY_DIMENSIONS: ["_scalar_"]`, char as `>S1`.
    #[default]
    NetcdfC410,
}

/// Options of [`write_store`].
#[derive(Debug, Clone)]
pub struct ZarrWriteOptions {
    /// NCZarr metadata spelling.
    pub layout: NczarrLayout,
    /// Chunk key separator: `.` (default) or `/` (netCDF-C's `ZARR.DIMENSION_SEPARATOR`).
    pub dimension_separator: char,
    /// `_NCProperties` of the root group (`None`: not written).
    pub nc_properties: Option<String>,
    /// Default maximum string length (netCDF-C: 128).
    pub default_maxstrlen: usize,
    /// The filter registry; `None`: built-in codecs plus `HDF5_PLUGIN_PATH` plugins.
    pub registry: Option<std::sync::Arc<Registry>>,
    /// Write Zarr version 3 (`zarr.json`; the `v3` mode word), pure Zarr with
    /// `dimension_names`; `_ShardSizes` shards a variable.
    pub v3: bool,
    /// Which chunks (shards, when sharded) are read, encoded and stored: all of them, none
    /// (metadata only), or one part's share (fan-out, see [`crate::fanout`]).
    pub chunks: ChunkScope,
}

/// Which units of data a write stores. A unit is one chunk, or one shard of a sharded Zarr
/// v3 array; units are numbered in the order the writer meets them — variables in group
/// order (a group's variables, then its subgroups, depth first), each variable's units in C
/// order — so the numbering depends only on the output's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChunkScope {
    /// Every unit (a whole copy).
    #[default]
    All,
    /// No unit: metadata only.
    Nothing,
    /// Units `u` with `u % count == index` (round robin: each part gets every `count`-th
    /// unit of every variable, so parts are within one unit of each other per variable).
    Part {
        /// This part, `0..count`.
        index: u64,
        /// How many parts.
        count: u64,
    },
}

impl ChunkScope {
    /// True when unit `unit` (global numbering, see [`ChunkScope`]) is written.
    pub fn takes(&self, unit: u64) -> bool {
        match *self {
            ChunkScope::All => true,
            ChunkScope::Nothing => false,
            ChunkScope::Part { index, count } => count > 0 && unit % count == index,
        }
    }
}

impl Default for ZarrWriteOptions {
    fn default() -> Self {
        ZarrWriteOptions {
            layout: NczarrLayout::default(),
            dimension_separator: '.',
            // our own identity, in netCDF-C's key=value form (it never names netCDF-C)
            nc_properties: Some(format!(
                "version=2,ncgen-rs={},nczarr=2.0.0",
                env!("CARGO_PKG_VERSION")
            )),
            default_maxstrlen: 128,
            registry: None,
            v3: false,
            chunks: ChunkScope::All,
        }
    }
}

/// Default chunking target for variables without `_ChunkSizes` that are larger than
/// [`WHOLE_LIMIT`] bytes.
const CHUNK_TARGET: u64 = 4 << 20;
const WHOLE_LIMIT: u64 = 64 << 20;

struct Ctx<'a> {
    ds: &'a Dataset,
    src: &'a dyn DataSource,
    store: &'a dyn Store,
    opts: &'a ZarrWriteOptions,
    pure: bool,
    xarray: bool,
    registry: std::sync::Arc<Registry>,
    /// The number of the next variable's first unit (see [`ChunkScope`]).
    next_unit: std::sync::atomic::AtomicU64,
    /// Pure Zarr: every metadata object written, by key, for the consolidated metadata.
    meta: std::sync::Mutex<std::collections::BTreeMap<String, Value>>,
}

/// How metadata is spelled: pure Zarr or NCZarr, and which NCZarr layout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetaStyle {
    /// Pure Zarr (no NCZarr keys, char as `|S1`).
    pub pure: bool,
    /// NCZarr metadata spelling.
    pub layout: NczarrLayout,
}

impl MetaStyle {
    fn key(&self, lower: &str) -> String {
        match self.layout {
            NczarrLayout::NetcdfC490 => lower.to_ascii_uppercase(),
            NczarrLayout::Documented | NczarrLayout::NetcdfC410 => lower.to_string(),
        }
    }

    fn char_dtype(&self) -> &'static str {
        if self.pure {
            "|S1"
        } else {
            match self.layout {
                NczarrLayout::NetcdfC490 => "<U1",
                NczarrLayout::Documented | NczarrLayout::NetcdfC410 => ">S1",
            }
        }
    }

    /// 4.10: the NCZarr keys live in `.zattrs`.
    fn in_zattrs(&self) -> bool {
        self.layout == NczarrLayout::NetcdfC410
    }
}

impl Ctx<'_> {
    fn style(&self) -> MetaStyle {
        MetaStyle {
            pure: self.pure,
            layout: self.opts.layout,
        }
    }

    fn key(&self, lower: &str) -> String {
        self.style().key(lower)
    }

    fn char_dtype(&self) -> &'static str {
        self.style().char_dtype()
    }

    /// 4.10: the NCZarr keys live in `.zattrs`.
    fn in_zattrs(&self) -> bool {
        self.style().in_zattrs()
    }

    fn put_json(&self, key: &str, v: &Value) -> Result<(), ZarrError> {
        if self.pure {
            self.meta
                .lock()
                .map_err(|_| ZarrError::meta(key, "metadata list lock poisoned"))?
                .insert(key.to_string(), v.clone());
        }
        Ok(self.store.put(key, crate::json::to_text(v).as_bytes())?)
    }

    /// Pure Zarr: write the consolidated metadata, after every other metadata object (v2:
    /// `.zmetadata`; v3: the root `zarr.json` again, now holding every node below it).
    /// NCZarr output has none (netCDF-C writes none; it stays as netCDF-C writes it).
    fn consolidate(&self) -> Result<(), ZarrError> {
        if !self.pure {
            return Ok(());
        }
        let meta = std::mem::take(
            &mut *self
                .meta
                .lock()
                .map_err(|_| ZarrError::meta("", "metadata list lock poisoned"))?,
        );
        if self.opts.v3 {
            let Some(root) = meta.get("zarr.json") else {
                return Ok(());
            };
            let nodes = meta
                .iter()
                .filter_map(|(k, v)| Some((k.strip_suffix("/zarr.json")?.to_string(), v.clone())))
                .collect();
            let text = crate::json::to_text(&crate::consolidated::v3_root(root, &nodes));
            return Ok(self.store.put("zarr.json", text.as_bytes())?);
        }
        let mut c = crate::consolidated::ConsolidatedV2::new();
        for (k, v) in &meta {
            if crate::consolidated::is_v2_metadata(k) {
                c.add(k, &crate::json::to_text(v))?;
            }
        }
        Ok(self
            .store
            .put(crate::consolidated::V2_KEY, c.finish().as_bytes())?)
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

fn var_path(ds: &Dataset, v: VarId) -> String {
    let var = ds.var(v);
    format!(
        "{}/{}",
        ds.group_path(var.group).trim_end_matches('/'),
        var.name
    )
}

/// Write `ds` (data from `src`) as a store (NCZarr, or pure Zarr with `modes.pure_zarr`;
/// `_ARRAY_DIMENSIONS` unless `!modes.xarray`; Zarr v3 with `modes.v3` or `opts.v3`). The
/// store is made by `create` (replacing an existing one there) only once the dataset is known
/// to fit, so a refusal replaces nothing; it is closed at the end, or aborted on failure.
///
/// # Errors
/// User-defined types, strings longer than their maximum length, filters without a Zarr
/// codec, source read failures, store failures.
pub fn write_store(
    create: impl FnOnce() -> Result<Box<dyn Store>, nc_store::StoreError>,
    ds: &Dataset,
    src: &dyn DataSource,
    modes: &ZarrModes,
    opts: &ZarrWriteOptions,
) -> Result<(), ZarrError> {
    check_model(ds)?;
    let store = create()?;
    let mut opts = opts.clone();
    opts.v3 |= modes.v3;
    let written = write_into(
        store.as_ref(),
        ds,
        src,
        modes.pure_zarr || opts.v3,
        modes.xarray,
        &opts,
    )
    .and_then(|()| Ok(store.close()?));
    given_up_on_error(store.as_ref(), written)
}

/// `written`; on its error, the store given up ([`Store::abort`]): a store that cannot vanish
/// at once (object storage) says what it left, and the error carries that.
pub(crate) fn given_up_on_error<T>(
    store: &dyn Store,
    written: Result<T, ZarrError>,
) -> Result<T, ZarrError> {
    written.map_err(|error| match store.abort() {
        Some(left) => ZarrError::Abandoned {
            error: Box::new(error),
            left,
        },
        None => error,
    })
}

/// Write `ds` into an open store (not closed here): `pure_zarr` and `xarray` are the
/// `zarr` / `noxarray` mode flags.
///
/// # Errors
/// As [`write_store`].
pub fn write_into(
    store: &dyn Store,
    ds: &Dataset,
    src: &dyn DataSource,
    pure_zarr: bool,
    xarray: bool,
    opts: &ZarrWriteOptions,
) -> Result<(), ZarrError> {
    check_model(ds)?;
    let registry = match &opts.registry {
        Some(r) => r.clone(),
        None => {
            let mut r = Registry::with_builtins();
            let _ = r.load_default_plugins();
            std::sync::Arc::new(r)
        }
    };
    let cx = Ctx {
        ds,
        src,
        store,
        opts,
        pure: pure_zarr,
        xarray,
        registry,
        next_unit: std::sync::atomic::AtomicU64::new(0),
        meta: std::sync::Mutex::default(),
    };
    write_group(&cx, "", ROOT)?;
    cx.consolidate()
}

fn check_model(ds: &Dataset) -> Result<(), ZarrError> {
    for v in ds.all_vars() {
        let var = ds.var(v);
        if let NcType::User(t) = var.ty {
            return Err(ZarrError::NotRepresentable {
                what: format!("variable \"{}\"", var_path(ds, v)),
                why: format!(
                    "its type \"{}\" is user-defined; NCZarr has only atomic types (write netCDF-4 instead)",
                    ds.user_type(t).name
                ),
            });
        }
        for a in &var.atts {
            let what = || format!("attribute \"{}\" of \"{}\"", a.name, var_path(ds, v));
            check_attribute(a, what)?;
        }
    }
    for (i, g) in ds.groups.iter().enumerate() {
        for a in &g.atts {
            let what = || {
                format!(
                    "attribute \"{}\" of group {}",
                    a.name,
                    ds.group_path(GroupId(i))
                )
            };
            check_attribute(a, what)?;
        }
    }
    Ok(())
}

/// The first text of `v` that is not UTF-8: a char attribute's text, or one of its strings.
pub(crate) fn non_utf8_text(v: &Values) -> Option<NcString> {
    match v {
        Values::Char(b) => {
            let b = char_att_text(b);
            std::str::from_utf8(b).is_err().then(|| NcString::from(b))
        }
        Values::String(s) => s.iter().flatten().find(|x| x.as_str().is_none()).cloned(),
        _ => None,
    }
}

/// The text of a char attribute as it is written: up to the first NUL, as netCDF-C writes it
/// (its JSON reader mangles an escaped NUL).
fn char_att_text(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

/// Refuses an attribute (`what` names it) of a user-defined type, and a text attribute whose
/// bytes are not UTF-8: attributes go into JSON, which is UTF-8 text (netCDF-C 4.10 writes
/// such bytes raw, making JSON that JSON parsers refuse, or cuts a char attribute short at the
/// first of them). Checked before anything is written.
fn check_attribute(a: &nc_dataset::Attribute, what: impl Fn() -> String) -> Result<(), ZarrError> {
    if a.ty.as_atomic().is_none() {
        return Err(ZarrError::NotRepresentable {
            what: what(),
            why: "its type is user-defined; NCZarr has only atomic types".into(),
        });
    }
    match non_utf8_text(&a.values) {
        Some(value) => Err(ZarrError::NotUtf8 {
            what: what(),
            value,
        }),
        None => Ok(()),
    }
}

/// `.zattrs` content: attributes, then extra keys; `None` when there is nothing to write.
pub(crate) fn attrs_object(
    style: MetaStyle,
    owner: &str,
    atts: &[nc_dataset::Attribute],
    extra: Vec<(String, Value)>,
    always: bool,
) -> Result<Option<Value>, ZarrError> {
    let mut obj = Map::new();
    let mut types = Map::new();
    for a in atts {
        let t = a.ty.as_atomic().unwrap_or(AtomicType::Char);
        let (v, ty) = match t {
            AtomicType::Char => {
                let b = match &a.values {
                    Values::Char(b) => b.as_slice(),
                    _ => &[],
                };
                let b = char_att_text(b);
                let v = attrs::char_to_json(b).ok_or_else(|| ZarrError::NotUtf8 {
                    what: format!("attribute \"{}\" of {owner}", a.name),
                    value: NcString::from(b),
                })?;
                (v, style.char_dtype().replace('|', "<"))
            }
            AtomicType::String if style.layout == NczarrLayout::NetcdfC490 && !style.pure => {
                // 4.9.0 has no string type in NCZarr and refuses the whole store on an `|Sn`
                // attribute type: the text goes as char, several strings joined by ", "
                let text = match &a.values {
                    Values::String(s) => s
                        .iter()
                        .map(|x| x.as_ref().map_or(&[][..], NcString::as_bytes))
                        .collect::<Vec<_>>()
                        .join(&b", "[..]),
                    _ => Vec::new(),
                };
                let text = String::from_utf8(text).map_err(|e| ZarrError::NotUtf8 {
                    what: format!("attribute \"{}\" of {owner}", a.name),
                    value: NcString::from(e.into_bytes()),
                })?;
                (Value::String(text), style.char_dtype().replace('|', "<"))
            }
            AtomicType::String => {
                let max = match &a.values {
                    Values::String(s) => s
                        .iter()
                        .map(|x| x.as_ref().map_or(0, |x| x.len()))
                        .max()
                        .unwrap_or(0),
                    _ => 0,
                };
                let v = match (attrs::values_to_json(&a.values), non_utf8_text(&a.values)) {
                    (Some(v), None) => v,
                    (_, Some(value)) => {
                        return Err(ZarrError::NotUtf8 {
                            what: format!("attribute \"{}\" of {owner}", a.name),
                            value,
                        })
                    }
                    (None, None) => Value::Null,
                };
                (v, format!("|S{}", max.max(2)))
            }
            t => {
                let v = attrs::values_to_json(&a.values).ok_or_else(|| {
                    ZarrError::NotRepresentable {
                        what: format!("attribute \"{}\" of {owner}", a.name),
                        why: "its values do not match its type".into(),
                    }
                })?;
                (v, numeric_dtype(t, false))
            }
        };
        obj.insert(a.name.clone(), v);
        types.insert(a.name.clone(), Value::String(ty));
    }
    let has_any = !atts.is_empty() || !extra.is_empty() || always;
    for (k, v) in extra {
        if k == "_NCProperties" {
            types.insert(
                k.clone(),
                Value::String(style.char_dtype().replace('|', "<")),
            );
        }
        if style.in_zattrs() && k.starts_with("_nczarr_") {
            types.insert(k.clone(), Value::String("|J0".into()));
        }
        obj.insert(k, v);
    }
    if !has_any {
        return Ok(None);
    }
    if !style.pure {
        if style.in_zattrs() {
            types.insert(style.key("_nczarr_attr"), Value::String("|J0".into()));
        }
        let t = if types.is_empty() {
            json!({})
        } else {
            json!({ "types": types })
        };
        obj.insert(style.key("_nczarr_attr"), t);
    }
    Ok(Some(Value::Object(obj)))
}

fn write_group(cx: &Ctx, prefix: &str, g: GroupId) -> Result<(), ZarrError> {
    let ds = cx.ds;
    let grp = ds.group(g);
    if cx.opts.v3 {
        let owner = format!("group {}", ds.group_path(g));
        let atts =
            attrs_object(cx.style(), &owner, &grp.atts, Vec::new(), true)?.unwrap_or(json!({}));
        cx.put_json(
            &join(prefix, "zarr.json"),
            &json!({"zarr_format": 3, "node_type": "group", "attributes": atts}),
        )?;
        return write_members(cx, prefix, g);
    }
    let mut zgroup = Map::new();
    zgroup.insert("zarr_format".into(), json!(2));
    let mut extra = Vec::new();
    if g == ROOT {
        if let Some(p) = &cx.opts.nc_properties {
            extra.push(("_NCProperties".to_string(), Value::String(p.clone())));
        }
    }
    if !cx.pure {
        let mut dims = Map::new();
        for d in &grp.dims {
            let dim = ds.dim(*d);
            // 4.10 marks unlimited dimensions; 4.9.0 knows only lengths (and crashes on the
            // object form), so there they are written fixed
            let entry = if dim.unlimited && cx.in_zattrs() {
                json!({"size": dim.len, "unlimited": 1})
            } else {
                json!(dim.len)
            };
            dims.insert(dim.name.clone(), entry);
        }
        let vars: Vec<&str> = grp.vars.iter().map(|v| ds.var(*v).name.as_str()).collect();
        let groups: Vec<&str> = grp
            .groups
            .iter()
            .map(|c| ds.group(*c).name.as_str())
            .collect();
        let superblock = json!({"version": "2.0.0"});
        if cx.in_zattrs() {
            extra.push((
                cx.key("_nczarr_group"),
                json!({"dimensions": dims, "arrays": vars, "groups": groups}),
            ));
            if g == ROOT {
                extra.push((cx.key("_nczarr_superblock"), superblock));
            }
        } else {
            if g == ROOT {
                zgroup.insert(cx.key("_nczarr_superblock"), superblock);
            }
            zgroup.insert(
                cx.key("_nczarr_group"),
                json!({"dims": dims, "vars": vars, "groups": groups}),
            );
        }
    }
    cx.put_json(&join(prefix, ".zgroup"), &Value::Object(zgroup))?;
    let owner = format!("group {}", ds.group_path(g));
    if let Some(z) = attrs_object(cx.style(), &owner, &grp.atts, extra, false)? {
        cx.put_json(&join(prefix, ".zattrs"), &z)?;
    }
    write_members(cx, prefix, g)
}

/// The variables and subgroups of group `g`, stored under `prefix`.
fn write_members(cx: &Ctx, prefix: &str, g: GroupId) -> Result<(), ZarrError> {
    let ds = cx.ds;
    let grp = ds.group(g);
    for v in &grp.vars {
        crate::store::check_key(&ds.var(*v).name)?;
        write_var(cx, prefix, *v)?;
    }
    for c in &grp.groups {
        let name = &ds.group(*c).name;
        crate::store::check_key(name)?;
        write_group(cx, &join(prefix, name), *c)?;
    }
    Ok(())
}

fn maxstrlen(cx: &Ctx, v: VarId) -> usize {
    let get = |a: Option<&nc_dataset::Attribute>| {
        a.and_then(|a| a.values.get_i128(0))
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n > 0)
    };
    get(cx.ds.var(v).att("_nczarr_maxstrlen"))
        .or_else(|| {
            get(cx
                .ds
                .group(ROOT)
                .atts
                .iter()
                .find(|a| a.name == "_nczarr_default_maxstrlen"))
        })
        .unwrap_or(cx.opts.default_maxstrlen)
        .max(1)
}

fn default_chunks(shape: &[u64], esize: u64) -> Vec<u64> {
    let mut c: Vec<u64> = shape.iter().map(|&n| n.max(1)).collect();
    let bytes = |c: &[u64]| c.iter().fold(esize, |a, &b| a.saturating_mul(b));
    if bytes(&c) <= WHOLE_LIMIT {
        return c;
    }
    // halve the slowest dimensions first until a chunk is about CHUNK_TARGET
    let mut i = 0;
    while bytes(&c) > CHUNK_TARGET && i < c.len() {
        if c[i] > 1 {
            c[i] = c[i].div_ceil(2);
        } else {
            i += 1;
        }
    }
    c
}

/// The JSON `fill_value` of fill `fill` of type `t`; Err(the text) when the text is not UTF-8.
fn fill_json(fill: &Values, t: AtomicType) -> Result<Value, NcString> {
    Ok(match t {
        AtomicType::Float | AtomicType::Double => {
            let x = fill.get_f64(0).unwrap_or(0.0);
            if t == AtomicType::Float {
                let s = format!("{}", x as f32).parse::<f64>().unwrap_or(x);
                float_value(if x.is_finite() { s } else { x })
            } else {
                float_value(x)
            }
        }
        AtomicType::Char => match fill {
            Values::Char(b) if b.first().is_some_and(|&c| c != 0) => {
                match std::str::from_utf8(&b[..1]) {
                    Ok(t) => Value::String(t.to_string()),
                    Err(_) => return Err(NcString::from(&b[..1])),
                }
            }
            _ => Value::String(String::new()),
        },
        AtomicType::String => match fill {
            Values::String(s) => match s.first().and_then(Option::as_ref) {
                None => Value::String(String::new()),
                Some(x) => match x.as_str() {
                    Some(t) => Value::String(t.to_string()),
                    None => return Err(x.clone()),
                },
            },
            _ => Value::String(String::new()),
        },
        AtomicType::UInt64 => fill
            .get_i128(0)
            .and_then(|n| u64::try_from(n).ok())
            .map_or(Value::Null, Value::from),
        _ => fill
            .get_i128(0)
            .and_then(|n| i64::try_from(n).ok())
            .map_or(Value::Null, Value::from),
    })
}

struct VarPlan {
    path: String,
    key: String,
    dtype: Dtype,
    /// Zarr shape (`[1]` for scalars).
    shape: Vec<u64>,
    chunks: Vec<u64>,
    scalar: bool,
    fill: Vec<u8>,
    skip_fill_chunks: bool,
    /// The store's fill is the variable's netCDF fill: a region the source never stored is
    /// left as a missing chunk (see `DataSource::unwritten`).
    unwritten_is_fill: bool,
    pipe: Option<Pipeline>,
    maxlen: Option<usize>,
    sep: char,
    /// Zarr v3: keys `c/i/j` (`c` for a 0-d array), strings as vlen-utf8.
    v3: bool,
    /// Zarr v3 shard shape (whole chunks), `None` when not sharded.
    shard: Option<Vec<u64>>,
}

fn write_var(cx: &Ctx, prefix: &str, v: VarId) -> Result<(), ZarrError> {
    let ds = cx.ds;
    let var = ds.var(v);
    let path = var_path(ds, v);
    let t = var.ty.as_atomic().unwrap_or(AtomicType::Byte);
    let scalar = var.dims.is_empty();
    let big = var.storage.endianness == Some(Endianness::Big);
    let v3 = cx.opts.v3;
    // Zarr v3 strings are variable length (vlen-utf8): no maximum length
    let maxlen = (t == AtomicType::String && !v3).then(|| maxstrlen(cx, v));
    let dtype_text = match t {
        AtomicType::Char => cx.char_dtype().to_string(),
        AtomicType::String if v3 => "|O".to_string(),
        AtomicType::String => format!("|S{}", maxlen.unwrap_or(128)),
        t => numeric_dtype(t, big),
    };
    let dtype = Dtype::parse(&dtype_text).map_err(|why| ZarrError::Dtype {
        key: path.clone(),
        dtype: dtype_text.clone(),
        why,
    })?;
    // one stored char is one byte whatever the spelling
    let dtype = if dtype.kind == Kind::Char {
        Dtype {
            kind: Kind::Char,
            endian: Endian::NotApplicable,
        }
    } else {
        dtype
    };
    // netCDF-C 4.9.0 reads a `[1]`-shaped scalar as rank 1 and crashes at open: there a
    // scalar is a 0-d array (it then reads the metadata, though not the value)
    let layout49 = cx.opts.layout == NczarrLayout::NetcdfC490 && !cx.pure;
    let shape: Vec<u64> = match (scalar, layout49) {
        (true, true) => Vec::new(),
        (true, false) => vec![1],
        (false, _) => ds.shape(v),
    };
    let mut chunks: Vec<u64> = match (&var.storage.layout, &var.storage.chunk_sizes) {
        // contiguous storage is one chunk of the whole shape, as NCZarr stores it, up to
        // WHOLE_CHUNK_MAX bytes: a reader allocates a whole chunk (netCDF-C failed on the 4 TiB
        // chunk of a never-written 2^40-element variable); larger, the default chunks
        (Some(Layout::Contiguous | Layout::Compact), _)
            if shape
                .iter()
                .try_fold(dtype.size() as u64, |a, &n| a.checked_mul(n.max(1)))
                .is_some_and(|b| b <= WHOLE_CHUNK_MAX) =>
        {
            shape.iter().map(|&n| n.max(1)).collect()
        }
        (_, Some(c)) if c.len() == shape.len() && !scalar => c.iter().map(|&n| n.max(1)).collect(),
        _ => default_chunks(&shape, dtype.size() as u64),
    };
    if layout49 {
        // 4.9.0 refuses a chunk longer than the array (an unlimited dimension's chunk often is)
        for (c, &n) in chunks.iter_mut().zip(&shape) {
            *c = (*c).min(n).max(1);
        }
    }
    // `_FillValue`, else the stored fill of a pure Zarr input, else netCDF's default
    let fill_vals = ds.stored_fill(v).unwrap_or_else(|| default_fill(t));
    let no_fill = var.storage.no_fill == Some(true);
    let fill_value = if no_fill {
        Value::Null
    } else if v3 && t == AtomicType::Char {
        crate::v3write::char_fill(&fill_vals)
    } else {
        fill_json(&fill_vals, t).map_err(|value| ZarrError::NotUtf8 {
            what: format!("the fill value of variable \"{path}\""),
            value,
        })?
    };
    let mut fill = Vec::new();
    convert::encode(&fill_vals, &dtype, &mut fill);
    fill.resize(dtype.size(), 0);

    // filters: compressor = last, filters = the rest; Zarr-only codecs (gzip, numcodecs lz4,
    // delta) come back from `_Codecs` when it still describes the chain
    let zarr_only = var.storage.codecs.as_deref().is_some_and(|t| {
        nc_filters::codec_json::parse_codecs(t)
            .is_ok_and(|c| c.iter().any(nc_filters::codec_json::is_zarr_only))
    });
    let filterable =
        !scalar && t != AtomicType::String && (!var.storage.filters.is_empty() || zarr_only);
    let (compressor, filters, pipe) = if filterable {
        let mut ctx = FilterContext::new(dtype.size(), &chunks);
        ctx.max_decoded = ctx
            .chunk_bytes()
            .map_or(ctx.max_decoded, |n| n.saturating_add(1024));
        if cx.pure && var.storage.filters.iter().any(|f| f.id == SZIP_ID) {
            // netCDF-C's NCZarr writes {"id": "szip"}, which numcodecs (so zarr-python and
            // xarray) has no codec for: a pure Zarr store refuses it rather than be written
            // unreadable to them; an NCZarr store keeps it, as netCDF-C writes and reads it
            // (nccopy-rs drops it from both, with a warning)
            return Err(ZarrError::NotRepresentable {
                what: format!("the filters of variable \"{path}\""),
                why:
                    "filter 4 (szip) has no Zarr codec that zarr-python or numcodecs reads; \
                      remove it from _Filter, or copy with nccopy-rs, which drops it with a warning"
                        .into(),
            });
        }
        let working = cx
            .registry
            .working_chain(&shuffle_before_fletcher32(&var.storage.filters), &ctx);
        let codecs = crate::codecs::output_codecs(&working, var.storage.codecs.as_deref(), &ctx)
            .map_err(|e| ZarrError::NotRepresentable {
                what: format!("the filters of variable \"{path}\""),
                why: format!(
                    "{e}; NCZarr stores filters as Zarr codecs (use a filter with a standard codec)"
                ),
            })?;
        if v3 {
            let json: Vec<Value> = codecs.iter().map(|c| c.json.clone()).collect();
            let mapped = crate::v3write::map_chain(&json, big, dtype.size(), false, &path)?;
            let engine = mapped
                .pipeline
                .iter()
                .map(|j| {
                    Ok(ZarrCodec {
                        json: j.clone(),
                        spec: nc_filters::codec_json::codec_to_hdf5(j, &ctx).map_err(|e| {
                            ZarrError::NotRepresentable {
                                what: format!("the filters of variable \"{path}\""),
                                why: e.to_string(),
                            }
                        })?,
                    })
                })
                .collect::<Result<Vec<_>, ZarrError>>()?;
            let akey = format!("{}/zarr.json", join(prefix, &var.name));
            let p = if engine.is_empty() {
                None
            } else {
                Some(crate::codecs::pipeline(
                    &engine,
                    &cx.registry,
                    ctx,
                    &path,
                    &akey,
                )?)
            };
            (Value::Array(mapped.codecs), Value::Null, p)
        } else if codecs.is_empty() {
            (Value::Null, Value::Null, None)
        } else {
            let (c, f) = crate::codecs::split_json(&codecs);
            let akey = format!("{}/.zarray", join(prefix, &var.name));
            let p = crate::codecs::pipeline(&codecs, &cx.registry, ctx, &path, &akey)?;
            (c, f, Some(p))
        }
    } else {
        (Value::Null, Value::Null, None)
    };

    // a region the source never stored reads as the variable's stored fill
    // (`Dataset::stored_fill`): it can stay a missing chunk when that is the store's
    // fill_value too
    let unwritten_is_fill = !no_fill && !scalar && {
        let mut nc = Vec::new();
        if let Some(f) = ds.stored_fill(v) {
            convert::encode(&f, &dtype, &mut nc);
            nc.resize(dtype.size(), 0);
        }
        nc == fill
    };
    let vkey = join(prefix, &var.name);
    if v3 {
        // the v3 codec list: the mapped filters, or the serializer alone
        let inner = match compressor {
            Value::Array(list) => list,
            _ => {
                crate::v3write::map_chain(&[], big, dtype.size(), t == AtomicType::String, &path)?
                    .codecs
            }
        };
        let shard = match &var.storage.shard_sizes {
            _ if scalar => None,
            None => None,
            Some(s) if s.is_empty() => Some(crate::v3write::default_shard(
                &shape,
                &chunks,
                dtype.size() as u64,
            )),
            Some(s) => {
                if s.len() != chunks.len()
                    || s.iter().zip(&chunks).any(|(s, c)| *s == 0 || s % c != 0)
                {
                    return Err(ZarrError::NotRepresentable {
                        what: format!("the shards of variable \"{path}\""),
                        why: format!(
                            "_ShardSizes {s:?} is not a whole number of chunks {chunks:?} \
                             along each dimension; give shard lengths that are multiples of \
                             the chunk lengths"
                        ),
                    });
                }
                Some(s.clone())
            }
        };
        // numcodecs' packbits packs booleans: zarr-python 3 runs it on a bool array only, so
        // a ubyte variable packed with it (a bool array read as ubyte) is written as bool
        let packed_bools = t == AtomicType::UByte
            && inner
                .iter()
                .any(|c| c.get("name").and_then(Value::as_str) == Some("numcodecs.packbits"));
        let (grid, codecs_json) = match &shard {
            Some(s) => (s.clone(), crate::v3write::sharding(&chunks, inner)),
            None => (if scalar { Vec::new() } else { chunks.clone() }, inner),
        };
        let zshape: Vec<u64> = if scalar { Vec::new() } else { shape.clone() };
        let mut meta = Map::new();
        meta.insert("zarr_format".into(), json!(3));
        meta.insert("node_type".into(), json!("array"));
        meta.insert("shape".into(), json!(zshape));
        meta.insert(
            "data_type".into(),
            if packed_bools {
                json!("bool")
            } else {
                crate::v3write::data_type(t)
            },
        );
        meta.insert(
            "chunk_grid".into(),
            json!({"name": "regular", "configuration": {"chunk_shape": grid}}),
        );
        meta.insert(
            "chunk_key_encoding".into(),
            json!({"name": "default", "configuration": {"separator": "/"}}),
        );
        meta.insert(
            "fill_value".into(),
            match (fill_value.is_null(), packed_bools) {
                (_, true) => json!(fill.first().is_some_and(|&b| b != 0)),
                // v3 has no "no fill value": the netCDF fill stands in
                (true, false) => fill_json(&fill_vals, t).unwrap_or(Value::Null),
                (false, false) => fill_value,
            },
        );
        meta.insert("codecs".into(), Value::Array(codecs_json));
        let mut atts = attrs_object(
            cx.style(),
            &format!("variable \"{path}\""),
            &var.atts,
            Vec::new(),
            true,
        )?
        .unwrap_or(json!({}));
        // xarray reads a float `_FillValue` of a v3 array as the base64 of its 8 bytes as a
        // little-endian double (its FillValueCoder), and fails on a plain number
        if let (Some(f), true) = (
            var.att("_FillValue").and_then(|a| a.values.get_f64(0)),
            matches!(t, AtomicType::Float | AtomicType::Double),
        ) {
            atts["_FillValue"] = Value::String(crate::v3write::base64(&f.to_le_bytes()));
        }
        meta.insert("attributes".into(), atts);
        if !scalar {
            let names: Vec<&str> = var.dims.iter().map(|d| ds.dim(*d).name.as_str()).collect();
            meta.insert("dimension_names".into(), json!(names));
        }
        cx.put_json(&join(&vkey, "zarr.json"), &Value::Object(meta))?;
        let plan = VarPlan {
            path,
            key: vkey,
            dtype,
            shape,
            chunks,
            scalar,
            fill,
            // a chunk of empty strings is left out only when empty is the fill value
            skip_fill_chunks: !no_fill
                && !scalar
                && (t != AtomicType::String
                    || matches!(&fill_vals, Values::String(f)
                        if f.first().is_none_or(|x| x.as_ref().is_none_or(|x| x.is_empty())))),
            unwritten_is_fill,
            pipe,
            maxlen,
            sep: '/',
            v3: true,
            shard,
        };
        return write_chunks(cx, v, &plan);
    }
    let mut zarray = Map::new();
    zarray.insert("zarr_format".into(), json!(2));
    zarray.insert("shape".into(), json!(shape));
    zarray.insert("dtype".into(), json!(dtype_text));
    zarray.insert("chunks".into(), json!(chunks));
    zarray.insert("fill_value".into(), fill_value);
    zarray.insert("order".into(), json!("C"));
    zarray.insert("compressor".into(), compressor);
    zarray.insert("filters".into(), filters);
    if cx.opts.dimension_separator == '/' {
        zarray.insert("dimension_separator".into(), json!("/"));
    }
    let mut extra = Vec::new();
    if !cx.pure {
        let dimrefs: Vec<String> = var
            .dims
            .iter()
            .map(|d| {
                let dim = ds.dim(*d);
                format!(
                    "{}/{}",
                    ds.group_path(dim.group).trim_end_matches('/'),
                    dim.name
                )
            })
            .collect();
        if cx.in_zattrs() {
            let mut a = json!({"dimension_references": dimrefs, "storage": "chunked"});
            if scalar {
                a["scalar"] = json!(1);
            }
            extra.push((cx.key("_nczarr_array"), a));
        } else {
            zarray.insert(
                cx.key("_nczarr_array"),
                json!({"dimrefs": dimrefs, "storage": if scalar { "scalar" } else { "chunked" }}),
            );
        }
    }
    cx.put_json(&join(&vkey, ".zarray"), &Value::Object(zarray))?;

    let root_dims = var.dims.iter().all(|d| ds.dim(*d).group == ROOT);
    if cx.xarray && var.group == ROOT && root_dims {
        let mut names: Vec<&str> = var.dims.iter().map(|d| ds.dim(*d).name.as_str()).collect();
        if scalar && cx.in_zattrs() {
            names.push("_scalar_");
        }
        // after the attributes, before the NCZarr keys (the order netCDF-C writes)
        extra.insert(0, ("_ARRAY_DIMENSIONS".to_string(), json!(names)));
    }
    if let Some(z) = attrs_object(
        cx.style(),
        &format!("variable \"{path}\""),
        &var.atts,
        extra,
        false,
    )? {
        cx.put_json(&join(&vkey, ".zattrs"), &z)?;
    }

    let plan = VarPlan {
        path,
        key: vkey,
        dtype,
        shape,
        chunks,
        scalar,
        fill,
        skip_fill_chunks: !no_fill && !scalar,
        unwritten_is_fill,
        pipe,
        maxlen,
        sep: cx.opts.dimension_separator,
        v3: false,
        shard: None,
    };
    write_chunks(cx, v, &plan)
}

fn write_chunks(cx: &Ctx, v: VarId, p: &VarPlan) -> Result<(), ZarrError> {
    if p.shape.contains(&0) {
        return Ok(());
    }
    let rank = p.shape.len();
    let grid: Vec<u64> = (0..rank)
        .map(|i| p.shape[i].div_ceil(p.chunks[i]))
        .collect();
    // this variable's units (chunks, or shards) are numbered from `base` on
    let unit = p.shard.as_deref().unwrap_or(&p.chunks);
    let units: u64 = (0..rank).map(|i| p.shape[i].div_ceil(unit[i])).product();
    let base = cx
        .next_unit
        .fetch_add(units, std::sync::atomic::Ordering::Relaxed);
    if cx.opts.chunks == ChunkScope::Nothing {
        return Ok(());
    }
    if let Some(shard) = &p.shard {
        return write_shards(cx, v, p, shard, base);
    }
    let n: u64 = grid.iter().product();
    // each chunk is read, encoded and stored by the thread that takes it, so memory stays at
    // one chunk per thread; no batches, so no core waits for the slowest chunk of a batch
    if let Some(cells) = units_to_visit(cx, v, p, &p.chunks, &grid) {
        return cells
            .into_par_iter()
            .filter(|lin| cx.opts.chunks.takes(base + lin))
            .try_for_each(|lin| write_one_chunk(cx, v, p, &grid, lin));
    }
    (0..n)
        .into_par_iter()
        .filter(|lin| cx.opts.chunks.takes(base + lin))
        .try_for_each(|lin| write_one_chunk(cx, v, p, &grid, lin))
}

/// The largest contiguous variable (bytes) stored as one chunk of its whole shape.
const WHOLE_CHUNK_MAX: u64 = 1 << 30;

/// At most this many chunks (or shards) of a variable are listed as the ones to visit (see
/// [`units_to_visit`]: 32 MiB of numbers); past it every one is visited and asked about.
const MAX_VISIT: u64 = 1 << 22;

/// The chunks (or shards: `unit` is their shape, `grid` their count along each dimension)
/// that overlap what the source stores, ascending, when the source lists its stored regions
/// and a region it never stored may stay missing (it reads as the store's fill value): the
/// others are never visited, so a copy costs what is stored, not what is declared. `None`:
/// visit every one.
fn units_to_visit(cx: &Ctx, v: VarId, p: &VarPlan, unit: &[u64], grid: &[u64]) -> Option<Vec<u64>> {
    if !p.unwritten_is_fill {
        return None;
    }
    let n = grid.iter().try_fold(1u64, |a, &g| a.checked_mul(g));
    // a part of a fan-out lists the source's chunks only when visiting all of its share
    // would cost more than listing them all (each part lists the whole variable)
    if matches!(cx.opts.chunks, ChunkScope::Part { .. }) && n.is_some_and(|n| n <= 1 << 20) {
        return None;
    }
    let regions = cx.src.stored_regions(cx.ds, v)?;
    nc_dataset::cells_touched(
        &regions,
        unit,
        grid,
        n.map_or(MAX_VISIT, |n| n.min(MAX_VISIT)),
    )
}

/// The index of the `lin`-th element of a C-order grid.
fn unravel(mut lin: u64, grid: &[u64]) -> Vec<u64> {
    let mut idx = vec![0u64; grid.len()];
    for i in (0..grid.len()).rev() {
        idx[i] = lin % grid[i];
        lin /= grid[i];
    }
    idx
}

/// Zarr v3 sharded: each shard is written once, front to back — its inner chunks in C order
/// as they are encoded, then its index — so a shard is never held whole in memory. Shards of
/// at least [`SHARD_WINDOW`] inner chunks per thread are written one after the other, their
/// inner chunks read and encoded in parallel a window at a time (memory: one window of
/// chunks); smaller shards are written in parallel, one per thread.
fn write_shards(
    cx: &Ctx,
    v: VarId,
    p: &VarPlan,
    shard: &[u64],
    base: u64,
) -> Result<(), ZarrError> {
    let rank = p.shape.len();
    let sgrid: Vec<u64> = (0..rank).map(|i| p.shape[i].div_ceil(shard[i])).collect();
    let per: Vec<u64> = (0..rank).map(|i| shard[i] / p.chunks[i]).collect();
    let n: u64 = sgrid.iter().product();
    let inner_n: u64 = per.iter().product();
    let window = (SHARD_WINDOW * rayon::current_num_threads()) as u64;
    // inner chunk `k` of shard `sidx`: encoded, `None` when empty or past the array's end
    let inner = |sidx: &[u64], k: u64| -> Result<Option<Vec<u8>>, ZarrError> {
        let within = unravel(k, &per);
        let idx: Vec<u64> = (0..rank).map(|i| sidx[i] * per[i] + within[i]).collect();
        if (0..rank).all(|i| idx[i] * p.chunks[i] < p.shape[i]) {
            chunk_data(cx, v, p, &idx)
        } else {
            Ok(None)
        }
    };
    let one_shard = |lin: u64, parallel: bool| -> Result<(), ZarrError> {
        let sidx = unravel(lin, &sgrid);
        let mut index = crate::v3write::ShardIndex::new(inner_n as usize);
        // opened at the first inner chunk that is not empty: an all-empty shard is not stored
        let mut out: Option<Box<dyn crate::store::ObjectWriter + '_>> = None;
        let mut first = 0u64;
        while first < inner_n {
            let last = if parallel {
                (first + window).min(inner_n)
            } else {
                first + 1
            };
            let chunks: Vec<Option<Vec<u8>>> = if parallel {
                (first..last)
                    .into_par_iter()
                    .map(|k| inner(&sidx, k))
                    .collect::<Result<_, _>>()?
            } else {
                vec![inner(&sidx, first)?]
            };
            for c in chunks {
                index.push(c.as_ref().map(|b| b.len() as u64));
                if let Some(bytes) = c {
                    if out.is_none() {
                        out = Some(cx.store.writer(&chunk_key(p, &sidx))?);
                    }
                    if let Some(w) = out.as_mut() {
                        w.write(&bytes)?;
                    }
                }
            }
            first = last;
        }
        match out {
            Some(mut w) => {
                w.write(&index.finish())?;
                Ok(w.finish()?)
            }
            None => Ok(()),
        }
    };
    let mine = |lin: &u64| cx.opts.chunks.takes(base + lin);
    if let Some(cells) = units_to_visit(cx, v, p, shard, &sgrid) {
        let parallel = inner_n >= window;
        return if parallel {
            cells
                .into_iter()
                .filter(mine)
                .try_for_each(|lin| one_shard(lin, true))
        } else {
            cells
                .into_par_iter()
                .filter(mine)
                .try_for_each(|lin| one_shard(lin, false))
        };
    }
    if inner_n >= window {
        (0..n).filter(mine).try_for_each(|lin| one_shard(lin, true))
    } else {
        (0..n)
            .into_par_iter()
            .filter(mine)
            .try_for_each(|lin| one_shard(lin, false))
    }
}

/// Inner chunks per thread read and encoded at once within a shard (see [`write_shards`]).
const SHARD_WINDOW: usize = 4;

/// The store key of chunk (or, when sharded, shard) `idx`.
fn chunk_key(p: &VarPlan, idx: &[u64]) -> String {
    let parts: Vec<String> = idx.iter().map(u64::to_string).collect();
    match (p.v3, p.scalar) {
        (true, true) => format!("{}/c", p.key),
        (true, false) => format!("{}/c/{}", p.key, parts.join("/")),
        // a 0-d array's one chunk is "0" (Zarr v2)
        (false, _) if parts.is_empty() => format!("{}/0", p.key),
        (false, _) => format!("{}/{}", p.key, parts.join(&p.sep.to_string())),
    }
}

fn write_one_chunk(
    cx: &Ctx,
    v: VarId,
    p: &VarPlan,
    grid: &[u64],
    lin: u64,
) -> Result<(), ZarrError> {
    let idx = unravel(lin, grid);
    match chunk_data(cx, v, p, &idx)? {
        Some(data) => Ok(cx.store.put(&chunk_key(p, &idx), &data)?),
        None => Ok(()),
    }
}

/// Chunk `idx` read from the source and encoded; `None` when it is left out (all fill, or
/// never written by the source).
fn chunk_data(cx: &Ctx, v: VarId, p: &VarPlan, idx: &[u64]) -> Result<Option<Vec<u8>>, ZarrError> {
    let rank = p.shape.len();
    let start: Vec<u64> = (0..rank).map(|i| idx[i] * p.chunks[i]).collect();
    let count: Vec<u64> = (0..rank)
        .map(|i| p.chunks[i].min(p.shape[i] - start[i]))
        .collect();
    let (rs, rc): (&[u64], &[u64]) = if p.scalar {
        (&[], &[])
    } else {
        (&start, &count)
    };
    if p.unwritten_is_fill && cx.src.unwritten(cx.ds, v, Slab::new(rs, rc)) {
        return Ok(None);
    }
    let es = p.dtype.size();
    // a little-endian numeric dtype of the variable's own type: the source's bytes as they are
    let le_ok = match p.dtype.kind {
        crate::dtype::Kind::Num(t) => {
            cx.ds.var(v).ty == nc_dataset::NcType::Atomic(t)
                && (p.dtype.endian == crate::dtype::Endian::Little || t.size() == 1)
                && t.size() == es
        }
        _ => false,
    };
    let le = if le_ok {
        cx.src.read_le_bytes(cx.ds, v, Slab::new(rs, rc))
    } else {
        None
    };
    let (vals, region) = match le {
        Some(bytes) => (
            None,
            bytes.map_err(|e| ZarrError::Source {
                var: p.path.clone(),
                msg: e.to_string(),
            })?,
        ),
        None => {
            let vals = cx
                .src
                .read(cx.ds, v, Slab::new(rs, rc))
                .map_err(|e| ZarrError::Source {
                    var: p.path.clone(),
                    msg: e.to_string(),
                })?;
            (Some(vals), Vec::new())
        }
    };
    if p.dtype.kind == Kind::VlenUtf8 {
        let vals = vals.unwrap_or(Values::String(Vec::new()));
        return string_chunk(p, &count, &vals);
    }
    let lin = idx
        .iter()
        .zip(&p.shape)
        .zip(&p.chunks)
        .fold(0u64, |a, ((i, n), c)| a * n.div_ceil(*c) + i);
    let region = match vals {
        Some(vals) => encode_values(p, lin, &vals)?,
        None => region,
    };
    finish_chunk(p, &count, region)
}

/// A Zarr v3 chunk of strings (`vlen-utf8`), padded past the array's end with empty strings;
/// `None` when every string is empty and empty is the fill value.
fn string_chunk(p: &VarPlan, count: &[u64], vals: &Values) -> Result<Option<Vec<u8>>, ZarrError> {
    let Values::String(strs) = vals else {
        return Err(ZarrError::Source {
            var: p.path.clone(),
            msg: "returned values that are not strings for a string variable".into(),
        });
    };
    let region: Vec<u8> = (1..=strs.len() as u64).flat_map(u64::to_le_bytes).collect();
    let slots = if count == p.chunks.as_slice() {
        region
    } else {
        let elems = p.chunks.iter().product::<u64>() as usize;
        let mut buf = vec![0u8; elems * 8];
        place(&region, count, &p.chunks, 8, &mut buf);
        buf
    };
    let list: Vec<Option<&NcString>> = slots
        .chunks_exact(8)
        .map(|b| {
            let k = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as usize;
            k.checked_sub(1)
                .and_then(|i| strs.get(i))
                .and_then(Option::as_ref)
        })
        .collect();
    if p.skip_fill_chunks && list.iter().all(|s| s.is_none_or(|s| s.is_empty())) {
        return Ok(None);
    }
    let raw = crate::v3write::vlen_utf8(&list, &p.path)?;
    match &p.pipe {
        Some(pipe) => pipe.encode(&raw).map(Some).map_err(|e| ZarrError::Filter {
            var: p.path.clone(),
            source: e,
        }),
        None => Ok(Some(raw)),
    }
}

/// Typed values of one chunk's region as dtype bytes (checking string lengths).
fn encode_values(p: &VarPlan, lin: u64, vals: &Values) -> Result<Vec<u8>, ZarrError> {
    if let (Some(max), Values::String(s)) = (p.maxlen, vals) {
        for (i, x) in s.iter().enumerate() {
            let len = x.as_ref().map_or(0, NcString::len);
            if len > max {
                return Err(ZarrError::StringTooLong {
                    var: p.path.clone(),
                    index: lin * p.chunks.iter().product::<u64>() + i as u64,
                    len,
                    max,
                });
            }
        }
    }
    let mut region = Vec::with_capacity(vals.len() * p.dtype.size());
    convert::encode(vals, &p.dtype, &mut region);
    Ok(region)
}

/// Pad a chunk's region to the whole chunk and filter it; `None` for an all-fill chunk that
/// is left out.
fn finish_chunk(p: &VarPlan, count: &[u64], region: Vec<u8>) -> Result<Option<Vec<u8>>, ZarrError> {
    let es = p.dtype.size();
    let chunk_elems: u64 = p.chunks.iter().product();
    let region_elems: u64 = count.iter().product();
    if region.len() as u64 != region_elems * es as u64 {
        return Err(ZarrError::Source {
            var: p.path.clone(),
            msg: format!(
                "returned {} bytes for a {}-element hyperslab of {es}-byte elements",
                region.len(),
                region_elems
            ),
        });
    }
    let buf = if count == p.chunks {
        region
    } else {
        let mut buf = Vec::with_capacity((chunk_elems as usize) * es);
        for _ in 0..chunk_elems {
            buf.extend_from_slice(&p.fill);
        }
        place(&region, count, &p.chunks, es, &mut buf);
        buf
    };
    if p.skip_fill_chunks && buf.chunks_exact(es).all(|e| e == p.fill.as_slice()) {
        return Ok(None);
    }
    let data = match &p.pipe {
        Some(pipe) => pipe.encode(&buf).map_err(|e| ZarrError::Filter {
            var: p.path.clone(),
            source: e,
        })?,
        None => buf,
    };
    Ok(Some(data))
}

/// Copy a C-order region of shape `count` into the top corner of a C-order chunk.
pub(crate) fn place(region: &[u8], count: &[u64], chunks: &[u64], es: usize, buf: &mut [u8]) {
    let rank = count.len();
    let run = count[rank - 1] as usize * es;
    let rows: u64 = count[..rank - 1].iter().product();
    let mut pos = vec![0u64; rank.saturating_sub(1)];
    for row in 0..rows as usize {
        let mut off = 0u64;
        let mut stride = chunks[rank - 1];
        for i in (0..rank - 1).rev() {
            off += pos[i] * stride;
            stride *= chunks[i];
        }
        let dst = off as usize * es;
        buf[dst..dst + run].copy_from_slice(&region[row * run..(row + 1) * run]);
        for i in (0..rank - 1).rev() {
            pos[i] += 1;
            if pos[i] < count[i] {
                break;
            }
            pos[i] = 0;
        }
    }
}

/// The chain with every shuffle moved ahead of a fletcher32 that precedes it. netCDF-C puts
/// fletcher32 first in HDF5; there a shuffle after it leaves the 4 checksum bytes that are
/// not a whole element as they are, but numcodecs' Shuffle refuses such a buffer, so a
/// store written in that order is unreadable to zarr-python. Shuffling first stores the same
/// data readably (the checksum then covers the shuffled bytes).
fn shuffle_before_fletcher32(chain: &[FilterSpec]) -> Vec<FilterSpec> {
    let mut out = chain.to_vec();
    if let (Some(f), Some(s)) = (
        out.iter().position(|x| x.id == 3),
        out.iter().rposition(|x| x.id == 2),
    ) {
        if f < s {
            let fl = out.remove(f);
            out.insert(s, fl);
        }
    }
    out
}

#[cfg(test)]
mod order_tests {
    use super::*;

    #[test]
    fn shuffle_moves_ahead_of_fletcher32() {
        let f = |id: u32| FilterSpec { id, params: vec![] };
        let ids = |c: Vec<FilterSpec>| c.iter().map(|x| x.id).collect::<Vec<_>>();
        assert_eq!(
            ids(shuffle_before_fletcher32(&[f(3), f(2), f(1)])),
            [2, 3, 1]
        );
        assert_eq!(
            ids(shuffle_before_fletcher32(&[f(2), f(3), f(1)])),
            [2, 3, 1]
        );
        assert_eq!(ids(shuffle_before_fletcher32(&[f(3), f(1)])), [3, 1]);
        assert_eq!(
            ids(shuffle_before_fletcher32(&[f(3), f(32015), f(2), f(1)])),
            [32015, 2, 3, 1]
        );
    }
}
