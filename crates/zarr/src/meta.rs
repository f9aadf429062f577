//! Reading metadata: `.zgroup`, `.zarray`, `.zattrs` and the NCZarr keys (`_nczarr_superblock`,
//! `_nczarr_group`, `_nczarr_array`, `_nczarr_attr`, in lower or upper case, inside the Zarr
//! objects or, as netCDF-C 4.10 writes them, inside `.zattrs`), the NCZarr version 1 objects
//! (`.nczarr`, `.nczgroup`, `.nczarray`, `.nczattr[s]`), and pure Zarr, whose shared
//! dimensions come from xarray's `_ARRAY_DIMENSIONS` or are made per length as `_zdim_N`.

use crate::attrs;
use crate::dtype::{attr_type, Dtype, Kind};
use crate::error::ZarrError;
use crate::json::{self, as_f64};
use crate::modes::Opening;
use crate::store::Store;
use nc_dataset::{
    default_fill, AtomicType, Dataset, DimId, FileInfo, Format, GroupId, Layout, NcType, Storage,
    Values, ROOT,
};
use nc_filters::codec_json::{zarr_to_chain, ZarrCodec};
use nc_filters::FilterContext;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Deepest group nesting accepted.
const MAX_DEPTH: usize = 256;
/// Most dimensions of one array.
const MAX_RANK: usize = 64;

/// What the reader keeps per variable to find and decode its chunks.
#[derive(Debug, Clone)]
pub(crate) struct VarInfo {
    /// Store key of the array (`g1/pos`).
    pub key: String,
    /// Full netCDF path for messages (`/g1/pos`).
    pub path: String,
    pub dtype: Dtype,
    /// Zarr shape (`[1]` for a scalar).
    pub shape: Vec<u64>,
    pub chunks: Vec<u64>,
    /// One element in stored form (dtype size bytes, stored byte order).
    pub fill: Vec<u8>,
    /// `order: "F"`.
    pub fortran: bool,
    /// Chunk key separator, `.` or `/`.
    pub sep: char,
    /// filters then compressor.
    pub codecs: Vec<ZarrCodec>,
    /// Zarr version 3: chunk keys, transpose and sharding (`None` for version 2).
    pub v3: Option<Box<crate::v3::V3Layout>>,
}

/// Metadata keys that are never shown as attributes.
const HIDDEN_ATTRS: [&str; 9] = [
    "_ARRAY_DIMENSIONS",
    "_nczarr_attr",
    "_NCZARR_ATTR",
    "_nczarr_array",
    "_NCZARR_ARRAY",
    "_nczarr_group",
    "_NCZARR_GROUP",
    "_nczarr_superblock",
    "_NCZARR_SUPERBLOCK",
];

/// True when stored attribute `name` is bookkeeping rather than an attribute of the data
/// model: one of [`HIDDEN_ATTRS`], or the root group's `_NCProperties`, whose text goes into
/// `info` instead.
pub(crate) fn is_bookkeeping(name: &str, v: &Value, root: bool, info: &mut FileInfo) -> bool {
    if HIDDEN_ATTRS.contains(&name) {
        return true;
    }
    if root && name == "_NCProperties" {
        info.nc_properties = Some(match v {
            Value::String(s) => s.clone(),
            other => json::compact(other),
        });
        return true;
    }
    false
}

/// The values of the `_FillValue` attribute among `atts`.
pub(crate) fn fill_attribute(atts: &[nc_dataset::Attribute]) -> Option<Values> {
    atts.iter()
        .find(|a| a.name == "_FillValue")
        .map(|a| a.values.clone())
}

/// How an array is stored: a scalar in one piece, anything else in chunks.
pub(crate) fn layout(scalar: bool) -> Layout {
    if scalar {
        Layout::Contiguous
    } else {
        Layout::Chunked
    }
}

fn lookup<'a>(objs: &[&'a Value], names: &[&str]) -> Option<&'a Value> {
    objs.iter()
        .find_map(|o| names.iter().find_map(|n| o.get(*n)))
}

pub(crate) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

pub(crate) struct Loader<'a> {
    store: &'a dyn Store,
    loc: &'a Opening<'a>,
    /// NCZarr metadata used for the structure (false: pure Zarr inference).
    nczarr: bool,
    /// NCZarr version 1 objects.
    v1: bool,
    /// All keys (pure Zarr walks).
    keys: Option<BTreeSet<String>>,
    pub ds: Dataset,
    pub vars: Vec<VarInfo>,
    /// Arrays left out, one sentence each naming the array, for the tools to print.
    pub warnings: Vec<String>,
}

/// The full netCDF path of variable `name` of group `gid`, for messages.
pub(crate) fn var_path(ds: &Dataset, gid: GroupId, name: &str) -> String {
    format!("{}/{}", ds.group_path(gid).trim_end_matches('/'), name)
}

/// Append variable `vid`'s entry to the table, which is filled in variable-id order (an
/// internal error at `meta_key` otherwise).
pub(crate) fn push_var(
    vars: &mut Vec<VarInfo>,
    vid: nc_dataset::VarId,
    meta_key: &str,
    info: VarInfo,
) -> Result<(), ZarrError> {
    if vars.len() != vid.0 {
        return Err(ZarrError::meta(
            meta_key,
            "internal: variable table out of step",
        ));
    }
    vars.push(info);
    Ok(())
}

pub(crate) fn get_json(store: &dyn Store, key: &str) -> Result<Option<Value>, ZarrError> {
    match store.get(key)? {
        Some(b) => json::parse(key, &b).map(Some),
        None => Ok(None),
    }
}

pub(crate) fn as_obj<'v>(key: &str, v: &'v Value) -> Result<&'v Map<String, Value>, ZarrError> {
    v.as_object()
        .ok_or_else(|| ZarrError::meta(key, "is not a JSON object"))
}

pub(crate) fn u64_list(key: &str, field: &str, v: Option<&Value>) -> Result<Vec<u64>, ZarrError> {
    let a = v
        .and_then(Value::as_array)
        .ok_or_else(|| ZarrError::meta(key, format!("\"{field}\" is missing or not an array")))?;
    if a.len() > MAX_RANK {
        return Err(ZarrError::meta(
            key,
            format!("\"{field}\" has more than {MAX_RANK} entries"),
        ));
    }
    a.iter()
        .map(|x| {
            x.as_u64().ok_or_else(|| {
                ZarrError::meta(
                    key,
                    format!("\"{field}\" holds {x}, not a non-negative integer"),
                )
            })
        })
        .collect()
}

impl<'a> Loader<'a> {
    /// Read the whole metadata tree.
    pub fn load(store: &'a dyn Store, loc: &'a Opening<'a>) -> Result<Loader<'a>, ZarrError> {
        // a store that is one array (zarr-python's `zarr.save(path, a)`): netCDF's root is a
        // group, so the array is the root group's one variable, named as the dataset is
        if get_json(store, ".zgroup")?.is_none() && store.get(".zarray")?.is_some() {
            let mut l = Loader::bare(store, loc, Dataset::new(loc.name), None);
            l.load_array("", ROOT, loc.name)?;
            return Ok(l);
        }
        let zgroup = match get_json(store, ".zgroup")? {
            Some(g) => g,
            // pure Zarr written without a root .zgroup (xarray did this): arrays mark the root
            None if store
                .list("")?
                .iter()
                .any(|k| k.ends_with("/.zarray") || k == ".zarray") =>
            {
                serde_json::json!({"zarr_format": 2})
            }
            None => {
                return Err(ZarrError::NotAStore {
                    path: loc.shown.to_string(),
                })
            }
        };
        as_obj(".zgroup", &zgroup)?;
        let zattrs = get_json(store, ".zattrs")?;
        let v1obj = get_json(store, ".nczarr")?;
        let sb = lookup(
            &[&zgroup, zattrs.as_ref().unwrap_or(&Value::Null)],
            &["_nczarr_superblock", "_NCZARR_SUPERBLOCK"],
        );
        let version = sb
            .and_then(|s| s.get("version"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                v1obj
                    .as_ref()
                    .and_then(|o| o.get("nczarr_version"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        let superblock = match &version {
            Some(v) => v
                .split('.')
                .next()
                .and_then(|m| m.trim().parse::<u32>().ok())
                .unwrap_or(2),
            None => 0,
        };
        let mut ds = Dataset::new(loc.name);
        ds.format = Some(Format::Netcdf4);
        ds.info = FileInfo {
            nc_properties: None,
            superblock_version: Some(superblock),
            is_netcdf4: Some(true),
        };
        let nczarr = version.is_some() && !loc.modes.pure_zarr;
        let keys = if nczarr {
            None
        } else {
            Some(store.list("")?.into_iter().collect())
        };
        let mut l = Loader::bare(store, loc, ds, keys);
        l.nczarr = nczarr;
        l.v1 = v1obj.is_some() && sb.is_none();
        l.load_group("", ROOT, zgroup, zattrs, 0)?;
        Ok(l)
    }

    /// A loader of pure Zarr metadata with nothing loaded yet.
    fn bare(
        store: &'a dyn Store,
        loc: &'a Opening<'a>,
        mut ds: Dataset,
        keys: Option<BTreeSet<String>>,
    ) -> Loader<'a> {
        ds.format = Some(Format::Netcdf4);
        Loader {
            store,
            loc,
            nczarr: false,
            v1: false,
            keys,
            ds,
            vars: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn children(&self, prefix: &str) -> (Vec<String>, Vec<String>) {
        let (mut vars, mut groups) = (Vec::new(), Vec::new());
        if let Some(keys) = &self.keys {
            let start = if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            };
            for k in keys.range(start.clone()..) {
                let Some(rest) = k.strip_prefix(&start) else {
                    break;
                };
                if let Some((name, tail)) = rest.split_once('/') {
                    match tail {
                        ".zarray" => vars.push(name.to_string()),
                        ".zgroup" => groups.push(name.to_string()),
                        _ => {}
                    }
                }
            }
        }
        (vars, groups)
    }

    fn group_meta(
        &self,
        prefix: &str,
        zgroup: &Value,
        zattrs: Option<&Value>,
    ) -> Result<Option<Value>, ZarrError> {
        if !self.nczarr {
            return Ok(None);
        }
        if let Some(g) = lookup(
            &[zgroup, zattrs.unwrap_or(&Value::Null)],
            &["_nczarr_group", "_NCZARR_GROUP"],
        ) {
            return Ok(Some(g.clone()));
        }
        if self.v1 {
            return get_json(self.store, &join(prefix, ".nczgroup"));
        }
        Ok(None)
    }

    fn attr_types(
        &self,
        prefix: &str,
        zattrs: Option<&Value>,
    ) -> Result<Map<String, Value>, ZarrError> {
        let from = |v: &Value| {
            v.get("types")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        if let Some(a) = zattrs.and_then(|z| lookup(&[z], &["_nczarr_attr", "_NCZARR_ATTR"])) {
            return Ok(from(a));
        }
        for name in [".nczattrs", ".nczattr"] {
            if let Some(v) = get_json(self.store, &join(prefix, name))? {
                return Ok(from(&v));
            }
        }
        Ok(Map::new())
    }

    /// The attributes of a `.zattrs` object (hidden keys and, for the root, `_NCProperties`
    /// left out); `fill_type` types `_FillValue`.
    fn attributes(
        &mut self,
        prefix: &str,
        zattrs: Option<&Value>,
        fill_type: Option<AtomicType>,
        root: bool,
    ) -> Result<Vec<nc_dataset::Attribute>, ZarrError> {
        let Some(z) = zattrs else {
            return Ok(Vec::new());
        };
        let key = join(prefix, ".zattrs");
        let obj = as_obj(&key, z)?;
        let types = self.attr_types(prefix, zattrs)?;
        let mut out = Vec::new();
        for (name, v) in obj {
            if is_bookkeeping(name, v, root, &mut self.ds.info) {
                continue;
            }
            // the type NCZarr recorded; `_FillValue` without one is the variable's type. A
            // `_FillValue` of another type is kept as written (NCO leaves a float one on a
            // short variable): it is then not the variable's fill value (see `load_array`)
            let declared = types.get(name).and_then(Value::as_str).and_then(attr_type);
            let ty = match declared {
                None if name == "_FillValue" => fill_type,
                d => d,
            };
            out.push(attrs::from_json(name, v, ty));
        }
        Ok(out)
    }

    fn load_group(
        &mut self,
        prefix: &str,
        gid: GroupId,
        zgroup: Value,
        zattrs: Option<Value>,
        depth: usize,
    ) -> Result<(), ZarrError> {
        if depth > MAX_DEPTH {
            return Err(ZarrError::meta(
                &join(prefix, ".zgroup"),
                format!("groups nested deeper than {MAX_DEPTH}"),
            ));
        }
        let gkey = join(prefix, ".zgroup");
        if let Some(f) = zgroup.get("zarr_format") {
            if f.as_u64() != Some(2) {
                return Err(ZarrError::meta(
                    &gkey,
                    format!("zarr_format {f} is not 2 (only Zarr version 2 is supported)"),
                ));
            }
        }
        let gmeta = self.group_meta(prefix, &zgroup, zattrs.as_ref())?;
        let (vars, groups) = match &gmeta {
            Some(g) => {
                let dims = g.get("dims").or_else(|| g.get("dimensions"));
                if let Some(dims) = dims.and_then(Value::as_object) {
                    for (name, d) in dims {
                        let (len, unlimited) = dim_entry(d).ok_or_else(|| {
                            ZarrError::meta(
                                &gkey,
                                format!(
                                    "dimension \"{name}\" has no size (expected a length or \
                                     {{\"size\": n, \"unlimited\": 1}})"
                                ),
                            )
                        })?;
                        self.ds.add_dim(gid, name.clone(), len, unlimited);
                    }
                }
                let names = |k: &str| -> Vec<String> {
                    g.get(k)
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let vars = if g.get("vars").is_some() {
                    names("vars")
                } else {
                    names("arrays")
                };
                (vars, names("groups"))
            }
            None => {
                if self.keys.is_none() {
                    self.keys = Some(self.store.list("")?.into_iter().collect());
                }
                self.children(prefix)
            }
        };
        let atts = self.attributes(prefix, zattrs.as_ref(), None, gid == ROOT)?;
        self.ds.group_mut(gid).atts = atts;
        for v in vars {
            crate::store::check_key(&v)?;
            self.load_var(prefix, gid, &v)?;
        }
        for g in groups {
            crate::store::check_key(&g)?;
            let gp = join(prefix, &g);
            let zg = get_json(self.store, &join(&gp, ".zgroup"))?.ok_or_else(|| {
                ZarrError::meta(&join(&gp, ".zgroup"), "group listed but missing")
            })?;
            let za = get_json(self.store, &join(&gp, ".zattrs"))?;
            let child = self.ds.add_group(gid, g.clone());
            self.load_group(&gp, child, zg, za, depth + 1)?;
        }
        Ok(())
    }

    /// A dimension path of `dimrefs` (`/g/x`) resolved.
    fn resolve_dim(&self, path: &str) -> Option<DimId> {
        let mut parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let name = parts.pop()?;
        let mut g = ROOT;
        for p in parts {
            g = self.ds.find_group(g, p)?;
        }
        self.ds
            .group(g)
            .dims
            .iter()
            .copied()
            .find(|d| self.ds.dim(*d).name == name)
    }

    fn root_dim(&mut self, key: &str, name: &str, len: u64) -> Result<DimId, ZarrError> {
        if let Some(d) = self.ds.find_dim(ROOT, name) {
            let have = self.ds.dim(d).len;
            if have != len {
                return Err(ZarrError::meta(
                    key,
                    format!(
                        "dimension \"{name}\" has length {len} here but {have} in another array"
                    ),
                ));
            }
            return Ok(d);
        }
        Ok(self.ds.add_dim(ROOT, name.to_string(), len, false))
    }

    fn load_var(&mut self, prefix: &str, gid: GroupId, name: &str) -> Result<(), ZarrError> {
        self.load_array(&join(prefix, name), gid, name)
    }

    /// The array whose metadata is at store key `vkey` (`""`: the store's root) as variable
    /// `name` of group `gid`.
    fn load_array(&mut self, vkey: &str, gid: GroupId, name: &str) -> Result<(), ZarrError> {
        let vkey = vkey.to_string();
        let akey = join(&vkey, ".zarray");
        let zarray = get_json(self.store, &akey)?
            .ok_or_else(|| ZarrError::meta(&akey, "array listed but missing"))?;
        let obj = as_obj(&akey, &zarray)?;
        let zattrs = get_json(self.store, &join(&vkey, ".zattrs"))?;
        if let Some(f) = obj.get("zarr_format") {
            if f.as_u64() != Some(2) {
                return Err(ZarrError::meta(&akey, format!("zarr_format {f} is not 2")));
            }
        }
        let shape = u64_list(&akey, "shape", obj.get("shape"))?;
        let chunks = u64_list(&akey, "chunks", obj.get("chunks"))?;
        if chunks.len() != shape.len() {
            return Err(ZarrError::meta(
                &akey,
                format!(
                    "chunks has {} entries but shape has {}",
                    chunks.len(),
                    shape.len()
                ),
            ));
        }
        if chunks.contains(&0) {
            return Err(ZarrError::meta(&akey, "a chunk length is 0"));
        }
        let dts = obj.get("dtype").and_then(Value::as_str).ok_or_else(|| {
            ZarrError::meta(
                &akey,
                "\"dtype\" is missing or not a string (structured dtypes are not supported)",
            )
        })?;
        let dtype = Dtype::parse(dts).map_err(|why| ZarrError::Dtype {
            key: akey.clone(),
            dtype: dts.to_string(),
            why,
        })?;
        let mut filters = obj.get("filters").cloned().unwrap_or(Value::Null);
        if dtype.kind == Kind::VlenUtf8 {
            // the vlen-utf8 (or vlen-bytes, same framing) filter, first applied on write and
            // last undone on read, is the object array's element encoding, decoded by the
            // reader itself; other object encodings (json2, pickle, msgpack, vlen-array) hold
            // values netCDF has no type for: that array is left out, said, and the rest read
            match strip_vlen_strings(&filters) {
                Some(rest) => filters = rest,
                None => {
                    let codec = filters
                        .as_array()
                        .and_then(|l| l.first())
                        .and_then(|f| f.get("id"))
                        .and_then(Value::as_str)
                        .unwrap_or("none");
                    self.warnings.push(format!(
                        "array \"/{vkey}\" left out: an object array (dtype \"|O\") encoded \
                         with \"{codec}\" holds values netCDF has no type for (strings are read \
                         with \"vlen-utf8\" or \"vlen-bytes\")"
                    ));
                    return Ok(());
                }
            }
        }
        // chunk size must be addressable
        chunks
            .iter()
            .try_fold(dtype.size() as u64, |a, &c| a.checked_mul(c))
            .filter(|&n| n <= crate::store::MAX_OBJECT_SIZE)
            .ok_or_else(|| ZarrError::meta(&akey, "one chunk would exceed 4 GiB"))?;
        let fortran = match obj.get("order").and_then(Value::as_str) {
            None | Some("C") => false,
            Some("F") => true,
            Some(o) => {
                return Err(ZarrError::meta(
                    &akey,
                    format!("order {o:?} is neither \"C\" nor \"F\""),
                ))
            }
        };
        let sep = match obj.get("dimension_separator").and_then(Value::as_str) {
            None | Some(".") => '.',
            Some("/") => '/',
            Some(s) => {
                return Err(ZarrError::meta(
                    &akey,
                    format!("dimension_separator {s:?} is neither \".\" nor \"/\""),
                ))
            }
        };
        let t = dtype.atomic();
        let ctx = FilterContext::new(dtype.size(), &chunks);
        let codecs = zarr_to_chain(
            obj.get("compressor").unwrap_or(&Value::Null),
            &filters,
            &ctx,
        )
        .map_err(|e| ZarrError::meta(&akey, e.to_string()))?;

        // dimensions
        let ameta = if self.nczarr {
            match lookup(
                &[&zarray, zattrs.as_ref().unwrap_or(&Value::Null)],
                &["_nczarr_array", "_NCZARR_ARRAY"],
            ) {
                Some(a) => Some(a.clone()),
                None if self.v1 => get_json(self.store, &join(&vkey, ".nczarray"))?,
                None => None,
            }
        } else {
            None
        };
        let mut scalar = shape.is_empty();
        let mut dims: Option<Vec<DimId>> = None;
        if let Some(a) = &ameta {
            // 2.x: storage "scalar"; 4.10: "scalar": 1
            scalar = a.get("storage").and_then(Value::as_str) == Some("scalar")
                || a.get("scalar")
                    .is_some_and(|s| s.as_u64() == Some(1) || s.as_bool() == Some(true));
            let refs = a.get("dimrefs").or_else(|| a.get("dimension_references"));
            if let Some(refs) = refs.and_then(Value::as_array) {
                if refs.is_empty() && shape == [1] {
                    scalar = true;
                }
                if !scalar {
                    let mut ids = Vec::new();
                    for r in refs {
                        let p = r.as_str().unwrap_or("");
                        match self.resolve_dim(p) {
                            Some(d) => ids.push(d),
                            None => {
                                return Err(ZarrError::meta(
                                    &akey,
                                    format!("dimrefs names {r}, which no group defines"),
                                ))
                            }
                        }
                    }
                    if ids.len() != shape.len() {
                        return Err(ZarrError::meta(
                            &akey,
                            format!("{} dimrefs for a shape of rank {}", ids.len(), shape.len()),
                        ));
                    }
                    for (d, &n) in ids.iter().zip(&shape) {
                        let dim = self.ds.dim(*d);
                        if dim.unlimited {
                            // an unlimited dimension is as long as its longest variable;
                            // a shorter variable reads as fill past its own records
                            if n > dim.len {
                                self.ds.dims[d.0].len = n;
                            }
                            continue;
                        }
                        if self.ds.dim(*d).len != n {
                            return Err(ZarrError::meta(
                                &akey,
                                format!(
                                    "shape {n} disagrees with dimension \"{}\" of length {}",
                                    self.ds.dim(*d).name,
                                    self.ds.dim(*d).len
                                ),
                            ));
                        }
                    }
                    dims = Some(ids);
                }
            }
        }
        if dims.is_none() && !scalar {
            let xdims = if self.loc.modes.xarray {
                zattrs
                    .as_ref()
                    .and_then(|z| z.get("_ARRAY_DIMENSIONS"))
                    .and_then(Value::as_array)
                    .and_then(|a| {
                        a.iter()
                            .map(|x| x.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                    })
            } else {
                None
            };
            match xdims {
                // netCDF-C 4.10 names a scalar's dimension "_scalar_"
                Some(names) if shape == [1] && (names.is_empty() || names == ["_scalar_"]) => {
                    scalar = true
                }
                Some(names) if names.len() == shape.len() => {
                    let mut ids = Vec::new();
                    for (n, &len) in names.iter().zip(&shape) {
                        ids.push(self.root_dim(&akey, n, len)?);
                    }
                    dims = Some(ids);
                }
                _ => {
                    let mut ids = Vec::new();
                    for &len in &shape {
                        ids.push(self.root_dim(&akey, &format!("_zdim_{len}"), len)?);
                    }
                    dims = Some(ids);
                }
            }
        }
        if scalar && !shape.is_empty() && shape != [1] {
            return Err(ZarrError::meta(&akey, "a scalar must have shape [1]"));
        }
        let vid = self.ds.add_var(
            gid,
            name.to_string(),
            NcType::Atomic(t),
            dims.unwrap_or_default(),
        );
        let atts = self.attributes(&vkey, zattrs.as_ref(), Some(t), false)?;

        // fill value
        let fv = obj.get("fill_value").unwrap_or(&Value::Null);
        // a `_FillValue` of another type than the variable's is no fill value of it: netCDF-C
        // then fills with (and ncdump compares with) the type's default
        let any_fill_attr = fill_attribute(&atts);
        let has_fill_attr = any_fill_attr.is_some();
        let fill_attr = any_fill_attr.filter(|f| f.atomic_type() == Some(t));
        let fill_vals = if fv.is_null() {
            fill_attr.clone().unwrap_or_else(|| default_fill(t))
        } else {
            fill_from_json(fv, &dtype)
                .unwrap_or_else(|| fill_attr.clone().unwrap_or_else(|| default_fill(t)))
        };
        let fill = encode_one(&fill_vals, &dtype);
        // pure Zarr: `fill_value` is the array's fill value (xarray reads it as `_FillValue`,
        // netCDF-C shows no attribute for it): kept in the storage settings when it is not
        // netCDF's default, so that a Zarr copy writes it again
        let stored_fill = (!self.nczarr
            && !has_fill_attr
            && !fv.is_null()
            && matches!(dtype.kind, Kind::Num(_) | Kind::Half)
            && fill != encode_one(&default_fill(t), &dtype))
        .then(|| fill_from_json(fv, &dtype))
        .flatten();

        let var = self.ds.var_mut(vid);
        var.atts = atts;
        let known: Vec<_> = codecs.iter().filter_map(|c| c.spec.clone()).collect();
        let codec_text = (!codecs.is_empty()).then(|| {
            let parts: Vec<String> = codecs.iter().map(|c| json::compact(&c.json)).collect();
            format!("[{}]", parts.join(","))
        });
        var.storage = Storage {
            layout: Some(layout(scalar)),
            chunk_sizes: (!scalar).then(|| chunks.clone()),
            shard_sizes: None,
            filters: known,
            codecs: codec_text,
            endianness: dtype.endianness(),
            no_fill: fv.is_null().then_some(true),
            quantize: None,
            fill_value: stored_fill,
        };
        let path = var_path(&self.ds, gid, name);
        push_var(
            &mut self.vars,
            vid,
            &akey,
            VarInfo {
                key: vkey,
                path,
                dtype,
                shape,
                chunks,
                fill,
                fortran,
                sep,
                codecs,
                v3: None,
            },
        )
    }
}

/// A dimension of `_nczarr_group`: a length (number or numeric text), or netCDF-C 4.9.3 /
/// 4.10's `{"size": n, "unlimited": 1}`. The length and whether it is unlimited.
fn dim_entry(d: &Value) -> Option<(u64, bool)> {
    if let Some(obj) = d.as_object() {
        let len = obj.get("size").and_then(|s| {
            s.as_u64()
                .or_else(|| s.as_str().and_then(|t| t.trim().parse().ok()))
        })?;
        let unlimited = obj.get("unlimited").is_some_and(|u| {
            u.as_u64().is_some_and(|n| n != 0)
                || u.as_bool() == Some(true)
                || u.as_str()
                    .is_some_and(|t| t.trim() != "0" && !t.trim().is_empty())
        });
        return Some((len, unlimited));
    }
    d.as_u64()
        .or_else(|| d.as_str().and_then(|s| s.trim().parse().ok()))
        .map(|n| (n, false))
}

/// netCDF-C (4.9.0 and 4.10) prints fill values with 6 significant digits, so a default
/// float or double fill comes back as `9.96921e+36`: read that as the default fill, or
/// every element never written would no longer read as fill.
fn snap_default_fill(x: f64, t: AtomicType) -> f64 {
    let d = match t {
        AtomicType::Float => f64::from(nc_dataset::FILL_FLOAT),
        _ => nc_dataset::FILL_DOUBLE,
    };
    if x != d && x.is_finite() && ((x - d) / d).abs() < 1e-6 {
        d
    } else {
        x
    }
}

pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        buf = (buf << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
        }
    }
    Some(out)
}

/// The fill value of `.zarray` as one netCDF value (None when it cannot be read).
fn fill_from_json(v: &Value, d: &Dtype) -> Option<Values> {
    match d.kind {
        Kind::Num(t) => {
            if matches!(t, AtomicType::Float | AtomicType::Double) {
                let x = snap_default_fill(as_f64(v)?, t);
                return Some(if t == AtomicType::Float {
                    Values::Float(vec![x as f32])
                } else {
                    Values::Double(vec![x])
                });
            }
            attrs::numbers(v, t).filter(|x| x.len() == 1)
        }
        // the half it is, as a float
        Kind::Half => {
            let h = crate::convert::f32_to_f16(as_f64(v)? as f32);
            Some(Values::Float(vec![crate::convert::f16_to_f32(h)]))
        }
        Kind::Char => {
            let s = v.as_str()?;
            let b = match s.len() {
                0 => 0,
                1 => s.as_bytes()[0],
                _ => base64_decode(s)
                    .and_then(|b| b.first().copied())
                    .unwrap_or(0),
            };
            Some(Values::Char(vec![b]))
        }
        Kind::Bytes(_) | Kind::Unicode(_) => Some(Values::String(vec![Some(v.as_str()?.into())])),
        // an object array's fill is the empty string (slot 0)
        Kind::VlenUtf8 => None,
    }
}

/// `filters` without its first entry when that is `{"id": "vlen-utf8"}` or `{"id":
/// "vlen-bytes"}` (None otherwise).
fn strip_vlen_strings(filters: &Value) -> Option<Value> {
    let list = filters.as_array()?;
    let (first, rest) = list.split_first()?;
    let id = first.get("id").and_then(Value::as_str);
    matches!(id, Some("vlen-utf8" | "vlen-bytes")).then(|| {
        if rest.is_empty() {
            Value::Null
        } else {
            Value::Array(rest.to_vec())
        }
    })
}

/// One value in stored form (`dtype` size bytes).
pub(crate) fn encode_one(v: &Values, d: &Dtype) -> Vec<u8> {
    let mut out = Vec::with_capacity(d.size());
    crate::convert::encode(v, d, &mut out);
    out.resize(d.size(), 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dimension_entries() {
        assert_eq!(dim_entry(&json!(3)), Some((3, false)));
        assert_eq!(dim_entry(&json!("4")), Some((4, false)));
        assert_eq!(
            dim_entry(&json!({"size": 0, "unlimited": 1})),
            Some((0, true))
        );
        assert_eq!(
            dim_entry(&json!({"size": 5, "unlimited": 0})),
            Some((5, false))
        );
        assert_eq!(dim_entry(&json!({"size": 2})), Some((2, false)));
        assert_eq!(dim_entry(&json!({"unlimited": 1})), None);
        assert_eq!(dim_entry(&json!([1])), None);
    }

    #[test]
    fn six_digit_default_fill_reads_as_the_default() {
        let d = Dtype::parse("<f8").unwrap();
        assert_eq!(
            fill_from_json(&json!(9.96921e36), &d),
            Some(Values::Double(vec![nc_dataset::FILL_DOUBLE]))
        );
        assert_eq!(
            fill_from_json(&json!(9.969e36), &d),
            Some(Values::Double(vec![9.969e36]))
        );
        let f = Dtype::parse("<f4").unwrap();
        assert_eq!(
            fill_from_json(&json!(9.96921e36), &f),
            Some(Values::Float(vec![nc_dataset::FILL_FLOAT]))
        );
    }
}
