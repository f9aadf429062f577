//! Object header addresses in a closed file, found by walking the group links once per group:
//! what the after-close passes (dense attribute storage, dimension scale attachments) need to
//! name or patch an object. Each group's links are read at most once, so looking up every
//! variable of a file is linear in the number of links.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use nc_dataset::{Dataset, GroupId};

use crate::h5::{LinkTo, H5};
use crate::Hdf5Error;

/// Group and object addresses of one closed file.
pub(super) struct Locator {
    pub h5: Arc<H5>,
    /// Address of each group reached so far.
    groups: HashMap<GroupId, u64>,
    /// Hard links of each group read so far: name -> object header address.
    links: HashMap<GroupId, HashMap<String, u64>>,
}

impl Locator {
    /// Open the file at `path` with our reader.
    ///
    /// # Errors
    /// When the file cannot be opened or its superblock read.
    pub fn open(path: &Path) -> Result<Locator, Hdf5Error> {
        Ok(Locator {
            h5: Arc::new(H5::open(path)?),
            groups: HashMap::new(),
            links: HashMap::new(),
        })
    }

    /// The object header address of group `g` of `ds`.
    ///
    /// # Errors
    /// When a group on the way is missing or cannot be read.
    pub fn group(&mut self, ds: &Dataset, g: GroupId) -> Result<u64, Hdf5Error> {
        if let Some(&a) = self.groups.get(&g) {
            return Ok(a);
        }
        let addr = match ds.group(g).parent {
            None => self.h5.root_addr()?,
            Some(p) => {
                let name = ds.group(g).name.clone();
                self.child(ds, p, &name)?
            }
        };
        self.groups.insert(g, addr);
        Ok(addr)
    }

    /// The object header address of the object linked as `name` in group `g`.
    ///
    /// # Errors
    /// When there is no such hard link or a group cannot be read.
    pub fn child(&mut self, ds: &Dataset, g: GroupId, name: &str) -> Result<u64, Hdf5Error> {
        if !self.links.contains_key(&g) {
            let addr = self.group(ds, g)?;
            let what = format!("group {}", ds.group_path(g));
            let hdr = self.h5.header(addr)?;
            let map: HashMap<String, u64> = self
                .h5
                .links(&hdr, &what)?
                .into_iter()
                .filter_map(|l| match l.to {
                    LinkTo::Hard(a) => Some((l.name, a)),
                    _ => None,
                })
                .collect();
            self.links.insert(g, map);
        }
        self.links
            .get(&g)
            .and_then(|m| m.get(name))
            .copied()
            .ok_or_else(|| {
                Hdf5Error::invalid(
                    format!("group {}", ds.group_path(g)),
                    format!("no object \"{name}\" found when reopening the written file"),
                )
            })
    }
}
