//! A hyperslab cut from a variable's values held whole in memory.

use nc_dataset::{next_index, Dataset, Slab, Values, VarId};

/// The hyperslab `slab` of `all`, every value of `var` row-major.
///
/// # Errors
/// A slab outside the variable's shape, or values that do not fill it.
pub fn cut(ds: &Dataset, var: VarId, all: &Values, slab: Slab) -> Result<Values, String> {
    let shape = ds.shape(var);
    let name = &ds.var(var).name;
    let rank = shape.len();
    if slab.start.len() != rank || slab.count.len() != rank {
        return Err(format!(
            "variable {name}: hyperslab rank {} does not match variable rank {rank}",
            slab.start.len()
        ));
    }
    for (d, &len) in shape.iter().enumerate() {
        if slab.start[d]
            .checked_add(slab.count[d])
            .is_none_or(|e| e > len)
        {
            return Err(format!(
                "variable {name}: hyperslab {}+{} exceeds dimension length {len}",
                slab.start[d], slab.count[d]
            ));
        }
    }
    let total = ds.num_elements(var).unwrap_or(u64::MAX);
    if all.len() as u64 != total {
        return Err(format!(
            "variable {name}: {} values held for {total} elements",
            all.len()
        ));
    }
    if rank == 0 {
        return Ok(all.clone());
    }
    let mut out = all.slice(0, 0);
    if slab.count.contains(&0) {
        return Ok(out);
    }
    // the trailing dimensions the slab takes whole, and the one before them, make runs that
    // lie contiguous in `all`: each is copied in one piece
    let mut split = rank - 1;
    while split > 0 && slab.start[split] == 0 && slab.count[split] == shape[split] {
        split -= 1;
    }
    let mut strides = vec![1u64; rank];
    for d in (0..rank - 1).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let run = (slab.count[split] * strides[split]) as usize;
    let mut idx = vec![0u64; split];
    loop {
        let mut off = slab.start[split] * strides[split];
        for (d, &k) in idx.iter().enumerate() {
            off += (slab.start[d] + k) * strides[d];
        }
        extend_range(&mut out, all, off as usize, run);
        if !next_index(&mut idx, &slab.count[..split]) {
            break;
        }
    }
    Ok(out)
}

/// True when `slab` is every element of `var`.
pub fn covers(ds: &Dataset, var: VarId, slab: Slab) -> bool {
    slab.start.iter().all(|&s| s == 0) && slab.count == ds.shape(var).as_slice()
}

/// Append `count` elements of `all` from `start` to `out` (of the same variant), in one copy.
fn extend_range(out: &mut Values, all: &Values, start: usize, count: usize) {
    let r = start..start + count;
    match (out, all) {
        (Values::Byte(a), Values::Byte(b)) => a.extend_from_slice(&b[r]),
        (Values::Char(a), Values::Char(b)) => a.extend_from_slice(&b[r]),
        (Values::Short(a), Values::Short(b)) => a.extend_from_slice(&b[r]),
        (Values::Int(a), Values::Int(b)) => a.extend_from_slice(&b[r]),
        (Values::Float(a), Values::Float(b)) => a.extend_from_slice(&b[r]),
        (Values::Double(a), Values::Double(b)) => a.extend_from_slice(&b[r]),
        (Values::UByte(a), Values::UByte(b)) => a.extend_from_slice(&b[r]),
        (Values::UShort(a), Values::UShort(b)) => a.extend_from_slice(&b[r]),
        (Values::UInt(a), Values::UInt(b)) => a.extend_from_slice(&b[r]),
        (Values::Int64(a), Values::Int64(b)) => a.extend_from_slice(&b[r]),
        (Values::UInt64(a), Values::UInt64(b)) => a.extend_from_slice(&b[r]),
        (out, all) => {
            out.extend_from(&all.slice(start, count));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nc_dataset::{AtomicType, NcType, ROOT};

    #[test]
    fn cuts_row_major() {
        let mut ds = Dataset::new("t");
        let a = ds.add_dim(ROOT, "a", 2, false);
        let b = ds.add_dim(ROOT, "b", 3, false);
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![a, b]);
        let all = Values::Int(vec![0, 1, 2, 10, 11, 12]);
        let got = cut(&ds, v, &all, Slab::new(&[0, 1], &[2, 2])).unwrap();
        assert_eq!(got, Values::Int(vec![1, 2, 11, 12]));
        assert!(cut(&ds, v, &all, Slab::new(&[1, 2], &[1, 2])).is_err());
        assert!(!covers(&ds, v, Slab::new(&[0, 1], &[2, 2])));
        assert!(covers(&ds, v, Slab::new(&[0, 0], &[2, 3])));
    }

    #[test]
    fn cuts_contiguous_runs() {
        let mut ds = Dataset::new("t");
        let a = ds.add_dim(ROOT, "a", 3, false);
        let b = ds.add_dim(ROOT, "b", 2, false);
        let c = ds.add_dim(ROOT, "c", 2, false);
        let v = ds.add_var(ROOT, "v", NcType::Atomic(AtomicType::Int), vec![a, b, c]);
        let all = Values::Int((0..12).collect());
        let got = |s: &[u64], n: &[u64]| cut(&ds, v, &all, Slab::new(s, n)).unwrap();
        assert_eq!(got(&[1, 0, 0], &[2, 2, 2]), Values::Int((4..12).collect()));
        assert_eq!(
            got(&[0, 1, 0], &[3, 1, 2]),
            Values::Int(vec![2, 3, 6, 7, 10, 11])
        );
        assert_eq!(got(&[0, 0, 1], &[2, 2, 1]), Values::Int(vec![1, 3, 5, 7]));
        assert_eq!(got(&[0, 0, 0], &[3, 2, 2]), all);
        let s = Values::String(vec![
            None, None, None, None, None, None, None, None, None, None, None, None,
        ]);
        assert_eq!(
            cut(&ds, v, &s, Slab::new(&[2, 0, 0], &[1, 2, 2]))
                .unwrap()
                .len(),
            4
        );
    }
}
