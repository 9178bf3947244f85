//! The agent loop: stream a turn (its text as it comes, its tool calls
//! once its stream has ended), run the calls one at a time in order, send the results back, and
//! stop at the first turn without tool calls. Its text is the answer.
//!
//! Reaching the turn limit, or a last turn with no text, is `max_turns` (exit 4): a wrapper
//! must never mistake a non-answer for an answer.

use std::time::{Duration, Instant};

use crate::conversation::{Answer, Message, ToolCall, ToolSpec};
use crate::error::{Failure, Stop};
use crate::output::{Decision, Finished, Gate, Output, Phase};
use crate::protocol::events::{Action, DecidedBy, Warning, WarningCode};
use crate::provider::models::{self, Model, Usage};
use crate::provider::{Provider, Request, StreamEvent};
use crate::run::limits::Limits;
use crate::run::structured::{self, Judged, OutputSchema};
use crate::session::Kind;
use crate::tools::{
    Allowed, Autonomy, Gated, Outcome, PermissionMode, Refusal, SideEffect, Toolbox,
};

/// The system prompt: who zero is and how it should work.
pub const SYSTEM_PROMPT: &str = "\
You are Zero, a coding agent working in a terminal on the user's repository. Be concise and \
precise. Read before you edit; prefer small, targeted changes; never guess at file contents. \
For work with several steps, keep a plan with update_plan (pending, in_progress, completed, \
failed). Tools: read_file to read, list_directory and glob to find files, grep to search \
contents (prefer it to shell grep), edit_file or apply_patch to change files, write_file to \
create them, bash to run commands. Some tools may not be available in this run; use the ones \
you are given. You may call several tools in one turn. When the task is done, reply with a \
short summary of what you did and what you found, without mentioning these instructions.";

/// Tool output sent back to the model is kept under this size: its start and end, with a note
/// of what was left out, so one huge result cannot overflow the context window.
pub const MODEL_RESULT_CAP: usize = 100 * 1024;

/// The part of a tool's output the model gets (see [`MODEL_RESULT_CAP`]).
fn for_model(output: &str) -> String {
    if output.len() <= MODEL_RESULT_CAP {
        return output.to_string();
    }
    let half = MODEL_RESULT_CAP / 2;
    let (head, _) = crate::text::cap_utf8(output, half);
    let mut tail_start = output.len() - half;
    while !output.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let omitted = tail_start - head.len();
    format!("{head}\n[... {omitted} bytes of output omitted ...]\n{}", &output[tail_start..])
}

/// Where a run's history is recorded (the session store, or nothing).
pub trait Journal {
    fn tool_call(&mut self, call: &ToolCall, side_effect: SideEffect);
    /// The end of a model turn: its text and the calls it made.
    /// An assistant turn, with the provider-native content to send back (see
    /// [`Message::native`]).
    fn assistant(&mut self, text: &str, calls: &[ToolCall], native: &[serde_json::Value]);
    fn tool_result(&mut self, call: &ToolCall, outcome: &Outcome);
    fn usage(&mut self, usage: &Usage);
    /// Anything else the session keeps: permission requests and decisions, turn ends.
    fn note(&mut self, kind: Kind, payload: serde_json::Value);
}

/// How a client answered a permission request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    /// `Client`, `Timeout` or `Eof`.
    pub decided_by: DecidedBy,
    pub reason: String,
    /// The answer holds for later calls of the same tool and side effect too (`allow_session`;
    /// ACP's `allow_always` and `reject_always`).
    pub for_session: bool,
}

/// Who answers for a call the autonomy level does not allow outright (live mode's client,
/// `--approvals stdin`). Without one, the policy denies such calls.
pub trait Approvals {
    /// An earlier `allow_session` covers calls of this tool with this side effect.
    fn granted(&self, name: &str, side_effect: SideEffect) -> bool;
    /// Remembers an `allow_session` answer.
    fn grant(&mut self, name: &str, side_effect: SideEffect);
    /// An earlier "reject always" refuses calls of this tool with this side effect without
    /// asking (a client with that answer: ACP's `reject_always`).
    fn rejected(&self, _name: &str, _side_effect: SideEffect) -> bool {
        false
    }
    /// Remembers a "reject always" answer.
    fn reject(&mut self, _name: &str, _side_effect: SideEffect) {}
    /// A new request id, and how long the client has to answer it.
    fn request(&mut self) -> (String, u64);
    /// Waits for the answer to request `id`.
    fn wait(&mut self, id: &str) -> Result<Verdict, Stop>;
}

/// A journal that keeps nothing.
#[cfg(test)]
pub struct NoJournal;

#[cfg(test)]
impl Journal for NoJournal {
    fn tool_call(&mut self, _: &ToolCall, _: SideEffect) {}
    fn assistant(&mut self, _: &str, _: &[ToolCall], _: &[serde_json::Value]) {}
    fn tool_result(&mut self, _: &ToolCall, _: &Outcome) {}
    fn usage(&mut self, _: &Usage) {}
    fn note(&mut self, _: Kind, _: serde_json::Value) {}
}

/// One run of the loop.
pub struct Agent<'a> {
    pub provider: &'a mut Provider,
    pub tools: &'a mut Toolbox,
    pub out: &'a Output,
    pub journal: &'a mut dyn Journal,
    pub max_turns: u32,
    /// The registry model, for prices.
    pub model: Option<&'static Model>,
    /// `run_start`'s permission mode and autonomy level, for the permission events.
    pub permission_mode: PermissionMode,
    pub autonomy: Autonomy,
    /// Who answers for gated calls; `None`: the policy denies them.
    pub approvals: Option<&'a mut dyn Approvals>,
    /// The context window to fit each request to, and the spending cap.
    pub limits: &'a mut Limits,
    /// `--output-schema`: the answer is a `structured_output` call that matches it.
    pub structured: Option<&'a OutputSchema>,
    /// `--record`: each model call is added to the script.
    pub recorder: Option<&'a mut crate::run::record::Recorder>,
}

/// What a turn's calls gave: the structured answer, when one was accepted, and the first
/// problem of each invalid `structured_output` call.
#[derive(Default)]
struct Calls {
    answer: Option<serde_json::Value>,
    invalid: Vec<String>,
}

/// Writes one event of a model call that is not a delta: a tool call (recorded, and kept for
/// running), its usage, a warning.
fn write_call_event(
    out: &Output,
    journal: &mut dyn Journal,
    (model, limits, answer_tool, tools): (Option<&'static Model>, &mut Limits, bool, &Toolbox),
    calls: &mut Vec<ToolCall>,
    event: StreamEvent,
) -> Result<(), Stop> {
    match event {
        StreamEvent::ToolCall(call) => {
            // `structured_output` has no effect when it is the answer's tool; a call of it
            // without `--output-schema` is of a tool zero does not know.
            let side_effect = match call.name == structured::TOOL {
                true if answer_tool => SideEffect::None,
                true => SideEffect::Unknown,
                false => tools.side_effect_of(&call.name),
            };
            out.tool_call(&call.id, &call.name, &call.arguments, side_effect)?;
            journal.tool_call(&call, side_effect);
            calls.push(call);
        }
        StreamEvent::Usage(usage) => {
            let cost = model.and_then(|m| models::cost(m, &usage));
            limits.record(usage.prompt_tokens, cost);
            out.usage(&usage, cost)?;
            journal.usage(&usage);
        }
        StreamEvent::Warning(warning) => out.warning(&warning)?,
        // Deltas and native content are handled where they arrive.
        StreamEvent::Text(_)
        | StreamEvent::LastText(_)
        | StreamEvent::Reasoning(_)
        | StreamEvent::Native(_) => {}
    }
    Ok(())
}

/// The run's end when no answer matched within the attempts (`failed` of them, which a turn
/// with several invalid calls can take past the limit).
fn not_matched(failed: u32, last: &str) -> Failure {
    let plural = if failed == 1 { "" } else { "s" };
    Failure::OutputSchema(format!(
        "The answer did not match the output schema after {failed} attempt{plural}: {last}"
    ))
}

/// The result of a call that an interrupt stopped before it ran.
fn interrupted_outcome() -> Outcome {
    Outcome::error("The call was interrupted.")
}

/// A live turn stopped by SIGINT (see `ending`): outside live mode it is never set.
fn interrupted() -> Result<(), Stop> {
    if crate::run::ending::turn_interrupted() {
        return Err(Failure::Interrupted.into());
    }
    Ok(())
}

/// What one model call said: its text, the tools it called, and what its provider needs to
/// be sent back (reasoning items, thinking blocks).
struct Said {
    text: String,
    calls: Vec<ToolCall>,
    native: Vec<serde_json::Value>,
}

impl Agent<'_> {
    /// Runs until the model answers; `messages` holds the conversation so far and grows.
    pub fn run(&mut self, messages: &mut Vec<Message>) -> Result<Answer, Stop> {
        let mut specs = self.tools.specs();
        specs.extend(self.structured.map(OutputSchema::spec));
        // Invalid answers and turns without one, with `--output-schema`.
        let mut failed = 0;
        for _ in 0..self.max_turns {
            // An interrupt during the last tool of a turn stops before the next model call.
            interrupted()?;
            self.limits.check_budget()?;
            // An MCP server said its tools changed: the next call offers the new list.
            if self.refresh_tools(messages)? {
                specs = self.tools.specs();
                specs.extend(self.structured.map(OutputSchema::spec));
            }
            let fitted = self.limits.fit(messages, &specs)?;
            if let Some(warning) = &fitted.warning {
                self.out.warning(warning)?;
            }
            let Said { text, calls, native } = self.model_call(&fitted.messages, &specs)?;
            self.out.end_turn()?;
            self.journal.assistant(&text, &calls, &native);
            let mut message = Message::assistant(text.clone(), calls.clone());
            message.native = native;
            messages.push(message);
            if let (true, Some(schema)) = (calls.is_empty(), self.structured) {
                failed += 1;
                if failed >= schema.attempts {
                    return Err(not_matched(failed, "no structured_output call").into());
                }
                self.out.not_the_answer();
                // The reminder is part of the conversation, as the session keeps it.
                self.journal.note(
                    Kind::Message,
                    crate::session::user_payload(structured::REMINDER, &[], "reminder"),
                );
                messages.push(Message::user(structured::REMINDER));
                continue;
            }
            if calls.is_empty() {
                if text.trim().is_empty() {
                    return Err(Failure::MaxTurns(
                        "The model ended its turn without an answer.".to_string(),
                    )
                    .into());
                }
                return Ok(Answer::text(text));
            }
            let done = self.run_calls(&calls, messages)?;
            if let Some(value) = done.answer {
                return Ok(Answer::structured(value));
            }
            if let (Some(schema), Some(last)) = (self.structured, done.invalid.last()) {
                failed += done.invalid.len() as u32;
                if failed >= schema.attempts {
                    return Err(not_matched(failed, last).into());
                }
            }
        }
        Err(Failure::MaxTurns(format!(
            "Reached the limit of {} turns without a final answer (raise it with --max-turns).",
            self.max_turns
        ))
        .into())
    }

    /// Before a model call: the MCP servers' news. A server that failed is a warning, and the
    /// model is told its tools will not come back. Returns whether the tools offered changed.
    fn refresh_tools(&mut self, messages: &mut Vec<Message>) -> Result<bool, Stop> {
        if !self.tools.servers().any() {
            return Ok(false);
        }
        self.out.set_phase(Some(Phase::Tool), None);
        let refreshed = self.tools.refresh();
        self.out.set_phase(None, None);
        let Some((failed, left_out)) = refreshed else { return Ok(false) };
        for server in &failed {
            self.out.warning(&Warning::new(WarningCode::McpServerFailed, &server.warning))?;
        }
        for warning in left_out {
            self.out.warning(&Warning::new(WarningCode::McpToolLeftOut, warning))?;
        }
        // As the session keeps it.
        for server in failed {
            self.journal
                .note(Kind::Message, crate::session::user_payload(&server.note, &[], "notice"));
            messages.push(Message::user(server.note));
        }
        Ok(true)
    }

    /// One model call, streamed: its text and reasoning are written as they come. Once the
    /// call has said something, its other events (tool calls, usage, warnings) wait for the
    /// end of its stream: every text and reasoning delta of a call comes before them, also
    /// when a provider streams text after a call (Gemini parts, Anthropic blocks), and a key
    /// spelled across that call is still one text for the redactor. Before any output (a
    /// retry's warning) they are written at once.
    fn model_call(&mut self, messages: &[Message], specs: &[ToolSpec]) -> Result<Said, Stop> {
        let (out, journal, model) = (self.out, &mut *self.journal, self.model);
        let limits = &mut *self.limits;
        let tools = &*self.tools;
        let answer_tool = self.structured.is_some();
        let mut said = Said { text: String::new(), calls: Vec::new(), native: Vec::new() };
        let mut deferred: Vec<StreamEvent> = Vec::new();
        let mut spoke = false;
        let recording = self.recorder.is_some();
        let mut tape = crate::run::record::Tape::default();
        let mut sink = |event: StreamEvent| -> Result<(), Stop> {
            interrupted()?;
            if recording {
                tape.see(&event);
            }
            match event {
                StreamEvent::Text(delta) => {
                    spoke = true;
                    said.text.push_str(&delta);
                    out.text(&delta)?;
                }
                StreamEvent::LastText(delta) => {
                    spoke = true;
                    said.text.push_str(&delta);
                    out.last_text(&delta)?;
                }
                // Reasoning is never part of the answer; schema 2 shows it.
                StreamEvent::Reasoning(delta) => {
                    spoke = true;
                    out.reasoning(&delta)?;
                }
                StreamEvent::Native(value) => said.native.push(value),
                event @ StreamEvent::ToolCall(_) => {
                    spoke = true;
                    deferred.push(event);
                }
                event if spoke => deferred.push(event),
                event => write_call_event(
                    out,
                    journal,
                    (model, &mut *limits, answer_tool, tools),
                    &mut said.calls,
                    event,
                )?,
            }
            Ok(())
        };
        let request = Request { messages, tools: specs };
        out.set_phase(Some(Phase::Model), None);
        let streamed = self.provider.stream(&request, &mut sink);
        // No heartbeat claims the model is still answering once the call is over.
        out.set_phase(None, None);
        // What the call did is written however it ended: its text first, then the rest.
        for event in deferred {
            write_call_event(
                out,
                journal,
                (model, &mut *limits, answer_tool, tools),
                &mut said.calls,
                event,
            )?;
        }
        if let Some(recorder) = self.recorder.as_deref_mut() {
            recorder.add(tape, &streamed, out)?;
        }
        if streamed.is_err() {
            // A cancelled call fails as its connection is shut down: it was interrupted.
            interrupted()?;
        }
        streamed?;
        Ok(said)
    }

    /// Runs a turn's calls in order, each through its permission; after an interrupt, every
    /// call left gets an interrupted result, in the stream and in the conversation, or the
    /// next request is refused.
    fn run_calls(
        &mut self,
        calls: &[ToolCall],
        messages: &mut Vec<Message>,
    ) -> Result<Calls, Stop> {
        let mut given = Calls::default();
        for (done, call) in calls.iter().enumerate() {
            if crate::run::ending::turn_interrupted() {
                for call in &calls[done..] {
                    self.finish_call(call, &interrupted_outcome(), Duration::ZERO, messages)?;
                }
                return Err(Failure::Interrupted.into());
            }
            if given.answer.is_some() {
                let skipped = Outcome::error("not run: the answer was already given");
                self.finish_call(call, &skipped, Duration::ZERO, messages)?;
                continue;
            }
            if let Some(schema) = self.structured.filter(|_| call.name == structured::TOOL) {
                let outcome = match schema.judge(&call.arguments) {
                    Judged::Answer(value) => {
                        given.answer = Some(value);
                        Outcome::ok("Accepted.")
                    }
                    Judged::Invalid { problems, first } => {
                        given.invalid.push(first);
                        Outcome::error(problems)
                    }
                };
                self.finish_call(call, &outcome, Duration::ZERO, messages)?;
                continue;
            }
            let (outcome, duration) = match self.tools.gate(call) {
                Some(gated) => self.decide(call, &gated)?,
                None => {
                    if let Some(allowed) = self.tools.allowed_by_level(call) {
                        self.allow_by_policy(call, allowed)?;
                    }
                    self.run_tool(call, false)
                }
            };
            self.finish_call(call, &outcome, duration, messages)?;
        }
        Ok(given)
    }

    /// Writes a call's result, records it, and adds it to the conversation.
    fn finish_call(
        &mut self,
        call: &ToolCall,
        outcome: &Outcome,
        duration: Duration,
        messages: &mut Vec<Message>,
    ) -> Result<(), Stop> {
        self.out.tool_result(&Finished {
            id: &call.id,
            name: &call.name,
            ok: outcome.ok,
            output: &outcome.output,
            exit_code: outcome.exit_code,
            changed_files: &outcome.changed_files,
            refused: outcome.refused,
            duration,
            mcp: self.tools.origin(&call.name),
            diffs: &outcome.diffs,
            terminal: outcome.terminal.as_deref(),
        })?;
        self.journal.tool_result(call, outcome);
        messages.push(Message::tool_result(call, for_model(&outcome.output)));
        Ok(())
    }

    /// A call of a tool that needs permission and that the level allows: the policy's
    /// decision is written (schema 2) before the call runs, naming the flag that allows it.
    fn allow_by_policy(&mut self, call: &ToolCall, allowed: Allowed) -> Result<(), Stop> {
        let Allowed { side_effect, reason } = allowed;
        let flag =
            if self.autonomy != Autonomy::High && self.permission_mode == PermissionMode::Unsafe {
                "--skip-permissions-unsafe".to_string()
            } else {
                format!("--auto {}", self.autonomy)
            };
        let reason = reason.unwrap_or_else(|| format!("allowed by {flag}"));
        let gate = Gate {
            id: &call.id,
            name: &call.name,
            permission_mode: self.permission_mode,
            autonomy: self.autonomy,
            side_effect,
            reason: &reason,
        };
        let decision =
            Decision { action: Action::Allow, reason: &reason, decided_by: DecidedBy::Policy };
        self.out.permission_decision(&gate, &decision)?;
        self.note_decision(&gate, &decision, None);
        Ok(())
    }

    /// A call the autonomy level does not allow outright: the client decides when there is
    /// one (an earlier `allow_session` without asking again), else the policy denies it. The
    /// permission events say which before the call's result.
    fn decide(&mut self, call: &ToolCall, gated: &Gated) -> Result<(Outcome, Duration), Stop> {
        let gate = Gate {
            id: &call.id,
            name: &call.name,
            permission_mode: self.permission_mode,
            autonomy: self.autonomy,
            side_effect: gated.side_effect,
            reason: &gated.reason,
        };
        let Some(approvals) = self.approvals.as_deref_mut() else {
            let reason = gated.denial.trim_start_matches("Error: ");
            let out = self.out;
            out.permission_request(&gate, None)?;
            let decision = Decision { action: Action::Deny, reason, decided_by: DecidedBy::Policy };
            out.permission_decision(&gate, &decision)?;

            self.note_decision(&gate, &decision, None);
            return Ok((Toolbox::denied(gated), Duration::ZERO));
        };
        let verdict = if approvals.rejected(&call.name, gated.side_effect) {
            Verdict {
                allowed: false,
                decided_by: DecidedBy::Session,
                reason: format!(
                    "rejected for this session: {} ({}) was answered reject_always earlier",
                    call.name, gated.side_effect
                ),
                for_session: false,
            }
        } else if approvals.granted(&call.name, gated.side_effect) {
            Verdict {
                allowed: true,
                decided_by: DecidedBy::Session,
                reason: format!(
                    "allowed for this session: {} ({}) was answered allow_session earlier",
                    call.name, gated.side_effect
                ),
                for_session: false,
            }
        } else {
            let (id, timeout) = approvals.request();
            self.out.permission_request(&gate, Some((&id, timeout)))?;
            self.journal.note(
                Kind::PermissionRequest,
                serde_json::json!({"id": call.id, "name": call.name, "requestId": id, "sideEffect": gated.side_effect, "reason": gated.reason}),
            );
            self.out.set_phase(Some(Phase::Approval), Some(&call.id));
            let verdict = approvals.wait(&id);
            self.out.set_phase(None, None);
            match verdict {
                // An interrupt cancels the wait: the call gets its decision and its result,
                // and the turn's other calls get theirs (see `run`).
                Err(Stop::Failed(Failure::Interrupted)) => {
                    let decision = Decision {
                        action: Action::Cancel,
                        reason: "The approval was cancelled: the turn was interrupted (SIGINT, or the client cancelled it).",
                        decided_by: DecidedBy::Interrupt,
                    };
                    self.out.permission_decision(&gate, &decision)?;
                    self.note_decision(&gate, &decision, None);
                    let outcome =
                        Outcome { refused: Some(Refusal::Cancelled), ..interrupted_outcome() };
                    return Ok((outcome, Duration::ZERO));
                }
                verdict => verdict?,
            }
        };
        if let (true, Some(approvals)) = (verdict.for_session, self.approvals.as_deref_mut()) {
            if verdict.allowed {
                approvals.grant(&call.name, gated.side_effect);
            } else {
                approvals.reject(&call.name, gated.side_effect);
            }
        }
        let decision = Decision {
            action: if verdict.allowed { Action::Allow } else { Action::Deny },
            reason: &verdict.reason,
            decided_by: verdict.decided_by,
        };
        self.out.permission_decision(&gate, &decision)?;
        self.note_decision(&gate, &decision, Some(verdict.for_session));
        if !verdict.allowed {
            let denial = format!("Error: Permission denied for {}: {}", call.name, verdict.reason);
            let outcome = Outcome { refused: Some(Refusal::Denied), ..Outcome::error(denial) };
            return Ok((outcome, Duration::ZERO));
        }
        Ok(self.run_tool(call, true))
    }

    /// Runs one call (`approved`: the client allowed it), timed, with heartbeats.
    fn run_tool(&mut self, call: &ToolCall, approved: bool) -> (Outcome, Duration) {
        self.out.set_phase(Some(Phase::Tool), Some(&call.id));
        let started = Instant::now();
        let outcome = if approved { self.tools.run_approved(call) } else { self.tools.run(call) };
        let duration = started.elapsed();
        self.out.set_phase(None, None);
        (outcome, duration)
    }

    /// The session keeps every decision.
    fn note_decision(&mut self, gate: &Gate<'_>, decision: &Decision<'_>, session: Option<bool>) {
        let mut payload = serde_json::json!({"id": gate.id, "name": gate.name, "action": decision.action, "sideEffect": gate.side_effect, "decidedBy": decision.decided_by, "reason": decision.reason});
        if session == Some(true) {
            payload["forSession"] = serde_json::Value::Bool(true);
        }
        self.journal.note(Kind::PermissionDecision, payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Role;

    use crate::protocol::events::SchemaVersion;
    use crate::provider::scripted::Scripted;

    use crate::testing::kit::{SharedBuf, TempDir};
    use crate::tools::{PermissionMode, Workspace};

    struct Run {
        result: Result<String, Stop>,
        messages: Vec<Message>,
        events: Vec<serde_json::Value>,
    }

    fn run(script: &str, mode: PermissionMode, max_turns: u32, dir: &std::path::Path) -> Run {
        run_with(script, mode, max_turns, dir, None, SchemaVersion::V1).0
    }

    /// What a run wrote to stdout so far, and the emitter it wrote with.
    struct Written {
        sink: SharedBuf,
        out: Output,
    }

    /// A run in schema `schema`, with an approver; also returns the emitter.
    fn run_with(
        script: &str,
        mode: PermissionMode,
        max_turns: u32,
        dir: &std::path::Path,
        approvals: Option<&mut Ready>,
        schema: SchemaVersion,
    ) -> (Run, Written) {
        let (mut emitter, sink) = crate::testing::kit::stream_emitter("run_t", schema);
        emitter.set_heartbeat(std::time::Duration::from_millis(100));
        let out: Output = Output::new(emitter);
        let mut provider = Provider::Scripted(Scripted::from_text(script));
        let mut tools = Toolbox::new(Workspace::new(dir).unwrap(), mode, vec![], vec![])
            .asking_for_approval(approvals.is_some());
        let mut messages = vec![Message::system(SYSTEM_PROMPT), Message::user("go")];
        let mut journal = NoJournal;
        let mut agent = Agent {
            provider: &mut provider,
            tools: &mut tools,
            out: &out,
            journal: &mut journal,
            max_turns,
            model: models::find("gpt-4.1"),
            permission_mode: mode,
            autonomy: Autonomy::Low,
            approvals: approvals.map(|a| a as &mut dyn Approvals),
            limits: &mut crate::run::limits::Limits::new(1, 128_000, None),
            structured: None,
            recorder: None,
        };
        let result = agent.run(&mut messages).map(|answer| answer.text);
        let text = sink.text();
        let events = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        (Run { result, messages, events }, Written { sink, out })
    }

    /// An approver with answers ready.
    #[derive(Default)]
    struct Ready {
        answers: Vec<Verdict>,
        grants: Vec<(String, SideEffect)>,
        asked: Vec<String>,
    }

    impl Approvals for Ready {
        fn granted(&self, name: &str, side_effect: SideEffect) -> bool {
            self.grants.iter().any(|(n, s)| n == name && *s == side_effect)
        }
        fn grant(&mut self, name: &str, side_effect: SideEffect) {
            self.grants.push((name.into(), side_effect));
        }
        fn request(&mut self) -> (String, u64) {
            self.asked.push(format!("r{}", self.asked.len() + 1));
            (self.asked.last().cloned().unwrap_or_default(), 1000)
        }
        fn wait(&mut self, _: &str) -> Result<Verdict, Stop> {
            Ok(self.answers.remove(0))
        }
    }

    #[test]
    fn approved_calls_run_a_session_grant_skips_the_question_and_denials_say_why() {
        let dir = scratch("approvals");
        let script = r#"{"turns": [
            {"toolCalls": [
                {"id": "a", "name": "bash", "arguments": {"command": "echo a >> log"}},
                {"id": "b", "name": "bash", "arguments": {"command": "echo b >> log"}},
                {"id": "c", "name": "write_file", "arguments": {"path": "w.txt", "content": "x"}}
            ]},
            {"text": "done"}
        ]}"#;
        let verdict = |allowed, for_session, reason: &str| Verdict {
            allowed,
            decided_by: DecidedBy::Client,
            reason: reason.into(),
            for_session,
        };
        let mut ready = Ready {
            answers: vec![verdict(true, true, "fine"), verdict(false, false, "no files")],
            ..Ready::default()
        };
        let (run, _) = run_with(
            script,
            PermissionMode::Auto,
            12,
            &dir.path,
            Some(&mut ready),
            SchemaVersion::V2,
        );
        assert_eq!(run.result.unwrap(), "done");
        assert_eq!(dir.read("log"), "a\nb\n");
        assert!(!dir.join("w.txt").exists());
        assert_eq!(ready.asked, ["r1", "r2"], "b was covered by the grant for bash");
        let decisions: Vec<(&str, &str, &str)> = run
            .events
            .iter()
            .filter(|e| e["type"] == "permission_decision")
            .map(|e| {
                let f = |k: &str| e[k].as_str().unwrap();
                (f("id"), f("action"), f("decidedBy"))
            })
            .collect();
        assert_eq!(
            decisions,
            [("a", "allow", "client"), ("b", "allow", "session"), ("c", "deny", "client")]
        );
        assert_eq!(run.messages[5].content, "Error: Permission denied for write_file: no files");
    }

    #[test]
    fn a_failed_model_call_leaves_no_phase_for_heartbeats() {
        let dir = scratch("phase");
        let script = r#"{"turns": [{"error": "down"}]}"#;
        let (run, written) =
            run_with(script, PermissionMode::Auto, 12, &dir.path, None, SchemaVersion::V2);
        assert!(run.result.is_err());
        let later = std::time::Instant::now() + std::time::Duration::from_secs(5);
        assert!(written.out.beat(later).is_some(), "heartbeats are on");
        // Nothing is written: the silence after the call is not the model's.
        assert_eq!(written.sink.text(), "");
    }

    fn scratch(name: &str) -> TempDir {
        let dir = TempDir::new(name);
        dir.write("notes.txt", "remember the milk\n");
        dir
    }

    #[test]
    fn a_tool_result_goes_back_and_the_next_turn_answers() {
        let dir = scratch("loop");
        let script = r#"{"turns": [
            {"toolCalls": [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}], "usage": {"promptTokens": 100, "completionTokens": 10}},
            {"text": ["It says milk."]}
        ]}"#;
        let run = run(script, PermissionMode::Auto, 12, &dir.path);
        assert_eq!(run.result.unwrap(), "It says milk.");
        let roles: Vec<Role> = run.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::System, Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
        assert_eq!(run.messages[3].tool_call_id.as_deref(), Some("c1"));
        assert!(run.messages[3].content.contains("1 | remember the milk"));
        let kinds: Vec<&str> = run.events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["tool_call", "usage", "tool_result", "text"]);
        assert_eq!(run.events[1]["costUsd"], 0.00028);
    }

    #[test]
    fn gated_tools_do_not_run_in_auto_mode_and_do_in_unsafe_mode() {
        let dir = scratch("gate");
        let script = r#"{"turns": [
            {"toolCalls": [{"name": "bash", "arguments": {"command": "echo ran > ran.txt"}}]},
            {"text": "done"}
        ]}"#;
        let refused = run(script, PermissionMode::Auto, 12, &dir.path);
        assert!(refused.messages[3].content.contains("Permission required for bash"));
        assert_eq!(refused.events[1]["status"], "error");
        assert!(!dir.join("ran.txt").exists());
        let allowed = run(script, PermissionMode::Unsafe, 12, &dir.path);
        assert_eq!(allowed.events[1]["status"], "ok");
        assert_eq!(dir.read("ran.txt"), "ran\n");
    }

    #[test]
    fn turn_limits_and_empty_answers_are_max_turns() {
        let dir = scratch("limits");
        let looping =
            r#"{"turns": [{"toolCalls": [{"name": "glob", "arguments": {"pattern": "*"}}]}]}"#;
        let run1 = run(looping, PermissionMode::Auto, 1, &dir.path);
        assert!(
            matches!(run1.result, Err(Stop::Failed(Failure::MaxTurns(ref m))) if m.contains("limit of 1 turns"))
        );
        let empty = r#"{"turns": [{"text": ["  "]}]}"#;
        let run2 = run(empty, PermissionMode::Auto, 12, &dir.path);
        assert!(
            matches!(run2.result, Err(Stop::Failed(Failure::MaxTurns(ref m))) if m.contains("without an answer"))
        );
        let zero = run(r#"{"turns": []}"#, PermissionMode::Auto, 0, &dir.path);
        assert!(matches!(zero.result, Err(Stop::Failed(Failure::MaxTurns(_)))));
    }

    #[test]
    fn a_turn_without_calls_is_one_provider_call() {
        let dir = scratch("single");
        let run = run(
            r#"{"turns": [{"text": ["a", "b"]}, {"error": "must not be reached"}]}"#,
            PermissionMode::Auto,
            12,
            &dir.path,
        );
        assert_eq!(run.result.unwrap(), "ab");
    }

    #[test]
    fn huge_results_reach_the_model_as_head_and_tail() {
        let big = format!("{}{}", "a".repeat(200_000), "é".repeat(50_000));
        let shown = for_model(&big);
        assert!(shown.len() <= MODEL_RESULT_CAP + 64);
        assert!(shown.starts_with("aaaa") && shown.ends_with("éé"));
        assert!(shown.contains("bytes of output omitted"));
        assert_eq!(for_model("small"), "small");
    }

    #[test]
    fn two_calls_in_one_turn_run_in_order() {
        let dir = scratch("order");
        let script = r#"{"turns": [
            {"toolCalls": [
                {"id": "a", "name": "bash", "arguments": {"command": "echo first >> log.txt"}},
                {"id": "b", "name": "bash", "arguments": {"command": "echo second >> log.txt"}}
            ]},
            {"text": "ok"}
        ]}"#;
        let run = run(script, PermissionMode::Unsafe, 12, &dir.path);
        let ids: Vec<&str> = run
            .events
            .iter()
            .filter(|e| e["type"] == "tool_result")
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(dir.read("log.txt"), "first\nsecond\n");
    }
}
