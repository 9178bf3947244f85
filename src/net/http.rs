//! The one HTTP client of the process (ureq, blocking, streaming reads) and how its failures
//! become one-line provider errors.
//!
//! Statuses are checked here, not by ureq, so a provider's error body (which holds its own
//! explanation) is read, capped, and quoted. Timeouts are per phase: connect, response headers,
//! a per-read stall detector, and a total budget per call; each has an environment override.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};
use ureq::Timeout;

use crate::error::Failure;
use crate::net::sse::SseError;
use crate::text::summarize;

/// Error bodies are read up to this size.
const ERROR_BODY_CAP: u64 = 64 * 1024;
/// A server's `retry-after` is honoured up to this long.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Why one provider call failed (the transport, the status, or what the stream said), and
/// whether trying it again may help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub message: String,
    pub retry: Retry,
    /// Whether the same command may succeed if run again: network failures, 429 and
    /// 5xx, timeouts. Not for authentication, refusals, or a malformed request.
    pub recoverable: bool,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CallError {}

impl CallError {
    /// A failure that running again will not cure.
    pub fn fatal(message: impl Into<String>) -> CallError {
        CallError { message: message.into(), retry: Retry::No, recoverable: false }
    }

    /// A transient failure: retried with backoff while nothing of the call was written.
    pub fn transient(message: impl Into<String>, hint: Option<Duration>) -> CallError {
        CallError { message: message.into(), retry: Retry::After(hint), recoverable: true }
    }

    /// A timeout or an unreachable host: not retried now, but a later run may succeed.
    pub fn unavailable(message: impl Into<String>) -> CallError {
        CallError { message: message.into(), retry: Retry::No, recoverable: true }
    }
}

impl From<CallError> for Failure {
    fn from(err: CallError) -> Failure {
        if err.recoverable {
            Failure::Unavailable(err.message)
        } else {
            Failure::Provider(err.message)
        }
    }
}

/// The message inside a JSON error object: `error.message`, `message`, `error` as text, ...
pub(crate) fn error_message(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    let value = match value {
        Value::Array(items) => items.first()?,
        other => other,
    };
    let error = value.get("error");
    let text = error
        .and_then(|e| e.get("message"))
        .or_else(|| value.get("message"))
        .or_else(|| error.filter(|e| e.is_string()))
        .or_else(|| value.get("detail"))
        .and_then(Value::as_str)?;
    let mut text = text.trim().to_string();
    // OpenRouter puts the upstream provider's own words in metadata.raw.
    if let Some(raw) = error.and_then(|e| e.pointer("/metadata/raw")).and_then(Value::as_str) {
        text = format!("{text} ({})", raw.trim());
    }
    (!text.is_empty()).then_some(text)
}

/// Whether and when a failed call may be tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    No,
    /// Retry, after the server's hint if it gave one, else after the usual backoff.
    After(Option<Duration>),
}

/// Network limits, from the environment (documented in the README).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetSettings {
    pub connect: Duration,
    pub headers: Duration,
    pub idle: Duration,
    pub total: Duration,
    pub max_retries: u32,
    /// The proxies of the environment (which one a URL takes: `url::Proxies::for_url`).
    pub proxies: crate::net::url::Proxies,
}

impl Default for NetSettings {
    fn default() -> NetSettings {
        NetSettings {
            connect: Duration::from_secs(30),
            headers: Duration::from_secs(300),
            idle: Duration::from_secs(300),
            total: Duration::from_secs(3600),
            max_retries: 2,
            proxies: crate::net::url::Proxies::default(),
        }
    }
}

/// Root certificates trusted besides the bundled (Mozilla) ones: `SSL_CERT_FILE` and
/// `SSL_CERT_DIR`, for a TLS-inspecting proxy or a private CA. Only the paths are checked at
/// setup; the certificates are read the first time a server's certificate needs them, so a
/// run that never meets one pays nothing for a system bundle in `SSL_CERT_FILE`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraRoots {
    pub file: Option<PathBuf>,
    pub dir: Option<PathBuf>,
}

/// A certificate file is read up to this size (a system bundle is about 200 KiB).
const MAX_CERT_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// At most this many files of `SSL_CERT_DIR` are read.
const MAX_CERT_DIR_FILES: usize = 10_000;

/// Why one request ([`Http::exchange`]) got no response, by kind; the message names the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// It did not answer within the request's time.
    Timeout(String),
    /// The host is not found, or refuses connections.
    Unreachable(String),
    /// Its certificate is not trusted.
    Certificate(String),
    /// The connection broke, or the request failed otherwise.
    Failed(String),
}

crate::error::message_error!(RequestError: Timeout, Unreachable, Certificate, Failed);

/// Why the certificates `SSL_CERT_FILE` or `SSL_CERT_DIR` name cannot be used: the variable,
/// its path, and what reading it said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertError {
    pub variable: &'static str,
    pub path: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for CertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.variable, self.path.display(), self.reason)
    }
}

impl std::error::Error for CertError {}

impl ExtraRoots {
    /// The roots named by the environment; a path that does not exist is an error now.
    pub fn at(file: Option<&Path>, dir: Option<&Path>) -> Result<ExtraRoots, CertError> {
        for (variable, path) in [("SSL_CERT_FILE", file), ("SSL_CERT_DIR", dir)] {
            if let Some(path) = path {
                std::fs::metadata(path).map_err(|e| CertError {
                    variable,
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                })?;
            }
        }
        Ok(ExtraRoots { file: file.map(Path::to_path_buf), dir: dir.map(Path::to_path_buf) })
    }

    pub fn is_empty(&self) -> bool {
        self.file.is_none() && self.dir.is_none()
    }

    /// `SSL_CERT_FILE` (which must hold a certificate) and every PEM file of `SSL_CERT_DIR`
    /// (files without one, such as a CRL, are skipped).
    fn load(&self) -> Result<Vec<Certificate<'static>>, CertError> {
        let mut certs = Vec::new();
        if let Some(file) = &self.file {
            let found = read_pem_certs("SSL_CERT_FILE", file)?;
            if found.is_empty() {
                return Err(CertError {
                    variable: "SSL_CERT_FILE",
                    path: file.clone(),
                    reason: "no PEM certificate in it".to_string(),
                });
            }
            certs.extend(found);
        }
        if let Some(dir) = &self.dir {
            let entries = std::fs::read_dir(dir).map_err(|e| CertError {
                variable: "SSL_CERT_DIR",
                path: dir.clone(),
                reason: e.to_string(),
            })?;
            let mut paths: Vec<PathBuf> =
                entries.filter_map(Result::ok).map(|e| e.path()).take(MAX_CERT_DIR_FILES).collect();
            paths.sort();
            for path in paths {
                // Hashed links (c_rehash) point at files read anyway; unreadable files are
                // skipped.
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                    certs.extend(read_pem_certs("SSL_CERT_DIR", &path).unwrap_or_default());
                }
            }
        }
        Ok(certs)
    }

    fn describe(&self) -> String {
        let named: Vec<String> = [("SSL_CERT_FILE", &self.file), ("SSL_CERT_DIR", &self.dir)]
            .iter()
            .filter_map(|(var, path)| path.as_ref().map(|p| format!("{var} ({})", p.display())))
            .collect();
        named.join(" and ")
    }
}

/// The certificates of a PEM file (a regular file, at most 16 MiB).
fn read_pem_certs(
    variable: &'static str,
    path: &Path,
) -> Result<Vec<Certificate<'static>>, CertError> {
    let cert_error = |reason: String| CertError { variable, path: path.to_path_buf(), reason };
    let file =
        crate::sys::dirfd::open_path_nonblocking(path).map_err(|e| cert_error(e.to_string()))?;
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(cert_error("it is not a regular file".to_string())),
        Err(err) => return Err(cert_error(err.to_string())),
    }
    let mut bytes = Vec::new();
    file.take(MAX_CERT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cert_error(e.to_string()))?;
    if bytes.len() as u64 > MAX_CERT_FILE_BYTES {
        return Err(cert_error("it is larger than 16 MiB".to_string()));
    }
    Ok(ureq::tls::parse_pem(&bytes)
        .filter_map(|item| match item {
            Ok(PemItem::Certificate(cert)) => Some(cert.to_owned()),
            _ => None,
        })
        .collect())
}

/// The model call in flight: its agent, for a cancellation to shut down (its blocked read
/// returns at once), and the flag that tells its client to make new agents.
static IN_FLIGHT: Mutex<Option<(ureq::Agent, Arc<AtomicBool>)>> = Mutex::new(None);

/// Drops the model call in flight, if any: its connection is shut down, so the read blocked on
/// it returns now instead of at the provider's next byte (a cancelled editor turn).
pub fn interrupt_stream() {
    let taken = IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some((agent, stale)) = taken {
        stale.store(true, Ordering::SeqCst);
        agent.shutdown();
    }
}

/// A streamed response body; while it is read, its call is the one in flight.
pub struct StreamBody {
    reader: ureq::BodyReader<'static>,
}

impl Read for StreamBody {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reader.read(buf)
    }
}

impl Drop for StreamBody {
    fn drop(&mut self) {
        IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

/// The process's HTTP client.
pub struct Http {
    /// Replaced after a cancellation shut it down (see [`interrupt_stream`]).
    agent: Mutex<ureq::Agent>,
    /// With extra roots: an agent that trusts only them, made when first needed. ureq takes
    /// either the bundled roots or a list, not both, so a certificate the bundled roots reject
    /// is tried with the extra ones (and the other way round): together they trust both.
    extra: Mutex<Option<Result<ureq::Agent, CertError>>>,
    /// A cancellation shut the agents down: the next request makes new ones.
    stale: Arc<AtomicBool>,
    /// The extra roots worked last time: try them first.
    prefer_extra: AtomicBool,
    roots: ExtraRoots,
    proxy: Option<ureq::Proxy>,
    settings: NetSettings,
    /// Redirects followed by ureq itself (none for MCP servers, whose redirects zero checks).
    redirects: u32,
}

impl Http {
    /// The client for requests to `url`'s host: through the environment's proxy for it, or
    /// directly (loopback, `NO_PROXY`, no proxy set).
    pub fn new(settings: NetSettings, roots: &ExtraRoots, url: &str) -> Http {
        let proxy = settings.proxies.for_url(url).and_then(|p| ureq::Proxy::new(p).ok());
        Http {
            agent: Mutex::new(Http::agent(&settings, TlsConfig::default(), proxy.clone(), 10)),
            extra: Mutex::new(None),
            stale: Arc::default(),
            prefer_extra: AtomicBool::new(false),
            roots: roots.clone(),
            proxy,
            settings,
            redirects: 10,
        }
    }

    /// The same client, returning redirects as responses instead of following them.
    pub fn without_redirects(mut self) -> Http {
        self.redirects = 0;
        self.agent =
            Mutex::new(Http::agent(&self.settings, TlsConfig::default(), self.proxy.clone(), 0));
        self
    }

    fn agent(
        settings: &NetSettings,
        tls: TlsConfig,
        proxy: Option<ureq::Proxy>,
        redirects: u32,
    ) -> ureq::Agent {
        // The proxy is set either way: ureq would otherwise read the environment itself.
        ureq::Agent::config_builder()
            .proxy(proxy)
            .max_redirects(redirects)
            .http_status_as_error(false)
            .timeout_connect(Some(settings.connect))
            .timeout_recv_response(Some(settings.headers))
            .timeout_per_read(Some(settings.idle))
            .timeout_global(Some(settings.total))
            .user_agent(concat!("zero/", env!("CARGO_PKG_VERSION")))
            .tls_config(tls)
            .build()
            .new_agent()
    }

    /// The agent trusting the extra roots, or why there is none.
    fn extra_agent(&self) -> Option<Result<ureq::Agent, CertError>> {
        if self.roots.is_empty() {
            return None;
        }
        let mut extra = self.extra.lock().unwrap_or_else(|p| p.into_inner());
        let made = extra.get_or_insert_with(|| {
            let certs = self.roots.load()?;
            let specific = RootCerts::Specific(Arc::new(certs));
            let tls = TlsConfig::builder().root_certs(specific).build();
            Ok(Http::agent(&self.settings, tls, self.proxy.clone(), self.redirects))
        });
        Some(made.clone())
    }

    /// The main agent, made anew when a cancellation shut the last one down.
    fn main_agent(&self) -> ureq::Agent {
        let mut agent = self.agent.lock().unwrap_or_else(|p| p.into_inner());
        if self.stale.swap(false, Ordering::SeqCst) {
            *agent = Http::agent(
                &self.settings,
                TlsConfig::default(),
                self.proxy.clone(),
                self.redirects,
            );
            *self.extra.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
        agent.clone()
    }

    /// Makes a request with the agent that worked last; a certificate the first agent does
    /// not trust is tried with the other.
    fn call<T>(
        &self,
        make: impl Fn(&ureq::Agent) -> Result<T, ureq::Error>,
    ) -> Result<T, ureq::Error> {
        let main = self.main_agent();
        let prefer_extra = self.prefer_extra.load(Ordering::Relaxed);
        let extra = if prefer_extra { self.extra_agent() } else { None };
        let first = match extra {
            Some(Ok(extra)) => extra,
            _ => main.clone(),
        };
        match make(&first) {
            Err(err) if is_certificate_error(&err) => {
                let second = if prefer_extra {
                    main
                } else {
                    match self.extra_agent() {
                        Some(Ok(extra)) => extra,
                        _ => return Err(err),
                    }
                };
                let result = make(&second);
                if result.is_ok() {
                    self.prefer_extra.store(!prefer_extra, Ordering::Relaxed);
                }
                result
            }
            other => other,
        }
    }

    /// One request (`GET`, `POST` with a body, `DELETE`) that ends by `timeout`, the response
    /// whatever its status; the error as one line naming the host.
    pub fn exchange(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, String)],
        body: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<ureq::http::Response<ureq::Body>, RequestError> {
        fn with<B>(
            mut request: ureq::RequestBuilder<B>,
            headers: &[(&str, String)],
            timeout: Duration,
        ) -> ureq::RequestBuilder<B> {
            for (name, value) in headers {
                request = request.header(*name, value.as_str());
            }
            // The request's own deadline, not the providers' waits for headers and silence.
            request
                .config()
                .timeout_global(Some(timeout))
                .timeout_recv_response(Some(timeout))
                .timeout_recv_body(Some(timeout))
                .timeout_per_read(Some(timeout))
                .build()
        }
        let result = self.call(|agent| match (method, body) {
            ("POST", Some(body)) => with(agent.post(url), headers, timeout).send(body),
            ("DELETE", _) => with(agent.delete(url), headers, timeout).call(),
            _ => with(agent.get(url), headers, timeout).call(),
        });
        result.map_err(|err| {
            let host = host_of(url);
            if is_certificate_error(&err) {
                return RequestError::Certificate(self.certificate_message(&err, host));
            }
            match err {
                ureq::Error::Timeout(_) => RequestError::Timeout(format!(
                    "{host} did not answer within {} ms",
                    timeout.as_millis()
                )),
                ureq::Error::HostNotFound => {
                    RequestError::Unreachable(format!("host not found: {host}"))
                }
                ureq::Error::ConnectionFailed => {
                    RequestError::Unreachable(format!("could not connect to {host}"))
                }
                ureq::Error::Io(io) => RequestError::Failed(format!("{host}: {}", io_text(&io))),
                other => RequestError::Failed(format!("request to {host} failed: {other}")),
            }
        })
    }

    pub fn max_retries(&self) -> u32 {
        self.settings.max_retries
    }

    /// How long to wait before retry number `attempt + 1`: the server's hint (capped), else
    /// 0.5 s doubling up to 8 s, plus up to 25 % jitter so clients do not retry in step.
    pub fn backoff(&self, attempt: u32, hint: Option<Duration>) -> Duration {
        if let Some(hint) = hint {
            return hint.min(MAX_RETRY_AFTER);
        }
        let base = Duration::from_millis(500).saturating_mul(1 << attempt.min(4));
        let base = base.min(Duration::from_secs(8));
        let jitter = crate::clock::random_u64() % (base.as_millis() as u64 / 4 + 1);
        base + Duration::from_millis(jitter)
    }

    /// POSTs a JSON body and returns the response body reader, or the provider's error.
    pub fn post_stream(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &[u8],
    ) -> Result<StreamBody, CallError> {
        let response = self
            .call(|agent| {
                // In flight from the request on: a cancellation while waiting for the
                // headers drops it too.
                *IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some((agent.clone(), self.stale.clone()));
                let mut request = agent.post(url).header("accept", "text/event-stream");
                for (name, value) in headers {
                    request = request.header(*name, value.as_str());
                }
                request.content_type("application/json").send(body)
            })
            .map_err(|err| self.send_error(err, url))?;
        let status = response.status().as_u16();
        if status < 400 {
            return Ok(StreamBody { reader: response.into_body().into_reader() });
        }
        IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner()).take();
        let hint = retry_after(response.headers());
        let reason = response.status().canonical_reason().unwrap_or("error").to_string();
        let mut text = String::new();
        // A body that cannot be read in full still says something; what was read is used.
        let _ = response.into_body().into_reader().take(ERROR_BODY_CAP).read_to_string(&mut text);
        Err(status_error(status, &reason, &text, hint))
    }

    /// GETs `url` and returns the HTTP status, the body unread: whether the endpoint answers
    /// at all (`zero doctor`). Any status counts as an answer.
    pub fn probe(&self, url: &str) -> Result<u16, CallError> {
        let response =
            self.call(|agent| agent.get(url).call()).map_err(|err| self.send_error(err, url))?;
        Ok(response.status().as_u16())
    }

    /// GETs `url` with `headers`: the status and what the body says (the JSON error message,
    /// or the start of the text; at most [`ERROR_BODY_CAP`] is read).
    pub fn get(&self, url: &str, headers: &[(&str, String)]) -> Result<(u16, String), CallError> {
        let response = self
            .call(|agent| {
                let mut request = agent.get(url);
                for (name, value) in headers {
                    request = request.header(*name, value.as_str());
                }
                request.call()
            })
            .map_err(|err| self.send_error(err, url))?;
        let status = response.status().as_u16();
        let reason = response.status().canonical_reason().unwrap_or("").to_string();
        let mut text = String::new();
        let _ = response.into_body().into_reader().take(ERROR_BODY_CAP).read_to_string(&mut text);
        Ok((status, body_detail(&text).unwrap_or(reason)))
    }

    /// A failure before the response headers arrived.
    fn send_error(&self, err: ureq::Error, url: &str) -> CallError {
        let host = host_of(url);
        // Before the I/O arm: a rejected certificate arrives as an I/O error, and trying again
        // will not change it.
        if is_certificate_error(&err) {
            return CallError::fatal(self.certificate_message(&err, host));
        }
        match err {
            ureq::Error::Timeout(Timeout::Connect | Timeout::Resolve) => CallError::transient(
                format!(
                    "Provider unreachable: connecting to {host} timed out after {} (ZERO_CONNECT_TIMEOUT_MS)",
                    human(self.settings.connect)
                ),
                None,
            ),
            ureq::Error::Timeout(Timeout::Global | Timeout::PerCall) => self.total_timeout(),
            ureq::Error::Timeout(_) => CallError::unavailable(format!(
                "Provider did not answer: no response from {host} within {} (ZERO_HEADERS_TIMEOUT_MS)",
                human(self.settings.headers)
            )),
            ureq::Error::HostNotFound => {
                CallError::unavailable(format!("Provider unreachable: host not found: {host}"))
            }
            ureq::Error::ConnectionFailed => CallError::transient(
                format!("Provider unreachable: could not connect to {host}"),
                None,
            ),
            ureq::Error::Io(io) => CallError::transient(
                format!("Provider unreachable: {host}: {}", io_text(&io)),
                None,
            ),
            ureq::Error::BadUri(uri) => {
                CallError::fatal(format!("Invalid provider URL: {uri}"))
            }
            other => CallError::fatal(format!("Provider request to {host} failed: {other}")),
        }
    }

    /// A failure while reading the streamed body.
    pub fn stream_error(&self, err: SseError) -> CallError {
        match err {
            SseError::Io(io) => match ureq::Error::from(io) {
                ureq::Error::Timeout(Timeout::Global | Timeout::PerCall) => self.total_timeout(),
                ureq::Error::Timeout(_) => CallError::unavailable(format!(
                    "Provider stream stalled: no data for {} (ZERO_IDLE_TIMEOUT_MS)",
                    human(self.settings.idle)
                )),
                ureq::Error::Io(io) => {
                    CallError::transient(format!("Provider stream failed: {}", io_text(&io)), None)
                }
                other => CallError::transient(format!("Provider stream failed: {other}"), None),
            },
            SseError::TooLong | SseError::NotUtf8 => {
                CallError::fatal(format!("Provider stream is malformed: {err}"))
            }
        }
    }

    fn total_timeout(&self) -> CallError {
        CallError::unavailable(format!(
            "Provider call exceeded {} in total (ZERO_TOTAL_TIMEOUT_MS)",
            human(self.settings.total)
        ))
    }
}

/// The one-line error for an HTTP status, quoting the provider's own message.
pub(crate) fn status_error(
    status: u16,
    reason: &str,
    body: &str,
    hint: Option<Duration>,
) -> CallError {
    let detail = body_detail(body).unwrap_or_else(|| reason.to_string());
    let (what, transient) = match status {
        401 | 403 => {
            (format!("Provider authentication error (HTTP {status}, check your API key)"), false)
        }
        429 => (format!("Provider rate limit error (HTTP {status})"), true),
        529 => (format!("Provider overloaded (HTTP {status})"), true),
        408 | 409 | 500..=599 => (format!("Provider returned error (HTTP {status})"), true),
        _ => (format!("Provider returned error (HTTP {status})"), false),
    };
    let message = format!("{what}: {detail}");
    if transient {
        CallError::transient(message, hint)
    } else {
        CallError::fatal(message)
    }
}

/// What an error body says, in one line: the JSON error message, an HTML page's title, or the
/// start of the text.
pub(crate) fn body_detail(body: &str) -> Option<String> {
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return None;
    }
    // Decoded before it is summarised and redacted: a key written `sk%2Dproj%2D…` is a key.
    let decoded = |text: &str| crate::text::percent_decoded(text).into_owned();
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) {
        return Some(
            error_message(&value)
                .map(|m| summarize(&decoded(&m)))
                .unwrap_or_else(|| summarize(&decoded(trimmed))),
        );
    }
    let trimmed = &decoded(trimmed);
    let lower = trimmed.to_ascii_lowercase();
    if lower.starts_with("<!doctype") || lower.starts_with("<html") || lower.contains("<body") {
        let title = between(trimmed, &lower, "<title>", "</title>")
            .or_else(|| between(trimmed, &lower, "<h1>", "</h1>"));
        return Some(match title {
            Some(title) => format!("an HTML error page ({})", summarize(title)),
            None => "an HTML error page".to_string(),
        });
    }
    Some(summarize(trimmed))
}

fn between<'a>(text: &'a str, lower: &str, open: &str, close: &str) -> Option<&'a str> {
    let start = lower.find(open)? + open.len();
    let end = start + lower[start..].find(close)?;
    text.get(start..end).map(str::trim).filter(|t| !t.is_empty())
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds, or an HTTP date), clamped to
/// `0..=MAX_RETRY_AFTER` whatever the server wrote (`1e20`, `-5`, `NaN`); a value that is none
/// of these is no hint at all.
fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    retry_hint(get("retry-after-ms"), get("retry-after"), crate::clock::unix_now())
}

pub(crate) fn retry_hint(
    millis: Option<&str>,
    seconds: Option<&str>,
    now: i64,
) -> Option<Duration> {
    let clamp = |secs: f64| Duration::from_secs_f64(secs.clamp(0.0, MAX_RETRY_AFTER.as_secs_f64()));
    let number = |v: &str| v.parse::<f64>().ok().filter(|n| n.is_finite());
    if let Some(ms) = millis.and_then(number) {
        return Some(clamp(ms / 1000.0));
    }
    let seconds = seconds?;
    if let Some(secs) = number(seconds) {
        return Some(clamp(secs));
    }
    let at = crate::clock::parse_http_date(seconds)?;
    Some(clamp(at.saturating_sub(now) as f64))
}

/// A TLS failure that comes from the server's certificate (not from the network).
fn is_certificate_error(err: &ureq::Error) -> bool {
    matches!(err, ureq::Error::Rustls(_) | ureq::Error::Tls(_))
        || matches!(err, ureq::Error::Io(io) if io.to_string().contains("certificate"))
}

impl Http {
    /// One line: the host, what TLS said, and how to trust a private CA.
    fn certificate_message(&self, err: &ureq::Error, host: &str) -> String {
        let text = err.to_string();
        let detail = crate::text::one_line(text.strip_prefix("io: ").unwrap_or(&text));
        let trusted = match self.extra_agent() {
            None => "If a proxy or a private CA signs its certificate, set SSL_CERT_FILE (or SSL_CERT_DIR) to that CA's PEM certificate.".to_string(),
            Some(Ok(_)) => format!("Neither the bundled roots nor {} trust it.", self.roots.describe()),
            Some(Err(why)) => format!("The extra roots cannot be used: {why}."),
        };
        format!("TLS failure with {host}: {detail}. {trusted}")
    }
}

fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    // Never name userinfo.
    host.rsplit_once('@').map_or(host, |(_, host)| host)
}

pub(crate) fn io_text(io: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match io.kind() {
        ErrorKind::ConnectionRefused => "connection refused".to_string(),
        ErrorKind::ConnectionReset => "connection reset by the provider".to_string(),
        ErrorKind::ConnectionAborted => "connection aborted".to_string(),
        ErrorKind::UnexpectedEof => "connection closed mid-response".to_string(),
        ErrorKind::BrokenPipe => "connection closed by the provider".to_string(),
        _ => io.to_string(),
    }
}

/// `1.5 s`, `500 ms`.
fn human(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_errors_quote_the_provider_and_classify() {
        let body =
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
        let err = status_error(401, "Unauthorized", body, None);
        assert_eq!(
            err.message,
            "Provider authentication error (HTTP 401, check your API key): Incorrect API key provided"
        );
        assert_eq!(err.retry, Retry::No);
        let err = status_error(429, "Too Many Requests", "", Some(Duration::from_secs(1)));
        assert_eq!(err.message, "Provider rate limit error (HTTP 429): Too Many Requests");
        assert_eq!(err.retry, Retry::After(Some(Duration::from_secs(1))));
        let err = status_error(404, "Not Found", r#"{"message":"model x not found"}"#, None);
        assert_eq!(err.message, "Provider returned error (HTTP 404): model x not found");
        assert_eq!(err.retry, Retry::No);
        assert_eq!(status_error(503, "Service Unavailable", "", None).retry, Retry::After(None));
        assert_eq!(status_error(529, "", "{}", None).retry, Retry::After(None));
    }

    #[test]
    fn html_pages_are_summarised() {
        let page = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>\n<h1>502</h1>\nlots of markup\n</body></html>";
        assert_eq!(body_detail(page).as_deref(), Some("an HTML error page (502 Bad Gateway)"));
        assert_eq!(
            body_detail("<html><body>oops</body></html>").as_deref(),
            Some("an HTML error page")
        );
    }

    #[test]
    fn gemini_error_arrays_and_openrouter_metadata() {
        let gemini = r#"[{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}]"#;
        assert_eq!(body_detail(gemini).as_deref(), Some("API key not valid."));
        let openrouter = r#"{"error":{"code":429,"message":"Provider returned error","metadata":{"raw":"upstream rate-limited"}}}"#;
        assert_eq!(
            body_detail(openrouter).as_deref(),
            Some("Provider returned error (upstream rate-limited)")
        );
    }

    #[test]
    fn long_bodies_are_cut_to_one_line() {
        let long = "word\n".repeat(200);
        let detail = body_detail(&long).unwrap();
        assert!(!detail.contains('\n'));
        assert!(detail.ends_with(" word...") && detail.chars().count() == 302, "{detail}");
        // A long word (a key, say) is never cut in the middle when a boundary is near.
        let keyed = format!("{} Bearer sk-{}", "x".repeat(280), "A1b2".repeat(10));
        assert_eq!(body_detail(&keyed).unwrap(), format!("{} Bearer...", "x".repeat(280)));
    }

    #[test]
    fn backoff_honours_hints_and_grows() {
        let http = Http::new(NetSettings::default(), &ExtraRoots::default(), "http://127.0.0.1");
        assert_eq!(http.backoff(0, Some(Duration::from_secs(1))), Duration::from_secs(1));
        assert_eq!(http.backoff(0, Some(Duration::from_secs(600))), MAX_RETRY_AFTER);
        let first = http.backoff(0, None);
        assert!(first >= Duration::from_millis(500) && first <= Duration::from_millis(625));
        let later = http.backoff(6, None);
        assert!(later >= Duration::from_secs(8) && later <= Duration::from_secs(10));
    }

    #[test]
    fn retry_hints_are_clamped_whatever_the_server_wrote() {
        let max = Some(MAX_RETRY_AFTER);
        let zero = Some(Duration::ZERO);
        let now = 784_111_777; // Sun, 06 Nov 1994 08:49:37 GMT
        let cases: &[(Option<&str>, Option<&str>, Option<Duration>)] = &[
            (None, Some("1"), Some(Duration::from_secs(1))),
            (None, Some("1e20"), max),
            (None, Some("-5"), zero),
            (None, Some("NaN"), None),
            (None, Some("inf"), None),
            (None, Some("soon"), None),
            (Some("1500"), Some("9"), Some(Duration::from_millis(1500))),
            (Some("1e300"), None, max),
            (Some("-1"), None, zero),
            (Some("nan"), Some("2"), Some(Duration::from_secs(2))),
            (None, Some("Sun, 06 Nov 1994 08:49:47 GMT"), Some(Duration::from_secs(10))),
            (None, Some("Sun, 06 Nov 1994 08:00:00 GMT"), zero),
            (None, Some("Fri, 31 Dec 9999 23:59:59 GMT"), max),
        ];
        for (ms, secs, want) in cases {
            assert_eq!(retry_hint(*ms, *secs, now), *want, "{ms:?} {secs:?}");
        }
    }

    #[test]
    fn host_never_includes_userinfo() {
        assert_eq!(host_of("https://u:p@api.example.com/v1/x"), "api.example.com");
        assert_eq!(host_of("http://127.0.0.1:9/v1"), "127.0.0.1:9");
    }
}
