use super::*;

pub(crate) fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nc-store-test-{}-{tag}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    let _ = fs::remove_file(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn dir_store_suite() {
    let d = tmpdir("dirsuite");
    let s = DirStore::create(&d.join("a.file")).unwrap();
    crate::suite::writable_store(&s);
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
    crate::suite::writable_store(&s);
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
    assert!(matches!(r.get("../x"), Err(StoreError::BadKey { .. })));
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
    crate::suite::writable_store(&s);
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

#[test]
fn pruning_removes_only_an_emptied_directory() {
    let d = tmpdir("prune");
    let s = DirStore::create(&d.join("p.file")).unwrap();
    s.put("m/.a", b"1").unwrap();
    s.put("m/.b", b"2").unwrap();
    s.delete("m/.a").unwrap();
    s.prune("m").unwrap();
    assert!(d.join("p.file/m").is_dir(), "a key is still below it");
    s.delete("m/.b").unwrap();
    s.prune("m").unwrap();
    assert!(!d.join("p.file/m").exists());
    s.prune("m").unwrap();
    assert!(s.prune("../x").is_err());
    let r = DirStore::open(&d.join("p.file")).unwrap();
    assert!(r.prune("m").is_err(), "opened for reading");
    // other stores have nothing to prune
    let mem = MemStore::new();
    mem.prune("m").unwrap();
    fs::remove_dir_all(&d).unwrap();
}
