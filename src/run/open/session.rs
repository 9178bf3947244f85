//! The session a conversation continues: created, resumed or forked, and the earlier
//! conversation it holds.

use std::path::Path;

use crate::config::Runtime;
use crate::conversation::Message;
use crate::error::Failure;
use crate::output::Output;
use crate::protocol::events::{Warning, WarningCode};
use crate::redact::Redactor;
use crate::run::plan::RunPlan;
use crate::session::{self, NewSession, Session, Store};

/// Step 9's inputs: the store, the session chosen, and how much of it to read.
pub(super) struct OpenSession {
    pub store: Result<Store, session::SessionError>,
    pub selection: Selection,
    pub budget: u64,
}

impl OpenSession {
    /// The session (none for `--ephemeral`, or a new one that cannot be created), and the
    /// earlier conversation it holds.
    pub(super) fn open(
        self,
        plan: &RunPlan,
        runtime: &Runtime,
        cwd: &Path,
        prompt: &str,
        shared: &Output,
        warnings: &mut Vec<Warning>,
    ) -> Result<(Option<Session>, Vec<Message>), Failure> {
        if plan.ephemeral {
            return Ok((None, read_history(self.store, self.selection, self.budget, warnings)?));
        }
        let redactor = shared.redactor();
        let new = NewSession {
            // Redacted before it is cut, so no part of a secret survives the cut.
            title: session::title_of(&redactor.redact_str(prompt)),
            cwd: cwd.display().to_string(),
            model_id: runtime.model_id.clone(),
            provider: runtime.kind.name().to_string(),
        };
        open_session(self.store, self.selection, &new, &redactor, self.budget, warnings)
    }
}

/// Which session the run continues.
pub enum Selection {
    New,
    Resume(String),
    Fork(String),
}

/// Opens the selected session and returns it with its conversation so far. A new session
/// that cannot be created is a warning, not a failure: the run itself can still succeed.
fn open_session(
    store: Result<Store, session::SessionError>,
    selection: Selection,
    new: &NewSession,
    redactor: &Redactor,
    budget: u64,
    warnings: &mut Vec<Warning>,
) -> Result<(Option<Session>, Vec<Message>), Failure> {
    let store = match (store, &selection) {
        (Ok(store), _) => store,
        (Err(err), Selection::New) => {
            warnings.push(Warning::new(
                WarningCode::SessionUnavailable,
                format!("This run is not recorded as a session: {}", err.message()),
            ));
            return Ok((None, Vec::new()));
        }
        (Err(err), _) => return Err(err.into()),
    };
    match selection {
        Selection::New => match store.create(new, redactor) {
            Ok(s) => Ok((Some(s), Vec::new())),
            Err(err) => {
                warnings.push(Warning::new(
                    WarningCode::SessionUnavailable,
                    format!("This run is not recorded as a session: {}", err.message()),
                ));
                Ok((None, Vec::new()))
            }
        },
        Selection::Resume(id) => {
            let (session, repaired) = store.open(&id, redactor)?;
            let (history, found) = store.history(&id, budget)?;
            warnings.extend(repaired.into_iter().chain(found).map(torn));
            Ok((Some(session), history))
        }
        Selection::Fork(parent) => {
            let (session, history, found) = store.fork(&parent, new, redactor, budget)?;
            warnings.extend(found.into_iter().map(torn));
            Ok((Some(session), history))
        }
    }
}

/// `--ephemeral`: the conversation of the session to resume or fork, read without opening it
/// (no lock, nothing written).
fn read_history(
    store: Result<Store, session::SessionError>,
    selection: Selection,
    budget: u64,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Message>, Failure> {
    let (Selection::Resume(id) | Selection::Fork(id)) = selection else { return Ok(Vec::new()) };
    let (history, found) = store?.history(&id, budget)?;
    warnings.extend(found.into_iter().map(torn));
    Ok(history)
}

/// The warning of a session whose last event was cut off.
fn torn(message: String) -> Warning {
    Warning::new(WarningCode::TornSession, message)
}
