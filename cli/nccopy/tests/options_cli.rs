//! One test per option added for issue 5 (-g, -G, -m, -h, -e, --explain): nccopy-rs's output,
//! dumped by the reference ncdump, against the reference nccopy's output for the same command.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{have_reference, listing, make_nc, run, stderr};
use nc_dataset::Format;

const NCGEN: &str = "/usr/bin/ncgen";
const NCCOPY: &str = "/usr/bin/nccopy";
const NCDUMP: &str = "/usr/bin/ncdump";

/// Groups at several depths, two groups named `x`, a user type in a group (no variable of
/// an enum type: netCDF-C cannot dump one left unwritten, its fill is no member).
const GROUPS_CDL: &str = r#"netcdf grp {
dimensions: d = 2 ;
variables: int r(d) ; r:units = "m" ;
data: r = 1, 2 ;
group: a {
  dimensions: e = 3 ;
  variables: int v(d) ; short w(e) ;
  :title = "group a" ;
  data: v = 3, 4 ; w = 5, 6, 7 ;
  group: x { variables: int v(d) ; data: v = 7, 8 ; }
}
group: b {
  types: int enum e {A = 1, B = 2} ;
  variables: int v(d) ; short ev(d) ;
  data: v = 9, 10 ; ev = 1, 2 ;
  group: x { variables: int v(d) ; int ex(d) ; data: v = 11, 12 ; ex = 2, 1 ; }
}
}
"#;

/// Build the groups file with the reference ncgen.
fn groups_input(dir: &Path) -> PathBuf {
    let cdl = dir.join("grp.cdl");
    std::fs::write(&cdl, GROUPS_CDL).unwrap();
    let nc = dir.join("grp.nc");
    let st = Command::new(NCGEN)
        .args(["-4", "-b", "-o"])
        .arg(&nc)
        .arg(&cdl)
        .status()
        .unwrap();
    assert!(st.success());
    nc
}

/// The reference ncdump of a file, its first line (the dataset name) dropped.
fn dump(path: &Path) -> String {
    let o = Command::new(NCDUMP).arg(path).output().unwrap();
    assert!(o.status.success(), "ncdump {}", path.display());
    let text = String::from_utf8(o.stdout).unwrap();
    text.split_once('\n').unwrap().1.to_string()
}

/// Replace the data of every variable not in `copied` (full paths) with `<not copied>`;
/// return the masked text and the masked values as they were.
fn mask(text: &str, copied: &HashSet<&str>) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut masked = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let mut in_data = false;
    let mut current: Option<(String, String)> = None; // (prefix, values so far)
    for line in text.lines() {
        if let Some((prefix, mut vals)) = current.take() {
            vals.push_str(line.trim());
            if line.trim_end().ends_with(';') {
                out.push_str(&format!("{prefix}<not copied> ;\n"));
                masked.push(vals);
            } else {
                current = Some((prefix, vals));
            }
            continue;
        }
        let t = line.trim();
        if let Some(g) = t.strip_prefix("group: ") {
            path.push(g.trim_end_matches(" {").to_string());
            in_data = false;
        } else if t.starts_with("} // group") {
            path.pop();
            in_data = false;
        } else if t == "data:" {
            in_data = true;
        } else if in_data {
            if let Some((name, vals)) = t.split_once(" = ") {
                let full = format!(
                    "/{}",
                    path.iter().map(|p| format!("{p}/")).collect::<String>() + name
                );
                if !copied.contains(full.as_str()) {
                    let indent = &line[..line.len() - line.trim_start().len()];
                    let prefix = format!("{indent}{name} = ");
                    if vals.trim_end().ends_with(';') {
                        out.push_str(&format!("{prefix}<not copied> ;\n"));
                        masked.push(vals.to_string());
                    } else {
                        current = Some((prefix, vals.to_string()));
                    }
                    continue;
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, masked)
}

/// Run both tools with `args` on `input`; compare the dumps, the data of variables outside
/// `copied` masked (netCDF-C leaves it uninitialised; ours reads as fill, `_`).
fn compare(input: &Path, args: &[&str], copied: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours.nc");
    let theirs = dir.path().join("theirs.nc");
    let mut a: Vec<&str> = args.to_vec();
    a.push(input.to_str().unwrap());
    a.push(ours.to_str().unwrap());
    let o = run(&a);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let st = Command::new(NCCOPY)
        .args(args)
        .arg(input)
        .arg(&theirs)
        .status()
        .unwrap();
    assert!(st.success(), "reference nccopy {args:?}");
    let copied: HashSet<&str> = copied.iter().copied().collect();
    let (ours_text, ours_masked) = mask(&dump(&ours), &copied);
    let (theirs_text, _) = mask(&dump(&theirs), &copied);
    assert_eq!(ours_text, theirs_text, "{args:?}");
    for m in ours_masked {
        assert!(
            m.trim_end_matches(" ;")
                .split(", ")
                .all(|v| v.trim() == "_"),
            "{args:?}: uncopied data must read as fill, got {m}"
        );
    }
}

#[test]
fn g_copies_data_only_for_listed_groups() {
    if !have_reference(&[NCGEN, NCCOPY, NCDUMP]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inp = groups_input(dir.path());
    // a plain name matches every group so named; only the group itself, not its subgroups
    compare(&inp, &["-g", "x"], &["/a/x/v", "/b/x/v", "/b/x/ex"]);
    compare(&inp, &["-g", "a"], &["/a/v", "/a/w"]);
    compare(&inp, &["-g", "/"], &["/r"]);
    compare(&inp, &["-g", "/a/x,/b"], &["/a/x/v", "/b/v", "/b/ev"]);
    // with -v: both must select the variable
    compare(&inp, &["-g", "a", "-v", "w"], &["/a/w"]);
    // a repeated -g replaces the earlier one, as in nccopy
    compare(&inp, &["-g", "a", "-g", "b"], &["/b/v", "/b/ev"]);
}

#[test]
fn big_g_copies_only_listed_groups() {
    if !have_reference(&[NCGEN, NCCOPY, NCDUMP]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inp = groups_input(dir.path());
    compare(&inp, &["-G", "/a"], &["/a/v", "/a/w"]);
    compare(&inp, &["-G", "/"], &["/r"]);
    compare(
        &inp,
        &["-G", "a,b,x"],
        &[
            "/a/v", "/a/w", "/a/x/v", "/b/v", "/b/ev", "/b/x/v", "/b/x/ex",
        ],
    );
    compare(
        &inp,
        &["-G", "/b,/b/x"],
        &["/b/v", "/b/ev", "/b/x/v", "/b/x/ex"],
    );
    compare(&inp, &["-G", "a", "-V", "w"], &["/a/w"]);
    compare(&inp, &["-G", "/,b", "-V", "r,ev"], &["/r", "/b/ev"]);
}

#[test]
fn g_and_big_g_errors() {
    let dir = tempfile::tempdir().unwrap();
    let inp = make_nc(dir.path(), "grp.nc", GROUPS_CDL, Format::Netcdf4);
    let outd = tempfile::tempdir().unwrap();
    let out = outd.path().join("o.nc");
    let cases: [(&[&str], String); 4] = [
        (
            &["-g", "nosuch"],
            "group \"nosuch\" given to -g is not in the input".to_string(),
        ),
        (
            &["-G", "a/x"],
            "group \"a/x\" given to -G is not in the input (a group below the root is named by its full path, such as \"/g1/g2\", or by its plain name)".to_string(),
        ),
        (
            &["-G", "x"],
            "-G lists group \"/a/x\" but not its parent \"/a\"; list the parent too".to_string(),
        ),
        (
            &["-G", "/a/x"],
            "-G lists group \"/a/x\" but not its parent \"/a\"; list the parent too".to_string(),
        ),
    ];
    for (args, why) in cases {
        let mut a = args.to_vec();
        a.push(inp.to_str().unwrap());
        a.push(out.to_str().unwrap());
        let o = run(&a);
        // a name the input lacks is a command-line error (exit 2)
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&o), format!("nccopy: {why}\n"), "{args:?}");
        assert_eq!(listing(outd.path()), Vec::<String>::new());
    }
}

/// A file every variable of which is copied whole: -m/-h/-e change nothing in the output.
fn sizes_input(dir: &Path) -> PathBuf {
    let cdl = dir.join("s.cdl");
    std::fs::write(
        &cdl,
        "netcdf s {\ndimensions: t = UNLIMITED ; x = 5 ;\nvariables: float a(t, x) ; a:_DeflateLevel = 2 ; int b(x) ;\ndata: a = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 ; b = 5, 4, 3, 2, 1 ;\n}\n",
    )
    .unwrap();
    let nc = dir.join("s.nc");
    assert!(Command::new(NCGEN)
        .args(["-4", "-b", "-o"])
        .arg(&nc)
        .arg(&cdl)
        .status()
        .unwrap()
        .success());
    nc
}

fn sizes_option(opt: &str) {
    if !have_reference(&[NCGEN, NCCOPY, NCDUMP]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let inp = sizes_input(dir.path());
    // (the reference tries to allocate what -e asks: keep it small there)
    let values: &[&str] = if opt == "-e" {
        &["100", "1k", "2.5K", "1e3", "0"]
    } else {
        &["100", "1M", "2.5K", "1e3", "3g", "1MB", "0"]
    };
    for &v in values {
        compare(&inp, &[opt, v], &["/a", "/b"]);
        // with a format change, as one would use it
        compare(&inp, &[opt, v, "-k", "nc7", "-d", "1"], &["/a", "/b"]);
    }
}

fn sizes_errors(opt: &str) {
    let dir = tempfile::tempdir().unwrap();
    let inp = make_nc(
        dir.path(),
        "s.nc",
        "netcdf s {\ndimensions: x = 2 ;\nvariables: int b(x) ;\ndata: b = 1, 2 ;\n}\n",
        Format::Classic,
    );
    let outd = tempfile::tempdir().unwrap();
    let out = outd.path().join("o.nc");
    let tail = "expected a number with an optional K, M, G, T or P suffix (powers of 1000), such as 5000000 or 5M";
    for (v, why) in [
        ("abc", "no number"),
        ("-5", "a size cannot be negative"),
        ("inf", "no number"),
        ("0x10", "unknown suffix \"x10\""),
        ("5x", "unknown suffix \"x\""),
        ("1 M", "unknown suffix \" M\""),
        ("1e400", "too large"),
        ("", "no number"),
    ] {
        let o = run(&[opt, v, inp.to_str().unwrap(), out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{opt} {v:?}");
        assert_eq!(
            stderr(&o),
            format!("nccopy: {opt} {v:?}: {why}; {tail}\n"),
            "{opt} {v:?}"
        );
        assert_eq!(listing(outd.path()), Vec::<String>::new());
    }
}

#[test]
fn m_copy_buffer_size() {
    sizes_option("-m");
    sizes_errors("-m");
}

#[test]
fn h_chunk_cache_size() {
    sizes_option("-h");
    sizes_errors("-h");
}

#[test]
fn e_chunk_cache_elements() {
    sizes_option("-e");
    sizes_errors("-e");
}

const EXPLAIN_CDL: &str = r#"netcdf ex {
dimensions: t = UNLIMITED ; x = 100 ; y = 50 ;
variables:
  float a(t, x) ;
  double b(x, y) ; b:_DeflateLevel = 3 ; b:_ChunkSizes = 10, 50 ;
  int c(x) ;
  int s ;
group: g {
  variables: float h(x) ;
}
}
"#;

fn explain(args: &[&str], out: Option<&str>) -> (String, String, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let inp = make_nc(dir.path(), "ex.nc", EXPLAIN_CDL, Format::Netcdf4);
    let mut a = vec!["--explain"];
    a.extend_from_slice(args);
    a.push(inp.to_str().unwrap());
    let out_path = out.map(|o| dir.path().join(o));
    if let Some(o) = &out_path {
        a.push(o.to_str().unwrap());
    }
    let o = run(&a);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let err = stderr(&o);
    (
        String::from_utf8(o.stdout).unwrap(),
        err,
        listing(dir.path()),
    )
}

const ROW1: &str = "row 1 (-F none=true, -F var=undefined, input filter=NA: unfiltered)";
const ROW3: &str = "row 3 (-F none=true, -F var=defined, input filter=NA: use output filter(s))";
const ROW4: &str =
    "row 4 (-F none=false, -F var=undefined, input filter=defined: use input filter(s))";
const ROW7: &str = "row 7 (-F none=false, -F var=undefined, input filter=undefined: unfiltered)";

#[test]
fn explain_without_options() {
    let (out, err, files) = explain(&[], None);
    assert_eq!(
        out,
        format!(
            "/a: {ROW7}: unfiltered; chunks 1,100; storage chunked\n\
             /b: {ROW4}: 1,3; chunks 10,50; storage chunked\n\
             /c: {ROW7}: unfiltered; storage contiguous\n\
             /s: {ROW7}: unfiltered; storage contiguous\n\
             /g/h: {ROW7}: unfiltered; storage contiguous\n"
        )
    );
    assert_eq!(err, "");
    assert_eq!(files, vec!["ex.nc".to_string()]);
}

#[test]
fn explain_with_filters_and_chunking_writes_nothing() {
    let (out, err, files) = explain(
        &["-F", "a,307,4", "-F", "none", "-c", "c:", "-c", "x/20"],
        Some("out.nc"),
    );
    assert_eq!(
        out,
        format!(
            "/a: {ROW3}: 307,4 from -F \"a,307,4\"; chunks 1,20; storage chunked\n\
             /b: {ROW1}: unfiltered from -F \"none\"; chunks 20,50; storage chunked\n\
             /c: {ROW1}: unfiltered from -F \"none\"; storage contiguous\n\
             /s: {ROW1}: unfiltered from -F \"none\"; storage contiguous\n\
             /g/h: {ROW1}: unfiltered from -F \"none\"; storage contiguous\n"
        )
    );
    // h is under -M's default 8192 bytes: -c x/20 leaves it contiguous, as nccopy does
    assert_eq!(err, "");
    // no output, no temporary file
    assert_eq!(files, vec!["ex.nc".to_string()]);
}

#[test]
fn explain_deflate_and_classic_output() {
    let (out, err, _) = explain(&["-d", "1", "-V", "a,s"], None);
    assert_eq!(
        out,
        format!(
            "/a: {ROW7}: 1,1 (-d/-s applied); chunks 1,100; storage chunked\n\
             /s: {ROW7}: unfiltered (-d/-s applied) (filters dropped: scalar variable); storage contiguous\n"
        )
    );
    assert_eq!(
        err,
        "nccopy: warning: variable /s: filters cannot apply to a scalar variable; left unfiltered\n"
    );
    let (out, _, _) = explain(&["-3", "-G", "/"], None);
    assert_eq!(
        out,
        "/a: classic output format: unfiltered; storage contiguous\n\
         /b: classic output format: unfiltered; storage contiguous\n\
         /c: classic output format: unfiltered; storage contiguous\n\
         /s: classic output format: unfiltered; storage contiguous\n"
    );
}

#[test]
fn progress_is_silent_when_stderr_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let inp = make_nc(
        dir.path(),
        "p.nc",
        "netcdf p {\ndimensions: n = 300000 ;\nvariables: double x(n) ;\n}\n",
        Format::Classic,
    );
    let out = dir.path().join("o.nc");
    let o = run(&[
        "-4",
        "-d",
        "1",
        inp.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert_eq!(stderr(&o), "");
    assert_eq!(o.stdout, b"");
}

/// Run nccopy-rs with stderr on a pseudo-terminal (through script(1)); what it printed there.
fn on_terminal(args: &[&str], delay_ms: &str) -> Option<String> {
    if !Path::new("/usr/bin/script").exists() {
        eprintln!("skipping: no /usr/bin/script to get a terminal");
        return None;
    }
    let mut cmd = String::from(env!("CARGO_BIN_EXE_nccopy-rs"));
    for a in args {
        cmd.push_str(&format!(" '{a}'"));
    }
    let o = Command::new("/usr/bin/script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("NCCOPY_PROGRESS_DELAY_MS", delay_ms)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn progress_bar_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let inp = make_nc(
        dir.path(),
        "p.nc",
        "netcdf p {\ndimensions: n = 300000 ;\nvariables: double x(n) ; int y(n) ;\n}\n",
        Format::Classic,
    );
    let out = dir.path().join("o.nc");
    let args = [inp.to_str().unwrap(), out.to_str().unwrap()];
    // shown at once: bytes and variables done, throughput, ETA, then cleared
    let Some(text) = on_terminal(&args, "0") else {
        return;
    };
    assert!(text.contains("3.43 MiB/3.43 MiB vars 2/2 "), "{text:?}");
    assert!(text.contains(" ETA "), "{text:?}");
    assert!(text.ends_with("\x1b[2K"), "cleared at the end: {text:?}");
    // a copy shorter than the delay prints nothing
    std::fs::remove_file(&out).unwrap();
    let text = on_terminal(&args, "60000").unwrap();
    assert_eq!(text, "");
}
