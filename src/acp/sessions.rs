//! The sessions of `zero acp`: each an open zero session (its own run engine, output and
//! "always" answers) in the workspace the editor named, written to zero's session store
//! exactly as `zero exec` writes one. The main loop answers every request here, one at a time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::inbox::Turns;
use super::permissions::{Asker, Remembered};
use super::wire::{lock, Peer};
use super::{directory, failure_error, response, string, AUTH_METHOD};
use crate::config::Env;
use crate::error::{Failure, Stop};
use crate::output::{Emitter, Format, Output};
use crate::protocol::events::RunStatus;
use crate::rpc::{code, Id, RpcError};
use crate::run::engine::Engine;
use crate::run::open::{self, Opened, Opening, Selection};
use crate::run::plan::RunPlan;
use crate::session::{Kind, Store};
use crate::tools::{Autonomy, PermissionMode};

/// ACP's error for a request that needs authentication first.
const AUTH_REQUIRED: i64 = -32000;

/// `session/list` pages hold this many sessions.
const PAGE: usize = 50;

/// The modes an editor offers: zero's autonomy levels.
const MODES: [(&str, &str, &str, Autonomy); 3] = [
    ("read-only", "Read only", "Reads and searches; asks before any change.", Autonomy::Low),
    ("edit", "Edit", "Also edits files in the workspace; asks before commands.", Autonomy::Medium),
    ("full", "Full access", "Also runs commands, in zero's sandbox.", Autonomy::High),
];

/// One open session.
struct Open {
    engine: Box<Engine>,
    out: Output,
    cwd: PathBuf,
    autonomy: Autonomy,
    remembered: Remembered,
    /// The model and effort in use, as the config options show them.
    choice: crate::config::Choice,
    turns: u64,
}

impl Open {
    /// The mode of the next turns.
    fn set_autonomy(&mut self, autonomy: Autonomy) {
        self.autonomy = autonomy;
        let mode =
            if autonomy == Autonomy::High { PermissionMode::Unsafe } else { PermissionMode::Auto };
        self.engine.set_autonomy(autonomy, mode);
    }
}

/// Everything the main loop keeps.
pub struct Server {
    plan: RunPlan,
    env: Env,
    started_in: PathBuf,
    peer: Arc<Peer>,
    turns: Arc<Mutex<Turns>>,
    /// What the client's editor does for the tools (`initialize`).
    files: super::files::FileCapabilities,
    /// `--client-terminal`.
    client_terminal: bool,
    timeout: Duration,
    sessions: HashMap<String, Open>,
    initialized: bool,
}

impl Server {
    pub fn new(
        mut plan: RunPlan,
        env: Env,
        started_in: PathBuf,
        peer: Arc<Peer>,
        turns: Arc<Mutex<Turns>>,
        timeout: Duration,
    ) -> Server {
        // Paths on the command line mean what they say where zero was started.
        plan.choice.script = plan.choice.script.take().map(|s| started_in.join(s));
        Server {
            plan,
            env,
            started_in,
            peer,
            turns,
            timeout,
            sessions: HashMap::new(),
            initialized: false,
            files: super::files::FileCapabilities::default(),
            client_terminal: false,
        }
    }

    /// `--client-terminal`: `bash` runs in the client's terminal when it has one.
    pub fn use_client_terminal(&mut self, on: bool) {
        self.client_terminal = on;
    }

    /// Answers one request; false when stdout is gone.
    pub fn answer(&mut self, id: &Id, method: &str, params: Value) -> bool {
        let prompt_for = (method == "session/prompt")
            .then(|| params.get("sessionId").and_then(Value::as_str).map(str::to_string))
            .flatten();
        let answer = self.dispatch(method, &params);
        // The turn is over before its answer is written: a client that sends the next prompt
        // as soon as it reads the answer finds the session free.
        if let Some(session) = prompt_for {
            lock(&self.turns).finish(&session);
        }
        let session = params.get("sessionId").and_then(Value::as_str);
        match session.and_then(|s| self.sessions.get(s)) {
            // Through the session's output: its secrets are redacted too.
            Some(open) => open.out.acp_message(&response(id, answer)).is_ok(),
            None => self.peer.out().send(&response(id, answer), self.peer.redactor()).is_ok(),
        }
    }

    fn dispatch(&mut self, method: &str, params: &Value) -> Result<Value, RpcError> {
        if !params.is_object() {
            return Err(RpcError::invalid_params("params must be an object"));
        }
        match (method, self.initialized) {
            ("initialize", false) => {
                params.get("protocolVersion").and_then(Value::as_u64).ok_or_else(|| {
                    RpcError::invalid_params("protocolVersion must be an integer")
                })?;
                self.initialized = true;
                self.files = super::files::FileCapabilities::of(params, self.client_terminal);
                if self.client_terminal && !self.files.terminal {
                    super::inbox::note("--client-terminal: the client has no terminal (clientCapabilities.terminal); bash runs in zero's sandbox");
                }
                Ok(super::initialized())
            }
            ("initialize", true) => {
                Err(RpcError::new(code::INVALID_REQUEST, "initialize was already called"))
            }
            (_, false) => Err(RpcError::new(
                code::INVALID_REQUEST,
                format!("{method} before initialize: call initialize first"),
            )),
            ("authenticate", true) => self.authenticate(params),
            ("session/new", true) => self.new_session(params),
            ("session/load", true) => self.load_session(params),
            ("session/list", true) => self.list(params),
            ("session/close", true) => self.close(params),
            ("session/prompt", true) => self.prompt(params),
            ("session/set_mode", true) => self.set_mode(params),
            ("session/set_config_option", true) => self.set_config_option(params),
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    /// The one method succeeds when a provider resolves, and fails as `zero exec` would.
    fn authenticate(&self, params: &Value) -> Result<Value, RpcError> {
        let method = string(params, "methodId")?;
        if method != AUTH_METHOD {
            return Err(RpcError::invalid_params(format!(
                "unknown methodId {}: zero offers {AUTH_METHOD}",
                crate::text::summarize(method)
            )));
        }
        let resolved = crate::config::load_user_config(&self.env)
            .and_then(|c| crate::config::resolve(&self.env, c.as_ref(), &self.plan.choice));
        match resolved {
            Ok(_) => Ok(json!({})),
            Err(failure) => Err(RpcError { code: AUTH_REQUIRED, ..failure_error(&failure) }),
        }
    }

    fn new_session(&mut self, params: &Value) -> Result<Value, RpcError> {
        let cwd = directory(params, "cwd")?;
        let id = self.open(params, &cwd, Selection::New)?;
        Ok(self.state(&id))
    }

    /// Opens a session's engine in `cwd` with the client's MCP servers and extra directories.
    fn open(
        &mut self,
        params: &Value,
        cwd: &Path,
        selection: Selection,
    ) -> Result<String, RpcError> {
        let mut plan = self.plan.clone();
        for dir in additional_directories(params)? {
            plan.add_dirs.push(dir);
        }
        let (servers, secrets) = mcp_servers(params)?;
        if let Some(servers) = servers {
            plan.mcp_configs.push(servers.to_string());
        }
        let emitter = Emitter::new(
            Format::Acp,
            crate::clock::new_run_id(),
            Box::new(self.peer.out().clone()),
            Box::new(crate::sys::stdio::stderr()),
            self.peer.redactor().clone(),
        );
        let out = Output::new(emitter);
        for secret in &secrets {
            out.add_secret_min(secret, 4);
        }
        let editor = Arc::new(super::files::ClientEditor::new(self.peer.clone(), self.files));
        let opening = Opening {
            editor: Some(editor.clone()),
            plan: &plan,
            env: &self.env,
            out: &out,
            started_in: &self.started_in,
            cwd,
            store: Store::locate(&self.env),
            selection,
        };
        let opened = open::open(opening, &mut None);
        // A signal's ending records into the session whose turn runs, none between turns.
        crate::run::ending::set_active_session(None);
        let engine = opened_engine(opened)?;
        let Some(id) = engine.session_id() else {
            engine.close("the session could not be stored");
            return Err(RpcError::new(
                code::INTERNAL_ERROR,
                "Sessions are unavailable: zero acp keeps every session, and neither XDG_DATA_HOME nor HOME is set (or the store cannot be written; see stderr)",
            ));
        };
        let _ = editor.session_id.set(id.clone());
        let root = engine.workspace().root().to_path_buf();
        let _ = editor.roots.set((root.clone(), cwd.to_path_buf()));
        out.set_acp_view(cwd, &root, engine.window());
        let open = Open {
            engine,
            out,
            cwd: cwd.to_path_buf(),
            autonomy: plan.autonomy,
            remembered: Remembered::default(),
            choice: self.resolved_choice(&plan),
            turns: 0,
        };
        if let Some(old) = self.sessions.insert(id.clone(), open) {
            old.engine.close("the session was opened again");
        }
        Ok(id)
    }

    /// The model and effort a plan resolves to, as the config options show them (not only
    /// what the flags said).
    fn resolved_choice(&self, plan: &RunPlan) -> crate::config::Choice {
        let mut choice = plan.choice.clone();
        let resolved = crate::config::load_user_config(&self.env)
            .and_then(|c| crate::config::resolve(&self.env, c.as_ref(), &plan.choice));
        if let Ok(runtime) = resolved {
            choice.model = Some(runtime.model_id);
            choice.effort = runtime.effort.map(|e| e.name().to_string());
        }
        choice
    }

    /// The modes and config options of session `id`, and its id.
    fn state(&self, id: &str) -> Value {
        let mut state = json!({"sessionId": id});
        if let Some(open) = self.sessions.get(id) {
            state["modes"] = modes(open.autonomy);
            state["configOptions"] = Value::Array(config_options(&open.choice));
        }
        state
    }

    fn session(&mut self, params: &Value) -> Result<(String, &mut Open), RpcError> {
        let id = string(params, "sessionId")?.to_string();
        match self.sessions.get_mut(&id) {
            Some(open) => Ok((id, open)),
            None => Err(RpcError::invalid_params(format!(
                "unknown sessionId {}: it is not open (session/new or session/load opens one)",
                crate::text::summarize(&id)
            ))),
        }
    }

    fn load_session(&mut self, params: &Value) -> Result<Value, RpcError> {
        let cwd = directory(params, "cwd")?;
        let id = string(params, "sessionId")?.to_string();
        if !crate::session::valid_id(&id) {
            return Err(RpcError::invalid_params(format!(
                "invalid sessionId {}",
                crate::text::summarize(&id)
            )));
        }
        let store = Store::locate(&self.env)
            .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.message()))?;
        if !store.exists(&id) {
            return Err(RpcError::invalid_params(format!("Zero session not found: {id}")));
        }
        // What the request asks is checked before an open session is touched.
        additional_directories(params)?;
        mcp_servers(params)?;
        // Loading a session this process has open reopens it (its lock is released first),
        // in the mode it was in, with the answers given for the rest of it.
        let kept = self.sessions.remove(&id).map(|open| {
            open.engine.close("the editor loaded the session again");
            (open.autonomy, open.remembered)
        });
        self.open(params, &cwd, Selection::Resume(id.clone()))?;
        if let (Some((autonomy, remembered)), Some(open)) = (kept, self.sessions.get_mut(&id)) {
            open.set_autonomy(autonomy);
            open.remembered = remembered;
        }
        let Some(open) = self.sessions.get(&id) else { return Ok(json!({})) };
        super::updates::replay(&store, &id, &open.cwd, &open.out).map_err(|e| failure_error(&e))?;
        let mut state = self.state(&id);
        if let Some(map) = state.as_object_mut() {
            map.remove("sessionId");
        }
        Ok(state)
    }

    fn list(&self, params: &Value) -> Result<Value, RpcError> {
        let store = Store::locate(&self.env)
            .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.message()))?;
        let optional = |key: &str| match params.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(RpcError::invalid_params(format!("{key} must be a string"))),
        };
        let cwd = optional("cwd")?;
        let start = match optional("cursor")? {
            Some(cursor) => cursor
                .parse::<usize>()
                .map_err(|_| RpcError::invalid_params("cursor is not one zero gave"))?,
            None => 0,
        };
        let all = match cwd {
            Some(cwd) => store.list_for(cwd, self.peer.redactor()),
            None => store.list(),
        }
        .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.message()))?;
        let sessions: Vec<Value> = all
            .iter()
            .skip(start)
            .take(PAGE)
            .map(|m| {
                json!({
                    "sessionId": m.session_id,
                    "cwd": m.cwd.clone().unwrap_or_default(),
                    "title": m.title,
                    "updatedAt": m.updated_at,
                })
            })
            .collect();
        let mut answer = json!({"sessions": sessions});
        let next = start.saturating_add(PAGE);
        if all.len() > next {
            answer["nextCursor"] = json!(next.to_string());
        }
        Ok(answer)
    }

    fn close(&mut self, params: &Value) -> Result<Value, RpcError> {
        let (id, _) = self.session(params)?;
        if let Some(open) = self.sessions.remove(&id) {
            open.engine.close("the editor closed the session");
        }
        Ok(json!({}))
    }

    /// Closes every session (the end of input).
    pub fn close_all(&mut self, why: &str) {
        for (_, open) in self.sessions.drain() {
            open.engine.close(why);
        }
    }

    fn set_mode(&mut self, params: &Value) -> Result<Value, RpcError> {
        let mode = string(params, "modeId")?.to_string();
        let (id, open) = self.session(params)?;
        let Some((_, _, _, autonomy)) = MODES.iter().find(|(m, ..)| *m == mode) else {
            return Err(RpcError::invalid_params(format!(
                "unknown modeId {}: zero's modes are read-only, edit and full",
                crate::text::summarize(&mode)
            )));
        };
        open.set_autonomy(*autonomy);
        let update = json!({"sessionUpdate": "current_mode_update", "currentModeId": mode});
        let _ = open.out.acp_message(&super::updates::notification(&id, update));
        Ok(json!({}))
    }

    fn set_config_option(&mut self, params: &Value) -> Result<Value, RpcError> {
        let config = string(params, "configId")?.to_string();
        let value = string(params, "value")?.to_string();
        let env = self.env.clone();
        let (id, open) = self.session(params)?;
        let mut choice = open.choice.clone();
        match config.as_str() {
            "model" => {
                choice.model = Some(value.clone());
                choice.profile = None;
                // An effort the new model does not take goes back to its default.
                let takes = |effort: &String| {
                    crate::provider::models::find(&value)
                        .is_some_and(|m| m.efforts.iter().any(|e| e.name() == effort))
                };
                choice.effort = choice.effort.filter(takes);
            }
            "reasoning" => choice.effort = (value != "default").then(|| value.clone()),
            _ => {
                return Err(RpcError::invalid_params(format!(
                    "unknown configId {}: zero's options are model and reasoning",
                    crate::text::summarize(&config)
                )))
            }
        }
        let offered = config_options(&open.choice)
            .iter()
            .filter(|o| o["id"] == config.as_str())
            .flat_map(|o| o["options"].as_array().cloned().unwrap_or_default())
            .any(|o| o["value"] == value.as_str());
        if !offered {
            return Err(RpcError::invalid_params(format!(
                "{config} has no value {}",
                crate::text::summarize(&value)
            )));
        }
        let (provider, runtime) = open::switch_model(&choice, &env, &open.out, Some(id.clone()))
            .map_err(|f| failure_error(&f))?;
        let window = runtime.model.map_or(open.engine.window(), |m| m.context_window);
        open.engine.switch_model(provider, runtime.model, window);
        let root = open.engine.workspace().root().to_path_buf();
        open.out.set_acp_view(&open.cwd, &root, window);
        choice.model = Some(runtime.model_id.clone());
        choice.effort = runtime.effort.map(|e| e.name().to_string());
        open.choice = choice;
        Ok(json!({"configOptions": config_options(&open.choice)}))
    }

    /// Runs one prompt turn; its updates are written as it goes, and its end is the answer.
    fn prompt(&mut self, params: &Value) -> Result<Value, RpcError> {
        let timeout = self.timeout;
        let turns = self.turns.clone();
        let peer = &*self.peer;
        let id = string(params, "sessionId")?.to_string();
        let Some(open) = self.sessions.get_mut(&id) else {
            return Err(RpcError::invalid_params(format!(
                "unknown sessionId {}: it is not open (session/new or session/load opens one)",
                crate::text::summarize(&id)
            )));
        };
        let prompt = super::prompt::prompt(&params["prompt"], open.engine.workspace(), &open.cwd)?;
        if let Some(why) = open.engine.too_large(&prompt) {
            // Refused before it joins the conversation, which it would keep from fitting.
            return Err(RpcError::invalid_params(why));
        }
        crate::run::ending::begin_turn();
        if !lock(&turns).start(&id) {
            // Cancelled while it waited, or the client's input ended: it does not run.
            return Ok(json!({"stopReason": "cancelled"}));
        }
        crate::run::ending::set_active_session(open.engine.session_handle());
        open.turns += 1;
        let mut asker = Asker { peer, remembered: &mut open.remembered, timeout };
        let result = open.engine.turn(prompt, &mut asker);
        // A signal's ending, which stopped this turn, records the interruption in its session:
        // the session stays the active one for it.
        if !crate::sys::signals::ending() {
            crate::run::ending::set_active_session(None);
        }
        let _ = open.out.end_turn();
        let cut_short = open.out.take_cut_short();
        let (status, answer) = match result {
            Ok(_) => {
                let reason = if cut_short { "max_tokens" } else { "end_turn" };
                (RunStatus::Success, Ok(json!({"stopReason": reason})))
            }
            Err(Stop::Failed(failure)) => {
                let payload = json!({"code": failure.code_v2(), "message": failure.message()});
                if !crate::sys::signals::ending() {
                    open.engine.note(Kind::Error, payload);
                }
                let answer = match super::prompt::stop_reason(&failure) {
                    Some(reason) => Ok(json!({"stopReason": reason})),
                    None => Err(failure_error(&failure)),
                };
                (failure.status_v2(), answer)
            }
            Err(Stop::OutputClosed) => {
                (RunStatus::Error, Err(RpcError::new(code::INTERNAL_ERROR, "stdout is closed")))
            }
        };
        if crate::sys::signals::ending() {
            // A signal ends the process: its ending records the interruption in the session.
            return answer;
        }
        open.engine.note(Kind::TurnEnd, json!({"turn": open.turns, "status": status}));
        open.engine.sync();
        answer
    }
}

/// The engine `open` gave, or the error that tells the editor why not.
fn opened_engine(opened: Result<Opened, Stop>) -> Result<Box<Engine>, RpcError> {
    match opened {
        Ok(Opened::Engine(engine)) => Ok(engine),
        Ok(Opened::Listed) => Err(RpcError::new(code::INTERNAL_ERROR, "nothing was opened")),
        // No provider to run with: the editor offers its authentication (ACP's
        // auth_required), whose method says what zero needs.
        Err(Stop::Failed(failure @ Failure::Provider(_))) => {
            Err(RpcError { code: AUTH_REQUIRED, ..failure_error(&failure) })
        }
        Err(Stop::Failed(failure)) => Err(failure_error(&failure)),
        Err(Stop::OutputClosed) => Err(RpcError::new(code::INTERNAL_ERROR, "stdout is closed")),
    }
}

/// `additionalDirectories`: absolute directories.
fn additional_directories(params: &Value) -> Result<Vec<PathBuf>, RpcError> {
    let Some(list) = params.get("additionalDirectories").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(list) = list.as_array() else {
        return Err(RpcError::invalid_params("additionalDirectories must be an array"));
    };
    list.iter()
        .enumerate()
        .map(|(n, _)| {
            directory(&json!({"d": list[n]}), "d").map_err(|e| {
                RpcError::invalid_params(e.message.replacen(
                    'd',
                    &format!("additionalDirectories[{n}]"),
                    1,
                ))
            })
        })
        .collect()
}

/// The client's MCP servers as an `--mcp-config` value, and the values to redact (their
/// environment and headers).
fn mcp_servers(params: &Value) -> Result<(Option<Value>, Vec<String>), RpcError> {
    let Some(list) = params.get("mcpServers").and_then(Value::as_array) else {
        return Err(RpcError::invalid_params("mcpServers must be an array"));
    };
    let mut servers = serde_json::Map::new();
    let mut secrets = Vec::new();
    for (n, server) in list.iter().enumerate() {
        let at = |why: &str| RpcError::invalid_params(format!("mcpServers[{n}]: {why}"));
        let name = server
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| at("name must be a string"))?;
        let pairs = |key: &str| -> Result<serde_json::Map<String, Value>, RpcError> {
            let mut map = serde_json::Map::new();
            for pair in server
                .get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| at(&format!("{key} must be an array")))?
            {
                let (Some(k), Some(v)) = (pair["name"].as_str(), pair["value"].as_str()) else {
                    return Err(at(&format!("each of {key} needs a string name and value")));
                };
                map.insert(k.to_string(), json!(v));
            }
            Ok(map)
        };
        let config = match server.get("type").and_then(Value::as_str) {
            Some("http") => {
                let url = server
                    .get("url")
                    .and_then(Value::as_str)
                    .ok_or_else(|| at("url must be a string"))?;
                let headers = pairs("headers")?;
                secrets.extend(headers.values().filter_map(Value::as_str).map(str::to_string));
                json!({"type": "http", "url": url, "headers": headers})
            }
            Some("sse") => {
                return Err(at("SSE servers are not supported (mcpCapabilities.sse is false)"))
            }
            Some(other) => {
                return Err(at(&format!("unknown type {}", crate::text::summarize(other))))
            }
            None => {
                let command = server
                    .get("command")
                    .and_then(Value::as_str)
                    .ok_or_else(|| at("command must be a string"))?;
                let args = server
                    .get("args")
                    .and_then(Value::as_array)
                    .ok_or_else(|| at("args must be an array"))?;
                if args.iter().any(|a| !a.is_string()) {
                    return Err(at("args must be strings"));
                }
                let env = pairs("env")?;
                secrets.extend(env.values().filter_map(Value::as_str).map(str::to_string));
                json!({"command": command, "args": args, "env": env})
            }
        };
        let name = tool_prefix(name);
        if servers.insert(name.clone(), config).is_some() {
            return Err(at(&format!("a second server named {}", crate::text::summarize(&name))));
        }
    }
    if servers.is_empty() {
        return Ok((None, secrets));
    }
    Ok((Some(json!({"mcpServers": servers})), secrets))
}

/// An editor's server name as zero names the server's tools (`mcp__<name>__<tool>`): 1 to 32
/// letters, digits, `_` or `-`; anything else (a space, a dot, `__`) becomes `-`, so "GitHub
/// MCP" is `GitHub-MCP`.
fn tool_prefix(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' };
        if c == '_' && out.ends_with('_') {
            out.pop();
            out.push('-');
            continue;
        }
        out.push(c);
        if out.len() == 32 {
            break;
        }
    }
    if out.is_empty() {
        out.push_str("server");
    }
    out
}

/// `modes`: zero's levels, the current one first named.
fn modes(current: Autonomy) -> Value {
    let available: Vec<Value> = MODES
        .iter()
        .map(|(id, name, description, _)| json!({"id": id, "name": name, "description": description}))
        .collect();
    let current = MODES.iter().find(|m| m.3 == current).map_or("read-only", |m| m.0);
    json!({"currentModeId": current, "availableModes": available})
}

/// `configOptions`: the models of the provider in use that zero knows (the current one
/// first), and the reasoning efforts of the current model when it takes one.
fn config_options(choice: &crate::config::Choice) -> Vec<Value> {
    use crate::provider::models;
    let current = choice.model.clone().unwrap_or_default();
    let model = models::find(&current);
    let family = model.map(|m| m.family);
    let mut options =
        vec![json!({"value": current, "name": model.map_or(current.as_str(), |m| m.label)})];
    options.extend(
        models::MODELS
            .iter()
            .filter(|m| Some(m.family) == family && !m.deprecated && m.id != current)
            .map(|m| json!({"value": m.id, "name": m.label})),
    );
    let mut list = vec![json!({
        "id": "model", "name": "Model", "category": "model", "type": "select",
        "currentValue": current, "options": options,
    })];
    if let Some(model) = model.filter(|m| !m.efforts.is_empty()) {
        let mut efforts = vec![json!({"value": "default", "name": "Model default"})];
        efforts.extend(model.efforts.iter().map(|e| json!({"value": e.name(), "name": e.name()})));
        list.push(json!({
            "id": "reasoning", "name": "Reasoning effort", "category": "thought_level", "type": "select",
            "currentValue": choice.effort.clone().unwrap_or_else(|| "default".to_string()),
            "options": efforts,
        }));
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_editors_server_names_become_tool_prefixes() {
        assert_eq!(tool_prefix("github"), "github");
        assert_eq!(tool_prefix("GitHub MCP"), "GitHub-MCP");
        assert_eq!(tool_prefix("a__b.c"), "a-b-c");
        assert_eq!(tool_prefix(""), "server");
        assert_eq!(tool_prefix(&"x".repeat(40)).len(), 32);
        assert!(crate::mcp::config::valid_name(&tool_prefix("files (local) __ v2")));
    }
}
