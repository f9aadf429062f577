//! PyTables' LZO (HDF5 filter 305), read by the built-in decoder, against the real LZO library:
//! a Python script loads liblzo2 (Debian's `liblzo2-2`) through ctypes, compresses arrays with
//! `lzo1x_1_compress` (what PyTables uses) and `lzo1x_999_compress` (more kinds of matches),
//! with PyTables 0.6/0.7's checksum trailer and without it (every PyTables since 0.8), and
//! writes the chunks with h5py's `write_direct_chunk` into datasets whose pipeline holds filter
//! 305 with PyTables' parameters; the same arrays go unfiltered into a second file.
//!
//! `ncdump-rs` of the LZO file must print exactly what netCDF-C 4.9.0's `ncdump` prints for
//! the unfiltered file (ncdump-rs's own dump of it without netCDF-C); `-hs` must print what
//! 4.9.0 prints for the LZO file (it reads the metadata without the filter); the nccopy-rs
//! copy (LZO dropped, with a warning: there is no encoder) must read back the same values in
//! netCDF-C's `ncdump` and in h5py. Skipped, with a SKIP line, without h5py or liblzo2.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

use std::path::Path;
use std::process::Command;

const PROBE: &str = "import ctypes, h5py, numpy; ctypes.CDLL('liblzo2.so.2')";
const NEEDS: &str = "h5py, numpy and liblzo2 (Debian package liblzo2-2)";

/// Writes `lzo.h5` (LZO chunks made by liblzo), `plain.h5` (the same arrays, no filter),
/// `bad.h5` (chunks whose trailer does not match) and `arrays.npz` (the arrays).
const SCRIPT: &str = r#"
import ctypes, zlib
import h5py, numpy as np

lzo = ctypes.CDLL('liblzo2.so.2')
# lzo_init(): the library checks the caller's type sizes: short, int, long, lzo_uint32_t,
# lzo_uint, a dictionary entry, char *, lzo_voidp, lzo_callback_t (LP64)
assert lzo.__lzo_init_v2(ctypes.c_uint(lzo.lzo_version()), 2, 4, 8, 4, 8, 8, 8, 8, 48) == 0
wrk = ctypes.create_string_buffer(1 << 20)  # above LZO1X_1 and LZO1X_999 work memory

def compress(data, level):
    fn = lzo.lzo1x_1_compress if level == 1 else lzo.lzo1x_999_compress
    dst = ctypes.create_string_buffer(len(data) + len(data) // 16 + 64 + 3)
    n = ctypes.c_size_t(len(dst))
    assert fn(data, ctypes.c_size_t(len(data)), dst, ctypes.byref(n), wrk) == 0
    out = dst.raw[:n.value]
    # liblzo decodes its own stream back (the oracle is sound)
    back = ctypes.create_string_buffer(len(data) + 1)
    m = ctypes.c_size_t(len(back))
    assert lzo.lzo1x_decompress_safe(out, ctypes.c_size_t(len(out)), back, ctypes.byref(m), None) == 0
    assert back.raw[:m.value] == data
    return out

def trailer(data):
    # PyTables 0.6/0.7: lzo_adler32 from 1 (zlib's), then the length, both little-endian
    return zlib.adler32(data).to_bytes(4, 'little') + len(data).to_bytes(4, 'little')

def shuffle(raw, size):
    return np.frombuffer(raw, np.uint8).reshape(-1, size).T.tobytes()

def lzo_dataset(f, name, arr, chunks, level, params, with_trailer, shuffled=False, raw_chunk=None, spoil=None):
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    if shuffled:
        dcpl.set_shuffle()
    dcpl.set_filter(305, h5py.h5z.FLAG_OPTIONAL, params)
    d = h5py.h5d.create(f.id, name.encode(), h5py.h5t.py_create(arr.dtype),
                        h5py.h5s.create_simple(arr.shape), dcpl)
    grid = [range(0, s, c) for s, c in zip(arr.shape, chunks)]
    for k, at in enumerate(np.ndindex(*[len(g) for g in grid])):
        start = tuple(g[i] for g, i in zip(grid, at))
        # a whole chunk, the part past the edge zero as HDF5 stores it
        block = np.zeros(chunks, arr.dtype)
        part = arr[tuple(slice(s, s + c) for s, c in zip(start, chunks))]
        block[tuple(slice(0, n) for n in part.shape)] = part
        src = block.tobytes()
        if shuffled:
            src = shuffle(src, arr.itemsize)
        if raw_chunk == k:
            # LZO skipped for this chunk (the filter is optional; PyTables' fails on data
            # that grows): stored as it is, the chunk's filter mask says so
            d.write_direct_chunk(start, src, filter_mask=2 if shuffled else 1)
            continue
        data = compress(src, level)
        if with_trailer:
            data += trailer(src)
        if spoil == 'sum':
            data = data[:-8] + bytes([data[-8] ^ 1]) + data[-7:]
        elif spoil == 'len':
            data = data[:-4] + (len(src) + 1).to_bytes(4, 'little')
        d.write_direct_chunk(start, data)

rng = np.random.default_rng(305)
arrays = {
    'rnd_i4': (rng.integers(-2**31, 2**31, 3000, dtype='i4'), (1000,)),
    'const_f8': (np.full(2500, 2.5, 'f8'), (1024,)),
    'rep_i2': (np.tile(np.arange(37, dtype='i2'), 40 * 90 // 37 + 1)[:40 * 90].reshape(40, 90), (10, 50)),
    # chunks of 80 KB repeating every 24000 bytes: matches from far back (LZO's M4)
    'big_f4': (np.tile(rng.standard_normal(6000).astype('f4'), 5)[:25_000], (20_000,)),
    'ramp_u8': (np.arange(9000, dtype='u8') // 3, (9000,)),
}
saved = {}
with h5py.File('lzo.h5', 'w') as f, h5py.File('plain.h5', 'w') as p:
    for name, (arr, chunks) in arrays.items():
        for level in (1, 999):
            v = f'{name}_{level}'
            # an Array of PyTables 0.6/0.7 (VERSION 1.0: 10, type 1): the trailer
            lzo_dataset(f, v, arr, chunks, level, (1, 10, 1), True,
                        raw_chunk=0 if name == 'rnd_i4' else None)
            # a CArray of PyTables 3 (VERSION 1.1: 11, type 4): no trailer
            lzo_dataset(f, v + '_nt', arr, chunks, level, (1, 11, 4), False)
            for w in (v, v + '_nt'):
                p.create_dataset(w, data=arr, chunks=chunks)
                saved[w] = arr
    # shuffle, then LZO; one chunk stored without LZO
    arr, chunks = arrays['rep_i2']
    lzo_dataset(f, 'shuf_i2', arr, chunks, 999, (1, 11, 4), True, shuffled=True, raw_chunk=1)
    p.create_dataset('shuf_i2', data=arr, chunks=chunks)
    saved['shuf_i2'] = arr
    # a PyTables 0.5 Table (VERSION 1.0, type 0): never a trailer
    arr = np.arange(600, dtype='i4') * 7
    lzo_dataset(f, 'old_table', arr, (256,), 1, (1, 10, 0), False)
    p.create_dataset('old_table', data=arr, chunks=(256,))
    saved['old_table'] = arr
np.savez('arrays.npz', **saved)
with h5py.File('bad.h5', 'w') as f:
    arr = np.arange(100, dtype='i4')
    f['good'] = arr
    lzo_dataset(f, 'bad_sum', arr, (50,), 1, (1, 10, 1), True, spoil='sum')
    lzo_dataset(f, 'bad_len', arr, (50,), 1, (1, 10, 1), True, spoil='len')
"#;

/// Compares every variable of the netCDF-4 file `file` read by h5py with the saved arrays.
const CHECK_COPY: &str = r#"
import sys, h5py, numpy as np
saved = np.load('arrays.npz')
with h5py.File(sys.argv[1], 'r') as f:
    for name in saved.files:
        got = f[name][...]
        assert got.dtype == saved[name].dtype and np.array_equal(got, saved[name]), name
        assert 305 not in [f[name].id.get_create_plist().get_filter(i)[0]
                           for i in range(f[name].id.get_create_plist().get_nfilters())], name
    print(len(saved.files))
"#;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// netCDF-C's `ncdump` with `args` in `dir`, `None` when it is not installed.
fn netcdf_c(args: &[&str], dir: &Path) -> Option<String> {
    if !have_reference("ncdump") {
        return None;
    }
    let out = Command::new("ncdump")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ncdump {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(stdout(&out))
}

fn assert_same(what: &str, expected: &str, got: &str) {
    if let Some(d) = diff(expected.as_bytes(), got.as_bytes()) {
        panic!("{what}: {d}");
    }
}

#[test]
fn pytables_lzo_reads_as_liblzo_wrote_it() {
    let dir = tempdir("lzo-oracle");
    if python_script(&dir, PROBE, NEEDS, SCRIPT).is_none() {
        return;
    }
    // the data: exactly the unfiltered file's dump, by netCDF-C when installed
    let ours = run_ok("ncdump-rs", &["lzo.h5"], &dir);
    assert!(
        ours.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let expected = match netcdf_c(&["-n", "lzo", "plain.h5"], &dir) {
        Some(text) => text,
        None => {
            eprintln!("SKIP: ncdump not installed, the LZO file is compared with ncdump-rs of the unfiltered one");
            stdout(&run_ok("ncdump-rs", &["-n", "lzo", "plain.h5"], &dir))
        }
    };
    assert!(expected.contains(" big_f4_999_nt = "), "{expected}");
    assert_same("ncdump-rs lzo.h5", &expected, &stdout(&ours));

    // the header with -s: the filter as stored, as netCDF-C shows it without the filter
    let hs = stdout(&run_ok("ncdump-rs", &["-hs", "lzo.h5"], &dir));
    for line in [
        "\t\tbig_f4_1:_Filter = \"305,1,10,1\" ;\n",
        "\t\tbig_f4_1_nt:_Filter = \"305,1,11,4\" ;\n",
        "\t\tshuf_i2:_Shuffle = \"true\" ;\n\t\tshuf_i2:_Filter = \"305,1,11,4\" ;\n",
    ] {
        assert!(hs.contains(line), "{line:?} not in:\n{hs}");
    }
    if let Some(reference) = netcdf_c(&["-hs", "lzo.h5"], &dir) {
        assert_same("ncdump-rs -hs lzo.h5", &reference, &hs);
    }

    // the copy holds the values without LZO (no encoder here), and says so per variable
    let copy = run_ok("nccopy-rs", &["lzo.h5", "copy.nc"], &dir);
    let warnings = String::from_utf8_lossy(&copy.stderr);
    assert!(
        warnings.contains(
            "variable /shuf_i2: filter 305 (lzo) cannot be written (decoded on reading only); \
             the data is copied without it"
        ),
        "{warnings}"
    );
    assert_eq!(
        warnings.matches("filter 305 (lzo)").count(),
        22,
        "{warnings}"
    );
    let copied = match netcdf_c(&["-n", "lzo", "copy.nc"], &dir) {
        Some(text) => text,
        None => stdout(&run_ok("ncdump-rs", &["-n", "lzo", "copy.nc"], &dir)),
    };
    assert_same("ncdump of the copy", &expected, &copied);
    let hs_copy = stdout(&run_ok("ncdump-rs", &["-hs", "copy.nc"], &dir));
    assert!(!hs_copy.contains("305"), "{hs_copy}");
    assert!(
        hs_copy.contains("\t\tshuf_i2:_Shuffle = \"true\" ;\n"),
        "{hs_copy}"
    );
    let checked = python_script(
        &dir,
        "import h5py, numpy",
        "h5py",
        &format!("import sys; sys.argv = ['', 'copy.nc']\n{CHECK_COPY}"),
    )
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&checked).trim(), "22");
}

#[test]
fn a_bad_trailer_names_the_variable_and_the_filter() {
    let dir = tempdir("lzo-bad");
    if python_script(&dir, PROBE, NEEDS, SCRIPT).is_none() {
        return;
    }
    let out = run("ncdump-rs", &["bad.h5"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // the good variable is printed, the two bad ones are left out and named
    let text = stdout(&out);
    assert!(text.contains(" good = 0, 1, 2,"), "{text}");
    assert!(!text.contains(" bad_sum = "), "{text}");
    for (var, what) in [
        ("bad_sum", "filter 305 (lzo): checksum mismatch: stored "),
        (
            "bad_len",
            "filter 305 (lzo): decoded 200 bytes, expected 201",
        ),
    ] {
        assert!(
            stderr.lines().any(|l| l.contains(var) && l.contains(what)),
            "{var}: {what:?} not in:\n{stderr}"
        );
    }
}
