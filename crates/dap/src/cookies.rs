//! A small cookie jar: `Set-Cookie` answers kept (RFC 6265's domain and path rules, `Expires`
//! and `Max-Age`, `Secure`), sent back as `Cookie`, and loaded from and saved to a file in
//! the Netscape format curl's `CURLOPT_COOKIEJAR` writes (tab-separated: domain,
//! include-subdomains, path, secure, expiry in Unix seconds with 0 for a session cookie,
//! name, value; `#HttpOnly_` before the domain of an HttpOnly cookie).

use reqwest::Url;

/// One cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cookie {
    /// the host or domain, lower case, without a leading dot
    pub domain: String,
    /// true: sent to `domain` only; false: to its subdomains too
    pub host_only: bool,
    /// the path prefix it is sent for
    pub path: String,
    /// sent over https only
    pub secure: bool,
    /// HttpOnly (kept for the file)
    pub http_only: bool,
    /// Unix seconds after which it is gone; 0 for a session cookie
    pub expires: u64,
    /// the name
    pub name: String,
    /// the value
    pub value: String,
}

/// The cookies kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CookieJar {
    cookies: Vec<Cookie>,
}

/// Seconds since the Unix epoch now.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn domain_matches(host: &str, domain: &str) -> bool {
    host == domain
        || host
            .strip_suffix(domain)
            .is_some_and(|r| r.ends_with('.') && host.parse::<std::net::IpAddr>().is_err())
}

fn path_matches(req: &str, path: &str) -> bool {
    req == path
        || req
            .strip_prefix(path)
            .is_some_and(|r| path.ends_with('/') || r.starts_with('/'))
}

impl CookieJar {
    fn put(&mut self, c: Cookie, now: u64) {
        self.cookies
            .retain(|o| !(o.domain == c.domain && o.path == c.path && o.name == c.name));
        if c.expires == 0 || c.expires > now {
            self.cookies.push(c);
        }
    }

    /// Keep the cookie of a `Set-Cookie` header `value` that `url` answered; one for another
    /// domain than `url`'s is refused.
    pub fn store(&mut self, url: &Url, value: &str, now: u64) {
        let Some(host) = url.host_str().map(str::to_ascii_lowercase) else {
            return;
        };
        let mut parts = value.split(';');
        let Some((name, val)) = parts.next().and_then(|nv| nv.split_once('=')) else {
            return;
        };
        let name = name.trim();
        if name.is_empty() {
            return;
        }
        let mut c = Cookie {
            domain: host.clone(),
            host_only: true,
            path: String::new(),
            secure: false,
            http_only: false,
            expires: 0,
            name: name.to_string(),
            value: val.trim().trim_matches('"').to_string(),
        };
        let mut max_age = None;
        for attr in parts {
            let (k, v) = attr.split_once('=').unwrap_or((attr, ""));
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            match k.as_str() {
                "domain" if !v.is_empty() => {
                    let d = v.trim_start_matches('.').to_ascii_lowercase();
                    if !domain_matches(&host, &d) {
                        return;
                    }
                    c.domain = d;
                    c.host_only = false;
                }
                "path" if v.starts_with('/') => c.path = v.to_string(),
                "secure" => c.secure = true,
                "httponly" => c.http_only = true,
                "max-age" => max_age = v.parse::<i64>().ok(),
                "expires" => {
                    if let Some(t) = parse_http_date(v) {
                        c.expires = t.max(1);
                    }
                }
                _ => {}
            }
        }
        if let Some(m) = max_age {
            // Max-Age wins over Expires; 0 or less removes the cookie
            c.expires = if m <= 0 {
                1
            } else {
                now.saturating_add(m as u64)
            };
        }
        if c.path.is_empty() {
            // the default path: the request's directory
            let p = url.path();
            c.path = match p.rfind('/') {
                Some(0) | None => "/".to_string(),
                Some(i) => p[..i].to_string(),
            };
        }
        self.put(c, now);
    }

    /// The `Cookie` header value for a request of `url`, if any cookie applies.
    pub fn header(&self, url: &Url, now: u64) -> Option<String> {
        let host = url.host_str()?.to_ascii_lowercase();
        let https = url.scheme() == "https";
        let v: Vec<String> = self
            .cookies
            .iter()
            .filter(|c| {
                (if c.host_only {
                    host == c.domain
                } else {
                    domain_matches(&host, &c.domain)
                }) && path_matches(url.path(), &c.path)
                    && (https || !c.secure)
                    && (c.expires == 0 || c.expires > now)
            })
            .map(|c| format!("{}={}", c.name, c.value))
            .collect();
        (!v.is_empty()).then(|| v.join("; "))
    }

    /// Add the cookies of a Netscape cookie file's text (expired ones are dropped).
    pub fn load_netscape(&mut self, text: &str, now: u64) {
        for line in text.lines() {
            let (line, http_only) = match line.strip_prefix("#HttpOnly_") {
                Some(l) => (l, true),
                None => (line, false),
            };
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 7 {
                continue;
            }
            let Ok(expires) = f[4].trim().parse::<u64>() else {
                continue;
            };
            self.put(
                Cookie {
                    domain: f[0].trim_start_matches('.').to_ascii_lowercase(),
                    host_only: !f[1].eq_ignore_ascii_case("TRUE"),
                    path: f[2].to_string(),
                    secure: f[3].eq_ignore_ascii_case("TRUE"),
                    http_only,
                    expires,
                    name: f[5].to_string(),
                    value: f[6..].join("\t"),
                },
                now,
            );
        }
    }

    /// The jar as a Netscape cookie file (expired cookies left out).
    pub fn to_netscape(&self, now: u64) -> String {
        let mut s = String::from(
            "# Netscape HTTP Cookie File\n# This file was generated by ncdump-rs (nc-dap); edit at your own risk.\n\n",
        );
        for c in self
            .cookies
            .iter()
            .filter(|c| c.expires == 0 || c.expires > now)
        {
            let tf = |b: bool| if b { "TRUE" } else { "FALSE" };
            s.push_str(&format!(
                "{}{}{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                if c.http_only { "#HttpOnly_" } else { "" },
                if c.host_only { "" } else { "." },
                c.domain,
                tf(!c.host_only),
                c.path,
                tf(c.secure),
                c.expires,
                c.name,
                c.value
            ));
        }
        s
    }
}

/// Unix seconds of an HTTP date: `Sun, 06 Nov 1994 08:49:37 GMT`, also with `-` between the
/// day, month and year (`06-Nov-1994`, two-digit years as 19xx/20xx).
pub fn parse_http_date(s: &str) -> Option<u64> {
    let s = s.split_once(',').map_or(s, |(_, r)| r).replace('-', " ");
    let mut it = s.split_whitespace();
    let day: u64 = it.next()?.parse().ok()?;
    let mon = it.next()?.to_ascii_lowercase();
    let month = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    .iter()
    .position(|m| mon.starts_with(m))? as i64
        + 1;
    let mut year: i64 = it.next()?.parse().ok()?;
    if year < 70 {
        year += 2000;
    } else if year < 100 {
        year += 1900;
    }
    let mut hms = it.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    // days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's civil algorithm)
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days)
        .ok()
        .map(|d| d * 86_400 + h * 3600 + m * 60 + sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn dates() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Thu, 01-Jan-1970 00:00:10 GMT"), Some(10));
        assert_eq!(
            parse_http_date("Wed, 29 Feb 2040 00:00:00 GMT"),
            Some(2_214_086_400)
        );
        assert_eq!(parse_http_date("garbage"), None);
    }

    #[test]
    fn store_send_and_file_round_trip() {
        let now = 1_000_000;
        let mut j = CookieJar::default();
        let u = url("http://data.example.org/opendap/x.nc.dds");
        j.store(&u, "sid=abc; Path=/; HttpOnly", now);
        j.store(&u, "wide=1; Domain=.example.org; Max-Age=100; Path=/", now);
        j.store(&u, "sec=2; Secure; Path=/opendap", now);
        j.store(&u, "evil=1; Domain=other.org", now);
        j.store(&u, "gone=1; Expires=Thu, 01 Jan 1970 00:00:10 GMT", now);
        assert_eq!(j.cookies.len(), 3);
        assert_eq!(j.header(&u, now).as_deref(), Some("sid=abc; wide=1"));
        assert_eq!(
            j.header(&url("https://data.example.org/opendap/y"), now)
                .as_deref(),
            Some("sid=abc; wide=1; sec=2")
        );
        assert_eq!(
            j.header(&url("http://urs.example.org/"), now).as_deref(),
            Some("wide=1")
        );
        assert_eq!(j.header(&url("http://urs.example.org/"), now + 200), None);
        // a later Set-Cookie of the same name replaces the first; Max-Age=0 removes
        j.store(&u, "sid=def; Path=/; HttpOnly", now);
        j.store(&u, "wide=1; Domain=example.org; Max-Age=0; Path=/", now);
        assert_eq!(j.header(&u, now).as_deref(), Some("sid=def"));

        let text = j.to_netscape(now);
        assert!(text.starts_with("# Netscape HTTP Cookie File\n"));
        assert!(text.contains("#HttpOnly_data.example.org\tFALSE\t/\tFALSE\t0\tsid\tdef\n"));
        assert!(text.contains("data.example.org\tFALSE\t/opendap\tTRUE\t0\tsec\t2\n"));
        let mut back = CookieJar::default();
        back.load_netscape(&text, now);
        assert_eq!(back, j);
    }
}
