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
    for d in 0..rank {
        if slab.start[d]
            .checked_add(slab.count[d])
            .is_none_or(|e| e > shape[d])
        {
            return Err(format!(
                "variable {name}: hyperslab {}+{} exceeds dimension length {}",
                slab.start[d], slab.count[d], shape[d]
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
    let mut strides = vec![1u64; rank];
    for d in (0..rank - 1).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let inner = slab.count[rank - 1] as usize;
    let mut idx = vec![0u64; rank - 1];
    loop {
        let mut off = slab.start[rank - 1];
        for (d, &k) in idx.iter().enumerate() {
            off += (slab.start[d] + k) * strides[d];
        }
        out.extend_from(&all.slice(off as usize, inner));
        if !next_index(&mut idx, slab.count) {
            break;
        }
    }
    Ok(out)
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
    }
}
