//! The OPeNDAP client's HTTP transport against tiny servers on loopback: credentials from the
//! URL and from a .netrc, a NASA-Earthdata-style login by redirects and cookies, the cookie
//! jar file, gzip answers, retries, timeouts and the request counter of NC_IO_STATS.
//!
//! The rc file is one per test process (`NCRCENV_RC`, set before the first request); each test
//! adds lines prefixed by its own server's `[127.0.0.1:PORT]`, so their settings stay apart.
//! The tests run one at a time (the request counter is process-wide).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use nc_dap::fetch::Target;
use nc_dap::DapError;

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Req {
    path: String,
    /// headers, names lower case
    headers: Vec<(String, String)>,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What a server does with a request.
enum Act {
    Answer(Vec<u8>),
    /// say nothing for this long, then hang up
    Stall(Duration),
}

type Handler = Box<dyn Fn(&Req) -> Act + Send + Sync>;

/// A server on 127.0.0.1, its port, and the requests it has had.
struct Server {
    port: u16,
    log: Arc<Mutex<Vec<Req>>>,
}

impl Server {
    fn start(handler: impl Fn(&Req) -> Act + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(Box::new(handler));
        let log2 = log.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (handler, log) = (handler.clone(), log2.clone());
                std::thread::spawn(move || serve(conn, &handler, &log));
            }
        });
        Server { port, log }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}/d", self.port)
    }

    fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }
}

fn serve(mut conn: TcpStream, handler: &Handler, log: &Mutex<Vec<Req>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = text.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("")
        .to_string();
    let headers = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let req = Req { path, headers };
    log.lock().unwrap().push(req.clone());
    match handler(&req) {
        Act::Answer(bytes) => {
            let _ = conn.write_all(&bytes);
        }
        Act::Stall(d) => std::thread::sleep(d),
    }
}

/// An HTTP/1.1 answer that closes the connection.
fn answer(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Act {
    let mut s = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (n, v) in headers {
        s.push_str(&format!("{n}: {v}\r\n"));
    }
    s.push_str("\r\n");
    let mut b = s.into_bytes();
    b.extend_from_slice(body);
    Act::Answer(b)
}

/// This process's scratch directory and rc file, made (and `NCRCENV_RC` set) once.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("nc-dap-transport-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rc = dir.join("ncrc");
        // no ~/.netrc of the person running the tests
        std::fs::write(&rc, "HTTP.NETRC=/nonexistent/netrc\n").unwrap();
        std::env::set_var("NCRCENV_RC", &rc);
        std::env::remove_var("NC_DAP_TIMEOUT");
        std::env::remove_var("NC_DAP_BEARER_TOKEN");
        dir
    })
}

/// Add lines to the rc file.
fn add_rc(lines: &str) {
    let rc = scratch().join("ncrc");
    let mut old = std::fs::read_to_string(&rc).unwrap();
    old.push_str(lines);
    std::fs::write(&rc, old).unwrap();
}

/// One test at a time: the request counter and the rc file are the process's.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    scratch();
    g
}

/// GET `base.dds` through the DAP client.
fn get(base: &str) -> Result<Vec<u8>, DapError> {
    Target::Http {
        base: base.to_string(),
        query: None,
    }
    .get("dds", None)
}

fn http_error(r: Result<Vec<u8>, DapError>) -> (String, String) {
    match r {
        Err(DapError::Http { url, what }) => (url, what),
        other => panic!("expected an HTTP error, got {other:?}"),
    }
}

fn requests_so_far() -> u64 {
    nc_store::remote::io_stats().requests
}

#[test]
fn basic_auth_from_the_url_is_decoded_and_sent() {
    let _g = serial();
    let s = Server::start(|r| match r.header("authorization") {
        Some("Basic dXNAZXI6cDp3") => answer(200, &[], b"Dataset {} x;"),
        _ => answer(401, &[], b"who are you"),
    });
    let url = format!("http://us%40er:p%3Aw@127.0.0.1:{}/d", s.port);
    assert_eq!(get(&url).unwrap(), b"Dataset {} x;");
    assert_eq!(s.requests()[0].path, "/d.dds");

    // wrong credentials: the 401 names the host, the message hides the password
    let url = format!("http://us:wrong@127.0.0.1:{}/d", s.port);
    let (shown, what) = http_error(get(&url));
    assert_eq!(shown, format!("http://us:***@127.0.0.1:{}/d.dds", s.port));
    assert!(what.starts_with("HTTP 401 (authorization required): who are you: the credentials sent to 127.0.0.1 were refused"), "{what}");
    // no credentials at all: the cure
    let (_, what) = http_error(get(&s.base()));
    assert!(
        what.contains("put credentials for 127.0.0.1 in ~/.netrc"),
        "{what}"
    );
}

#[test]
fn basic_auth_from_netrc() {
    let _g = serial();
    let s = Server::start(|r| match r.header("authorization") {
        Some("Basic bnU6bnA=") => answer(200, &[], b"ok"),
        _ => answer(401, &[], b""),
    });
    let netrc = scratch().join("netrc1");
    std::fs::write(
        &netrc,
        "machine elsewhere login a password b\nmachine 127.0.0.1\n login nu\n password np\n",
    )
    .unwrap();
    add_rc(&format!(
        "[127.0.0.1:{}]HTTP.NETRC={}\n",
        s.port,
        netrc.display()
    ));
    assert_eq!(get(&s.base()).unwrap(), b"ok");
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn earthdata_style_login_by_redirects_and_cookies() {
    let _g = serial();
    // the login host: "localhost", so that it is another host than the data server's
    let data_port = Arc::new(AtomicUsize::new(0));
    let dp = data_port.clone();
    let urs = Server::start(move |r| {
        let port = dp.load(Ordering::SeqCst);
        match (r.path.as_str(), r.header("authorization")) {
            (p, Some("Basic YWxpY2U6czNjcmV0")) if p.starts_with("/oauth/authorize") => answer(
                302,
                &[
                    (
                        "Location",
                        &format!("http://127.0.0.1:{port}/login?code=c0de"),
                    ),
                    ("Set-Cookie", "urs_user_already_logged=yes; Path=/"),
                ],
                b"",
            ),
            _ => answer(401, &[], b"login first"),
        }
    });
    let urs_port = urs.port;
    let data = Server::start(move |r| {
        let cookie = r.header("cookie").unwrap_or("");
        match r.path.as_str() {
            "/login?code=c0de" => answer(
                302,
                &[
                    ("Location", "/granule.dds"),
                    ("Set-Cookie", "sess=xyz; Path=/; HttpOnly"),
                ],
                b"",
            ),
            _ if cookie.contains("sess=xyz") => answer(200, &[], b"Dataset { Int32 v; } g;"),
            _ => answer(
                302,
                &[(
                    "Location",
                    &format!("http://localhost:{urs_port}/oauth/authorize?client_id=1"),
                )],
                b"",
            ),
        }
    });
    data_port.store(data.port as usize, Ordering::SeqCst);
    let netrc = scratch().join("netrc-urs");
    std::fs::write(&netrc, "machine localhost login alice password s3cret\n").unwrap();
    let jar = scratch().join("cookies.txt");
    add_rc(&format!(
        "[127.0.0.1:{p}]HTTP.NETRC={}\n[127.0.0.1:{p}]HTTP.COOKIEJAR={}\n",
        netrc.display(),
        jar.display(),
        p = data.port
    ));

    let before = requests_so_far();
    let body = get(&format!("http://127.0.0.1:{}/granule", data.port)).unwrap();
    assert_eq!(body, b"Dataset { Int32 v; } g;");
    // data, login host, data's /login, data again: four requests
    assert_eq!(requests_so_far() - before, 4);
    let d = data.requests();
    let paths: Vec<&str> = d.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/granule.dds", "/login?code=c0de", "/granule.dds"]);
    // the password went to the login host only
    assert!(d.iter().all(|r| r.header("authorization").is_none()));
    assert_eq!(d[2].header("cookie"), Some("sess=xyz"));
    let u = urs.requests();
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].header("authorization"), Some("Basic YWxpY2U6czNjcmV0"));

    // the jar file, in curl's format
    let text = std::fs::read_to_string(&jar).unwrap();
    assert!(text.starts_with("# Netscape HTTP Cookie File"), "{text}");
    assert!(
        text.contains("#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t0\tsess\txyz\n"),
        "{text}"
    );
    assert!(
        text.contains("localhost\tFALSE\t/\tFALSE\t0\turs_user_already_logged\tyes\n"),
        "{text}"
    );

    // the session cookie is kept: the next request needs no login
    let before = requests_so_far();
    assert_eq!(
        get(&format!("http://127.0.0.1:{}/granule", data.port)).unwrap(),
        b"Dataset { Int32 v; } g;"
    );
    assert_eq!(requests_so_far() - before, 1);
    assert_eq!(urs.requests().len(), 1);
}

#[test]
fn gzip_answers_are_decoded() {
    let _g = serial();
    let plain = b"Dataset { Float64 t[time = 3]; } gz;".repeat(20);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&plain).unwrap();
    let gz = enc.finish().unwrap();
    let gz2 = gz.clone();
    let s = Server::start(move |r| {
        if r.header("accept-encoding")
            .is_some_and(|a| a.contains("gzip"))
        {
            answer(200, &[("Content-Encoding", "gzip")], &gz2)
        } else {
            answer(406, &[], b"")
        }
    });
    assert_eq!(get(&s.base()).unwrap(), plain);
    assert!(gz.len() < plain.len());
    assert_eq!(
        s.requests()[0].header("accept-encoding"),
        Some("gzip, deflate")
    );
}

#[test]
fn a_503_is_retried_then_succeeds() {
    let _g = serial();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let s = Server::start(move |_| {
        if h.fetch_add(1, Ordering::SeqCst) == 0 {
            answer(503, &[("Retry-After", "0")], b"busy")
        } else {
            answer(200, &[], b"fine")
        }
    });
    let before = requests_so_far();
    assert_eq!(get(&s.base()).unwrap(), b"fine");
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    assert_eq!(requests_so_far() - before, 2);
}

#[test]
fn a_404_is_not_retried() {
    let _g = serial();
    let s = Server::start(|_| answer(404, &[], b"no such dataset"));
    let before = requests_so_far();
    let (url, what) = http_error(get(&s.base()));
    assert_eq!(url, format!("{}.dds", s.base()));
    assert_eq!(
        what,
        "HTTP 404 (no such response at the server): no such dataset"
    );
    assert_eq!(s.requests().len(), 1);
    assert_eq!(requests_so_far() - before, 1);
}

#[test]
fn a_stalled_server_times_out() {
    let _g = serial();
    let s = Server::start(|_| Act::Stall(Duration::from_secs(5)));
    add_rc(&format!("[127.0.0.1:{}]HTTP.TIMEOUT=1\n", s.port));
    let t0 = Instant::now();
    let (_, what) = http_error(get(&s.base()));
    let took = t0.elapsed();
    assert!(
        what.starts_with("no answer from 127.0.0.1: timed out after 1 s"),
        "{what}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
    // a timeout is not retried
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn too_many_redirects_is_a_login_loop() {
    let _g = serial();
    let s = Server::start(|_| answer(302, &[("Location", "/again")], b""));
    let (_, what) = http_error(get(&s.base()));
    assert!(what.starts_with("more than 10 redirects"), "{what}");
    assert_eq!(s.requests().len(), 11);
}

#[test]
fn a_bearer_token_from_the_rc_file() {
    let _g = serial();
    let s = Server::start(|r| match r.header("authorization") {
        Some("Bearer tok-123") => answer(200, &[], b"yes"),
        _ => answer(401, &[], b""),
    });
    add_rc(&format!(
        "[127.0.0.1:{}]HTTP.BEARER_TOKEN=tok-123\n",
        s.port
    ));
    assert_eq!(get(&s.base()).unwrap(), b"yes");
}
