//! The shared test suite every implementation passes: [`writable_store`] for key → bytes
//! stores, [`byte_source`] for byte sources. Built for this crate's tests and, with the
//! `conformance` feature, for tests elsewhere (remote stores against a local server).
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use crate::{ByteSource, Store, StoreError};

/// Every writable store behaves the same: puts, gets, replaces, lists (sorted, by prefix),
/// deletes, and refuses keys that could escape it. The store must be empty at the start.
pub fn writable_store(s: &dyn Store) {
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
            matches!(s.get(bad), Err(StoreError::BadKey { .. })),
            "get {bad:?}"
        );
        assert!(
            matches!(s.put(bad, b"x"), Err(StoreError::BadKey { .. })),
            "put {bad:?}"
        );
    }
    assert!(matches!(s.list("../"), Err(StoreError::BadKey { .. })));
    // an object written piece by piece, in a directory not made yet
    let mut w = s.writer("s/c/0/1").unwrap();
    for piece in [&[1u8, 2][..], &[], &[3, 4, 5]] {
        w.write(piece).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(s.get("s/c/0/1").unwrap(), Some(vec![1, 2, 3, 4, 5]));
    assert!(matches!(s.writer("../x"), Err(StoreError::BadKey { .. })));
    s.delete("s/c/0/1").unwrap();
}

/// Every byte source serves the same ranges of `expected` (its whole content, at least 100
/// bytes): single reads, several at once, and clear errors past the end.
pub fn byte_source(src: &dyn ByteSource, expected: &[u8]) {
    assert!(expected.len() >= 100);
    let n = expected.len() as u64;
    assert_eq!(src.len(), n);
    let mut buf = vec![0u8; 10];
    src.read_at(0, &mut buf).unwrap();
    assert_eq!(buf, expected[..10]);
    src.read_at(n - 10, &mut buf).unwrap();
    assert_eq!(buf, expected[expected.len() - 10..]);
    let mut empty = [0u8; 0];
    src.read_at(n, &mut empty).unwrap();
    let e = src.read_at(n - 5, &mut buf).unwrap_err();
    assert!(matches!(e, StoreError::Range { .. }), "{e}");
    assert!(e.to_string().contains(src.name()), "{e}");
    let got = src
        .read_ranges(&[0..4, 4..8, 50..60, 20..21, 90..100])
        .unwrap();
    assert_eq!(
        got,
        vec![
            expected[0..4].to_vec(),
            expected[4..8].to_vec(),
            expected[50..60].to_vec(),
            expected[20..21].to_vec(),
            expected[90..100].to_vec()
        ]
    );
    assert!(src.read_ranges(&[0..4, n..n + 1]).is_err());
    assert!(src.read_ranges(&[]).unwrap().is_empty());
    assert_eq!(src.read_vec(3, 40).unwrap(), expected[3..43]);
    assert_eq!(src.read_vec(n, 0).unwrap(), Vec::<u8>::new());
    let e = src.read_vec(n - 5, 10).unwrap_err();
    assert!(matches!(e, StoreError::Range { .. }), "{e}");
    // appended after what a buffer holds, twice, the second from the end
    let mut out = vec![7u8, 8];
    src.read_append(5, 30, &mut out).unwrap();
    src.read_append(n - 20, 20, &mut out).unwrap();
    let mut want = vec![7u8, 8];
    want.extend_from_slice(&expected[5..35]);
    want.extend_from_slice(&expected[expected.len() - 20..]);
    assert_eq!(out, want);
    let e = src.read_append(n - 5, 10, &mut out).unwrap_err();
    assert!(matches!(e, StoreError::Range { .. }), "{e}");
}
