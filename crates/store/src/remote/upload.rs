//! A finished local file becomes an object by a multipart upload, which the server makes
//! visible only when it is complete: a failed or interrupted upload is aborted and leaves no
//! object (and an object already there stays as it was).

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};

use super::connect::{object_path, remote_error};
use super::runtime::{block_on, concurrency};
use super::stats::{count_request, count_written};
use super::url::{Cloud, RemoteUrl};
use crate::error::StoreError;

/// Size of one part (S3's minimum is 5 MiB for every part but the last).
const PART: usize = 16 << 20;

/// Upload the file at `local` to the object `u` names.
///
/// # Errors
/// [`StoreError::ReadOnly`] for plain HTTP; request failures (the upload is aborted first);
/// the file cannot be read.
pub(crate) fn upload_file(
    u: &RemoteUrl,
    store: Arc<dyn ObjectStore>,
    local: &Path,
) -> Result<(), StoreError> {
    if u.cloud == Cloud::Http {
        return Err(StoreError::ReadOnly {
            location: u.display.clone(),
            why: "a plain http(s) server is read-only here; write to s3://, gs:// or az://, or \
                  to an S3-compatible server named with #mode=...,s3"
                .into(),
        });
    }
    let mut f = std::fs::File::open(local).map_err(|e| StoreError::io(local.display(), e))?;
    let path = object_path(u, "");
    let parallel = concurrency().clamp(1, 8);
    block_on(async {
        count_request();
        let up = store
            .put_multipart(&path)
            .await
            .map_err(|e| remote_error(u, "", &e))?;
        let mut w = WriteMultipart::new_with_chunk_size(up, PART);
        let mut buf = vec![0u8; PART];
        loop {
            let n = match read_full(&mut f, &mut buf) {
                Ok(n) => n,
                Err(e) => {
                    let _ = w.abort().await;
                    return Err(StoreError::io(local.display(), e));
                }
            };
            if n == 0 {
                break;
            }
            if let Err(e) = w.wait_for_capacity(parallel).await {
                let _ = w.abort().await;
                return Err(remote_error(u, "", &e));
            }
            count_request();
            count_written(n as u64);
            w.write(&buf[..n]);
        }
        count_request();
        w.finish().await.map_err(|e| remote_error(u, "", &e))?;
        Ok(())
    })?
}

fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}
