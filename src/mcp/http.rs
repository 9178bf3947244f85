//! The streamable HTTP transport. Each JSON-RPC message is POSTed with `Accept:
//! application/json, text/event-stream`; the answer is a JSON body or an event stream read up
//! to the response. The `Mcp-Session-Id` the server gives is sent on every later request, with
//! `MCP-Protocol-Version` once it is agreed. A 404 for a session means the server forgot it:
//! zero initializes again (one thread at a time), resends, and lists the tools again. A stream
//! that ends before its response is resumed with a GET and `Last-Event-ID` after the stream's
//! `retry` time. After the handshake a GET opens the server's listening stream, for its own
//! requests and notifications. Redirects are followed only within the same origin. The session
//! is DELETEd at the end.
//!
//! The HTTP client blocks, so the blocking happens on `zero-mcp-http` threads, which hand every
//! message they read to the main loop and wake it through a socket it polls: one per request
//! waiting for its answer, one per link sending what needs no answer (notifications and zero's
//! answers to the server's requests) in order, and one per link for the listening stream. A
//! request is POSTed only after everything queued before it, so `notifications/initialized`
//! reaches the server before `tools/list`.

use std::io::{BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::wire::LinkError;
use super::wire::{self, MAX_MESSAGE_BYTES};
use crate::net::http::Http;
use crate::net::sse::{Frame, SseReader};
use crate::sys::threads::{self, Named};

/// Messages read from the server and not yet taken by the main loop.
const INBOX: usize = 256;
/// Messages that need no answer, queued to be sent; past it, more are dropped.
const OUTBOX: usize = 64;
/// Resumptions of one request's stream that brought nothing new.
const MAX_IDLE_RESUMES: u32 = 5;
/// Same-origin redirects followed for one request.
const MAX_REDIRECTS: u32 = 3;
/// The wait before resuming when the stream named none.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The listening stream is given up after this many opens in a row that fail.
const MAX_LISTEN_FAILURES: u32 = 5;
/// How long one listening request may stay open (and silent) before it is made again.
const LISTEN_FOR: Duration = Duration::from_secs(3600);

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every link's endpoint, so a run ended by a signal can still end their sessions.
static ENDPOINTS: Mutex<Vec<std::sync::Weak<Endpoint>>> = Mutex::new(Vec::new());

/// Ends every open session (DELETE), all within `within`: for a run a signal ends, whose
/// links are never dropped.
pub fn end_sessions(within: Duration) {
    let deadline = Instant::now() + within;
    let endpoints: Vec<Arc<Endpoint>> =
        locked(&ENDPOINTS).iter().filter_map(std::sync::Weak::upgrade).collect();
    for endpoint in endpoints {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        delete_session(&endpoint, left);
    }
}

/// Where a pending call's cancellation goes when a signal ends the run: the link's endpoint.
#[derive(Clone)]
pub struct Notifier(Arc<Endpoint>);

impl Notifier {
    /// POSTs `message` (a notification) in the link's session, within `within`.
    pub fn notify(&self, message: &Value, within: Duration) {
        let session = self.0.session();
        let _ = post(&self.0, message, session, Instant::now() + within);
    }
}

/// DELETEs the endpoint's session, if it has one, within `within`.
fn delete_session(endpoint: &Endpoint, within: Duration) {
    endpoint.ended.store(true, Ordering::SeqCst);
    let Some(session) = endpoint.session() else { return };
    let headers = endpoint.headers("application/json, text/event-stream", Some(session));
    let url = endpoint.url();
    let _ = endpoint.http.exchange("DELETE", &url, &headers, None, within);
    endpoint.set_session(None);
}

/// What the threads share with the link.
struct Endpoint {
    http: Http,
    url: Mutex<String>,
    headers: Vec<(String, String)>,
    session: Mutex<Option<String>>,
    protocol: Mutex<Option<String>>,
    /// The `initialize` request, sent again when the server forgets the session.
    initialize: Mutex<Option<Value>>,
    /// Held while the session is made again, so two threads that met a 404 make one.
    reinitializing: Mutex<()>,
    /// How many queued messages have been sent (or given up on), for the ordering of requests.
    posted: Mutex<u64>,
    posted_changed: Condvar,
    /// A listening stream is open (or being opened).
    listening: AtomicBool,
    /// The link was closed: the threads stop.
    ended: AtomicBool,
}

impl Endpoint {
    fn url(&self) -> String {
        locked(&self.url).clone()
    }

    fn session(&self) -> Option<String> {
        locked(&self.session).clone()
    }

    fn set_session(&self, id: Option<String>) {
        *locked(&self.session) = id;
    }

    /// The headers of a request: the user's, then the session's (`session`, when it has one).
    fn headers(&self, accept: &str, session: Option<String>) -> Vec<(&str, String)> {
        let mut headers: Vec<(&str, String)> =
            self.headers.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        headers.push(("accept", accept.to_string()));
        if let Some(session) = session {
            headers.push(("mcp-session-id", session));
        }
        if let Some(version) = locked(&self.protocol).clone() {
            headers.push(("mcp-protocol-version", version));
        }
        headers
    }

    /// Waits until `count` queued messages have been sent, or `deadline`.
    fn wait_posted(&self, count: u64, deadline: Instant) {
        let mut posted = locked(&self.posted);
        while *posted < count && !self.ended.load(Ordering::SeqCst) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            posted = match self.posted_changed.wait_timeout(posted, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    fn one_more_posted(&self) {
        *locked(&self.posted) += 1;
        self.posted_changed.notify_all();
    }
}

/// Where the threads put what they read.
#[derive(Clone)]
struct Mailbox {
    /// Bounded: a server that sends faster than zero reads waits (in its thread).
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
    /// The sending thread's queue, once it runs, and how many messages were queued.
    outbox: Option<SyncSender<(Value, Instant)>>,
    queued: u64,
    closed: Option<String>,
}

impl HttpLink {
    /// What a signal's ending uses to reach the server.
    pub fn notifier(&self) -> Notifier {
        Notifier(self.endpoint.clone())
    }

    pub fn new(http: Http, url: &str, headers: &[(String, String)]) -> Result<HttpLink, LinkError> {
        let (wake, wake_writer) =
            UnixStream::pair().map_err(|e| LinkError::Setup(format!("cannot set up: {e}")))?;
        wake.set_nonblocking(true).map_err(|e| LinkError::Setup(format!("cannot set up: {e}")))?;
        wake_writer
            .set_nonblocking(true)
            .map_err(|e| LinkError::Setup(format!("cannot set up: {e}")))?;
        let (sender, inbox) = sync_channel(INBOX);
        let link = HttpLink {
            endpoint: Arc::new(Endpoint {
                http: http.without_redirects(),
                url: Mutex::new(url.to_string()),
                headers: headers.to_vec(),
                session: Mutex::new(None),
                protocol: Mutex::new(None),
                initialize: Mutex::new(None),
                reinitializing: Mutex::new(()),
                posted: Mutex::new(0),
                posted_changed: Condvar::new(),
                listening: AtomicBool::new(false),
                ended: AtomicBool::new(false),
            }),
            mailbox: Mailbox { messages: sender, wake: Arc::new(wake_writer) },
            inbox,
            wake,
            outbox: None,
            queued: 0,
            closed: None,
        };
        let mut endpoints = locked(&ENDPOINTS);
        endpoints.retain(|e| e.strong_count() > 0);
        endpoints.push(Arc::downgrade(&link.endpoint));
        drop(endpoints);
        Ok(link)
    }

    /// The protocol version agreed, sent on every later request.
    pub fn set_protocol(&self, version: &str) {
        *locked(&self.endpoint.protocol) = Some(version.into());
    }

    /// Sends one message: a request on a thread of its own (its answer arrives through
    /// `receive`), anything else through the link's sending thread, in order.
    pub fn send(&mut self, message: &Value, deadline: Instant) -> Result<(), LinkError> {
        if let Some(why) = &self.closed {
            return Err(LinkError::Closed(why.clone()));
        }
        let Some(id) = our_request_id(message) else {
            return self.queue(message, deadline);
        };
        if message.get("method").and_then(Value::as_str) == Some("initialize") {
            *locked(&self.endpoint.initialize) = Some(message.clone());
        }
        let after = self.queued;
        let (endpoint, mailbox, message) =
            (self.endpoint.clone(), self.mailbox.clone(), message.clone());
        threads::spawn(Named::McpHttp, move || {
            endpoint.wait_posted(after, deadline);
            if let Err(why) = exchange(&endpoint, &message, Some(id), deadline, &mailbox) {
                mailbox.deliver(wire::transport_failure(id, &why.to_string()).to_string());
            }
        })
        .map(|_| ())
        .map_err(|err| LinkError::Setup(format!("cannot start a thread for the request: {err}")))
    }

    /// Queues a message that needs no answer for the sending thread (started at the first);
    /// a full queue drops it, as the server would have to wait for it anyway.
    fn queue(&mut self, message: &Value, deadline: Instant) -> Result<(), LinkError> {
        if self.outbox.is_none() {
            let (sender, queue) = sync_channel::<(Value, Instant)>(OUTBOX);
            let (endpoint, mailbox) = (self.endpoint.clone(), self.mailbox.clone());
            threads::spawn(Named::McpHttp, move || {
                for (message, deadline) in queue {
                    if !endpoint.ended.load(Ordering::SeqCst) {
                        let _ = exchange(&endpoint, &message, None, deadline, &mailbox);
                    }
                    endpoint.one_more_posted();
                }
            })
            .map_err(|err| LinkError::Setup(format!("cannot start a thread for sending: {err}")))?;
            self.outbox = Some(sender);
        }
        let Some(outbox) = &self.outbox else { return Ok(()) };
        match outbox.try_send((message.clone(), deadline)) {
            Ok(()) => self.queued += 1,
            Err(TrySendError::Full(_)) => {}
            Err(TrySendError::Disconnected(_)) => {
                return Err(LinkError::Closed("its sending thread ended".into()))
            }
        }
        Ok(())
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
        self.endpoint.ended.store(true, Ordering::SeqCst);
    }

    /// Opens the server's listening stream (see [`listen`]).
    pub fn listen(&self) {
        listen(&self.endpoint, &self.mailbox);
    }

    /// Ends the session on the server (DELETE), what was queued to send first, all within
    /// `within`.
    pub fn hang_up(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        self.endpoint.wait_posted(self.queued, deadline);
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            self.endpoint.ended.store(true, Ordering::SeqCst);
            return;
        }
        delete_session(&self.endpoint, left);
    }
}

/// Opens the stream on which the server sends what is not an answer to a request of zero's
/// (its own requests, such as `roots/list`, and notifications), on a thread that keeps it
/// open, again after its `retry` time when it ends, until the link closes. A server that
/// offers none (405, or no event stream) is left alone; opens that fail are given up after
/// [`MAX_LISTEN_FAILURES`] in a row. One stream per link.
fn listen(endpoint: &Arc<Endpoint>, mailbox: &Mailbox) {
    if endpoint.listening.swap(true, Ordering::SeqCst) {
        return;
    }
    let (endpoint, mailbox) = (endpoint.clone(), mailbox.clone());
    let started = threads::spawn(Named::McpHttp, move || {
        keep_listening(&endpoint, &mailbox);
        endpoint.listening.store(false, Ordering::SeqCst);
    });
    // Without a thread there is no stream: answers to zero's own requests still come.
    drop(started);
}

fn keep_listening(endpoint: &Endpoint, mailbox: &Mailbox) {
    let mut last = String::new();
    let mut retry = DEFAULT_RETRY;
    let mut failures = 0;
    while failures < MAX_LISTEN_FAILURES && !endpoint.ended.load(Ordering::SeqCst) {
        let mut headers = endpoint.headers("text/event-stream", endpoint.session());
        if !last.is_empty() {
            headers.push(("last-event-id", last.clone()));
        }
        let url = endpoint.url();
        match endpoint.http.exchange("GET", &url, &headers, None, LISTEN_FOR) {
            Ok(response) if is_event_stream(&response) => {
                failures = 0;
                let mut stream = SseReader::new(BufReader::new(response.into_body().into_reader()));
                stream.resume_from(&last, Some(retry));
                // No id of zero's is answered here: read until the stream ends.
                let _ = read_stream(&mut stream, u64::MAX, mailbox);
                last = stream.last_event_id().to_string();
                retry = stream.retry().unwrap_or(DEFAULT_RETRY);
            }
            // No listening stream on this server, or no session any more.
            Ok(response) if matches!(response.status().as_u16(), 404 | 405) => return,
            _ => failures += 1,
        }
        if endpoint.ended.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(retry.min(LISTEN_FOR));
    }
}

fn is_event_stream(response: &Response) -> bool {
    let kind = response.headers().get("content-type").and_then(|v| v.to_str().ok());
    response.status().is_success() && kind.is_some_and(|k| k.starts_with("text/event-stream"))
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

/// POSTs a message (following same-origin redirects), with `session`'s id when given.
fn post(
    endpoint: &Endpoint,
    message: &Value,
    session: Option<String>,
    deadline: Instant,
) -> Result<Response, LinkError> {
    let body = message.to_string();
    let mut headers = endpoint.headers("application/json, text/event-stream", session);
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
        let target =
            response.headers().get("location").and_then(|v| v.to_str().ok()).ok_or_else(|| {
                LinkError::Http(format!("HTTP {} without a Location", response.status().as_u16()))
            })?;
        let next = resolve(&url, target);
        if origin(&next) != origin(&url) {
            return Err(LinkError::Http(format!(
                "redirected to {} (another host): not followed",
                origin(&next).unwrap_or("an invalid URL")
            )));
        }
        url = next;
        *locked(&endpoint.url) = url.clone();
    }
    Err(LinkError::Http(format!("more than {MAX_REDIRECTS} redirects")))
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

/// One message's whole exchange: POST, a new session when the server forgot this one, then
/// the answer to request `id` (none is read for other messages).
fn exchange(
    endpoint: &Arc<Endpoint>,
    message: &Value,
    id: Option<u64>,
    deadline: Instant,
    mailbox: &Mailbox,
) -> Result<(), LinkError> {
    let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    let session = endpoint.session().filter(|_| !is_initialize);
    let mut response = post(endpoint, message, session.clone(), deadline)?;
    if response.status().as_u16() == 404 && session.is_some() {
        initialize_again(endpoint, session, deadline, mailbox)?;
        response = post(endpoint, message, endpoint.session(), deadline)?;
    }
    let status = response.status().as_u16();
    if status >= 400 {
        return Err(LinkError::Http(status_error(response)));
    }
    if is_initialize {
        endpoint.set_session(session_of(&response));
    }
    let Some(id) = id else { return Ok(()) };
    if status == 202 || status == 204 {
        return Err(LinkError::Protocol(format!("HTTP {status} without an answer to the request")));
    }
    read_answer(endpoint, response, id, deadline, mailbox)
}

fn session_of(response: &Response) -> Option<String> {
    response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string)
}

/// The server forgot session `stale`: `initialize` and `notifications/initialized` again,
/// unless another thread has already done so; then the tools are listed again (the main loop
/// is told their list may have changed) and the listening stream reopened.
fn initialize_again(
    endpoint: &Arc<Endpoint>,
    stale: Option<String>,
    deadline: Instant,
    mailbox: &Mailbox,
) -> Result<(), LinkError> {
    let _one = locked(&endpoint.reinitializing);
    if endpoint.session() != stale {
        return Ok(());
    }
    let request = locked(&endpoint.initialize).clone();
    let request = request.ok_or_else(|| {
        LinkError::Protocol("the session expired before it was initialized".to_string())
    })?;
    let response = post(endpoint, &request, None, deadline)?;
    if response.status().as_u16() >= 400 {
        return Err(LinkError::Http(format!("initializing again: {}", status_error(response))));
    }
    let session = session_of(&response);
    // The answer is the one the first initialize had; only the session is new.
    let (quiet, _) = sync_channel(0);
    let (_, writer) = UnixStream::pair().map_err(|e| LinkError::Setup(e.to_string()))?;
    let discard = Mailbox { messages: quiet, wake: Arc::new(writer) };
    if let Some(id) = our_request_id(&request) {
        read_answer(endpoint, response, id, deadline, &discard)?;
    }
    let initialized = wire::notification("notifications/initialized", Value::Null);
    let response = post(endpoint, &initialized, session.clone(), deadline)?;
    if response.status().as_u16() >= 400 {
        return Err(LinkError::Http(format!("initializing again: {}", status_error(response))));
    }
    endpoint.set_session(session);
    let changed = wire::notification("notifications/tools/list_changed", Value::Null);
    mailbox.deliver(changed.to_string());
    listen(endpoint, mailbox);
    Ok(())
}

fn status_error(response: Response) -> String {
    let status = response.status();
    let mut text = String::new();
    let _ = response.into_body().into_reader().take(4096).read_to_string(&mut text);
    // Not cut further: a cut could leave part of a secret the redactor cannot recognise.
    let detail = crate::text::one_line(text.trim());
    let reason = status.canonical_reason().unwrap_or("error");
    if detail.is_empty() {
        format!("HTTP {} {reason}", status.as_u16())
    } else {
        format!("HTTP {} {reason}: {detail}", status.as_u16())
    }
}

/// Reads the answer to request `id`: a JSON body, or an event stream up to the response,
/// resumed with GET and `Last-Event-ID` when it ends early (after the stream's `retry` time,
/// as the standard says; given up when that passes the deadline, or after
/// [`MAX_IDLE_RESUMES`] resumptions in a row that brought nothing).
fn read_answer(
    endpoint: &Endpoint,
    response: Response,
    id: u64,
    deadline: Instant,
    mailbox: &Mailbox,
) -> Result<(), LinkError> {
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
            .map_err(|e| LinkError::Http(format!("reading the answer: {e}")))?;
        if text.len() > MAX_MESSAGE_BYTES {
            return Err(LinkError::Protocol(format!(
                "an answer over {} MiB",
                MAX_MESSAGE_BYTES >> 20
            )));
        }
        mailbox.deliver(text);
        return Ok(());
    }
    let mut stream = SseReader::new(BufReader::new(body));
    let mut idle = 0;
    loop {
        let before = stream.last_event_id().to_string();
        if read_stream(&mut stream, id, mailbox)? {
            return Ok(());
        }
        let last = stream.last_event_id().to_string();
        if last.is_empty() {
            return Err(LinkError::Protocol(
                "the event stream ended before the response, with no event id to resume from"
                    .into(),
            ));
        }
        idle = if last == before { idle + 1 } else { 0 };
        if idle == MAX_IDLE_RESUMES {
            return Err(LinkError::Protocol(format!(
                "the event stream ended before the response {MAX_IDLE_RESUMES} times without a new event"
            )));
        }
        let wait = stream.retry().unwrap_or(DEFAULT_RETRY);
        if Instant::now() + wait >= deadline {
            return Err(LinkError::Timeout("the event stream ended before the response".into()));
        }
        std::thread::sleep(wait);
        let mut headers = endpoint.headers("text/event-stream", endpoint.session());
        headers.push(("last-event-id", last.clone()));
        let url = endpoint.url();
        let response = endpoint.http.exchange("GET", &url, &headers, None, left(deadline))?;
        if response.status().as_u16() >= 400 {
            return Err(LinkError::Http(format!(
                "resuming the event stream: {}",
                status_error(response)
            )));
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
) -> Result<bool, LinkError> {
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
                return Err(LinkError::Protocol(format!(
                    "the event stream held text that is not an event: {start}"
                )));
            }
            Ok(None) => return Ok(false),
            // A broken connection is resumed like an ended stream.
            Err(crate::net::sse::SseError::Io(_)) => return Ok(false),
            Err(err) => return Err(LinkError::Protocol(format!("the event stream: {err}"))),
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
