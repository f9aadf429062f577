//! The `dap4.*` cases of the conformance corpus (`/work/shared/conformance/cases`, or
//! `NC_CONFORMANCE_CASES`): each `.dap` response is decoded with `nc_dap::dap4::open_response`,
//! printed as ncdump-rs prints it, and compared with netCDF-C 4.9.0's expected `.dmp` under the
//! case's normalisation (`wB`: white space and blank lines ignored; `ws`: white space ignored).
//! Every case is reported; the test fails if any differs. Without the corpus it is skipped.

use std::path::{Path, PathBuf};

use nc_cdl::DumpOptions;
use nc_dataset::InMemory;

fn cases_dir() -> PathBuf {
    match std::env::var_os("NC_CONFORMANCE_CASES") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/cases"),
    }
}

/// One case: its id, the response file, whether `-h` is asked, the expected file, the mode.
struct Case {
    id: String,
    response: PathBuf,
    header_only: bool,
    expected: PathBuf,
    normalisation: String,
}

/// The `dap4.*` rows whose command is `ncdump [-h] "URL"` for a `file:` URL of a response.
fn dap4_cases(dir: &Path) -> Vec<Case> {
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap_or_default();
    let mut out = Vec::new();
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 7 || !cols[0].starts_with("dap4.") || cols[5] != "file" {
            continue;
        }
        let Some(rest) = cols[3].strip_prefix("ncdump ") else {
            continue;
        };
        let (header_only, url) = match rest.strip_prefix("-h ") {
            Some(u) => (true, u),
            None => (false, rest),
        };
        let url = url.trim_matches('"');
        // [log][dap4]file://$CASES/..., file:$CASES/..., file://$CASES/...#dap4
        let Some(i) = url.find("$CASES/") else {
            continue;
        };
        let path = url[i + "$CASES/".len()..].split('#').next().unwrap_or("");
        out.push(Case {
            id: cols[0].to_string(),
            response: dir.join(format!("{path}.dap")),
            header_only,
            expected: dir.join(cols[4]),
            normalisation: cols[6].to_string(),
        });
    }
    out
}

/// Lines compared as `diff -w` (all white space ignored), and with `-B` blank lines dropped.
fn normalise(text: &str, drop_blank: bool) -> Vec<String> {
    text.lines()
        .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect::<String>())
        .filter(|l| !(drop_blank && l.is_empty()))
        .collect()
}

/// The dump ncdump-rs would print for `response`, or the error.
fn dump(response: &Path, header_only: bool) -> Result<String, String> {
    let bytes = std::fs::read(response).map_err(|e| format!("{}: {e}", response.display()))?;
    let display = response.display().to_string();
    let (mut ds, data, _warnings) =
        nc_dap::dap4::open_response(&bytes, &display).map_err(|e| e.to_string())?;
    for (v, values) in data.values {
        ds.var_mut(v).data = Some(values);
    }
    // the URL's last component without its extension (`test_one_var.nc.dap` -> `test_one_var`)
    let stem = response.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let name = match stem.rfind('.') {
        Some(i) if i > 0 => &stem[..i],
        _ => stem,
    };
    let opts = DumpOptions {
        header_only,
        name: Some(name.to_string()),
        ..DumpOptions::default()
    };
    let mut out = Vec::new();
    nc_cdl::print(&ds, &InMemory, &opts, &mut out).map_err(|e| e.to_string())?;
    String::from_utf8(out).map_err(|e| e.to_string())
}

#[test]
fn dap4_responses_dump_as_netcdf_c_does() {
    let dir = cases_dir();
    if !dir.join("MANIFEST.tsv").exists() {
        println!(
            "skipped: no conformance corpus at {} (set NC_CONFORMANCE_CASES)",
            dir.display()
        );
        return;
    }
    let cases = dap4_cases(&dir);
    assert!(!cases.is_empty(), "no dap4 cases in {}", dir.display());
    let mut failed = Vec::new();
    for c in &cases {
        let expected = std::fs::read_to_string(&c.expected).unwrap_or_default();
        let verdict = match dump(&c.response, c.header_only) {
            Err(e) => Err(format!("error: {e}")),
            Ok(got) if got == expected => Ok("pass-exact"),
            Ok(got) => {
                let drop_blank = c.normalisation.contains('B');
                let (g, e) = (
                    normalise(&got, drop_blank),
                    normalise(&expected, drop_blank),
                );
                if g == e {
                    Ok("pass-normalised")
                } else {
                    let i = g.iter().zip(&e).take_while(|(a, b)| a == b).count();
                    Err(format!(
                        "first difference at normalised line {}: got {:?}, expected {:?}",
                        i + 1,
                        g.get(i).map_or("<end>", |s| s.as_str()),
                        e.get(i).map_or("<end>", |s| s.as_str())
                    ))
                }
            }
        };
        match verdict {
            Ok(v) => println!("{:<40} {v}", c.id),
            Err(why) => {
                println!("{:<40} FAIL {why}", c.id);
                failed.push(c.id.clone());
            }
        }
    }
    println!(
        "dap4 baselines: {} passed, {} failed",
        cases.len() - failed.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "failing dap4 cases: {failed:?}");
}

/// For each response, `ncdump "[dap4]file://..."` (plain and `-h`) of the reference on PATH
/// against our dump; the names of those that differ. `None` without a reference `ncdump`.
fn differences_from_reference(files: &[PathBuf]) -> Option<Vec<String>> {
    std::process::Command::new("ncdump").output().ok()?;
    let mut failed = Vec::new();
    for f in files {
        let url = format!("[dap4]file://{}", f.with_extension("").display());
        for header_only in [false, true] {
            let mut cmd = std::process::Command::new("ncdump");
            if header_only {
                cmd.arg("-h");
            }
            let Ok(r) = cmd.arg(&url).output() else {
                continue;
            };
            let want = String::from_utf8_lossy(&r.stdout).into_owned();
            let got = dump(f, header_only).unwrap_or_else(|e| format!("error: {e}"));
            let name = format!("{}{}", if header_only { "-h " } else { "" }, f.display());
            if got == want {
                println!("{name}: identical");
            } else {
                let (g, w): (Vec<&str>, Vec<&str>) =
                    (got.lines().collect(), want.lines().collect());
                let i = g.iter().zip(&w).take_while(|(a, b)| a == b).count();
                println!(
                    "{name}: DIFFERS at line {}: got {:?}, reference {:?}",
                    i + 1,
                    g.get(i).unwrap_or(&"<end>"),
                    w.get(i).unwrap_or(&"<end>")
                );
                failed.push(name);
            }
        }
    }
    Some(failed)
}

/// Byte-for-byte against the reference: when netCDF-C's `ncdump` is on PATH, every response of
/// the corpus (`daptestfiles/`, `misctestfiles/`) dumps exactly as `ncdump "[dap4]file://..."`
/// prints it, and with `-h` too. Skipped without the corpus or without `ncdump`.
#[test]
fn dap4_responses_dump_exactly_as_reference_ncdump() {
    let dir = cases_dir().join("dap4");
    let mut files: Vec<PathBuf> = ["daptestfiles", "misctestfiles"]
        .iter()
        .filter_map(|d| std::fs::read_dir(dir.join(d)).ok())
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dap"))
        .collect();
    files.sort();
    if files.is_empty() {
        println!("skipped: no DAP4 responses under {}", dir.display());
        return;
    }
    match differences_from_reference(&files) {
        None => println!("skipped: no reference ncdump on PATH"),
        Some(failed) => assert!(failed.is_empty(), "differ from the reference: {failed:?}"),
    }
}

/// A response built here: the DMR chunk (flags: 4 little-endian, 8 no checksums) and one data
/// chunk with each variable's bytes and, unless flag 8, its CRC-32 in the data's byte order.
fn response(dmr: &str, vars: &[Vec<u8>], flags: u8) -> Vec<u8> {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Dataset name=\"x\" dapVersion=\"4.0\" dmrVersion=\"1.0\">\n{dmr}\n</Dataset>\r\n"
    );
    let mut data = Vec::new();
    for v in vars {
        data.extend_from_slice(v);
        if flags & 8 == 0 {
            let c = crc32(v);
            data.extend_from_slice(&if flags & 4 != 0 {
                c.to_le_bytes()
            } else {
                c.to_be_bytes()
            });
        }
    }
    let mut out = Vec::new();
    for (f, b) in [(flags, body.as_bytes()), (1, &data[..])] {
        out.extend_from_slice(&((u32::from(f) << 24) | b.len() as u32).to_be_bytes());
        out.extend_from_slice(b);
    }
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn le(n: u64) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

fn be(n: u64) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn shorts_le(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Hand-made responses for what the corpus does not exercise (big-endian data, no checksums,
/// a `<Map>` to a later variable, nested sequences, structure arrays with array fields, long
/// opaques, attribute kinds, escaped type names, empty dimensions), each compared byte for
/// byte with the reference ncdump when it is on PATH (netCDF-C 4.9.0 gave the same dumps when
/// these were written). Responses where 4.9.0 crashes (a structure field of strings with
/// dimensions, an `<Attribute>` container without type) are not here.
#[test]
fn hand_made_responses_dump_exactly_as_reference_ncdump() {
    let dir = std::env::temp_dir().join(format!("nc-dap4-ref-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        println!("skipped: no temporary directory");
        return;
    }
    let rec_be = |i: i32, t: &str, o: &[u8], q: &[i16]| {
        let mut b = i.to_be_bytes().to_vec();
        b.extend(be(t.len() as u64));
        b.extend_from_slice(t.as_bytes());
        b.extend(be(o.len() as u64));
        b.extend_from_slice(o);
        b.extend(be(q.len() as u64));
        for v in q {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "maps",
            response(
                r#"<Dimension name="d" size="2"/>
<Enumeration name="e" basetype="Int16"><EnumConst name="lo" value="-3"/><EnumConst name="hi" value="300"/></Enumeration>
<Float32 name="a"><Dim name="d"/><Map name="/b"/><Attribute name="_FillValue" type="Float64"><Value value="-1.5"/></Attribute></Float32>
<Float32 name="b"><Dim name="/d"/></Float32>
<Group name="g">
  <Dimension name="d" size="3"/>
  <Enum name="ev" enum="/e"><Dim name="/g/d"/><Attribute name="_FillValue" type="/e"><Value value="300"/></Attribute></Enum>
  <Attribute name="gc" type="Char"><Value value="x"/><Value value="yz"/></Attribute>
  <Attribute name="gi" type="Int8"><Value value="200"/></Attribute>
  <Attribute name="gf" type="Float64"><Value value="1e300"/><Value value="-0.5"/></Attribute>
  <Attribute name="gu" type="UInt64"><Value value="-1"/></Attribute>
</Group>
<Attribute name="title" type="String"><Value>a "quoted" &lt;text&gt;</Value></Attribute>"#,
                &[
                    cat(&[&1f32.to_le_bytes(), &(-1.5f32).to_le_bytes()]),
                    cat(&[&3f32.to_le_bytes(), &4f32.to_le_bytes()]),
                    shorts_le(&[-3, 300, -3]),
                ],
                4,
            ),
        ),
        (
            "big",
            response(
                r#"<Structure name="r"><Int32 name="i"/><String name="t"/><Opaque name="o"/><Sequence name="q"><Int16 name="v"/></Sequence><Dim size="2"/></Structure>
<UInt16 name="u"><Dim size="3"/></UInt16>
<String name="ss"><Dim size="2"/></String>"#,
                &[
                    cat(&[
                        &rec_be(1, "one", &[1, 2], &[5, 6]),
                        &rec_be(-2, "", &[0xff; 3], &[]),
                    ]),
                    cat(&[
                        &1u16.to_be_bytes(),
                        &65535u16.to_be_bytes(),
                        &2u16.to_be_bytes(),
                    ]),
                    cat(&[&be(3), b"x\ny", &be(2), "\u{e9}".as_bytes()]),
                ],
                0,
            ),
        ),
        (
            "nochecksums",
            response(
                r#"<Sequence name="outer"><Int8 name="k"/><Sequence name="inner"><Float64 name="x"/></Sequence><Structure name="st"><Char name="c"/><UByte name="ub"/></Structure></Sequence>
<Byte name="by"><Dim size="2"/></Byte>
<URL name="url"/>
<Int64 name="i64"><Dim size="2"/><Dim size="1"/></Int64>"#,
                &[
                    cat(&[
                        &le(2),
                        &[7],
                        &le(1),
                        &2.5f64.to_le_bytes(),
                        b"AZ",
                        &[8],
                        &le(0),
                        b"B\x09",
                    ]),
                    vec![0xfe, 2],
                    cat(&[&le(10), b"http://x/y"]),
                    cat(&[&(-5i64).to_le_bytes(), &(1i64 << 40).to_le_bytes()]),
                ],
                4 | 8,
            ),
        ),
        (
            "attributes",
            response(
                r#"<Dimension name="n" size="2"><Attribute name="da" type="Int32" value="1"/></Dimension>
<Int16 name="z"><Dim name="/n"/></Int16>
<Attribute name="cont" type="Container"><Attribute name="inner" type="Int32" value="4"/></Attribute>
<Attribute name="_edu.ucar.hidden" type="Int32" value="4"/>
<Attribute name="_DAP4_Checksum_CRC32" type="UInt32" value="4"/>
<Attribute name="vals" type="Int32"><Value>5</Value><Value>6</Value></Attribute>"#,
                &[shorts_le(&[1, 2])],
                4,
            ),
        ),
        (
            "structarrays",
            response(
                r#"<Structure name="s"><Int16 name="a"><Dim size="2"/></Int16><Int16 name="b"/><Dim size="3"/></Structure>
<Structure name="p"><Int32 name="i"/><Opaque name="o"/><Int16 name="b"/><Dim size="2"/></Structure>
<Opaque name="t"><Dim size="2"/></Opaque>"#,
                &[
                    shorts_le(&[1, 2, 3, 4, 5, 6, 7, 8, 9]),
                    cat(&[
                        &1i32.to_le_bytes(),
                        &le(18),
                        &(0u8..18).collect::<Vec<_>>(),
                        &5i16.to_le_bytes(),
                        &2i32.to_le_bytes(),
                        &le(1),
                        &[9],
                        &6i16.to_le_bytes(),
                    ]),
                    cat(&[
                        &le(17),
                        &(0u8..17).collect::<Vec<_>>(),
                        &le(2),
                        &[0xaa, 0xbb],
                    ]),
                ],
                4,
            ),
        ),
        (
            "groups",
            response(
                r#"<Group name="g"><Opaque name="og"/><Structure name="s.t"><Int32 name="x"/></Structure>
<Group name="h"><Sequence name="q"><Int8 name="k"/><Dim size="2"/></Sequence></Group></Group>
<Opaque name="or"/>
<Dimension name="_Anonymous5" size="5"/>
<Int8 name="a"><Dim size="5"/></Int8>
<Int8 name="z"><Dim size="0"/></Int8>
<Structure name="m"><Int8 name="x"/><Attribute name="sa" type="Int32" value="1"/><Map name="/a"/></Structure>"#,
                &[
                    cat(&[&le(1), &[5]]),
                    vec![0, 1, 2, 3, 4],
                    vec![],
                    vec![9],
                    cat(&[&le(1), &[6]]),
                    3i32.to_le_bytes().to_vec(),
                    cat(&[&le(1), &[1], &le(0)]),
                ],
                4,
            ),
        ),
    ];
    let mut files = Vec::new();
    for (name, bytes) in &cases {
        let f = dir.join(format!("{name}.nc.dap"));
        if std::fs::write(&f, bytes).is_err() {
            println!("skipped: cannot write {}", f.display());
            return;
        }
        // each decodes, whatever the reference says
        dump(&f, false).unwrap_or_else(|e| panic!("{name}: {e}"));
        files.push(f);
    }
    let result = differences_from_reference(&files);
    let _ = std::fs::remove_dir_all(&dir);
    match result {
        None => println!("skipped: no reference ncdump on PATH"),
        Some(failed) => assert!(failed.is_empty(), "differ from the reference: {failed:?}"),
    }
}
