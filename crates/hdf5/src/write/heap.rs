//! The global heap of the files we write (spec III.E): strings, vlen sequences and dimension
//! lists. Metadata (attribute values, fill values, `DIMENSION_LIST`) goes into collections
//! in the metadata region: [`MetaHeap`] first measures which collections are needed, then,
//! their addresses assigned, replays the same objects into the same collections. Variable
//! data goes into collections appended as the data is written ([`DataHeap`]).

use super::out::Out;
use super::user::HeapSink;
use crate::format::global_heap::{self, Collection};
use crate::Hdf5Error;

/// Collections hold up to this much unless one object needs more.
const COLLECTION_BYTES: u64 = 64 << 10;

fn new_size(len: usize) -> u64 {
    global_heap::size_for(len).max(COLLECTION_BYTES)
}

/// The metadata's collections: measured, then replayed at their addresses.
pub(super) struct MetaHeap {
    sizes: Vec<u64>,
    /// Collection addresses; `None` while measuring.
    addrs: Option<Vec<u64>>,
    current: Option<Collection>,
    images: Vec<(u64, Vec<u8>)>,
}

impl MetaHeap {
    /// A heap that measures (addresses handed out are 0).
    pub fn measure() -> MetaHeap {
        MetaHeap {
            sizes: Vec::new(),
            addrs: None,
            current: None,
            images: Vec::new(),
        }
    }

    /// The collection sizes the measured objects need (the last one cut to its contents).
    pub fn sizes(mut self) -> Vec<u64> {
        if let (Some(c), Some(last)) = (&self.current, self.sizes.last_mut()) {
            *last = (c.used() + 16).max(global_heap::MIN_SIZE);
        }
        self.sizes
    }

    /// A heap that places the same objects into collections of `sizes` at `addrs`.
    pub fn replay(sizes: Vec<u64>, addrs: Vec<u64>) -> MetaHeap {
        MetaHeap {
            sizes,
            addrs: Some(addrs),
            current: None,
            images: Vec::new(),
        }
    }

    fn close(&mut self) {
        if let (Some(c), Some(addrs)) = (self.current.take(), &self.addrs) {
            let k = self.images.len();
            self.images.push((addrs[k], c.encode()));
        }
    }

    /// The collections' images with their addresses.
    pub fn images(mut self) -> Vec<(u64, Vec<u8>)> {
        self.close();
        self.images
    }
}

impl HeapSink for MetaHeap {
    fn store(&mut self, bytes: &[u8]) -> Result<(u64, u32), Hdf5Error> {
        if !self.current.as_ref().is_some_and(|c| c.fits(bytes.len())) {
            let k = match &self.addrs {
                None => {
                    self.sizes.push(new_size(bytes.len()));
                    self.sizes.len() - 1
                }
                Some(_) => {
                    self.close();
                    self.images.len()
                }
            };
            let size = self.sizes.get(k).copied().ok_or_else(|| {
                Hdf5Error::invalid(
                    "global heap",
                    "more heap objects than measured (writer bug: the two passes differ)",
                )
            })?;
            self.current = Some(Collection::new(size));
        }
        let addr = match &self.addrs {
            None => 0,
            Some(a) => a[self.images.len()],
        };
        let c = self
            .current
            .as_mut()
            .ok_or_else(|| Hdf5Error::invalid("global heap", "no open collection (writer bug)"))?;
        if !c.fits(bytes.len()) {
            return Err(Hdf5Error::invalid(
                "global heap",
                "an object does not fit its measured collection (writer bug: the two passes differ)",
            ));
        }
        Ok((addr, c.push(bytes)))
    }
}

/// Collections appended to the file as variable data needs them.
pub(super) struct DataHeap<'o> {
    out: &'o Out,
    current: Option<(u64, Collection)>,
}

impl<'o> DataHeap<'o> {
    pub fn new(out: &'o Out) -> DataHeap<'o> {
        DataHeap { out, current: None }
    }

    /// Write the open collection.
    pub fn finish(&mut self) -> Result<(), Hdf5Error> {
        if let Some((addr, c)) = self.current.take() {
            self.out.write_at(addr, &c.encode())?;
        }
        Ok(())
    }
}

impl HeapSink for DataHeap<'_> {
    fn store(&mut self, bytes: &[u8]) -> Result<(u64, u32), Hdf5Error> {
        if !self
            .current
            .as_ref()
            .is_some_and(|(_, c)| c.fits(bytes.len()))
        {
            self.finish()?;
            let size = new_size(bytes.len());
            self.current = Some((self.out.alloc(size), Collection::new(size)));
        }
        match self.current.as_mut() {
            Some((addr, c)) => Ok((*addr, c.push(bytes))),
            None => Err(Hdf5Error::invalid(
                "global heap",
                "no open collection (writer bug)",
            )),
        }
    }
}
