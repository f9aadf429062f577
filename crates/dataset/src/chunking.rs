//! Default chunk sizes, as netCDF-C 4.9.0 picks them when `_ChunkSizes` is not given: a rule of
//! the data model, used by the netCDF-4 writer and by the copy's plan (`nccopy-rs --explain`).
//!
//! Found by experiment with `ncgen -k nc4` + `ncdump -hs` (see the tests):
//! - a 1-D variable along an unlimited dimension: 4096 bytes worth of elements;
//! - every dimension unlimited: `(16 MiB / type size)^(1/rank)` along each;
//! - otherwise unlimited dimensions get 1, and each fixed dimension of length `n` gets
//!   `(16 MiB / fixed bytes)^(1/fixed rank) * n - 0.5` (truncated, at least 1, at most `n`),
//!   then shrunk so the chunks split `n` evenly: `ceil(n / ceil(n / c))`.

/// netCDF-C's target chunk size in bytes.
const DEFAULT_CHUNK_BYTES: f64 = 16_777_216.0;
/// netCDF-C's chunk size in bytes for 1-D record variables.
const DEFAULT_1D_UNLIM_BYTES: usize = 4096;

/// The chunk shape netCDF-C gives variable `v` of `ds` when no `_ChunkSizes` says otherwise
/// (its record dimensions counted as of length 0, as at definition time).
pub fn default_var_chunk_sizes(ds: &crate::Dataset, v: crate::VarId) -> Vec<u64> {
    let var = ds.var(v);
    let (shape, unlimited): (Vec<u64>, Vec<bool>) = var
        .dims
        .iter()
        .map(|d| {
            let dim = ds.dim(*d);
            (if dim.unlimited { 0 } else { dim.len }, dim.unlimited)
        })
        .unzip();
    default_chunk_sizes(&shape, &unlimited, ds.type_size(var.ty))
}

/// The chunk shape netCDF-C gives a variable of this shape (`unlimited[i]` marks record
/// dimensions, whose length at definition time is 0) and element size.
pub fn default_chunk_sizes(shape: &[u64], unlimited: &[bool], type_size: usize) -> Vec<u64> {
    let type_size = type_size.max(1);
    let rank = shape.len();
    if rank == 0 {
        return Vec::new();
    }
    let n_unlim = unlimited.iter().filter(|&&u| u).count();
    if rank == 1 && n_unlim == 1 {
        return vec![(DEFAULT_1D_UNLIM_BYTES / type_size).max(1) as u64];
    }
    if n_unlim == rank {
        let per = (DEFAULT_CHUNK_BYTES / type_size as f64).powf(1.0 / rank as f64);
        return vec![(per as u64).max(1); rank];
    }
    let fixed: Vec<usize> = (0..rank).filter(|&i| !unlimited[i]).collect();
    let values: f64 = fixed.iter().map(|&i| shape[i].max(1) as f64).product();
    let ratio = DEFAULT_CHUNK_BYTES / (values * type_size as f64);
    let factor = ratio.powf(1.0 / fixed.len() as f64);
    let mut out = vec![1u64; rank];
    for &i in &fixed {
        let len = shape[i].max(1);
        let suggested = factor * len as f64 - 0.5;
        let mut c = if suggested < 1.0 { 1 } else { suggested as u64 };
        c = c.min(len);
        let n_chunks = len.div_ceil(c);
        out[i] = len.div_ceil(n_chunks);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::default_chunk_sizes;

    #[test]
    fn matches_netcdf_c_experiments() {
        // (shape, unlimited, type size) -> what ncgen -k nc4 chose
        let t = true;
        let f = false;
        type Case<'a> = (&'a [u64], &'a [bool], usize, &'a [u64]);
        let cases: &[Case] = &[
            (&[0], &[t], 4, &[1024]),
            (&[0], &[t], 1, &[4096]),
            (&[0], &[t], 8, &[512]),
            (&[0, 1000], &[t, f], 4, &[1, 1000]),
            (&[0, 2000, 1000], &[t, f, f], 8, &[1, 2000, 1000]),
            (&[0, 5000, 5000], &[t, f, f], 4, &[1, 1667, 1667]),
            (&[0, 0], &[t, t], 4, &[2048, 2048]),
            (&[0, 0, 5000], &[t, t, f], 4, &[1, 1, 5000]),
            (&[5000, 0], &[f, t], 2, &[5000, 1]),
            (&[7, 0, 7], &[f, t, f], 8, &[7, 1, 7]),
            (&[2000, 2000, 7], &[f, f, f], 4, &[1000, 1000, 3]),
            (&[1000, 1000, 1000], &[f, f, f], 1, &[250, 250, 250]),
            (&[1], &[f], 2, &[1]),
            (&[1025, 1025], &[f, f], 8, &[1025, 1025]),
            (&[333, 333, 333], &[f, f, f], 4, &[111, 111, 111]),
            (&[5000, 5000], &[f, f], 4, &[1667, 1667]),
            (&[100000, 7], &[f, f], 8, &[100000, 7]),
            (&[50, 5000, 7], &[f, f, f], 8, &[50, 5000, 4]),
            (&[3000000], &[f], 4, &[3000000]),
            (&[40000000], &[f], 1, &[13333334]),
        ];
        for (shape, unlim, size, want) in cases {
            assert_eq!(
                default_chunk_sizes(shape, unlim, *size),
                want.to_vec(),
                "shape {shape:?} unlimited {unlim:?} size {size}"
            );
        }
    }
}
