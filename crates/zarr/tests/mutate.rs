//! Deterministic mutation testing of the metadata parser and chunk reader (a stand-in for a
//! cargo-fuzz target): every mutated store opens or fails with an error, never a panic, and
//! reads stay bounded.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::filter;
use nc_dataset::{AtomicType, Attribute, Dataset, InMemory, Values, VarId, ROOT};
use nc_zarr::{write_into, MemStore, Store, ZarrFile};

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seed_store() -> Vec<(String, Vec<u8>)> {
    let mut ds = Dataset::new("m");
    let x = ds.add_dim(ROOT, "x", 7, false);
    let g = ds.add_group(ROOT, "g");
    let y = ds.add_dim(g, "y", 3, false);
    let v = ds.add_var(ROOT, "v", AtomicType::Int.into(), vec![x]);
    ds.var_mut(v).data = Some(Values::Int((0..7).collect()));
    ds.var_mut(v).storage.chunk_sizes = Some(vec![3]);
    ds.var_mut(v).storage.filters = vec![filter(2, &[]), filter(1, &[1])];
    ds.var_mut(v)
        .atts
        .push(Attribute::new("scale", Values::Float(vec![0.5, 2.0])));
    let w = ds.add_var(g, "w", AtomicType::String.into(), vec![y]);
    ds.var_mut(w).data = Some(Values::String(vec![
        Some("a".into()),
        None,
        Some("ccc".into()),
    ]));
    let c = ds.add_var(g, "c", AtomicType::Char.into(), vec![y, x]);
    ds.var_mut(c).data = Some(Values::Char(b"abcdefghijklmnopqrstu".to_vec()));
    ds.var_mut(c).storage.filters = vec![filter(307, &[9])];
    ds.groups[0]
        .atts
        .push(Attribute::text("title", "{\"a\": [1, 2]}"));
    let s = MemStore::new();
    write_into(&s, &ds, &InMemory, false, true, &Default::default()).unwrap();
    s.list("")
        .unwrap()
        .into_iter()
        .map(|k| {
            let v = s.get(&k).unwrap().unwrap();
            (k, v)
        })
        .collect()
}

const TOKENS: [&str; 14] = [
    "NaN",
    "-1",
    "1e999",
    "18446744073709551616",
    "\"",
    "[",
    "{}",
    "null",
    "\"/../x\"",
    "[4294967296]",
    "\"|S999999999\"",
    "\"F\"",
    "[0]",
    "\"<U1\"",
];

fn mutate(rng: &mut Lcg, data: &mut Vec<u8>) {
    match rng.below(5) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] ^= 1 << rng.below(8);
        }
        1 => data.truncate(rng.below(data.len() + 1)),
        2 => {
            let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
            let i = rng.below(data.len() + 1);
            data.splice(i..i, t.iter().copied());
        }
        3 if !data.is_empty() => {
            // replace a number by a huge one
            let i = rng.below(data.len());
            if data[i].is_ascii_digit() {
                data.splice(i..i + 1, b"99999999999".iter().copied());
            }
        }
        _ => {
            let i = rng.below(data.len() + 1);
            data.insert(i, rng.below(256) as u8);
        }
    }
}

#[test]
fn mutated_stores_never_panic() {
    let seed = seed_store();
    let mut rng = Lcg(0x5eed);
    let mut opened = 0;
    for _ in 0..3000 {
        let s = MemStore::new();
        let victim = rng.below(seed.len());
        for (i, (k, v)) in seed.iter().enumerate() {
            let mut v = v.clone();
            if i == victim {
                for _ in 0..1 + rng.below(3) {
                    mutate(&mut rng, &mut v);
                }
            }
            s.put(k, &v).unwrap();
        }
        let Ok(f) = ZarrFile::from_store(Box::new(s), "m", rng.below(4) == 0, true) else {
            continue;
        };
        opened += 1;
        for i in 0..f.dataset().vars.len() {
            let shape = f.dataset().shape(VarId(i));
            let start = vec![0; shape.len()];
            let _ = f.read_var(VarId(i), &start, &shape);
        }
    }
    assert!(opened > 100, "only {opened} mutated stores opened");
}
