//! Approvals in ACP: a call the session's mode does not allow outright is asked about with
//! `session/request_permission` (allow or reject, once or for the rest of the session), and the
//! answer decides it. Without an answer by the deadline the request is withdrawn
//! (`$/cancel_request`) and the call rejected.

use std::time::Duration;

use serde_json::{json, Value};

use super::wire::{CallError, Peer};
use crate::error::{Failure, Stop};
use crate::protocol::events::DecidedBy;
use crate::rpc::Id;
use crate::run::agent::{Approvals, Verdict};
use crate::run::engine::Client;
use crate::tools::SideEffect;

/// The answers a client can give, as option ids and kinds.
const OPTIONS: [(&str, &str); 4] = [
    ("allow_once", "Allow"),
    ("allow_always", "Always allow"),
    ("reject_once", "Reject"),
    ("reject_always", "Always reject"),
];

/// The `session/request_permission` request for call `tool_call_id` of tool `name`.
pub fn request(id: &Id, session_id: &str, tool_call_id: &str, name: &str) -> Value {
    let options: Vec<Value> = OPTIONS
        .iter()
        .map(|(kind, label)| {
            let name = if kind.ends_with("always") {
                format!("{label} {name} in this session")
            } else {
                label.to_string()
            };
            json!({"optionId": kind, "name": name, "kind": kind})
        })
        .collect();
    crate::rpc::request(
        id,
        "session/request_permission",
        json!({
            "sessionId": session_id,
            "toolCall": {"toolCallId": tool_call_id, "status": "pending"},
            "options": options,
        }),
    )
}

/// The session's "always" answers, kept for the rest of the session.
#[derive(Default)]
pub struct Remembered {
    allowed: Vec<(String, SideEffect)>,
    rejected: Vec<(String, SideEffect)>,
}

/// A turn's front-end: it asks the client, and remembers the session's "always" answers.
pub struct Asker<'a> {
    pub peer: &'a Peer,
    pub remembered: &'a mut Remembered,
    pub timeout: Duration,
}

impl Client for Asker<'_> {
    fn source(&self) -> &'static str {
        "acp"
    }

    fn approvals(&mut self) -> Option<&mut dyn Approvals> {
        Some(self)
    }
}

impl Approvals for Asker<'_> {
    fn granted(&self, name: &str, side_effect: SideEffect) -> bool {
        self.remembered.allowed.iter().any(|(n, s)| n == name && *s == side_effect)
    }

    fn grant(&mut self, name: &str, side_effect: SideEffect) {
        self.remembered.allowed.push((name.to_string(), side_effect));
    }

    fn rejected(&self, name: &str, side_effect: SideEffect) -> bool {
        self.remembered.rejected.iter().any(|(n, s)| n == name && *s == side_effect)
    }

    fn reject(&mut self, name: &str, side_effect: SideEffect) {
        self.remembered.rejected.push((name.to_string(), side_effect));
    }

    fn request(&mut self) -> (String, u64) {
        let id = self.peer.new_id("perm");
        // Awaited before the request is written, so that no answer can come first.
        self.peer.expect(&Id::Text(id.clone()));
        (id, self.timeout.as_millis() as u64)
    }

    fn wait(&mut self, id: &str) -> Result<Verdict, Stop> {
        let rpc_id = Id::Text(id.to_string());
        let verdict = |allowed: bool, decided_by, reason: String, for_session| Verdict {
            allowed,
            decided_by,
            reason,
            for_session,
        };
        match self.peer.wait(&rpc_id, self.timeout, true) {
            Ok(answer) => match chosen(&answer) {
                Chosen::Option(kind) => {
                    let allowed = kind.starts_with("allow");
                    let reason =
                        if allowed { "Allowed by the client." } else { "Rejected by the client." };
                    Ok(verdict(allowed, DecidedBy::Client, reason.into(), kind.ends_with("always")))
                }
                Chosen::Cancelled => {
                    // The client cancelled the turn (it sends session/cancel with this).
                    crate::run::ending::cancel_turn();
                    Err(Failure::Interrupted.into())
                }
                Chosen::Unknown(what) => Ok(verdict(
                    false,
                    DecidedBy::Client,
                    format!("The client's answer is not one of the options offered ({what})."),
                    false,
                )),
            },
            Err(CallError::Cancelled) => Err(Failure::Interrupted.into()),
            Err(CallError::TimedOut) => {
                let ms = self.timeout.as_millis();
                Ok(verdict(
                    false,
                    DecidedBy::Timeout,
                    format!("No answer came within {ms} ms."),
                    false,
                ))
            }
            Err(CallError::Gone) => Ok(verdict(
                false,
                DecidedBy::Eof,
                "The client is gone: its input ended before an answer came.".into(),
                false,
            )),
            Err(err @ CallError::Refused(_)) => {
                Ok(verdict(false, DecidedBy::Client, format!("Rejected: {err}."), false))
            }
        }
    }
}

/// What a `RequestPermissionResponse` says.
#[derive(Debug, PartialEq)]
enum Chosen {
    Option(&'static str),
    Cancelled,
    /// Not an answer zero offered: what it was.
    Unknown(String),
}

fn chosen(answer: &Value) -> Chosen {
    let outcome = &answer["outcome"];
    match outcome["outcome"].as_str() {
        Some("cancelled") => Chosen::Cancelled,
        Some("selected") => {
            let id = outcome["optionId"].as_str().unwrap_or_default();
            match OPTIONS.iter().find(|(kind, _)| *kind == id) {
                Some((kind, _)) => Chosen::Option(kind),
                None => Chosen::Unknown(format!(
                    "optionId {}",
                    crate::text::summarize(&outcome["optionId"].to_string())
                )),
            }
        }
        _ => Chosen::Unknown(crate::text::summarize(&answer.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_offers_four_options_and_answers_are_read_by_option_id() {
        let request = request(&Id::Text("perm-1".into()), "s1", "c1", "bash");
        assert_eq!(request["method"], "session/request_permission");
        assert_eq!(request["params"]["toolCall"], json!({"toolCallId": "c1", "status": "pending"}));
        let kinds: Vec<&str> = request["params"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["allow_once", "allow_always", "reject_once", "reject_always"]);
        assert_eq!(request["params"]["options"][1]["name"], "Always allow bash in this session");
        let selected = |id: &str| json!({"outcome": {"outcome": "selected", "optionId": id}});
        assert_eq!(chosen(&selected("reject_always")), Chosen::Option("reject_always"));
        assert_eq!(chosen(&json!({"outcome": {"outcome": "cancelled"}})), Chosen::Cancelled);
        assert!(matches!(chosen(&selected("maybe")), Chosen::Unknown(_)));
        assert!(matches!(chosen(&json!({})), Chosen::Unknown(_)));
    }
}
