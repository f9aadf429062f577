//! One blocking GET with a timeout (reqwest over rustls, the client object_store already
//! builds), reporting statuses as netCDF-C's `dap_fetch` maps them.

use std::sync::OnceLock;
use std::time::Duration;

use crate::DapError;

/// Environment variable: seconds a DAP request may take (default 120).
pub const TIMEOUT_ENV: &str = "NC_DAP_TIMEOUT";

fn client() -> Result<&'static reqwest::blocking::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::blocking::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let secs = std::env::var(TIMEOUT_ENV)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(120);
            reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(secs))
                .connect_timeout(Duration::from_secs(30))
                .user_agent(concat!("ncdump-rs/", env!("CARGO_PKG_VERSION"), " (OPeNDAP)"))
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// GET `url`, the whole body.
///
/// # Errors
/// No answer (the transport's message), or a status of 400 or more (named, with the start of
/// the server's text).
pub fn get(url: &str) -> Result<Vec<u8>, DapError> {
    let fail = |what: String| DapError::Http {
        url: url.to_string(),
        what,
    };
    let c = client().map_err(|e| fail(format!("cannot start an HTTP client: {e}")))?;
    let resp = c
        .get(url)
        .send()
        .map_err(|e| fail(format!("request failed: {e}")))?;
    let status = resp.status();
    let body = resp
        .bytes()
        .map_err(|e| fail(format!("reading the answer failed: {e}")))?;
    if status.as_u16() >= 400 {
        let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
        let meaning = match status.as_u16() {
            401 => "authorization required",
            403 => "access denied",
            404 => "no such response at the server",
            s if s >= 500 => "server failure",
            _ => "request refused",
        };
        return Err(fail(format!(
            "HTTP {} ({meaning}){}",
            status.as_u16(),
            if text.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", text.trim())
            }
        )));
    }
    Ok(body.to_vec())
}
