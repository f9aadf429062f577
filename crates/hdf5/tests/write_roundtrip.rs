//! The netCDF-4 writer: our files read back with our reader (values, storage settings), the
//! classic-model mark, missing filters, and bounded memory for data bigger than what we hold.

// test code: a failed expectation is the test failing
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use nc_dataset::Slab;
use std::path::{Path, PathBuf};
use std::process::Command;

use nc_dataset::{
    AtomicType, DataError, DataSource, Dataset, FilterSpec, InMemory, Layout, NcString, Values,
    VarId, ROOT,
};
use nc_hdf5::{write_file, Nc4File, Nc4WriteOptions};

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nc-hdf5-write-{}-{name}", std::process::id()))
}

fn parse(cdl: &str) -> Dataset {
    nc_cdl::parse_cdl(cdl, "test.cdl", &nc_cdl::ParseOptions::default()).unwrap()
}

fn ncgen_opts() -> Nc4WriteOptions {
    Nc4WriteOptions {
        classic_model: false,
        fill: true,
        only_given_data: true,
    }
}

/// Every variable of `ds` reads back from `path` with the values `InMemory` gives.
fn assert_reads_back(ds: &Dataset, path: &Path) {
    let file = Nc4File::open(path).unwrap();
    let back = file.dataset();
    for v in ds.all_vars() {
        let var = ds.var(v);
        let group = back
            .groups
            .iter()
            .position(|g| g.name == ds.group(var.group).name)
            .map(nc_dataset::GroupId)
            .unwrap();
        let bv = back
            .find_var(group, &var.name)
            .unwrap_or_else(|| panic!("variable {} missing", var.name));
        assert_eq!(back.shape(bv), ds.shape(v), "shape of {}", var.name);
        let shape = ds.shape(v);
        let want = InMemory
            .read(ds, v, Slab::new(&vec![0; shape.len()], &shape))
            .unwrap();
        let got = file.read_var(bv, &vec![0; shape.len()], &shape).unwrap();
        assert_eq!(got, want, "values of {}", var.name);
        let atts: Vec<_> = back
            .var(bv)
            .atts
            .iter()
            .map(|a| (&a.name, &a.values))
            .collect();
        let want_atts: Vec<_> = var.atts.iter().map(|a| (&a.name, &a.values)).collect();
        assert_eq!(atts, want_atts, "attributes of {}", var.name);
    }
}

const MANY: &str = r#"netcdf many {
types:
  byte enum color { red = 1, green = 2 } ;
  compound pair { short a ; int b(2) ; } ;
  opaque(3) blob ;
dimensions:
  x = 5 ;
  y = 3 ;
  t = UNLIMITED ;
  t2 = UNLIMITED ;
variables:
  float x(x) ;
    x:units = "m" ;
  int v(t, x) ;
    v:_FillValue = -1 ;
    v:vals = 1s, 2s ;
    v:_ChunkSizes = 2, 2 ;
  double d(y, x) ;
    d:_DeflateLevel = 4 ;
    d:_Shuffle = "true" ;
    d:_Fletcher32 = "true" ;
    d:_ChunkSizes = 2, 4 ;
  short be(x) ;
    be:_Endianness = "big" ;
  ubyte small(y) ;
    small:_Storage = "compact" ;
  int64 s ;
  string names(y) ;
  char c(y, x) ;
  color col(y) ;
  pair p(y) ;
  blob b(y) ;
  int mm(t, t2) ;
  uint64 u(x) ;
    u:_Endianness = "big" ;
    u:_DeflateLevel = 1 ;
  :title = "many things" ;
  :nums = 1.5, 2.5 ;
  string :strs = "a", "bc" ;
  string x:labels = "p", "qr" ;
data:
  x = 1, 2, 3, 4, 5 ;
  v = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 ;
  d = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 ;
  be = -1, 2, -3, 4, -5 ;
  small = 7, 8, 9 ;
  s = -42 ;
  names = "one", "", "three" ;
  c = "hello", "world", "abc" ;
  col = red, green, red ;
  p = {1, {2, 3}}, {4, {5, 6}}, {7, {8, 9}} ;
  b = 0x010203, 0x040506, 0x070809 ;
  u = 1, 18446744073709551615, 3, 4, 5 ;
  mm = {1, 2}, {3, 4}, {5, 6} ;
}
"#;

#[test]
fn our_files_read_back_with_our_reader() {
    let ds = parse(MANY);
    let path = tmp("many.nc");
    write_file(&path, &ds, &InMemory, &ncgen_opts()).unwrap();
    assert_reads_back(&ds, &path);
    let file = Nc4File::open(&path).unwrap();
    let back = file.dataset();
    let st = |name: &str| back.var(back.find_var(ROOT, name).unwrap()).storage.clone();
    assert_eq!(st("v").layout, Some(Layout::Chunked));
    assert_eq!(st("v").chunk_sizes, Some(vec![2, 2]));
    assert_eq!(st("x").layout, Some(Layout::Contiguous));
    assert_eq!(st("small").layout, Some(Layout::Compact));
    let ids: Vec<u32> = st("d").filters.iter().map(|f| f.id).collect();
    assert_eq!(ids, vec![3, 2, 1]);
    assert_eq!(st("be").endianness, Some(nc_dataset::Endianness::Big));
    assert_eq!(back.info.superblock_version, Some(2));
    assert_eq!(back.format, Some(nc_dataset::Format::Netcdf4));
    let root = &back.groups[0];
    let att = |n: &str| {
        root.atts
            .iter()
            .find(|a| a.name == n)
            .unwrap()
            .values
            .clone()
    };
    assert_eq!(att("title"), Values::Char(b"many things".to_vec()));
    assert_eq!(att("nums"), Values::Double(vec![1.5, 2.5]));
    assert_eq!(
        att("strs"),
        Values::String(vec![Some("a".into()), Some("bc".into())])
    );
    std::fs::remove_file(&path).ok();
}

#[test]
fn netcdf_c_sees_the_classic_model_and_our_properties() {
    if !Path::new("/usr/bin/ncdump").exists() {
        eprintln!("skipping: /usr/bin/ncdump not installed");
        return;
    }
    let ds = parse("netcdf c { dimensions: n = 2 ; variables: int v(n) ; data: v = 1, 2 ; }");
    let path = tmp("classic.nc");
    let opts = Nc4WriteOptions {
        classic_model: true,
        ..ncgen_opts()
    };
    write_file(&path, &ds, &InMemory, &opts).unwrap();
    let k = Command::new("/usr/bin/ncdump")
        .arg("-k")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&k.stdout),
        "netCDF-4 classic model\n"
    );
    let s = Command::new("/usr/bin/ncdump")
        .arg("-hs")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&s.stdout).to_string();
    assert!(
        text.contains(&format!(
            ":_NCProperties = \"{}\" ;",
            nc_hdf5::write::NC_PROPERTIES
        )),
        "{text}"
    );
    assert!(text.contains(":_SuperblockVersion = 2 ;"), "{text}");
    std::fs::remove_file(&path).ok();
}

#[test]
fn a_missing_filter_fails_only_when_there_is_data_to_encode() {
    let mut ds = parse("netcdf m { dimensions: n = 4 ; variables: int v(n) ; }");
    let v = ds.find_var(ROOT, "v").unwrap();
    ds.var_mut(v).storage.filters = vec![FilterSpec {
        id: 40000,
        params: vec![1, 2],
    }];
    // no data: the pipeline message is written, reads give the fill value
    let path = tmp("missing.nc");
    write_file(&path, &ds, &InMemory, &ncgen_opts()).unwrap();
    let file = Nc4File::open(&path).unwrap();
    let back = file.dataset();
    let bv = back.find_var(ROOT, "v").unwrap();
    assert_eq!(
        back.var(bv).storage.filters,
        vec![FilterSpec {
            id: 40000,
            params: vec![1, 2]
        }]
    );
    // with data: a clear error naming the variable and the filter
    ds.var_mut(v).data = Some(Values::Int(vec![1, 2, 3, 4]));
    let err = write_file(&path, &ds, &InMemory, &ncgen_opts()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("variable \"v\" needs filter 40000") && msg.contains("HDF5_PLUGIN_PATH"),
        "{msg}"
    );
    std::fs::remove_file(&path).ok();
}

/// A source that makes values on the fly: element i of `big` is i as int.
struct Counting;

impl DataSource for Counting {
    fn read(&self, _ds: &Dataset, _var: VarId, slab: Slab) -> Result<Values, DataError> {
        let Slab { start, count } = slab;

        // 2-D [rows, cols]: row-major
        let cols = COLS;
        let mut out = Vec::with_capacity((count[0] * count[1]) as usize);
        for r in start[0]..start[0] + count[0] {
            for c in start[1]..start[1] + count[1] {
                out.push((r * cols + c) as i32);
            }
        }
        Ok(Values::Int(out))
    }
}

const ROWS: u64 = 8192;
const COLS: u64 = 4096;

fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn large_variables_are_written_chunk_by_chunk() {
    // peak RSS is per process: measure in a child running only this test
    if std::env::var_os("NC_HDF5_BIG_CHILD").is_none() {
        let st = Command::new(std::env::current_exe().unwrap())
            .args([
                "large_variables_are_written_chunk_by_chunk",
                "--exact",
                "--test-threads",
                "1",
            ])
            .env("NC_HDF5_BIG_CHILD", "1")
            .status()
            .unwrap();
        assert!(st.success(), "the child test failed");
        return;
    }
    // 8192 x 4096 ints = 128 MiB of data, deflated in 1 MiB chunks; memory must stay far
    // below the variable's size
    let mut ds = Dataset::new("big");
    let r = ds.add_dim(ROOT, "r", ROWS, true);
    let c = ds.add_dim(ROOT, "c", COLS, false);
    let v = ds.add_var(ROOT, "big", AtomicType::Int.into(), vec![r, c]);
    ds.var_mut(v).storage.chunk_sizes = Some(vec![64, 4096]);
    ds.var_mut(v).storage.filters = vec![FilterSpec {
        id: 1,
        params: vec![1],
    }];
    let path = tmp("big.nc");
    let before = peak_rss_kib();
    let opts = Nc4WriteOptions {
        fill: true,
        ..Default::default()
    };
    write_file(&path, &ds, &Counting, &opts).unwrap();
    if let (Some(b), Some(a)) = (before, peak_rss_kib()) {
        let grown_mib = a.saturating_sub(b) / 1024;
        assert!(grown_mib < 64, "peak RSS grew by {grown_mib} MiB");
    }
    let file = Nc4File::open(&path).unwrap();
    let bv = file.dataset().find_var(ROOT, "big").unwrap();
    assert_eq!(file.dataset().shape(bv), vec![ROWS, COLS]);
    let got = file.read_var(bv, &[ROWS - 1, COLS - 3], &[1, 3]).unwrap();
    let last = (ROWS * COLS) as i32;
    assert_eq!(got, Values::Int(vec![last - 3, last - 2, last - 1]));
    std::fs::remove_file(&path).ok();
}

/// Strings whose bytes are not UTF-8 (issue 14), in each place the writer puts strings: data,
/// a fill value, attributes alone, with a NIL and on the root group, a compound field.
const NOT_UTF8: &str = r#"netcdf b {
types:
  compound cs { int i ; string s ; } ;
dimensions:
  n = 3 ;
variables:
  string v(n) ;
    string v:one = "\351" ;
    string v:two = "ok", "x\377y" ;
    string v:nil = "\376", NIL ;
    string v:_FillValue = "\377" ;
  cs c(n) ;
  string :g = "caf\351" ;
data:
  v = "\377\376", _, "ok" ;
  c = {1, "\351"}, {2, "ok"}, {3, ""} ;
}
"#;

#[test]
fn strings_that_are_not_utf8_are_written_as_their_bytes() {
    let ds = parse(NOT_UTF8);
    let v = ds.find_var(ROOT, "v").unwrap();
    // the escapes are bytes in the model, not text
    assert_eq!(
        ds.var(v).data,
        Some(Values::String(vec![
            Some(NcString::from_bytes(b"\xff\xfe".to_vec())),
            Some(NcString::from_bytes(b"\xff".to_vec())),
            Some("ok".into()),
        ]))
    );
    let path = tmp("not-utf8.nc");
    write_file(&path, &ds, &InMemory, &ncgen_opts()).unwrap();
    assert_reads_back(&ds, &path);
    let back = Nc4File::open(&path).unwrap();
    assert_eq!(
        back.dataset().groups[0].atts[0].values,
        Values::String(vec![Some(NcString::from_bytes(b"caf\xe9".to_vec()))])
    );
    if Path::new("/usr/bin/ncdump").exists() {
        let o = Command::new("/usr/bin/ncdump").arg(&path).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let name = path.file_stem().unwrap().to_str().unwrap();
        let mut want = format!("netcdf {name} {{\n").into_bytes();
        want.extend_from_slice(
            b"types:\n  compound cs {\n    int i ;\n    string s ;\n  }; // cs\n\
              dimensions:\n\tn = 3 ;\nvariables:\n\tstring v(n) ;\n\
              \t\tstring v:one = \"\xe9\" ;\n\
              \t\tstring v:two = \"ok\", \"x\xffy\" ;\n\
              \t\tstring v:nil = \"\xfe\", NIL ;\n\
              \t\tstring v:_FillValue = \"\xff\" ;\n\
              \tcs c(n) ;\n\n// global attributes:\n\t\tstring :g = \"caf\xe9\" ;\n\
              data:\n\n v = \"\xff\xfe\", _, \"ok\" ;\n\n \
              c = {1, \"\xe9\"}, {2, \"ok\"}, {3, \"\"} ;\n}\n",
        );
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&want)
        );
        assert_eq!(o.stdout, want, "netCDF-C reads the same bytes");
    }
    std::fs::remove_file(&path).ok();
}

/// A file opened from a byte source (as a remote object is) reads as the same file opened by
/// path: metadata, values, and corruption errors naming the source.
#[test]
fn a_byte_source_reads_as_the_file() {
    let ds = parse(
        "netcdf s { dimensions: t = UNLIMITED ; x = 5 ; variables: int v(t, x) ; v:_ChunkSizes = 1, 5 ; v:_DeflateLevel = 1 ; double w(x) ; w:units = \"m\" ; data: v = 1,2,3,4,5,6,7,8,9,10 ; w = 0.5, 1.5, 2.5, 3.5, 4.5 ; }",
    );
    let path = tmp("source.nc");
    write_file(&path, &ds, &InMemory, &ncgen_opts()).unwrap();
    let by_path = Nc4File::open(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let src = std::sync::Arc::new(nc_store::BytesSource::new(bytes.clone(), "mem://s.nc"));
    let by_src =
        Nc4File::open_source(src, "s", std::sync::Arc::new(nc_hdf5::chunk_decoder())).unwrap();
    assert_eq!(by_src.dataset().vars, by_path.dataset().vars);
    for v in by_path.dataset().all_vars() {
        let shape = by_path.dataset().shape(v);
        let start = vec![0; shape.len()];
        assert_eq!(
            by_src.read_var(v, &start, &shape).unwrap(),
            by_path.read_var(v, &start, &shape).unwrap()
        );
    }
    let cut = std::sync::Arc::new(nc_store::BytesSource::new(&bytes[..200], "mem://cut.nc"));
    let e = Nc4File::open_source(cut, "cut", std::sync::Arc::new(nc_hdf5::chunk_decoder()))
        .err()
        .unwrap();
    assert!(e.to_string().contains("mem://cut.nc"), "{e}");
    std::fs::remove_file(&path).unwrap();
}

/// Heap values (strings, vlens, a compound holding a string), string attributes and dimension
/// scales beside 64 MiB of raw data: the writer's after-close pass then finds its placeholders
/// without reading the variables' blocks, and every one must still be found and made real.
const HEAP_BESIDE_BIG_DATA: &str = r#"netcdf big_heap {
types:
  int(*) ragged ;
  compound cs { int i ; string s ; } ;
dimensions:
  r = 2048 ;
  c = 4096 ;
  n = 3 ;
variables:
  int big_c(r, c) ;
    big_c:_Storage = "contiguous" ;
    string big_c:units = "m", "s" ;
  int big_k(r, c) ;
    big_k:_ChunkSizes = 256, 4096 ;
    string big_k:note = "chunked" ;
  string s(n) ;
    string s:_FillValue = "none" ;
  ragged g(n) ;
  cs k(n) ;
  string :title = "heap values beside big data" ;
data:
  s = "one", _, "three" ;
  g = {1, 2}, {}, {3, 4, 5} ;
  k = {1, "a"}, {2, "bb"}, {3, ""} ;
}
"#;

/// `Counting` for the 2-D `big*` variables, the CDL's own values for the others.
struct BigOrGiven;

impl DataSource for BigOrGiven {
    fn read(&self, ds: &Dataset, var: VarId, slab: Slab) -> Result<Values, DataError> {
        let Slab { start, count } = slab;

        if ds.var(var).name.starts_with("big") {
            Counting.read(ds, var, Slab::new(start, count))
        } else {
            InMemory.read(ds, var, Slab::new(start, count))
        }
    }
}

#[test]
fn placeholders_are_found_beside_big_raw_data() {
    let ds = parse(HEAP_BESIDE_BIG_DATA);
    let path = tmp("big-heap.nc");
    let opts = Nc4WriteOptions {
        fill: true,
        ..Default::default()
    };
    write_file(&path, &ds, &BigOrGiven, &opts).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 64 << 20);
    let file = Nc4File::open(&path).unwrap();
    let back = file.dataset();
    for name in ["s", "g", "k"] {
        let v = ds.find_var(ROOT, name).unwrap();
        let bv = back.find_var(ROOT, name).unwrap();
        let want = InMemory.read(&ds, v, Slab::new(&[0], &[3])).unwrap();
        assert_eq!(
            file.read_var(bv, &[0], &[3]).unwrap(),
            want,
            "values of {name}"
        );
        assert_eq!(back.var(bv).atts, ds.var(v).atts, "attributes of {name}");
    }
    for name in ["big_c", "big_k"] {
        let v = ds.find_var(ROOT, name).unwrap();
        let bv = back.find_var(ROOT, name).unwrap();
        assert_eq!(back.var(bv).atts, ds.var(v).atts, "attributes of {name}");
        assert_eq!(back.var(bv).dims, ds.var(v).dims, "dimensions of {name}");
        let got = file.read_var(bv, &[2047, 4093], &[1, 3]).unwrap();
        let last = (2048 * COLS) as i32;
        assert_eq!(
            got,
            Values::Int(vec![last - 3, last - 2, last - 1]),
            "{name}"
        );
    }
    assert_eq!(back.group(ROOT).atts, ds.group(ROOT).atts);
    // netCDF-C reads the heap values, the attributes and the dimension scales too
    if Path::new("/usr/bin/ncdump").exists() {
        let out = Command::new("/usr/bin/ncdump")
            .args(["-v", "s,g,k"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cdl = String::from_utf8(out.stdout).unwrap();
        for want in [
            "\tint big_c(r, c) ;\n\t\tstring big_c:units = \"m\", \"s\" ;\n",
            "\tint big_k(r, c) ;\n\t\tstring big_k:note = \"chunked\" ;\n",
            "\t\tstring :title = \"heap values beside big data\" ;\n",
            "data:\n\n s = \"one\", _, \"three\" ;\n\n g = {1, 2}, {}, {3, 4, 5} ;\n\n k = {1, \"a\"}, {2, \"bb\"}, {3, \"\"} ;\n}\n",
        ] {
            assert!(cdl.contains(want), "ncdump lacks {want:?}:\n{cdl}");
        }
    } else {
        eprintln!("SKIPPED (ncdump part): /usr/bin/ncdump not installed");
    }
    std::fs::remove_file(&path).ok();
}
