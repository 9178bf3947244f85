//! Live mode (`--live`, the README's "Driving zero from an editor"): one process, many user turns
//! over one stdin stream, one session. `run_start` is written before any input is read; each
//! `prompt`/`message` line is a turn that ends with `turn_end`; the end of input ends the process
//! with the last turn's status.
//!
//! Input lines are taken only where zero waits for the client: between turns, and at an
//! approval (`--approvals stdin`). A small pump thread reads one line at a time and hands it
//! over a rendezvous channel, so at most one line is read ahead and an approval's wait can keep
//! its deadline even while a client is half-way through writing a line. Every line is validated
//! by hand (`input::live_line`): a line that is not JSON ends the process; a JSON line that is
//! wrong gets an `error` event naming it and is skipped.

use std::collections::VecDeque;
use std::io::{BufRead, Read};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

use crate::error::{Exit, Failure, Stop};
use crate::output::Output;
use crate::protocol::events::{DecidedBy, RunStatus};
use crate::protocol::input::{
    self, Answer, LiveLine, LiveLineError, StreamPrompt, MAX_LINE_BYTES_V2,
};
use crate::run::agent::{Approvals, Verdict};
use crate::run::engine::{Client, Engine, Prompt};
use crate::session::Kind;
use crate::sys::threads::Named;
use crate::tools::SideEffect;

/// How often a wait for an approval looks at the interrupt flag.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);
/// Turns kept while an approval waits, at most: a client that floods prompts meanwhile gets
/// an error for each one past this, instead of zero holding them all.
const MAX_QUEUED_TURNS: usize = 32;

/// What the pump hands over.
enum Incoming {
    /// A line (its number from 1, without its newline), and when its reading ended.
    Line(usize, Vec<u8>, Instant),
    Eof,
    /// Input that cannot be read (an I/O error, a line past 16 MiB, no thread to read it):
    /// the end of input, with the run's failure.
    Failed(Failure),
}

/// The stdin pump: reads a line only when the last one was taken.
fn start_pump() -> Receiver<Incoming> {
    let (tx, rx) = std::sync::mpsc::sync_channel(0);
    let spawned = crate::sys::threads::spawn(Named::LiveInput, move || {
        pump(std::io::BufReader::new(crate::sys::stdio::stdin()), &tx);
    });
    if let Err(err) = spawned {
        // Without the thread there is no input: the run ends as at end of input, saying why.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        // A thread limit is no fault of the input: the run ends as an internal failure.
        let why = format!("Cannot read stdin: the live input thread could not start ({err})");
        let _ = tx.send(Incoming::Failed(Failure::Crash(why)));
        return rx;
    }
    rx
}

fn pump(mut reader: impl BufRead, tx: &SyncSender<Incoming>) {
    let mut number = 0;
    loop {
        number += 1;
        let mut line = Vec::new();
        let read = (&mut reader).take(MAX_LINE_BYTES_V2 as u64 + 1).read_until(b'\n', &mut line);
        let incoming = match read {
            Ok(0) => Incoming::Eof,
            Ok(_) if line.last() == Some(&b'\n') => {
                line.pop();
                Incoming::Line(number, line, Instant::now())
            }
            Ok(_) if line.len() > MAX_LINE_BYTES_V2 => Incoming::Failed(Failure::Usage(format!(
                "Invalid stream-json input at line {number}: line is longer than {} MiB",
                MAX_LINE_BYTES_V2 >> 20
            ))),
            // The last line, without a newline.
            Ok(_) => Incoming::Line(number, line, Instant::now()),
            Err(err) => Incoming::Failed(Failure::Usage(format!(
                "Cannot read stream-json input at line {number}: {err}"
            ))),
        };
        let last = !matches!(incoming, Incoming::Line(..));
        if tx.send(incoming).is_err() || last {
            return;
        }
    }
}

/// Runs turns until the end of input; the last line is `run_end`, and its exit code (the last
/// turn's) is returned. `approvals`: `--approvals stdin`, and how long a request waits for its
/// answer.
pub fn run(engine: &mut Engine, out: &Output, approvals: Option<Duration>) -> Result<Exit, Stop> {
    let mut inbox = Inbox {
        rx: start_pump(),
        queue: VecDeque::new(),
        eof: false,
        out: out.clone(),
        grants: Vec::new(),
        asked_at: None,
        new_id: request_id,
        timeout: approvals.unwrap_or_default(),
        asking: approvals.is_some(),
    };
    let mut turn = 0u64;
    let mut last = (RunStatus::Success, Exit::Success);
    crate::run::ending::set_live_turn(false);
    while let Some(prompt) = inbox.next_turn()? {
        let prompt = Prompt { text: prompt.text, images: prompt.images };
        if let Some(why) = engine.too_large(&prompt) {
            // Refused as wrong input is, before it joins the conversation: kept, it would keep
            // every later turn from fitting.
            out.input_error(&why)?;
            continue;
        }
        turn += 1;
        crate::run::ending::set_live_turn(true);
        let result = engine.turn(prompt, &mut inbox);
        crate::run::ending::set_live_turn(false);
        last = match result {
            Ok(answer) => {
                out.turn_answer(&answer)?;
                (RunStatus::Success, Exit::Success)
            }
            // A line that is not JSON, read during an approval: the process ends.
            Err(Stop::Failed(failure @ Failure::Usage(_))) => return Err(failure.into()),
            Err(Stop::Failed(failure)) => {
                let payload =
                    serde_json::json!({"code": failure.code_v2(), "message": failure.message()});
                engine.note(Kind::Error, payload);
                out.turn_error(&failure)?;
                (failure.status_v2(), failure.exit())
            }
            Err(stop) => return Err(stop),
        };
        engine.note(Kind::TurnEnd, serde_json::json!({"turn": turn, "status": last.0}));
        engine.sync();
        out.turn_end(turn, last.0)?;
    }
    out.live_end(last.0, last.1)?;
    Ok(last.1)
}

/// The input side of live mode: lines kept for later turns, the end of input, and the
/// client's answers (with the `allow_session` grants they made).
struct Inbox {
    rx: Receiver<Incoming>,
    /// Turns that arrived while an approval was pending, in order.
    queue: VecDeque<StreamPrompt>,
    eof: bool,
    out: Output,
    /// `(tool, side effect)` pairs allowed for the rest of the process.
    grants: Vec<(String, SideEffect)>,
    /// When the pending request was made (before its line was written): an answer read
    /// before then cannot be the client's answer to it.
    asked_at: Option<Instant>,
    /// Makes request ids (unpredictable ones; the tests inject their own).
    new_id: fn() -> String,
    timeout: Duration,
    /// `--approvals stdin`: the client answers for gated calls.
    asking: bool,
}

/// A request id: `perm_` and 12 characters no client can guess, so that no line written
/// before the request (a replayed transcript, a hostile client) can answer it.
fn request_id() -> String {
    format!("perm_{}", crate::clock::unpredictable_base36(12))
}

/// One line, as the loop and the approval wait see it.
enum Got {
    /// A `prompt` or `message`, with its line number.
    Turn(StreamPrompt, usize),
    /// A `permission_response`, with its line number and when it was read.
    Response(input::Response, usize, Instant),
    /// Nothing to act on (a blank line, or a wrong one already reported).
    Nothing,
}

impl Inbox {
    /// The next turn: a kept one, else the next prompt line; `None` at the end of input.
    fn next_turn(&mut self) -> Result<Option<StreamPrompt>, Stop> {
        loop {
            if let Some(prompt) = self.queue.pop_front() {
                return Ok(Some(prompt));
            }
            if self.eof {
                return Ok(None);
            }
            // Waiting for the client has no deadline: the end of input ends the process.
            let incoming = self.rx.recv().unwrap_or(Incoming::Eof);
            match self.take(incoming)? {
                Got::Turn(prompt, _) => return Ok(Some(prompt)),
                Got::Response(response, number, _) => {
                    self.stray(&response, number, Stray::NothingPending)?
                }
                Got::Nothing => {}
            }
        }
    }

    /// Checks one incoming line; a wrong one is reported here.
    fn take(&mut self, incoming: Incoming) -> Result<Got, Stop> {
        match incoming {
            Incoming::Eof => {
                self.eof = true;
                Ok(Got::Nothing)
            }
            Incoming::Failed(failure) => Err(failure.into()),
            Incoming::Line(number, bytes, read_at) => match input::live_line(&bytes, number) {
                Ok(LiveLine::Blank) => Ok(Got::Nothing),
                Ok(LiveLine::Turn(prompt)) => Ok(Got::Turn(prompt, number)),
                Ok(LiveLine::Response(response)) => Ok(Got::Response(response, number, read_at)),
                Err(LiveLineError::Skip(message)) => {
                    self.out.input_error(&message)?;
                    Ok(Got::Nothing)
                }
                Err(LiveLineError::Fatal(message)) => Err(Failure::Usage(message).into()),
            },
        }
    }

    /// A `permission_response` that answers nothing pending.
    fn stray(
        &mut self,
        response: &input::Response,
        number: usize,
        why: Stray<'_>,
    ) -> Result<(), Stop> {
        let id = serde_json::Value::String(crate::text::summarize(&response.request_id));
        let message = match why {
            Stray::Other(p) => format!(
                "Unexpected permission_response at line {number}: requestId {id} is not pending (the pending request is \"{p}\"); the line is ignored."
            ),
            Stray::NothingPending => format!(
                "Unexpected permission_response at line {number}: requestId {id} is not pending, no approval is; the line is ignored."
            ),
            Stray::Early => format!(
                "Unexpected permission_response at line {number}: requestId {id} is not pending: the line was read before that request was written; the line is ignored."
            ),
        };
        self.out.input_error(&message)?;
        Ok(())
    }
}

/// Why a `permission_response` answers nothing.
enum Stray<'a> {
    /// Another request is pending.
    Other(&'a str),
    NothingPending,
    /// Its id is the pending request's, but it was read before the request was written.
    Early,
}

impl Client for Inbox {
    fn source(&self) -> &'static str {
        "live"
    }

    fn approvals(&mut self) -> Option<&mut dyn Approvals> {
        if self.asking {
            Some(self)
        } else {
            None
        }
    }
}

impl Approvals for Inbox {
    fn granted(&self, name: &str, side_effect: SideEffect) -> bool {
        self.grants.iter().any(|(n, s)| n == name && *s == side_effect)
    }

    fn grant(&mut self, name: &str, side_effect: SideEffect) {
        if !self.granted(name, side_effect) {
            self.grants.push((name.to_string(), side_effect));
        }
    }

    fn request(&mut self) -> (String, u64) {
        self.asked_at = Some(Instant::now());
        ((self.new_id)(), self.timeout.as_millis() as u64)
    }

    fn wait(&mut self, id: &str) -> Result<Verdict, Stop> {
        let deadline = Instant::now() + self.timeout;
        let asked_at = self.asked_at.take();
        let deny = |decided_by, reason: String| Verdict {
            allowed: false,
            decided_by,
            reason,
            for_session: false,
        };
        loop {
            if crate::run::ending::turn_interrupted() {
                return Err(Failure::Interrupted.into());
            }
            if self.eof {
                return Ok(deny(
                    DecidedBy::Eof,
                    "The input ended before an answer came.".to_string(),
                ));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let ms = self.timeout.as_millis();
                return Ok(deny(DecidedBy::Timeout, format!("No answer came within {ms} ms.")));
            }
            let incoming = match self.rx.recv_timeout(left.min(INTERRUPT_POLL)) {
                Ok(incoming) => incoming,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => Incoming::Eof,
            };
            match self.take(incoming)? {
                Got::Turn(prompt, _) if self.queue.len() < MAX_QUEUED_TURNS => {
                    self.queue.push_back(prompt)
                }
                Got::Turn(_, number) => self.out.input_error(&format!(
                    "The turn at line {number} is not kept: {MAX_QUEUED_TURNS} turns already wait for this approval; the line is ignored."
                ))?,
                Got::Response(r, number, read_at)
                    if r.request_id == id && asked_at.is_some_and(|at| read_at < at) =>
                {
                    self.stray(&r, number, Stray::Early)?
                }
                Got::Response(r, _, _) if r.request_id == id => {
                    let allowed = r.decision != Answer::Deny;
                    let reason = r.reason.filter(|r| !r.trim().is_empty()).unwrap_or_else(|| {
                        if allowed { "Allowed by the client." } else { "Denied by the client." }
                            .to_string()
                    });
                    return Ok(Verdict {
                        allowed,
                        decided_by: DecidedBy::Client,
                        reason,
                        for_session: r.decision == Answer::AllowSession,
                    });
                }
                Got::Response(r, number, _) => self.stray(&r, number, Stray::Other(id))?,
                Got::Nothing => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::kit::SharedBuf;

    /// Everything the pump hands over for `input`, as text.
    fn pumped(input: &[u8]) -> Vec<String> {
        let (tx, rx) = std::sync::mpsc::sync_channel(0);
        let input = input.to_vec();
        let reader = std::thread::spawn(move || pump(&input[..], &tx));
        let got = rx
            .iter()
            .map(|incoming| match incoming {
                Incoming::Line(n, bytes, _) => format!("{n}: {}", String::from_utf8_lossy(&bytes)),
                Incoming::Eof => "eof".to_string(),
                Incoming::Failed(failure) => failure.message(),
            })
            .collect();
        let _ = reader.join();
        got
    }

    /// An inbox fed by the test, whose requests all get the id `perm_fixed`.
    fn inbox(timeout_ms: u64) -> (Inbox, std::sync::mpsc::SyncSender<Incoming>, SharedBuf) {
        let (tx, rx) = std::sync::mpsc::sync_channel(8);
        let (emitter, sink) = crate::testing::kit::stream_emitter(
            "run_t",
            crate::protocol::events::SchemaVersion::V2,
        );
        let inbox = Inbox {
            rx,
            queue: VecDeque::new(),
            eof: false,
            out: Output::new(emitter),
            grants: Vec::new(),
            asked_at: None,
            new_id: || "perm_fixed".to_string(),
            timeout: Duration::from_millis(timeout_ms),
            asking: true,
        };
        (inbox, tx, sink)
    }

    fn allow(read_at: Instant) -> Incoming {
        let line = br#"{"schemaVersion":2,"type":"permission_response","requestId":"perm_fixed","decision":"allow"}"#;
        Incoming::Line(2, line.to_vec(), read_at)
    }

    #[test]
    fn an_answer_read_before_its_request_was_written_answers_nothing() {
        let (mut inbox, tx, sink) = inbox(200);
        // The line was read (the client wrote it) before the request existed, and its id is
        // the one the request is about to get.
        let early = Instant::now();
        tx.send(allow(early)).unwrap();
        let (id, _) = inbox.request();
        assert_eq!(id, "perm_fixed");
        let verdict = inbox.wait(&id).unwrap();
        assert_eq!((verdict.allowed, verdict.decided_by), (false, DecidedBy::Timeout));
        let written = sink.text();
        assert!(
            written.contains("Unexpected permission_response at line 2: requestId \\\"perm_fixed\\\" is not pending: the line was read before that request was written; the line is ignored."),
            "{written}"
        );
        // The same line read after the request was made is the answer.
        let (id, _) = inbox.request();
        tx.send(allow(Instant::now())).unwrap();
        let verdict = inbox.wait(&id).unwrap();
        assert_eq!((verdict.allowed, verdict.decided_by), (true, DecidedBy::Client));
    }

    #[test]
    fn request_ids_are_unpredictable() {
        let (a, b) = (request_id(), request_id());
        assert_ne!(a, b);
        assert!(a.starts_with("perm_") && a.len() == 17, "{a}");
    }

    #[test]
    fn the_pump_hands_over_numbered_lines_then_the_end() {
        assert_eq!(pumped(b"a\n\nb\r\nlast"), ["1: a", "2: ", "3: b\r", "4: last", "eof"]);
        assert_eq!(pumped(b""), ["eof"]);
        let mut long = vec![b'x'; MAX_LINE_BYTES_V2 + 1];
        long.extend_from_slice(b"\nnever read\n");
        assert_eq!(
            pumped(&long),
            ["Invalid stream-json input at line 1: line is longer than 16 MiB"]
        );
    }
}
