//! End-to-end, issue 32: OPeNDAP over real HTTP servers, judged by netCDF-C 4.9.0 on the same
//! URLs. A pydap server (`pip install "pydap[server]"`, started once for this binary on a free
//! loopback port, stopped by its PID when the binary ends) serves classic files this test
//! writes; a static web server (tests/tests/servers) serves netCDF-C's own DAP2 test
//! responses, and counts the requests. Beside pydap, tests/tests/servers/dap2_numpy.py serves
//! the same files with DAP2 answers that slice right, and tests/tests/servers/dap4_numpy.py
//! serves them as DAP4 (DMR, chunked `.dap` evaluating `dap4.ce`), each logging its requests. Skips with a message when pydap or netCDF-C's tools are
//! missing (`.ci/run` installs both).
//!
//! pydap serves the file itself at the plain URL too: the plain URL is read by byte range
//! (docs/guide.md), so these tests ask for DAP with `#dap2` / `[dap2]` as netCDF-C allows.
//! pydap 3.5 answers nothing for a scalar variable's data, garbles constrained answers and
//! 2-D char arrays, which netCDF-C 4.9.0 then misreads or refuses too: the files here have
//! no scalars and only 1-D char variables, and the constraint checks run on the static
//! server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod servers;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};

use common::{bin, have_reference, tempdir};
use servers::RangeServer;

/// Classic files pydap serves: every classic type, attributes of each, fill values (default
/// and `_FillValue`), an unlimited dimension, a char variable.
const FILES: [(&str, &str); 2] = [
    (
        "types",
        r#"netcdf types {
dimensions:
	time = UNLIMITED ;
	x = 4 ;
variables:
	double time(time) ;
		time:units = "days since 2000-01-01" ;
	float temp(time, x) ;
		temp:_FillValue = -999.f ;
		temp:long_name = "temperature" ;
		temp:valid_range = -50.f, 50.f ;
	byte b(x) ;
		b:flag_values = 1b, 2b ;
	short s(x) ;
		s:scale_factor = 0.5 ;
	int i(time) ;
		i:_FillValue = -1 ;
	double d(x) ;
	char code(x) ;
		code:comment = "one character each" ;

// global attributes:
		:title = "pydap test" ;
		:version = 3 ;
		:ratio = 0.25 ;
data:

 time = 1, 2, 3 ;

 temp =
  1, 2, 3, 4,
  5, 6, 7, _,
  9, 10, 11, 12 ;

 b = -128, 0, 1, 127 ;

 s = -32768, -1, 2, 32767 ;

 i = 7, _, -2147483647 ;

 d = 0.1, -1e+300, 3.5, 1e-300 ;

 code = "abcd" ;
}
"#,
    ),
    (
        "grid",
        r#"netcdf grid {
dimensions:
	lat = 3 ;
	lon = 5 ;
variables:
	float lat(lat) ;
		lat:units = "degrees_north" ;
	float lon(lon) ;
		lon:units = "degrees_east" ;
	short sst(lat, lon) ;
		sst:missing_value = -99s ;
		sst:add_offset = 10.f ;
data:

 lat = -10, 0, 10 ;

 lon = 0, 90, 180, 270, 359.5 ;

 sst =
  1, 2, 3, 4, 5,
  6, 7, -99, 9, 10,
  11, 12, 13, 14, 15 ;
}
"#,
    ),
];

/// The shared pydap server: its port and the directory it serves (the shell that runs it
/// holds it until our end of its stdin closes).
struct Pydap {
    port: u16,
    /// the port of tests/tests/servers/dap2_numpy.py over the same files: pydap's responses
    /// with data that slices right, for constrained URLs
    numpy_port: u16,
    /// the port of tests/tests/servers/dap4_numpy.py over the same files: DAP4 DMRs and
    /// data responses, evaluating `dap4.ce` constraints
    dap4_port: u16,
    dir: PathBuf,
    _child: Mutex<Child>,
}

impl Pydap {
    /// The requests the numpy server has logged so far, one `PATH?QUERY` each, but those
    /// for `sub.nc` (the subset test's own file, asked for while other tests run).
    fn numpy_requests(&self) -> Vec<String> {
        let mut all = self.numpy_requests_of("");
        all.retain(|r| !r.starts_with("/sub.nc"));
        all
    }

    /// The requests the numpy server has logged so far for paths beginning with `prefix`.
    fn numpy_requests_of(&self, prefix: &str) -> Vec<String> {
        self.logged("requests.log", prefix)
    }

    /// The requests the DAP4 server has logged so far for paths beginning with `prefix`.
    fn dap4_requests_of(&self, prefix: &str) -> Vec<String> {
        self.logged("requests4.log", prefix)
    }

    fn logged(&self, log: &str, prefix: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.join(log))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with(prefix))
            .map(str::to_string)
            .collect()
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// pydap on 127.0.0.1 over the test files (written by netCDF-C's ncgen), started once;
/// `None` after a SKIP line when pydap or netCDF-C's tools are missing.
fn pydap() -> Option<&'static Pydap> {
    static P: OnceLock<Option<Pydap>> = OnceLock::new();
    P.get_or_init(|| {
        if !have_reference("ncdump") || !have_reference("ncgen") || !have_reference("nccopy") {
            eprintln!("SKIP: netCDF-C's ncgen/ncdump/nccopy are not installed");
            return None;
        }
        let has_pydap = Command::new("python3")
            .args(["-c", "import pydap.wsgi.app, netCDF4"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !has_pydap {
            eprintln!(
                "SKIP: pydap's server or netCDF4 is not installed (pip install \"pydap[server]\" netCDF4)"
            );
            return None;
        }
        let dir = tempdir("dap-pydap");
        for (name, cdl) in FILES {
            std::fs::write(dir.join(format!("{name}.cdl")), cdl).unwrap();
            let o = Command::new("ncgen")
                .args(["-o", &format!("{name}.nc"), &format!("{name}.cdl")])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(o.status.success(), "ncgen {name}");
        }
        let port = free_port();
        let numpy_port = free_port();
        let dap4_port = free_port();
        let numpy = common::root().join("tests/tests/servers/dap2_numpy.py");
        let dap4 = common::root().join("tests/tests/servers/dap4_numpy.py");
        // the servers are stopped (SIGINT: gunicorn's quick shutdown) when our end of their
        // shell's stdin closes (this process ended, however it ended: statics are never
        // dropped) or after ten minutes
        let script = format!(
            "pydap -b 127.0.0.1 -p {port} -d \"$0\" 2>&1 & p=$!; \
             python3 \"$1\" \"$0\" {numpy_port} \"$0/requests.log\" 2>&1 & q=$!; \
             python3 \"$2\" \"$0\" {dap4_port} \"$0/requests4.log\" 2>&1 & r=$!; \
             timeout 600 cat >/dev/null; kill -INT $p; kill $q $r; wait $p $q $r"
        );
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .arg(&dir)
            .arg(&numpy)
            .arg(&dap4)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        // gunicorn says when its worker is up; then the port answers
        let log = child.stdout.take().unwrap();
        let mut lines = BufReader::new(log).lines();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            match lines.next() {
                Some(Ok(l)) if l.contains("Booting worker") => break,
                Some(_) => {}
                None => break,
            }
        }
        // keep draining its log so that it never blocks on a full pipe
        std::thread::spawn(move || for _ in lines {});
        while std::time::Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                && std::net::TcpStream::connect(("127.0.0.1", numpy_port)).is_ok()
                && std::net::TcpStream::connect(("127.0.0.1", dap4_port)).is_ok()
            {
                return Some(Pydap {
                    port,
                    numpy_port,
                    dap4_port,
                    dir,
                    _child: Mutex::new(child),
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = child.kill();
        panic!("pydap did not answer on port {port}");
    })
    .as_ref()
}

fn run(tool: &Path, args: &[&str], dir: &Path) -> Output {
    run_with(tool, args, dir, &[])
}

/// [`run`] with more environment variables.
fn run_with(tool: &Path, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(tool)
        .args(args)
        .current_dir(dir)
        .env("no_proxy", "127.0.0.1")
        .env("HOME", dir)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// ncdump-rs and ncdump 4.9.0 print the same text for `args`, and both succeed.
fn same_dump(args: &[&str], dir: &Path) -> String {
    let ours = run(&bin("ncdump-rs"), args, dir);
    let theirs = run(Path::new("ncdump"), args, dir);
    assert!(
        theirs.status.success(),
        "ncdump {args:?}: {}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    assert!(
        ours.status.success(),
        "ncdump-rs {args:?}: {}",
        String::from_utf8_lossy(&ours.stderr)
    );
    assert_eq!(text(&ours), text(&theirs), "{args:?}");
    text(&ours)
}

/// The conformance corpus's directory `sub` of netCDF-C's DAP test responses, when it and
/// netCDF-C's ncdump are here (else a SKIP line).
fn reference_cases(sub: &str) -> Option<PathBuf> {
    if !have_reference("ncdump") {
        eprintln!("SKIP: netCDF-C's ncdump is not installed");
        return None;
    }
    let cases = common::root().join("../shared/conformance/cases").join(sub);
    if !cases.is_dir() {
        eprintln!("SKIP: {} is missing", cases.display());
        return None;
    }
    Some(cases)
}

/// nccopy-rs and nccopy 4.9.0 copy `url` to classic and netCDF-4 files (`NAME-c-ours.nc`,
/// `NAME-4-ref.nc`, ...) that ncdump 4.9.0 prints the same, the first line apart.
fn same_copies(url: &str, name: &str, d: &Path) {
    for (k, kind) in [("c", "classic"), ("4", "nc4")] {
        let ours = format!("{name}-{k}-ours.nc");
        let theirs = format!("{name}-{k}-ref.nc");
        let o = run(&bin("nccopy-rs"), &["-k", kind, url, &ours], d);
        assert!(
            o.status.success(),
            "nccopy-rs {url}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = run(Path::new("nccopy"), &["-k", kind, url, &theirs], d);
        assert!(o.status.success(), "nccopy {url}");
        let a = text(&run(Path::new("ncdump"), &[&ours], d));
        let b = text(&run(Path::new("ncdump"), &[&theirs], d));
        assert_eq!(
            a.split_once('\n').map(|x| x.1),
            b.split_once('\n').map(|x| x.1),
            "{url} {kind}"
        );
    }
}

/// Headers, data and single variables of pydap's DAP2 answers print as netCDF-C prints
/// them, byte for byte, through every way of asking for DAP2.
#[test]
fn pydap_dumps_equal_netcdf_c() {
    let Some(p) = pydap() else { return };
    let d = tempdir("dap-dumps");
    for (name, _) in FILES {
        let url = format!("http://127.0.0.1:{}/{name}.nc", p.port);
        let full = same_dump(&[&format!("{url}#dap2")], &d);
        // the DAP view, not the file: strings become maxStrlen64 arrays, DAS dimensions
        // become global attributes
        assert!(full.contains(":dimensions."), "{full}");
        same_dump(&["-h", &format!("[dap2]{url}")], &d);
        same_dump(&[&format!("[log]{url}")], &d);
        let first = if name == "types" { "temp" } else { "sst" };
        same_dump(&["-v", first, &format!("{url}#dap2")], &d);
    }
}

/// nccopy-rs of a pydap URL writes what nccopy 4.9.0 writes (same ncdump of both, classic and
/// netCDF-4), and the values are the served file's.
#[test]
fn pydap_copies_equal_netcdf_c() {
    let Some(p) = pydap() else { return };
    let d = tempdir("dap-copies");
    for (name, _) in FILES {
        let url = format!("http://127.0.0.1:{}/{name}.nc#dap2", p.port);
        same_copies(&url, name, &d);
    }
    // the values are the file's (not just equal to netCDF-C's)
    let o = run(&bin("ncdump-rs"), &["-v", "i,d", "types-4-ours.nc"], &d);
    let t = text(&o);
    assert!(t.contains(" i = 7, _, -2147483647 ;"), "{t}");
    assert!(t.contains(" d = 0.1, -1e+300, 3.5, 1e-300 ;"), "{t}");
    assert!(p.dir.join("types.nc").exists());
}

/// Constrained URLs (`URL?var[start:stride:stop],...`), `-v`, `-w` and the requests they
/// make, on a server that slices (pydap's responses over numpy data): the same dumps and
/// copies as netCDF-C 4.9.0 on the same URLs; `-v x` asks the server for `x` alone; a
/// constrained URL asks for its constraint; `-w` asks for all data in one request.
#[test]
fn constrained_urls_and_projections_ask_the_server_for_just_that() {
    let Some(p) = pydap() else { return };
    let d = tempdir("dap-constraints");
    let base = |name: &str| format!("http://127.0.0.1:{}/{name}.nc", p.numpy_port);
    let constrained = [
        ("grid", "sst[0:1:1][1:2:4],lat"),
        ("grid", "lat,lon[1:3],sst[2][0:2:4]"),
        ("grid", "lon[0:2:4]"),
        ("types", "time[1:2],temp[1:1:2][1:3]"),
        ("types", "b,s[2:3],i"),
        ("types", "code[1:2],d[1:3]"),
    ];
    for (name, ce) in constrained {
        let url = format!("{}?{ce}", base(name));
        let before = p.numpy_requests().len();
        let dump = same_dump(&[&url], &d);
        let asked = p.numpy_requests()[before..].to_vec();
        // the constraint goes to the server: its DDS, and each variable's slice
        assert!(asked.contains(&format!("/{name}.nc.dds?{ce}")), "{asked:?}");
        for clause in ce.split(',') {
            assert!(
                asked.contains(&format!("/{name}.nc.dods?{clause}")),
                "{clause}: {asked:?}"
            );
        }
        // a header: no more requests than netCDF-C makes
        let at = p.numpy_requests().len();
        let o = run(&bin("ncdump-rs"), &["-h", &url], &d);
        let mid = p.numpy_requests().len();
        let r = run(Path::new("ncdump"), &["-h", &url], &d);
        let end = p.numpy_requests().len();
        assert_eq!(text(&o), text(&r), "-h {url}");
        assert!(
            mid - at <= end - mid,
            "{url}: {} vs {}",
            mid - at,
            end - mid
        );
        // only the variables the constraint names
        let declared = dump.lines().filter(|l| l.ends_with(") ;")).count();
        assert_eq!(declared, ce.split(',').count(), "{dump}");
        same_copies(&url, name, &d);
    }
    // the values are the file's: sst rows 0-1, columns 1 and 3
    let url = format!("{}?sst[0:1:1][1:2:4]", base("grid"));
    let t = same_dump(&[&url], &d);
    assert!(t.contains(" sst =\n  2, 4,\n  7, 9 ;"), "{t}");
    // the same constraint escaped, as browsers write it
    let escaped = format!("{}?sst%5B0:1:1%5D%5B1:2:4%5D", base("grid"));
    assert_eq!(same_dump(&[&escaped], &d), t);
    // the subset copied to netCDF-4 with a filter, and to Zarr v3 by parts
    let o = run(
        &bin("nccopy-rs"),
        &["-F", "sst,32015,3", &url, "sub.nc"],
        &d,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = text(&run(&bin("ncdump-rs"), &["-s", "-v", "sst", "sub.nc"], &d));
    assert!(t.contains("sst:_Filter = \"32015,3\" ;"), "{t}");
    assert!(t.contains(" sst =\n  2, 4,\n  7, 9 ;"), "{t}");
    let z = format!("file://{}/sub.zarr#mode=zarr,v3,file", d.display());
    for step in ["init", "1/2", "0/2", "finish"] {
        let o = run(&bin("nccopy-rs"), &["--part", step, &url, &z], &d);
        assert!(
            o.status.success(),
            "{step}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let t = text(&run(&bin("ncdump-rs"), &["-v", "sst", &z], &d));
    assert!(t.contains(" sst =\n  2, 4,\n  7, 9 ;"), "{t}");
    // strides netCDF-C 4.9.0 gets wrong (it asks for d[0] and one column: compat.md) and an
    // order it crashes on (an array of unnamed dimensions first)
    let url = format!("{}?d[0:3:3],temp[1:1:2][1:2:3]", base("types"));
    let o = run(&bin("ncdump-rs"), &[&url], &d);
    assert!(o.status.success());
    let t = text(&o);
    assert!(
        t.ends_with(" d = 0.1, 1e-300 ;\n\n temp =\n  6, _,\n  10, 12 ;\n}\n"),
        "{t}"
    );

    // -v x: the metadata, then x's data alone
    let url = format!("{}#dap2", base("grid"));
    let before = p.numpy_requests().len();
    let o = run(&bin("ncdump-rs"), &["-v", "lon", &url], &d);
    assert!(o.status.success());
    assert!(
        text(&o).contains(" lon = 0, 90, 180, 270, 359.5 ;"),
        "{}",
        text(&o)
    );
    assert_eq!(
        p.numpy_requests()[before..],
        ["/grid.nc.dds", "/grid.nc.das", "/grid.nc.dods?lon"]
    );
    // NC_IO_STATS counts the DAP requests
    let o = run_with(
        &bin("ncdump-rs"),
        &["-v", "lon", &url],
        &d,
        &[("NC_IO_STATS", "1")],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("remote I/O: 3 requests, "), "{err}");
    // nccopy -v lon: lon's data alone
    let before = p.numpy_requests().len();
    let o = run(&bin("nccopy-rs"), &["-v", "lon", &url, "v.nc"], &d);
    assert!(o.status.success());
    let data: Vec<String> = p.numpy_requests()[before..]
        .iter()
        .filter(|r| r.contains(".dods"))
        .cloned()
        .collect();
    assert_eq!(data, ["/grid.nc.dods?lon"]);
    // -w (netCDF-C's [cache]): every variable in one request, the same text
    let before = p.numpy_requests().len();
    let all = same_dump(&["-w", &url], &d);
    assert_eq!(all, same_dump(&[&url], &d));
    assert_eq!(
        p.numpy_requests()[before..before + 3],
        ["/grid.nc.dds", "/grid.nc.das", "/grid.nc.dods"]
    );
}

/// `--dimension` over DAP2 (issue 33): each variable's kept indices become the server's
/// constraint, `var[start:stride:stop]`, one per run of a wrapped longitude range; a
/// coordinate range reads its coordinate whole first (as ncks does); the values printed and
/// copied are the file's. The file is served under its own name, so the requests logged for
/// it are this test's alone. (This server names no dimension of a 2-D array: `sst` is on
/// `sst_0` and `sst_1`, as netCDF-C maps it too.)
#[test]
fn dimension_subsets_become_the_servers_constraint() {
    let Some(p) = pydap() else { return };
    let d = tempdir("dap-subset");
    std::fs::write(d.join("sub.cdl"), FILES[1].1).unwrap();
    let o = Command::new("ncgen")
        .args(["-o", &p.dir.join("sub.nc").to_string_lossy(), "sub.cdl"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "ncgen sub");
    let url = format!("http://127.0.0.1:{}/sub.nc#dap2", p.numpy_port);
    let mine = || p.numpy_requests_of("/sub.nc");
    let data = |t: &str| t.split_once("\ndata:").map(|x| x.1.to_string());

    // lat by index, lon wrapped across 0 by value: lon 270, 359.5, then 0, 90
    let args = [
        "--dimension",
        "lat,1,2",
        "--dimension",
        "lon,200.,100.",
        "--dimension",
        "sst_0,1,2",
        "--dimension",
        "sst_1,1,,2",
        &url,
    ];
    let o = run(&bin("ncdump-rs"), &args, &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        data(&text(&o)).as_deref(),
        Some(
            "\n\n lat = 0, 10 ;\n\n lon = 270, 359.5, 0, 90 ;\n\n sst =\n  7, 9,\n  12, 14 ;\n}\n"
        )
    );
    assert_eq!(
        mine(),
        [
            "/sub.nc.dds",
            "/sub.nc.das",
            "/sub.nc.dods?lon",
            "/sub.nc.dods?lat[1:1:2]",
            "/sub.nc.dods?lon[3:1:4]",
            "/sub.nc.dods?lon[0:1:1]",
            "/sub.nc.dods?sst[1:1:2][1:2:3]",
        ]
    );
    // a stride: one request per variable, copied to netCDF-4 with the same values
    let before = mine().len();
    let o = run(
        &bin("nccopy-rs"),
        &[
            "--dimension",
            "lon,0,4,2",
            "--dimension",
            "sst_1,0,4,2",
            &url,
            "sub4.nc",
        ],
        &d,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut dods: Vec<String> = (mine()[before..].iter())
        .filter(|r| r.contains(".dods"))
        .cloned()
        .collect();
    // the copy reads variables in parallel: in any order
    dods.sort();
    assert_eq!(
        dods,
        [
            "/sub.nc.dods?lat",
            "/sub.nc.dods?lon[0:2:4]",
            "/sub.nc.dods?sst[0:1:2][0:2:4]"
        ]
    );
    let t = text(&run(&bin("ncdump-rs"), &["sub4.nc"], &d));
    assert_eq!(
        data(&t).as_deref(),
        Some("\n\n lat = -10, 0, 10 ;\n\n lon = 0, 180, 359.5 ;\n\n sst =\n  1, 3, 5,\n  6, -99, 10,\n  11, 13, 15 ;\n}\n")
    );
}

/// netCDF-C's own DAP2 test responses served by a static web server (which ignores
/// constraints, as netCDF-C's test server does): the same dumps as netCDF-C on the same URLs,
/// and no more requests than it makes for a header.
#[test]
fn static_server_responses_dump_as_netcdf_c_with_no_more_requests() {
    let Some(cases) = reference_cases("dap2/testdata3") else {
        return;
    };
    let d = tempdir("dap-static");
    let web = RangeServer::start(&cases);
    // netCDF-C 4.9.0 prints wrong values for some static answers (compat.md); these it reads
    // right
    for name in ["test.01", "test.02", "test.07a", "synth1", "123bears.nc"] {
        let url = web.url(name);
        let before = web.requests.load(std::sync::atomic::Ordering::Relaxed);
        let ours_h = run(&bin("ncdump-rs"), &["-h", &url], &d);
        let mid = web.requests.load(std::sync::atomic::Ordering::Relaxed);
        let theirs_h = run(Path::new("ncdump"), &["-h", &url], &d);
        let after = web.requests.load(std::sync::atomic::Ordering::Relaxed);
        assert!(ours_h.status.success(), "{name}");
        assert_eq!(text(&ours_h), text(&theirs_h), "{name} -h");
        assert!(
            mid - before <= after - mid,
            "{name}: ncdump-rs -h made {} requests, netCDF-C {}",
            mid - before,
            after - mid
        );
        same_dump(&[&url], &d);
    }
}

/// Bad servers and answers: a malformed DDS, a DAP `Error {...}` answer, a data answer cut
/// short, a 404 and a server that never answers each fail with exit 1 and a message naming
/// the URL and what was wrong; nccopy-rs leaves no output behind.
#[test]
fn bad_servers_and_answers_fail_clearly_and_leave_nothing() {
    let d = tempdir("dap-bad");
    let www = d.join("www");
    std::fs::create_dir_all(&www).unwrap();
    let dds = "Dataset {\n    Int32 x[n = 3];\n} good;\n";
    std::fs::write(www.join("good.dds"), dds).unwrap();
    let mut dods = format!("{dds}Data:\n").into_bytes();
    dods.extend([0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]);
    std::fs::write(www.join("good.dods"), &dods).unwrap();
    std::fs::write(www.join("cut.dds"), dds).unwrap();
    std::fs::write(www.join("cut.dods"), &dods[..dods.len() - 5]).unwrap();
    std::fs::write(
        www.join("bad.dds"),
        "Dataset {\n    Int32 x[n = ];\n} bad;\n",
    )
    .unwrap();
    std::fs::write(
        www.join("err.dds"),
        "Error {\n    code = 1005;\n    message = \"no such dataset: err\";\n};\n",
    )
    .unwrap();
    let web = RangeServer::start(&www);
    let good = run(
        &bin("ncdump-rs"),
        &[&format!("{}#dap2", web.url("good"))],
        &d,
    );
    assert!(text(&good).contains(" x = 1, 2, 3 ;"), "{}", text(&good));
    let fails = |name: &str, tool: &str, expect: &str| {
        let url = format!("{}#dap2", web.url(name));
        let args: Vec<&str> = if tool == "nccopy-rs" {
            vec![&url, "out.nc"]
        } else {
            vec![&url]
        };
        let o = run_with(&bin(tool), &args, &d, &[("NC_DAP_TIMEOUT", "2")]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(expect), "{name}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        err
    };
    let base = web.url("");
    fails(
        "bad",
        "ncdump-rs",
        &format!("{base}bad.dds: malformed DAP response: DDS"),
    );
    fails(
        "err",
        "ncdump-rs",
        &format!(
            "{base}err.dds: the server answered with an error: code 1005: no such dataset: err"
        ),
    );
    fails(
        "cut",
        "ncdump-rs",
        &format!("{base}cut.dods: malformed DAP response"),
    );
    fails(
        "cut",
        "nccopy-rs",
        &format!("{base}cut.dods: malformed DAP response"),
    );
    fails("gone", "nccopy-rs", &format!("{base}gone.dds: HTTP 404"));
    // nothing partial, not even a temporary
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "www")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // a server that accepts and never answers: the timeout, not a hang
    let silent = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = silent.local_addr().unwrap().port();
    let hold = std::thread::spawn(move || {
        let conns: Vec<_> = silent.incoming().take(4).collect();
        std::thread::sleep(std::time::Duration::from_secs(20));
        drop(conns);
    });
    let started = std::time::Instant::now();
    let o = run_with(
        &bin("nccopy-rs"),
        &[&format!("http://127.0.0.1:{port}/x#dap2"), "out.nc"],
        &d,
        &[("NC_DAP_TIMEOUT", "2")],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("timed out after 2 s"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    assert!(!d.join("out.nc").exists());
    drop(hold);
}

/// DAP4 over HTTP: pydap serves no `.dap` data, so netCDF-C's own DAP4 test responses are
/// served by a static web server (with the `.dmr.xml` netCDF-C asks for first, cut from each
/// response): the same dumps as ncdump 4.9.0 on the same URLs, in no more requests. Ours are
/// two per dataset, as netCDF-C's: the DMR at open (all `-h` needs, one request; a subset
/// then asks the server for its parts alone) and the whole `.dap` at the first read. (Until
/// issue 33 a dump was the `.dap` alone, one request, but a header or a subset cost the whole
/// dataset.)
#[test]
fn dap4_responses_over_http_dump_as_netcdf_c() {
    let Some(cases) = reference_cases("dap4/daptestfiles") else {
        return;
    };
    let entries = std::fs::read_dir(&cases).unwrap();
    let d = tempdir("dap4-http");
    let www = d.join("www");
    std::fs::create_dir_all(&www).unwrap();
    let mut names = Vec::new();
    for e in entries {
        let path = e.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(name) = file.strip_suffix(".dap") else {
            continue;
        };
        let bytes = std::fs::read(&path).unwrap();
        // the first chunk is the DMR: a 4-byte header (flags, 24-bit length), then the XML
        let n = u32::from_be_bytes([0, bytes[1], bytes[2], bytes[3]]) as usize;
        std::fs::write(www.join(format!("{name}.dmr.xml")), &bytes[4..4 + n]).unwrap();
        std::fs::write(www.join(&file), &bytes).unwrap();
        names.push(name.to_string());
    }
    names.sort();
    assert!(names.len() >= 40, "{names:?}");
    let web = RangeServer::start(&www);
    let count = || web.requests.load(std::sync::atomic::Ordering::Relaxed);
    let (mut ours, mut theirs) = (0, 0);
    for name in &names {
        let url = format!("{}#dap4", web.url(name));
        let before = count();
        let o = run(&bin("ncdump-rs"), &[&url], &d);
        let mid = count();
        let r = run(Path::new("ncdump"), &[&url], &d);
        ours += mid - before;
        theirs += count() - mid;
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(r.status.success(), "ncdump {name}");
        assert_eq!(text(&o), text(&r), "{name}");
        // a header is the DMR alone
        let before = count();
        let o = run(&bin("ncdump-rs"), &["-h", &url], &d);
        assert_eq!(count() - before, 1, "{name} -h");
        assert_eq!(text(&o), text(&run(Path::new("ncdump"), &["-h", &url], &d)));
    }
    assert_eq!(
        ours,
        2 * names.len(),
        "the DMR and one data request per dataset"
    );
    assert!(ours <= theirs, "ours {ours}, netCDF-C {theirs}");
}

/// A DAP4 response whose checksum does not match its data fails naming the variable;
/// `[checksummode=ignore]` reads it anyway, as netCDF-C's parameter says.
#[test]
fn dap4_checksums_are_verified_unless_ignored() {
    let cases = common::root().join("../shared/conformance/cases/dap4/daptestfiles");
    let Ok(mut bytes) = std::fs::read(cases.join("test_one_var.nc.dap")) else {
        eprintln!("SKIP: {} is missing", cases.display());
        return;
    };
    let d = tempdir("dap4-checksum");
    std::fs::write(d.join("good.dap"), &bytes).unwrap();
    // the last byte is the last variable's CRC-32
    *bytes.last_mut().unwrap() ^= 0xff;
    std::fs::write(d.join("bad.dap"), &bytes).unwrap();
    let url = |name: &str, params: &str| format!("[dap4]{params}file://{}/{name}", d.display());
    let good = run(&bin("ncdump-rs"), &[&url("good", "")], &d);
    assert!(good.status.success());
    let bad = run(&bin("ncdump-rs"), &[&url("bad", "")], &d);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        format!(
            "ncdump: file://{}/bad: variable \"/t\": DAP4 checksum mismatch (data corrupted in \
             transit or at the server)\n",
            d.display()
        )
    );
    let ignored = run(
        &bin("ncdump-rs"),
        &[&url("bad", "[checksummode=ignore]")],
        &d,
    );
    assert!(ignored.status.success());
    assert_eq!(text(&ignored).replace("bad", "good"), text(&good));
}

/// Serve FILES[`which`] under `name` for the DAP4 tests (its requests logged under its own
/// name, so each test's are its own).
fn serve_copy(p: &Pydap, which: usize, name: &str) {
    let d = tempdir(&format!("dap4-{name}"));
    std::fs::write(d.join("f.cdl"), FILES[which].1).unwrap();
    let o = Command::new("ncgen")
        .args(["-o", &p.dir.join(name).to_string_lossy(), "f.cdl"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "ncgen {name}");
}

/// netCDF4-python reads `file` whole and `out` sliced by `slices` (`{"var": "[1:3, ::2]"}`,
/// numpy syntax); prints "same" when every variable of `out` equals its slice.
fn python_slices_equal(file: &Path, out: &Path, slices: &[(&str, &str)]) -> String {
    let cases: Vec<String> = slices
        .iter()
        .map(|(v, s)| format!("(\"{v}\", np.s_{s})"))
        .collect();
    let script = format!(
        "import netCDF4, numpy as np\n\
         a = netCDF4.Dataset(\"{}\"); b = netCDF4.Dataset(\"{}\")\n\
         a.set_auto_maskandscale(False); b.set_auto_maskandscale(False)\n\
         cut = dict([{}])\n\
         bad = [n for n in b.variables if not np.array_equal(a[n][cut.get(n, ...)], b[n][...])]\n\
         print('same' if not bad and set(a.variables) == set(b.variables) else f'differ: {{bad}}')\n",
        file.display(),
        out.display(),
        cases.join(", ")
    );
    let o = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    text(&o).trim().to_string()
}

/// `--dimension` over DAP4 (issue 33): the DMR at open, then each variable the subset cuts
/// asked for alone as the server's constraint, `URL.dap?dap4.ce=/VAR[first:stride:last]`,
/// and an uncut variable alone (`dap4.ce=/VAR`): never the whole dataset. The dump is
/// netCDF-C 4.9.0's of the same constraint on the URL (its dimensions shrunk alike), and the
/// copy's values are netCDF4-python's slices of the served file.
#[test]
fn dap4_dimension_subsets_become_the_servers_constraint() {
    let Some(p) = pydap() else { return };
    let d = tempdir("dap4-subset");
    serve_copy(p, 1, "sub4.nc");
    serve_copy(p, 0, "types4.nc");
    let base = |name: &str| format!("http://127.0.0.1:{}/{name}", p.dap4_port);

    let mine = || p.dap4_requests_of("/sub4.nc");
    let url = format!("{}#dap4", base("sub4.nc"));
    let args = ["--dimension", "lat,1,2", "--dimension", "lon,1,,2", &url];
    let o = run(&bin("ncdump-rs"), &args, &d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        mine(),
        [
            "/sub4.nc.dmr.xml",
            "/sub4.nc.dap?dap4.ce=/lat%5B1:1:2%5D",
            "/sub4.nc.dap?dap4.ce=/lon%5B1:2:3%5D",
            "/sub4.nc.dap?dap4.ce=/sst%5B1:1:2%5D%5B1:2:3%5D",
        ]
    );
    // netCDF-C reads the constraint from the URL (and escapes it three times over: the
    // server decodes until nothing is left)
    let ce = "/lat[1:1:2];/lon[1:2:3];/sst[1:1:2][1:2:3]";
    let theirs = run(
        Path::new("ncdump"),
        &[&format!("{}?dap4.ce={ce}#dap4", base("sub4.nc"))],
        &d,
    );
    assert!(theirs.status.success(), "ncdump {ce}");
    assert_eq!(text(&o), text(&theirs));
    assert!(
        text(&o).contains(" sst =\n  7, 9,\n  12, 14 ;"),
        "{}",
        text(&o)
    );

    // every classic type, a char variable, an index and a stride; the same as netCDF-C
    let url = format!("{}#dap4", base("types4.nc"));
    let before = p.dap4_requests_of("/types4.nc").len();
    let o = run(
        &bin("ncdump-rs"),
        &["--dimension", "time,1,2", "--dimension", "x,0,3,3", &url],
        &d,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let asked = p.dap4_requests_of("/types4.nc")[before..].to_vec();
    assert_eq!(asked.len(), 8, "{asked:?}");
    assert!(asked.iter().skip(1).all(|r| r.contains("%5B")), "{asked:?}");
    let ce =
        "/time[1:1:2];/temp[1:1:2][0:3:3];/b[0:3:3];/s[0:3:3];/i[1:1:2];/d[0:3:3];/code[0:3:3]";
    let theirs = run(
        Path::new("ncdump"),
        &[&format!("{}?dap4.ce={ce}#dap4", base("types4.nc"))],
        &d,
    );
    assert!(theirs.status.success(), "ncdump {ce}");
    assert_eq!(text(&o), text(&theirs));

    // a copy: lat is not cut, so it is asked for alone; the values are the file's slices
    let before = mine().len();
    let o = run(
        &bin("nccopy-rs"),
        &[
            "--dimension",
            "lon,0,4,2",
            &format!("{}#dap4", base("sub4.nc")),
            "sub4.nc",
        ],
        &d,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut asked = mine()[before..].to_vec();
    // the copy reads variables in parallel: in any order
    asked.sort();
    assert_eq!(
        asked,
        [
            "/sub4.nc.dap?dap4.ce=/lat",
            "/sub4.nc.dap?dap4.ce=/lon%5B0:2:4%5D",
            "/sub4.nc.dap?dap4.ce=/sst%5B0:1:2%5D%5B0:2:4%5D",
            "/sub4.nc.dmr.xml",
        ]
    );
    assert_eq!(
        python_slices_equal(
            &p.dir.join("sub4.nc"),
            &d.join("sub4.nc"),
            &[("lon", "[0:5:2]"), ("sst", "[:, 0:5:2]")]
        ),
        "same"
    );
    let o = run(
        &bin("nccopy-rs"),
        &[
            "--dimension",
            "time,1,2",
            "--dimension",
            "x,1,,2",
            &url,
            "types4.nc",
        ],
        &d,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        python_slices_equal(
            &p.dir.join("types4.nc"),
            &d.join("types4.nc"),
            &[
                ("time", "[1:3]"),
                ("temp", "[1:3, 1::2]"),
                ("b", "[1::2]"),
                ("s", "[1::2]"),
                ("i", "[1:3]"),
                ("d", "[1::2]"),
                ("code", "[1::2]"),
            ]
        ),
        "same"
    );
    // a header is the DMR alone; a whole dump, the DMR and one `.dap`
    let before = mine().len();
    let url = format!("{}#dap4", base("sub4.nc"));
    let o = run(&bin("ncdump-rs"), &["-h", &url], &d);
    assert_eq!(mine()[before..], ["/sub4.nc.dmr.xml"]);
    assert_eq!(text(&o), text(&run(Path::new("ncdump"), &["-h", &url], &d)));
    let before = mine().len();
    let o = run(&bin("ncdump-rs"), &[&url], &d);
    assert!(o.status.success());
    assert_eq!(mine()[before..], ["/sub4.nc.dmr.xml", "/sub4.nc.dap"]);
    assert_eq!(text(&o), text(&run(Path::new("ncdump"), &[&url], &d)));
}

/// A DAP4 server that ignores constraints (it answers every variable whole): the first
/// constrained answer is kept and cut here, no more requests are made, and the values are
/// the subset's.
#[test]
fn dap4_servers_ignoring_constraints_still_give_the_subset() {
    let Some(p) = pydap() else { return };
    let d = tempdir("dap4-ignore");
    serve_copy(p, 1, "ign4.nc");
    let url = format!("http://127.0.0.1:{}/ignore/ign4.nc#dap4", p.dap4_port);
    let o = run(
        &bin("ncdump-rs"),
        &["--dimension", "lat,1,2", "--dimension", "lon,1,,2", &url],
        &d,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text(&o).ends_with(
            "data:\n\n lat = 0, 10 ;\n\n lon = 90, 270 ;\n\n sst =\n  7, 9,\n  12, 14 ;\n}\n"
        ),
        "{}",
        text(&o)
    );
    assert_eq!(
        p.dap4_requests_of("/ignore/ign4.nc"),
        [
            "/ignore/ign4.nc.dmr.xml",
            "/ignore/ign4.nc.dap?dap4.ce=/lat%5B1:1:2%5D",
        ]
    );
}

/// A DAP4 server that fails on a constrained data request (an error chunk after the DMR was
/// served): exit 1, the message names the URL and the variable asked for, and nccopy-rs
/// leaves no output behind.
#[test]
fn dap4_server_errors_mid_read_fail_clearly_and_leave_nothing() {
    let Some(p) = pydap() else { return };
    let d = tempdir("dap4-fail");
    serve_copy(p, 1, "fail4.nc");
    let url = format!("http://127.0.0.1:{}/fail/fail4.nc#dap4", p.dap4_port);
    let o = run(
        &bin("nccopy-rs"),
        &["--dimension", "lat,1,2", &url, "out.nc"],
        &d,
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    let asked = format!(
        "http://127.0.0.1:{}/fail/fail4.nc.dap?dap4.ce=/",
        p.dap4_port
    );
    assert!(err.contains(&asked), "{err}");
    assert!(
        err.contains(
            ": the server answered with an error: code 400: the server failed while reading /"
        ),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // ncdump-rs: the variable the dump reached
    let o = run(&bin("ncdump-rs"), &["--dimension", "lat,1,2", &url], &d);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "{asked}lat[1:1:2]: the server answered with an error"
        )),
        "{err}"
    );
}
