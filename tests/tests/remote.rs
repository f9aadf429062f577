//! Object storage and HTTP, end to end (issue 17): every format both ways through a local S3
//! server (moto), zarr-python reading what we wrote there and we reading what it wrote, HTTP
//! range reads, metadata-only header reads, faults (transient and persistent), and refusals
//! (missing bucket or key, bad credentials, access denied) as one line with a cure, never
//! showing a secret; copies written by parts (`fanout`). One test binary: the S3 server
//! starts once for all of them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod fanout;
mod servers;

use std::path::Path;
use std::process::{Command, Output};

use common::{bin, tempdir};
use servers::{moto, FaultProxy, Faults, Moto, RangeServer};

/// A secret that must never be shown.
const SECRET: &str = "s3cr3t-Never-Shown-42";

/// Run a tool with the S3 settings of `endpoint` (and no profile files, no instance metadata).
fn tool(name: &str, args: &[&str], dir: &Path, endpoint: &str, extra: &[(&str, &str)]) -> Output {
    let mut c = s3_command(name, args, dir, endpoint);
    c.env("NC_STORE_RETRIES", "4")
        .env("NC_STORE_RETRY_TIMEOUT", "20")
        .env("NC_STORE_TIMEOUT", "10")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SESSION_TOKEN");
    for (k, v) in extra {
        c.env(k, v);
    }
    let t0 = std::time::Instant::now();
    let o = c.output().unwrap();
    if t0.elapsed().as_secs_f64() > 1.0 {
        eprintln!("SLOW {name} {args:?}: {:?}", t0.elapsed());
    }
    o
}

/// A tool run in `dir` with the S3 settings of `endpoint` and `HOME` there.
fn s3_command(name: &str, args: &[&str], dir: &Path, endpoint: &str) -> Command {
    let mut c = Command::new(bin(name));
    c.args(args)
        .current_dir(dir)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("HOME", dir);
    c
}

fn ok(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: exit {:?}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The data section of a dump, variable by variable, in name order.
fn values(cdl: &str) -> Vec<String> {
    let data = cdl.split_once("\ndata:\n").map_or("", |(_, d)| d);
    let mut v: Vec<String> = data
        .split("\n\n")
        .map(str::trim)
        .filter(|b| !b.is_empty() && *b != "}")
        .map(|b| b.trim_end_matches('}').trim().to_string())
        .collect();
    v.sort();
    v
}

/// A dump without its first line (the dataset name follows the file name).
fn body(cdl: &str) -> String {
    cdl.split_once('\n').map_or("", |(_, b)| b).to_string()
}

const CDL: &str = r#"netcdf src {
dimensions:
	t = UNLIMITED ;
	x = 6 ;
	n = 3 ;
variables:
	double t(t) ;
		t:units = "days since 2000-01-01" ;
	float temp(t, x) ;
		temp:units = "K" ;
		temp:_FillValue = -999.f ;
	int count(x) ;
	short s(n) ;
	char label(n) ;

// global attributes:
		:title = "remote round trip" ;
data:

 t = 0, 1, 2, 3 ;

 temp =
  1.5, 2.5, 3.5, 4.5, 5.5, 6.5,
  7.5, 8.5, 9.5, 10.5, 11.5, 12.5,
  13.5, 14.5, 15.5, 16.5, 17.5, 18.5,
  19.5, 20.5, 21.5, 22.5, _, 24.5 ;

 count = 1, 2, 3, 4, 5, 6 ;

 s = -1, 0, 1 ;

 label = "abc" ;
}
"#;

/// `NAME.cdl` holding `cdl`, made into the netCDF-4 file `NAME.nc` in `dir` by ncgen-rs.
fn nc4_from_cdl(dir: &Path, name: &str, cdl: &str) {
    std::fs::write(dir.join(format!("{name}.cdl")), cdl).unwrap();
    let o = Command::new(bin("ncgen-rs"))
        .args([
            "-k",
            "nc4",
            "-o",
            &format!("{name}.nc"),
            &format!("{name}.cdl"),
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    ok(&o, &format!("ncgen {name}"));
}

/// A source dataset and the dump every copy must show.
fn source(dir: &Path) -> String {
    nc4_from_cdl(dir, "src", CDL);
    let o = Command::new(bin("ncdump-rs"))
        .arg("src.nc")
        .current_dir(dir)
        .output()
        .unwrap();
    body(&ok(&o, "ncdump src"))
}

fn server() -> Option<&'static Moto> {
    let m = moto()?;
    static BUCKETS: std::sync::Once = std::sync::Once::new();
    BUCKETS.call_once(|| {
        for b in [
            "roundtrip",
            "faults",
            "python",
            "header",
            "refuse",
            "replace",
            "ranges",
            "wild",
            "subset",
        ] {
            m.bucket(b);
        }
    });
    Some(m)
}

/// nc-store's shared suite, run by the remote implementations: a store in the bucket (through
/// netCDF-C's address form of an S3-compatible server), an object and a web file as byte
/// sources.
#[test]
fn remote_store_and_sources_pass_the_shared_suite() {
    use nc_store::remote::{create_store, open_source, parse_remote};
    use nc_store::Store;
    let Some(m) = server() else { return };
    // this process's own requests (the tools get their settings per command)
    static ENV: std::sync::Once = std::sync::Once::new();
    ENV.call_once(|| {
        std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", SECRET);
        std::env::set_var("AWS_REGION", "us-east-1");
        std::env::set_var("AWS_EC2_METADATA_DISABLED", "true");
    });
    let u = parse_remote(&format!("{}/roundtrip/suite#mode=zarr,s3", m.endpoint())).unwrap();
    // metadata keys held back until close, as the Zarr writer ranks them
    let rank: nc_store::remote::MetadataRank = |k| {
        k.rsplit('/')
            .next()
            .filter(|l| l.starts_with('.'))
            .map(|_| 1)
    };
    let s = create_store(&u, rank).unwrap();
    nc_store::suite::writable_store(&s);
    s.close().unwrap();
    let mut keys = m.keys("roundtrip", "suite/");
    keys.sort();
    assert_eq!(
        keys,
        [
            "suite/.zgroup",
            "suite/g/w/1/2",
            "suite/v/.zarray",
            "suite/v/0.1"
        ]
    );
    let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let (status, _) = servers::request(m.port, "PUT", "/roundtrip/suite.bin", &bytes);
    assert_eq!(status, 200);
    let u = parse_remote(&format!(
        "{}/roundtrip/suite.bin#mode=bytes,s3",
        m.endpoint()
    ))
    .unwrap();
    nc_store::suite::byte_source(&open_source(&u).unwrap(), &bytes);
    let dir = tempdir("remote-suite");
    std::fs::write(dir.join("suite.bin"), &bytes).unwrap();
    let web = RangeServer::start(&dir);
    let u = parse_remote(&web.url("suite.bin")).unwrap();
    nc_store::suite::byte_source(&open_source(&u).unwrap(), &bytes);
}

/// Opening an object is its first ranged GET (no HEAD): the object's length comes from the
/// answer, and reads in the bytes it brought cost nothing more. An object shorter than that
/// range, and an empty one (S3 and a web server answer 416: the whole, empty, object is then
/// asked for), open too, from S3 and from web servers honouring or ignoring `Range`.
#[test]
fn opening_an_object_is_its_first_get() {
    use nc_store::remote::{open_source, parse_remote};
    use nc_store::ByteSource;
    use std::sync::atomic::Ordering::Relaxed;
    let Some(m) = server() else { return };
    let dir = tempdir("remote-open");
    let proxy = FaultProxy::start(m.port, Faults::None);
    let web = RangeServer::start(&dir);
    let plain = RangeServer::ignoring_ranges(&dir);
    for len in [0usize, 1000, 3_000_000] {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
        let name = format!("open{len}.bin");
        m.put_public("ranges", &name, &bytes);
        std::fs::write(dir.join(&name), &bytes).unwrap();
        // requests to open, and requests to open and read the first 100 bytes and the rest
        let (open, read) = match len {
            0 => (2, 2),
            1000 => (1, 1),
            _ => (1, 2),
        };
        let check = |src: &dyn ByteSource, what: &str| {
            assert_eq!(src.len(), len as u64, "{what}");
            let head = src.read_vec(0, len.min(100)).unwrap();
            assert_eq!(head, bytes[..len.min(100)], "{what}");
            if len > 100 {
                assert!(
                    src.read_vec(100, len - 100).unwrap() == bytes[100..],
                    "{what}"
                );
            }
        };
        let u = parse_remote(&format!(
            "{}/ranges/{name}#mode=bytes,s3,anon",
            proxy.endpoint()
        ))
        .unwrap();
        let src = open_source(&u).unwrap();
        assert_eq!(
            proxy.take_kinds(),
            [("GET".to_string(), open)].into(),
            "S3 {len}: open"
        );
        check(&src, &format!("S3 {len}"));
        assert_eq!(
            proxy.take_kinds(),
            [("GET".to_string(), read - open)]
                .into_iter()
                .filter(|k| k.1 > 0)
                .collect(),
            "S3 {len}: reads"
        );
        let before = web.requests.load(Relaxed);
        check(
            &open_source(&parse_remote(&web.url(&name)).unwrap()).unwrap(),
            &format!("web {len}"),
        );
        assert_eq!(web.requests.load(Relaxed) - before, read, "web {len}");
        // ignoring Range: the refused opening GET, then the whole object, read from then on
        let before = plain.requests.load(Relaxed);
        check(
            &open_source(&parse_remote(&plain.url(&name)).unwrap()).unwrap(),
            &format!("web ignoring Range {len}"),
        );
        assert_eq!(plain.requests.load(Relaxed) - before, 2, "plain {len}");
    }
}

#[test]
fn every_format_both_ways_through_s3() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-formats");
    let want = source(&dir);
    let ep = m.endpoint();
    let outs = [
        ("classic", "s3://roundtrip/c1.nc", "classic"),
        ("64-bit offset", "s3://roundtrip/c2.nc", "64-bit offset"),
        ("cdf5", "s3://roundtrip/c5.nc", "cdf5"),
        ("nc4", "s3://roundtrip/n4.nc", "netCDF-4"),
        ("nc7", "s3://roundtrip/n7.nc", "netCDF-4 classic model"),
        ("nc4", "s3://roundtrip/nz.zarr#mode=nczarr", ""),
        ("nc4", "s3://roundtrip/z2.zarr#mode=zarr", ""),
        ("nc4", "s3://roundtrip/z3.zarr#mode=zarr,v3", ""),
        // netCDF-C's form for an S3-compatible server named by its address
        (
            "nc4",
            &format!("{ep}/roundtrip/nc-c.zarr#mode=nczarr,s3"),
            "",
        ),
    ];
    for (i, (kind, url, shown)) in outs.iter().enumerate() {
        let o = tool("nccopy-rs", &["-k", kind, "src.nc", url], &dir, &ep, &[]);
        ok(&o, &format!("nccopy to {url}"));
        let o = tool("ncdump-rs", &[url], &dir, &ep, &[]);
        let got = ok(&o, &format!("ncdump {url}"));
        // pure Zarr drops the dimension's unlimited mark; the values stay
        let norm = |t: &str| t.replace("t = UNLIMITED ; // (4 currently)", "t = 4 ;");
        if url.contains("mode=zarr") {
            // pure Zarr lists variables by name
            assert_eq!(values(&norm(&got)), values(&norm(&want)), "{url}");
        } else {
            assert_eq!(body(&got), want, "{url}");
        }
        if !shown.is_empty() {
            let o = tool("ncdump-rs", &["-k", url], &dir, &ep, &[]);
            assert_eq!(ok(&o, "ncdump -k"), format!("{shown}\n"), "{url}");
        }
        // and back to a local file, values identical
        let back = format!("back{i}.nc");
        let o = tool("nccopy-rs", &["-k", "nc4", url, &back], &dir, &ep, &[]);
        ok(&o, &format!("nccopy from {url}"));
        let o = tool("ncdump-rs", &[&back], &dir, &ep, &[]);
        let got = ok(&o, "ncdump back");
        assert_eq!(values(&got), values(&want), "{url} back");
    }
    // the store found by looking, without mode words: NCZarr by its metadata
    let o = tool(
        "ncdump-rs",
        &["-h", "s3://roundtrip/nz.zarr"],
        &dir,
        &ep,
        &[],
    );
    assert!(ok(&o, "ncdump store by looking").contains("temp:units = \"K\""));
    // the metadata objects of a finished store are all there
    let keys = m.keys("roundtrip", "nz.zarr/");
    assert!(keys.contains(&"nz.zarr/.zgroup".to_string()), "{keys:?}");
    assert!(
        keys.iter().any(|k| k.starts_with("nz.zarr/temp/")),
        "{keys:?}"
    );
}

#[test]
fn a_header_fetches_only_metadata() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-header");
    // 8 MiB of data after a small header
    nc4_from_cdl(
        &dir,
        "big",
        "netcdf big { dimensions: x = 2097152 ; variables: float v(x) ; v:units = \"m\" ; v:_ChunkSizes = 262144 ; data: v = 1 ; }",
    );
    let ep = m.endpoint();
    ok(
        &tool(
            "nccopy-rs",
            &["big.nc", "s3://header/big.nc"],
            &dir,
            &ep,
            &[],
        ),
        "upload",
    );
    let o = tool(
        "ncdump-rs",
        &["-hs", "s3://header/big.nc"],
        &dir,
        &ep,
        &[("NC_IO_STATS", "1")],
    );
    let out = ok(&o, "ncdump -hs");
    assert!(out.contains("v:_ChunkSizes = 262144 ;"), "{out}");
    let err = stderr(&o);
    // the GET that opens the object, its first 512 KiB block, holds the header: no HEAD, no
    // more (a HEAD and that GET before)
    assert_eq!(
        err,
        format!(
            "ncdump: remote I/O: 1 requests, {} bytes read, 0 bytes written\n",
            512 * 1024
        )
    );
    // --explain reports the same kind of line after its table
    let o = tool(
        "nccopy-rs",
        &["--explain", "s3://header/big.nc", "o.nc"],
        &dir,
        &ep,
        &[],
    );
    let out = ok(&o, "explain");
    assert!(
        out.lines().last().unwrap().starts_with("remote I/O: "),
        "{out}"
    );
    assert!(!dir.join("o.nc").exists());
}

/// A netCDF-4 file written by netCDF-C through netCDF4-python with `nvars` variables of four
/// chunks each (deflate, shuffle on every other one) and six attributes each, as the bench's
/// `manyvars.nc` (`../shared/bench/make_corpus.py`): its header lies between the chunks over
/// the first megabytes, and its last structures at the end. `None` (after a SKIP line) without
/// netCDF4-python.
fn many_variables(dir: &Path, nvars: usize) -> Option<()> {
    let script = format!(
        r#"
import numpy as np, netCDF4
ds = netCDF4.Dataset("many.nc", "w", format="NETCDF4")
ds.title = "many small variables"
ds.createDimension("time", None)
ds.createDimension("y", 18)
ds.createDimension("x", 36)
tv = ds.createVariable("time", "f8", ("time",))
tv.units = "days since 2000-01-01"
tv[:] = np.arange(4.0)
for i in range({nvars}):
    dt = ("f4", "f8", "i2", "i4")[i % 4]
    v = ds.createVariable("var_%04d" % i, dt, ("time", "y", "x"), chunksizes=(1, 18, 36),
                          zlib=True, complevel=1, shuffle=bool(i % 2))
    v.set_auto_maskandscale(False)
    v.long_name = "synthetic diagnostic number %d" % i
    v.units = ("K", "m s-1", "kg m-2 s-1", "1")[i % 4]
    v.standard_name = "synthetic_quantity_%d" % (i % 97)
    v.cell_methods = "time: mean"
    v.valid_range = np.array([-1000, 1000], dtype=dt)
    v.comment = "variable %d of {nvars}" % i
    r = np.random.default_rng([20261121, i])
    v[:] = (100 * r.standard_normal((4, 18, 36))).astype(dt)
ds.close()
"#
    );
    common::python_script(dir, "import numpy, netCDF4", "numpy and netCDF4", &script)?;
    Some(())
}

/// The header of a 2000-variable netCDF-4 file (~52 MB, its metadata spread over its first
/// 17 MB and a few places after) costs at most 6 ranged GETs (docs/design.md, "Reading by
/// range": the second miss near the first fetches the 16 MiB around it, later ones 4 MiB),
/// and the output equals the local file's.
#[test]
fn a_many_variable_header_takes_a_handful_of_gets() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-many");
    if many_variables(&dir, 2000).is_none() {
        return;
    }
    // the file's own bytes (nccopy-rs would write it anew, with its own layout)
    m.put_public(
        "ranges",
        "many.nc",
        &std::fs::read(dir.join("many.nc")).unwrap(),
    );
    let proxy = FaultProxy::start(m.port, Faults::None);
    let ep = proxy.endpoint();
    let remote = ok(
        &tool("ncdump-rs", &["-hs", "s3://ranges/many.nc"], &dir, &ep, &[]),
        "ncdump -hs remote",
    );
    let kinds = proxy.take_kinds();
    let received = proxy.take_received();
    let local = ok(
        &Command::new(bin("ncdump-rs"))
            .args(["-hs", "many.nc"])
            .current_dir(&dir)
            .output()
            .unwrap(),
        "ncdump -hs local",
    );
    assert_eq!(body(&remote), body(&local), "remote -hs differs from local");
    let len = std::fs::metadata(dir.join("many.nc")).unwrap().len();
    // opened by its first GET: no HEAD
    assert_eq!(kinds.get("HEAD"), None, "{kinds:?}");
    assert!(
        kinds.get("GET").copied().unwrap_or(0) <= 6,
        "the header of a {len}-byte file with 2000 variables: {kinds:?}, {received} bytes"
    );
    // the metadata, not the whole file
    assert!(
        received < len * 3 / 4,
        "{received} bytes of {len}: {kinds:?}"
    );
}

/// A file of three variables whose chunks (1 x 180 x 360, deflated: 440, 190 and 74 kB) lie
/// in alternating stretches of 16, as netCDF-C writes a file 16 time steps at a time (67 MB
/// for 96 steps, more than the read-ahead pool holds); `None` (after a SKIP line) without
/// netCDF4-python.
fn stretches(dir: &Path, steps: usize) -> Option<()> {
    let script = format!(
        r#"
import numpy as np, netCDF4
ds = netCDF4.Dataset("stretches.nc", "w", format="NETCDF4")
ds.createDimension("time", None)
ds.createDimension("lat", 180)
ds.createDimension("lon", 360)
vs = [ds.createVariable(n, t, ("time", "lat", "lon"), chunksizes=(1, 180, 360), zlib=True,
                        complevel=1, shuffle=True)
      for n, t in (("zg", "f8"), ("tas", "f4"), ("psl", "i2"))]
y, x = np.meshgrid(np.linspace(-1, 1, 360), np.linspace(-1, 1, 180))
for t0 in range(0, {steps}, 16):
    for k, v in enumerate(vs):
        r = np.random.default_rng([7, k, t0])
        noise = r.standard_normal((16, 180, 360)) * (100, 10, 30)[k]
        v[t0:t0 + 16] = (1000 * np.sin(3 * x + k + y * t0 / 50.0) + noise).astype(v.dtype)
    # written now, 16 chunks of each variable in turn (else the chunk cache keeps them
    # until the file is closed, and writes each variable's chunks together)
    ds.sync()
ds.close()
"#
    );
    common::python_script(dir, "import numpy, netCDF4", "numpy and netCDF4", &script)?;
    Some(())
}

/// A remote netCDF-4 -> Zarr v3 copy receives each byte of the file about once (at most
/// 1.05 times the file, docs/design.md "Reading by range": chunk index nodes by 64 KiB
/// pieces, windows that stop at bytes already read and at a stretch's predicted end, unread
/// bytes kept longest), in few GETs.
#[test]
fn a_remote_copy_receives_each_byte_about_once() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-stretches");
    if stretches(&dir, 96).is_none() {
        return;
    }
    // the file's own bytes (nccopy-rs would write it anew, each variable's chunks together)
    let file = std::fs::read(dir.join("stretches.nc")).unwrap();
    m.put_public("ranges", "stretches.nc", &file);
    let proxy = FaultProxy::start(m.port, Faults::None);
    let ep = proxy.endpoint();
    ok(
        &tool(
            "nccopy-rs",
            &[
                "s3://ranges/stretches.nc",
                "s3://ranges/stretches.zarr#mode=zarr,v3",
            ],
            &dir,
            &ep,
            &[],
        ),
        "copy",
    );
    let kinds = proxy.take_kinds();
    let received = proxy.take_received();
    let len = file.len() as u64;
    let gets = kinds.get("GET").copied().unwrap_or(0);
    eprintln!("copy of {len} bytes: {kinds:?}, {received} bytes received");
    assert!(
        received * 100 <= len * 105,
        "received {received} bytes for a {len}-byte file ({:.3}x): {kinds:?}",
        received as f64 / len as f64
    );
    // 18 stretches of 16 chunks: about one GET each, and the chunk index nodes
    assert!(gets <= 60, "{kinds:?}");
    // (values: every_format_both_ways_through_s3; the bench's copies check every value)
    let got = ok(
        &tool(
            "ncdump-rs",
            &["-h", "s3://ranges/stretches.zarr#mode=zarr,v3"],
            &dir,
            &ep,
            &[],
        ),
        "ncdump -h store",
    );
    for v in [
        "double zg(time, lat, lon)",
        "float tas(time, lat, lon)",
        "short psl(time, lat, lon)",
    ] {
        assert!(got.contains(v), "{v}: {got}");
    }
}

#[test]
fn http_range_reads() {
    let dir = tempdir("remote-http");
    let want = source(&dir);
    let o = Command::new(bin("nccopy-rs"))
        .args(["-k", "classic", "src.nc", "src3.nc"])
        .current_dir(&dir)
        .output()
        .unwrap();
    ok(&o, "classic copy");
    let web = RangeServer::start(&dir);
    for name in ["src.nc", "src3.nc"] {
        for url in [web.url(name), format!("{}#mode=bytes", web.url(name))] {
            let o = tool("ncdump-rs", &[&url], &dir, "http://127.0.0.1:9", &[]);
            assert_eq!(body(&ok(&o, &url)), want, "{url}");
        }
    }
    let o = tool(
        "nccopy-rs",
        &[&web.url("src.nc"), "copy.nc"],
        &dir,
        "http://127.0.0.1:9",
        &[],
    );
    ok(&o, "nccopy from http");
    let o = tool("ncdump-rs", &["copy.nc"], &dir, "", &[]);
    assert_eq!(body(&ok(&o, "dump copy")), want);
    // a missing file, and writing to a web server
    let url = web.url("missing.nc");
    let o = tool("ncdump-rs", &["-h", &url], &dir, "", &[]);
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o),
        format!("ncdump: {url}: no such object, no OPeNDAP dataset (URL.dds), and no Zarr store (.zgroup, zarr.json or .zarray) below it; check the key (the path after the bucket)\n")
    );
    // a server ignoring Range: its whole file, read from then on (object_store drops the 200
    // answering the opening GET unread, so a second GET asks for the whole object)
    let plain = RangeServer::ignoring_ranges(&dir);
    let url = plain.url("src.nc");
    let o = tool("ncdump-rs", &[&url], &dir, "", &[("NC_IO_STATS", "1")]);
    assert_eq!(body(&ok(&o, &url)), want, "{url}");
    let len = std::fs::metadata(dir.join("src.nc")).unwrap().len();
    assert_eq!(
        stderr(&o),
        format!("ncdump: remote I/O: 2 requests, {len} bytes read, 0 bytes written\n")
    );
    assert_eq!(plain.requests.load(std::sync::atomic::Ordering::Relaxed), 2);
    let o = tool("nccopy-rs", &["src.nc", &web.url("out.nc")], &dir, "", &[]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("read-only"), "{}", stderr(&o));
    assert!(!dir.join("out.nc").exists());
}

#[test]
fn transient_faults_are_retried_and_the_copy_completes() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-transient");
    let want = source(&dir);
    let proxy = FaultProxy::start(m.port, Faults::Transient { every: 3 });
    let ep = proxy.endpoint();
    for url in ["s3://faults/ok.nc", "s3://faults/ok.zarr#mode=nczarr"] {
        ok(&tool("nccopy-rs", &["src.nc", url], &dir, &ep, &[]), url);
        let o = tool("ncdump-rs", &[url], &dir, &ep, &[]);
        let got = ok(&o, url);
        assert_eq!(values(&got), values(&want), "{url}");
    }
    assert!(proxy.seen.load(std::sync::atomic::Ordering::Relaxed) > 6);
}

#[test]
fn persistent_faults_fail_clearly_and_leave_nothing_complete() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-persistent");
    source(&dir);
    let proxy = FaultProxy::start(m.port, Faults::None);
    let ep = proxy.endpoint();
    // the prefix check and the first uploads pass, then the server keeps failing
    proxy.set(Faults::Always {
        status: 500,
        code: "InternalError".into(),
        message: "We encountered an internal error. Please try again.".into(),
    });
    let o = tool(
        "nccopy-rs",
        &["src.nc", "s3://faults/bad.zarr#mode=nczarr"],
        &dir,
        &ep,
        &[("NC_STORE_RETRIES", "1"), ("NC_STORE_RETRY_TIMEOUT", "3")],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.starts_with("nccopy: cannot write output: "), "{e}");
    assert!(e.contains("s3://faults/bad.zarr"), "names the URL: {e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(m
        .keys("faults", "bad.zarr/")
        .iter()
        .all(|k| !k.ends_with(".zgroup")));
    // a file object: the multipart upload never completes, so there is no object
    let o = tool(
        "nccopy-rs",
        &["src.nc", "s3://faults/bad.nc"],
        &dir,
        &ep,
        &[("NC_STORE_RETRIES", "1"), ("NC_STORE_RETRY_TIMEOUT", "3")],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("s3://faults/bad.nc"), "{}", stderr(&o));
    assert!(m.keys("faults", "bad.nc").is_empty());
    // reading: the error names the URL and the key
    proxy.set(Faults::None);
    ok(
        &tool(
            "nccopy-rs",
            &["src.nc", "s3://faults/r.zarr#mode=nczarr"],
            &dir,
            &ep,
            &[],
        ),
        "write r",
    );
    proxy.set(Faults::Always {
        status: 503,
        code: "SlowDown".into(),
        message: "Please reduce your request rate.".into(),
    });
    let o = tool(
        "ncdump-rs",
        &["s3://faults/r.zarr#mode=nczarr"],
        &dir,
        &ep,
        &[("NC_STORE_RETRIES", "1"), ("NC_STORE_RETRY_TIMEOUT", "3")],
    );
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("s3://faults/r.zarr/.zgroup") || e.contains("s3://faults/r.zarr/"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// The store a replacement overwrites: `temp` in four chunks (one row each) and `gone`.
const OLD_CDL: &str = "netcdf old {\ndimensions:\n\tt = 4 ;\n\tx = 3 ;\nvariables:\n\
    \tfloat temp(t, x) ;\n\t\ttemp:_FillValue = -9.f ;\n\tint gone(x) ;\n\
    data:\n temp = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ;\n gone = 7, 8, 9 ;\n}\n";

/// What replaces it: no `gone`, and a row of `temp` all fill (a chunk the writer leaves out).
const NEW_CDL: &str = "netcdf new {\ndimensions:\n\tt = 4 ;\n\tx = 3 ;\nvariables:\n\
    \tfloat temp(t, x) ;\n\t\ttemp:_FillValue = -9.f ;\n\
    data:\n temp = 21, 22, 23, _, _, _, 27, 28, 29, 30, 31, 32 ;\n}\n";

/// Replacing a store in the bucket costs the new store's PUTs and three batched deletes (the
/// old top-level metadata, the rest of its metadata, then the old keys the new store does not
/// write), and leaves exactly the new store's keys: no chunk of a row now all fill, nothing of
/// a variable no longer there.
#[test]
fn replacing_a_store_costs_its_puts_and_batched_deletes() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-replace");
    for (name, cdl) in [("old", OLD_CDL), ("new", NEW_CDL)] {
        nc4_from_cdl(&dir, name, cdl);
    }
    let new_dump = body(&ok(
        &Command::new(bin("ncdump-rs"))
            .arg("new.nc")
            .current_dir(&dir)
            .output()
            .unwrap(),
        "ncdump new.nc",
    ));
    let proxy = FaultProxy::start(m.port, Faults::None);
    let ep = proxy.endpoint();
    let copy = |src: &str, dst: &str| {
        ok(
            &tool("nccopy-rs", &["-c", "t/1,x/3", src, dst], &dir, &ep, &[]),
            &format!("nccopy {src} {dst}"),
        );
        proxy.take_kinds()
    };
    for (kind, mode) in [("v2", "zarr"), ("v3", "zarr,v3"), ("nczarr", "nczarr")] {
        let fresh = copy("new.nc", &format!("s3://replace/fresh-{kind}#mode={mode}"));
        assert!(fresh["PUT"] >= 2, "{kind}: {fresh:?}");
        let url = format!("s3://replace/r-{kind}#mode={mode}");
        copy("old.nc", &url);
        let replaced = copy("new.nc", &url);
        let mut expected = fresh.clone();
        expected.insert("POST".into(), 3);
        assert_eq!(replaced, expected, "{kind}: requests by kind");
        let strip = |keys: Vec<String>, p: &str| -> Vec<String> {
            let mut k: Vec<String> = keys
                .into_iter()
                .map(|k| k.strip_prefix(p).unwrap().to_string())
                .collect();
            k.sort();
            k
        };
        let want = strip(
            m.keys("replace", &format!("fresh-{kind}/")),
            &format!("fresh-{kind}/"),
        );
        let got = strip(
            m.keys("replace", &format!("r-{kind}/")),
            &format!("r-{kind}/"),
        );
        assert_eq!(got, want, "{kind}: the replaced store's keys");
        assert!(
            !got.iter().any(|k| k.starts_with("gone")),
            "{kind}: {got:?}"
        );
        let dump = ok(&tool("ncdump-rs", &[&url], &dir, &ep, &[]), "ncdump");
        assert_eq!(values(&dump), values(&new_dump), "{kind}: values");
        proxy.take_kinds();
    }
}

/// A replacement that fails: when the uploads fail, what is left of the old store goes too and
/// nothing looks complete; when its metadata cannot even be deleted, the error names the keys
/// left and the old store is as it was.
#[test]
fn a_failed_replacement_leaves_nothing_that_looks_complete_or_names_what_is_left() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-replace-fail");
    nc4_from_cdl(&dir, "old", OLD_CDL);
    let proxy = FaultProxy::start(m.port, Faults::None);
    let ep = proxy.endpoint();
    let url = "s3://replace/fail#mode=zarr";
    let copy = || {
        tool(
            "nccopy-rs",
            &["-c", "t/1,x/3", "old.nc", url],
            &dir,
            &ep,
            &[("NC_STORE_RETRIES", "1"), ("NC_STORE_RETRY_TIMEOUT", "3")],
        )
    };
    ok(&copy(), "first copy");
    let old = m.keys("replace", "fail/");
    assert!(old.contains(&"fail/.zgroup".to_string()), "{old:?}");
    // deletes (DeleteObjects is a POST) and uploads fail: nothing changes, the keys are named
    proxy.set(Faults::FailMethods(&["PUT", "POST"]));
    let o = copy();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "cannot remove the metadata of the store being replaced: .zattrs, .zgroup, \
                    .zmetadata are left"
        ),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    let mut now = m.keys("replace", "fail/");
    now.sort();
    let mut was = old.clone();
    was.sort();
    assert_eq!(now, was, "the old store is as it was");
    // uploads fail: the old store's metadata is gone, then the rest of it
    proxy.set(Faults::FailMethods(&["PUT"]));
    let o = copy();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("nothing was left behind"), "{e}");
    assert_eq!(m.keys("replace", "fail/"), Vec::<String>::new());
}

#[test]
fn refusals_are_one_line_with_a_cure_and_no_secret() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-refuse");
    source(&dir);
    let ep = m.endpoint();
    let o = tool(
        "ncdump-rs",
        &["-h", "s3://no-such-bucket/x.nc"],
        &dir,
        &ep,
        &[],
    );
    assert_eq!(
        stderr(&o),
        "ncdump: s3://no-such-bucket/x.nc: bucket \"no-such-bucket\" does not exist; check the bucket name, the endpoint (AWS_ENDPOINT_URL) and the region (AWS_REGION)\n"
    );
    let o = tool(
        "ncdump-rs",
        &["-h", "s3://refuse/none.nc#mode=bytes"],
        &dir,
        &ep,
        &[],
    );
    assert_eq!(
        stderr(&o),
        "ncdump: s3://refuse/none.nc: no such object; check the key (the path after the bucket)\n"
    );
    // the server's refusals, as S3 words them; the body even echoes the secret
    let proxy = FaultProxy::start(m.port, Faults::None);
    for (code, want) in [
        ("InvalidAccessKeyId", "the server does not know this access key id (InvalidAccessKeyId); check AWS_ACCESS_KEY_ID or the AWS_PROFILE in use"),
        ("SignatureDoesNotMatch", "the secret key does not match the access key id (SignatureDoesNotMatch); check AWS_SECRET_ACCESS_KEY or the AWS_PROFILE in use"),
        ("AccessDenied", "access denied (AccessDenied); use credentials allowed to read (or write) this object; for a public bucket add `anon` to #mode="),
    ] {
        proxy.set(Faults::Always {
            status: 403,
            code: code.into(),
            message: format!("refused; the key you sent was {SECRET}"),
        });
        let o = tool("ncdump-rs", &["-h", "s3://refuse/x.nc"], &dir, &proxy.endpoint(), &[]);
        assert_eq!(stderr(&o), format!("ncdump: s3://refuse/x.nc: {want}\n"), "{code}");
        let o = tool(
            "nccopy-rs",
            &["--explain", "src.nc", "s3://refuse/x.zarr#mode=nczarr"],
            &dir,
            &proxy.endpoint(),
            &[("NC_IO_STATS", "1")],
        );
        let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
        assert!(!all.contains(SECRET), "{all}");
        let o = tool("nccopy-rs", &["src.nc", "s3://refuse/y.nc"], &dir, &proxy.endpoint(), &[]);
        assert!(!stderr(&o).contains(SECRET) && stderr(&o).contains(code), "{}", stderr(&o));
    }
    // no credentials at all, where instance metadata is off
    let o = tool(
        "ncdump-rs",
        &["-h", "s3://refuse/x.nc"],
        &dir,
        &ep,
        &[("AWS_ACCESS_KEY_ID", ""), ("AWS_SECRET_ACCESS_KEY", "")],
    );
    assert!(stderr(&o).contains("no AWS credentials"), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1);
    // an unreachable server
    let o = tool(
        "ncdump-rs",
        &["-h", "s3://refuse/x.nc"],
        &dir,
        "http://127.0.0.1:9",
        &[("NC_STORE_RETRIES", "0")],
    );
    assert!(
        stderr(&o).contains("cannot reach the server"),
        "{}",
        stderr(&o)
    );
    // anonymous access to a public bucket: no credentials sent (moto serves it)
    m.put_public(
        "refuse",
        "pub.nc",
        &std::fs::read(dir.join("src.nc")).unwrap(),
    );
    let o = tool(
        "ncdump-rs",
        &["-h", "s3://refuse/pub.nc#mode=bytes,anon"],
        &dir,
        &ep,
        &[("AWS_ACCESS_KEY_ID", ""), ("AWS_SECRET_ACCESS_KEY", "")],
    );
    assert!(ok(&o, "anonymous").contains("temp:units"));
}

#[test]
fn zarr_python_reads_ours_and_we_read_theirs() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-python");
    source(&dir);
    let ep = m.endpoint();
    let probe = "import zarr, obstore; assert int(zarr.__version__.split('.')[0]) >= 3";
    let ok_py = Command::new("python3")
        .args(["-c", probe])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok_py {
        eprintln!("SKIP: python3 with zarr 3 and obstore not installed (pip install zarr obstore)");
        return;
    }
    ok(
        &tool(
            "nccopy-rs",
            &["src.nc", "s3://python/ours.zarr#mode=zarr"],
            &dir,
            &ep,
            &[],
        ),
        "ours v2",
    );
    ok(
        &tool(
            "nccopy-rs",
            &["src.nc", "s3://python/ours3.zarr#mode=zarr,v3"],
            &dir,
            &ep,
            &[],
        ),
        "ours v3",
    );
    let script = format!(
        r#"
import zarr, numpy as np
from obstore.store import S3Store
from zarr.storage import ObjectStore
def store(prefix, ro=True):
    s3 = S3Store("python", prefix=prefix, endpoint="{ep}", region="us-east-1",
                 access_key_id="testing", secret_access_key="x", client_options={{"allow_http": True}})
    return ObjectStore(s3, read_only=ro)
for p, fmt in (("ours.zarr", 2), ("ours3.zarr", 3)):
    g = zarr.open_group(store(p), mode="r", zarr_format=fmt)
    print(p, g["count"][:].tolist(), g["temp"][3, :].tolist(), g.attrs["title"])
g = zarr.open_group(store("theirs.zarr", False), mode="w", zarr_format=2)
a = g.create_array("v", shape=(4,), chunks=(2,), dtype="i4", dimension_names=None)
a.attrs["_ARRAY_DIMENSIONS"] = ["d"]
a[:] = np.array([10, 20, 30, 40], dtype="i4")
g.attrs["who"] = "zarr-python"
"#
    );
    let o = Command::new("python3")
        .args(["-c", &script])
        .current_dir(&dir)
        .output()
        .unwrap();
    let out = ok(&o, "zarr-python");
    assert_eq!(
        out,
        "ours.zarr [1, 2, 3, 4, 5, 6] [19.5, 20.5, 21.5, 22.5, -999.0, 24.5] remote round trip\n\
         ours3.zarr [1, 2, 3, 4, 5, 6] [19.5, 20.5, 21.5, 22.5, -999.0, 24.5] remote round trip\n"
    );
    let o = tool("ncdump-rs", &["s3://python/theirs.zarr"], &dir, &ep, &[]);
    let got = ok(&o, "ncdump theirs");
    assert!(got.contains(" v = 10, 20, 30, 40 ;"), "{got}");
    assert!(got.contains(":who = \"zarr-python\" ;"), "{got}");
}

/// `ncdump-rs --kerchunk` of a file on object storage (issue 18.3 once object storage
/// landed): the references name the object's URL (without netCDF-C's `#mode=` words), equal
/// those of the local file given that URL, and fsspec (s3fs) through them reads the values.
#[test]
fn kerchunk_references_of_a_remote_file() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-kerchunk");
    nc4_from_cdl(
        &dir,
        "k",
        "netcdf k { dimensions: x = 6 ; variables: int v(x) ; v:_ChunkSizes = 4 ; \
         v:_DeflateLevel = 1 ; data: v = 1, 2, 3, 4, 5, 6 ; }",
    );
    let ep = m.endpoint();
    ok(
        &tool("nccopy-rs", &["k.nc", "s3://header/k.nc"], &dir, &ep, &[]),
        "upload",
    );
    // the same copy made locally: the bytes the bucket holds (a copy's layout may differ
    // from ncgen-rs's file by a few metadata bytes)
    ok(
        &tool("nccopy-rs", &["k.nc", "k2.nc"], &dir, &ep, &[]),
        "local copy",
    );
    let local = ok(
        &tool(
            "ncdump-rs",
            &["--kerchunk", "--kerchunk-url", "s3://header/k.nc", "k2.nc"],
            &dir,
            &ep,
            &[],
        ),
        "local refs",
    );
    assert!(local.contains(r#""v/0":["s3://header/k.nc","#), "{local}");
    let remote = ok(
        &tool(
            "ncdump-rs",
            &["--kerchunk", "s3://header/k.nc"],
            &dir,
            &ep,
            &[],
        ),
        "remote refs",
    );
    assert_eq!(remote, local);
    // netCDF-C's address form: the references keep the address, not the mode words
    let addressed = format!("{ep}/header/k.nc#mode=bytes,s3");
    let o = tool("ncdump-rs", &["--kerchunk", &addressed], &dir, &ep, &[]);
    let out = ok(&o, "addressed refs");
    assert_eq!(
        out,
        local.replace("s3://header/k.nc", &format!("{ep}/header/k.nc"))
    );
    std::fs::write(dir.join("refs.json"), &remote).unwrap();
    let probe = "import xarray, fsspec, s3fs";
    if !Command::new("python3")
        .args(["-c", probe])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("SKIP: xarray through S3 references needs python3 with xarray, fsspec, s3fs");
        return;
    }
    let script = format!(
        r#"
import xarray as xr
# zarr-python 3's fsspec store is asynchronous: so must the target file system be
so = {{"fo": "refs.json", "remote_protocol": "s3", "asynchronous": True,
      "remote_options": {{"key": "testing", "secret": "x", "asynchronous": True,
                          "client_kwargs": {{"endpoint_url": "{ep}"}}}}}}
ds = xr.open_dataset("reference://", engine="zarr", backend_kwargs={{"storage_options": so}})
print(ds["v"].values.tolist())
"#
    );
    let o = Command::new("python3")
        .args(["-c", &script])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(ok(&o, "xarray over references"), "[1, 2, 3, 4, 5, 6]\n");
}

/// SIGINT while writing to object storage: exit 130, no object (the multipart upload is
/// aborted), no store that looks complete, no temporary file left in TMPDIR.
#[test]
fn an_interrupt_leaves_nothing_that_looks_complete() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-interrupt");
    source(&dir);
    let proxy = FaultProxy::start(m.port, Faults::Slow { ms: 2000 });
    for url in ["s3://faults/int.nc", "s3://faults/int.zarr#mode=nczarr"] {
        let mut c = s3_command("nccopy-rs", &["src.nc", url], &dir, &proxy.endpoint());
        c.env("TMPDIR", &dir).stderr(std::process::Stdio::piped());
        let child = c.spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1000));
        let st = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{url}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("nccopy: interrupted by SIGINT"),
            "{}",
            stderr(&o)
        );
    }
    assert!(m.keys("faults", "int.nc").is_empty());
    let (status, body) = servers::request(m.port, "GET", "/faults?uploads", &[]);
    assert_eq!(status, 200);
    let text = String::from_utf8_lossy(&body);
    assert!(
        !text.contains("<Key>int.nc</Key>"),
        "multipart upload left open: {text}"
    );
    assert!(m
        .keys("faults", "int.zarr/")
        .iter()
        .all(|k| !k.ends_with(".zgroup")));
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".upload-") || n.contains(".tmp-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A copy to an object killed with SIGKILL while it uploads leaves no staging file in
/// `TMPDIR` (it is unnamed there, as local outputs are) and no object; the next run uploads
/// the whole file and leaves nothing either.
#[test]
fn a_killed_upload_leaves_no_staging_file() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-kill");
    let want = source(&dir);
    let staging = dir.join("tmp");
    std::fs::create_dir(&staging).unwrap();
    let proxy = FaultProxy::start(m.port, Faults::Slow { ms: 2000 });
    let mut c = s3_command(
        "nccopy-rs",
        &["-k", "nc4", "src.nc", "s3://faults/killed.nc"],
        &dir,
        &proxy.endpoint(),
    );
    c.env("TMPDIR", &staging)
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    // the file is written in milliseconds; the slow proxy holds the upload's first request
    std::thread::sleep(std::time::Duration::from_millis(1000));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the copy ended before the kill"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let listing = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(listing(&staging), Vec::<String>::new(), "left in TMPDIR");
    assert!(m.keys("faults", "killed.nc").is_empty());
    let o = tool(
        "nccopy-rs",
        &["-k", "nc4", "src.nc", "s3://faults/killed.nc"],
        &dir,
        &m.endpoint(),
        &[("TMPDIR", staging.to_str().unwrap())],
    );
    ok(&o, "the copy after the kill");
    assert_eq!(listing(&staging), Vec::<String>::new(), "left in TMPDIR");
    let o = tool(
        "ncdump-rs",
        &["s3://faults/killed.nc"],
        &dir,
        &m.endpoint(),
        &[],
    );
    assert_eq!(body(&ok(&o, "ncdump of the upload")), want);
}

/// Issue 31: the files real writers make (the interop corpus's h5py files: virtual datasets in
/// both encodings, external storage and links, compounds, enums, vlens, fixed-string
/// attributes, PyTables-style attributes, keyword-named variables, mistyped fills, integers
/// with unused bits, fill value properties) read the same from a web server by byte range
/// and from object storage as from the local file: the same `ncdump -s` text (header,
/// storage and every value), the same warnings and exit status.
#[test]
fn real_writers_files_read_the_same_by_range_and_from_s3() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-wild");
    let script = format!(
        "import sys\nsys.path.insert(0, {:?})\nimport corpus\ncorpus.h5py_files('.')\n",
        common::root().join("tests/interop").display().to_string()
    );
    if common::python_script(&dir, "import h5py, hdf5plugin", "h5py", &script).is_none() {
        return;
    }
    let web = RangeServer::start(&dir);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in &names {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let (status, _) = servers::request(m.port, "PUT", &format!("/wild/{name}"), &bytes);
        assert_eq!(status, 200, "putting {name}");
    }
    let mut compared = 0;
    for name in names.iter().filter(|n| n.ends_with(".h5")) {
        let local = tool("ncdump-rs", &["-s", name], &dir, &m.endpoint(), &[]);
        let shown = |o: &Output, at: &str| {
            (
                o.status.code(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
                stderr(o).replace(at, "FILE"),
            )
        };
        let want = shown(&local, name);
        assert!(!want.1.is_empty(), "{name}: {}", want.2);
        for url in [web.url(name), format!("s3://wild/{name}")] {
            let o = tool("ncdump-rs", &["-s", &url], &dir, &m.endpoint(), &[]);
            assert_eq!(shown(&o, &url), want, "{url}");
        }
        compared += 1;
    }
    assert!(compared >= 12, "only {compared} files");
}

/// The region of the subset tests: 4 of 80 times, 36 of 180 latitudes, every longitude
/// (1 % of `tas`, in one of its 20 chunks of 4 x 180 x 360).
const REGION: [&str; 6] = [
    "--dimension",
    "time,0,3",
    "--dimension",
    "lat,0,35",
    "--dimension",
    "lon,0,359",
];

/// A chunked netCDF-4 file of about 18 MB (`tas`: 20 deflated chunks of about 0.9 MB) and
/// its Zarr v3 copy (`region.zarr`, the same chunks), both local; prints what the region of
/// [`REGION`] needs of each, as JSON: `nc` (the bytes of the chunks it intersects, and the
/// file's metadata: every byte that is not a chunk) and `zarr` (the objects of the chunks it
/// intersects, and every metadata object).
fn region_inputs(dir: &Path) -> Option<serde_json::Value> {
    let script = r#"
import json, os, numpy as np, netCDF4, h5py
ds = netCDF4.Dataset("region.nc", "w", format="NETCDF4")
ds.createDimension("time", None); ds.createDimension("lat", 180); ds.createDimension("lon", 360)
t = ds.createVariable("time", "f8", ("time",)); t.units = "days since 2000-01-01"
la = ds.createVariable("lat", "f4", ("lat",)); la.units = "degrees_north"
lo = ds.createVariable("lon", "f4", ("lon",)); lo.units = "degrees_east"
v = ds.createVariable("tas", "f4", ("time", "lat", "lon"), chunksizes=(4, 180, 360),
                      zlib=True, complevel=1, shuffle=True)
t[:] = np.arange(80.0); la[:] = np.linspace(-89.5, 89.5, 180); lo[:] = np.arange(360) + 0.5
y, x = np.meshgrid(np.linspace(-1, 1, 360), np.linspace(-1, 1, 180))
r = np.random.default_rng(33)
for k in range(0, 80, 4):
    v[k:k + 4] = (280 + 20 * np.sin(3 * x + y * k / 10.0)
                  + r.standard_normal((4, 180, 360))).astype("f4")
ds.close()
f = h5py.File("region.nc", "r")
chunks, touched = 0, 0
for name in ("time", "tas"):
    d = f[name]
    for i in range(d.id.get_num_chunks()):
        c = d.id.get_chunk_info(i)
        chunks += c.size
        # the region: times 0-3, latitudes 0-35 (every chunk of time and tas there starts at 0)
        if c.chunk_offset[0] == 0 and (name == "time" or c.chunk_offset[1] == 0):
            touched += c.size
print(json.dumps({"nc": {"chunks": touched, "metadata": os.path.getsize("region.nc") - chunks}}))
"#;
    let out = common::python_script(
        dir,
        "import numpy, netCDF4, h5py",
        "numpy, netCDF4, h5py",
        script,
    )?;
    let mut facts: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let o = Command::new(bin("nccopy-rs"))
        .args(["region.nc", "file://region.zarr#mode=zarr,v3,file"])
        .current_dir(dir)
        .output()
        .unwrap();
    ok(&o, "zarr v3 copy");
    // the store's objects: metadata (zarr.json) and the chunks the region intersects
    let region = [("time", 0..4u64), ("lat", 0..36), ("lon", 0..360)];
    let (mut meta, mut touched) = (0u64, 0u64);
    let root = dir.join("region.zarr");
    for var in ["", "time", "lat", "lon", "tas"] {
        let vdir = root.join(var);
        let json = std::fs::read(vdir.join("zarr.json")).unwrap();
        meta += json.len() as u64;
        if var.is_empty() {
            continue;
        }
        let md: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let names: Vec<&str> = md["dimension_names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        let shape = md["chunk_grid"]["configuration"]["chunk_shape"]
            .as_array()
            .unwrap();
        // the chunk indices along each dimension that the region intersects
        let ranges: Vec<Vec<u64>> = names
            .iter()
            .zip(shape)
            .map(|(n, c)| {
                let c = c.as_u64().unwrap();
                let r = &region.iter().find(|(d, _)| d == n).unwrap().1;
                (r.start / c..=(r.end - 1) / c).collect()
            })
            .collect();
        let mut keys = vec![String::from("c")];
        for r in &ranges {
            keys = keys
                .iter()
                .flat_map(|k| r.iter().map(move |i| format!("{k}/{i}")))
                .collect();
        }
        for k in keys {
            touched += std::fs::metadata(vdir.join(k)).unwrap().len();
        }
    }
    facts["zarr"] = serde_json::json!({"chunks": touched, "metadata": meta});
    Some(facts)
}

/// A subset (issue 33) reads the metadata and the chunks it intersects, nothing else: for a
/// 1 % region of a chunked netCDF-4 variable on the S3 server, and of the same variable in a
/// Zarr v3 store there, the bytes received are at most 1.1 x (the chunks the region
/// intersects + the metadata), and fewer than xarray's (h5netcdf over s3fs; zarr-python)
/// `isel` of the same region receives. The values equal the subset of the local file.
#[test]
fn a_subset_fetches_the_chunks_it_touches_and_little_else() {
    let Some(m) = server() else { return };
    let dir = tempdir("remote-subset");
    let Some(facts) = region_inputs(&dir) else {
        return;
    };
    let ep = m.endpoint();
    m.put_public(
        "subset",
        "region.nc",
        &std::fs::read(dir.join("region.nc")).unwrap(),
    );
    ok(
        &tool(
            "nccopy-rs",
            &["region.nc", "s3://subset/region.zarr#mode=zarr,v3"],
            &dir,
            &ep,
            &[],
        ),
        "zarr v3 upload",
    );
    // the subset of the local file: what every remote subset must hold
    let mut args: Vec<&str> = REGION.to_vec();
    args.extend(["region.nc", "local.nc"]);
    ok(&tool("nccopy-rs", &args, &dir, &ep, &[]), "local subset");
    let want = body(&ok(
        &tool("ncdump-rs", &["local.nc"], &dir, &ep, &[]),
        "dump",
    ));
    assert!(
        want.contains("time = UNLIMITED ; // (4 currently)"),
        "{want}"
    );
    assert!(want.contains("lat = 36 ;"), "{want}");
    let proxy = FaultProxy::start(m.port, Faults::None);
    let pep = proxy.endpoint();
    let mut ours = Vec::new();
    for (kind, input) in [
        ("nc", "s3://subset/region.nc"),
        ("zarr", "s3://subset/region.zarr#mode=zarr,v3"),
    ] {
        let out = format!("{kind}.nc");
        let mut args: Vec<&str> = REGION.to_vec();
        args.extend([input, &out]);
        ok(&tool("nccopy-rs", &args, &dir, &pep, &[]), kind);
        let gets = proxy.take_kinds().values().sum::<usize>();
        let received = proxy.take_received();
        let f = &facts[kind];
        let (chunks, meta) = (
            f["chunks"].as_u64().unwrap(),
            f["metadata"].as_u64().unwrap(),
        );
        eprintln!("{kind}: {gets} requests, {received} bytes received; the region's chunks {chunks}, metadata {meta}");
        assert!(
            received * 10 <= (chunks + meta) * 11,
            "{kind}: received {received} bytes for chunks of {chunks} and metadata of {meta}"
        );
        // (a Zarr store lists its dimensions by name and has no unlimited one: the values)
        let got = ok(&tool("ncdump-rs", &[&out], &dir, &ep, &[]), "dump");
        assert_eq!(values(&got), values(&want), "{kind}");
        ours.push((gets, received));
    }
    // the file: the header's 64 KiB piece (the GET that opens the object, no HEAD), the chunk
    assert_eq!(ours[0].0, 2, "nc: requests");
    let probe = "import xarray, h5netcdf, s3fs, zarr";
    if !Command::new("python3")
        .args(["-c", probe])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!(
            "SKIP: the comparison with xarray needs python3 with xarray, h5netcdf, s3fs, zarr"
        );
        return;
    }
    let mut theirs = Vec::new();
    for (kind, open) in [
        ("nc", "xr.open_dataset(fs.open('subset/region.nc'), engine='h5netcdf')"),
        ("zarr", "xr.open_zarr('s3://subset/region.zarr', storage_options=so, zarr_format=3, consolidated=False)"),
    ] {
        let script = format!(
            r#"
import xarray as xr, s3fs
so = {{"key": "testing", "secret": "x", "client_kwargs": {{"endpoint_url": "{pep}"}}}}
fs = s3fs.S3FileSystem(**so)
ds = {open}
s = ds["tas"].isel(time=slice(0, 4), lat=slice(0, 36)).load()
print(float(s.sum()))
"#
        );
        let o = Command::new("python3").args(["-c", &script]).current_dir(&dir).output().unwrap();
        ok(&o, &format!("xarray {kind}"));
        let gets = proxy.take_kinds().values().sum::<usize>();
        let received = proxy.take_received();
        eprintln!("xarray {kind}: {gets} requests, {received} bytes received");
        theirs.push((gets, received));
    }
    // fewer bytes than xarray from both; fewer requests from the store, and no more from the
    // file: s3fs reads this 18 MB object whole in one GET after its HEAD (its blocks are
    // larger than the file), where we send the header's piece (which opens the object) and
    // the chunk, for 1/18 of the bytes
    for ((kind, o), t) in ["nc", "zarr"].iter().zip(&ours).zip(&theirs) {
        assert!(
            o.1 < t.1,
            "{kind}: ours received {} bytes, xarray {}",
            o.1,
            t.1
        );
    }
    let ((nc, zarr), (xnc, xzarr)) = ((ours[0].0, ours[1].0), (theirs[0].0, theirs[1].0));
    assert!(
        zarr < xzarr,
        "zarr: ours sent {zarr} requests, xarray {xzarr}"
    );
    assert!(nc <= xnc, "nc: ours sent {nc} requests, xarray {xnc}");
}
