//! Issue 16: Zarr version 3 stores written by zarr-python 3 — sharded and not, every codec it
//! ships (bytes in both byte orders, transpose, gzip, zstd, blosc, crc32c, numcodecs.*), the
//! data types netCDF holds, fill values in their JSON forms, both chunk key encodings,
//! consolidated metadata, nested groups with `dimension_names`, directory and zip stores —
//! are read with the values zarr-python reads: `nccopy-rs` copies each store to netCDF-4 and
//! netCDF4-python (netCDF-C 4.10.1) reads the copy against zarr-python's reading of the
//! store. `ncdump-rs -hs` shows the storage as it is (`_ChunkSizes` = inner chunks,
//! `_ShardSizes`, `_Codecs` = the v3 codec JSON). Corrupt shards are errors naming the
//! variable and the shard key, with the header still printed. Inputs are written at test
//! time (skipped with a SKIP line without zarr-python 3 / netCDF4-python).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::Path;

/// Run a Python script needing zarr-python 3 (and netCDF4 when `nc4`); false (with a SKIP
/// line) when a client is missing.
fn py(dir: &Path, nc4: bool, script: &str) -> Option<String> {
    let (probe, needs) = if nc4 {
        (
            "import zarr, numcodecs, netCDF4; assert int(zarr.__version__.split('.')[0]) >= 3",
            "zarr-python 3, numcodecs and netCDF4-python",
        )
    } else {
        (
            "import zarr, numcodecs; assert int(zarr.__version__.split('.')[0]) >= 3",
            "zarr-python 3 and numcodecs",
        )
    };
    python_script(dir, probe, needs, script).map(|o| String::from_utf8_lossy(&o).into_owned())
}

/// zarr-python 3 writes the stores: (store name, what it exercises).
const WRITE_STORES: &str = r#"
import zarr, numpy as np, numcodecs, warnings
import numcodecs.zarr3 as nz
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec,
                         TransposeCodec, VLenUTF8Codec, ZstdCodec)
warnings.simplefilter('ignore')
rng = np.random.default_rng(16)

def group(path):
    return zarr.open_group(path, mode='w', zarr_format=3)

# 1. sharded arrays: index at the end with crc32c (zarr-python's default), index at the start
#    without checksum, a partial last shard, inner chunks never written (fill), codecs on
#    whole shards, nested sharding
g = group('shard.zarr')
g.attrs['title'] = 'sharded'
a = g.create_array('temp', shape=(10, 12), chunks=(2, 3), shards=(4, 6), dtype='f4',
                   dimension_names=['y', 'x'], fill_value=np.nan,
                   compressors=ZstdCodec(level=3))
a[:] = rng.normal(size=(10, 12)).astype('f4')
a.attrs['units'] = 'K'
s = g.create_array('start', shape=(9, 7), dtype='i8', dimension_names=['r', 'c'],
                   fill_value=-5, compressors=None,
                   serializer=ShardingCodec(chunk_shape=(2, 2), index_location='start',
                                            codecs=[BytesCodec(endian='big'), GzipCodec(level=4)],
                                            index_codecs=[BytesCodec(endian='little')]),
                   chunks=(4, 4))
s[:5, :3] = np.arange(15).reshape(5, 3) - 7
p = g.create_array('partial', shape=(5, 7), chunks=(2, 2), shards=(4, 4), dtype='u2',
                   fill_value=7, dimension_names=['a', 'b'])
p[:3, :5] = np.arange(15, dtype='u2').reshape(3, 5)
sub = g.create_group('sub')
sub.attrs['level'] = 2
t = sub.create_array('t', shape=(12,), chunks=(3,), shards=(6,), dtype='f8',
                     dimension_names=['x'], compressors=BloscCodec(cname='lz4', clevel=5, shuffle='bitshuffle'))
t[:] = np.linspace(0, 1, 12)
# codecs on the whole shard (after sharding_indexed: the shard is read whole and decoded
# before its index), with a partial edge shard and unwritten inner chunks
w = g.create_array('whole', shape=(10, 12), chunks=(4, 6), dtype='f4', dimension_names=['y', 'x'],
                   fill_value=-1, compressors=[GzipCodec(level=6), Crc32cCodec()],
                   serializer=ShardingCodec(chunk_shape=(2, 3),
                                            codecs=[BytesCodec(), ZstdCodec(level=1)]))
w[:9, :11] = rng.normal(size=(9, 11)).astype('f4')
# nested sharding: outer index at the start, inner shards big-endian with a big-endian index
n = g.create_array('nested', shape=(17, 13), chunks=(8, 12), dtype='i2', dimension_names=['ny', 'nx'],
                   fill_value=-3, compressors=None,
                   serializer=ShardingCodec(chunk_shape=(4, 6), index_location='start',
                       codecs=[ShardingCodec(chunk_shape=(2, 3),
                                             codecs=[BytesCodec(endian='big'), GzipCodec(level=2)],
                                             index_codecs=[BytesCodec(endian='big')])]))
n[1:15, :10] = np.arange(140, dtype='i2').reshape(14, 10) - 70
# nested, with codecs on the inner shards and on the outer ones
m = sub.create_array('nestwhole', shape=(9,), chunks=(8,), dtype='u8', dimension_names=['nine'],
                     compressors=[BloscCodec(cname='zstd', clevel=1, shuffle='shuffle')],
                     serializer=ShardingCodec(chunk_shape=(4,),
                         codecs=[ShardingCodec(chunk_shape=(2,), codecs=[BytesCodec()]),
                                 ZstdCodec(level=2)]))
m[:] = np.arange(9, dtype='u8') * 1000003
# strings in shards compressed whole
st = sub.create_array('names', shape=(7,), chunks=(4,), dtype=str, dimension_names=['seven'],
                      compressors=[GzipCodec()],
                      serializer=ShardingCodec(chunk_shape=(2,), codecs=[VLenUTF8Codec(), ZstdCodec()]))
st[:6] = ['a', 'bb', '', 'dddd', 'é', 'f']

# 2. codecs and byte orders, unsharded
g = group('codecs.zarr')
a = g.create_array('tr', shape=(4, 6), chunks=(3, 4), dtype='i2', dimension_names=['y', 'x'],
                   filters=[TransposeCodec(order=[1, 0])],
                   serializer=BytesCodec(endian='big'),
                   compressors=[GzipCodec(level=5), Crc32cCodec()])
a[:] = np.arange(24, dtype='i2').reshape(4, 6) * 3 - 30
b = g.create_array('blosc', shape=(50,), chunks=(16,), dtype='f8', dimension_names=['n'],
                   compressors=BloscCodec(cname='zstd', clevel=3, shuffle='shuffle'))
b[:] = rng.normal(size=50)
c = g.create_array('delta', shape=(6,), dtype='i4', dimension_names=['m'],
                   filters=[nz.Delta(dtype='<i4')], compressors=[nz.Zlib(level=3)])
c[:] = [1, 2, 4, 8, 16, 32]
# numcodecs' 32-bit checksums, first (their default) and last
k = g.create_array('sums', shape=(3, 5), chunks=(2, 3), dtype='f4', dimension_names=['p', 'q'],
                   compressors=[nz.CRC32(), nz.Adler32(location='end'), nz.JenkinsLookup3(),
                                nz.Zstd(level=1)])
k[:] = np.arange(15, dtype='f4').reshape(3, 5) / 7
d = g.create_array('raw', shape=(3, 5), chunks=(2, 2), dtype='u4', compressors=None,
                   dimension_names=['p', 'q'], fill_value=4000000000)
d[:2, :] = np.arange(10, dtype='u4').reshape(2, 5)
e = g.create_array('v2keys', shape=(7,), chunks=(3,), dtype='i2', fill_value=-1,
                   chunk_key_encoding={'name': 'v2', 'separator': '.'}, dimension_names=['k'])
e[:5] = [1, 2, 3, 4, 5]
f = g.create_array('dotkeys', shape=(2, 3), chunks=(1, 2), dtype='u1',
                   chunk_key_encoding={'name': 'default', 'separator': '.'},
                   dimension_names=['two', 'three'])
f[:] = [[1, 2, 3], [4, 5, 6]]

# 3. data types, fill values, scalars
g = group('types.zarr')
for name, dt in [('i1', 'i1'), ('u1', 'u1'), ('i2', 'i2'), ('u2', 'u2'), ('i4', 'i4'),
                 ('u4', 'u4'), ('i8', 'i8'), ('u8', 'u8'), ('f4', 'f4'), ('f8', 'f8')]:
    x = g.create_array(name, shape=(4,), dtype=dt, dimension_names=['four'])
    info = np.iinfo(dt) if dt[0] in 'iu' else np.finfo(dt)
    x[:] = np.array([info.min, 0, 1, info.max], dtype=dt)
bl = g.create_array('bool', shape=(5,), chunks=(2,), dtype=bool, dimension_names=['five'])
bl[:] = [True, False, True, True, False]
st = g.create_array('str', shape=(3,), dtype=str, dimension_names=['three'])
st[:] = ['a', 'bé', 'ccc']
fb = g.create_array('fixed', shape=(3,), dtype='S4', dimension_names=['three'])
fb[:] = [b'ab', b'cdef', b'']
u = g.create_array('ucs', shape=(3,), dtype='U3', dimension_names=['three'])
u[:] = ['x', 'yz', 'élé']
ch = g.create_array('chars', shape=(4,), dtype='S1', dimension_names=['four'])
ch[:] = [b'a', b'b', b'c', b'd']
nf = g.create_array('nanfill', shape=(4,), chunks=(2,), dtype='f8', fill_value=np.nan,
                    dimension_names=['four'])
nf[:2] = [1.5, 2.5]
hf = g.create_array('half', shape=(5,), chunks=(2,), dtype='float16', fill_value=0.1,
                    dimension_names=['five'])
hf[:3] = np.array([1.5, -2.25, 65504], dtype='float16')
uc = g.create_array('uc1', shape=(5,), chunks=(2,), dtype='U1', fill_value='z',
                    dimension_names=['five'])
uc[:3] = ['a', 'b', 'c']
sc = g.create_array('scalar', shape=(), dtype='i4', fill_value=-9)
sc[...] = 42
zarr.consolidate_metadata('types.zarr')

# 4. a zip store
from zarr.storage import ZipStore
zs = ZipStore('zipped.zip', mode='w')
z = zarr.open_group(zs, mode='w', zarr_format=3)
x = z.create_array('x', shape=(8,), chunks=(2,), shards=(4,), dtype='f8', dimension_names=['t'])
x[:] = np.arange(8) / 4
zs.close()
print('written')
"#;

/// netCDF4-python reads each copy `<store>.nc` and compares it with zarr-python's reading of
/// the store: every array (variable path, values, fill where unwritten, dimension names and
/// lengths). Prints one line per store.
const COMPARE: &str = r#"
import zarr, numpy as np, netCDF4, warnings, sys
warnings.simplefilter('ignore')

def arrays(g, prefix=''):
    for name, a in g.arrays():
        yield prefix + '/' + name, a
    for name, sub in g.groups():
        yield from arrays(sub, prefix + '/' + name)

for store in sys.argv[1:]:
    src = store + '.nc'
    g = zarr.open_group(zarr.storage.ZipStore(store, mode='r') if store.endswith('.zip') else store, mode='r')
    nc = netCDF4.Dataset(src)
    nc.set_auto_mask(False)
    n = 0
    for path, a in arrays(g):
        v = nc[path]
        want = a[...]
        got = v[...]
        if want.dtype.kind == 'b':
            want = want.astype('u1')
        if want.dtype.kind in 'SU':
            want = np.array([x.decode() if isinstance(x, bytes) else str(x) for x in want.ravel()]).reshape(want.shape)
            if v.dtype == 'S1':
                got = np.array([x.decode() for x in got.ravel()]).reshape(got.shape)
            got = np.array([str(x) for x in np.asarray(got).ravel()]).reshape(want.shape)
        if want.dtype.kind == 'O':
            want = np.array([str(x) for x in want.ravel()]).reshape(want.shape)
            got = np.array([str(x) for x in np.asarray(got).ravel()]).reshape(want.shape)
        assert want.shape == np.shape(got), (path, want.shape, np.shape(got))
        if want.dtype.kind == 'f':
            assert np.array_equal(want, got, equal_nan=True), (path, want, got)
        else:
            assert (want == got).all(), (path, want, got)
        names = a.metadata.dimension_names
        if names and all(names):
            assert list(v.dimensions) == list(names), (path, v.dimensions, names)
        n += 1
    print(store, n, 'arrays equal')
"#;

#[test]
fn zarr_python_v3_stores_copy_with_their_values() {
    let d = tempdir("zarr-v3-read");
    let Some(o) = py(&d, true, WRITE_STORES) else {
        return;
    };
    assert_eq!(o.trim(), "written");
    let stores = ["shard.zarr", "codecs.zarr", "types.zarr", "zipped.zip"];
    for s in stores {
        let o = run("nccopy-rs", &[s, &format!("{s}.nc")], &d);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{s}: {stderr}");
        // only the filters an HDF5 string or scalar variable cannot take are dropped, and
        // the codecs netCDF-4 has no filter for (crc32c, delta), said
        for line in stderr.lines() {
            assert!(
                line.contains("filters cannot apply to a string variable")
                    || line.contains("filters cannot apply to a scalar variable")
                    || line
                        .ends_with("have no HDF5 filter; the output stores the data without them"),
                "{s}: {line}"
            );
        }
        if s == "codecs.zarr" {
            assert!(
                stderr.contains("/tr: Zarr codec(s) crc32c have no"),
                "{stderr}"
            );
            assert!(
                stderr.contains("/delta: Zarr codec(s) delta have no"),
                "{stderr}"
            );
        }
    }
    compare(&d, &stores);
    // nested shards: the innermost chunks and the outer shards; whole-shard codecs are in
    // _Codecs only (_Filter: the chunks' filters)
    let o = run("ncdump-rs", &["-hs", "shard.zarr"], &d);
    let text = String::from_utf8_lossy(&o.stdout);
    for want in [
        "\t\tnested:_ChunkSizes = 2, 3 ;\n\t\tnested:_ShardSizes = 8, 12 ;\n\t\tnested:_DeflateLevel = 2 ;\n",
        "\t\twhole:_ChunkSizes = 2, 3 ;\n\t\twhole:_ShardSizes = 4, 6 ;\n\t\twhole:_Filter = \"32015,1\" ;\n",
        "}},{\\\"name\\\": \\\"gzip\\\",\\\"configuration\\\": {\\\"level\\\": 6}},{\\\"name\\\": \\\"crc32c\\\"}]\" ;\n",
        "\t\tnestwhole:_ChunkSizes = 2 ;\n  \t\tnestwhole:_ShardSizes = 8 ;\n",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
    // float16 reads as float, exactly; a one-character UTF-32 fill is that character
    let o = run("ncdump-rs", &["-v", "half,uc1", "types.zarr"], &d);
    let text = String::from_utf8_lossy(&o.stdout);
    for want in [
        "\tfloat half(five) ;\n",
        " half = 1.5, -2.25, 65504, 0.09997559, 0.09997559 ;\n",
        " uc1 = \"abczz\" ;\n",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
}

/// Run [`COMPARE`] on `stores` (each with its netCDF-4 copy `<store>.nc`) and check every
/// array of every store is equal.
fn compare(d: &Path, stores: &[&str]) {
    std::fs::write(d.join("compare.py"), COMPARE).unwrap();
    let o = std::process::Command::new("python3")
        .arg("compare.py")
        .args(stores)
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want: String = stores
        .iter()
        .map(|s| format!("{s} {} arrays equal\n", stores_arrays(s)))
        .collect();
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
}

/// How many arrays each store of [`WRITE_STORES`] holds.
fn stores_arrays(store: &str) -> usize {
    match store {
        "shard.zarr" => 8,
        "codecs.zarr" => 7,
        "types.zarr" => 19,
        "zipped.zip" => 1,
        other => panic!("no store {other}"),
    }
}

/// `ncdump-rs -s` of a v3 store is CDL that `ncgen-rs` writes back as Zarr v3 with the same
/// values, shards and codecs (its `_Codecs` in v3 form: gzip, crc32c, numcodecs.* kept), and
/// `nccopy-rs` v3 -> v3 keeps them too.
#[test]
fn cdl_and_copies_of_v3_stores_keep_their_codecs() {
    let d = tempdir("zarr-v3-cdl");
    let Some(o) = py(&d, true, WRITE_STORES) else {
        return;
    };
    assert_eq!(o.trim(), "written");
    let stores = ["shard.zarr", "codecs.zarr"];
    for s in stores {
        let o = run("ncdump-rs", &["-s", s], &d);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::write(d.join(format!("{s}.cdl")), &o.stdout).unwrap();
        let url = |n: &str| format!("file://{}#mode=zarr,v3,file", d.join(n).display());
        let o = run(
            "ncgen-rs",
            &["-o", &url(&format!("gen-{s}")), &format!("{s}.cdl")],
            &d,
        );
        assert!(
            o.status.success(),
            "{s}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = run("nccopy-rs", &[s, &url(&format!("copy-{s}"))], &d);
        assert!(
            o.status.success(),
            "{s}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // netCDF-4's rule: a string variable's filters are dropped, with a warning
        let warned = if s == "shard.zarr" {
            "nccopy: warning: variable /sub/names: filters cannot apply to a string variable; \
             left unfiltered\n"
        } else {
            ""
        };
        assert_eq!(String::from_utf8_lossy(&o.stderr), warned, "{s}");
        let data = |p: &str| {
            let o = run("ncdump-rs", &[p], &d);
            assert!(
                o.status.success(),
                "{p}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).replacen(
                &format!("netcdf {}", p.trim_end_matches(".zarr")),
                "netcdf X",
                1,
            )
        };
        let want = data(s);
        for p in [format!("gen-{s}"), format!("copy-{s}")] {
            let got = data(&p).replacen(
                &format!("netcdf {}", p.trim_end_matches(".zarr")),
                "netcdf X",
                1,
            );
            assert_eq!(got, want, "{p}");
        }
    }
    // the codecs that came back, as zarr-python wrote them (transpose aside: we write C order)
    let Some(out) = py(
        &d,
        false,
        r#"
import json
def codecs(p):
    return json.load(open(p + '/zarr.json'))['codecs']
for p in ['gen-codecs.zarr/tr', 'copy-codecs.zarr/tr']:
    assert [c['name'] for c in codecs(p)] == ['bytes', 'gzip', 'crc32c'], codecs(p)
    assert codecs(p)[1]['configuration']['level'] == 5
for p in ['gen-codecs.zarr/delta', 'copy-codecs.zarr/delta']:
    assert [c['name'] for c in codecs(p)] == ['numcodecs.delta', 'bytes', 'gzip'], codecs(p)
for p in ['gen-shard.zarr/temp', 'copy-shard.zarr/temp']:
    sh = codecs(p)[0]['configuration']
    assert sh['chunk_shape'] == [2, 3], sh
    assert [c['name'] for c in sh['codecs']] == ['bytes', 'zstd'], sh
    assert json.load(open(p + '/zarr.json'))['chunk_grid']['configuration']['chunk_shape'] == [4, 6]
# numcodecs checksums are written back (ours, zarr-python verifies them)
import zarr, numpy as np, warnings
warnings.simplefilter('ignore')
for p in ['gen-codecs.zarr', 'copy-codecs.zarr']:
    assert [c['name'] for c in codecs(p + '/sums')] == ['bytes', 'numcodecs.crc32',
        'numcodecs.adler32', 'numcodecs.jenkins_lookup3', 'zstd'], codecs(p + '/sums')
    got, want = zarr.open_group(p)['sums'][...], zarr.open_group('codecs.zarr')['sums'][...]
    assert np.array_equal(got, want) if p.startswith('copy') else np.allclose(got, want, rtol=1e-6)
# nested shards and shards compressed whole come back as one level of shards of the innermost
# chunks, with the values (floats exactly through nccopy-rs; CDL text has 7 digits)
src = zarr.open_group('shard.zarr')
for p in ['gen-shard.zarr', 'copy-shard.zarr']:
    g = zarr.open_group(p)
    for name in ['whole', 'nested', 'sub/nestwhole', 'sub/names']:
        if name == 'whole' and p.startswith('gen'):
            assert np.allclose(g[name][...], src[name][...], rtol=1e-6), (p, name)
        else:
            assert np.array_equal(g[name][...], src[name][...]), (p, name)
    assert g['nested'].shards == (8, 12) and g['nested'].chunks == (2, 3), g['nested'].shards
    sh = codecs(p + '/nested')[0]['configuration']
    assert [c['name'] for c in sh['codecs']] == ['bytes', 'gzip'], sh
print('ok')
"#,
    ) else {
        return;
    };
    assert_eq!(out.trim(), "ok");
}

#[test]
fn sharded_store_header_shows_its_storage() {
    let d = tempdir("zarr-v3-hs");
    let Some(_) = py(
        &d,
        false,
        r#"
import zarr, numpy as np, warnings
from zarr.codecs import ZstdCodec
warnings.simplefilter('ignore')
g = zarr.open_group('h.zarr', mode='w', zarr_format=3)
a = g.create_array('temp', shape=(10, 12), chunks=(2, 3), shards=(4, 6), dtype='f4',
                   dimension_names=['y', 'x'], fill_value=np.nan, compressors=ZstdCodec(level=3))
a[:] = np.arange(120, dtype='f4').reshape(10, 12)
a.attrs['units'] = 'K'
"#,
    ) else {
        return;
    };
    let o = run("ncdump-rs", &["-hs", "h.zarr"], &d);
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    let codecs = r#"[{\"name\": \"sharding_indexed\",\"configuration\": {\"chunk_shape\": [2,3],\"codecs\": [{\"name\": \"bytes\",\"configuration\": {\"endian\": \"little\"}},{\"name\": \"zstd\",\"configuration\": {\"level\": 3,\"checksum\": false}}],\"index_codecs\": [{\"name\": \"bytes\",\"configuration\": {\"endian\": \"little\"}},{\"name\": \"crc32c\"}],\"index_location\": \"end\"}}]"#;
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!(
            "netcdf h {{\ndimensions:\n\ty = 10 ;\n\tx = 12 ;\nvariables:\n\tfloat temp(y, x) ;\n\
             \t\ttemp:units = \"K\" ;\n\t\ttemp:_Storage = \"chunked\" ;\n\
             \t\ttemp:_ChunkSizes = 2, 3 ;\n\t\ttemp:_ShardSizes = 4, 6 ;\n\
             \t\ttemp:_Filter = \"32015,3\" ;\n\t\ttemp:_Codecs = \"{codecs}\" ;\n\
             \t\ttemp:_Endianness = \"little\" ;\n\n// global attributes:\n\
             \t\t:_SuperblockVersion = 0 ;\n\t\t:_IsNetcdf4 = 1 ;\n\t\t:_Format = \"netCDF-4\" ;\n}}\n"
        )
    );
    // the values, row 9 (the last shard row is partial: 10 rows of 4-row shards)
    let o = run("ncdump-rs", &["-v", "temp", "h.zarr"], &d);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("  108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119 ;\n}"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Write one sharded array and return the path of shard (0, 0).
fn one_shard(d: &Path, index: &str) -> Option<std::path::PathBuf> {
    py(
        d,
        false,
        &format!(
            r#"
import zarr, numpy as np, warnings
from zarr.codecs import ShardingCodec, BytesCodec, Crc32cCodec
warnings.simplefilter('ignore')
g = zarr.open_group('bad.zarr', mode='w', zarr_format=3)
a = g.create_array('v', shape=(4,), chunks=(4,), dtype='i4', dimension_names=['n'],
                   compressors=None,
                   serializer=ShardingCodec(chunk_shape=(2,), codecs=[BytesCodec()],
                                            index_codecs={index}))
a[:] = [1, 2, 3, 4]
"#
        ),
    )?;
    Some(d.join("bad.zarr/v/c/0"))
}

fn assert_data_error(d: &Path, needle: &str) {
    let o = run("ncdump-rs", &["bad.zarr"], d);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("/v") && stderr.contains("v/c/0"),
        "{stderr}"
    );
    assert!(stderr.contains(needle), "{stderr}");
    // the header is printed before the error
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("netcdf bad {\ndimensions:\n\tn = 4 ;"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run("ncdump-rs", &["-h", "bad.zarr"], d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn corrupt_shards_are_errors_naming_the_shard() {
    // a flipped bit in a checksummed index
    let d = tempdir("zarr-v3-crc");
    let Some(shard) = one_shard(&d, "[BytesCodec(), Crc32cCodec()]") else {
        return;
    };
    let mut b = std::fs::read(&shard).unwrap();
    let n = b.len();
    b[n - 10] ^= 0x40;
    std::fs::write(&shard, &b).unwrap();
    assert_data_error(&d, "shard index checksum does not match");

    // an index entry pointing past the end of the shard (no checksum to catch it)
    let d = tempdir("zarr-v3-range");
    let Some(shard) = one_shard(&d, "[BytesCodec()]") else {
        return;
    };
    let mut b = std::fs::read(&shard).unwrap();
    let n = b.len();
    // entry 1's length (the last 8 bytes of the index at the end) made huge
    b[n - 8..].copy_from_slice(&(1u64 << 40).to_le_bytes());
    std::fs::write(&shard, &b).unwrap();
    assert_data_error(&d, "outside the");

    // a shard shorter than its index
    std::fs::write(&shard, [0u8; 7]).unwrap();
    assert_data_error(&d, "fewer than its 32-byte index");

    // an unknown codec is a metadata error naming the codec and the key
    let meta = d.join("bad.zarr/v/zarr.json");
    let text = std::fs::read_to_string(&meta)
        .unwrap()
        .replace("\"name\": \"bytes\"", "\"name\": \"mystery\"");
    std::fs::write(&meta, text).unwrap();
    let o = run("ncdump-rs", &["-h", "bad.zarr"], &d);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains("v/zarr.json") && stderr.contains("unknown codec \"mystery\""),
        "{stderr}"
    );
}

/// CDL with what a v3 store must carry: an unlimited dimension, a sharded variable with
/// deflate + shuffle and a _FillValue, zstd, strings, chars, a scalar, a big-endian
/// variable and a group.
const V3_CDL: &str = r#"netcdf a {
dimensions:
  time = UNLIMITED ;
  y = 10 ;
  x = 12 ;
  n = 3 ;
variables:
  float temp(time, y, x) ;
    temp:units = "K" ;
    temp:_FillValue = -999.f ;
    temp:_ChunkSizes = 1, 5, 6 ;
    temp:_ShardSizes = 2, 10, 12 ;
    temp:_DeflateLevel = 4 ;
    temp:_Shuffle = "true" ;
  int count(n) ;
    count:_Filter = "32015,3" ;
  string names(n) ;
  char c(n) ;
  double sc ;
  short big(y) ;
    big:_Endianness = "big" ;
  :title = "v3 test" ;
data:
  temp = 1, 2, 3, 4, 5 ;
  count = 7, 8, 9 ;
  names = "a", "bé", "" ;
  c = "xyz" ;
  sc = 3.25 ;
  big = 1, 2, 3, 4, 5, 6, 7, 8, 9, -10 ;
group: g {
  variables:
    int gx(x) ;
  data:
    gx = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;
  }
}
"#;

#[test]
fn ncgen_writes_v3_that_zarr_python_and_xarray_read() {
    let d = tempdir("zarr-v3-ncgen");
    std::fs::write(d.join("a.cdl"), V3_CDL).unwrap();
    let url = format!("file://{}#mode=zarr,v3,file", d.join("a3.zarr").display());
    let o = run("ncgen-rs", &["-o", &url, "a.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let Some(out) = py(
        &d,
        false,
        r#"
import zarr, numpy as np, json, warnings, xarray as xr
warnings.simplefilter('ignore')
g = zarr.open_group('a3.zarr', mode='r')
t = g['temp']
assert t.shape == (1, 10, 12) and t.chunks == (1, 5, 6) and t.shards == (2, 10, 12), (t.shape, t.chunks, t.shards)
assert t.metadata.dimension_names == ('time', 'y', 'x')
want = np.full((1, 10, 12), -999, 'f4'); want.ravel()[:5] = [1, 2, 3, 4, 5]
assert (t[...] == want).all()
codecs = json.load(open('a3.zarr/temp/zarr.json'))['codecs'][0]['configuration']['codecs']
assert [c['name'] for c in codecs] == ['bytes', 'numcodecs.shuffle', 'gzip'], codecs
assert list(g['count'][...]) == [7, 8, 9]
assert list(g['names'][...]) == ['a', 'bé', '']
assert list(g['c'][...]) == [b'x', b'y', b'z']
assert g['sc'][...] == 3.25 and g['sc'].shape == ()
assert list(g['big'][...]) == [1, 2, 3, 4, 5, 6, 7, 8, 9, -10]
assert json.load(open('a3.zarr/big/zarr.json'))['codecs'] == [{'name': 'bytes', 'configuration': {'endian': 'big'}}]
assert list(g['g/gx'][...]) == list(range(1, 13))
assert g.attrs['title'] == 'v3 test'
ds = xr.open_zarr('a3.zarr', consolidated=False)
assert ds.temp.attrs['units'] == 'K'
assert np.isnan(ds.temp.values[0, 0, 5]) and ds.temp.values[0, 0, 4] == 5
assert ds.temp.encoding['_FillValue'] == -999
assert list(ds.names.values) == ['a', 'bé', '']
print('ok')
"#,
    ) else {
        return;
    };
    assert_eq!(out.trim(), "ok");
    // and our own reader gives the values and the storage back
    let o = run("ncdump-rs", &["-s", "a3.zarr"], &d);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for want in [
        "\t\ttemp:_FillValue = -999.f ;\n",
        "\t\ttemp:_ChunkSizes = 1, 5, 6 ;\n\t\ttemp:_ShardSizes = 2, 10, 12 ;\n",
        "\t\ttemp:_Shuffle = \"true\" ;\n\t\ttemp:_DeflateLevel = 4 ;\n",
        " names = \"a\", \"bé\", _ ;\n",
        " c = \"xyz\" ;\n",
        " sc = 3.25 ;\n",
        " big = 1, 2, 3, 4, 5, 6, 7, 8, 9, -10 ;\n",
        "  1, 2, 3, 4, 5, _, _, _, _, _, _, _,\n",
        "   gx = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;\n",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
}

#[test]
fn nccopy_round_trips_netcdf4_through_sharded_v3() {
    let d = tempdir("zarr-v3-nccopy");
    let Some(out) = py(
        &d,
        true,
        r#"
import netCDF4, numpy as np
rng = np.random.default_rng(3)
with netCDF4.Dataset('in.nc', 'w') as nc:
    nc.createDimension('t', None)
    nc.createDimension('y', 40)
    nc.createDimension('x', 30)
    v = nc.createVariable('v', 'f4', ('t', 'y', 'x'), chunksizes=(1, 10, 10), zlib=True)
    v[:] = rng.normal(size=(5, 40, 30)).astype('f4')
    w = nc.createVariable('w', 'i8', ('y', 'x'), fill_value=-1)
    w[:20, :] = np.arange(600).reshape(20, 30)
    s = nc.createVariable('s', str, ('y',))
    s[:] = np.array(['s%d' % i for i in range(40)], dtype=object)
    f = nc.createVariable('f', 'f8', ('x',), fletcher32=True)
    f[:] = np.arange(30) / 3
print('ok')
"#,
    ) else {
        return;
    };
    assert_eq!(out.trim(), "ok");
    let url = |name: &str| format!("file://{}#mode=zarr,v3,file", d.join(name).display());
    // fletcher32 is written as numcodecs.fletcher32 (HDF5's checksum, which numcodecs
    // implements), never as a silent crc32c; zarr-python 3 verifies and reads it
    let o = run("nccopy-rs", &["in.nc", &url("f32.zarr")], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let meta = std::fs::read_to_string(d.join("f32.zarr/f/zarr.json")).unwrap();
    assert!(meta.contains("\"numcodecs.fletcher32\""), "{meta}");
    assert!(!meta.contains("crc32c"), "{meta}");
    // --shard needs a v3 output
    let o = run("nccopy-rs", &["--shard", "auto", "in.nc", "x.nc"], &d);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // netCDF-4 -> v3 (sharded, recompressed) -> netCDF-4
    let o = run(
        "nccopy-rs",
        &[
            "-F",
            "f,none",
            "-d",
            "1",
            "-s",
            "--shard",
            "auto",
            "-c",
            "w:10,10",
            "--shard",
            "w:20,30",
            "in.nc",
            &url("v3.zarr"),
        ],
        &d,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run("nccopy-rs", &["v3.zarr", "back.nc"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let Some(out) = py(
        &d,
        true,
        r#"
import netCDF4, zarr, numpy as np, warnings
warnings.simplefilter('ignore')
src = netCDF4.Dataset('in.nc'); src.set_auto_mask(False)
back = netCDF4.Dataset('back.nc'); back.set_auto_mask(False)
g = zarr.open_group('v3.zarr', mode='r')
f32 = zarr.open_group('f32.zarr', mode='r')
assert np.array_equal(np.asarray(f32['f'][...]), src['f'][...])
assert np.array_equal(np.asarray(f32['v'][...]), src['v'][...])
assert g['v'].shards == (5, 40, 30) and g['v'].chunks == (1, 10, 10), g['v'].shards
assert g['w'].shards == (20, 30), g['w'].shards
for name in ['v', 'w', 's', 'f']:
    a = src[name][...]
    assert np.array_equal(a, np.asarray(g[name][...]).astype(a.dtype) if a.dtype != object else np.asarray(g[name][...], dtype=object)), name
    assert np.array_equal(a, back[name][...]), name
assert back['w'].getncattr('_FillValue') == -1
print('ok')
"#,
    ) else {
        return;
    };
    assert_eq!(out.trim(), "ok");
}

#[test]
fn shard_sizes_need_a_v3_output() {
    let d = tempdir("zarr-v3-shardsizes");
    std::fs::write(d.join("a.cdl"), V3_CDL).unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "a.nc", "a.cdl"], &d);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        e.contains("variable \"/temp\" has _ShardSizes, which only a Zarr v3 output holds"),
        "{e}"
    );
    assert!(!d.join("a.nc").exists());
    // a v3 store's shards are its layout: a copy to netCDF-4 drops them, keeping the chunks
    let url = format!("file://{}#mode=zarr,v3,file", d.join("a3.zarr").display());
    let o = run("ncgen-rs", &["-o", &url, "a.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run("nccopy-rs", &["a3.zarr", "b.nc"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run("ncdump-rs", &["-hs", "b.nc"], &d);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("\t\ttemp:_ChunkSizes = 1, 5, 6 ;\n"),
        "{text}"
    );
    assert!(!text.contains("_ShardSizes"), "{text}");
}

#[test]
fn v3_zip_stores_are_written_as_zarr_python_reads_them() {
    let d = tempdir("zarr-v3-zip");
    std::fs::write(d.join("a.cdl"), V3_CDL).unwrap();
    let url = format!("file://{}#mode=zarr,v3,zip", d.join("a3.zip").display());
    let o = run("ncgen-rs", &["-o", &url, "a.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let Some(out) = py(
        &d,
        false,
        r#"
import zarr, warnings
from zarr.storage import ZipStore
warnings.simplefilter('ignore')
g = zarr.open_group(ZipStore('a3.zip', mode='r'), mode='r')
print(g['temp'][0, 0, :6].tolist(), g['temp'].shards, list(g['names'][...]), g['g/gx'][:3].tolist())
"#,
    ) else {
        return;
    };
    assert_eq!(
        out.trim(),
        "[1.0, 2.0, 3.0, 4.0, 5.0, -999.0] (2, 10, 12) ['a', 'bé', ''] [1, 2, 3]"
    );
    // and it opens by its plain path
    let o = run("ncdump-rs", &["-v", "count", "a3.zip"], &d);
    assert!(String::from_utf8_lossy(&o.stdout).contains(" count = 7, 8, 9 ;\n"));
}

/// Shards compressed whole and nested shards that are corrupt: errors naming the variable,
/// the shard key and what is wrong (the inner shard too), never an allocation beyond what
/// the metadata allows; the header still prints.
#[test]
fn corrupt_whole_and_nested_shards_are_errors() {
    let d = tempdir("zarr-v3-whole-bad");
    let script = r#"
import zarr, numpy as np, warnings, gzip, os, shutil, sys
from zarr.codecs import ShardingCodec, BytesCodec, GzipCodec
warnings.simplefilter('ignore')
def write(name, serializer, compressors):
    g = zarr.open_group(name, mode='w', zarr_format=3)
    a = g.create_array('v', shape=(4,), chunks=(4,), dtype='i4', dimension_names=['n'],
                       serializer=serializer, compressors=compressors)
    a[:] = [1, 2, 3, 4]
inner = ShardingCodec(chunk_shape=(2,), codecs=[BytesCodec()])
write('whole.zarr', inner, [GzipCodec()])
write('nested.zarr', ShardingCodec(chunk_shape=(4,), codecs=[inner]), None)
print(zarr.open_group('whole.zarr')['v'][...].tolist(), zarr.open_group('nested.zarr')['v'][...].tolist())
"#;
    let Some(o) = py(&d, false, script) else {
        return;
    };
    assert_eq!(o.trim(), "[1, 2, 3, 4] [1, 2, 3, 4]");
    let dump = |store: &str| {
        let o = run("ncdump-rs", &[store], &d);
        assert!(
            String::from_utf8_lossy(&o.stdout).starts_with("netcdf "),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(run("ncdump-rs", &["-h", store], &d).status.success());
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // both read as written
    for s in ["whole.zarr", "nested.zarr"] {
        let o = run("ncdump-rs", &["-v", "v", s], &d);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(" v = 1, 2, 3, 4 ;\n"),
            "{s}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let shard = d.join("whole.zarr/v/c/0");
    let good = std::fs::read(&shard).unwrap();
    let expect = |needles: &[&str]| {
        let (ok, e) = dump("whole.zarr");
        assert!(!ok);
        for n in needles {
            assert!(e.contains(n), "{n:?} not in {e}");
        }
    };
    // a gzip bomb in the shard's place: 1 MiB of zeros, which the 2 inner chunks of 8 bytes
    // and their index cannot make; decoding stops at the bound
    let Some(_) = py(
        &d,
        false,
        "import gzip; open('whole.zarr/v/c/0', 'wb').write(gzip.compress(bytes(1 << 20)))",
    ) else {
        return;
    };
    expect(&["variable \"/v\"", "\"v/c/0\"", "decoding the whole shard"]);
    // a stored shard larger than its codecs can make of what the metadata allows
    std::fs::write(&shard, vec![7u8; 100_000]).unwrap();
    expect(&[
        "\"v/c/0\"",
        "the shard holds 100000 bytes, more than its codecs can make of the 52 bytes",
    ]);
    // the gzip stream cut short
    std::fs::write(&shard, &good[..good.len() / 2]).unwrap();
    expect(&["\"v/c/0\"", "decoding the whole shard"]);

    // nested: a flipped bit in the inner shard's checksummed index, then an inner shard
    // entry of the outer index longer than an inner shard can be
    let shard = d.join("nested.zarr/v/c/0");
    let good = std::fs::read(&shard).unwrap();
    // the one inner shard (2 chunks of 8 bytes, then its 2-entry index and crc), then the
    // outer index (1 entry and crc)
    assert_eq!(good.len(), 16 + 36 + 20);
    let mut b = good.clone();
    b[16 + 3] ^= 1;
    std::fs::write(&shard, &b).unwrap();
    let (ok, e) = dump("nested.zarr");
    assert!(!ok);
    assert!(
        e.contains("\"v/c/0\"")
            && e.contains("inner shard 0: the shard index checksum does not match"),
        "{e}"
    );
    // the inner shard grown by 10000 bytes, as the outer index says: more than 2 chunks of
    // 8 bytes and their index can be
    let mut b = good[..52].to_vec();
    b.extend_from_slice(&[0u8; 10_000]);
    let mut index = vec![0u8; 16];
    index[8..16].copy_from_slice(&(52u64 + 10_000).to_le_bytes());
    b.extend_from_slice(&index);
    b.extend_from_slice(&crc32c(&index).to_le_bytes());
    std::fs::write(&shard, &b).unwrap();
    let (ok, e) = dump("nested.zarr");
    assert!(!ok);
    assert!(
        e.contains("\"v/c/0\"")
            && e.contains("inner shard 0 holds 10052 bytes, more than its metadata allows (52)"),
        "{e}"
    );
}

/// CRC-32C (Castagnoli), bit by bit: the shard index checksum.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A store that is one array (`zarr.save(path, a)`, v2 and v3): the root group's one
/// variable, named as the dataset; its attributes are the variable's, its fill value the
/// array's as for every pure Zarr array (issue 31; it was refused). netCDF-C 4.9.0 shows
/// such a store as an empty dataset.
#[test]
fn a_store_that_is_one_array_is_its_root_variable() {
    let dir = tempdir("zarr-root-array");
    let script = "import zarr, numpy as np\n\
         a = zarr.create_array('r2.zarr', shape=(2, 3), chunks=(1, 2), dtype='i2', zarr_format=2, fill_value=-1, compressors=None)\n\
         a[:] = np.arange(6, dtype='i2').reshape(2, 3)\n\
         a.attrs['units'] = 'K'\n\
         b = zarr.create_array('r3.zarr', shape=(4,), chunks=(3,), dtype='f4', dimension_names=['t'], fill_value=0)\n\
         b[:] = np.array([0.5, 1.5, 2.5, 3.5], dtype='f4')\n\
         b.attrs['long_name'] = 'time series'\n\
         s = zarr.create_array('s3.zarr', shape=(), dtype='i4', fill_value=0)\n\
         s[...] = 42\n";
    if py(&dir, false, script).is_none() {
        return;
    }
    let dump = |name: &str| {
        let o = run_ok("ncdump-rs", &[name], &dir);
        String::from_utf8(o.stdout).unwrap()
    };
    assert_eq!(
        dump("r2.zarr"),
        "netcdf r2 {\ndimensions:\n\t_zdim_2 = 2 ;\n\t_zdim_3 = 3 ;\nvariables:\n\
         \tshort r2(_zdim_2, _zdim_3) ;\n\t\tr2:units = \"K\" ;\n\
         data:\n\n r2 =\n  0, 1, 2,\n  3, 4, 5 ;\n}\n"
    );
    assert_eq!(
        dump("r3.zarr"),
        "netcdf r3 {\ndimensions:\n\tt = 4 ;\nvariables:\n\tfloat r3(t) ;\n\
         \t\tr3:long_name = \"time series\" ;\ndata:\n\n\
         \x20r3 = 0.5, 1.5, 2.5, 3.5 ;\n}\n"
    );
    assert_eq!(
        dump("s3.zarr"),
        "netcdf s3 {\nvariables:\n\tint s3 ;\ndata:\n\n s3 = 42 ;\n}\n"
    );
    // copied to netCDF-4, the reference reads the variable
    run_ok("nccopy-rs", &["r2.zarr", "r2.nc"], &dir);
    if have_reference("ncdump") {
        let o = std::process::Command::new("ncdump")
            .args(["-v", "r2", "r2.nc"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(" r2 =\n  0, 1, 2,\n  3, 4, 5 ;"), "{text}");
    }
}
