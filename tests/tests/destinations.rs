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
