//! Building an object_store client for a [`RemoteUrl`], with credentials, region and endpoint
//! from the cloud's standard environment and files, our retry and timeout settings, and the
//! mapping of its errors to one-line causes and cures that never hold a secret.

use std::sync::Arc;
use std::time::Duration;

use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};

use super::creds::{aws_profile, redact};
use super::url::{Cloud, RemoteUrl};
use crate::error::StoreError;

/// Environment variable: how many times a failed request is retried (default 10).
pub const RETRIES_ENV: &str = "NC_STORE_RETRIES";
/// Environment variable: seconds after the first try of a request when retrying stops
/// (default 120).
pub const RETRY_TIMEOUT_ENV: &str = "NC_STORE_RETRY_TIMEOUT";
/// Environment variable: seconds one request may take (default 60).
pub const TIMEOUT_ENV: &str = "NC_STORE_TIMEOUT";

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(10),
            base: 2.0,
        },
        max_retries: env_u64(RETRIES_ENV).map_or(10, |n| n.min(100) as usize),
        retry_timeout: Duration::from_secs(env_u64(RETRY_TIMEOUT_ENV).unwrap_or(120)),
    }
}

fn client(allow_http: bool) -> ClientOptions {
    ClientOptions::new()
        .with_timeout(Duration::from_secs(
            env_u64(TIMEOUT_ENV).unwrap_or(60).max(1),
        ))
        .with_connect_timeout(Duration::from_secs(10))
        .with_allow_http(allow_http)
}

fn config_error(u: &RemoteUrl, e: object_store::Error) -> StoreError {
    StoreError::BadLocation {
        location: u.display.clone(),
        reason: redact(&e.to_string()),
    }
}

/// A client for the bucket (or web server) of `u`.
///
/// # Errors
/// [`StoreError::BadLocation`] when the settings are incomplete or contradictory (no
/// credentials where they are needed, an unknown region form).
pub(crate) fn connect(u: &RemoteUrl) -> Result<Arc<dyn ObjectStore>, StoreError> {
    // the last steps of every cloud's builder (they share no trait): anonymous access,
    // retries, the HTTP client
    macro_rules! finish {
        ($builder:expr, $allow_http:expr) => {{
            let mut b = $builder;
            if u.anonymous {
                b = b.with_skip_signature(true);
            }
            let s = b
                .with_retry(retry())
                .with_client_options(client($allow_http))
                .build()
                .map_err(|e| config_error(u, e))?;
            Ok(Arc::new(s))
        }};
    }
    match u.cloud {
        Cloud::S3 => {
            use object_store::aws::AmazonS3Builder;
            let mut b = AmazonS3Builder::from_env().with_bucket_name(&u.bucket);
            let profile = aws_profile();
            if env("AWS_ACCESS_KEY_ID").is_none() {
                if let (Some(k), Some(s)) = (&profile.key_id, &profile.secret) {
                    b = b.with_access_key_id(k).with_secret_access_key(s);
                    if let Some(t) = &profile.token {
                        b = b.with_token(t);
                    }
                } else if !u.anonymous
                    && env("AWS_WEB_IDENTITY_TOKEN_FILE").is_none()
                    && env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_none()
                    && env("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_none()
                    && env("AWS_EC2_METADATA_DISABLED")
                        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
                {
                    return Err(StoreError::BadLocation {
                        location: u.display.clone(),
                        reason: "no AWS credentials: set AWS_ACCESS_KEY_ID and \
                                 AWS_SECRET_ACCESS_KEY, or AWS_PROFILE naming a profile of \
                                 ~/.aws/credentials; for a public bucket add `anon` to #mode= \
                                 (or set AWS_SKIP_SIGNATURE=true)"
                            .into(),
                    });
                }
            }
            let region = u
                .region
                .clone()
                .or_else(|| env("AWS_REGION"))
                .or_else(|| env("AWS_DEFAULT_REGION"))
                .or(profile.region);
            if let Some(r) = region {
                b = b.with_region(r);
            }
            let endpoint = u
                .endpoint
                .clone()
                .or_else(|| env("AWS_ENDPOINT_URL_S3"))
                .or_else(|| env("AWS_ENDPOINT_URL"))
                .or_else(|| env("AWS_ENDPOINT"))
                .or(profile.endpoint);
            let mut allow_http = false;
            if let Some(ep) = endpoint {
                allow_http = ep.to_ascii_lowercase().starts_with("http://");
                b = b.with_endpoint(ep).with_virtual_hosted_style_request(false);
            }
            finish!(b, allow_http)
        }
        Cloud::Gcs => {
            use object_store::gcp::GoogleCloudStorageBuilder;
            finish!(
                GoogleCloudStorageBuilder::from_env().with_bucket_name(&u.bucket),
                false
            )
        }
        Cloud::Azure => {
            use object_store::azure::MicrosoftAzureBuilder;
            let mut b = MicrosoftAzureBuilder::from_env().with_container_name(&u.bucket);
            if let Some(a) = &u.account {
                b = b.with_account(a);
            }
            finish!(b, false)
        }
        Cloud::Http => {
            use object_store::http::HttpBuilder;
            let ep = u.endpoint.clone().unwrap_or_default();
            let s = HttpBuilder::new()
                .with_url(ep.clone())
                .with_retry(retry())
                .with_client_options(client(ep.starts_with("http://")))
                .build()
                .map_err(|e| config_error(u, e))?;
            Ok(Arc::new(s))
        }
    }
}

/// The object path of `key` below the location's key.
pub(crate) fn object_path(u: &RemoteUrl, key: &str) -> object_store::path::Path {
    let full = match (u.key.is_empty(), key.is_empty()) {
        (true, _) => key.to_string(),
        (false, true) => u.key.clone(),
        (false, false) => format!("{}/{key}", u.key),
    };
    object_store::path::Path::from(full)
}

/// What went wrong with a request, as one line with a cure; never a secret.
pub(crate) fn remote_error(u: &RemoteUrl, key: &str, e: &object_store::Error) -> StoreError {
    let text = redact(&e.to_string());
    let has = |code: &str| text.contains(code);
    // a missing bucket is about the location, not the key below it
    let url = if has("NoSuchBucket") {
        u.display.clone()
    } else {
        u.display_key(key)
    };
    let (cause, cure): (String, Option<&str>) = if has("NoSuchBucket") {
        (
            format!("bucket \"{}\" does not exist", u.bucket),
            Some("check the bucket name, the endpoint (AWS_ENDPOINT_URL) and the region (AWS_REGION)"),
        )
    } else if has("InvalidAccessKeyId") {
        (
            "the server does not know this access key id (InvalidAccessKeyId)".into(),
            Some("check AWS_ACCESS_KEY_ID or the AWS_PROFILE in use"),
        )
    } else if has("SignatureDoesNotMatch") {
        (
            "the secret key does not match the access key id (SignatureDoesNotMatch)".into(),
            Some("check AWS_SECRET_ACCESS_KEY or the AWS_PROFILE in use"),
        )
    } else if has("ExpiredToken") || has("TokenRefreshRequired") {
        (
            "the session token has expired (ExpiredToken)".into(),
            Some("renew the credentials (AWS_SESSION_TOKEN)"),
        )
    } else if has("AccessDenied") || matches!(e, object_store::Error::PermissionDenied { .. }) {
        (
            "access denied (AccessDenied)".into(),
            Some("use credentials allowed to read (or write) this object; for a public bucket add `anon` to #mode="),
        )
    } else if matches!(e, object_store::Error::Unauthenticated { .. }) {
        (
            "the server refused the credentials".into(),
            Some("check the credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*)"),
        )
    } else if matches!(e, object_store::Error::NotFound { .. }) {
        (
            "no such object".into(),
            Some("check the key (the path after the bucket)"),
        )
    } else if has("error sending request") || has("Connection refused") || has("connect") {
        (
            format!("cannot reach the server: {}", short(&text)),
            Some("check the endpoint (AWS_ENDPOINT_URL) and the network"),
        )
    } else {
        (short(&text), None)
    };
    StoreError::Remote {
        url,
        cause,
        cure: cure.map(str::to_string),
    }
}

/// At most 300 characters of a message, cut at a character boundary.
fn short(t: &str) -> String {
    match t.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &t[..i]),
        None => t.to_string(),
    }
}

/// True when `e` says there is no object (and the bucket exists).
pub(crate) fn is_not_found(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::NotFound { .. }) && !e.to_string().contains("NoSuchBucket")
}
