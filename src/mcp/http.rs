//! The streamable HTTP transport. Each JSON-RPC message is POSTed with `Accept:
//! application/json, text/event-stream`; the answer is a JSON body or an event stream read up
//! to the response. The `Mcp-Session-Id` the server gives is sent on every later request, with
//! `MCP-Protocol-Version` once it is agreed. A 404 for a session means the server forgot it:
//! zero initializes again, once, and resends. A stream that ends before its response is
//! resumed with a GET and `Last-Event-ID` after the stream's `retry` time. Redirects are
//! followed only within the same origin. The session is DELETEd at the end.
//!
//! Each request runs on its own `zero-mcp-http` thread (the HTTP client blocks), which hands
//! every message it reads to the main loop and wakes it through a socket the loop polls.

use std::io::{BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::wire::{self, MAX_MESSAGE_BYTES};
use crate::provider::http::Http;
use crate::provider::sse::{Frame, SseReader};
use crate::sys::threads::{self, Named};

/// Messages read from the server and not yet taken by the main loop.
const INBOX: usize = 256;
/// How many times one request's stream is resumed.
const MAX_RESUMES: u32 = 5;
/// Same-origin redirects followed for one request.
const MAX_REDIRECTS: u32 = 3;
/// The wait before resuming when the stream named none.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// Every link's endpoint, so a run ended by a signal can still end their sessions.
static ENDPOINTS: Mutex<Vec<std::sync::Weak<Endpoint>>> = Mutex::new(Vec::new());

/// Ends every open session (DELETE), all within `within`: for a run a signal ends, whose
/// links are never dropped.
pub fn end_sessions(within: Duration) {
    let deadline = Instant::now() + within;
    let endpoints: Vec<Arc<Endpoint>> = ENDPOINTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter_map(std::sync::Weak::upgrade)
        .collect();
    for endpoint in endpoints {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        delete_session(&endpoint, left);
    }
}

/// DELETEs the endpoint's session, if it has one, within `within`.
fn delete_session(endpoint: &Endpoint, within: Duration) {
    endpoint.ended.store(true, std::sync::atomic::Ordering::SeqCst);
    if endpoint.session().is_none() {
        return;
    }
    let headers = endpoint.headers("application/json, text/event-stream");
    let url = endpoint.url();
    let _ = endpoint.http.exchange("DELETE", &url, &headers, None, within);
    endpoint.set_session(None);
}

/// What the request threads share with the link.
struct Endpoint {
    http: Http,
    url: Mutex<String>,
    headers: Vec<(String, String)>,
    session: Mutex<Option<String>>,
    protocol: Mutex<Option<String>>,
    /// The `initialize` request, sent again when the server forgets the session.
    initialize: Mutex<Option<Value>>,
    /// The link was closed: the listening stream stops.
    ended: std::sync::atomic::AtomicBool,
}

impl Endpoint {
    fn url(&self) -> String {
        self.url.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn session(&self) -> Option<String> {
        self.session.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_session(&self, id: Option<String>) {
        *self.session.lock().unwrap_or_else(|p| p.into_inner()) = id;
    }

    /// The headers of every request: the user's, then the session's.
    fn headers(&self, accept: &str) -> Vec<(&str, String)> {
        let mut headers: Vec<(&str, String)> =
            self.headers.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        headers.push(("accept", accept.to_string()));
        if let Some(session) = self.session() {
            headers.push(("mcp-session-id", session));
        }
        if let Some(version) = self.protocol.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            headers.push(("mcp-protocol-version", version));
        }
        headers
    }
}

/// Where a request thread puts what it reads.
#[derive(Clone)]
struct Mailbox {
    /// Bounded: a server that sends faster than zero reads waits (in its request's thread).
    messages: SyncSender<String>,
    wake: Arc<UnixStream>,
}

impl Mailbox {
    fn deliver(&self, text: String) {
        if self.messages.send(text).is_ok() {
            let _ = (&*self.wake).write(&[1]);
        }
    }
}

pub struct HttpLink {
    endpoint: Arc<Endpoint>,
    mailbox: Mailbox,
    inbox: Receiver<String>,
    wake: UnixStream,
    closed: Option<String>,
}

impl HttpLink {
    pub fn new(http: Http, url: &str, headers: &[(String, String)]) -> Result<HttpLink, String> {
        let (wake, wake_writer) = UnixStream::pair().map_err(|e| format!("cannot set up: {e}"))?;
        wake.set_nonblocking(true).map_err(|e| format!("cannot set up: {e}"))?;
        wake_writer.set_nonblocking(true).map_err(|e| format!("cannot set up: {e}"))?;
        let (sender, inbox) = sync_channel(INBOX);
        let link = HttpLink {
            endpoint: Arc::new(Endpoint {
                http: http.without_redirects(),
                url: Mutex::new(url.to_string()),
                headers: headers.to_vec(),
                session: Mutex::new(None),
                protocol: Mutex::new(None),
                initialize: Mutex::new(None),
                ended: std::sync::atomic::AtomicBool::new(false),
            }),
            mailbox: Mailbox { messages: sender, wake: Arc::new(wake_writer) },
            inbox,
            wake,
            closed: None,
        };
        let mut endpoints = ENDPOINTS.lock().unwrap_or_else(|p| p.into_inner());
        endpoints.retain(|e| e.strong_count() > 0);
        endpoints.push(Arc::downgrade(&link.endpoint));
        drop(endpoints);
        Ok(link)
    }

    /// The protocol version agreed, sent on every later request.
    pub fn set_protocol(&self, version: &str) {
        *self.endpoint.protocol.lock().unwrap_or_else(|p| p.into_inner()) = Some(version.into());
    }

    /// Sends one message on a thread of its own; what comes back arrives through `receive`.
    pub fn send(&mut self, message: &Value, deadline: Instant) -> Result<(), String> {
        if let Some(why) = &self.closed {
            return Err(why.clone());
        }
        if message.get("method").and_then(Value::as_str) == Some("initialize") {
            *self.endpoint.initialize.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(message.clone());
        }
        // A notification goes out before whatever is sent next (`notifications/initialized`
        // must reach the server before `tools/list`), so it is sent here, within `deadline`.
        if message.get("method").is_some() && message.get("id").is_none() {
            return exchange(&self.endpoint, message, None, deadline, &self.mailbox);
        }
        let (endpoint, mailbox, message) =
            (self.endpoint.clone(), self.mailbox.clone(), message.clone());
        threads::spawn(Named::McpHttp, move || {
            let id = our_request_id(&message);
            if let Err(why) = exchange(&endpoint, &message, id, deadline, &mailbox) {
                if let Some(id) = id {
                    mailbox.deliver(wire::transport_failure(id, &why).to_string());
                }
            }
        })
        .map(|_| ())
        .map_err(|err| format!("cannot start a thread for the request: {err}"))
    }

    pub fn fd(&self) -> i32 {
        self.wake.as_raw_fd()
    }

    /// The messages read so far.
    pub fn receive(&mut self) -> Vec<String> {
        let mut byte = [0u8; 256];
        while matches!((&self.wake).read(&mut byte), Ok(n) if n > 0) {}
        self.inbox.try_iter().collect()
    }

    pub fn close(&mut self, why: &str) {
        self.closed.get_or_insert_with(|| why.to_string());
        self.endpoint.ended.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Opens the stream on which the server sends what is not an answer to a request of
    /// zero's (its own requests, such as `roots/list`, and notifications), on a thread that
    /// keeps it open, resumed after its `retry` time, until the link closes. A server that
    /// offers no such stream (405) is left alone.
    pub fn listen(&self) {
        let (endpoint, mailbox) = (self.endpoint.clone(), self.mailbox.clone());
        // Without a thread there is no stream: answers to zero's own requests still come.
        let _ = threads::spawn(Named::McpHttp, move || listen(&endpoint, &mailbox));
    }

    /// Ends the session on the server (DELETE), within a short deadline.
    pub fn hang_up(&mut self) {
        delete_session(&self.endpoint, Duration::from_secs(2));
    }
}

/// How many times the listening stream is opened again after it ends.
const MAX_LISTENS: u32 = 100;
/// How long one listening request may stay open before it is made again.
const LISTEN_FOR: Duration = Duration::from_secs(3600);

/// The listening stream's loop (see [`HttpLink::listen`]).
fn listen(endpoint: &Endpoint, mailbox: &Mailbox) {
    use std::sync::atomic::Ordering;
    let mut last = String::new();
    let mut retry = DEFAULT_RETRY;
    for _ in 0..MAX_LISTENS {
        if endpoint.ended.load(Ordering::SeqCst) {
            return;
        }
        let mut headers = endpoint.headers("text/event-stream");
        if !last.is_empty() {
            headers.push(("last-event-id", last.clone()));
        }
        let url = endpoint.url();
        let Ok(response) = endpoint.http.exchange("GET", &url, &headers, None, LISTEN_FOR) else {
            return;
        };
        let kind = response.headers().get("content-type").and_then(|v| v.to_str().ok());
        if response.status().as_u16() >= 300
            || !kind.is_some_and(|k| k.starts_with("text/event-stream"))
        {
            return;
        }
        let mut stream = SseReader::new(BufReader::new(response.into_body().into_reader()));
        stream.resume_from(&last, Some(retry));
        // No id of zero's is answered here: read until the stream ends (u64::MAX never comes).
        if read_stream(&mut stream, u64::MAX, mailbox).is_err() {
            return;
        }
        last = stream.last_event_id().to_string();
        retry = stream.retry().unwrap_or(DEFAULT_RETRY).min(Duration::from_secs(30));
        if endpoint.ended.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(retry);
    }
}

/// The id of a request zero sends (responses and notifications have none to wait for).
fn our_request_id(message: &Value) -> Option<u64> {
    message.get("method")?;
    message.get("id")?.as_u64()
}

/// Time left until `deadline` (at least 1 ms, so ureq is never given zero).
fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1))
}

type Response = ureq::http::Response<ureq::Body>;

/// POSTs a message (following same-origin redirects).
fn post(endpoint: &Endpoint, message: &Value, deadline: Instant) -> Result<Response, String> {
    let body = message.to_string();
    let headers = endpoint.headers("application/json, text/event-stream");
    let mut headers = headers;
    headers.push(("content-type", "application/json".to_string()));
    let mut url = endpoint.url();
    for _ in 0..=MAX_REDIRECTS {
        let response = endpoint.http.exchange(
            "POST",
            &url,
            &headers,
            Some(body.as_bytes()),
            left(deadline),
        )?;
        if !response.status().is_redirection() {
            return Ok(response);
        }
        let target = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| format!("HTTP {} without a Location", response.status().as_u16()))?;
        let next = resolve(&url, target);
        if origin(&next) != origin(&url) {
            return Err(format!(
                "redirected to {} (another host): not followed",
                origin(&next).unwrap_or("an invalid URL")
            ));
        }
        url = next;
        *endpoint.url.lock().unwrap_or_else(|p| p.into_inner()) = url.clone();
    }
    Err(format!("more than {MAX_REDIRECTS} redirects"))
}

/// `scheme://host[:port]` of a URL.
fn origin(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    Some(&url[..url.len() - rest.len() + end])
}

/// A Location against the URL it came from (absolute, or a path on the same origin).
fn resolve(base: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_string();
    }
    match (origin(base), location.starts_with('/')) {
        (Some(origin), true) => format!("{origin}{location}"),
        (Some(_), false) => {
            let dir = base.rsplit_once('/').map_or(base, |(dir, _)| dir);
            format!("{dir}/{location}")
        }
        (None, _) => location.to_string(),
    }
}

/// One message's whole exchange: POST, re-initialization on a forgotten session, then the
/// answer, resumed when its stream breaks.
fn exchange(
    endpoint: &Endpoint,
    message: &Value,
    id: Option<u64>,
    deadline: Instant,
    mailbox: &Mailbox,
) -> Result<(), String> {
    let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    let mut response = post(endpoint, message, deadline)?;
    if response.status().as_u16() == 404 && endpoint.session().is_some() && !is_initialize {
        initialize_again(endpoint, deadline)?;
        response = post(endpoint, message, deadline)?;
    }
    let status = response.status().as_u16();
    if status >= 400 {
        return Err(status_error(response));
    }
    if is_initialize {
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        endpoint.set_session(session);
    }
    let Some(id) = id else { return Ok(()) };
    if status == 202 || status == 204 {
        return Err(format!("HTTP {status} without an answer to the request"));
    }
    read_answer(endpoint, response, id, deadline, mailbox)
}

/// The server forgot the session: `initialize` and `notifications/initialized` again.
fn initialize_again(endpoint: &Endpoint, deadline: Instant) -> Result<(), String> {
    let request = endpoint.initialize.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let request = request.ok_or("the session expired before it was initialized")?;
    endpoint.set_session(None);
    let response = post(endpoint, &request, deadline)?;
    if response.status().as_u16() >= 400 {
        return Err(format!("initializing again: {}", status_error(response)));
    }
    let session =
        response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    endpoint.set_session(session);
    // The answer is the one the first initialize had; only the session is new.
    let (quiet, _) = sync_channel(0);
    let (_, writer) = UnixStream::pair().map_err(|e| e.to_string())?;
    let discard = Mailbox { messages: quiet, wake: Arc::new(writer) };
    if let Some(id) = our_request_id(&request) {
        read_answer(endpoint, response, id, deadline, &discard)?;
    }
    let initialized = wire::notification("notifications/initialized", Value::Null);
    let response = post(endpoint, &initialized, deadline)?;
    if response.status().as_u16() >= 400 {
        return Err(format!("initializing again: {}", status_error(response)));
    }
    Ok(())
}

fn status_error(response: Response) -> String {
    let status = response.status();
    let mut text = String::new();
    let _ = response.into_body().into_reader().take(4096).read_to_string(&mut text);
    let detail = crate::text::one_line(text.trim());
    let (detail, _) = crate::text::cap_utf8(&detail, 200);
    let reason = status.canonical_reason().unwrap_or("error");
    if detail.is_empty() {
        format!("HTTP {} {reason}", status.as_u16())
    } else {
        format!("HTTP {} {reason}: {detail}", status.as_u16())
    }
}

/// Reads the answer to request `id`: a JSON body, or an event stream up to the response,
/// resumed with GET and `Last-Event-ID` when it ends early.
fn read_answer(
    endpoint: &Endpoint,
    response: Response,
    id: u64,
    deadline: Instant,
    mailbox: &Mailbox,
) -> Result<(), String> {
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let body = response.into_body().into_reader();
    if !kind.starts_with("text/event-stream") {
        let mut text = String::new();
        body.take(MAX_MESSAGE_BYTES as u64 + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("reading the answer: {e}"))?;
        if text.len() > MAX_MESSAGE_BYTES {
            return Err(format!("an answer over {} MiB", MAX_MESSAGE_BYTES >> 20));
        }
        mailbox.deliver(text);
        return Ok(());
    }
    let mut stream = SseReader::new(BufReader::new(body));
    let mut resumes = 0;
    loop {
        if read_stream(&mut stream, id, mailbox)? {
            return Ok(());
        }
        let last = stream.last_event_id().to_string();
        if last.is_empty() {
            return Err(
                "the event stream ended before the response, with no event id to resume from"
                    .into(),
            );
        }
        if resumes == MAX_RESUMES {
            return Err(format!("the event stream ended before the response {MAX_RESUMES} times"));
        }
        resumes += 1;
        let wait = stream.retry().unwrap_or(DEFAULT_RETRY).min(Duration::from_secs(30));
        if Instant::now() + wait >= deadline {
            return Err("the event stream ended before the response".into());
        }
        std::thread::sleep(wait);
        let mut headers = endpoint.headers("text/event-stream");
        headers.push(("last-event-id", last.clone()));
        let url = endpoint.url();
        let response = endpoint.http.exchange("GET", &url, &headers, None, left(deadline))?;
        if response.status().as_u16() >= 400 {
            return Err(format!("resuming the event stream: {}", status_error(response)));
        }
        let retry = stream.retry();
        stream = SseReader::new(BufReader::new(response.into_body().into_reader()));
        stream.resume_from(&last, retry);
    }
}

/// Reads events until the response to `id` (true) or the end of the stream (false).
fn read_stream<R: std::io::BufRead>(
    stream: &mut SseReader<R>,
    id: u64,
    mailbox: &Mailbox,
) -> Result<bool, String> {
    loop {
        match stream.next_frame() {
            Ok(Some(Frame::Event { data, .. })) => {
                if data.trim().is_empty() {
                    continue;
                }
                let answers = wire::parse(&data)
                    .map(|all| {
                        all.iter().any(
                            |m| matches!(m, wire::Incoming::Response { id: got, .. } if *got == id),
                        )
                    })
                    .unwrap_or(false);
                mailbox.deliver(data);
                if answers {
                    return Ok(true);
                }
            }
            Ok(Some(Frame::Stray(text))) => {
                let (start, _) = crate::text::cap_utf8(text.trim(), 80);
                return Err(format!("the event stream held text that is not an event: {start}"));
            }
            Ok(None) => return Ok(false),
            // A broken connection is resumed like an ended stream.
            Err(crate::provider::sse::SseError::Io(_)) => return Ok(false),
            Err(err) => return Err(format!("the event stream: {err}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_stay_within_the_origin() {
        assert_eq!(origin("http://127.0.0.1:8080/mcp?x"), Some("http://127.0.0.1:8080"));
        assert_eq!(origin("https://a.example"), Some("https://a.example"));
        assert_eq!(resolve("http://h:1/a/mcp", "/other"), "http://h:1/other");
        assert_eq!(resolve("http://h:1/a/mcp", "next"), "http://h:1/a/next");
        assert_eq!(resolve("http://h:1/a/mcp", "https://evil.example/x"), "https://evil.example/x");
    }
}
