//! szip decoding against HDF5's szip filter (libaec, through h5py): raw chunks HDF5 wrote
//! for many types, options, block sizes, shapes and data kinds decode to the original bytes.
//! Skips when python3 with an szip-enabled h5py is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use nc_filters::{FilterContext, FilterSpec, Registry};
use std::process::Command;

const SCRIPT: &str = r#"
import sys, os, h5py, numpy as np
d = sys.argv[1]
if not h5py.h5z.filter_avail(4):
    print('NOSZIP'); sys.exit(0)
rng = np.random.default_rng(5)
cases = []
with h5py.File(d + '/sz.h5', 'w') as f:
    k = 0
    for dt in ['u1', '<i2', '>i2', '<u2', '<i4', '<f4', '>f4', '<f8', '<i8']:
        for opt in ['nn', 'ec']:
            for ppb in [8, 16, 32]:
                for shape in [(10, 10), (7, 33), (100,), (3, 5, 64), (1000,), (2, 300)]:
                    for kind in ['ramp', 'const', 'noise', 'zeros']:
                        n = int(np.prod(shape))
                        if n < ppb:
                            continue
                        if kind == 'ramp':
                            a = (np.arange(n) * 3 + rng.integers(0, 4, n)) % 200
                        elif kind == 'const':
                            a = np.full(n, 77)
                        elif kind == 'zeros':
                            a = np.zeros(n)
                        else:
                            a = rng.integers(0, 120, n)
                        a = a.astype(dt).reshape(shape)
                        if dt.endswith('f4') or dt.endswith('f8'):
                            a = (a * 0.37).astype(dt)
                        name = 'd%d' % k; k += 1
                        ds = f.create_dataset(name, data=a, chunks=shape, compression='szip', compression_opts=(opt, ppb))
                        mask, raw = ds.id.read_direct_chunk((0,) * len(shape))
                        pl = ds.id.get_create_plist()
                        code, flags, vals, _ = pl.get_filter(0)
                        open(d + '/' + name + '.raw', 'wb').write(raw)
                        open(d + '/' + name + '.data', 'wb').write(a.tobytes())
                        cases.append('%s %s %s %s %d' % (name, ','.join(map(str, vals)), a.dtype.itemsize, 'x'.join(map(str, shape)), mask))
open(d + '/cases', 'w').write('\n'.join(cases))
print('OK')
"#;

#[test]
fn szip_decodes_hdf5_chunks() {
    let dir = std::env::temp_dir().join(format!("ncf-szip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = match Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(&dir)
        .output()
    {
        Ok(o) if o.status.success() => o,
        _ => {
            eprintln!("skipping: python3 with h5py is not available");
            return;
        }
    };
    if String::from_utf8_lossy(&out.stdout).trim() == "NOSZIP" {
        eprintln!("skipping: h5py's HDF5 has no szip");
        return;
    }
    let r = Registry::with_builtins();
    let cases = std::fs::read_to_string(dir.join("cases")).unwrap();
    let mut n = 0;
    let mut skipped = 0;
    for line in cases.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let params: Vec<u32> = f[1].split(',').map(|x| x.parse().unwrap()).collect();
        let ts: usize = f[2].parse().unwrap();
        let shape: Vec<u64> = f[3].split('x').map(|x| x.parse().unwrap()).collect();
        let raw = std::fs::read(dir.join(format!("{}.raw", f[0]))).unwrap();
        let data = std::fs::read(dir.join(format!("{}.data", f[0]))).unwrap();
        let chain = [FilterSpec {
            id: 4,
            params: params.clone(),
        }];
        let p = r.pipeline(&chain, FilterContext::new(ts, &shape)).unwrap();
        let mask: u32 = f[4].parse().unwrap();
        if mask != 0 {
            skipped += 1; // HDF5 stored this chunk unfiltered (szip did not shrink it)
        }
        let got = p
            .decode_masked(&raw, mask)
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(got == data, "{line}: decoded bytes differ");
        // our working parameters match what HDF5's set_local stored
        let w = r.working_chain(
            &[FilterSpec {
                id: 4,
                params: params[..2].to_vec(),
            }],
            &FilterContext::new(ts, &shape),
        );
        assert_eq!(w[0].params[1..], params[1..], "{line}: working parameters");
        n += 1;
    }
    assert!(
        n - skipped > 300,
        "only {n} cases, {skipped} stored unfiltered"
    );
    eprintln!("{n} szip chunks checked ({skipped} stored unfiltered by HDF5)");
    let _ = std::fs::remove_dir_all(&dir);
}
