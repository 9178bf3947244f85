//! `zero search QUERY` (also `zero sessions search`): the stored events whose text holds the
//! query, in Zero's JSON shape (`query`, `normalizedQuery`, `rootDir`,
//! `searchedSessions`, `totalHits`, `hits`).
//!
//! An event's text is the string, number and boolean leaves of its payload (redacted), joined
//! by spaces. It matches when it holds the whole query (case-insensitive, whitespace
//! collapsed), else when it holds every word of it; the match spans from the first word found
//! to the end of the last. Offsets count characters. Sessions are searched newest first, events
//! in order, and the search stops at `--limit` hits.

use std::fmt::Write as _;

use serde::Serialize;

use super::{
    fail, leaves, note, print, print_json, redact_argument_text, store_exit, store_message,
};
use crate::cli::SearchArgs;
use crate::config::Env;
use crate::error::{Exit, Failure};
use crate::redact::Redactor;
use crate::session::{Metadata, Store};

const DEFAULT_LIMIT: usize = 20;
const DEFAULT_CONTEXT_CHARS: usize = 80;

/// Where the query was found in an event's text, in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
struct Match {
    start: usize,
    end: usize,
}

/// `zero search`.
pub fn search(args: &SearchArgs, env: &Env) -> Exit {
    let redactor = Redactor::new(env.secret_values());
    let (limit, context) = match limits(args) {
        Ok(limits) => limits,
        Err(failure) => return fail(&redactor, &failure.message(), failure.exit()),
    };
    let query = args.query.join(" ");
    let normalized = normalize(&query);
    if normalized.is_empty() {
        return fail(&redactor, "zero search needs a query (see zero search --help)", Exit::Usage);
    }
    let store = match Store::locate(env) {
        Ok(store) => store,
        Err(err) => return fail(&redactor, store_message(&err), Exit::Internal),
    };
    let sessions = match &args.session {
        Some(id) => match store.metadata(id) {
            Ok(meta) => vec![meta],
            Err(crate::session::SessionError::Usage(_)) => Vec::new(),
            Err(err) => return fail(&redactor, store_message(&err), store_exit(&err)),
        },
        None => match store.list() {
            Ok(list) => list,
            Err(err) => return fail(&redactor, store_message(&err), store_exit(&err)),
        },
    };
    let terms: Vec<&str> = normalized.split(' ').collect();
    let wanted =
        Wanted { normalized: &normalized, terms, limit, context, args, redactor: &redactor };
    let mut hits: Vec<Hit> = Vec::new();
    let mut refused = false;
    for meta in &sessions {
        if hits.len() >= limit {
            break;
        }
        refused |= wanted.search_session(&store, meta, &mut hits);
    }
    let result = SearchResult {
        query: redactor.redact_str(&query),
        normalized_query: redactor.redact_str(&normalized),
        root_dir: redactor.redact_str(&store.root().display().to_string()),
        searched_sessions: sessions.len(),
        total_hits: hits.len(),
        hits,
    };
    let printed = if args.json { print_json(&result) } else { print(&format_text(&result)) };
    // A session refused (a linked or irregular file, named on stderr) is a usage error once
    // the hits of the others are out.
    match printed {
        Exit::Success if refused => Exit::Usage,
        other => other,
    }
}

/// `--limit` and `--context`: non-negative integers.
fn limits(args: &SearchArgs) -> Result<(usize, usize), Failure> {
    let number = |name: &str, value: &Option<String>, default: usize| match value {
        None => Ok(default),
        Some(v) => match v.trim() {
            t if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(t.parse::<usize>().unwrap_or(usize::MAX))
            }
            _ => Err(Failure::Usage(format!(
                "Invalid {name} value \"{v}\". Expected a non-negative integer."
            ))),
        },
    };
    Ok((
        number("--limit", &args.limit, DEFAULT_LIMIT)?,
        number("--context", &args.context, DEFAULT_CONTEXT_CHARS)?,
    ))
}

/// What is searched for, and how many hits with how much context.
struct Wanted<'a> {
    normalized: &'a str,
    terms: Vec<&'a str>,
    limit: usize,
    context: usize,
    args: &'a SearchArgs,
    redactor: &'a Redactor,
}

impl Wanted<'_> {
    /// The hits of one session, until there are `limit` in all. A session that cannot be
    /// read is named and skipped: the search is over what can be read. Its events are read
    /// one at a time, and each is let go before the next, so any session searches in
    /// bounded memory. Returns whether the session was refused (a link, see `session`).
    fn search_session(&self, store: &Store, meta: &Metadata, hits: &mut Vec<Hit>) -> bool {
        let redactor = self.redactor;
        let mut reader = match store.reader(&meta.session_id) {
            Ok(reader) => reader,
            Err(err) => {
                note(redactor, &format!("WARNING: {}", store_message(&err)));
                return matches!(err, crate::session::SessionError::Refused(_));
            }
        };
        loop {
            let mut event = match reader.next_event() {
                Ok(Some(event)) => event,
                Ok(None) => break,
                Err(err) => {
                    note(redactor, &format!("WARNING: {}", store_message(&err)));
                    break;
                }
            };
            if self.args.event_type.as_deref().is_some_and(|t| t != event.kind.name()) {
                continue;
            }
            redact_argument_text(&mut event, redactor);
            // The stored payload is let go as soon as its redacted copy exists, and that copy
            // as soon as its text does.
            let payload = event.payload.take().map(|p| redactor.redact_value(p));
            let text = payload.as_ref().map(leaves).unwrap_or_default();
            drop(payload);
            let Some(found) = find(&text, self.normalized, &self.terms) else { continue };
            hits.push(Hit {
                session: redacted_metadata(meta, redactor),
                event: HitEvent {
                    id: redactor.redact_str(&event.id),
                    sequence: event.sequence,
                    kind: redactor.redact_str(event.kind.name()),
                    created_at: redactor.redact_str(&event.created_at),
                },
                context: context_of(&text, found, self.context),
                found,
            });
            if hits.len() >= self.limit {
                break;
            }
        }
        warn_skipped(&reader, redactor);
        false
    }
}

/// The lines of a session that the search could not read, on stderr.
fn warn_skipped<R: std::io::BufRead>(reader: &crate::session::EventReader<R>, redactor: &Redactor) {
    for warning in reader.warnings() {
        note(redactor, &format!("WARNING: {warning}"));
    }
}

/// The JSON document, fields in Zero's order; every string in it is redacted.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchResult {
    query: String,
    normalized_query: String,
    root_dir: String,
    searched_sessions: usize,
    total_hits: usize,
    hits: Vec<Hit>,
}

#[derive(Serialize)]
struct Hit {
    session: Metadata,
    event: HitEvent,
    context: String,
    #[serde(rename = "match")]
    found: Match,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HitEvent {
    id: String,
    sequence: u64,
    #[serde(rename = "type")]
    kind: String,
    created_at: String,
}

/// Metadata as stored was redacted with the secrets of the run that wrote it; these are
/// today's.
fn redacted_metadata(meta: &Metadata, redactor: &Redactor) -> Metadata {
    let value = serde_json::to_value(meta).unwrap_or_default();
    serde_json::from_value(redactor.redact_value(value)).unwrap_or_else(|_| meta.clone())
}

/// Whitespace collapsed to single spaces, trimmed, lower case.
fn normalize(query: &str) -> String {
    lower(&crate::text::one_line(query))
}

/// Lower case, one character for one: a character whose lower case is longer (`İ`) stays as it
/// is, so offsets in the lowered text are offsets in the original.
fn lower(text: &str) -> String {
    text.chars()
        .map(|c| {
            let mut lowered = c.to_lowercase();
            match (lowered.next(), lowered.next()) {
                (Some(l), None) => l,
                _ => c,
            }
        })
        .collect()
}

/// The whole query, else every term (all must occur).
fn find(text: &str, query: &str, terms: &[&str]) -> Option<Match> {
    let lowered = lower(text);
    let chars_before = |byte: usize| lowered[..byte].chars().count();
    if let Some(at) = lowered.find(query) {
        let start = chars_before(at);
        return Some(Match { start, end: start + query.chars().count() });
    }
    let mut span: Option<Match> = None;
    for term in terms {
        let at = lowered.find(term)?;
        let start = chars_before(at);
        let end = start + term.chars().count();
        span = Some(match span {
            None => Match { start, end },
            Some(m) => Match { start: m.start.min(start), end: m.end.max(end) },
        });
    }
    span
}

/// `chars` characters either side of the match, trimmed.
fn context_of(text: &str, found: Match, chars: usize) -> String {
    let from = found.start.saturating_sub(chars);
    let to = found.end.saturating_add(chars);
    let taken: String = text.chars().skip(from).take(to - from).collect();
    taken.trim().to_string()
}

/// Zero's text report: a count, then per hit its session and event, the context, and
/// where the session ran.
fn format_text(result: &SearchResult) -> String {
    let plural = |n: usize, label: &str| format!("{n} {label}{}", if n == 1 { "" } else { "s" });
    let safe = |v: &str| crate::output::terminal_safe(v, true).into_owned();
    let query = safe(result.query.trim());
    if result.hits.is_empty() {
        return format!(
            "No local session events matched \"{query}\". Searched {}.\n",
            plural(result.searched_sessions, "session")
        );
    }
    let mut text =
        format!("Found {} for \"{query}\":\n", plural(result.total_hits, "local session event"));
    for (n, hit) in result.hits.iter().enumerate() {
        let meta = &hit.session;
        let title = meta.title.as_deref().map(|t| format!(" - {}", safe(t))).unwrap_or_default();
        let _ = writeln!(
            text,
            "{}. {} #{} {}{title}",
            n + 1,
            meta.session_id,
            hit.event.sequence,
            safe(&hit.event.kind)
        );
        let context = crate::text::one_line(&safe(&hit.context));
        if !context.is_empty() {
            let _ = writeln!(text, "   {context}");
        }
        let mut details = Vec::new();
        for (label, value) in
            [("cwd", &meta.cwd), ("model", &meta.model_id), ("provider", &meta.provider)]
        {
            if let Some(value) = value {
                details.push(format!("{label}: {}", safe(value)));
            }
        }
        details.push(format!("updated: {}", safe(&meta.updated_at)));
        let _ = writeln!(text, "   {}", details.join(" | "));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str, query: &str) -> Option<(usize, usize)> {
        let normalized = normalize(query);
        let terms: Vec<&str> = normalized.split(' ').collect();
        find(text, &normalized, &terms).map(|m| (m.start, m.end))
    }

    #[test]
    fn the_phrase_wins_then_every_term() {
        assert_eq!(found("Run the Cargo  tests", "cargo"), Some((8, 13)));
        assert_eq!(found("run cargo test now", "  CARGO   test "), Some((4, 14)));
        // Not as a phrase: from the first term found to the end of the last.
        assert_eq!(found("test first, then cargo", "cargo test"), Some((0, 22)));
        assert_eq!(found("only cargo here", "cargo test"), None);
    }

    #[test]
    fn offsets_count_characters() {
        assert_eq!(found("héllo wörld", "wörld"), Some((6, 11)));
        // A character whose lower case is two characters stays itself.
        assert_eq!(found("İstanbul x", "x"), Some((9, 10)));
    }

    #[test]
    fn context_is_cut_around_the_match_and_trimmed() {
        let text = "aaaa bbbb cccc dddd";
        assert_eq!(context_of(text, Match { start: 10, end: 14 }, 5), "bbbb cccc dddd");
        assert_eq!(context_of(text, Match { start: 0, end: 4 }, 0), "aaaa");
    }
}
