//! The OPeNDAP client's HTTP: one blocking GET (reqwest over rustls) with the settings
//! netCDF-C 4.9.0 takes from its rc files ([`crate::rc`]), credentials from the URL, the rc
//! files or a `.netrc` ([`crate::netrc`]), redirects followed here so that each host gets only
//! its own credentials and the cookies set along the way ([`crate::cookies`]; the NASA
//! Earthdata Login flow), gzip/deflate answers decoded, transient failures retried, and
//! statuses reported as netCDF-C's `dap_fetch` maps them, each with its cure.
//!
//! Every request sent (each redirect hop, each retry) is counted in nc-store's I/O counters
//! (`NC_IO_STATS`).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use reqwest::header::{
    HeaderMap, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_ENCODING, COOKIE, LOCATION, RETRY_AFTER,
    SET_COOKIE,
};
use reqwest::{StatusCode, Url};

use crate::cookies::{self, CookieJar};
use crate::netrc::Netrc;
use crate::rc::Rc;
use crate::DapError;

/// Environment variable: seconds a DAP request may take (default 120; 0: no limit). It wins
/// over `HTTP.TIMEOUT` of the rc files.
pub const TIMEOUT_ENV: &str = "NC_DAP_TIMEOUT";

/// Environment variable (our extension): a bearer token sent as `Authorization: Bearer` to
/// the host of the URL opened (not to the hosts it redirects to), e.g. a NASA Earthdata token.
pub const BEARER_ENV: &str = "NC_DAP_BEARER_TOKEN";

/// Redirects followed for one GET before giving up (a login loop).
const MAX_REDIRECTS: usize = 10;
/// Tries of one request when it fails transiently.
const TRIES: u32 = 4;
/// The longest wait a `Retry-After` answer may impose, seconds.
const RETRY_AFTER_CAP: u64 = 5;
/// The most bytes reserved for a body before it arrives, from its `Content-Length`.
const BODY_RESERVE_CAP: u64 = 64 << 20;
/// The default limits, seconds.
const DEFAULT_TIMEOUT: u64 = 120;
const DEFAULT_CONNECT_TIMEOUT: u64 = 30;

/// What makes one reqwest client differ from another.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ClientKey {
    /// whole-request limit, seconds; `None`: no limit
    timeout: Option<u64>,
    connect_timeout: u64,
    verify: bool,
    cainfo: Option<String>,
    proxy: Option<String>,
    user_agent: String,
}

/// The settings of one request, from the rc files and the environment.
#[derive(Debug, Clone)]
struct Settings {
    client: ClientKey,
    deflate: bool,
    netrc: Option<PathBuf>,
    cookiejar: Option<PathBuf>,
}

/// An rc value that means "off": `0`, `false`, `no`, `off`.
fn is_off(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "0" | "false" | "no" | "off"
    )
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

fn settings(rc: &Rc, url: &Url) -> Settings {
    let secs = |key: &str| {
        rc.value(key, url)
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let timeout = std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .or_else(|| secs("HTTP.TIMEOUT"))
        .unwrap_or(DEFAULT_TIMEOUT);
    let timeout = (timeout > 0).then_some(timeout);
    let connect_timeout = secs("HTTP.CONNECTTIMEOUT")
        .filter(|&c| c > 0)
        .unwrap_or(DEFAULT_CONNECT_TIMEOUT)
        .min(timeout.unwrap_or(u64::MAX));
    let verify = !["HTTP.SSL.VERIFYPEER", "HTTP.SSL.VALIDATE"]
        .iter()
        .any(|k| rc.value(k, url).is_some_and(is_off));
    let text = |key: &str| {
        rc.value(key, url)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let user_agent = text("HTTP.USERAGENT").unwrap_or_else(|| {
        concat!("ncdump-rs/", env!("CARGO_PKG_VERSION"), " (OPeNDAP)").to_string()
    });
    Settings {
        client: ClientKey {
            timeout,
            connect_timeout,
            verify,
            cainfo: text("HTTP.SSL.CAINFO"),
            proxy: text("HTTP.PROXY.SERVER").or_else(|| text("HTTP.PROXY_SERVER")),
            user_agent,
        },
        deflate: !rc.value("HTTP.DEFLATE", url).is_some_and(is_off),
        netrc: text("HTTP.NETRC")
            .map(PathBuf::from)
            .or_else(|| home().map(|h| h.join(".netrc"))),
        cookiejar: text("HTTP.COOKIEJAR")
            .or_else(|| text("HTTP.COOKIEFILE"))
            .or_else(|| text("HTTP.COOKIE_JAR"))
            .or_else(|| text("HTTP.COOKIE_FILE"))
            .map(PathBuf::from),
    }
}

fn client(key: &ClientKey) -> Result<reqwest::blocking::Client, String> {
    static CLIENTS: OnceLock<Mutex<HashMap<ClientKey, reqwest::blocking::Client>>> =
        OnceLock::new();
    let clients = CLIENTS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(c) = clients.lock().ok().and_then(|m| m.get(key).cloned()) {
        return Ok(c);
    }
    let mut b = reqwest::blocking::Client::builder()
        // redirects are followed in `get`, which decides where credentials go
        .redirect(reqwest::redirect::Policy::none())
        .timeout(key.timeout.map(Duration::from_secs))
        .connect_timeout(Duration::from_secs(key.connect_timeout))
        .user_agent(key.user_agent.clone())
        .danger_accept_invalid_certs(!key.verify);
    if let Some(path) = &key.cainfo {
        let pem = std::fs::read(path)
            .map_err(|e| format!("cannot read HTTP.SSL.CAINFO file {path}: {e}"))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("HTTP.SSL.CAINFO file {path} holds no PEM certificates: {e}"))?;
        for c in certs {
            b = b.add_root_certificate(c);
        }
    }
    if let Some(p) = &key.proxy {
        let proxy = reqwest::Proxy::all(p.as_str())
            .map_err(|e| format!("HTTP.PROXY.SERVER {}: {e}", redact(p)))?;
        b = b.proxy(proxy);
    }
    let c = b
        .build()
        .map_err(|e| format!("cannot start an HTTP client: {}", chain(&e)))?;
    if let Ok(mut m) = clients.lock() {
        m.insert(key.clone(), c.clone());
    }
    Ok(c)
}

/// A URL and its answer.
type Answer = (String, Vec<u8>);

/// An answer fetched to decide what a URL is, kept for the one GET of it that follows.
fn kept() -> &'static Mutex<Option<Answer>> {
    static KEPT: OnceLock<Mutex<Option<Answer>>> = OnceLock::new();
    KEPT.get_or_init(|| Mutex::new(None))
}

/// Keep `body`, the answer of `url`, for the next [`get`] of `url`.
pub fn keep(url: String, body: Vec<u8>) {
    if let Ok(mut k) = kept().lock() {
        *k = Some((url, body));
    }
}

/// The process's cookies, and the cookie files already read into them.
struct Jar {
    cookies: CookieJar,
    loaded: Vec<PathBuf>,
}

fn jar() -> &'static Mutex<Jar> {
    static JAR: OnceLock<Mutex<Jar>> = OnceLock::new();
    JAR.get_or_init(|| {
        Mutex::new(Jar {
            cookies: CookieJar::default(),
            loaded: Vec::new(),
        })
    })
}

fn load_jar(path: &Path) {
    if let Ok(mut j) = jar().lock() {
        if !j.loaded.iter().any(|p| p == path) {
            if let Ok(text) = std::fs::read_to_string(path) {
                j.cookies.load_netscape(&text, cookies::now());
            }
            j.loaded.push(path.to_path_buf());
        }
    }
}

/// Write the jar to `path`, as curl does at cleanup; a file that cannot be written is skipped
/// (curl too only warns), the cookies stay in memory.
fn save_jar(path: &Path) {
    let text = match jar().lock() {
        Ok(j) => j.cookies.to_netscape(cookies::now()),
        Err(_) => return,
    };
    let _ = std::fs::write(path, text);
}

/// Credentials for one host.
enum Auth {
    Basic(String, String),
    Bearer(String),
}

impl Auth {
    fn header(&self) -> String {
        match self {
            Auth::Basic(u, p) => format!("Basic {}", base64(format!("{u}:{p}").as_bytes())),
            Auth::Bearer(t) => format!("Bearer {t}"),
        }
    }
}

fn same_authority(a: &Url, b: &Url) -> bool {
    a.host_str().map(str::to_ascii_lowercase) == b.host_str().map(str::to_ascii_lowercase)
        && a.port_or_known_default() == b.port_or_known_default()
}

/// The one GET and what it knows of its credentials.
struct Fetch<'a> {
    rc: &'a Rc,
    /// the URL asked, without its user and password
    orig: Url,
    /// user and password of the URL, percent-decoded
    url_creds: Option<(String, String)>,
    netrc: Option<Netrc>,
}

impl Fetch<'_> {
    /// The credentials to send to `hop`: the URL's (to its own host only), then the rc
    /// files' (a `[URL]` line for the hop's host, or a plain line for the URL's host), then a
    /// bearer token (ours), then the `.netrc` entry of the hop's host.
    fn auth(&self, hop: &Url) -> Option<Auth> {
        let home = same_authority(hop, &self.orig);
        if home {
            if let Some((u, p)) = &self.url_creds {
                return Some(Auth::Basic(u.clone(), p.clone()));
            }
        }
        let rc = |key: &str| {
            self.rc
                .lookup(key, hop)
                .filter(|f| f.prefixed || home)
                .map(|f| f.value.to_string())
        };
        let user = rc("HTTP.CREDENTIALS.USERNAME").or_else(|| rc("HTTP.CREDENTIALS.USER"));
        if let (Some(u), Some(p)) = (user, rc("HTTP.CREDENTIALS.PASSWORD")) {
            return Some(Auth::Basic(u, p));
        }
        if let Some(up) = rc("HTTP.CREDENTIALS.USERPASSWORD") {
            // ':' inside the user or password is written %3a (netCDF-C's docs/auth.md)
            let (u, p) = up.split_once(':').unwrap_or((&up, ""));
            return Some(Auth::Basic(pct_decode(u), pct_decode(p)));
        }
        if let Some(t) = rc("HTTP.BEARER_TOKEN").filter(|t| !t.trim().is_empty()) {
            return Some(Auth::Bearer(t.trim().to_string()));
        }
        if home {
            if let Some(t) = std::env::var(BEARER_ENV)
                .ok()
                .filter(|t| !t.trim().is_empty())
            {
                return Some(Auth::Bearer(t.trim().to_string()));
            }
        }
        let e = self.netrc.as_ref()?.lookup(hop.host_str()?)?;
        Some(Auth::Basic(e.login.clone(), e.password.clone()))
    }
}

/// One answer: status, headers, body as received.
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

/// GET `url`, the whole body (a kept answer of `url` is used once instead).
///
/// # Errors
/// No answer (the transport's message: refused, reset, timed out after N s), too many
/// redirects, a body that cannot be decoded, or a status of 400 or more (named, with the start
/// of the server's text and the cure).
pub fn get(url: &str) -> Result<Vec<u8>, DapError> {
    let shown = redact(url);
    let fail = |what: String| DapError::Http {
        url: shown.clone(),
        what,
    };
    if let Ok(mut k) = kept().lock() {
        if k.as_ref().is_some_and(|(u, _)| u == url) {
            if let Some((_, body)) = k.take() {
                return Ok(body);
            }
        }
    }
    let mut orig = Url::parse(url).map_err(|e| fail(format!("not a URL: {e}")))?;
    let url_creds = (!orig.username().is_empty()).then(|| {
        (
            pct_decode(orig.username()),
            pct_decode(orig.password().unwrap_or("")),
        )
    });
    // credentials travel in our Authorization header, never in a URL reqwest would use for
    // every host
    let _ = orig.set_username("");
    let _ = orig.set_password(None);
    let rc = Rc::load();
    let first = settings(&rc, &orig);
    let fetch = Fetch {
        rc: &rc,
        url_creds,
        netrc: first.netrc.as_deref().and_then(Netrc::load),
        orig: orig.clone(),
    };
    if let Some(p) = &first.cookiejar {
        load_jar(p);
    }
    let mut hop = orig;
    let mut redirects = 0;
    let reply = loop {
        let s = settings(&rc, &hop);
        let auth = fetch.auth(&hop);
        let reply = send(&s, &hop, auth.as_ref()).map_err(&fail)?;
        if let Ok(mut j) = jar().lock() {
            let now = cookies::now();
            for v in reply.headers.get_all(SET_COOKIE) {
                if let Ok(v) = v.to_str() {
                    j.cookies.store(&hop, v, now);
                }
            }
        }
        let location = reply
            .headers
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(str::to_string);
        match location {
            Some(loc) if reply.status.is_redirection() => {
                redirects += 1;
                let next = hop.join(&loc).map_err(|e| {
                    fail(format!(
                        "HTTP {} redirect to \"{}\", not a URL: {e}",
                        reply.status.as_u16(),
                        redact(&loc)
                    ))
                })?;
                if redirects > MAX_REDIRECTS {
                    if let Some(p) = &first.cookiejar {
                        save_jar(p);
                    }
                    return Err(fail(format!(
                        "more than {MAX_REDIRECTS} redirects (the last to {}): a login loop? \
                         Check the credentials for the login host in ~/.netrc (HTTP.NETRC in \
                         .ncrc); the server may need the cookies it sets kept (HTTP.COOKIEJAR)",
                        next.host_str().unwrap_or("?")
                    )));
                }
                hop = next;
            }
            _ => break reply,
        }
    };
    if let Some(p) = &first.cookiejar {
        save_jar(p);
    }
    let status = reply.status.as_u16();
    if status >= 300 {
        return Err(fail(status_message(
            &reply,
            &hop,
            fetch.auth(&hop).is_some(),
        )));
    }
    decode(&reply.headers, reply.body).map_err(fail)
}

/// Send one GET of `hop`, trying again after a transient failure (no connection, a reset, 502,
/// 503, 504, 429); the error is the text of a `DapError::Http`.
fn send(s: &Settings, hop: &Url, auth: Option<&Auth>) -> Result<Reply, String> {
    let host = hop.host_str().unwrap_or("?").to_string();
    let c = client(&s.client)?;
    let mut attempt = 1;
    loop {
        let mut rb = c.get(hop.clone());
        if s.deflate {
            rb = rb.header(ACCEPT_ENCODING, "gzip, deflate");
        }
        if let Some(a) = auth {
            rb = rb.header(AUTHORIZATION, a.header());
        }
        let cookie = jar()
            .lock()
            .ok()
            .and_then(|j| j.cookies.header(hop, cookies::now()));
        if let Some(ck) = cookie {
            rb = rb.header(COOKIE, ck);
        }
        let result = rb.send().and_then(|mut resp| {
            let status = resp.status();
            let headers = resp.headers().clone();
            // the body read once, into one buffer sized by Content-Length (bounded: a length
            // the server only claims must not reserve more than BODY_RESERVE_CAP)
            let reserve = resp
                .content_length()
                .map_or(0, |n| n.min(BODY_RESERVE_CAP) as usize);
            let mut body = Vec::with_capacity(reserve);
            resp.copy_to(&mut body)?;
            Ok(Reply {
                status,
                headers,
                body,
            })
        });
        nc_store::remote::record_request(result.as_ref().map_or(0, |r| r.body.len() as u64));
        let last = attempt >= TRIES;
        match result {
            Ok(r) => {
                let code = r.status.as_u16();
                if last || !matches!(code, 429 | 502 | 503 | 504) {
                    return Ok(r);
                }
                let wait = r
                    .headers
                    .get(RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| {
                        v.trim().parse::<u64>().ok().or_else(|| {
                            cookies::parse_http_date(v).map(|t| t.saturating_sub(cookies::now()))
                        })
                    })
                    .map(|secs| Duration::from_secs(secs.min(RETRY_AFTER_CAP)))
                    .unwrap_or_else(|| backoff(attempt));
                std::thread::sleep(wait);
            }
            Err(e) if e.is_timeout() => {
                return Err(if e.is_connect() {
                    format!(
                        "cannot connect to {host}: timed out after {} s (HTTP.CONNECTTIMEOUT in \
                         .ncrc sets the limit)",
                        s.client.connect_timeout
                    )
                } else {
                    format!(
                        "no answer from {host}: timed out after {} s ({TIMEOUT_ENV}, or \
                         HTTP.TIMEOUT in .ncrc, sets the limit)",
                        s.client.timeout.unwrap_or(0)
                    )
                });
            }
            Err(e) => {
                let transient = e.is_connect() || e.is_request() || e.is_body();
                if last || !transient {
                    let tries = if attempt > 1 {
                        format!(" ({attempt} tries)")
                    } else {
                        String::new()
                    };
                    return Err(if e.is_connect() {
                        format!("cannot connect to {host}{tries}: {}", chain(&e))
                    } else {
                        format!("request failed{tries}: {}", chain(&e))
                    });
                }
                std::thread::sleep(backoff(attempt));
            }
        }
        attempt += 1;
    }
}

/// The wait before try `attempt + 1`: 0.25 s, 0.5 s, 1 s.
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250 << (attempt - 1).min(4))
}

/// An error and its causes, without the URL (which may hold credentials).
fn chain(e: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut src: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let top = format!("{}", DisplayWithoutUrl(e));
    parts.push(top);
    while let Some(s) = src {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        src = s.source();
    }
    parts.join(": ")
}

/// reqwest's message for its kind of error, without the URL it appends.
struct DisplayWithoutUrl<'a>(&'a reqwest::Error);

impl std::fmt::Display for DisplayWithoutUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = self.0;
        let kind = if e.is_connect() {
            "connection failed"
        } else if e.is_body() || e.is_decode() {
            "reading the answer failed"
        } else if e.is_request() {
            "sending the request failed"
        } else if e.is_builder() {
            "bad request"
        } else {
            "HTTP failure"
        };
        f.write_str(kind)
    }
}

/// The message for a final status of 300 or more: the status, its meaning, the server's own
/// words when they are a short text, and the cure.
fn status_message(reply: &Reply, hop: &Url, sent_auth: bool) -> String {
    let status = reply.status.as_u16();
    let host = hop.host_str().unwrap_or("?");
    let text = String::from_utf8_lossy(&reply.body[..reply.body.len().min(200)]).into_owned();
    let text = if text.trim_start().starts_with('<') {
        String::new()
    } else {
        text.lines().next().unwrap_or("").trim().to_string()
    };
    let said = if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    };
    match status {
        401 if sent_auth => format!(
            "HTTP 401 (authorization required){said}: the credentials sent to {host} were \
             refused; check them in ~/.netrc (HTTP.NETRC in .ncrc), the rc files or the URL"
        ),
        401 => format!(
            "HTTP 401 (authorization required){said}: put credentials for {host} in ~/.netrc \
             (HTTP.NETRC in .ncrc) or in the URL (http://user:password@host/...)"
        ),
        403 => format!(
            "HTTP 403 (access denied){said}: {host} refused this account or this dataset \
             (for NASA Earthdata, approve the data's application in your profile)"
        ),
        404 => format!("HTTP 404 (no such response at the server){said}"),
        300..=399 => format!("HTTP {status} (a redirect without a Location){said}"),
        s if s >= 500 => format!("HTTP {status} (server failure){said}"),
        _ => format!("HTTP {status} (request refused){said}"),
    }
}

/// The body, decoded from the `Content-Encoding` the server used.
fn decode(headers: &HeaderMap, body: Vec<u8>) -> Result<Vec<u8>, String> {
    let enc = headers
        .get(CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let mut out = Vec::new();
    match enc.as_str() {
        "" | "identity" => return Ok(body),
        "gzip" | "x-gzip" => {
            flate2::read::MultiGzDecoder::new(body.as_slice())
                .read_to_end(&mut out)
                .map_err(|e| format!("the gzip-encoded answer does not decode: {e}"))?;
        }
        "deflate" => {
            // "deflate" is zlib-wrapped by the standard, raw deflate by some servers
            if flate2::read::ZlibDecoder::new(body.as_slice())
                .read_to_end(&mut out)
                .is_err()
            {
                out.clear();
                flate2::read::DeflateDecoder::new(body.as_slice())
                    .read_to_end(&mut out)
                    .map_err(|e| format!("the deflate-encoded answer does not decode: {e}"))?;
            }
        }
        other => {
            return Err(format!(
                "the answer is encoded as \"{other}\", which nc-dap cannot decode \
                 (HTTP.DEFLATE=0 in .ncrc asks for no encoding)"
            ))
        }
    };
    Ok(out)
}

/// `url` with its password replaced by `***`, for messages.
fn redact(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// `%XX` escapes decoded (invalid UTF-8 replaced).
fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|&c| hex(c)),
            b.get(i + 2).and_then(|&c| hex(c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Standard base64 with padding (RFC 4648), for the Basic scheme.
fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for ch in data.chunks(3) {
        let n = (u32::from(ch[0]) << 16)
            | (u32::from(*ch.get(1).unwrap_or(&0)) << 8)
            | u32::from(*ch.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= ch.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_percent() {
        assert_eq!(
            base64(b"Aladdin:open sesame"),
            "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert_eq!(pct_decode("p%40ss%3aw%zz"), "p@ss:w%zz");
        assert_eq!(
            redact("http://u:secret@h.org/x"),
            "http://u:***@h.org/x".to_string()
        );
    }

    #[test]
    fn rc_settings() {
        let rc = Rc::parse(
            "HTTP.TIMEOUT=7\nHTTP.SSL.VERIFYPEER=0\n[h.org]HTTP.DEFLATE=0\n\
             [h.org]HTTP.COOKIEJAR=/tmp/j\nHTTP.NETRC=/n\nHTTP.PROXY_SERVER=http://p:3128\n",
        );
        let u = Url::parse("http://h.org/x").unwrap();
        let s = settings(&rc, &u);
        if std::env::var_os(TIMEOUT_ENV).is_none() {
            assert_eq!(s.client.timeout, Some(7));
            assert_eq!(s.client.connect_timeout, 7);
        }
        assert!(!s.client.verify);
        assert!(!s.deflate);
        assert_eq!(s.cookiejar, Some(PathBuf::from("/tmp/j")));
        assert_eq!(s.netrc, Some(PathBuf::from("/n")));
        assert_eq!(s.client.proxy.as_deref(), Some("http://p:3128"));
        let s = settings(&rc, &Url::parse("http://other.org/x").unwrap());
        assert!(s.deflate);
        assert_eq!(s.cookiejar, None);
    }

    #[test]
    fn credentials_go_to_their_own_host() {
        let rc = Rc::parse(
            "HTTP.CREDENTIALS.USERPASSWORD=rcuser:p%3aw\n\
             [login.org]HTTP.CREDENTIALS.USERNAME=lu\n[login.org]HTTP.CREDENTIALS.PASSWORD=lp\n",
        );
        let f = Fetch {
            rc: &rc,
            orig: Url::parse("http://data.org/x").unwrap(),
            url_creds: None,
            netrc: Some(Netrc::parse("machine third.org login n password q")),
        };
        let basic = |u: &str| match f.auth(&Url::parse(u).unwrap()) {
            Some(Auth::Basic(u, p)) => Some(format!("{u}/{p}")),
            _ => None,
        };
        assert_eq!(basic("http://data.org/y").as_deref(), Some("rcuser/p:w"));
        assert_eq!(basic("https://login.org/a").as_deref(), Some("lu/lp"));
        assert_eq!(basic("https://third.org/a").as_deref(), Some("n/q"));
        // the plain rc line is for the URL's host only
        assert_eq!(basic("https://fourth.org/a"), None);
        // another port is another place
        assert_eq!(basic("http://data.org:8080/y"), None);
    }
}
