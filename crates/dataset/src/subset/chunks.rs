//! Where a subset's values are: the view's answer to [`DataSource::placement`], so that a
//! writer of references (`ncdump-rs --kerchunk --dimension`) points at the input's own
//! chunks where the subset keeps them whole, and carries the values otherwise.
//!
//! A variable cut along some dimensions keeps the input's chunks when, along every cut
//! dimension, the subset is one run of stride 1 starting on a chunk boundary: the chunks it
//! touches, renumbered from 0, are the view's chunks, the last one possibly reaching past the
//! view's end (a Zarr edge chunk is read whole and cut to the shape). Any other cut (a start
//! inside a chunk, a stride, a wrapped or multi-range selection) keeps values that are no
//! chunk's: the view then answers with chunks of its own, every one
//! [`ChunkBytes::Decoded`], which the writer reads through the view and encodes with the
//! input's filters. The coordinate variable of a cut dimension is always answered so, without
//! filters: a coordinate is small, read whole by every client, and carried in the references.

use super::{DimSelection, SubsetSource};
use crate::{
    ChunkBytes, ChunkMap, DataError, DataSource, Placement, Slab, StoredChunk, StoredChunks, VarId,
};

/// Largest chunk (bytes) of the view's own chunks, whose values the references carry: the
/// input's chunk shape cut to the view, halved along its longest dimension while larger.
const OWN_CHUNK_BYTES: u64 = 4 << 20;

impl SubsetSource<'_> {
    /// [`DataSource::placement`] of a variable the subset cuts (see the module's notes).
    pub(super) fn cut_placement(&self, var: VarId) -> Option<Result<Placement, DataError>> {
        let map = match self.src.placement(self.original, var)? {
            Ok(Placement::Chunks(m)) => m,
            // not in byte ranges (or an error): the writer reads the view's values
            other => return Some(other),
        };
        let sels = self.sels(var);
        let shape: Vec<u64> = (self.original.shape(var).iter().zip(&sels))
            .map(|(&n, s)| s.map_or(n, DimSelection::len))
            .collect();
        if map.chunk.len() != shape.len() || map.chunk.contains(&0) {
            return Some(Ok(Placement::Chunks(map)));
        }
        if self.is_cut_coordinate(var) {
            return Some(self.own_chunks(var, map, &shape, false));
        }
        match kept_chunks(&map, &sels) {
            Some(m) => Some(Ok(Placement::Chunks(m))),
            None => Some(self.own_chunks(var, map, &shape, true)),
        }
    }

    /// True for the coordinate variable (1-D, named as its dimension) of a cut dimension.
    fn is_cut_coordinate(&self, var: VarId) -> bool {
        let v = self.original.var(var);
        match v.dims.as_slice() {
            [d] => {
                self.sel.get(d.0).is_some_and(Option::is_some)
                    && self.original.dim(*d).name == v.name
                    && self.original.dim(*d).group == v.group
            }
            _ => false,
        }
    }

    /// The view of `var` (of `shape`) in chunks of its own, each to be read through the view
    /// and encoded with the input's filters (`filtered`) or none; chunks wholly unwritten in
    /// the input are left out (they read as the stored fill).
    fn own_chunks(
        &self,
        var: VarId,
        map: ChunkMap,
        shape: &[u64],
        filtered: bool,
    ) -> Result<Placement, DataError> {
        let es = map.elem.size() as u64;
        let mut chunk: Vec<u64> = if filtered {
            (map.chunk.iter().zip(shape))
                .map(|(&c, &n)| c.min(n.max(1)))
                .collect()
        } else {
            shape.iter().map(|&n| n.max(1)).collect()
        };
        while chunk
            .iter()
            .try_fold(es.max(1), |a, &b| a.checked_mul(b))
            .is_none_or(|b| b > OWN_CHUNK_BYTES)
            && chunk.iter().any(|&c| c > 1)
        {
            if let Some(c) = chunk.iter_mut().max() {
                *c = c.div_ceil(2);
            }
        }
        let grid: Vec<u64> = shape
            .iter()
            .zip(&chunk)
            .map(|(&n, &c)| n.div_ceil(c))
            .collect();
        let mut list = Vec::new();
        if !shape.contains(&0) {
            let mut idx = vec![0u64; grid.len()];
            loop {
                let start: Vec<u64> = idx.iter().zip(&chunk).map(|(&i, &c)| i * c).collect();
                let count: Vec<u64> = (start.iter().zip(&chunk).zip(shape))
                    .map(|((&s, &c), &n)| c.min(n - s))
                    .collect();
                // the view's own dataset is not needed: the view reads from the original
                if !self.unwritten(self.original, var, Slab::new(&start, &count)) {
                    list.push(StoredChunk {
                        index: idx.clone(),
                        bytes: ChunkBytes::Decoded,
                    });
                }
                if !crate::next_index(&mut idx, &grid) {
                    break;
                }
            }
        }
        Ok(Placement::Chunks(ChunkMap {
            chunk,
            filters: if filtered { map.filters } else { Vec::new() },
            chunks: StoredChunks::List(list),
            ..map
        }))
    }
}

/// The input's chunks a subset keeps whole, renumbered from 0 along each cut dimension:
/// `None` unless every cut dimension (`sels`) is kept as one stride-1 run (or one index)
/// that starts on a chunk boundary.
fn kept_chunks(map: &ChunkMap, sels: &[Option<&DimSelection>]) -> Option<ChunkMap> {
    let rank = map.chunk.len();
    // per dimension, the first and last chunk index kept
    let mut lo = vec![0u64; rank];
    let mut hi = vec![u64::MAX; rank];
    for (d, s) in sels.iter().enumerate() {
        let Some(s) = s else { continue };
        let [r] = s.runs.as_slice() else {
            return None;
        };
        let c = *map.chunk.get(d)?;
        if !r.contiguous() || !r.first.is_multiple_of(c) || r.count == 0 {
            return None;
        }
        lo[d] = r.first / c;
        hi[d] = (r.first + r.count - 1) / c;
    }
    let chunks = match &map.chunks {
        StoredChunks::List(l) => StoredChunks::List(
            l.iter()
                .filter(|c| (0..rank).all(|d| (lo[d]..=hi[d]).contains(&c.index[d])))
                .map(|c| StoredChunk {
                    index: c.index.iter().zip(&lo).map(|(&i, &l)| i - l).collect(),
                    bytes: c.bytes,
                })
                .collect(),
        ),
        // chunk i is grid index [i, 0, ...]: the other dimensions have one chunk each, so
        // an aligned cut of them starts at 0 and keeps it
        StoredChunks::Strided {
            offset,
            stride,
            len,
            count,
        } => {
            let first = lo.first().copied().unwrap_or(0);
            let end = (*count).min(hi.first().copied().unwrap_or(u64::MAX).saturating_add(1));
            StoredChunks::Strided {
                offset: offset.checked_add(first.checked_mul(*stride)?)?,
                stride: *stride,
                len: *len,
                count: end.saturating_sub(first),
            }
        }
    };
    Some(ChunkMap {
        chunks,
        ..map.clone()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::subset::Run;
    use crate::StoredType;

    fn sel(first: u64, count: u64, stride: u64) -> DimSelection {
        DimSelection {
            runs: vec![Run {
                first,
                count,
                stride,
            }],
        }
    }

    fn map(chunk: Vec<u64>, chunks: StoredChunks) -> ChunkMap {
        ChunkMap {
            elem: StoredType::Float {
                size: 4,
                big_endian: false,
            },
            chunk,
            filters: Vec::new(),
            fill: None,
            file: None,
            chunks,
        }
    }

    fn range(index: Vec<u64>, offset: u64) -> StoredChunk {
        StoredChunk {
            index,
            bytes: ChunkBytes::Range { offset, len: 10 },
        }
    }

    #[test]
    fn aligned_cuts_keep_the_chunks_they_touch_renumbered() {
        // a 6 x 5 grid of chunks (2, 3): chunk [i, j] at 100 i + j
        let list = (0..3)
            .flat_map(|i| (0..2).map(move |j| range(vec![i, j], 100 * i + j)))
            .collect();
        let m = map(vec![2, 3], StoredChunks::List(list));
        // rows 2..5 (chunks 1, 2), columns 3..4 (chunk 1)
        let (a, b) = (sel(2, 4, 1), sel(3, 2, 1));
        let kept = kept_chunks(&m, &[Some(&a), Some(&b)]).unwrap();
        assert_eq!(
            kept.chunks,
            StoredChunks::List(vec![range(vec![0, 0], 101), range(vec![1, 0], 201)])
        );
        assert_eq!(kept.chunk, vec![2, 3]);
        // one index on a boundary, any stride: kept
        let one = sel(4, 1, 7);
        let kept = kept_chunks(&m, &[Some(&one), None]).unwrap();
        assert_eq!(
            kept.chunks,
            StoredChunks::List(vec![range(vec![0, 0], 200), range(vec![0, 1], 201)])
        );
        // a start inside a chunk, a stride, two runs: not the input's chunks
        for s in [sel(1, 2, 1), sel(0, 3, 2)] {
            assert_eq!(kept_chunks(&m, &[Some(&s), None]), None);
        }
        let two = DimSelection {
            runs: vec![sel(0, 2, 1).runs[0], sel(4, 2, 1).runs[0]],
        };
        assert_eq!(kept_chunks(&m, &[Some(&two), None]), None);
    }

    #[test]
    fn strided_records_shift_by_whole_chunks() {
        // 10 records of 12 bytes, 40 apart, at 1000
        let m = map(
            vec![1, 3],
            StoredChunks::Strided {
                offset: 1000,
                stride: 40,
                len: 12,
                count: 10,
            },
        );
        let (t, x) = (sel(3, 4, 1), sel(0, 2, 1));
        let kept = kept_chunks(&m, &[Some(&t), Some(&x)]).unwrap();
        assert_eq!(
            kept.chunks,
            StoredChunks::Strided {
                offset: 1120,
                stride: 40,
                len: 12,
                count: 4
            }
        );
        // x from 1 is inside the record's one chunk
        let x1 = sel(1, 2, 1);
        assert_eq!(kept_chunks(&m, &[None, Some(&x1)]), None);
    }
}
