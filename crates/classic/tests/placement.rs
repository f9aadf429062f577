//! `ClassicFile::chunk_map` / `DataSource::placement` (issue 18.3): the byte ranges a
//! reference file points at hold exactly the variable's stored (big-endian) values.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use nc_classic::{write_to, ClassicError, ClassicFile, WriteOptions};
use nc_dataset::{
    AtomicType, ChunkBytes, DataSource, Dataset, Format, InMemory, NcType, Placement, StoredChunks,
    StoredType, Values, VarId, ROOT,
};

fn write(ds: &Dataset, format: Format) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = WriteOptions {
        format,
        ..WriteOptions::default()
    };
    write_to(&mut out, ds, &InMemory, &opts).unwrap();
    out
}

/// Two record variables (interleaved records), a fixed one and a scalar.
fn records() -> (Dataset, [VarId; 4]) {
    let mut ds = Dataset::new("r");
    let t = ds.add_dim(ROOT, "t", 5, true);
    let x = ds.add_dim(ROOT, "x", 3, false);
    let a = ds.add_var(ROOT, "a", NcType::Atomic(AtomicType::Short), vec![t, x]);
    let b = ds.add_var(ROOT, "b", NcType::Atomic(AtomicType::Byte), vec![t]);
    let f = ds.add_var(ROOT, "f", NcType::Atomic(AtomicType::Double), vec![x]);
    let s = ds.add_var(ROOT, "s", NcType::Atomic(AtomicType::Float), vec![]);
    ds.var_mut(a).data = Some(Values::Short((0..15).map(|i| i * 100 - 700).collect()));
    ds.var_mut(b).data = Some(Values::Byte(vec![-1, 2, -3, 4, -5]));
    ds.var_mut(f).data = Some(Values::Double(vec![0.5, -1.5, 1e300]));
    ds.var_mut(s).data = Some(Values::Float(vec![2.25]));
    (ds, [a, b, f, s])
}

#[test]
fn record_chunks_hold_each_record() {
    let (ds, [a, b, f, s]) = records();
    let bytes = write(&ds, Format::Offset64);
    let file = ClassicFile::from_bytes(bytes.clone()).unwrap();
    let fds = file.dataset();
    let recsize = file.header().recsize;
    // a record variable: one chunk per record, `recsize` apart, each holding that record
    let Some(Ok(Placement::Chunks(m))) = file.placement(fds, a) else {
        panic!("no placement")
    };
    assert_eq!(m.chunk, vec![1, 3]);
    assert_eq!(
        m.elem,
        StoredType::Int {
            size: 2,
            signed: true,
            big_endian: true
        }
    );
    assert!(m.filters.is_empty() && m.fill.is_none() && m.file.is_none());
    let StoredChunks::Strided {
        offset,
        stride,
        len,
        count,
    } = m.chunks
    else {
        panic!("records are strided: {:?}", m.chunks)
    };
    assert_eq!((stride, len, count), (recsize, 6, 5));
    for r in 0..5u64 {
        let at = (offset + r * stride) as usize;
        let got: Vec<i16> = bytes[at..at + 6]
            .chunks(2)
            .map(|c| i16::from_be_bytes([c[0], c[1]]))
            .collect();
        let want: Vec<i16> = (0..3).map(|i| (r as i16 * 3 + i) * 100 - 700).collect();
        assert_eq!(got, want, "record {r}");
    }
    // a one-byte record variable: not padded inside the record, chunk length 1
    let Some(Ok(Placement::Chunks(m))) = file.placement(fds, b) else {
        panic!()
    };
    let StoredChunks::Strided { offset, len, .. } = m.chunks else {
        panic!()
    };
    assert_eq!(len, 1);
    assert_eq!(bytes[offset as usize + recsize as usize] as i8, 2);
    // fixed and scalar: one chunk of the whole variable at `begin`
    for (v, want_chunk, n) in [(f, vec![3u64], 24u64), (s, vec![], 4)] {
        let Some(Ok(Placement::Chunks(m))) = file.placement(fds, v) else {
            panic!()
        };
        assert_eq!(m.chunk, want_chunk);
        let StoredChunks::List(l) = &m.chunks else {
            panic!()
        };
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].index.len(), want_chunk.len());
        assert_eq!(
            l[0].bytes,
            ChunkBytes::Range {
                offset: file.header().vars[v.0].begin,
                len: n
            }
        );
    }
    let at = file.header().vars[f.0].begin as usize;
    assert_eq!(
        f64::from_be_bytes(bytes[at + 16..at + 24].try_into().unwrap()),
        1e300
    );
}

#[test]
fn a_single_record_variable_gets_chunks_of_whole_records() {
    let mut ds = Dataset::new("one");
    let t = ds.add_dim(ROOT, "t", 12, true);
    let x = ds.add_dim(ROOT, "x", 2, false);
    let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![t, x]);
    ds.var_mut(v).data = Some(Values::Int((0..24).collect()));
    let bytes = write(&ds, Format::Classic);
    let file = ClassicFile::from_bytes(bytes).unwrap();
    let Some(Ok(Placement::Chunks(m))) = file.placement(file.dataset(), v) else {
        panic!()
    };
    // records back to back: all 12 in one chunk (12 divides 12, far below 8 MiB)
    assert_eq!(m.chunk, vec![12, 2]);
    assert!(matches!(
        m.chunks,
        StoredChunks::Strided {
            len: 96,
            count: 1,
            ..
        }
    ));
}

#[test]
fn data_past_the_end_is_an_error_naming_the_variable() {
    let (ds, [a, b, f, _]) = records();
    let mut bytes = write(&ds, Format::Classic);
    // a record is a (6 bytes, padded to 8) then b (1 byte, padded to 4): cut into a's last
    bytes.truncate(bytes.len() - 8);
    let file = ClassicFile::from_bytes(bytes).unwrap();
    // the last record is cut: the record variable's placement fails, the fixed one's does not
    let e = file.chunk_map(a).unwrap_err();
    assert!(
        matches!(e, ClassicError::DataPastEof { ref var, .. } if var == "a"),
        "{e}"
    );
    assert!(
        e.to_string().starts_with("variable \"a\": data up to byte"),
        "{e}"
    );
    assert!(file.chunk_map(b).is_err());
    assert!(file.chunk_map(f).is_ok());
}

/// `stored_records`: whole records as the file stores them, only for the layout it has.
#[test]
fn stored_records_are_the_files_record_bytes_for_its_own_layout() {
    let mut ds = Dataset::new("r");
    let t = ds.add_dim(ROOT, "t", 4, true);
    let x = ds.add_dim(ROOT, "x", 2, false);
    let a = ds.add_var(ROOT, "a", NcType::Atomic(AtomicType::Int), vec![t, x]);
    let b = ds.add_var(ROOT, "b", NcType::Atomic(AtomicType::Double), vec![t]);
    ds.var_mut(a).data = Some(Values::Int((0..8).map(|i| i * 3 - 5).collect()));
    ds.var_mut(b).data = Some(Values::Double(vec![0.5, 1.5, -2.5, 1e10]));
    let bytes = write(&ds, Format::Classic);
    let file = ClassicFile::from_bytes(bytes.clone()).unwrap();
    let fds = file.dataset();
    let h = file.header();
    assert_eq!(h.recsize, 16);
    let begin = h.vars[a.0].begin as usize;
    let layout = nc_dataset::RecordLayout {
        recsize: 16,
        vars: vec![(a, 8), (b, 8)],
    };
    // records 1 and 2, after what the buffer held
    let mut out = vec![7u8];
    file.stored_records(fds, 1, 2, &layout, &mut out)
        .unwrap()
        .unwrap();
    assert_eq!(out[0], 7);
    assert_eq!(&out[1..], &bytes[begin + 16..begin + 48]);
    // record 1 of `a` is [1, 4], big-endian; of `b`, 1.5
    assert_eq!(&out[1..9], &[0, 0, 0, 1, 0, 0, 0, 4]);
    assert_eq!(&out[9..17], &1.5f64.to_be_bytes());
    // another order, another size, a missing variable, records past the end: not offered
    for (layout, first, n) in [
        (
            nc_dataset::RecordLayout {
                recsize: 16,
                vars: vec![(b, 8), (a, 8)],
            },
            0,
            1,
        ),
        (
            nc_dataset::RecordLayout {
                recsize: 24,
                vars: vec![(a, 16), (b, 8)],
            },
            0,
            1,
        ),
        (
            nc_dataset::RecordLayout {
                recsize: 8,
                vars: vec![(a, 8)],
            },
            0,
            1,
        ),
        (layout.clone(), 3, 2),
    ] {
        let mut out = vec![1u8, 2];
        assert!(file
            .stored_records(fds, first, n, &layout, &mut out)
            .is_none());
        assert_eq!(out, [1, 2]);
    }
    // a file cut inside its records: not offered (the variable-by-variable read says where)
    let cut = ClassicFile::from_bytes(bytes[..bytes.len() - 4].to_vec()).unwrap();
    let mut out = Vec::new();
    assert!(cut
        .stored_records(cut.dataset(), 0, 4, &layout, &mut out)
        .is_none());
    assert!(out.is_empty());
}

/// Runs far apart (a record coordinate between large records, a few values of each record
/// of a large variable) are read one by one from a local file, and whole windows when they
/// are close: the same values either way, for whole variables, strided and offset slabs.
#[test]
fn sparse_and_dense_runs_read_the_same_values() {
    let n = 50u64;
    let mut ds = Dataset::new("s");
    let t = ds.add_dim(ROOT, "time", n, true);
    // records of 8 + 8192 bytes (runs of `time` 8200 apart) and of 8 + 40 bytes (48 apart)
    for (wide, name, tname) in [(2048u64, "wide", "time_w"), (10, "narrow", "time_n")] {
        let mut d = ds.clone();
        let x = d.add_dim(ROOT, "x", wide, false);
        let tv = d.add_var(ROOT, tname, NcType::Atomic(AtomicType::Double), vec![t]);
        let v = d.add_var(ROOT, name, NcType::Atomic(AtomicType::Float), vec![t, x]);
        d.var_mut(tv).data = Some(Values::Double(
            (0..n).map(|i| i as f64 * 0.5 + 3.0).collect(),
        ));
        d.var_mut(v).data = Some(Values::Float(
            (0..n * wide).map(|i| (i % 9973) as f32 - 0.25).collect(),
        ));
        let file = ClassicFile::from_bytes(write(&d, Format::Classic)).unwrap();
        let fd = file.dataset().clone();
        let want_t: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 + 3.0).collect();
        assert_eq!(
            file.read(&fd, tv, nc_dataset::Slab::new(&[0], &[n]))
                .unwrap(),
            Values::Double(want_t.clone()),
            "{name}: the whole coordinate"
        );
        assert_eq!(
            file.read(&fd, tv, nc_dataset::Slab::new(&[7], &[20]))
                .unwrap(),
            Values::Double(want_t[7..27].to_vec()),
            "{name}: part of it"
        );
        // three values from the middle of every record from record 5 on
        let (k0, k) = (wide / 2 - 1, 3u64);
        let got = file
            .read(&fd, v, nc_dataset::Slab::new(&[5, k0], &[n - 5, k]))
            .unwrap();
        let want: Vec<f32> = (5..n)
            .flat_map(|r| (k0..k0 + k).map(move |c| ((r * wide + c) % 9973) as f32 - 0.25))
            .collect();
        assert_eq!(got, Values::Float(want), "{name}: a column of every record");
    }
}
