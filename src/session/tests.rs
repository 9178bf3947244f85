use super::*;
use crate::conversation::Role;
use crate::testing::kit::TempDir;

/// A store in a fresh directory.
struct Scratch {
    dir: TempDir,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        Scratch { dir: TempDir::new(name) }
    }

    fn store(&self) -> Store {
        let env = Env::from_pairs([(
            "XDG_DATA_HOME".to_string(),
            self.dir.path.to_string_lossy().into_owned(),
        )]);
        Store::locate(&env).unwrap()
    }
}

fn new(title: &str) -> NewSession {
    NewSession {
        title: title.into(),
        cwd: "/repo".into(),
        model_id: "gpt-4.1".into(),
        provider: "openai".into(),
    }
}

#[test]
fn root_follows_xdg_then_home() {
    let xdg =
        Env::from_pairs([("XDG_DATA_HOME".into(), "/x".into()), ("HOME".into(), "/h".into())]);
    assert_eq!(Store::locate(&xdg).unwrap().root(), Path::new("/x/zero/sessions"));
    let home = Env::from_pairs([("HOME".into(), "/h".into())]);
    assert_eq!(Store::locate(&home).unwrap().root(), Path::new("/h/.local/share/zero/sessions"));
}

#[test]
fn create_append_and_read_back() {
    let s = Scratch::new("append");
    let store = s.store();
    let mut session = store.create(&new("Explain the repo"), &Redactor::default()).unwrap();
    let id = session.id().to_string();
    assert!(looks_generated(&id), "{id}");
    let meta = store.metadata(&id).unwrap();
    assert_eq!(
        (meta.event_count, meta.title.as_deref(), meta.created_at == meta.updated_at),
        (0, Some("Explain the repo"), true)
    );
    let text = fs::read_to_string(store.root().join(&id).join("metadata.json")).unwrap();
    assert!(text.starts_with("{\n  \"sessionId\": ") && text.ends_with("}\n"), "{text}");
    session
        .append(Kind::Message, Some(json!({"role": "user", "content": "hi", "source": "exec"})))
        .unwrap();
    session.append(Kind::ProviderUsage, Some(json!({"promptTokens": 1}))).unwrap();
    let (events, warnings) = store.events(&id).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(
        events.iter().map(|e| (e.id.clone(), e.sequence)).collect::<Vec<_>>(),
        [(format!("{id}:1"), 1), (format!("{id}:2"), 2)]
    );
    let meta = store.metadata(&id).unwrap();
    assert_eq!((meta.event_count, meta.last_event_type.as_deref()), (2, Some("provider_usage")));
    assert_eq!(meta.updated_at, events[1].created_at);
    let lines = fs::read_to_string(store.root().join(&id).join("events.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 2);
    assert!(lines.starts_with(&format!("{{\"id\":\"{id}:1\",\"sessionId\":\"{id}\",\"sequence\":1,\"type\":\"message\",\"createdAt\":")));
}

#[test]
fn everything_stored_is_redacted() {
    let s = Scratch::new("redact");
    let store = s.store();
    let redactor = Redactor::new(["the-api-key-in-use".to_string()]);
    let mut session =
        store.create(&new("use sk-proj-abcdefghijklmnopqrstuvwx"), &redactor).unwrap();
    session.append(Kind::Message, Some(json!({"role": "user", "content": "key the-api-key-in-use and ghp_abcdefghijklmnopqrstuvwxyz"}))).unwrap();
    session.append(Kind::ToolCall, Some(json!({"args": {"password": "hunter2hunter2"}}))).unwrap();
    let dir = store.root().join(session.id());
    let all = format!(
        "{}{}",
        fs::read_to_string(dir.join("metadata.json")).unwrap(),
        fs::read_to_string(dir.join("events.jsonl")).unwrap()
    );
    for secret in ["sk-proj-abc", "the-api-key-in-use", "ghp_abc", "hunter2"] {
        assert!(!all.contains(secret), "{secret} stored: {all}");
    }
}

#[test]
fn listing_latest_and_errors() {
    let s = Scratch::new("list");
    let store = s.store();
    assert!(store.list().unwrap().is_empty());
    let first = store.create(&new("one"), &Redactor::default()).unwrap().id().to_string();
    std::thread::sleep(Duration::from_millis(5));
    let mut second = store.create(&new("two"), &Redactor::default()).unwrap();
    second.append(Kind::Message, None).unwrap();
    let second = second.id().to_string();
    let list: Vec<String> = store.list().unwrap().into_iter().map(|m| m.session_id).collect();
    assert_eq!(list, [second.clone(), first.clone()]);
    assert_eq!(
        store.metadata("../bad").unwrap_err(),
        SessionError::Usage("Invalid Zero session id: ../bad".into())
    );
    assert_eq!(
        store.metadata("missing").unwrap_err(),
        SessionError::Usage("Zero session not found: missing".into())
    );
    let dup = store.create_with_id(&first, &new("again"), &Redactor::default());
    assert_eq!(
        dup.err(),
        Some(SessionError::Usage(format!("Zero session already exists: {first}")))
    );
    assert_eq!(store.metadata(&first).unwrap().title.as_deref(), Some("one"));
}

#[test]
fn a_torn_last_line_is_cut_off_by_a_resume_and_a_bad_middle_line_costs_only_itself() {
    let s = Scratch::new("torn");
    let store = s.store();
    let mut session = store.create(&new("t"), &Redactor::default()).unwrap();
    session.append(Kind::Message, Some(json!({"role": "user", "content": "a"}))).unwrap();
    let id = session.id().to_string();
    drop(session);
    let path = store.root().join(&id).join("events.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"{\"id\":\"x:2\",\"sessionId\":\"x\",\"seq").unwrap();
    let (events, warnings) = store.events(&id).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("truncated last event at line 2"), "{warnings:?}");
    // Resuming cuts the torn bytes off, under the lock, and appends on a line of its own.
    let (mut resumed, repaired) = store.open(&id, &Redactor::default()).unwrap();
    assert_eq!(
        repaired,
        [format!("Zero session {id}: cut off a truncated last event at line 2 (the run that wrote it was stopped mid-write)")]
    );
    resumed.append(Kind::Message, Some(json!({"role": "user", "content": "b"}))).unwrap();
    drop(resumed);
    let (events, warnings) = store.events(&id).unwrap();
    assert_eq!((events.len(), warnings.len()), (2, 0), "{warnings:?}");
    assert_eq!(
        (events[1].sequence, events[1].payload.as_ref().unwrap()["content"].as_str()),
        (2, Some("b"))
    );
    // A session an older zero damaged (its append glued onto a torn line): that line is
    // skipped with a warning naming it, and the lines after it are read.
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(b"{\"id\":\"x:3\",\"seq{\"id\":\"glued\"}\n").unwrap();
    let (mut resumed, repaired) = store.open(&id, &Redactor::default()).unwrap();
    assert!(repaired.is_empty());
    resumed.append(Kind::Message, Some(json!({"role": "user", "content": "c"}))).unwrap();
    drop(resumed);
    let (events, warnings) = store.events(&id).unwrap();
    let contents: Vec<&str> =
        events.iter().map(|e| e.payload.as_ref().unwrap()["content"].as_str().unwrap()).collect();
    assert_eq!(contents, ["a", "b", "c"]);
    assert_eq!(events[2].sequence, 3);
    assert_eq!(
        warnings,
        [format!("Zero session {id}: skipped line 3 of events.jsonl: it is not a valid event (only that line is lost)")]
    );
}

#[test]
fn a_second_writer_waits_then_fails_and_a_dead_writers_lock_is_taken_over() {
    let s = Scratch::new("lock");
    let store = s.store();
    let session = store.create(&new("t"), &Redactor::default()).unwrap();
    let id = session.id().to_string();
    let started = Instant::now();
    let err = store.open(&id, &Redactor::default()).err().unwrap();
    assert!(
        matches!(&err, SessionError::Usage(m) if m.contains("is in use by another zero run")),
        "{err:?}"
    );
    assert!(started.elapsed() >= LOCK_WAIT);
    drop(session);
    fs::write(store.root().join(&id).join("lock"), "999999999\n").unwrap();
    assert!(store.open(&id, &Redactor::default()).is_ok());
}

#[test]
fn fork_copies_events_and_appends_session_fork() {
    let s = Scratch::new("fork");
    let store = s.store();
    let mut parent = store.create(&new("Parent work"), &Redactor::default()).unwrap();
    parent.append(Kind::Message, Some(json!({"role": "user", "content": "q"}))).unwrap();
    parent
        .append(Kind::ToolResult, Some(json!({"id": "c", "status": "ok", "output": "o"})))
        .unwrap();
    let parent_id = parent.id().to_string();
    drop(parent);
    let (fork, history, skipped) =
        store.fork(&parent_id, &new("Child"), &Redactor::default(), u64::MAX).unwrap();
    assert_eq!((history.len(), skipped.len()), (1, 0), "the user message; the result has no call");
    let fork_id = fork.id().to_string();
    drop(fork);
    let meta = store.metadata(&fork_id).unwrap();
    assert_eq!(meta.parent_session_id.as_deref(), Some(parent_id.as_str()));
    assert_eq!((meta.event_count, meta.last_event_type.as_deref()), (3, Some("session_fork")));
    assert_eq!(meta.forked_from_event_id, Some(format!("{parent_id}:2")));
    let (events, _) = store.events(&fork_id).unwrap();
    assert_eq!(
        events.iter().map(|e| e.kind.name()).collect::<Vec<_>>(),
        ["message", "tool_result", "session_fork"]
    );
    assert_eq!(events[2].payload.as_ref().unwrap()["copiedEventCount"], 2);
    assert_eq!(store.metadata(&parent_id).unwrap().event_count, 2, "the parent is untouched");
    assert_eq!(store.list().unwrap()[0].session_id, fork_id, "the fork is the latest");
}

#[test]
fn conversation_is_rebuilt_as_structured_messages() {
    let call = ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: "{\"path\":\"a\"}".into(),
    };
    let events: Vec<Event> = [
        ("message", json!({"role": "user", "content": "read a"})),
        ("tool_call", tool_call_payload(&call, SideEffect::Read, &Redactor::default())),
        (
            "message",
            assistant_payload(
                "",
                std::slice::from_ref(&call),
                &[
                    json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA"}),
                    json!({"type": "reasoning", "id": "rs_2", "encrypted_content": "x[REDACTED]"}),
                ],
                &Redactor::default(),
            ),
        ),
        ("tool_result", tool_result_payload("c1", true, "contents", &Redactor::default())),
        ("provider_usage", json!({"promptTokens": 3})),
        ("message", assistant_payload("It says contents.", &[], &[], &Redactor::default())),
        ("message", json!({"role": "user", "content": "again"})),
        (
            "message",
            assistant_payload(
                "",
                &[ToolCall { id: "c2".into(), ..call.clone() }],
                &[],
                &Redactor::default(),
            ),
        ),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (kind, payload))| Event {
        id: format!("s:{}", i + 1),
        session_id: "s".into(),
        sequence: i as u64 + 1,
        kind: Kind::parse(kind),
        created_at: String::new(),
        payload: Some(payload),
    })
    .collect();
    let messages = conversation(&events);
    // Native content comes back, except what redaction changed.
    assert_eq!(
        messages[1].native,
        [json!({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA"})]
    );
    let shape: Vec<(Role, &str, usize)> =
        messages.iter().map(|m| (m.role, m.content.as_str(), m.tool_calls.len())).collect();
    assert_eq!(
        shape,
        [
            (Role::User, "read a", 0),
            (Role::Assistant, "", 1),
            (Role::Tool, "contents", 0),
            (Role::Assistant, "It says contents.", 0),
            (Role::User, "again", 0),
            (Role::Assistant, "", 1),
            (Role::Tool, "The run ended before this tool call finished.", 0),
        ]
    );
    assert_eq!(messages[1].tool_calls[0], call);
    assert_eq!(messages[2].tool_call_id.as_deref(), Some("c1"));
}

#[test]
fn trimming_drops_whole_exchanges_oldest_first() {
    let call = ToolCall { id: "c".into(), name: "bash".into(), arguments: "{}".into() };
    let mut history = Vec::new();
    for i in 0..10 {
        history.push(Message::user(format!("question {i} {}", "x".repeat(400))));
        history.push(Message::assistant("", vec![call.clone()]));
        history.push(Message::tool_result(&call, "y".repeat(400)));
        history.push(Message::assistant(format!("answer {i}"), vec![]));
    }
    let trimmed = trim_to_budget(history.clone(), 700);
    assert!(trimmed.len() < history.len());
    assert_eq!(trimmed.len() % 4, 0, "whole exchanges only");
    assert_eq!(trimmed[0].role, Role::User);
    assert!(trimmed.last().unwrap().content == "answer 9");
    assert_eq!(trim_to_budget(history.clone(), u64::MAX).len(), 40);
}
