//! The user's own tools: an MCP client over stdio and streamable HTTP.
//!
//! Every configured server starts at once when the run starts; zero waits on all of them in
//! one `poll` loop (stdio pipes, and the wake-up sockets of HTTP request threads) until each
//! is ready or failed or its startup deadline passes. Their tools are offered to the model as
//! `mcp__<server>__<tool>`, within per-run limits; a call waits the same way on its server,
//! its deadline and an interrupt, and sends `notifications/cancelled` when it gives up.
//!
//! Modules: `config` (the `mcpServers` shape), `wire` (JSON-RPC), `stdio` and `http` (the
//! transports), `server` (one server's lifecycle), `shape` (names and results as text).

pub mod config;
mod http;
mod server;
mod shape;
pub(crate) mod stdio;
pub(crate) mod wire;

use std::collections::HashSet;

use server::RemoteTool;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub use http::end_sessions as end_http_sessions;
pub use server::{Context, Server};
pub use shape::exposed_name;

use crate::sys::poll::{self, PollFd, POLLIN};

/// The calls waiting on their servers (one at a time in a run), so that an ending from
/// outside the main loop (SIGINT, SIGTERM) tells each server its request is cancelled before
/// the server is stopped.
static PENDING: std::sync::Mutex<Vec<(u64, server::Notifier)>> = std::sync::Mutex::new(Vec::new());

/// Sends `notifications/cancelled` for every pending call, all within `within` (a signal's
/// ending, before the servers are stopped).
pub fn cancel_pending(reason: &str, within: Duration) {
    let deadline = Instant::now() + within;
    let Some(mut pending) = crate::sys::threads::lock_for(&PENDING, within) else { return };
    for (id, notifier) in pending.drain(..) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        let message = wire::notification(
            "notifications/cancelled",
            json!({"requestId": id, "reason": reason}),
        );
        notifier.notify(&message, left);
    }
}

/// A call registered as pending while its guard lives.
struct Pending(u64);

impl Pending {
    fn register(id: u64, notifier: Option<server::Notifier>) -> Pending {
        if let Some(notifier) = notifier {
            PENDING.lock().unwrap_or_else(|p| p.into_inner()).push((id, notifier));
        }
        Pending(id)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        PENDING.lock().unwrap_or_else(|p| p.into_inner()).retain(|(id, _)| *id != self.0);
    }
}

/// What every MCP tool's name starts with.
pub const PREFIX: &str = "mcp__";

/// MCP tools offered in one run, and the size of their definitions.
pub const MAX_TOOLS: usize = 128;
pub const MAX_DEFINITIONS: usize = 256 * 1024;

/// A server tool as the model is offered it.
#[derive(Debug, Clone, PartialEq)]
pub struct Offered {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    /// Index into the run's servers.
    pub server: usize,
    pub server_name: String,
    /// The server's own name for it.
    pub tool: String,
    pub description: String,
    pub schema: Value,
    pub read_only: bool,
    /// Its server has `"trust": true`.
    pub trusted: bool,
}

/// An offer being made: the tools taken so far, and what was left out and why.
#[derive(Default)]
struct Offer {
    offered: Vec<Offered>,
    names: HashSet<String>,
    /// The bytes of the definitions taken.
    size: usize,
    warnings: Vec<String>,
    /// The names past the per-run limits.
    over: Vec<String>,
    clashes: usize,
    /// `(server, tool, why)` for each tool left out.
    left_out: Vec<(usize, String, String)>,
}

impl Offer {
    /// One server tool: taken, or left out with its reason (and a warning where the user did
    /// not ask for it to be left out).
    fn consider(
        &mut self,
        index: usize,
        config: &config::ServerConfig,
        tool: &RemoteTool,
        wanted: &dyn Fn(&str, &str) -> bool,
    ) {
        let name = exposed_name(&config.name, &tool.name);
        let allowed = config.enabled_tools.as_ref().is_none_or(|e| e.contains(&tool.name))
            && !config.disabled_tools.contains(&tool.name);
        let leave = |offer: &mut Offer, why: String, warn: bool| {
            if warn {
                offer.warnings.push(format!(
                    "MCP tool \"{}\" of server {} is left out: {why}.",
                    tool.name, config.name
                ));
            }
            offer.left_out.push((index, tool.name.clone(), why));
        };
        if !allowed {
            let why =
                format!("left out by mcpServers.{}.enabledTools or disabledTools", config.name);
            return leave(self, why, false);
        }
        if !wanted(&name, &config.name) {
            return leave(
                self,
                "left out by --enabled-tools or --disabled-tools".to_string(),
                false,
            );
        }
        if tool.needs_tasks {
            let why = "it runs only as a task (taskSupport: required), which zero does not offer";
            return leave(self, why.to_string(), true);
        }
        if tool.input_schema.get("type").is_some_and(|t| t != "object") {
            let why = "its inputSchema is not an object schema, which providers refuse";
            return leave(self, why.to_string(), true);
        }
        if !self.names.insert(name.clone()) {
            self.clashes += 1;
            let why = format!("its name {name} is already taken by another MCP tool");
            return leave(self, why, self.clashes <= MAX_NAMED);
        }
        let definition = json!({"name": name, "description": tool.description, "inputSchema": tool.input_schema});
        let bytes = definition.to_string().len();
        if self.offered.len() == MAX_TOOLS || self.size + bytes > MAX_DEFINITIONS {
            let why = format!(
                "past the per-run limits ({MAX_TOOLS} MCP tools, {} KiB of their definitions)",
                MAX_DEFINITIONS / 1024
            );
            leave(self, why, false);
            self.over.push(name);
            return;
        }
        self.size += bytes;
        self.offered.push(Offered {
            name,
            server: index,
            server_name: config.name.clone(),
            tool: tool.name.clone(),
            description: tool.description.clone(),
            schema: tool.input_schema.clone(),
            read_only: tool.read_only,
            trusted: config.trust,
        });
    }

    /// The warnings, with one each for the name clashes and the tools past the limits that
    /// were not named one by one.
    fn summarize(&mut self) -> Vec<String> {
        let mut warnings = std::mem::take(&mut self.warnings);
        if self.clashes > MAX_NAMED {
            warnings.push(format!(
                "{} more MCP tools are left out: their names are taken by other MCP tools.",
                self.clashes - MAX_NAMED
            ));
        }
        let over = &self.over;
        if !over.is_empty() {
            let shown: Vec<&str> = over.iter().take(MAX_NAMED).map(String::as_str).collect();
            let more = if over.len() > MAX_NAMED {
                format!(" and {} more", over.len() - MAX_NAMED)
            } else {
                String::new()
            };
            warnings.push(format!(
                "{} MCP tool{} left out: a run offers at most {MAX_TOOLS} MCP tools and {} KiB of their definitions: {}{more}.",
                over.len(),
                if over.len() == 1 { " is" } else { "s are" },
                MAX_DEFINITIONS / 1024,
                shown.join(", ")
            ));
        }
        warnings
    }
}

impl Offered {
    /// Why this tool is not offered in a run at this level (`unsafe_mode`: `--auto high`), or
    /// `None` when it is: it runs without asking when it is read-only, its server is trusted,
    /// or the level is high; with a client to ask (`asking`), every tool is offered.
    pub fn withheld(&self, unsafe_mode: bool, asking: bool) -> Option<String> {
        let permitted = self.read_only || self.trusted || unsafe_mode;
        (!asking && !permitted).then(|| {
            format!(
                "needs --auto high (or \"trust\": true for server {}): it is not marked read-only",
                self.server_name
            )
        })
    }
}

/// How a server's start ended, for `mcp_server` and `zero mcp list`.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub name: String,
    pub transport: &'static str,
    pub required: bool,
    /// `None`: ready.
    pub error: Option<String>,
    pub protocol: Option<String>,
    /// The tools offered (after filters, names and limits).
    pub tools: usize,
}

/// A server that failed: the warning for the client, the note for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub warning: String,
    pub note: String,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    pub text: String,
    pub error: bool,
    /// An interrupt stopped the wait (the server was told).
    pub interrupted: bool,
}

/// The run's servers and the tools they offer.
#[derive(Default)]
pub struct Mcp {
    servers: Vec<Server>,
    offered: Vec<Offered>,
    /// The warnings given so far, so an offer made again does not repeat them.
    said: HashSet<String>,
    /// Tools once offered whose server failed since: a later call of one fails at once with
    /// its server's reason, not as a tool zero never heard of.
    gone: Vec<(String, String)>,
    /// Why each listed tool the last offer left out was left out: (server index, the
    /// server's name for the tool, why), for `zero mcp list`.
    left_out: Vec<(usize, String, String)>,
}

/// Tools named one by one in a warning; past that, a count.
const MAX_NAMED: usize = 20;

impl Mcp {
    /// Starts every server at once and waits for each to be ready, failed, or past its
    /// deadline. `stop_early` is asked after each server's start ends; when it says so (a
    /// required server failed) the others are not waited for.
    pub fn start(
        configs: &[config::ServerConfig],
        context: &Context,
        stop_early: &mut dyn FnMut(&Server) -> bool,
    ) -> Mcp {
        let mut servers: Vec<Server> = configs.iter().map(|c| Server::start(c, context)).collect();
        let mut ended = vec![false; servers.len()];
        loop {
            let now = Instant::now();
            for (server, done) in servers.iter_mut().zip(ended.iter_mut()) {
                if *done {
                    continue;
                }
                if server.busy() && now >= server.deadline {
                    // What already arrived counts, however long another server held the loop.
                    server.pump();
                }
                if server.busy() && now >= server.deadline {
                    let ms = server.config.startup_timeout.as_millis();
                    server.fail(&format!(
                        "did not finish starting within {ms} ms (startupTimeoutMs)"
                    ));
                }
                if !server.busy() {
                    *done = true;
                    if stop_early(server) {
                        return Mcp::of(servers);
                    }
                }
            }
            if ended.iter().all(|d| *d) {
                break;
            }
            let waiting: Vec<usize> = (0..servers.len()).filter(|&i| !ended[i]).collect();
            let deadline = waiting.iter().map(|&i| servers[i].deadline).min();
            let mut fds: Vec<PollFd> = Vec::new();
            let mut owners: Vec<usize> = Vec::new();
            for &i in &waiting {
                for fd in servers[i].fds() {
                    fds.push(PollFd::new(fd, POLLIN));
                    owners.push(i);
                }
            }
            if poll::wait(&mut fds, deadline).is_err() {
                continue;
            }
            let mut ready: Vec<usize> =
                fds.iter().zip(&owners).filter(|(f, _)| f.ready()).map(|(_, &i)| i).collect();
            ready.dedup();
            for i in ready {
                servers[i].pump();
            }
        }
        Mcp::of(servers)
    }

    /// The servers, before any offer.
    fn of(servers: Vec<Server>) -> Mcp {
        Mcp {
            servers,
            offered: Vec::new(),
            said: HashSet::new(),
            gone: Vec::new(),
            left_out: Vec::new(),
        }
    }

    /// The run has MCP servers (else there is nothing to refresh).
    pub fn any(&self) -> bool {
        !self.servers.is_empty()
    }

    pub fn offered(&self) -> &[Offered] {
        &self.offered
    }

    pub fn find(&self, name: &str) -> Option<&Offered> {
        self.offered.iter().find(|o| o.name == name)
    }

    /// The result of a call of a tool whose server failed after it was offered: the same
    /// reason its server's first failed call gave.
    pub fn gone(&self, name: &str) -> Option<&str> {
        self.gone.iter().find(|(n, _)| n == name).map(|(_, why)| why.as_str())
    }

    /// What the model is told when a server fails: its tools will not come back.
    pub fn gone_note(server: &str, why: &str) -> String {
        format!(
            "[zero] MCP server {server} stopped ({why}); its tools (mcp__{server}__...) are no longer available in this run."
        )
    }

    /// Decides which tools are offered: servers in order, each's list in order, through its
    /// `enabledTools` / `disabledTools` and the run's filter (`wanted`, given the exposed name
    /// and the server's); a name already taken
    /// and tools past the per-run limits are left out. Returns the warnings about what was
    /// left out that were not given before (an offer is made again after each change).
    pub fn offer(&mut self, wanted: &dyn Fn(&str, &str) -> bool) -> Vec<String> {
        let mut offer = Offer::default();
        for (index, server) in self.servers.iter().enumerate() {
            if let Some(why) = server.failure() {
                // Its tools' calls get its failure from now on.
                let reason = format!("Error: MCP server {} failed: {why}", server.name());
                for tool in self.offered.iter().filter(|o| o.server == index) {
                    if self.gone.iter().all(|(n, _)| *n != tool.name) {
                        self.gone.push((tool.name.clone(), reason.clone()));
                    }
                }
                continue;
            }
            if let Some(cut) = &server.listing_cut {
                offer.warnings.push(format!("MCP server {}: {cut}.", server.config.name));
            }
            for tool in &server.tools {
                offer.consider(index, &server.config, tool, wanted);
            }
        }
        let mut warnings = offer.summarize();
        self.offered = offer.offered;
        self.left_out = offer.left_out;
        warnings.retain(|w| self.said.insert(w.clone()));
        warnings
    }

    /// Filters that name nothing: each server's `enabledTools` / `disabledTools` entries that
    /// are not among its tools, and `mcp__` names of the run's flags (`(flag, names)`) that
    /// match no tool or server. A server that failed is left out (its failure is reported).
    pub fn unmatched_filters(&self, flags: &[(&str, &[String])]) -> Vec<String> {
        let mut warnings = Vec::new();
        let ready = || self.servers.iter().filter(|s| s.failure().is_none());
        for server in ready() {
            let config = &server.config;
            let lists = [
                ("enabledTools", config.enabled_tools.as_deref().unwrap_or_default()),
                ("disabledTools", &config.disabled_tools),
            ];
            for (field, names) in lists {
                for name in names.iter().filter(|n| !server.tools.iter().any(|t| &t.name == *n)) {
                    warnings.push(format!(
                        "mcpServers.{}.{field}: \"{name}\" is not a tool of server {} (zero mcp list shows its tools).",
                        config.name, config.name
                    ));
                }
            }
        }
        for (flag, names) in flags {
            for name in names.iter().filter(|n| n.starts_with(PREFIX)) {
                let of_failed = self.servers.iter().any(|s| {
                    s.failure().is_some()
                        && name.strip_prefix(PREFIX).is_some_and(|rest| {
                            rest == s.name() || rest.starts_with(&format!("{}__", s.name()))
                        })
                });
                let matches = ready().any(|s| {
                    name.strip_prefix(PREFIX) == Some(s.name())
                        || s.tools.iter().any(|t| exposed_name(s.name(), &t.name) == *name)
                });
                if !matches && !of_failed {
                    warnings
                        .push(format!("{flag} {name} matches no MCP tool or server of this run."));
                }
            }
        }
        warnings
    }

    /// The reports of every server, in configuration order, with the tools each offers.
    pub fn reports(&self) -> Vec<Report> {
        self.servers.iter().enumerate().map(|(i, s)| self.report(i, s)).collect()
    }

    pub fn report(&self, index: usize, server: &Server) -> Report {
        Report {
            name: server.name().to_string(),
            transport: server.config.transport.name(),
            required: server.config.required,
            error: server.failure().map(str::to_string),
            protocol: server.protocol.clone().filter(|_| server.failure().is_none()),
            tools: self.offered.iter().filter(|o| o.server == index).count(),
        }
    }

    /// Before a model call: reads what the servers said meanwhile and lists again the tools
    /// of those that said their list changed (an interrupt stops the wait; the old list stays).
    /// Returns whether the offer must be made again (a list was read, or a server failed),
    /// and each server that failed since the last look.
    pub fn refresh(
        &mut self,
        interrupted: &dyn Fn() -> bool,
        interrupt_fd: i32,
    ) -> (bool, Vec<Failed>) {
        let mut changed = false;
        for server in &mut self.servers {
            server.pump();
            if server.list_changed && server.failure().is_none() {
                changed = true;
                server.deadline = Instant::now() + server.config.startup_timeout;
                server.list_tools();
                while server.busy() && !interrupted() {
                    if Instant::now() >= server.deadline {
                        let ms = server.config.startup_timeout.as_millis();
                        server.fail(&format!("did not list its tools again within {ms} ms"));
                        break;
                    }
                    let mut fds: Vec<PollFd> =
                        server.fds().into_iter().map(|fd| PollFd::new(fd, POLLIN)).collect();
                    fds.push(PollFd::new(interrupt_fd, POLLIN));
                    if poll::wait(&mut fds, Some(server.deadline)).is_ok() {
                        server.pump();
                    }
                }
            }
        }
        let failed = self.newly_failed();
        (changed || !failed.is_empty(), failed)
    }

    /// Each server that failed and was not reported yet (reporting it now): the warning, and
    /// what the model is told.
    pub fn newly_failed(&mut self) -> Vec<Failed> {
        let mut failed = Vec::new();
        for server in &mut self.servers {
            if let (Some(why), false) = (server.failure(), server.failure_reported) {
                failed.push(Failed {
                    warning: format!(
                        "MCP server {} failed: {why}; its tools are no longer offered.",
                        server.name()
                    ),
                    note: Mcp::gone_note(server.name(), why),
                });
                server.failure_reported = true;
            }
        }
        failed
    }

    /// Calls an offered tool and waits for its answer, its deadline (`toolTimeoutMs`) or an
    /// interrupt (`interrupted`, woken through `interrupt_fd`).
    pub fn call(
        &mut self,
        name: &str,
        arguments: Value,
        interrupted: &dyn Fn() -> bool,
        interrupt_fd: i32,
    ) -> CallOutcome {
        let error = |text: String| CallOutcome { text, error: true, interrupted: false };
        let Some(offered) = self.find(name).cloned() else {
            if let Some(why) = self.gone(name) {
                return error(why.to_string());
            }
            return error(format!("Error: Unknown tool \"{name}\"."));
        };
        let server = &mut self.servers[offered.server];
        let timeout = server.config.tool_timeout;
        let deadline = Instant::now() + timeout;
        let failed =
            |why: &str| error(format!("Error: MCP server {} failed: {why}", offered.server_name));
        // Pending before it is sent: a signal that comes as the server reads the request
        // still cancels it (a cancellation of a request never read is ignored).
        let id = server.reserve_id();
        let _pending = Pending::register(id, server.notifier());
        if let Err(why) = server.call(id, &offered.tool, arguments, deadline, interrupt_fd) {
            return failed(&why.to_string());
        }
        loop {
            server.pump();
            if let Some(answer) = server.answer(id) {
                return match answer {
                    Ok(result) => {
                        let (text, is_error) = shape::call_result(&result);
                        CallOutcome { text, error: is_error, interrupted: false }
                    }
                    Err(why) => error(format!("Error: {why}")),
                };
            }
            if let Some(why) = server.failure() {
                return failed(why);
            }
            if interrupted() {
                server.cancel(id, "interrupted by the user");
                return CallOutcome {
                    text: "The call was interrupted (the server was sent notifications/cancelled)."
                        .into(),
                    error: true,
                    interrupted: true,
                };
            }
            if Instant::now() >= deadline {
                let ms = timeout.as_millis();
                server.cancel(id, &format!("timed out after {ms} ms"));
                return error(format!(
                    "Error: timed out after {ms} ms (toolTimeoutMs of server {})",
                    offered.server_name
                ));
            }
            let mut fds: Vec<PollFd> =
                server.fds().into_iter().map(|fd| PollFd::new(fd, POLLIN)).collect();
            fds.push(PollFd::new(interrupt_fd, POLLIN));
            let _ = poll::wait(&mut fds, Some(deadline));
        }
    }

    /// Ends every server's session politely, all within 2 s; the run's end then stops their
    /// processes.
    pub fn hang_up(&mut self) {
        let deadline = Instant::now() + std::time::Duration::from_secs(2);
        for server in &mut self.servers {
            server.hang_up(deadline);
        }
    }
}

impl Mcp {
    /// Ends every server's session, then stops its process now (a closed editor session).
    pub fn close(&mut self, why: &str) {
        self.hang_up();
        for server in &mut self.servers {
            server.close(why);
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        self.hang_up();
    }
}

/// One server as `zero mcp list` and `zero doctor` show it: how its start ended, and every
/// tool it lists with its read-only flag and, when a run would not offer it, why.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub report: Report,
    pub tools: Vec<CheckedTool>,
}

/// A tool a server lists, as a run would treat it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedTool {
    pub name: String,
    pub read_only: bool,
    /// Why a run with these filters and this level would not offer it.
    pub left_out: Option<String>,
}

/// Starts each server, lists its tools and stops it (`zero mcp list`, `zero doctor`). Each
/// tool is judged by exec's rules: the servers' and the run's filters (`wanted`, given the
/// exposed name and the server's), names, limits, and the level (`unsafe_mode`: `--auto high`).
pub fn check(
    configs: &[config::ServerConfig],
    context: &Context,
    wanted: &dyn Fn(&str, &str) -> bool,
    unsafe_mode: bool,
) -> Vec<Checked> {
    let mut mcp = Mcp::start(configs, context, &mut |_| false);
    let _ = mcp.offer(wanted);
    let checked = mcp
        .servers
        .iter()
        .enumerate()
        .map(|(i, server)| {
            let tools = server
                .tools
                .iter()
                .map(|t| {
                    let offered = mcp.offered.iter().find(|o| o.server == i && o.tool == t.name);
                    let left_out = match offered {
                        Some(offered) => offered.withheld(unsafe_mode, false),
                        None => mcp
                            .left_out
                            .iter()
                            .find(|(s, tool, _)| *s == i && *tool == t.name)
                            .map(|(_, _, why)| why.clone()),
                    };
                    CheckedTool { name: t.name.clone(), read_only: t.read_only, left_out }
                })
                .collect::<Vec<_>>();
            let mut report = mcp.report(i, server);
            report.tools = tools.iter().filter(|t| t.left_out.is_none()).count();
            Checked { report, tools }
        })
        .collect();
    mcp.hang_up();
    drop(mcp);
    crate::sys::process::stop_kept_groups();
    checked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::config::{ServerConfig, Transport};
    use crate::mcp::server::RemoteTool;

    fn server(name: &str, tools: &[(&str, usize)], trust: bool) -> Server {
        let config = ServerConfig {
            name: name.into(),
            transport: Transport::Stdio {
                command: "x".into(),
                args: vec![],
                env: vec![],
                cwd: None,
            },
            required: false,
            trust,
            startup_timeout: Duration::from_secs(1),
            tool_timeout: Duration::from_secs(1),
            enabled_tools: None,
            disabled_tools: vec!["hidden".into()],
        };
        let tools = tools
            .iter()
            .map(|(tool, size)| RemoteTool {
                name: tool.to_string(),
                description: "d".repeat(*size),
                input_schema: json!({"type": "object"}),
                read_only: false,
                needs_tasks: false,
            })
            .collect();
        Server::ready(config, tools)
    }

    fn names(mcp: &Mcp) -> Vec<&str> {
        mcp.offered().iter().map(|o| o.name.as_str()).collect()
    }

    #[test]
    fn a_name_taken_twice_leaves_the_second_out_in_server_then_list_order() {
        let mut mcp = Mcp {
            servers: vec![
                server("a", &[("_x", 1), ("b.c", 1), ("b_c", 1), ("hidden", 1)], false),
                server("a_", &[("x", 1), ("d", 1)], true),
            ],
            offered: Vec::new(),
            said: HashSet::new(),
            gone: Vec::new(),
            left_out: Vec::new(),
        };
        let warnings = mcp.offer(&|_, _| true);
        assert_eq!(names(&mcp), ["mcp__a___x", "mcp__a__b_c", "mcp__a___d"]);
        assert_eq!(
            warnings,
            [
                "MCP tool \"b_c\" of server a is left out: its name mcp__a__b_c is already taken by another MCP tool.",
                "MCP tool \"x\" of server a_ is left out: its name mcp__a___x is already taken by another MCP tool."
            ]
        );
        assert!(mcp.offered()[2].trusted && !mcp.offered()[0].trusted);
        assert_eq!(mcp.report(1, &mcp.servers[1]).tools, 1);
    }

    #[test]
    fn tools_past_the_count_or_size_limit_are_left_out_with_one_warning() {
        let many: Vec<(String, usize)> = (0..130).map(|i| (format!("t{i:03}"), 1)).collect();
        let many: Vec<(&str, usize)> = many.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let mut mcp = Mcp {
            servers: vec![server("s", &many, false)],
            offered: Vec::new(),
            said: HashSet::new(),
            gone: Vec::new(),
            left_out: Vec::new(),
        };
        let warnings = mcp.offer(&|_, _| true);
        assert_eq!(mcp.offered().len(), MAX_TOOLS);
        assert_eq!(
            warnings,
            ["2 MCP tools are left out: a run offers at most 128 MCP tools and 256 KiB of their definitions: mcp__s__t128, mcp__s__t129."]
        );
        // Three 100 KiB definitions: the third does not fit, a small one after it does.
        let big = 100 * 1024;
        let mut mcp = Mcp {
            servers: vec![server("s", &[("a", big), ("b", big), ("c", big), ("d", 1)], false)],
            offered: Vec::new(),
            said: HashSet::new(),
            gone: Vec::new(),
            left_out: Vec::new(),
        };
        let warnings = mcp.offer(&|_, _| true);
        assert_eq!(names(&mcp), ["mcp__s__a", "mcp__s__b", "mcp__s__d"]);
        assert!(
            warnings[0].starts_with("1 MCP tool is left out")
                && warnings[0].ends_with("mcp__s__c.")
        );
        // The run's filter comes first, so it can make room.
        let mut mcp = Mcp {
            servers: vec![server("s", &[("a", big), ("b", big), ("c", big)], false)],
            offered: Vec::new(),
            said: HashSet::new(),
            gone: Vec::new(),
            left_out: Vec::new(),
        };
        assert!(mcp.offer(&|name, _| name != "mcp__s__a").is_empty());
        assert_eq!(names(&mcp), ["mcp__s__b", "mcp__s__c"]);
    }
}
