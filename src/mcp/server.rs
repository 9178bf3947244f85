//! One MCP server's client side: its link (stdio or HTTP), its lifecycle (`initialize`,
//! `notifications/initialized`, `tools/list` page by page), the requests it makes of zero
//! (`ping`, `roots/list`; anything else is "method not found"), and its calls.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::config::{ServerConfig, Transport};
use super::http::HttpLink;
use super::stdio::StdioLink;
use super::wire::LinkError;
use super::wire::{self, Incoming};

/// The protocol version zero offers, and the older ones it accepts from a server.
pub const PROTOCOL_VERSION: &str = "2025-11-25";
const ACCEPTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// `tools/list` pages read from one server, and tools kept of its list.
const MAX_PAGES: usize = 100;
const MAX_LISTED: usize = 10_000;
/// Answers kept that are not (yet) waited for: calls run one at a time, so a few is plenty,
/// and a late answer to a call that timed out is let go.
const MAX_STRAY_ANSWERS: usize = 4;
/// Rounds of reading one pump makes.
const PUMP_ROUNDS: usize = 16;
/// The most one server's tool list may weigh (names, descriptions, schemas).
const MAX_LISTED_BYTES: usize = 16 * 1024 * 1024;
/// How long zero's answer to a server's request may take to write.
const REPLY_WAIT: Duration = Duration::from_secs(2);

/// How zero reaches a server.
pub enum Link {
    Stdio(StdioLink),
    Http(HttpLink),
}

impl Link {
    /// Sends a message by `deadline`; a stdio write also gives up when `interrupt_fd` wakes.
    fn send(
        &mut self,
        message: &Value,
        deadline: Instant,
        interrupt_fd: i32,
    ) -> Result<(), LinkError> {
        match self {
            Link::Stdio(link) => link.send(message, deadline, interrupt_fd),
            Link::Http(link) => link.send(message, deadline),
        }
    }

    pub fn fds(&self) -> Vec<i32> {
        match self {
            Link::Stdio(link) => link.fds().to_vec(),
            Link::Http(link) => vec![link.fd()],
        }
    }

    fn notifier(&self) -> Option<Notifier> {
        match self {
            Link::Stdio(link) => link.notifier().map(Notifier::Stdio),
            Link::Http(link) => Some(Notifier::Http(link.notifier())),
        }
    }

    fn receive(&mut self) -> Result<Vec<String>, LinkError> {
        match self {
            Link::Stdio(link) => link.receive(),
            Link::Http(link) => Ok(link.receive()),
        }
    }

    fn stderr_line(&mut self) -> Option<String> {
        match self {
            Link::Stdio(link) => link.last_stderr_line(),
            Link::Http(_) => None,
        }
    }

    fn close(&mut self, why: &str) {
        match self {
            Link::Stdio(link) => {
                link.close(why);
            }
            Link::Http(link) => link.close(why),
        }
    }

    fn hang_up(&mut self, deadline: Instant) {
        match self {
            Link::Stdio(link) => link.hang_up(),
            Link::Http(link) => link.hang_up(deadline.saturating_duration_since(Instant::now())),
        }
    }
}

/// How a signal's ending reaches a server to cancel the call it waits on.
pub enum Notifier {
    Stdio(super::stdio::Notifier),
    Http(super::http::Notifier),
}

impl Notifier {
    pub fn notify(&self, message: &Value, within: Duration) {
        match self {
            Notifier::Stdio(n) => n.notify(message, within),
            Notifier::Http(n) => n.notify(message, within),
        }
    }
}

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// `annotations.readOnlyHint: true`.
    pub read_only: bool,
    /// `execution.taskSupport: "required"`: callable only as a task, which zero does not offer.
    pub needs_tasks: bool,
}

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// Waiting for the answer to `initialize` (request `id`).
    Initializing {
        id: u64,
    },
    /// Waiting for a `tools/list` page; `fresh` holds the pages read so far.
    Listing {
        id: u64,
        pages: usize,
    },
    Ready,
    Failed(String),
}

pub struct Server {
    pub config: ServerConfig,
    link: Option<Link>,
    pub phase: Phase,
    next_id: u64,
    pub protocol: Option<String>,
    pub tools: Vec<RemoteTool>,
    /// The list being read (replaces `tools` when complete), and the cursors it gave.
    fresh: Vec<RemoteTool>,
    cursors: Vec<String>,
    listed_bytes: usize,
    /// When the current start or listing must be over.
    pub deadline: Instant,
    answers: Vec<(u64, Result<Value, LinkError>)>,
    /// The server said its tools changed: they are listed again before the next model call.
    pub list_changed: bool,
    /// The `roots/list` answer: the workspace and added directories.
    roots: Value,
    /// Its failure has been reported (at its start, or when a later look found it).
    pub failure_reported: bool,
    /// Why its tool list was cut short (too many tools or pages), when it was.
    pub listing_cut: Option<String>,
}

/// What a server link needs from the run.
pub struct Context {
    pub net: crate::net::http::NetSettings,
    pub roots: crate::net::http::ExtraRoots,
    pub env_remove: Vec<std::ffi::OsString>,
    /// The workspace first, then the added directories.
    pub directories: Vec<std::path::PathBuf>,
}

impl Server {
    /// Starts the server's process or session and sends `initialize`; a server that cannot
    /// even start is returned failed.
    pub fn start(config: &ServerConfig, context: &Context) -> Server {
        let now = Instant::now();
        let mut server = Server {
            config: config.clone(),
            link: None,
            phase: Phase::Initializing { id: 1 },
            next_id: 1,
            protocol: None,
            tools: Vec::new(),
            fresh: Vec::new(),
            cursors: Vec::new(),
            listed_bytes: 0,
            deadline: now + config.startup_timeout,
            answers: Vec::new(),
            list_changed: false,
            roots: roots_answer(&context.directories),
            failure_reported: false,
            listing_cut: None,
        };
        let link = match &config.transport {
            Transport::Stdio { command, args, env, cwd } => {
                let workspace = context.directories.first().cloned().unwrap_or_default();
                let cwd = cwd.as_ref().map_or(workspace.clone(), |c| workspace.join(c));
                let launch = super::stdio::Launch {
                    command,
                    args,
                    env,
                    cwd: &cwd,
                    env_remove: &context.env_remove,
                };
                StdioLink::start(&launch).map(Link::Stdio)
            }
            Transport::Http { url, headers } => {
                let http = crate::net::http::Http::new(context.net.clone(), &context.roots, url);
                HttpLink::new(http, url, headers).map(Link::Http)
            }
        };
        match link {
            Ok(link) => server.link = Some(link),
            Err(why) => {
                server.phase = Phase::Failed(why.to_string());
                return server;
            }
        }
        let initialize = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"roots": {"listChanged": false}},
            "clientInfo": {"name": "zero", "version": env!("CARGO_PKG_VERSION")},
        });
        let id = server.take_id();
        server.phase = Phase::Initializing { id };
        server.send(&wire::request(id, "initialize", initialize));
        server
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Still starting (or listing its tools again).
    pub fn busy(&self) -> bool {
        matches!(self.phase, Phase::Initializing { .. } | Phase::Listing { .. })
    }

    pub fn failure(&self) -> Option<&str> {
        match &self.phase {
            Phase::Failed(why) => Some(why),
            _ => None,
        }
    }

    fn take_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a message; a link that breaks fails the server.
    fn send(&mut self, message: &Value) {
        let deadline = Instant::now()
            + REPLY_WAIT.max(self.deadline.saturating_duration_since(Instant::now()));
        let Some(link) = self.link.as_mut() else { return };
        if let Err(why) = link.send(message, deadline, -1) {
            self.fail(&why.to_string());
        }
    }

    /// Fails the server for good, with the last line of its stderr; its link is closed.
    pub fn fail(&mut self, why: &str) {
        if matches!(self.phase, Phase::Failed(_)) {
            return;
        }
        let stderr = self.link.as_mut().and_then(Link::stderr_line);
        let why = match stderr {
            Some(line) => format!("{why} (stderr: {line})"),
            None => why.to_string(),
        };
        if let Some(link) = self.link.as_mut() {
            link.close(&why);
        }
        self.phase = Phase::Failed(why);
    }

    /// The descriptors to wait on for this server (none once it failed).
    pub fn fds(&self) -> Vec<i32> {
        match (&self.phase, &self.link) {
            (Phase::Failed(_), _) | (_, None) => Vec::new(),
            (_, Some(link)) => link.fds(),
        }
    }

    /// Reads and handles whatever the server has said.
    /// Lines a write found while it waited are handled here too (no wakeup would come for
    /// them), within a bound of rounds so a server that writes without pause cannot hold it.
    pub fn pump(&mut self) {
        for _ in 0..PUMP_ROUNDS {
            if !self.pump_once() {
                return;
            }
        }
    }

    /// One round of [`Server::pump`]: false when nothing was there.
    fn pump_once(&mut self) -> bool {
        if matches!(self.phase, Phase::Failed(_)) {
            return false;
        }
        let Some(link) = self.link.as_mut() else { return false };
        let texts = match link.receive() {
            Ok(texts) => texts,
            Err(why) => {
                self.fail(&why.to_string());
                return false;
            }
        };
        if texts.is_empty() {
            return false;
        }
        for text in texts {
            match wire::parse(&text) {
                Ok(messages) => {
                    for message in messages {
                        self.handle(message);
                    }
                }
                Err(why) => {
                    self.fail(&why.to_string());
                    return false;
                }
            }
            if matches!(self.phase, Phase::Failed(_)) {
                return false;
            }
        }
        true
    }

    fn handle(&mut self, message: Incoming) {
        match message {
            // An answer to a request zero has not made yet is not trusted to be one later.
            Incoming::Response { id, .. } if id > self.next_id => {}
            Incoming::Response { id, result } => match self.phase.clone() {
                Phase::Initializing { id: want } if id == want => self.initialized(result),
                Phase::Listing { id: want, pages } if id == want => self.listed(result, pages),
                _ => {
                    if self.answers.len() == MAX_STRAY_ANSWERS {
                        let _ = self.answers.remove(0);
                    }
                    self.answers.push((id, result));
                }
            },
            Incoming::Request { id, method, .. } => {
                let reply = match method.as_str() {
                    "ping" => wire::reply(&id, json!({})),
                    "roots/list" => wire::reply(&id, self.roots.clone()),
                    _ => wire::reply_error(
                        &id,
                        wire::METHOD_NOT_FOUND,
                        &format!("zero does not offer {method}"),
                    ),
                };
                self.send(&reply);
            }
            Incoming::Notification { method, .. } => {
                if method == "notifications/tools/list_changed" {
                    self.list_changed = true;
                }
            }
        }
    }

    fn initialized(&mut self, result: Result<Value, LinkError>) {
        let result = match result {
            Ok(result) => result,
            Err(why) => return self.fail(&format!("initialize failed: {why}")),
        };
        let version = result.get("protocolVersion").and_then(Value::as_str).unwrap_or_default();
        if !ACCEPTED_VERSIONS.contains(&version) {
            let shown = if version.is_empty() { "none" } else { version };
            return self.fail(&format!(
                "offered protocol version {shown}; zero speaks {}",
                ACCEPTED_VERSIONS.join(", ")
            ));
        }
        self.protocol = Some(version.to_string());
        if let Some(Link::Http(link)) = &self.link {
            link.set_protocol(version);
        }
        self.send(&wire::notification("notifications/initialized", Value::Null));
        if let Some(Link::Http(link)) = &self.link {
            link.listen();
        }
        // A server that offers no tools (only prompts or resources) is ready with none.
        if result.pointer("/capabilities/tools").is_none() {
            self.phase = Phase::Ready;
            return;
        }
        self.list_tools();
    }

    /// Asks for the tool list again from its first page.
    pub fn list_tools(&mut self) {
        if matches!(self.phase, Phase::Failed(_)) {
            return;
        }
        self.list_changed = false;
        self.fresh.clear();
        self.cursors.clear();
        self.listed_bytes = 0;
        self.listing_cut = None;
        let id = self.take_id();
        self.phase = Phase::Listing { id, pages: 1 };
        self.send(&wire::request(id, "tools/list", json!({})));
    }

    fn listed(&mut self, result: Result<Value, LinkError>, pages: usize) {
        let result = match result {
            Ok(result) => result,
            Err(why) => return self.fail(&format!("tools/list failed: {why}")),
        };
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return self.fail("tools/list answered without a tools array");
        };
        self.listed_bytes += tools.iter().map(|t| t.to_string().len()).sum::<usize>();
        if self.listed_bytes > MAX_LISTED_BYTES {
            return self.fail(&format!("listed more than {} MiB of tools", MAX_LISTED_BYTES >> 20));
        }
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str).filter(|n| !n.is_empty())
            else {
                continue;
            };
            if self.fresh.len() == MAX_LISTED {
                self.listing_cut =
                    Some(format!("it lists more than {MAX_LISTED} tools; the rest are left out"));
            } else {
                self.fresh.push(RemoteTool {
                    name: name.to_string(),
                    description: tool
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input_schema: match tool.get("inputSchema") {
                        Some(schema @ Value::Object(_)) => schema.clone(),
                        _ => json!({"type": "object"}),
                    },
                    read_only: tool.pointer("/annotations/readOnlyHint")
                        == Some(&Value::Bool(true)),
                    needs_tasks: tool.pointer("/execution/taskSupport").and_then(Value::as_str)
                        == Some("required"),
                });
            }
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(cursor) if self.cursors.iter().any(|c| c == cursor) => {
                self.fail(&format!("tools/list gave the cursor \"{cursor}\" twice"));
            }
            Some(cursor) if !cursor.is_empty() && pages == MAX_PAGES => {
                self.listing_cut = Some(format!(
                    "its tool list has more than {MAX_PAGES} pages; the rest are left out"
                ));
                self.tools = std::mem::take(&mut self.fresh);
                self.phase = Phase::Ready;
            }
            Some(cursor) if !cursor.is_empty() && pages < MAX_PAGES => {
                self.cursors.push(cursor.to_string());
                let id = self.take_id();
                self.phase = Phase::Listing { id, pages: pages + 1 };
                self.send(&wire::request(id, "tools/list", json!({"cursor": cursor})));
            }
            _ => {
                self.tools = std::mem::take(&mut self.fresh);
                self.phase = Phase::Ready;
            }
        }
    }

    /// Sends `tools/call`; its id, to wait for with [`Server::answer`].
    /// The id the next request will carry (taken by [`Server::call`]).
    pub fn reserve_id(&mut self) -> u64 {
        self.take_id()
    }

    /// Sends request `id` (from [`Server::reserve_id`]) calling `tool`.
    pub fn call(
        &mut self,
        id: u64,
        tool: &str,
        arguments: Value,
        deadline: Instant,
        interrupt_fd: i32,
    ) -> Result<u64, LinkError> {
        if let Some(why) = self.failure() {
            return Err(LinkError::Closed(why.to_string()));
        }
        let request =
            wire::request(id, "tools/call", json!({"name": tool, "arguments": arguments}));
        let Some(link) = self.link.as_mut() else {
            return Err(LinkError::Closed("not connected".into()));
        };
        if let Err(why) = link.send(&request, deadline, interrupt_fd) {
            self.fail(&why.to_string());
            return Err(LinkError::Closed(self.failure().unwrap_or_default().to_string()));
        }
        Ok(id)
    }

    /// What reaches this server from a signal's ending (none without a link).
    pub fn notifier(&self) -> Option<Notifier> {
        self.link.as_ref()?.notifier()
    }

    /// The answer to request `id`, once it has come.
    pub fn answer(&mut self, id: u64) -> Option<Result<Value, LinkError>> {
        let at = self.answers.iter().position(|(got, _)| *got == id)?;
        Some(self.answers.remove(at).1)
    }

    /// Tells the server zero gave up on request `id`.
    pub fn cancel(&mut self, id: u64, reason: &str) {
        if self.failure().is_none() {
            self.send(&wire::notification(
                "notifications/cancelled",
                json!({"requestId": id, "reason": reason}),
            ));
        }
    }

    /// Ends the server's session politely (stdin closed, or the HTTP session deleted by
    /// `deadline`).
    pub fn hang_up(&mut self, deadline: Instant) {
        if let Some(link) = self.link.as_mut() {
            link.hang_up(deadline);
        }
    }

    /// Closes the link for good: a stdio server's process is stopped.
    pub fn close(&mut self, why: &str) {
        if let Some(link) = self.link.as_mut() {
            link.close(why);
        }
    }
}

#[cfg(test)]
impl Server {
    /// A ready server with these tools and no link, for the offering's tests.
    pub fn ready(config: ServerConfig, tools: Vec<RemoteTool>) -> Server {
        Server {
            config,
            link: None,
            phase: Phase::Ready,
            next_id: 1,
            protocol: Some(PROTOCOL_VERSION.to_string()),
            tools,
            fresh: Vec::new(),
            cursors: Vec::new(),
            listed_bytes: 0,
            deadline: Instant::now(),
            answers: Vec::new(),
            list_changed: false,
            roots: Value::Null,
            failure_reported: false,
            listing_cut: None,
        }
    }
}

/// `roots/list`'s answer: each directory as a `file://` URI.
fn roots_answer(directories: &[std::path::PathBuf]) -> Value {
    let roots: Vec<Value> = directories
        .iter()
        .map(|dir| {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "/".into());
            json!({"uri": file_uri(dir), "name": name})
        })
        .collect();
    json!({"roots": roots})
}

/// A path as a `file://` URI, percent-encoding every byte but the unreserved ones and `/`.
pub fn file_uri(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_file_uris() {
        assert_eq!(
            file_uri(std::path::Path::new("/home/u/my repo/é")),
            "file:///home/u/my%20repo/%C3%A9"
        );
        let answer = roots_answer(&["/w".into(), "/lib/x".into()]);
        assert_eq!(
            answer,
            json!({"roots": [{"uri": "file:///w", "name": "w"}, {"uri": "file:///lib/x", "name": "x"}]})
        );
    }
}
