//! Credentials and settings from each cloud's standard files (the environment is read by
//! object_store's builders): the AWS shared `credentials` and `config` files for `AWS_PROFILE`,
//! and the list of secret values that must never appear in a message.

use std::collections::HashMap;
use std::path::PathBuf;

/// What an AWS profile of the shared files holds.
#[derive(Debug, Default, Clone)]
pub(crate) struct AwsProfile {
    pub key_id: Option<String>,
    pub secret: Option<String>,
    pub token: Option<String>,
    pub region: Option<String>,
    pub endpoint: Option<String>,
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The `key = value` lines of section `[name]` of an INI text (the shared files' format).
fn section(text: &str, name: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(h) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = h.trim() == name;
            continue;
        }
        if inside {
            if let Some((k, v)) = line.split_once('=') {
                out.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
    }
    out
}

/// The profile `AWS_PROFILE` (or `default`) of `~/.aws/credentials` and `~/.aws/config`
/// (or the files `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE` name).
pub(crate) fn aws_profile() -> AwsProfile {
    let profile = env("AWS_PROFILE")
        .or_else(|| env("AWS_DEFAULT_PROFILE"))
        .unwrap_or_else(|| "default".to_string());
    let read = |var: &str, file: &str| {
        env(var)
            .map(PathBuf::from)
            .or_else(|| home().map(|h| h.join(".aws").join(file)))
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
    };
    let creds = section(
        &read("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
        &profile,
    );
    let config_text = read("AWS_CONFIG_FILE", "config");
    let config = if profile == "default" {
        section(&config_text, "default")
    } else {
        section(&config_text, &format!("profile {profile}"))
    };
    let get = |k: &str| creds.get(k).or_else(|| config.get(k)).cloned();
    AwsProfile {
        key_id: get("aws_access_key_id"),
        secret: get("aws_secret_access_key"),
        token: get("aws_session_token"),
        region: config.get("region").cloned(),
        endpoint: config.get("endpoint_url").cloned(),
    }
}

/// Environment variables whose values are secrets.
const SECRET_VARS: [&str; 10] = [
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_ACCESS_KEY",
    "AZURE_STORAGE_SAS_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "AZURE_STORAGE_TOKEN",
];

/// Every secret value this process may send (from the environment and the AWS profile).
pub(crate) fn secrets() -> Vec<String> {
    let p = aws_profile();
    SECRET_VARS
        .iter()
        .filter_map(|v| env(v))
        .chain(p.secret)
        .chain(p.token)
        .filter(|s| s.len() >= 4)
        .collect()
}

/// `text` with every secret value replaced by `***`, URL queries (which may carry signatures
/// or SAS tokens) and user information cut, on one line.
pub fn redact(text: &str) -> String {
    let mut t = text.replace(['\n', '\r'], " ");
    for s in secrets() {
        t = t.replace(&s, "***");
    }
    // cut `?query` of URLs up to the next blank
    let mut out = String::with_capacity(t.len());
    let mut rest = t.as_str();
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail.find(char::is_whitespace).unwrap_or(tail.len());
        let url = &tail[..end];
        let url = url.split_once('?').map_or(url, |(u, _)| u);
        // user:password@host
        let url = match (url.find('@'), url.find('/')) {
            (Some(at), slash) if slash.is_none_or(|s| at < s) => &url[at + 1..],
            _ => url,
        };
        out.push_str(url);
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_of_shared_files() {
        let text = "[default]\naws_access_key_id = A\n# c\n[other]\naws_access_key_id=B\nregion = eu-west-3\n";
        assert_eq!(
            section(text, "default").get("aws_access_key_id").unwrap(),
            "A"
        );
        assert_eq!(section(text, "other").get("region").unwrap(), "eu-west-3");
        assert!(section(text, "none").is_empty());
    }

    #[test]
    fn redaction_cuts_queries_and_user_info() {
        let t = redact("GET https://u:pw@h.example/k?X-Amz-Signature=abc failed\nsecond line");
        assert_eq!(t, "GET https://h.example/k failed second line");
    }
}
