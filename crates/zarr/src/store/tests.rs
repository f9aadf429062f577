use super::*;

pub(crate) fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nc-zarr-test-{}-{tag}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    let _ = fs::remove_file(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// The shared suite: every writable store behaves the same.
fn exercise(s: &dyn Store) {
    s.put(".zgroup", b"{\"zarr_format\": 2}").unwrap();
    s.put("v/.zarray", b"{}").unwrap();
    s.put("v/0.0", &[1, 2, 3]).unwrap();
    s.put("v/0.1", &[4]).unwrap();
    s.put("g/w/1/2", &[5, 6]).unwrap();
    assert_eq!(s.get("v/0.0").unwrap(), Some(vec![1, 2, 3]));
    assert_eq!(s.get("v/9.9").unwrap(), None);
    assert_eq!(s.get("nope/x").unwrap(), None);
    s.put("v/0.1", &[7, 8]).unwrap(); // replace
    assert_eq!(s.get("v/0.1").unwrap(), Some(vec![7, 8]));
    assert_eq!(
        s.list("").unwrap(),
        vec![".zgroup", "g/w/1/2", "v/.zarray", "v/0.0", "v/0.1"]
    );
    assert_eq!(s.list("v").unwrap(), vec!["v/.zarray", "v/0.0", "v/0.1"]);
    assert_eq!(s.list("g/w").unwrap(), vec!["g/w/1/2"]);
    assert!(s.list("zz").unwrap().is_empty());
    s.delete("v/0.0").unwrap();
    s.delete("v/0.0").unwrap(); // absent: fine
    assert_eq!(s.get("v/0.0").unwrap(), None);
    for bad in [
        "../x",
        "/etc/passwd",
        "a//b",
        "a/./b",
        "a\\b",
        "",
        "a/..",
        "C:/x",
    ] {
        assert!(
            matches!(s.get(bad), Err(ZarrError::BadKey { .. })),
            "get {bad:?}"
        );
        assert!(
            matches!(s.put(bad, b"x"), Err(ZarrError::BadKey { .. })),
            "put {bad:?}"
        );
    }
    assert!(matches!(s.list("../"), Err(ZarrError::BadKey { .. })));
    // an object written piece by piece, in a directory not made yet
    let mut w = s.writer("s/c/0/1").unwrap();
    for piece in [&[1u8, 2][..], &[], &[3, 4, 5]] {
        w.write(piece).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(s.get("s/c/0/1").unwrap(), Some(vec![1, 2, 3, 4, 5]));
    assert!(matches!(s.writer("../x"), Err(ZarrError::BadKey { .. })));
    s.delete("s/c/0/1").unwrap();
}

#[test]
fn dir_store_suite() {
    let d = tmpdir("dirsuite");
    let s = DirStore::create(&d.join("a.file")).unwrap();
    exercise(&s);
    s.close().unwrap();
    // nothing escaped the store
    assert_eq!(
        fs::read_dir(&d).unwrap().count(),
        1,
        "only the store directory"
    );
    let r = DirStore::open(&d.join("a.file")).unwrap();
    assert_eq!(r.get("v/0.1").unwrap(), Some(vec![7, 8]));
    assert!(r.put("x", b"1").is_err(), "read-only");
    assert!(r.writer("x").is_err(), "read-only");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn zip_store_suite_and_reopen() {
    let d = tmpdir("zipsuite");
    let zp = d.join("a.zip");
    let s = ZipStore::create(&zp).unwrap();
    exercise(&s);
    s.close().unwrap();
    drop(s);
    // staging removed, archive present
    let names: Vec<_> = fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec!["a.zip"]);
    let r = ZipStore::open(&zp).unwrap();
    assert_eq!(
        r.list("").unwrap(),
        vec![".zgroup", "g/w/1/2", "v/.zarray", "v/0.1"]
    );
    assert_eq!(r.get("v/0.1").unwrap(), Some(vec![7, 8]));
    assert_eq!(r.get("g/w/1/2").unwrap(), Some(vec![5, 6]));
    assert!(r.put("x", b"1").is_err());
    assert!(matches!(r.get("../x"), Err(ZarrError::BadKey { .. })));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn zip_with_top_directory_and_hostile_names() {
    let d = tmpdir("ziptop");
    let zp = d.join("t.zip");
    {
        let f = fs::File::create(&zp).unwrap();
        let mut w = zip::ZipWriter::new(f);
        let o = zip::write::SimpleFileOptions::default();
        w.add_directory("top.file/", o).unwrap();
        for (n, data) in [
            ("top.file/.zgroup", &b"{}"[..]),
            ("top.file/v/0", &[9u8][..]),
            ("top.file/../evil", &[1u8][..]),
        ] {
            w.start_file(n, o).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap();
    }
    let r = ZipStore::open(&zp).unwrap();
    assert_eq!(r.list("").unwrap(), vec![".zgroup", "v/0"]);
    assert_eq!(r.get("v/0").unwrap(), Some(vec![9]));
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn dir_store_refuses_to_clobber_other_directories() {
    let d = tmpdir("clobber");
    let target = d.join("x");
    fs::create_dir_all(&target).unwrap();
    fs::write(target.join("precious.txt"), b"keep").unwrap();
    assert!(DirStore::create(&target).is_err());
    assert!(target.join("precious.txt").exists());
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn mem_store_suite() {
    let s = MemStore::new();
    exercise(&s);
}

#[test]
fn zipping_a_directory_store_and_back() {
    let d = tmpdir("dir2zip");
    let dir = DirStore::create(&d.join("a.file")).unwrap();
    dir.put(".zgroup", b"{\"zarr_format\": 2}").unwrap();
    dir.put("v/.zarray", b"{}").unwrap();
    dir.put("v/0.0", &[1, 2]).unwrap();
    let z = ZipStore::create(&d.join("a.zip")).unwrap();
    assert_eq!(copy_store(&dir, &z).unwrap(), 3);
    z.close().unwrap();
    let z = ZipStore::open(&d.join("a.zip")).unwrap();
    let back = DirStore::create(&d.join("b.file")).unwrap();
    copy_store(&z, &back).unwrap();
    assert_eq!(back.list("").unwrap(), dir.list("").unwrap());
    assert_eq!(back.get("v/0.0").unwrap(), Some(vec![1, 2]));
    // and the system unzip (when installed) sees the same entries
    if let Ok(o) = std::process::Command::new("unzip")
        .arg("-Z1")
        .arg(d.join("a.zip"))
        .output()
    {
        if o.status.success() {
            let names = String::from_utf8_lossy(&o.stdout);
            assert_eq!(
                names.lines().collect::<Vec<_>>(),
                vec![".zgroup", "v/.zarray", "v/0.0"]
            );
        }
    }
    fs::remove_dir_all(&d).unwrap();
}
