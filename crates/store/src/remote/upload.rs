//! A finished local file becomes an object by a multipart upload, which the server makes
//! visible only when it is complete: a failed or interrupted upload is aborted and leaves no
//! object (and an object already there stays as it was).

use std::io::{Read, Seek};
use std::sync::Arc;

use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};

use super::connect::{object_path, remote_error};
use super::runtime::{block_on, concurrency};
use super::stats::{count_request, count_written};
use super::url::{Cloud, RemoteUrl};
use crate::error::StoreError;

/// Size of one part (S3's minimum is 5 MiB for every part but the last).
const PART: usize = 16 << 20;

/// Uploads in progress, and whether they were told to stop.
static ACTIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Stop every upload in progress: each aborts its multipart upload (the server drops the
/// parts; no object appears) and fails. Waits at most `wait` for them to finish aborting; true
/// when none is left. Uploads started later fail at once. For interrupt handlers.
pub fn abort_uploads(wait: std::time::Duration) -> bool {
    use std::sync::atomic::Ordering;
    STOP.store(true, Ordering::SeqCst);
    let until = std::time::Instant::now() + wait;
    while ACTIVE.load(Ordering::SeqCst) > 0 {
        if std::time::Instant::now() >= until {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

fn stopped() -> bool {
    STOP.load(std::sync::atomic::Ordering::SeqCst)
}

/// Counts an upload in progress for as long as it lives.
struct Active;

impl Active {
    fn new() -> Active {
        ACTIVE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Active
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

fn interrupted(u: &RemoteUrl) -> StoreError {
    StoreError::Remote {
        url: u.display.clone(),
        cause: "upload interrupted; the multipart upload was aborted and no object was made".into(),
        cure: None,
    }
}

/// Upload the open file `f`, from its start, to the object `u` names (`local` names it in
/// errors).
///
/// # Errors
/// [`StoreError::ReadOnly`] for plain HTTP; request failures (the upload is aborted first);
/// the file cannot be read.
pub(crate) fn upload_file(
    u: &RemoteUrl,
    store: Arc<dyn ObjectStore>,
    mut f: std::fs::File,
    local: &str,
) -> Result<(), StoreError> {
    if u.cloud == Cloud::Http {
        return Err(StoreError::ReadOnly {
            location: u.display.clone(),
            why: "a plain http(s) server is read-only here; write to s3://, gs:// or az://, or \
                  to an S3-compatible server named with #mode=...,s3"
                .into(),
        });
    }
    f.seek(std::io::SeekFrom::Start(0))
        .map_err(|e| StoreError::io(local, e))?;
    let path = object_path(u, "");
    let parallel = concurrency().clamp(1, 8);
    let _active = Active::new();
    if stopped() {
        return Err(interrupted(u));
    }
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
                    return Err(StoreError::io(local, e));
                }
            };
            if n == 0 {
                break;
            }
            if stopped() {
                let _ = w.abort().await;
                return Err(interrupted(u));
            }
            if let Err(e) = w.wait_for_capacity(parallel).await {
                let _ = w.abort().await;
                return Err(remote_error(u, "", &e));
            }
            count_request();
            count_written(n as u64);
            w.write(&buf[..n]);
        }
        if stopped() {
            let _ = w.abort().await;
            return Err(interrupted(u));
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
