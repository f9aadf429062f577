//! HDF5's own deflate, shuffle and fletcher32 (through h5py): a raw chunk HDF5 wrote decodes
//! with our pipeline, and a chunk we encode, written raw into an HDF5 dataset with the same
//! filters, reads back through HDF5. Skips when python3 with h5py is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use nc_filters::{FilterContext, FilterSpec, Registry};
use std::process::Command;

const SCRIPT: &str = r#"
import sys, h5py, numpy as np
d = sys.argv[1]
data = np.frombuffer(open(d + '/data', 'rb').read(), dtype='<f4').reshape(40, 50)
order = sys.argv[2]
with h5py.File(d + '/a.h5', 'w') as f:
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((40, 50))
    for c in order:
        if c == 'f': dcpl.set_fletcher32()
        if c == 's': dcpl.set_shuffle()
        if c == 'd': dcpl.set_deflate(5)
    sp = h5py.h5s.create_simple((40, 50))
    ds = h5py.h5d.create(f.id, b'v', h5py.h5t.IEEE_F32LE, sp, dcpl=dcpl)
    ds.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))
    mask, raw = ds.read_direct_chunk((0, 0))
    open(d + '/raw', 'wb').write(raw)
    pl = ds.get_create_plist()
    with open(d + '/chain', 'w') as o:
        for i in range(pl.get_nfilters()):
            code, flags, vals, name = pl.get_filter(i)
            o.write(' '.join(str(x) for x in [code] + list(vals)) + '\n')
    ours = open(d + '/ours', 'rb').read()
    ds2 = h5py.h5d.create(f.id, b'w', h5py.h5t.IEEE_F32LE, sp, dcpl=dcpl)
    ds2.write_direct_chunk((0, 0), ours)
    back = np.zeros((40, 50), dtype='<f4')
    ds2.read(h5py.h5s.ALL, h5py.h5s.ALL, back)
    print('OK' if np.array_equal(back, data) else 'MISMATCH')
"#;

#[test]
fn hdf5_deflate_shuffle_fletcher32() {
    let ok = Command::new("python3")
        .args(["-c", "import h5py, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping: python3 with h5py is not available");
        return;
    }
    let dir = std::env::temp_dir().join(format!("ncf-h5py-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data: Vec<u8> = (0..2000)
        .flat_map(|i| ((i as f32 * 0.05).cos() * 300.0 + (i % 7) as f32).to_le_bytes())
        .collect();
    std::fs::write(dir.join("data"), &data).unwrap();
    let r = Registry::with_builtins();
    let ctx = FilterContext::new(4, &[40, 50]);
    // netCDF's order (fletcher32, shuffle, deflate), the reverse, and subsets; the odd-sized
    // case (fletcher32 alone over a deflated, odd-length stream) is covered by "df"
    for order in ["fsd", "sdf", "df", "s", "f", "d"] {
        let chain: Vec<FilterSpec> = order
            .chars()
            .map(|c| match c {
                'f' => FilterSpec {
                    id: 3,
                    params: vec![],
                },
                's' => FilterSpec {
                    id: 2,
                    params: vec![4],
                },
                _ => FilterSpec {
                    id: 1,
                    params: vec![5],
                },
            })
            .collect();
        let p = r.pipeline(&chain, ctx.clone()).unwrap();
        std::fs::write(dir.join("ours"), p.encode(&data).unwrap()).unwrap();
        let out = Command::new("python3")
            .args(["-c", SCRIPT])
            .arg(&dir)
            .arg(order)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{order}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "OK",
            "{order}: HDF5 reading our chunk"
        );
        // HDF5's chain as it reports it: ids and working parameters
        let described: Vec<FilterSpec> = std::fs::read_to_string(dir.join("chain"))
            .unwrap()
            .lines()
            .map(|l| {
                let v: Vec<u32> = l.split(' ').map(|x| x.parse().unwrap()).collect();
                FilterSpec {
                    id: v[0],
                    params: v[1..].to_vec(),
                }
            })
            .collect();
        assert_eq!(described, chain, "{order}");
        let raw = std::fs::read(dir.join("raw")).unwrap();
        assert_eq!(
            p.decode(&raw).unwrap(),
            data,
            "{order}: decoding HDF5's chunk"
        );
        if order == "f" {
            // fletcher32 alone: same bytes as HDF5, checksum included
            assert_eq!(p.encode(&data).unwrap(), raw);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
