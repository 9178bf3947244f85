//! The run engine: one conversation and everything it needs (provider, toolbox with its MCP
//! servers and sandbox, limits and budget, instructions, history, session journal), driven one
//! prompt at a time by a front-end.
//!
//! A front-end builds a plan from its own inputs (`exec`'s flags; later an ACP `session/new` or
//! an MCP `zero_run` call), has [`crate::run::open`] turn it into an [`Engine`], then calls
//! [`Engine::turn`] once (`zero exec`) or once per prompt (live mode). The engine reports every
//! event through the run's [`Output`] and asks the front-end, through [`Client`], for what only
//! the front-end can answer: who approves a call the level does not allow, and what the session
//! records as the prompt's source. A turn is cancelled from outside it, whichever front-end
//! runs: a SIGINT in a live turn, or the front-end calling `run::ending::cancel_turn` when its
//! client asks (the turn ends `interrupted`, its command killed, every wait woken).

use std::sync::{Arc, Mutex};

use crate::conversation::{Answer, Message, ToolCall};
use crate::error::Stop;
use crate::output::Output;
use crate::protocol::events::{Warning, WarningCode};
use crate::protocol::images::Image;
use crate::provider::models::{self, Model, Usage};
use crate::provider::Provider;
use crate::redact::Redactor;
use crate::run::agent::{Agent, Approvals, Journal};
use crate::run::limits::Limits;
use crate::run::record::Recorder;
use crate::run::structured::OutputSchema;
use crate::session::{self, Kind, Session};
use crate::tools::{self, Autonomy, Outcome, PermissionMode, Toolbox};

/// What only a front-end can answer for a turn.
pub trait Client {
    /// What the session records as the prompt's source (`exec`, `live`).
    fn source(&self) -> &'static str;
    /// Who answers for a call the autonomy level does not allow outright; `None`: the policy
    /// denies it.
    fn approvals(&mut self) -> Option<&mut dyn Approvals> {
        None
    }
}

/// A front-end with nobody to ask (`zero exec` without live mode).
pub struct Unattended;

impl Client for Unattended {
    fn source(&self) -> &'static str {
        "exec"
    }
}

/// How a conversation runs, fixed when it opens.
pub struct Rules {
    pub max_turns: u32,
    /// The registry model, for prices.
    pub model: Option<&'static Model>,
    /// `run_start`'s permission mode and autonomy level, for the permission events.
    pub permission_mode: PermissionMode,
    pub autonomy: Autonomy,
    /// `--output-schema`: every turn ends with a structured answer.
    pub structured: Option<OutputSchema>,
    /// About how many tokens of earlier conversation a turn sends (half the model's context).
    pub history_budget: u64,
}

/// One conversation of a run.
pub struct Engine {
    provider: Provider,
    tools: Toolbox,
    out: Output,
    journal: SessionJournal,
    session: Option<Arc<Mutex<Session>>>,
    /// A new session opened before its first prompt (live mode): that prompt titles it.
    untitled: bool,
    rules: Rules,
    /// The context window to fit each request to, and the spending cap, for the whole run.
    limits: Limits,
    /// The system prompt, the project instructions, then the conversation.
    messages: Vec<Message>,
    /// `--record`: the script of the run's model calls.
    recorder: Option<Recorder>,
}

/// What an engine is made of; [`crate::run::open`] builds it from a plan.
pub struct Parts {
    pub provider: Provider,
    pub recorder: Option<Recorder>,
    pub tools: Toolbox,
    pub out: Output,
    pub session: Option<Arc<Mutex<Session>>>,
    pub untitled: bool,
    pub rules: Rules,
    /// The system prompt and the project instructions: always sent as they are.
    pub head: Vec<Message>,
    /// The earlier conversation (of a resumed or forked session).
    pub history: Vec<Message>,
    pub window: u64,
    pub max_usd: Option<f64>,
}

impl Engine {
    pub fn new(parts: Parts) -> Engine {
        let Parts {
            provider,
            recorder,
            tools,
            out,
            session,
            untitled,
            rules,
            head,
            history,
            window,
            max_usd,
        } = parts;
        let limits = Limits::new(head.len(), window, max_usd);
        let mut messages = head;
        messages.extend(history);
        let journal = SessionJournal::new(session.clone(), out.clone(), rules.model);
        Engine {
            provider,
            tools,
            out,
            journal,
            session,
            untitled,
            rules,
            limits,
            messages,
            recorder,
        }
    }

    /// Runs one prompt to its end: recorded, sent with the conversation so far (its newest
    /// exchanges, within the model's context), and answered after as many model calls and tool
    /// calls as it takes.
    pub fn turn(&mut self, prompt: Prompt, client: &mut dyn Client) -> Result<Answer, Stop> {
        if let Some(s) = &self.session {
            let mut s = session_lock(s);
            if std::mem::take(&mut self.untitled) {
                let title = session::title_of(&s.redactor().redact_str(&prompt.text));
                s.retitle(title);
            }
            s.record(
                Kind::Message,
                session::user_payload(&prompt.text, &prompt.images, client.source()),
            );
        }
        let history = self.messages.split_off(self.limits.head.min(self.messages.len()));
        self.messages.extend(session::trim_to_budget(history, self.rules.history_budget));
        self.messages.push(Message { images: prompt.images, ..Message::user(prompt.text) });
        Agent {
            provider: &mut self.provider,
            tools: &mut self.tools,
            out: &self.out,
            journal: &mut self.journal,
            max_turns: self.rules.max_turns,
            model: self.rules.model,
            permission_mode: self.rules.permission_mode,
            autonomy: self.rules.autonomy,
            approvals: client.approvals(),
            limits: &mut self.limits,
            structured: self.rules.structured.as_ref(),
            recorder: self.recorder.as_mut(),
        }
        .run(&mut self.messages)
    }

    /// Records something else in the session (a turn's end, its error).
    pub fn note(&mut self, kind: Kind, payload: serde_json::Value) {
        self.journal.note(kind, payload);
    }

    /// Puts the session on disk (before a turn's last line).
    pub fn sync(&self) {
        if let Some(s) = &self.session {
            session_lock(s).sync();
        }
    }

    /// The session's id (none for an ephemeral conversation).
    pub fn session_id(&self) -> Option<String> {
        self.session.as_ref().map(|s| session_lock(s).id().to_string())
    }

    /// The session, for the endings of a signal or a panic to record into.
    pub fn session_handle(&self) -> Option<Arc<Mutex<Session>>> {
        self.session.clone()
    }

    /// Why `prompt` can never be sent, if it cannot: with the system prompt and instructions
    /// alone it passes the model's context window (about 4 bytes a token; an image is counted
    /// as 1,600 tokens).
    pub fn too_large(&self, prompt: &Prompt) -> Option<String> {
        let head: usize = self.messages[..self.limits.head.min(self.messages.len())]
            .iter()
            .map(|m| m.content.len())
            .sum();
        let tokens = (head + prompt.text.len()) as u64 / 4 + prompt.images.len() as u64 * 1600;
        (tokens > self.limits.window).then(|| {
            format!(
                "The prompt does not fit the model's context window: about {tokens} tokens with the system prompt, and the window is {} tokens. Send less (a smaller resource, fewer files).",
                self.limits.window
            )
        })
    }

    /// The model's context window, in tokens.
    pub fn window(&self) -> u64 {
        self.limits.window
    }

    /// Another model for the next calls: its provider, registry entry and context window.
    pub fn switch_model(&mut self, provider: Provider, model: Option<&'static Model>, window: u64) {
        self.provider = provider;
        self.rules.model = model;
        self.journal.model = model;
        self.limits.window = window;
    }

    /// The files and directories the tools may use.
    pub fn workspace(&self) -> &tools::Workspace {
        self.tools.workspace()
    }

    /// The autonomy level of the next calls (an editor's mode switch).
    pub fn set_autonomy(&mut self, autonomy: Autonomy, mode: PermissionMode) {
        self.rules.autonomy = autonomy;
        self.rules.permission_mode = mode;
        self.tools.set_level(mode, autonomy != Autonomy::Low);
    }

    /// Ends the conversation: its MCP servers are stopped and the session is on disk.
    pub fn close(mut self, why: &str) {
        self.tools.servers_mut().close(why);
        self.sync();
    }

    /// The conversation so far, system prompt first.
    #[cfg(test)]
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }
}

pub fn session_lock(session: &Arc<Mutex<Session>>) -> std::sync::MutexGuard<'_, Session> {
    session.lock().unwrap_or_else(|p| p.into_inner())
}

/// The user's prompt: its text and the images attached to it.
#[derive(Debug, Default)]
pub struct Prompt {
    pub text: String,
    pub images: Vec<Image>,
}

/// Records the run in its session as it happens.
pub struct SessionJournal {
    session: Option<Arc<Mutex<Session>>>,
    out: Output,
    model: Option<&'static Model>,
}

impl SessionJournal {
    pub fn new(
        session: Option<Arc<Mutex<Session>>>,
        out: Output,
        model: Option<&'static Model>,
    ) -> SessionJournal {
        SessionJournal { session, out, model }
    }

    fn record(&mut self, kind: Kind, payload: serde_json::Value) {
        let Some(session) = &self.session else { return };
        let failure = {
            let mut s = session_lock(session);
            s.record(kind, payload);
            s.take_failure()
        };
        if let Some(message) = failure {
            // The run goes on; the wrapper learns that history is incomplete.
            let _ = self.out.warning(&Warning::new(
                WarningCode::SessionUnavailable,
                format!("Session recording stopped: {message}"),
            ));
        }
    }

    /// A payload built with the session's redactor.
    fn with_redactor(
        &self,
        build: impl FnOnce(&Redactor) -> serde_json::Value,
    ) -> Option<serde_json::Value> {
        let session = self.session.as_ref()?;
        let s = session_lock(session);
        Some(build(s.redactor()))
    }
}

impl Journal for SessionJournal {
    fn tool_call(&mut self, call: &ToolCall, side_effect: tools::SideEffect) {
        if let Some(payload) =
            self.with_redactor(|r| session::tool_call_payload(call, side_effect, r))
        {
            self.record(Kind::ToolCall, payload);
        }
    }

    fn assistant(&mut self, text: &str, calls: &[ToolCall], native: &[serde_json::Value]) {
        if let Some(payload) =
            self.with_redactor(|r| session::assistant_payload(text, calls, native, r))
        {
            self.record(Kind::Message, payload);
        }
    }

    fn tool_result(&mut self, call: &ToolCall, outcome: &Outcome) {
        if let Some(payload) = self.with_redactor(|r| {
            session::tool_result_payload(&call.id, outcome.ok, &outcome.output, r)
        }) {
            self.record(Kind::ToolResult, payload);
        }
    }

    fn usage(&mut self, usage: &Usage) {
        let cost = self.model.and_then(|m| models::cost(m, usage));
        self.record(Kind::ProviderUsage, session::usage_payload(usage, cost));
    }

    fn note(&mut self, kind: Kind, payload: serde_json::Value) {
        self.record(kind, payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Role;
    use crate::protocol::events::{DecidedBy, SchemaVersion};
    use crate::provider::scripted::Scripted;
    use crate::run::agent::Verdict;
    use crate::testing::kit::{SharedBuf, TempDir};
    use crate::tools::{SideEffect, Workspace};

    /// A front-end that answers every approval with the next verdict it was given, and
    /// remembers what it was asked.
    #[derive(Default)]
    struct FakeClient {
        verdicts: Vec<bool>,
        asked: Vec<String>,
    }

    impl Client for FakeClient {
        fn source(&self) -> &'static str {
            "test"
        }
        fn approvals(&mut self) -> Option<&mut dyn Approvals> {
            Some(self)
        }
    }

    impl Approvals for FakeClient {
        fn granted(&self, _: &str, _: SideEffect) -> bool {
            false
        }
        fn grant(&mut self, _: &str, _: SideEffect) {}
        fn request(&mut self) -> (String, u64) {
            self.asked.push(format!("q{}", self.asked.len() + 1));
            (self.asked.last().cloned().unwrap_or_default(), 1000)
        }
        fn wait(&mut self, _: &str) -> Result<Verdict, Stop> {
            let allowed = !self.verdicts.is_empty() && self.verdicts.remove(0);
            Ok(Verdict {
                allowed,
                decided_by: DecidedBy::Client,
                reason: if allowed { "yes" } else { "no" }.to_string(),
                for_session: false,
            })
        }
    }

    fn engine(script: &str, dir: &TempDir) -> (Engine, SharedBuf) {
        let (emitter, sink) = crate::testing::kit::stream_emitter("run_t", SchemaVersion::V2);
        let tools =
            Toolbox::new(Workspace::new(&dir.path).unwrap(), PermissionMode::Auto, vec![], vec![])
                .asking_for_approval(true);
        let engine = Engine::new(Parts {
            recorder: None,
            provider: Provider::Scripted(Scripted::from_text(script)),
            tools,
            out: Output::new(emitter),
            session: None,
            untitled: false,
            rules: Rules {
                max_turns: 8,
                model: None,
                permission_mode: PermissionMode::Auto,
                autonomy: Autonomy::Low,
                structured: None,
                history_budget: 100_000,
            },
            head: vec![Message::system("You are a test.")],
            history: Vec::new(),
            window: 128_000,
            max_usd: None,
        });
        (engine, sink)
    }

    fn prompt(text: &str) -> Prompt {
        Prompt { text: text.to_string(), images: Vec::new() }
    }

    #[test]
    fn two_turns_share_one_conversation_and_ask_the_client_for_approvals() {
        let dir = TempDir::new("engine-turns");
        let script = r#"{"turns": [
            {"toolCalls": [{"id": "w1", "name": "write_file", "arguments": {"path": "a.txt", "content": "one"}}]},
            {"text": "wrote a.txt"},
            {"toolCalls": [{"id": "w2", "name": "write_file", "arguments": {"path": "b.txt", "content": "two"}}]},
            {"text": "b.txt was refused"}
        ]}"#;
        let (mut engine, sink) = engine(script, &dir);
        let mut client = FakeClient { verdicts: vec![true, false], ..FakeClient::default() };
        let first = engine.turn(prompt("write a"), &mut client).unwrap();
        assert_eq!(first.text, "wrote a.txt");
        let second = engine.turn(prompt("write b"), &mut client).unwrap();
        assert_eq!(second.text, "b.txt was refused");
        assert_eq!(client.asked, ["q1", "q2"]);
        assert_eq!(dir.read("a.txt"), "one");
        assert!(!dir.join("b.txt").exists());
        // The second turn continued the first's conversation.
        let roles: Vec<Role> = engine.messages().iter().map(|m| m.role).collect();
        use Role::*;
        assert_eq!(
            roles,
            [System, User, Assistant, Tool, Assistant, User, Assistant, Tool, Assistant]
        );
        assert_eq!(engine.messages()[5].content, "write b");
        assert_eq!(engine.messages()[7].content, "Error: Permission denied for write_file: no");
        let decisions: Vec<String> = sink
            .text()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["type"] == "permission_decision")
            .map(|e| format!("{} {}", e["id"].as_str().unwrap(), e["action"].as_str().unwrap()))
            .collect();
        assert_eq!(decisions, ["w1 allow", "w2 deny"]);
    }

    #[test]
    fn a_turn_that_fails_leaves_the_engine_ready_for_the_next() {
        let dir = TempDir::new("engine-fail");
        let script = r#"{"turns": [{"error": "down"}, {"text": "back"}]}"#;
        let (mut engine, _) = engine(script, &dir);
        let mut client = FakeClient::default();
        assert!(engine.turn(prompt("first"), &mut client).is_err());
        assert_eq!(engine.turn(prompt("again"), &mut client).unwrap().text, "back");
        let users: Vec<&str> = engine
            .messages()
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.content.as_str())
            .collect();
        assert_eq!(users, ["first", "again"]);
    }
}
