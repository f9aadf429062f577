//! Issue 20, "never destroy what the user did not ask to replace": what ncgen-rs and nccopy-rs
//! do when the output name is a directory, a read-only file, a link, or the input itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use common::{run, tempdir};

const CDL: &str =
    "netcdf t {\ndimensions: n = 3 ;\nvariables: int v(n) ;\ndata: v = 1, 2, 3 ;\n}\n";

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `dir/in.nc`, a classic file made by ncgen-rs.
fn input(dir: &Path) -> String {
    fs::write(dir.join("t.cdl"), CDL).unwrap();
    let o = run("ncgen-rs", &["-b", "-o", "in.nc", "t.cdl"], dir);
    assert!(o.status.success(), "{}", stderr(&o));
    "in.nc".into()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_directory_given_as_the_output_is_kept() {
    let d = tempdir("dest-dir");
    let src = input(&d);
    fs::create_dir(d.join("out")).unwrap();
    fs::write(d.join("out/keep"), "x").unwrap();
    for (tool, args) in [
        ("nccopy-rs", vec![src.as_str(), "out"]),
        ("nccopy-rs", vec!["-k", "nc4", src.as_str(), "out"]),
        ("ncgen-rs", vec!["-b", "-o", "out", "t.cdl"]),
        ("ncgen-rs", vec!["-4", "-o", "out", "t.cdl"]),
        ("ncgen-rs", vec!["-b", "--force", "-o", "out", "t.cdl"]),
    ] {
        let o = run(tool, &args, &d);
        // an output error: nc_runtime::exit::OUTPUT, for both tools
        assert_eq!(o.status.code(), Some(3), "{tool} {args:?}");
        let tool_name = tool.trim_end_matches("-rs");
        assert_eq!(
            stderr(&o),
            format!(
                "{tool_name}: cannot write output: out: Is a directory: the output must be a file \
                 name (to write an NCZarr store there, name it as \
                 file://PATH#mode=nczarr,file)\n"
            ),
            "{tool} {args:?}"
        );
        assert_eq!(fs::read_to_string(d.join("out/keep")).unwrap(), "x");
        assert_eq!(names(&d), ["in.nc", "out", "t.cdl"], "{tool} {args:?}");
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_store_output_replaces_only_a_store() {
    let d = tempdir("dest-store");
    let src = input(&d);
    fs::create_dir(d.join("plain")).unwrap();
    fs::write(d.join("plain/keep"), "x").unwrap();
    let url = format!("file://{}#mode=nczarr,file", d.join("plain").display());
    let o = run("nccopy-rs", &[&src, &url], &d);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains("is a directory that is not a Zarr store"),
        "{}",
        stderr(&o)
    );
    assert_eq!(names(&d.join("plain")), ["keep"]);
    // a store is replaced, and only once the new one is complete
    let url = format!("file://{}#mode=nczarr,file", d.join("s.zarr").display());
    let o = run("nccopy-rs", &[&src, &url], &d);
    assert!(o.status.success(), "{}", stderr(&o));
    fs::write(d.join("s.zarr/stale"), "old").unwrap();
    let o = run("nccopy-rs", &[&src, &url], &d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!d.join("s.zarr/stale").exists(), "old store replaced");
    assert!(d.join("s.zarr/.zgroup").exists());
    assert_eq!(names(&d), ["in.nc", "plain", "s.zarr", "t.cdl"]);
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_input_through_an_alias_is_never_the_output() {
    let d = tempdir("dest-alias");
    let src = input(&d);
    let before = fs::read(d.join(&src)).unwrap();
    fs::hard_link(d.join("in.nc"), d.join("hard.nc")).unwrap();
    std::os::unix::fs::symlink("in.nc", d.join("soft.nc")).unwrap();
    for out in ["in.nc", "./in.nc", "hard.nc", "soft.nc"] {
        let o = run("nccopy-rs", &["-k", "nc4", &src, out], &d);
        assert_eq!(o.status.code(), Some(3), "{out}");
        assert!(
            stderr(&o).contains("output is the input dataset"),
            "{out}: {}",
            stderr(&o)
        );
        assert_eq!(fs::read(d.join("in.nc")).unwrap(), before, "{out}");
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_link_as_the_output_is_written_through() {
    let d = tempdir("dest-link");
    let src = input(&d);
    fs::write(d.join("target.nc"), "old").unwrap();
    std::os::unix::fs::symlink("target.nc", d.join("link.nc")).unwrap();
    let o = run("nccopy-rs", &[&src, "link.nc"], &d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::symlink_metadata(d.join("link.nc"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        fs::read(d.join("target.nc")).unwrap(),
        fs::read(d.join("in.nc")).unwrap()
    );
    fs::remove_dir_all(&d).unwrap();
}

/// A read-only file owned by another user: run the tools as `nobody` (needs root and
/// `setpriv`), in a directory everyone may write, as the rename would be allowed there.
#[test]
fn a_read_only_destination_is_refused_unless_forced() {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let have_setpriv = Command::new("setpriv").arg("--help").output().is_ok();
    if !is_root || !have_setpriv {
        eprintln!("SKIP: needs root and setpriv to act as another user");
        return;
    }
    let d = tempdir("dest-ro");
    let src = input(&d);
    // the test directory's ancestors must be searchable by nobody
    let work = std::env::temp_dir().join(format!("nc-dest-ro-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    fs::create_dir(&work).unwrap();
    fs::copy(d.join(&src), work.join("in.nc")).unwrap();
    fs::copy(d.join("t.cdl"), work.join("t.cdl")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&work, fs::Permissions::from_mode(0o1777)).unwrap();
    for f in ["in.nc", "t.cdl"] {
        fs::set_permissions(work.join(f), fs::Permissions::from_mode(0o644)).unwrap();
    }
    fs::write(work.join("ro.nc"), "precious").unwrap();
    fs::set_permissions(work.join("ro.nc"), fs::Permissions::from_mode(0o644)).unwrap();
    // nobody cannot write ro.nc (owned by root, 0644), but could rename over it only if it
    // owned it (sticky dir): use a plain 0777 dir so the rename would succeed
    fs::set_permissions(&work, fs::Permissions::from_mode(0o777)).unwrap();
    let as_nobody = |tool: &str, args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(common::bin(tool))
            .args(args)
            .current_dir(&work)
            .output()
            .unwrap()
    };
    for (tool, args) in [
        ("nccopy-rs", vec!["in.nc", "ro.nc"]),
        ("ncgen-rs", vec!["-b", "-o", "ro.nc", "t.cdl"]),
    ] {
        let o = as_nobody(tool, &args);
        assert_eq!(o.status.code(), Some(3), "{tool}: {}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "{}: cannot write output: ro.nc: Permission denied: the existing file is not \
                 writable by you (make it writable, remove it, or use --force to replace it)\n",
                tool.trim_end_matches("-rs")
            )
        );
        assert_eq!(fs::read_to_string(work.join("ro.nc")).unwrap(), "precious");
    }
    let o = as_nobody("nccopy-rs", &["--force", "in.nc", "ro.nc"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        fs::read(work.join("ro.nc")).unwrap(),
        fs::read(work.join("in.nc")).unwrap()
    );
    fs::remove_dir_all(&work).unwrap();
    fs::remove_dir_all(&d).unwrap();
}

/// A small seeded generator (xorshift64*): the kill moments of a run are repeatable from the
/// seed it prints.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `[0, d)`.
    fn within(&mut self, d: std::time::Duration) -> std::time::Duration {
        d.mul_f64((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// A CDF-1 file holding `double x(n, m)` of noisy values (deflate and the chunk writers have
/// real work), written directly: no tool's run in the test's time budget.
fn noisy_classic(path: &Path, n: u32, m: u32, rng: &mut Rng) {
    fn name(h: &mut Vec<u8>, s: &str) {
        h.extend((s.len() as u32).to_be_bytes());
        h.extend(s.as_bytes());
        h.resize(h.len().next_multiple_of(4), 0);
    }
    let mut h = b"CDF\x01".to_vec();
    h.extend(0u32.to_be_bytes()); // numrecs
    h.extend(0x0Au32.to_be_bytes()); // NC_DIMENSION
    h.extend(2u32.to_be_bytes());
    for (d, len) in [("n", n), ("m", m)] {
        name(&mut h, d);
        h.extend(len.to_be_bytes());
    }
    h.extend([0u8; 8]); // no global attributes
    h.extend(0x0Bu32.to_be_bytes()); // NC_VARIABLE
    h.extend(1u32.to_be_bytes());
    name(&mut h, "x");
    h.extend(2u32.to_be_bytes());
    h.extend(0u32.to_be_bytes());
    h.extend(1u32.to_be_bytes());
    h.extend([0u8; 8]); // no attributes
    h.extend(6u32.to_be_bytes()); // NC_DOUBLE
    h.extend((n * m * 8).to_be_bytes()); // vsize
    let begin = h.len() as u32 + 4;
    h.extend(begin.to_be_bytes());
    let mut v = 0f64;
    for _ in 0..u64::from(n) * u64::from(m) {
        v += (rng.next() % 7) as f64 - 3.0;
        h.extend(v.to_be_bytes());
    }
    fs::write(path, h).unwrap();
}

/// Every file of a tree (or the one file) by relative path, with its bytes; nothing when
/// there is nothing at `p`.
fn contents(p: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack: Vec<_> = fs::symlink_metadata(p)
        .map(|_| p.to_path_buf())
        .into_iter()
        .collect();
    while let Some(q) = stack.pop() {
        if q.is_dir() {
            stack.extend(fs::read_dir(&q).unwrap().map(|e| e.unwrap().path()));
        } else {
            let rel = q.strip_prefix(p).unwrap().to_string_lossy().into_owned();
            out.insert(rel, fs::read(&q).unwrap());
        }
    }
    out
}

fn remove_any(p: &Path) {
    if fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
        fs::remove_dir_all(p).unwrap();
    } else if fs::symlink_metadata(p).is_ok() {
        fs::remove_file(p).unwrap();
    }
}

/// One kind of output of [`killed_runs_leave_nothing_behind`].
struct Kind {
    label: &'static str,
    tool: &'static str,
    opts: &'static [&'static str],
    input: &'static str,
    /// The input of a different, previous output at the destination.
    previous_input: &'static str,
    /// The output's file name, and as given to the tool.
    name: &'static str,
    out_arg: String,
    /// A directory store, or a file with a named temporary: the killed run's temporary may
    /// stay until the next run.
    store: bool,
    named_temps: bool,
}

impl Kind {
    fn copy(
        label: &'static str,
        opts: &'static [&'static str],
        name: &'static str,
        out_arg: String,
    ) -> Kind {
        Kind {
            label,
            tool: "nccopy-rs",
            opts,
            input: "in.nc",
            previous_input: "small.nc",
            name,
            out_arg,
            store: false,
            named_temps: false,
        }
    }
}

/// True when files can be created unnamed (`O_TMPFILE`) in `dir`: else the tools fall back to
/// named temporaries, which a kill leaves until the next run.
fn unnamed_files_work(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .mode(0o600)
        .open(dir)
        .is_ok()
        && Path::new("/proc/self/fd").is_dir()
}

/// Issue 31, "killed with SIGKILL, nothing is left behind": ncgen-rs and nccopy-rs killed at
/// random moments (seeded; the seed is printed, `NC_KILL_SEED=N` repeats a run) while they
/// write each kind of output, with and without a previous output at the destination. A
/// single-file output leaves no name at all beside it (it is unnamed until complete); a store
/// output may leave its temporary, which the next run to the same destination removes; a
/// previous output is byte for byte as it was, unless the run had completed.
#[test]
fn killed_runs_leave_nothing_behind() {
    let seed = std::env::var("NC_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("seed {seed} (NC_KILL_SEED={seed} repeats these kill moments)");
    let mut rng = Rng(seed);
    let d = tempdir("dest-kill");
    noisy_classic(&d.join("in.nc"), 400, 1000, &mut Rng(7));
    noisy_classic(&d.join("small.nc"), 4, 10, &mut Rng(8));
    // ncgen's input: a CDL whose data section is parsed and written (the CDL of small.nc
    // repeated would be too small to be caught mid-write)
    let mut cdl = String::from(
        "netcdf g {\ndimensions: n = 200000 ;\nvariables: double y(n) ;\ndata:\n y = ",
    );
    for i in 0..200_000u32 {
        cdl.push_str(&format!("{}, ", i % 977));
    }
    cdl.truncate(cdl.len() - 2);
    cdl.push_str(" ;\n}\n");
    fs::write(d.join("g.cdl"), cdl).unwrap();
    fs::write(
        d.join("small.cdl"),
        "netcdf g {\ndimensions: n = 2 ;\nvariables: double y(n) ;\ndata:\n y = 1, 2 ;\n}\n",
    )
    .unwrap();
    let inputs = ["g.cdl", "in.nc", "small.cdl", "small.nc"];
    let url = |name: &str, mode: &str| format!("file://{}#mode={mode}", d.join(name).display());
    let kinds = [
        Kind::copy(
            "netCDF-4",
            &["-k", "nc4", "-d", "1"],
            "out.nc",
            "out.nc".into(),
        ),
        Kind::copy("CDF-5", &["-k", "cdf5"], "out5.nc", "out5.nc".into()),
        Kind {
            named_temps: true,
            ..Kind::copy(
                "CDF-5 (named fallback)",
                &["-k", "cdf5"],
                "outf.nc",
                "outf.nc".into(),
            )
        },
        Kind {
            store: true,
            ..Kind::copy(
                "NCZarr directory",
                &["-k", "nc4", "-c", "n/40,m/250"],
                "out.zarr",
                url("out.zarr", "nczarr,file"),
            )
        },
        Kind {
            store: true,
            ..Kind::copy(
                "NCZarr zip",
                &["-k", "nc4", "-c", "n/40,m/250"],
                "out.zip",
                url("out.zip", "nczarr,zip"),
            )
        },
        Kind {
            tool: "ncgen-rs",
            input: "g.cdl",
            previous_input: "small.cdl",
            ..Kind::copy("ncgen-rs netCDF-4", &["-k", "nc4"], "g.nc", "g.nc".into())
        },
    ];
    let unnamed = unnamed_files_work(&d);
    if !unnamed {
        eprintln!("NOTE: no O_TMPFILE here: file outputs are checked as named temporaries");
    }
    let mut swept = 0;
    for k in &kinds {
        let label = k.label;
        let out = d.join(k.name);
        let command = |input: &str| {
            let mut c = Command::new(common::bin(k.tool));
            c.args(k.opts).current_dir(&d);
            if k.tool == "ncgen-rs" {
                c.args(["-o", &k.out_arg, input]);
            } else {
                c.args([input, &k.out_arg]);
            }
            if k.named_temps {
                c.env("NCRS_NAMED_TEMPS", "1");
            }
            c
        };
        let run_to_end = |input: &str| {
            let t = std::time::Instant::now();
            let o = command(input).output().unwrap();
            assert!(o.status.success(), "{label}: {}", stderr(&o));
            t.elapsed()
        };
        // the complete outputs: of the real input, and a different previous one
        run_to_end(k.previous_input);
        let previous = contents(&out);
        remove_any(&out);
        let took = run_to_end(k.input);
        let complete = contents(&out);
        assert_ne!(previous, complete, "{label}");
        remove_any(&out);
        eprintln!("{label}: a whole run takes {took:?}");
        for round in 0..4 {
            let with_previous = round % 2 == 1;
            if with_previous {
                run_to_end(k.previous_input);
            }
            let mut child = command(k.input)
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            // from at once to just past the end of a whole run
            let at = rng.within(took.mul_f64(1.1));
            std::thread::sleep(at);
            child.kill().unwrap();
            let status = child.wait().unwrap();
            let what = format!("{label}, round {round}, killed after {at:?} ({status})");
            // the destination: as it was, or complete if the run had finished
            let now = contents(&out);
            let finished = now == complete;
            if !finished {
                if with_previous {
                    assert!(now == previous, "{what}: the previous output changed");
                } else {
                    assert!(
                        fs::symlink_metadata(&out).is_err(),
                        "{what}: a partial output"
                    );
                }
            }
            let mut expected: Vec<String> = inputs.iter().map(|s| s.to_string()).collect();
            if finished || with_previous {
                expected.push(k.name.to_string());
            }
            expected.sort();
            let left = names(&d);
            let mut note = if finished { "had finished" } else { "clean" };
            if k.store || k.named_temps || !unnamed {
                // a temporary may be there, named as ours with the killed run's PID
                let ours = format!(".{}.tmp-{}", k.name, child.id());
                for n in &left {
                    assert!(
                        expected.contains(n) || n.starts_with(&ours),
                        "{what}: {n} left beside the output"
                    );
                }
                if left.len() > expected.len() {
                    note = "its temporary removed by the next run";
                    swept += 1;
                }
                // the next run to the destination succeeds and removes it
                run_to_end(k.input);
                assert_eq!(contents(&out), complete, "{what}: the next run's output");
                expected.push(k.name.to_string());
                expected.sort();
                expected.dedup();
                assert_eq!(names(&d), expected, "{what}: after the next run");
            } else {
                // unnamed until complete: nothing else, ever
                assert_eq!(left, expected, "{what}: left beside the output");
            }
            eprintln!("{what}: {note}");
            remove_any(&out);
        }
    }
    eprintln!("{swept} temporaries of killed runs removed by the next run");
    fs::remove_dir_all(&d).unwrap();
}
