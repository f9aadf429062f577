//! Every checksummed HDF5 structure is verified on read: files written by h5py with
//! `libver='latest'` (version 2 object headers, fixed and extensible array chunk indexes,
//! v2 B-trees, fractal heaps) get one byte changed inside one structure, found by its
//! signature; opening or reading must then fail with an error naming the structure, its
//! address and the file, while the untouched file reads. Skipped without python3 and h5py.

// test code: a failed expectation is the test failing
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};

use common::{python, tmp_dir};
use nc_dataset::Values;
use nc_hdf5::{Hdf5Error, Nc4File};

/// Object headers: `v` gets attributes after `w` was written, so they go to a continuation
/// block. A persistent free-space manager makes a superblock extension. `g` carries an attribute of a committed type, which hdf5-reader refuses, so its
/// header is read by our own walk, and then more attributes in a continuation block.
const HEADERS: &str = r#"
import h5py, numpy as np
with h5py.File('hdr.h5', 'w', libver='latest') as f:
    f['v'] = np.arange(6, dtype='i4')
    f['w'] = np.arange(6, dtype='i4')
    for i in range(6):
        f['v'].attrs['a%d' % i] = 'x' * 100
with h5py.File('fallback.h5', 'w', libver='latest') as f:
    f['t'] = np.dtype('i4')
    g = f.create_group('g')
    g.attrs.create('typed', np.int32(5), dtype=f['t'])
    for i in range(6):
        g.attrs['a%d' % i] = 'x' * 100
    g['d'] = np.arange(3, dtype='i4')
with h5py.File('ext.h5', 'w', libver='latest', fs_strategy='page', fs_persist=True) as f:
    f['v'] = np.arange(3, dtype='i4')
with h5py.File('dense.h5', 'w', libver='latest') as f:
    f['d'] = np.arange(3, dtype='i4')
    for i in range(200):
        f.attrs['att%03d' % i] = 'y' * 40
"#;

/// Chunk indexes: fixed array (12 chunks, and 2000 chunks in two pages of 1024),
/// extensible array (400 chunks: index block, its data blocks, a secondary block and its
/// data blocks), v2 B-tree (two unlimited dimensions).
const INDEXES: &str = r#"
import h5py, numpy as np
with h5py.File('fa.h5', 'w', libver='latest') as f:
    f.create_dataset('small', data=np.arange(100, dtype='i4').reshape(10, 10), chunks=(3, 4))
with h5py.File('fapaged.h5', 'w', libver='latest') as f:
    f.create_dataset('paged', data=np.arange(2000, dtype='i2'), chunks=(1,))
with h5py.File('ea.h5', 'w', libver='latest') as f:
    f.create_dataset('ext', data=np.arange(400, dtype='i2'), chunks=(1,), maxshape=(None,))
with h5py.File('bt2.h5', 'w', libver='latest') as f:
    f.create_dataset('two', data=np.arange(36, dtype='i8').reshape(6, 6), chunks=(1, 1), maxshape=(None, None))
"#;

/// Paged extensible array data blocks: with HDF5's parameters (index block of 4 elements,
/// data blocks of at least 16, pages of 1024) the first paged data block (2048 elements, in
/// super block 13) begins at element 131060.
const EA_PAGED: &str = r#"
import h5py, numpy as np
with h5py.File('eapaged.h5', 'w', libver='latest') as f:
    f.create_dataset('big', data=np.arange(132500, dtype='i4') % 251, chunks=(1,), maxshape=(None,))
"#;

fn files(test: &str, script: &str) -> Option<common::TmpDir> {
    let dir = tmp_dir(test);
    python(&dir, script).then_some(dir)
}

/// Offsets of every `sig` in `bytes`.
fn find_all(bytes: &[u8], sig: &[u8; 4]) -> Vec<usize> {
    bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| w == sig)
        .map(|(i, _)| i)
        .collect()
}

/// A copy of `file` named `name` with the byte at `at` changed.
fn corrupt(file: &Path, name: &str, at: usize) -> PathBuf {
    let mut bytes = std::fs::read(file).unwrap();
    bytes[at] ^= 0x5a;
    let out = file.with_file_name(name);
    std::fs::write(&out, bytes).unwrap();
    out
}

/// Open `path` and read every variable whole.
fn open_and_read(path: &Path) -> Result<Vec<Values>, Hdf5Error> {
    let f = Nc4File::open(path)?;
    let ds = f.dataset();
    let mut out = Vec::new();
    for v in ds.all_vars() {
        let shape = ds.shape(v);
        out.push(f.read_var(v, &vec![0; shape.len()], &shape)?);
    }
    // attributes are read at open; make sure they were all there
    assert!(!ds.groups.is_empty());
    Ok(out)
}

/// `path` fails to open or read, with a checksum error naming `structure` at `addr` and the file.
fn assert_checksum_error(path: &Path, structure: &str, addr: usize) {
    let e = match open_and_read(path) {
        Ok(_) => panic!(
            "{}: corrupt {structure} at {addr:#x} read without error",
            path.display()
        ),
        Err(e) => e,
    };
    let msg = e.to_string();
    assert!(e.is_checksum_mismatch(), "not a checksum error: {msg}");
    let want = format!("{structure} at {addr:#x}: checksum mismatch (stored 0x");
    assert!(msg.contains(&want), "wanted {want:?} in: {msg}");
    assert!(msg.ends_with("the file is corrupt"), "{msg}");
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(
        msg.starts_with(&*format!("{}", path.display())),
        "no file in: {msg}"
    );
    assert!(msg.contains(&*name));
}

/// The offset of the first message of the v2 object header at `at`.
fn first_message(bytes: &[u8], at: usize) -> usize {
    let flags = bytes[at + 5];
    let mut p = at + 6;
    if flags & 0x20 != 0 {
        p += 16;
    }
    if flags & 0x10 != 0 {
        p += 4;
    }
    p + (1 << (flags & 3))
}

#[test]
fn object_header_first_chunks_are_verified() {
    let Some(dir) = files("cks-ohdr", HEADERS) else {
        return;
    };
    let good = dir.join("hdr.h5");
    open_and_read(&good).expect("untouched file");
    let bytes = std::fs::read(&good).unwrap();
    let headers = find_all(&bytes, b"OHDR");
    assert_eq!(headers.len(), 3, "root group, v and w");
    for (i, &at) in headers.iter().enumerate() {
        // the first byte of the first message's data (a version or a size)
        let flip = first_message(&bytes, at) + 4 + usize::from(bytes[at + 5] & 0x04 != 0) * 2;
        let bad = corrupt(&good, &format!("ohdr{i}.h5"), flip);
        assert_checksum_error(&bad, "object header", at);
    }
}

#[test]
fn object_header_continuation_blocks_are_verified() {
    let Some(dir) = files("cks-ochk", HEADERS) else {
        return;
    };
    let good = dir.join("hdr.h5");
    let bytes = std::fs::read(&good).unwrap();
    let blocks = find_all(&bytes, b"OCHK");
    assert_eq!(blocks.len(), 1);
    let bad = corrupt(&good, "ochk.h5", blocks[0] + 9);
    assert_checksum_error(&bad, "continuation block", blocks[0]);
}

#[test]
fn our_own_header_walk_verifies_too() {
    // hdf5-reader refuses g's header (the committed-type attribute), so our own walk reads
    // it. Corrupt, hdf5-reader reports a checksum mismatch first: that must be the error (the
    // reported bug: our walk then read the corrupt header as if nothing were wrong), and our
    // walk must name the block whose checksum fails
    let Some(dir) = files("cks-fallback", HEADERS) else {
        return;
    };
    let good = dir.join("fallback.h5");
    let values = open_and_read(&good).expect("untouched file");
    assert_eq!(values, vec![Values::Int(vec![0, 1, 2])]);
    let bytes = std::fs::read(&good).unwrap();
    let blocks = find_all(&bytes, b"OCHK");
    assert!(!blocks.is_empty());
    for (i, &at) in blocks.iter().enumerate() {
        let bad = corrupt(&good, &format!("fallback{i}.h5"), at + 9);
        assert_checksum_error(&bad, "continuation block", at);
    }
    // and its first chunk, which hdf5-reader checks before it refuses the attribute
    for (i, &at) in find_all(&bytes, b"OHDR").iter().enumerate() {
        let bad = corrupt(
            &good,
            &format!("fallback-ohdr{i}.h5"),
            first_message(&bytes, at) + 5,
        );
        assert_checksum_error(&bad, "object header", at);
    }
}

#[test]
fn fixed_array_blocks_are_verified() {
    let Some(dir) = files("cks-fa", INDEXES) else {
        return;
    };
    let good = dir.join("fa.h5");
    let values = open_and_read(&good).expect("untouched file");
    assert_eq!(values, vec![Values::Int((0..100).collect())]);
    let bytes = std::fs::read(&good).unwrap();
    let [head] = find_all(&bytes, b"FAHD")[..] else {
        panic!("one fixed array header")
    };
    let bad = corrupt(&good, "fahd.h5", head + 9);
    assert_checksum_error(&bad, "fixed array header", head);
    let [block] = find_all(&bytes, b"FADB")[..] else {
        panic!("one fixed array data block")
    };
    // signature, version, client, header address (8 bytes), then the first chunk address
    let bad = corrupt(&good, "fadb.h5", block + 15);
    assert_checksum_error(&bad, "fixed array data block", block);
}

#[test]
fn fixed_array_pages_are_verified() {
    let Some(dir) = files("cks-fa-paged", INDEXES) else {
        return;
    };
    let good = dir.join("fapaged.h5");
    let values = open_and_read(&good).expect("untouched file");
    assert_eq!(values, vec![Values::Short((0..2000).collect())]);
    let bytes = std::fs::read(&good).unwrap();
    let [block] = find_all(&bytes, b"FADB")[..] else {
        panic!("one fixed array data block")
    };
    // the prefix: signature, version, client, header address, a 1-byte bitmap of 2 pages
    let bad = corrupt(&good, "fadb-bitmap.h5", block + 14);
    assert_checksum_error(&bad, "fixed array data block", block);
    // then the prefix checksum; page 0 holds 1024 addresses and a checksum
    let page0 = block + 19;
    let page1 = page0 + 1024 * 8 + 4;
    let bad = corrupt(&good, "fadb-page0.h5", page0 + 100);
    assert_checksum_error(&bad, "fixed array data block page 0", page0);
    let bad = corrupt(&good, "fadb-page1.h5", page1 + 3);
    assert_checksum_error(&bad, "fixed array data block page 1", page1);
}

#[test]
fn extensible_array_blocks_are_verified() {
    let Some(dir) = files("cks-ea", INDEXES) else {
        return;
    };
    let good = dir.join("ea.h5");
    let values = open_and_read(&good).expect("untouched file");
    assert_eq!(values, vec![Values::Short((0..400).collect())]);
    let bytes = std::fs::read(&good).unwrap();
    let [head] = find_all(&bytes, b"EAHD")[..] else {
        panic!("one extensible array header")
    };
    let bad = corrupt(&good, "eahd.h5", head + 20);
    assert_checksum_error(&bad, "extensible array header", head);
    let [index] = find_all(&bytes, b"EAIB")[..] else {
        panic!("one extensible array index block")
    };
    // signature, version, client, header address, then the 4 elements of the index block
    let bad = corrupt(&good, "eaib.h5", index + 14);
    assert_checksum_error(&bad, "extensible array index block", index);
    let [secondary] = find_all(&bytes, b"EASB")[..] else {
        panic!("one extensible array secondary block")
    };
    // signature, version, client, header address, block offset (4 bytes), data block addresses
    let bad = corrupt(&good, "easb.h5", secondary + 18);
    assert_checksum_error(&bad, "extensible array secondary block", secondary);
    let data = find_all(&bytes, b"EADB");
    assert_eq!(
        data.len(),
        9,
        "6 data blocks of the index block, 3 of the secondary block"
    );
    for (i, &at) in data.iter().enumerate() {
        let bad = corrupt(&good, &format!("eadb{i}.h5"), at + 19);
        assert_checksum_error(&bad, "extensible array data block", at);
    }
}

#[test]
fn extensible_array_pages_are_verified() {
    let Some(dir) = files("cks-ea-paged", EA_PAGED) else {
        return;
    };
    let good = dir.join("eapaged.h5");
    let values = open_and_read(&good).expect("untouched file");
    assert_eq!(
        values,
        vec![Values::Int((0..132500).map(|i| i % 251).collect())]
    );
    let bytes = std::fs::read(&good).unwrap();
    // the paged data block is the last one written; its prefix (signature, version, client,
    // header address, block offset) and checksum take 22 bytes, then 2 pages of 1024
    // 8-byte addresses and a checksum each; 1440 of its elements are written (both pages)
    let at = *find_all(&bytes, b"EADB").last().unwrap();
    let bad = corrupt(&good, "eadb-prefix.h5", at + 15);
    assert_checksum_error(&bad, "extensible array data block", at);
    let page0 = at + 22;
    let page1 = page0 + 1024 * 8 + 4;
    let bad = corrupt(&good, "eadb-page0.h5", page0 + 8 * 1000);
    assert_checksum_error(
        &bad,
        &format!("extensible array data block page 0 (of the block at {at:#x})"),
        page0,
    );
    let bad = corrupt(&good, "eadb-page1.h5", page1 + 8);
    assert_checksum_error(
        &bad,
        &format!("extensible array data block page 1 (of the block at {at:#x})"),
        page1,
    );
}

#[test]
fn v2_btree_chunk_index_is_verified() {
    // hdf5-reader checks these; the error must still say so and where
    let Some(dir) = files("cks-bt2", INDEXES) else {
        return;
    };
    let good = dir.join("bt2.h5");
    let values = open_and_read(&good).expect("untouched file");
    assert_eq!(values, vec![Values::Int64((0..36).collect())]);
    let bytes = std::fs::read(&good).unwrap();
    let [head] = find_all(&bytes, b"BTHD")[..] else {
        panic!("one v2 B-tree header")
    };
    for (name, sig) in [("bthd", b"BTHD"), ("btlf", b"BTLF")] {
        let at = find_all(&bytes, sig)[0];
        let bad = corrupt(&good, &format!("{name}.h5"), at + 7);
        assert_checksum_error(&bad, "chunk index", head);
    }
}

#[test]
fn fractal_heap_indirect_blocks_are_verified() {
    // 200 dense attributes fill ten direct blocks under one indirect block
    let Some(dir) = files("cks-fhib", HEADERS) else {
        return;
    };
    let good = dir.join("dense.h5");
    open_and_read(&good).expect("untouched file");
    let f = Nc4File::open(&good).unwrap();
    assert_eq!(f.dataset().groups[0].atts.len(), 200);
    let bytes = std::fs::read(&good).unwrap();
    let [at] = find_all(&bytes, b"FHIB")[..] else {
        panic!("one fractal heap indirect block")
    };
    // signature, version, heap header address (8 bytes), block offset (5 bytes for h5py's
    // 40-bit heaps), then the first direct block's address
    let bad = corrupt(&good, "fhib.h5", at + 18);
    assert_checksum_error(&bad, "fractal heap indirect block", at);
}

#[test]
fn superblock_extension_is_verified() {
    let Some(dir) = files("cks-ext", HEADERS) else {
        return;
    };
    let good = dir.join("ext.h5");
    let values = open_and_read(&good).expect("untouched file");
    assert_eq!(values, vec![Values::Int(vec![0, 1, 2])]);
    let bytes = std::fs::read(&good).unwrap();
    // superblock version 2 or 3: signature (8), version, sizes, flags, base address, then
    // the extension's address
    assert!(matches!(bytes[8], 2 | 3));
    let ext = u64::from_le_bytes(bytes[20..28].try_into().unwrap()) as usize;
    assert_eq!(&bytes[ext..ext + 4], b"OHDR");
    let bad = corrupt(&good, "ext-bad.h5", first_message(&bytes, ext) + 1);
    assert_checksum_error(&bad, "superblock extension: object header", ext);
}

#[test]
fn superblock_is_verified() {
    // hdf5-reader checks it; the error must say so (the superblock's address is where the
    // signature was found: 0 here, further on after a user block)
    let Some(dir) = files("cks-sb", HEADERS) else {
        return;
    };
    let good = dir.join("hdr.h5");
    let bytes = std::fs::read(&good).unwrap();
    assert!(matches!(bytes[8], 2 | 3), "superblock version 2 or 3");
    // the end-of-file address: a byte the checksum covers that sizes nothing we read first
    let bad = corrupt(&good, "sb.h5", 36);
    let e = Nc4File::open(&bad).expect_err("corrupt superblock");
    assert!(e.is_checksum_mismatch(), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("sb.h5: superblock: checksum mismatch (stored 0x"),
        "{msg}"
    );
}
