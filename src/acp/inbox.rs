//! The reader thread of `zero acp`: it reads stdin one line at a time and sorts each message.
//!
//! It answers at once what needs nothing from a session: a line that is no JSON-RPC message,
//! a line past the limit, an unknown method, a prompt for a session whose turn is in progress,
//! and a request past the queue's room. It acts at once on what cannot wait for the turn that
//! runs: `session/cancel` and `$/cancel_request` stop it, and an answer to one of zero's own
//! requests goes to the wait for it. Everything else is queued, in order, for the main loop,
//! which runs one turn at a time. A thread, because the main loop is blocked in a turn (a model
//! call, a command) while a cancellation must be heard.

use std::collections::{HashMap, HashSet};
use std::io::BufReader;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::wire::{lock, Answer, Incoming, Stdout};
use crate::redact::Redactor;
use crate::rpc::lines::{Line, Lines};
use crate::rpc::{self, code, Id, Message, RpcError};
use crate::sys::threads::Named;

/// The longest line read: a longer one is discarded as it is read.
pub const MAX_LINE_BYTES: usize = 16 << 20;
/// Requests waiting for the main loop, at most; a client that floods gets an error for each
/// one past this, at once.
const MAX_QUEUED: usize = 64;
/// Answers to zero's requests not yet taken, at most.
const MAX_ANSWERS: usize = 16;

/// The methods `zero acp` serves.
pub const METHODS: &[&str] = &[
    "initialize",
    "authenticate",
    "session/new",
    "session/load",
    "session/list",
    "session/close",
    "session/prompt",
    "session/set_mode",
    "session/set_config_option",
];

/// What the reader and the main loop both know of the turns.
#[derive(Default)]
pub struct Turns {
    /// Sessions with a prompt queued or running, and that prompt's request id.
    prompting: HashMap<String, Id>,
    /// The session whose turn runs now.
    running: Option<String>,
    /// Queued prompts cancelled before they ran.
    cancelled: HashSet<String>,
    /// The client's input ended: no queued prompt runs.
    ended: bool,
}

impl Turns {
    /// The main loop starts `session`'s turn; false when it was cancelled while queued (it
    /// is then answered `cancelled` without running).
    pub fn start(&mut self, session: &str) -> bool {
        if self.cancelled.remove(session) || self.ended {
            return false;
        }
        self.running = Some(session.to_string());
        true
    }

    /// `session`'s prompt is answered.
    pub fn finish(&mut self, session: &str) {
        self.prompting.remove(session);
        self.cancelled.remove(session);
        if self.running.as_deref() == Some(session) {
            self.running = None;
        }
    }

    /// Stops `session`'s turn, running or queued. False when it has none.
    fn cancel(&mut self, session: &str) -> bool {
        if self.running.as_deref() == Some(session) {
            crate::run::ending::cancel_turn();
            return true;
        }
        if self.prompting.contains_key(session) {
            self.cancelled.insert(session.to_string());
            return true;
        }
        false
    }
}

/// What the reader shares with the main loop.
pub struct Reader {
    pub out: Stdout,
    pub redactor: Redactor,
    pub turns: Arc<Mutex<Turns>>,
    /// Ids of zero's own requests that wait for an answer.
    pub awaiting: Arc<Mutex<HashSet<Id>>>,
}

/// Starts the reader; the main loop takes requests from the first receiver, waits on answers
/// from the second.
pub fn start(reader: Reader) -> std::io::Result<(Receiver<Incoming>, Receiver<Answer>)> {
    let (requests, incoming) = std::sync::mpsc::sync_channel(MAX_QUEUED);
    let (answers_tx, answers) = std::sync::mpsc::sync_channel(MAX_ANSWERS);
    crate::sys::threads::spawn(Named::AcpInput, move || {
        let stdin = BufReader::with_capacity(64 * 1024, crate::sys::stdio::stdin());
        reader.run(Lines::new(stdin, MAX_LINE_BYTES), &requests, &answers_tx);
    })?;
    Ok((incoming, answers))
}

impl Reader {
    fn run<R: std::io::BufRead>(
        &self,
        mut lines: Lines<R>,
        requests: &SyncSender<Incoming>,
        answers: &SyncSender<Answer>,
    ) {
        loop {
            match lines.next_line() {
                Ok(Line::Text(bytes)) => self.take(&bytes, requests, answers),
                Ok(Line::TooLong(bytes)) => {
                    let message = format!(
                        "Invalid request: a line of {bytes} bytes is longer than the limit of {} MiB; it was discarded",
                        MAX_LINE_BYTES >> 20
                    );
                    self.reply(
                        &rpc::Rejected {
                            id: None,
                            error: RpcError::new(code::INVALID_REQUEST, message),
                            answer: true,
                        }
                        .response(),
                    );
                }
                Ok(Line::End) | Err(_) => break,
            }
        }
        // The client is gone: the running turn stops, the queued prompts answer `cancelled`
        // without running, and the main loop ends every session once the requests before the
        // end are answered.
        let running = {
            let mut turns = lock(&self.turns);
            turns.ended = true;
            turns.running.is_some()
        };
        if running {
            crate::run::ending::cancel_turn();
        }
        let _ = requests.send(Incoming::End);
    }

    fn take(&self, bytes: &[u8], requests: &SyncSender<Incoming>, answers: &SyncSender<Answer>) {
        match rpc::parse(bytes) {
            Err(rejected) if rejected.answer => self.reply(&rejected.response()),
            Err(rejected) => note(&format!(
                "a response that is not valid JSON-RPC was ignored: {}",
                rejected.error.message
            )),
            Ok(Message::Response { id, outcome }) => {
                if lock(&self.awaiting).contains(&id) {
                    let _ = answers.try_send(Answer { id, outcome });
                } else {
                    note(&format!(
                        "a response to id {} answers no request of zero's; it was ignored",
                        summary(&id.to_value())
                    ));
                }
            }
            Ok(Message::Notification { method, params }) => self.notification(&method, &params),
            Ok(Message::Request { id, method, params }) => {
                self.request(id, method, params, requests)
            }
        }
    }

    /// Notifications are never answered; the ones zero does not know are ignored.
    fn notification(&self, method: &str, params: &Value) {
        match method {
            "session/cancel" => match params.get("sessionId").and_then(Value::as_str) {
                Some(session) => {
                    if !lock(&self.turns).cancel(session) {
                        note(&format!(
                            "session/cancel for session {} that has no turn in progress; ignored",
                            summary(&Value::String(session.to_string()))
                        ));
                    }
                }
                None => note("session/cancel without a string sessionId; ignored"),
            },
            "$/cancel_request" => {
                let Some(id) = params.get("requestId").and_then(rpc::Id::of) else {
                    return note("$/cancel_request without a requestId; ignored");
                };
                let mut turns = lock(&self.turns);
                let session =
                    turns.prompting.iter().find(|(_, p)| **p == id).map(|(s, _)| s.clone());
                if let Some(session) = session {
                    turns.cancel(&session);
                }
            }
            _ => {}
        }
    }

    fn request(&self, id: Id, method: String, params: Value, requests: &SyncSender<Incoming>) {
        if !METHODS.contains(&method.as_str()) {
            return self.reply(&rpc::error(&id, &RpcError::method_not_found(&method)));
        }
        let prompt_for = (method == "session/prompt")
            .then(|| params.get("sessionId").and_then(Value::as_str).map(str::to_string))
            .flatten();
        if let Some(session) = &prompt_for {
            let mut turns = lock(&self.turns);
            if turns.prompting.contains_key(session) {
                drop(turns);
                let message = format!(
                    "A prompt turn is already in progress for session {session}: one turn runs at a time; cancel it with session/cancel or wait for its answer"
                );
                return self
                    .reply(&rpc::error(&id, &RpcError::new(code::INVALID_REQUEST, message)));
            }
            turns.prompting.insert(session.clone(), id.clone());
        }
        match requests.try_send(Incoming::Request { id: id.clone(), method, params }) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                if let Some(session) = &prompt_for {
                    lock(&self.turns).prompting.remove(session);
                }
                let message = format!(
                    "Too many requests are waiting ({MAX_QUEUED}) while a turn runs; this one was not taken"
                );
                self.reply(&rpc::error(&id, &RpcError::new(code::INTERNAL_ERROR, message)));
            }
        }
    }

    fn reply(&self, message: &Value) {
        // A closed stdout ends the process through the main loop's next write.
        let _ = self.out.send(message, &self.redactor);
    }
}

/// A diagnostic line on stderr (the agent's log).
pub fn note(message: &str) {
    crate::sys::stdio::eprint_line(&format!("[zero] acp: {message}"));
}

/// A value shown in a note: JSON, at most 80 characters.
fn summary(value: &Value) -> String {
    crate::text::summarize(&value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kit::SharedBuf;

    fn reader() -> (Reader, SharedBuf) {
        let buf = SharedBuf::default();
        let reader = Reader {
            out: Stdout::new(Box::new(buf.clone())),
            redactor: Redactor::default(),
            turns: Arc::default(),
            awaiting: Arc::default(),
        };
        (reader, buf)
    }

    fn lines_of(input: &str) -> Lines<&[u8]> {
        Lines::new(input.as_bytes(), 200)
    }

    #[test]
    fn the_reader_answers_bad_lines_unknown_methods_and_a_second_prompt_itself() {
        let (reader, buf) = reader();
        let (requests, incoming) = std::sync::mpsc::sync_channel(8);
        let (answers, _answers) = std::sync::mpsc::sync_channel(8);
        let long = "x".repeat(300);
        let input = format!(
            "not json\n{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}}\n{long}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"s\"}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"s\"}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{{}}}}\n"
        );
        reader.run(lines_of(&input), &requests, &answers);
        let written: Vec<Value> =
            buf.text().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let codes: Vec<(Value, i64)> = written
            .iter()
            .map(|m| (m["id"].clone(), m["error"]["code"].as_i64().unwrap()))
            .collect();
        assert_eq!(
            codes,
            [
                (Value::Null, -32700),
                (serde_json::json!(1), -32601),
                (Value::Null, -32600),
                (serde_json::json!(3), -32600)
            ]
        );
        assert!(written[3]["error"]["message"].as_str().unwrap().contains("already in progress"));
        let taken: Vec<String> = incoming
            .try_iter()
            .map(|i| match i {
                Incoming::Request { id, method, .. } => format!("{method} {}", id.to_value()),
                Incoming::End => "end".to_string(),
            })
            .collect();
        assert_eq!(taken, ["session/prompt 2", "end"]);
    }

    #[test]
    fn answers_go_to_their_wait_only_when_awaited() {
        let (reader, _) = reader();
        let (requests, _incoming) = std::sync::mpsc::sync_channel(8);
        let (answers, taken) = std::sync::mpsc::sync_channel(8);
        lock(&reader.awaiting).insert(Id::Text("zero-1".into()));
        let input = "{\"jsonrpc\":\"2.0\",\"id\":\"zero-2\",\"result\":1}\n{\"jsonrpc\":\"2.0\",\"id\":\"zero-1\",\"result\":2}\n";
        reader.run(lines_of(input), &requests, &answers);
        let got: Vec<Value> = taken.try_iter().map(|a| a.outcome.unwrap()).collect();
        assert_eq!(got, [serde_json::json!(2)]);
    }

    #[test]
    fn a_cancel_for_a_queued_prompt_stops_it_before_it_runs() {
        let mut turns = Turns::default();
        turns.prompting.insert("s".into(), Id::Number(4));
        assert!(turns.cancel("s"));
        assert!(!turns.cancel("other"));
        assert!(!turns.start("s"));
        turns.finish("s");
        turns.prompting.insert("s".into(), Id::Number(5));
        assert!(turns.start("s"));
    }
}
