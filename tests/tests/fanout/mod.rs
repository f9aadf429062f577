//! One copy written by parts (`nccopy-rs --part`, issue 17.4), in a directory and in the local
//! S3 server: init, parts in a shuffled order (some at once), finish equal a one-process copy
//! key for key and byte for byte, for Zarr v2, NCZarr and sharded Zarr v3; finish with parts
//! missing names them and leaves nothing that looks complete; a part killed mid-way and rerun,
//! a part rerun twice or after finish, change nothing; a part with other options is refused;
//! and the Dask example on a LocalCluster of two workers. Part of the `remote` test binary,
//! so the S3 server starts once.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use super::common::{bin, python_script, root, tempdir};
use super::servers::{FaultProxy, Faults, Moto};
use super::{ok, server, stderr, tool, SECRET};

/// The options every step of a copy gets: chunks small enough that each variable has several.
const OPTS: [&str; 2] = ["-c", "t/2,y/5,x/10"];

/// A source with several chunks per variable: a(t, y, x) float, b(y, x) int, a scalar, and a
/// variable in a group.
fn fanout_source(dir: &Path) {
    let (nt, ny, nx) = (12, 20, 30);
    let a: Vec<String> = (0..nt * ny * nx)
        .map(|i| format!("{}.5", (i * 7) % 1000))
        .collect();
    let b: Vec<String> = (0..ny * nx).map(|i| (i * 3 - 500).to_string()).collect();
    let c: Vec<String> = (0..nx).map(|i| (i * 11).to_string()).collect();
    let cdl = format!(
        "netcdf src {{\ndimensions:\n\tt = UNLIMITED ;\n\ty = {ny} ;\n\tx = {nx} ;\n\
         variables:\n\tfloat a(t, y, x) ;\n\t\ta:units = \"K\" ;\n\tint b(y, x) ;\n\
         \tdouble s ;\n// global attributes:\n\t\t:title = \"fan-out\" ;\n\
         data:\n a = {} ;\n b = {} ;\n s = 3.25 ;\n\n\
         group: g {{\n  variables:\n\tshort c(x) ;\n  data:\n c = {} ;\n  }} // group g\n}}\n",
        a.join(", "),
        b.join(", "),
        c.join(", ")
    );
    std::fs::write(dir.join("src.cdl"), cdl).unwrap();
    let o = Command::new(bin("ncgen-rs"))
        .args(["-k", "nc4", "-o", "src.nc", "src.cdl"])
        .current_dir(dir)
        .output()
        .unwrap();
    ok(&o, "ncgen fan-out source");
}

/// The output kinds: name, mode words, extra options.
const KINDS: [(&str, &str, &[&str]); 3] = [
    ("v2", "zarr", &[]),
    ("nczarr", "nczarr", &[]),
    ("v3", "zarr,v3", &["--shard", "a:4,10,30"]),
];

fn args<'a>(extra: &[&'a str], step: &'a str, dst: &'a str) -> Vec<&'a str> {
    let mut v: Vec<&str> = OPTS.to_vec();
    v.extend_from_slice(extra);
    v.extend(["--part", step, "src.nc", dst]);
    v
}

/// Every file and directory below `dir` (relative paths), files with their bytes.
fn tree(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.insert(rel, None);
                walk(base, &p, out);
            } else {
                out.insert(rel, Some(std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn same_tree(a: &BTreeMap<String, Option<Vec<u8>>>, b: &BTreeMap<String, Option<Vec<u8>>>) {
    let ka: Vec<&String> = a.keys().collect();
    let kb: Vec<&String> = b.keys().collect();
    assert_eq!(ka, kb, "the same keys");
    for (k, v) in a {
        assert!(b[k] == *v, "{k}: bytes differ");
    }
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

/// Local directory stores, every kind: the whole life of a copy by parts.
#[test]
fn parts_in_a_directory_equal_a_one_process_copy() {
    let dir = tempdir("fanout-local");
    fanout_source(&dir);
    let run = |a: &[&str]| tool("nccopy-rs", a, &dir, "http://127.0.0.1:9", &[]);
    for (name, mode, extra) in KINDS {
        let one = format!("file://one-{name}#mode={mode},file");
        let dst = format!("file://parts-{name}#mode={mode},file");
        let mut whole: Vec<&str> = OPTS.to_vec();
        whole.extend_from_slice(extra);
        whole.extend(["src.nc", one.as_str()]);
        ok(&run(&whole), "one-process copy");
        let want = tree(&dir.join(format!("one-{name}")));
        assert!(want.len() > 20, "{name}: several chunks per variable");
        let store = dir.join(format!("parts-{name}"));
        let root_key = if name == "v3" { "zarr.json" } else { ".zgroup" };

        // finish before a part: names every part (finish/3) and leaves nothing complete
        ok(&run(&args(extra, "init", &dst)), "init");
        let o = run(&args(extra, "finish/3", &dst));
        assert_eq!(code(&o), Some(3), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("3 of 3 parts have not finished: 0, 1, 2 (0-based"),
            "{}",
            stderr(&o)
        );
        ok(&run(&args(extra, "2/3", &dst)), "part 2");
        let o = run(&args(extra, "finish", &dst));
        assert_eq!(code(&o), Some(3), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("2 of 3 parts have not finished: 0, 1 (0-based"),
            "{}",
            stderr(&o)
        );
        assert!(!store.join(root_key).exists(), "{name}: looks complete");
        assert!(!store.join(".zattrs").exists(), "{name}: root attributes");

        // a part with other options is refused, and writes nothing
        let before = tree(&store);
        let mut other = args(extra, "1/3", &dst);
        other.splice(0..0, ["-d", "1"]);
        let o = run(&other);
        assert_eq!(code(&o), Some(3), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("with other copy options or another input"),
            "{}",
            stderr(&o)
        );
        same_tree(&before, &tree(&store));

        // parts 0 and 1 at once
        std::thread::scope(|s| {
            let h: Vec<_> = ["0/3", "1/3"]
                .map(|p| {
                    let a = args(extra, p, &dst);
                    s.spawn(move || run(&a))
                })
                .into_iter()
                .collect();
            for (i, h) in h.into_iter().enumerate() {
                ok(&h.join().unwrap(), &format!("part {i}"));
            }
        });
        // a part run twice writes nothing the second time
        let before = tree(&store);
        let o = run(&args(extra, "2/3", &dst));
        assert!(
            ok(&o, "part 2 again").is_empty() && stderr(&o).contains("done already"),
            "{}",
            stderr(&o)
        );
        same_tree(&before, &tree(&store));

        ok(&run(&args(extra, "finish", &dst)), "finish");
        same_tree(&want, &tree(&store));

        // a part or finish after finish changes nothing
        for step in ["1/3", "finish"] {
            let o = run(&args(extra, step, &dst));
            assert!(
                o.status.success() && stderr(&o).contains("already complete"),
                "{step}: {}",
                stderr(&o)
            );
            same_tree(&want, &tree(&store));
        }
        // init again starts over: the store no longer looks complete
        ok(&run(&args(extra, "init", &dst)), "init again");
        assert!(!store.join(root_key).exists());
    }
}

#[test]
fn parts_refuse_what_cannot_be_written_by_parts() {
    let dir = tempdir("fanout-refuse");
    fanout_source(&dir);
    let run = |a: &[&str]| tool("nccopy-rs", a, &dir, "http://127.0.0.1:9", &[]);
    for (dst, why) in [
        (
            "out.nc",
            "only an NCZarr / Zarr store can be written by parts",
        ),
        ("file://z.zip#mode=zarr,zip", "a zip store is one archive"),
    ] {
        let o = run(&["--part", "0/2", "src.nc", dst]);
        assert_eq!(code(&o), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
    }
    for (part, why) in [
        ("2/2", "parts are numbered 0 to 1 (0-based"),
        ("1/0", "the part count N must be at least 1"),
        ("start", "expected init, I/N"),
    ] {
        let o = run(&["--part", part, "src.nc", "file://p#mode=zarr,file"]);
        assert_eq!(code(&o), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(why), "{part}: {}", stderr(&o));
    }
    // a part before init
    let o = run(&["--part", "0/2", "src.nc", "file://p#mode=zarr,file"]);
    assert_eq!(code(&o), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("run nccopy-rs --part init"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("p").exists());
}

/// Every key below `prefix` in `bucket`, with its bytes, keyed without the prefix (read
/// through nc-store, signed, as the objects are private).
fn objects(m: &Moto, bucket: &str, prefix: &str) -> BTreeMap<String, Vec<u8>> {
    use nc_store::Store;
    static ENV: std::sync::Once = std::sync::Once::new();
    ENV.call_once(|| {
        std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", SECRET);
        std::env::set_var("AWS_REGION", "us-east-1");
        std::env::set_var("AWS_EC2_METADATA_DISABLED", "true");
    });
    let url = format!(
        "{}/{bucket}/{}#mode=zarr,s3",
        m.endpoint(),
        prefix.trim_end_matches('/')
    );
    let u = nc_store::remote::parse_remote(&url).unwrap();
    let store = nc_store::remote::open_store(&u).unwrap();
    let keys = store.list("").unwrap();
    assert_eq!(
        keys.len(),
        m.keys(bucket, prefix).len(),
        "{url}: every key listed"
    );
    keys.into_iter()
        .map(|k| {
            let v = store.get(&k).unwrap().unwrap();
            (k, v)
        })
        .collect()
}

fn same_objects(want: &BTreeMap<String, Vec<u8>>, got: &BTreeMap<String, Vec<u8>>) {
    let kw: Vec<&String> = want.keys().collect();
    let kg: Vec<&String> = got.keys().collect();
    assert_eq!(kw, kg, "the same keys");
    for (k, v) in want {
        assert!(got[k] == *v, "{k}: bytes differ");
    }
}

/// The S3 server: every kind by parts equals the one-process copy; a part killed mid-way
/// (SIGKILL, through a slow proxy) and rerun gives the same store.
#[test]
fn parts_on_s3_equal_a_one_process_copy_even_after_a_kill() {
    let Some(m) = server() else { return };
    m.bucket("fanout");
    let dir = tempdir("fanout-s3");
    fanout_source(&dir);
    let ep = m.endpoint();
    let run = |a: &[&str]| tool("nccopy-rs", a, &dir, &ep, &[]);
    for (name, mode, extra) in KINDS {
        let one = format!("s3://fanout/one-{name}#mode={mode}");
        let dst = format!("s3://fanout/parts-{name}#mode={mode}");
        let mut whole: Vec<&str> = OPTS.to_vec();
        whole.extend_from_slice(extra);
        whole.extend(["src.nc", one.as_str()]);
        ok(&run(&whole), "one-process copy");
        let want = objects(m, "fanout", &format!("one-{name}/"));
        // v3: a's 6 shards; b, c and s are small (-M: one chunk each)
        assert!(want.len() > 12, "{name}: several units");
        let prefix = format!("parts-{name}/");
        let root_key = if name == "v3" { "zarr.json" } else { ".zgroup" };

        ok(&run(&args(extra, "init", &dst)), "init");
        if name == "v2" {
            // part 0 killed once some of its chunks are in place, then rerun
            let init_keys = m.keys("fanout", &prefix).len();
            let proxy = FaultProxy::start(m.port, Faults::Slow { ms: 400 });
            let mut child = Command::new(bin("nccopy-rs"))
                .args(args(extra, "0/2", &dst))
                .current_dir(&dir)
                .env("AWS_ACCESS_KEY_ID", "testing")
                .env("AWS_SECRET_ACCESS_KEY", SECRET)
                .env("AWS_REGION", "us-east-1")
                .env("AWS_ENDPOINT_URL", proxy.endpoint())
                .env("AWS_EC2_METADATA_DISABLED", "true")
                .env("HOME", &dir)
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let t0 = std::time::Instant::now();
            while m.keys("fanout", &prefix).len() == init_keys {
                assert!(t0.elapsed().as_secs() < 60, "part 0 wrote nothing");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            child.kill().unwrap();
            let st = child.wait().unwrap();
            assert_eq!(st.code(), None, "killed by a signal, not finished");
            let keys = m.keys("fanout", &prefix);
            assert!(keys.len() > init_keys, "mid-way: some chunks are there");
            assert!(
                !keys.iter().any(|k| k.contains(".nccopy-parts/")),
                "no marker of a killed part: {keys:?}"
            );
            let o = run(&args(extra, "finish", &dst));
            assert_eq!(code(&o), Some(3), "{}", stderr(&o));
            assert!(
                stderr(&o).contains("no part has finished yet"),
                "{}",
                stderr(&o)
            );
            ok(&run(&args(extra, "1/2", &dst)), "part 1");
            let o = run(&args(extra, "finish", &dst));
            assert!(
                stderr(&o).contains("1 of 2 parts have not finished: 0 (0-based"),
                "{}",
                stderr(&o)
            );
            assert!(!m
                .keys("fanout", &prefix)
                .iter()
                .any(|k| k.ends_with(root_key) && k.matches('/').count() == 1));
            ok(&run(&args(extra, "0/2", &dst)), "part 0 rerun");
        } else {
            // three parts: 2 alone, then 0 and 1 at once
            ok(&run(&args(extra, "2/3", &dst)), "part 2");
            std::thread::scope(|s| {
                let h: Vec<_> = ["1/3", "0/3"]
                    .map(|p| {
                        let a = args(extra, p, &dst);
                        s.spawn(move || run(&a))
                    })
                    .into_iter()
                    .collect();
                for h in h {
                    ok(&h.join().unwrap(), "part");
                }
            });
            let before = objects(m, "fanout", &prefix);
            assert!(!before.contains_key(root_key), "{name}: looks complete");
            let o = run(&args(extra, "1/3", &dst));
            assert!(stderr(&o).contains("done already"), "{}", stderr(&o));
            same_objects(&before, &objects(m, "fanout", &prefix));
        }
        ok(&run(&args(extra, "finish", &dst)), "finish");
        let got = objects(m, "fanout", &prefix);
        same_objects(&want, &got);
        let o = run(&args(extra, "0/3", &dst));
        assert!(
            o.status.success() && stderr(&o).contains("already complete"),
            "{}",
            stderr(&o)
        );
        same_objects(&want, &objects(m, "fanout", &prefix));
    }
}

/// Pure Zarr by parts, in a directory and in the S3 server: the consolidated metadata (v2
/// `.zmetadata`, v3 inline in the root `zarr.json`) appears only at finish, and zarr-python 3's
/// `open_consolidated` and xarray's `open_zarr(consolidated=True)` read every value through it.
#[test]
fn finish_consolidates_and_zarr_python_and_xarray_read_it() {
    let Some(m) = server() else { return };
    m.bucket("fanoutcons");
    let dir = tempdir("fanout-cons");
    fanout_source(&dir);
    let ep = m.endpoint();
    let run = |a: &[&str]| tool("nccopy-rs", a, &dir, &ep, &[]);
    let mut checks = Vec::new();
    for (name, mode, extra) in KINDS.iter().filter(|k| k.0 != "nczarr") {
        for place in ["file", "s3"] {
            let (dst, key) = if place == "file" {
                (format!("file://c-{name}#mode={mode},file"), String::new())
            } else {
                (
                    format!("s3://fanoutcons/c-{name}#mode={mode}"),
                    format!("c-{name}"),
                )
            };
            ok(&run(&args(extra, "init", &dst)), "init");
            for p in ["1/2", "0/2"] {
                ok(&run(&args(extra, p, &dst)), p);
            }
            // complete but not finished: neither consolidated nor looking complete
            let top: Vec<String> = if place == "file" {
                std::fs::read_dir(dir.join(format!("c-{name}")))
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            } else {
                m.keys("fanoutcons", &format!("{key}/"))
                    .into_iter()
                    .map(|k| k[key.len() + 1..].to_string())
                    .collect()
            };
            for k in [".zmetadata", "zarr.json", ".zgroup"] {
                assert!(
                    !top.contains(&k.to_string()),
                    "{name} {place}: {k} before finish"
                );
            }
            ok(&run(&args(extra, "finish", &dst)), "finish");
            let fmt = if *name == "v3" { 3 } else { 2 };
            checks.push(format!("({place:?}, {:?}, {fmt})", format!("c-{name}")));
        }
    }
    let script = format!(
        r#"
import warnings, numpy as np, zarr, xarray as xr
from obstore.store import S3Store
from zarr.storage import ObjectStore, LocalStore
nt, ny, nx = 12, 20, 30
a = ((np.arange(nt * ny * nx) * 7) % 1000 + 0.5).astype("f4").reshape(nt, ny, nx)
b = (np.arange(ny * nx) * 3 - 500).astype("i4").reshape(ny, nx)
c = (np.arange(nx) * 11).astype("i2")
for place, name, fmt in [{}]:
    if place == "s3":
        st = ObjectStore(S3Store("fanoutcons", prefix=name, endpoint="{ep}", region="us-east-1",
                         access_key_id="testing", secret_access_key="x",
                         client_options={{"allow_http": True}}), read_only=True)
    else:
        st = LocalStore(name, read_only=True)
    g = zarr.open_consolidated(st, mode="r", zarr_format=fmt)
    assert g.metadata.consolidated_metadata is not None, name
    assert sorted(g.metadata.consolidated_metadata.metadata) == ["a", "b", "g", "s"],         sorted(g.metadata.consolidated_metadata.metadata)
    assert (g["a"][:] == a).all() and (g["b"][:] == b).all() and np.asarray(g["s"][...]).ravel().tolist() == [3.25]
    assert (g["g"]["c"][:] == c).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = xr.open_zarr(st, consolidated=True, zarr_format=fmt, mask_and_scale=False)
    assert (ds["a"].values == a).all() and (ds["b"].values == b).all()
    assert ds["s"].values.ravel().tolist() == [3.25]
    assert ds.attrs["title"] == "fan-out", ds.attrs
    print(place, name, "equal")
"#,
        checks.join(", ")
    );
    let Some(out) = python_script(
        &dir,
        "import zarr, xarray, obstore; assert int(zarr.__version__.split('.')[0]) >= 3",
        "zarr 3, xarray and obstore",
        &script,
    ) else {
        return;
    };
    let out = String::from_utf8(out).unwrap();
    assert_eq!(
        out,
        "file c-v2 equal\ns3 c-v2 equal\nfile c-v3 equal\ns3 c-v3 equal\n"
    );
}

/// examples/dask_fanout.py on a LocalCluster of two workers against the S3 server.
#[test]
fn the_dask_example_equals_a_one_process_copy() {
    let Some(m) = server() else { return };
    let probe = Command::new("python3")
        .args(["-c", "import dask.distributed"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !probe {
        eprintln!("SKIP: dask and distributed not installed (pip install dask distributed)");
        return;
    }
    m.bucket("dask");
    let dir = tempdir("fanout-dask");
    fanout_source(&dir);
    let ep = m.endpoint();
    let mut whole: Vec<&str> = OPTS.to_vec();
    whole.extend(["src.nc", "s3://dask/one.zarr#mode=zarr"]);
    ok(
        &tool("nccopy-rs", &whole, &dir, &ep, &[]),
        "one-process copy",
    );
    let nccopy = bin("nccopy-rs");
    let script = root().join("examples/dask_fanout.py");
    let mut o = Command::new("python3");
    o.arg(&script)
        .args(["--parts", "4", "--local-workers", "2", "--nccopy"])
        .arg(&nccopy)
        .args(["src.nc", "s3://dask/parts.zarr#mode=zarr", "--"])
        .args(OPTS)
        .current_dir(&dir)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", &ep)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("HOME", &dir)
        .env("NCRS_THREADS", "1");
    let out = o.output().unwrap();
    let text = ok(&out, "dask example");
    assert!(text.contains("finish: done"), "{text}");
    let want = objects(m, "dask", "one.zarr/");
    assert!(want.len() > 20);
    same_objects(&want, &objects(m, "dask", "parts.zarr/"));
}
