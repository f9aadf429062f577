//! Issue 18, quantize: what `ncgen-rs` (CDL `_Quantize*` attributes) and `nccopy-rs -Q` write is
//! bit for bit what netCDF4-python (netCDF-C 4.10.1) writes for the same data, for every
//! algorithm and every number of digits or bits a float or double takes, fill values, zeros
//! and NaN untouched — in netCDF-4 files and in NCZarr stores. The one deliberate difference
//! (docs/compat.md): where libnetcdf's rounding carries a finite value into infinity
//! (±3.4e38 in float, ±1.7e308 in double), ours keeps the value finite, shaved.
//! Skipped with a SKIP line without netCDF4-python. (-0.0 is left out of the data: CDL's `-0`
//! is an integer, so no ncgen carries the sign of a negative zero; the unit tests cover it.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::*;

/// Writes `raw.nc` (every variable unquantized, the same data per type) and `ref.nc` (the
/// same, quantized by netCDF4-python), and prints `name mode nsd` per variable.
const WRITE: &str = r#"
import netCDF4, numpy as np
rng = np.random.default_rng(18)
def data(dt):
    x = np.concatenate([rng.normal(0, 1, 200), rng.normal(0, 1e6, 100),
                        10 ** rng.uniform(-30, 30, 200) * rng.choice([-1, 1], 200),
                        [0.0, np.nan, 1.0, -1.0, 9.969209968386869e36, 1e-38, 123456.789, 0.1]])
    big = 3.4e38 if dt == 'f4' else 1.7e308
    return np.concatenate([x, [big, -big]]).astype(dt)
modes = [('BitGroom', 6, 15), ('GranularBitRound', 6, 15), ('BitRound', 23, 52)]
raw = netCDF4.Dataset('raw.nc', 'w')
ref = netCDF4.Dataset('ref.nc', 'w')
for d in (raw, ref):
    d.createDimension('n', None)
for dt in ['f4', 'f8']:
    x = data(dt)
    for mode, fmax, dmax in modes:
        for nsd in range(1, (fmax if dt == 'f4' else dmax) + 1):
            name = f'{dt}_{mode}_{nsd}'
            raw.createVariable(name, dt, ('n',))[:] = x
            ref.createVariable(name, dt, ('n',), significant_digits=nsd, quantize_mode=mode)[:] = x
            print(name, mode, nsd)
raw.close(); ref.close()
"#;

/// Compares each file given with `ref.nc`, variable by variable, bit for bit; prints `ok N`
/// or the first differences.
const COMPARE: &str = r#"
import netCDF4, numpy as np, sys
ref = netCDF4.Dataset('ref.nc'); ref.set_auto_mask(False)
raw = netCDF4.Dataset('raw.nc'); raw.set_auto_mask(False)
for path in sys.argv[1:]:
    ours = netCDF4.Dataset(path); ours.set_auto_mask(False)
    bad, n = [], 0
    for name, rv in ref.variables.items():
        ov = ours[name]
        a, b = rv[:], ov[:]
        u = 'u4' if a.dtype == np.float32 else 'u8'
        ab, bb = a.view(u), b.view(u)
        mode = name.split('_')[1]
        att = {'BitGroom': '_QuantizeBitGroomNumberOfSignificantDigits',
               'GranularBitRound': '_QuantizeGranularBitRoundNumberOfSignificantDigits',
               'BitRound': '_QuantizeBitRoundNumberOfSignificantBits'}[mode]
        if ov.getncattr(att) != rv.getncattr(att):
            bad.append(f'{name}: attribute {ov.getncattr(att)} != {rv.getncattr(att)}')
        for i in np.nonzero(ab != bb)[0]:
            # libnetcdf rounds these into infinity; ours stays finite (compat.md)
            # (shaved: the same sign, at most the input, more than half of it)
            x = raw[name][i]
            if np.isinf(a[i]) and np.isfinite(b[i]) and np.sign(b[i]) == np.sign(x) \
                    and abs(x) / 2 < abs(b[i]) <= abs(x):
                continue
            bad.append(f'{name}[{i}]: ours {b[i]!r} ({bb[i]:#x}), netCDF-C {a[i]!r} ({ab[i]:#x})')
        n += 1
    print(path, 'ok', n if not bad else bad[:5])
"#;

#[test]
fn quantized_data_is_bit_identical_to_netcdf_c() {
    let d = tempdir("quantize");
    let Some(out) = python_script(&d, "import netCDF4, numpy", "netCDF4-python", WRITE) else {
        return;
    };
    let vars: Vec<(String, String, String)> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| {
            let mut p = l.split(' ').map(str::to_string);
            (p.next().unwrap(), p.next().unwrap(), p.next().unwrap())
        })
        .collect();
    assert_eq!(vars.len(), (6 + 6 + 23) + (15 + 15 + 52));

    // nccopy-rs -Q, to netCDF-4 and to NCZarr
    let mut args: Vec<String> = Vec::new();
    for (name, mode, nsd) in &vars {
        args.push("-Q".into());
        args.push(format!("{name},{mode},{nsd}"));
    }
    let store = format!("file://{}#mode=nczarr,file", d.join("copy.zarr").display());
    for out in ["copy.nc", store.as_str()] {
        let mut a = args.clone();
        a.push("raw.nc".into());
        a.push(out.into());
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = run("nccopy-rs", &a, &d);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    }

    // ncgen-rs of the raw data with the attributes in the CDL
    let o = run("ncdump-rs", &["-p", "9,17", "raw.nc"], &d);
    assert!(o.status.success());
    let mut cdl = String::from_utf8(o.stdout).unwrap();
    for (name, mode, nsd) in &vars {
        let att = match mode.as_str() {
            "BitGroom" => "_QuantizeBitGroomNumberOfSignificantDigits",
            "GranularBitRound" => "_QuantizeGranularBitRoundNumberOfSignificantDigits",
            _ => "_QuantizeBitRoundNumberOfSignificantBits",
        };
        let ty = if name.starts_with("f4") {
            "float"
        } else {
            "double"
        };
        let decl = format!("\t{ty} {name}(n) ;\n");
        assert!(cdl.contains(&decl), "{decl}");
        cdl = cdl.replace(&decl, &format!("{decl}\t\t{name}:{att} = {nsd} ;\n"));
    }
    std::fs::write(d.join("q.cdl"), cdl).unwrap();
    let o = run("ncgen-rs", &["-4", "-o", "gen.nc", "q.cdl"], &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // every variable bit for bit (the NCZarr store read by netCDF4-python too)
    std::fs::write(d.join("compare.py"), COMPARE).unwrap();
    let o = std::process::Command::new("python3")
        .args(["compare.py", "copy.nc", &store, "gen.nc"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let n = vars.len();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("copy.nc ok {n}\n{store} ok {n}\ngen.nc ok {n}\n")
    );

    // copying a quantized file quantizes nothing again: the bytes are the input's
    let o = run(
        "nccopy-rs",
        &["-Q", "*,BitRound,1", "copy.nc", "again.nc"],
        &d,
    );
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), n, "{stderr}");
    assert!(stderr.contains(
        "nccopy: warning: /f4_BitRound_5: quantized already (its _Quantize* attribute): copied as \
         it is, not quantized again by -Q '*,...'\n"
    ));
    let a = run("ncdump-rs", &["-p", "9,17", "copy.nc"], &d);
    let b = run("ncdump-rs", &["-p", "9,17", "again.nc"], &d);
    assert_eq!(
        String::from_utf8_lossy(&a.stdout).replacen("netcdf copy", "netcdf X", 1),
        String::from_utf8_lossy(&b.stdout).replacen("netcdf again", "netcdf X", 1)
    );
}
