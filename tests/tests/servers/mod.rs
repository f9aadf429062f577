//! Servers the remote tests run on loopback: a local S3 server (moto's server mode, started
//! once per test binary, ended when the binary ends or after ten minutes), a small web server
//! that honours `Range` (Python's standard one does not), and a proxy that injects faults
//! (HTTP 500/503, S3 refusals, connection resets, slow answers) between a tool and the S3
//! server. Every server listens on 127.0.0.1 on a free port and serves bounded requests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Largest request or response body the test servers carry (64 MiB).
const MAX_BODY: usize = 64 << 20;

/// The shared local S3 server.
pub struct Moto {
    pub port: u16,
    _child: Mutex<Child>,
}

/// The moto server of this test binary, started at the first call; `None` (after a SKIP
/// line) when moto's server mode is not installed.
pub fn moto() -> Option<&'static Moto> {
    static MOTO: OnceLock<Option<Moto>> = OnceLock::new();
    MOTO.get_or_init(|| {
        // the server stops when our end of its stdin closes (this process ended, however it
        // ended) or after ten minutes, whichever comes first
        let script = "import os, sys, threading\n\
from moto.server import ThreadedMotoServer\n\
s = ThreadedMotoServer(ip_address='127.0.0.1', port=0, verbose=False)\n\
s.start()\n\
print(s.get_host_and_port()[1], flush=True)\n\
threading.Timer(600, lambda: os._exit(0)).start()\n\
sys.stdin.read()\n\
os._exit(0)\n";
        let child = Command::new("python3")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else {
            eprintln!("SKIP: python3 not installed (moto's S3 server needs it)");
            return None;
        };
        let mut line = String::new();
        let out = child.stdout.take().unwrap();
        let _ = BufReader::new(out).read_line(&mut line);
        let Ok(port) = line.trim().parse::<u16>() else {
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("SKIP: moto's S3 server is not installed (pip install \"moto[server]\")");
            return None;
        };
        Some(Moto {
            port,
            _child: Mutex::new(child),
        })
    })
    .as_ref()
}

impl Moto {
    /// `http://127.0.0.1:PORT`
    /// Tool `name` of the build under test, run in `dir` with this server's endpoint and
    /// its test credentials.
    pub fn command(&self, name: &str, dir: &std::path::Path) -> std::process::Command {
        let mut c = std::process::Command::new(crate::common::bin(name));
        c.current_dir(dir)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ENDPOINT_URL", self.endpoint())
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env_remove("AWS_PROFILE");
        c
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Make a bucket (moto takes unsigned requests).
    pub fn bucket(&self, name: &str) {
        let (status, _) = request(self.port, "PUT", &format!("/{name}"), &[]);
        assert_eq!(status, 200, "creating bucket {name}");
    }

    /// The keys of a bucket below a prefix.
    pub fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        let (status, body) = request(
            self.port,
            "GET",
            &format!("/{bucket}?list-type=2&prefix={prefix}&max-keys=1000"),
            &[],
        );
        assert_eq!(status, 200);
        let text = String::from_utf8_lossy(&body);
        text.split("<Key>")
            .skip(1)
            .filter_map(|s| s.split("</Key>").next())
            .map(str::to_string)
            .collect()
    }

    /// Store an object anyone may read (unsigned PUT, canned ACL `public-read`).
    pub fn put_public(&self, bucket: &str, key: &str, body: &[u8]) {
        let (status, _) = request_with(
            self.port,
            "PUT",
            &format!("/{bucket}/{key}"),
            &[("x-amz-acl", "public-read")],
            body,
        );
        assert_eq!(status, 200, "putting {bucket}/{key}");
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port`: status and body.
pub fn request(port: u16, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    request_with(port, method, path, &[], body)
}

/// [`request`] with extra headers.
pub fn request_with(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut r = BufReader::new(s);
    let head = read_head(&mut r).unwrap();
    let status = head.status();
    let body = read_body(&mut r, &head).unwrap_or_default();
    (status, body)
}

/// A request or response head.
#[derive(Debug, Clone)]
pub struct Head {
    pub first: String,
    pub headers: Vec<(String, String)>,
}

impl Head {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn status(&self) -> u16 {
        self.first
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }
}

fn read_head(r: &mut impl BufRead) -> Option<Head> {
    let mut first = String::new();
    if r.read_line(&mut first).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    for _ in 0..200 {
        let mut line = String::new();
        r.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            return Some(Head {
                first: first.trim_end().to_string(),
                headers,
            });
        }
        let (k, v) = line.split_once(':')?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    None
}

/// A body by Content-Length or chunked transfer coding.
fn read_body(r: &mut impl BufRead, head: &Head) -> Option<Vec<u8>> {
    if head
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        let mut out = Vec::new();
        loop {
            let mut line = String::new();
            r.read_line(&mut line).ok()?;
            let n = usize::from_str_radix(line.trim().split(';').next()?, 16).ok()?;
            if n == 0 || out.len() + n > MAX_BODY {
                let mut end = String::new();
                let _ = r.read_line(&mut end);
                return Some(out);
            }
            let start = out.len();
            out.resize(start + n, 0);
            r.read_exact(&mut out[start..]).ok()?;
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf).ok()?;
        }
    }
    let n: usize = head
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if n > MAX_BODY {
        return None;
    }
    let mut body = vec![0u8; n];
    r.read_exact(&mut body).ok()?;
    Some(body)
}

/// A web server on 127.0.0.1 serving the files of a directory with `HEAD` and `GET`, honouring
/// `Range: bytes=A-B` (206 with Content-Range) or, started by [`RangeServer::ignoring_ranges`],
/// answering every GET with the whole file (200), counting the requests it answered.
pub struct RangeServer {
    pub port: u16,
    pub requests: Arc<AtomicUsize>,
}

impl RangeServer {
    pub fn start(root: &Path) -> RangeServer {
        Self::serve(root, true)
    }

    /// A server that ignores `Range` (as Python's `http.server` does).
    pub fn ignoring_ranges(root: &Path) -> RangeServer {
        Self::serve(root, false)
    }

    fn serve(root: &Path, ranges: bool) -> RangeServer {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let (root, count) = (root.to_path_buf(), requests.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (root, count) = (root.clone(), count.clone());
                std::thread::spawn(move || serve_files(conn, &root, &count, ranges));
            }
        });
        RangeServer { port, requests }
    }

    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }
}

fn serve_files(conn: TcpStream, root: &Path, count: &AtomicUsize, ranges: bool) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut r = BufReader::new(conn.try_clone().unwrap());
    let mut w = conn;
    // keep-alive: answer requests until the client closes
    for _ in 0..10_000 {
        let Some(head) = read_head(&mut r) else {
            return;
        };
        count.fetch_add(1, Ordering::Relaxed);
        let mut parts = head.first.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("/").split('?').next().unwrap_or("/");
        let file: PathBuf = root.join(path.trim_start_matches('/'));
        let ok_name = !path.contains("..");
        let data = if ok_name {
            std::fs::read(&file).ok()
        } else {
            None
        };
        let Some(data) = data else {
            let _ = write!(w, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
            continue;
        };
        let total = data.len();
        let range = head.header("range").filter(|_| ranges).and_then(|v| {
            let (a, b) = v.strip_prefix("bytes=")?.split_once('-')?;
            let a: usize = a.parse().ok()?;
            let b: usize = if b.is_empty() {
                total.saturating_sub(1)
            } else {
                b.parse().ok()?
            };
            Some((a, b.min(total.saturating_sub(1))))
        });
        let (status, body, extra) = match range {
            Some((a, b)) if a < total && a <= b => (
                "206 Partial Content",
                &data[a..=b],
                format!("Content-Range: bytes {a}-{b}/{total}\r\n"),
            ),
            Some(_) => {
                let _ = write!(
                    w,
                    "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{total}\r\nContent-Length: 0\r\n\r\n"
                );
                continue;
            }
            None => ("200 OK", &data[..], String::new()),
        };
        let _ = write!(
            w,
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nAccept-Ranges: bytes\r\n{extra}\r\n",
            body.len()
        );
        if method != "HEAD" {
            let _ = w.write_all(body);
        }
    }
}

/// What the fault proxy does to the requests it sees.
#[derive(Debug, Clone)]
pub enum Faults {
    /// Pass everything through.
    None,
    /// Of every `every` requests, fail one in turn with: 503, a connection reset, 500, a
    /// two-second delay. Each request is retried by the client and then passes.
    Transient { every: usize },
    /// Pass everything through, each request after a delay.
    Slow { ms: u64 },
    /// Answer every request of these methods with HTTP 500 (S3 `InternalError`); pass the
    /// others through.
    FailMethods(&'static [&'static str]),
    /// Answer every request with this status and S3 error body.
    Always {
        status: u16,
        code: String,
        message: String,
    },
}

/// A proxy on 127.0.0.1 in front of the S3 server, injecting [`Faults`].
pub struct FaultProxy {
    pub port: u16,
    pub faults: Arc<Mutex<Faults>>,
    pub seen: Arc<AtomicUsize>,
    /// Requests passed through, by kind: the method, `LIST` for a GET listing a bucket.
    pub kinds: Arc<Mutex<std::collections::BTreeMap<String, usize>>>,
    /// Bytes of the bodies of the answers to GETs (objects and ranges of them) passed back.
    pub received: Arc<AtomicU64>,
}

impl FaultProxy {
    pub fn start(upstream: u16, faults: Faults) -> FaultProxy {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let faults = Arc::new(Mutex::new(faults));
        let seen = Arc::new(AtomicUsize::new(0));
        let kinds = Arc::new(Mutex::new(std::collections::BTreeMap::new()));
        let received = Arc::new(AtomicU64::new(0));
        let (f, n, k, b) = (
            faults.clone(),
            seen.clone(),
            kinds.clone(),
            received.clone(),
        );
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (f, n, k, b) = (f.clone(), n.clone(), k.clone(), b.clone());
                std::thread::spawn(move || proxy_conn(conn, upstream, &f, &n, &k, &b));
            }
        });
        FaultProxy {
            port,
            faults,
            seen,
            kinds,
            received,
        }
    }

    /// The bytes of GET answers' bodies since the last call, and start counting anew.
    pub fn take_received(&self) -> u64 {
        self.received.swap(0, Ordering::Relaxed)
    }

    /// The requests passed through by kind since the last call, and start counting anew.
    pub fn take_kinds(&self) -> std::collections::BTreeMap<String, usize> {
        std::mem::take(&mut *self.kinds.lock().unwrap())
    }

    pub fn set(&self, f: Faults) {
        *self.faults.lock().unwrap() = f;
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

fn proxy_conn(
    conn: TcpStream,
    upstream: u16,
    faults: &Mutex<Faults>,
    seen: &AtomicUsize,
    kinds: &Mutex<std::collections::BTreeMap<String, usize>>,
    received: &AtomicU64,
) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut r = BufReader::new(conn.try_clone().unwrap());
    let mut w = conn;
    for _ in 0..10_000 {
        let Some(head) = read_head(&mut r) else {
            return;
        };
        let Some(body) = read_body(&mut r, &head) else {
            return;
        };
        let n = seen.fetch_add(1, Ordering::Relaxed);
        let mut f = faults.lock().unwrap().clone();
        if let Faults::FailMethods(methods) = f {
            f = if methods
                .iter()
                .any(|m| head.first.starts_with(&format!("{m} ")))
            {
                Faults::Always {
                    status: 500,
                    code: "InternalError".into(),
                    message: "We encountered an internal error. Please try again.".into(),
                }
            } else {
                Faults::None
            };
        }
        match f {
            Faults::Always {
                status,
                code,
                message,
            } => {
                let xml = format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code><Message>{message}</Message></Error>"
                );
                // the answer to a HEAD has the headers of the body it would have had, and no
                // body: bytes after it would be read as the next answer on the connection
                let body = if head.first.starts_with("HEAD ") {
                    ""
                } else {
                    xml.as_str()
                };
                let _ = write!(
                    w,
                    "HTTP/1.1 {status} Refused\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\r\n{body}",
                    xml.len()
                );
                continue;
            }
            Faults::Slow { ms } => std::thread::sleep(Duration::from_millis(ms)),
            Faults::Transient { every } if every > 0 && n % every == every - 1 => {
                match (n / every) % 4 {
                    0 => {
                        let _ = write!(w, "HTTP/1.1 503 Slow Down\r\nContent-Length: 0\r\n\r\n");
                        continue;
                    }
                    1 => {
                        // a reset: close without an answer
                        let _ = w.shutdown(Shutdown::Both);
                        return;
                    }
                    2 => {
                        let _ = write!(
                            w,
                            "HTTP/1.1 500 Internal Error\r\nContent-Length: 0\r\n\r\n"
                        );
                        continue;
                    }
                    _ => std::thread::sleep(Duration::from_secs(2)),
                }
            }
            _ => {}
        }
        let method = head.first.split(' ').next().unwrap_or("").to_string();
        let kind = if method == "GET" && head.first.contains("list-type=") {
            "LIST".to_string()
        } else {
            method
        };
        *kinds.lock().unwrap().entry(kind).or_default() += 1;
        // forward on a fresh connection, answer with what the server said
        let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) else {
            return;
        };
        let _ = up.set_read_timeout(Some(Duration::from_secs(30)));
        let mut text = format!("{}\r\n", head.first);
        for (k, v) in &head.headers {
            if k.eq_ignore_ascii_case("connection") || k.eq_ignore_ascii_case("transfer-encoding") {
                continue;
            }
            if k.eq_ignore_ascii_case("content-length") {
                continue;
            }
            text.push_str(&format!("{k}: {v}\r\n"));
        }
        text.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        ));
        if up
            .write_all(text.as_bytes())
            .and_then(|()| up.write_all(&body))
            .is_err()
        {
            return;
        }
        let mut ur = BufReader::new(up);
        let Some(rh) = read_head(&mut ur) else { return };
        let is_head = head.first.starts_with("HEAD ");
        let rbody = if is_head {
            Vec::new()
        } else {
            read_body(&mut ur, &rh).unwrap_or_default()
        };
        if head.first.starts_with("GET ") {
            received.fetch_add(rbody.len() as u64, Ordering::Relaxed);
        }
        let mut out = format!("{}\r\n", rh.first);
        for (k, v) in &rh.headers {
            if k.eq_ignore_ascii_case("connection") || k.eq_ignore_ascii_case("transfer-encoding") {
                continue;
            }
            if !is_head && k.eq_ignore_ascii_case("content-length") {
                continue;
            }
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        if !is_head {
            out.push_str(&format!("Content-Length: {}\r\n", rbody.len()));
        }
        out.push_str("\r\n");
        if w.write_all(out.as_bytes())
            .and_then(|()| w.write_all(&rbody))
            .is_err()
        {
            return;
        }
    }
}
