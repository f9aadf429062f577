//! A DAP4 server's data read lazily: after the DMR (`URL.dmr.xml`, read at open), either the
//! whole dataset in one `URL.dap`, or one variable, or a strided hyperslab of one, as a
//! constraint expression the server evaluates (DAP4 Volume 2, "Constraint Expressions":
//! `URL.dap?dap4.ce=/g/v[first:stride:last]...`, fully qualified names, inclusive bounds).
//! Each answer is a whole DAP4 data response: its own DMR (with the constrained sizes), then
//! the chunked data with its checksums, decoded as [`super::open_response_with`] does.

use std::collections::HashMap;

use nc_dataset::{Dataset, NcType, Slab, UserTypeKind, Values, VarId};

use super::Dap4Options;
use crate::dap2::Slabbed;
use crate::fetch::Target;
use crate::DapError;

/// A constrained request's answer, decoded.
struct Answer {
    /// the dataset its DMR describes (the constrained sizes)
    ds: Dataset,
    /// its variables' values, by [`VarId`] in `ds`
    values: Vec<(VarId, Values)>,
    /// the URL asked, the constraint unescaped, to name in messages
    url: String,
}

/// Fetching a DAP4 server's values: `URL.dap`, with or without a constraint.
pub struct Remote {
    target: Target,
    opts: Dap4Options,
}

impl Remote {
    /// Fetching from `target` with `opts` (checksums, opaque size).
    pub fn new(target: Target, opts: Dap4Options) -> Remote {
        Remote { target, opts }
    }

    /// Every variable at once: `URL.dap`, whole values of the variables of `ds` (matched by
    /// their fully qualified names and sizes).
    ///
    /// # Errors
    /// The request fails, or the answer is not DAP4 data (a server error, a bad checksum).
    pub fn fetch_all(&self, ds: &Dataset) -> Result<Vec<(VarId, Values)>, DapError> {
        let bytes = self.target.get_dap4()?;
        let (rds, data, _) = super::open_response_with(&bytes, &self.target.display(), &self.opts)?;
        Ok(matched(ds, &rds, data.values))
    }

    /// Every value of `var`: `URL.dap?dap4.ce=/PATH`. A server that ignores the constraint
    /// answers with every variable: all are returned, for the caller to keep. A variable
    /// whose name a constraint cannot carry plainly is fetched with all the others.
    ///
    /// # Errors
    /// As [`Remote::fetch_all`].
    pub fn fetch_var(&self, ds: &Dataset, var: VarId) -> Result<Vec<(VarId, Values)>, DapError> {
        match ce_path(ds, var) {
            Some(path) if !self.target.constrained() => {
                let a = self.ask(&path)?;
                Ok(matched(ds, &a.ds, a.values))
            }
            _ => self.fetch_all(ds),
        }
    }

    /// A strided hyperslab of `var`, the server cutting it: `URL.dap?dap4.ce=/PATH[a:s:b]..`.
    /// `None` where the server's indices are not ours or a constraint cannot say it: a URL
    /// with its own constraint, a scalar, a compound or variable-length variable (a
    /// structure or sequence), a name a constraint cannot carry plainly, an empty slab.
    ///
    /// # Errors
    /// The request fails, the server answers with an error, or the answer holds neither the
    /// hyperslab nor the whole variable.
    pub fn fetch_slab(
        &self,
        ds: &Dataset,
        var: VarId,
        slab: Slab,
        stride: &[u64],
    ) -> Option<Result<Slabbed, DapError>> {
        let rank = ds.var(var).dims.len();
        let plain = match ds.var(var).ty {
            NcType::Atomic(_) => true,
            NcType::User(t) => matches!(
                ds.types[t.0].kind,
                UserTypeKind::Enum { .. } | UserTypeKind::Opaque { .. }
            ),
        };
        if self.target.constrained()
            || !plain
            || rank == 0
            || slab.start.len() != rank
            || slab.count.len() != rank
            || stride.len() != rank
            || slab.count.contains(&0)
        {
            return None;
        }
        let path = ce_path(ds, var)?;
        let mut ce = path.clone();
        for ((&a, &n), &s) in slab.start.iter().zip(slab.count).zip(stride) {
            let s = s.max(1);
            ce.push_str(&format!("[{a}:{s}:{}]", a + (n - 1) * s));
        }
        let got = (|| {
            let mut a = self.ask(&ce)?;
            let want: u64 = slab.count.iter().product();
            let at = a.values.iter().position(|(v, _)| a.ds.var_path(*v) == path);
            let n = at.map(|i| a.values[i].1.len() as u64);
            match (at, n) {
                (Some(i), Some(n)) if n == want => Ok(Slabbed::Cut(a.values.swap_remove(i).1)),
                // a server that ignores constraints answered with the whole variable (and
                // maybe every other): kept, and cut by the caller
                (Some(_), n) if n == ds.num_elements(var) => {
                    Ok(Slabbed::Whole(matched(ds, &a.ds, a.values)))
                }
                (None, _) => Err(malformed(
                    &a.url,
                    format!("the answer holds no values of variable \"{path}\""),
                )),
                (_, n) => Err(malformed(
                    &a.url,
                    format!(
                        "variable \"{path}\": the answer holds {} values, the constraint asked for {want}",
                        n.unwrap_or(0)
                    ),
                )),
            }
        })();
        Some(got)
    }

    /// The answer to `ce`, decoded.
    fn ask(&self, ce: &str) -> Result<Answer, DapError> {
        let url = format!("{}?dap4.ce={ce}", self.target.url_of("dap"));
        let bytes = self.target.get_dap4_ce(ce)?;
        let (ds, data, _) = super::open_response_with(&bytes, &url, &self.opts)?;
        Ok(Answer {
            ds,
            values: data.values,
            url,
        })
    }
}

fn malformed(url: &str, what: String) -> DapError {
    DapError::Malformed {
        url: url.to_string(),
        what,
    }
}

/// `var`'s fully qualified name as a constraint names it, when every group and variable
/// name on it is plain (letters, digits, `_`, `-`): others would need DAP4's `\` escapes,
/// which servers read differently, so those variables are fetched with the whole dataset.
fn ce_path(ds: &Dataset, var: VarId) -> Option<String> {
    let path = ds.var_path(var);
    let plain = path.split('/').skip(1).all(|n| {
        !n.is_empty()
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    });
    plain.then_some(path)
}

/// The values of an answer (`rds`, `values`) that are whole variables of `ds`: matched by
/// fully qualified name, kept when the count is the variable's.
fn matched(ds: &Dataset, rds: &Dataset, values: Vec<(VarId, Values)>) -> Vec<(VarId, Values)> {
    let ours: HashMap<String, VarId> = (0..ds.vars.len())
        .map(|i| (ds.var_path(VarId(i)), VarId(i)))
        .collect();
    values
        .into_iter()
        .filter_map(|(rv, x)| {
            let v = *ours.get(&rds.var_path(rv))?;
            (ds.num_elements(v) == Some(x.len() as u64)).then_some((v, x))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nc_dataset::{AtomicType, ROOT};

    fn dataset(x_len: u64) -> (Dataset, VarId, VarId) {
        let mut ds = Dataset::new("t");
        let g = ds.add_group(ROOT, "g");
        let x = ds.add_dim(ROOT, "x", x_len, false);
        let a = ds.add_var(g, "a", NcType::Atomic(AtomicType::Int), vec![x]);
        let b = ds.add_var(ROOT, "b.c", NcType::Atomic(AtomicType::Int), vec![x]);
        (ds, a, b)
    }

    #[test]
    fn constraints_name_plain_variables_by_full_path() {
        let (ds, a, b) = dataset(3);
        assert_eq!(ce_path(&ds, a).as_deref(), Some("/g/a"));
        // `.` separates structure fields in a DAP4 name: fetched with the whole dataset
        assert_eq!(ce_path(&ds, b), None);
    }

    #[test]
    fn answers_match_by_path_and_whole_size() {
        let (ds, a, _) = dataset(3);
        let (small, sa, sb) = dataset(2);
        let whole = vec![
            (sa, Values::Int(vec![1, 2, 3])),
            (sb, Values::Int(vec![4, 5])),
        ];
        // `/g/a` has all 3 values; `/b.c` only 2 of 3: not a whole variable, dropped
        assert_eq!(
            matched(&ds, &small, whole),
            vec![(a, Values::Int(vec![1, 2, 3]))]
        );
    }
}
