//! `zero exec`: one run from arguments to exit code, with every error reported in the
//! requested output format once that format is known.
//!
//! A run checks and does things in one order, so that the first problem a user has is the one
//! reported, before anything was read or changed that did not need to be: (1) the output
//! format; (2-4) what the command line alone decides (the run plan: input format, limits,
//! session flags, permissions); (5) the workspace (`-C`); which session `--resume`/`--fork`
//! names; (6) the prompt, stdin included; (7) the configuration, provider and model; (8)
//! `--list-tools`; (9) the session opened or created; (10-11) `run_start`, then warnings; (12)
//! the prompt recorded; (13-14) the agent loop; (15) the session synced; the last lines. Steps 7-11 are
//! `run::open`'s, which every front-end shares; 12-14 are the engine's turn.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::cli::ExecArgs;
use crate::config::Env;
use crate::error::{Exit, Failure, Stop};
use crate::output::{Emitter, Output};
use crate::protocol::events::SchemaVersion;
use crate::protocol::input::{self, InputFormat, PromptText};
use crate::redact::Redactor;
use crate::run::engine::{Prompt, Unattended};
use crate::run::open::{self, Opened, Opening, Selection};
use crate::run::plan::{RunPlan, SessionPlan};
use crate::session::{self, Store};

/// What `run` needs from the process, so tests could supply their own.
pub struct Process {
    pub env: Env,
    pub stdout: Box<dyn std::io::Write + Send>,
    pub stderr: Box<dyn std::io::Write + Send>,
}

/// The secrets known before anything runs: values of sensitive environment variables.
fn startup_redactor(env: &Env) -> Redactor {
    Redactor::new(env.secret_values())
}

/// Runs `zero exec` and returns the exit code. `on_start` receives the shared emitter as soon
/// as it exists (for the interrupt and panic handlers).
pub fn run(args: ExecArgs, mut process: Process, on_start: impl FnOnce(&Output)) -> Exit {
    // 1. The output format, before anything else can fail.
    let format = match super::plan::output_format(&args) {
        Ok(format) => format,
        Err(failure) => {
            let _ = writeln!(process.stderr, "[zero] {failure}");
            return failure.exit();
        }
    };
    let redactor = startup_redactor(&process.env);
    // A failpoint for the tests of a thread limit; it does not exist in release builds.
    if cfg!(debug_assertions) && process.env.get("ZERO_DEBUG_NO_THREADS").is_some() {
        crate::sys::threads::refuse_all();
    }
    let emitter =
        Emitter::new(format, crate::clock::new_run_id(), process.stdout, process.stderr, redactor);
    let shared: Output = Output::new(emitter);
    on_start(&shared);
    let env = process.env;
    let result = run_exec(&args, &env, &shared);
    let exit = finish(&shared, result);
    // The last line is out: MCP servers get SIGTERM, then SIGKILL after their grace.
    crate::sys::process::stop_kept_groups();
    exit
}

/// Ends the run: the failure is reported (unless the output is gone) and mapped to its code.
fn finish(shared: &Output, result: Result<Exit, Stop>) -> Exit {
    match result {
        Ok(exit) => exit,
        Err(Stop::OutputClosed) => Exit::Internal,
        Err(Stop::Failed(failure)) => {
            crate::run::ending::record_failure(&failure);
            match shared.failure(&failure) {
                Ok(()) => failure.exit(),
                Err(_) => Exit::Internal,
            }
        }
    }
}

/// Runs `zero exec`; the exit code of a run that ended as it should (0, or a live process's
/// last turn's).
fn run_exec(args: &ExecArgs, env: &Env, shared: &Output) -> Result<Exit, Stop> {
    // The schema version the flag asks for (live mode speaks 2): every later error is written
    // in it.
    match super::plan::schema_version(args)? {
        Some(version) => shared.set_schema(version),
        None if args.live => shared.set_schema(SchemaVersion::V2),
        None => {}
    }
    // 2-4, 7. Everything the command line alone decides, before anything is read or changed.
    let plan = super::plan::resolve(args, env)?;
    execute(&plan, env, shared)
}

/// Runs a plan, in the module's order: the workspace, the session selection and the prompt
/// (this front-end's inputs), then the conversation opened and its one turn.
fn execute(plan: &RunPlan, env: &Env, shared: &Output) -> Result<Exit, Stop> {
    // Paths on the command line mean what they say where zero was started, not below `-C`.
    let started_in = std::env::current_dir()
        .map_err(|err| Failure::Usage(format!("Cannot read the current directory: {err}")))?;
    // 5. The workspace.
    let cwd = change_directory(plan.cwd.as_deref())?;
    // Which session to continue is decided before the prompt, since `--resume WORD` may
    // turn out to be a prompt word. Nothing is opened yet.
    let store = Store::locate(env);
    let redactor_now = shared.redactor();
    let workspace_sessions = WorkspaceSessions { cwd: &cwd, redactor: &redactor_now };
    let (selection, prompt_words) = select_session(plan, store.as_ref().ok(), &workspace_sessions)?;
    // 6. The prompt (stdin is consumed here, before provider setup).
    let mut prompt = the_prompt(plan, &prompt_words, &started_in, shared)?;
    // 7-11. The conversation, opened.
    let opening = Opening {
        plan,
        env,
        out: shared,
        started_in: &started_in,
        cwd: &cwd,
        store,
        selection,
        editor: None,
    };
    let mut engine = match open::open(opening, &mut prompt)? {
        Opened::Listed => return Ok(Exit::Success),
        Opened::Engine(engine) => engine,
    };
    if plan.live {
        return crate::run::live::run(&mut engine, shared, plan.approvals);
    }
    // 12-14. The user's prompt is the session's next event; then the agent loop.
    let answer = engine.turn(prompt.unwrap_or_default(), &mut Unattended)?;
    // 15. Completion: the session is on disk before the last line is written.
    engine.sync();
    shared.success(&answer)?;
    Ok(Exit::Success)
}

/// Step 6: the prompt; none for `--list-tools`, and an empty one in live mode, whose turns
/// are read after `run_start`. Stream-json input lines decide the schema version when the
/// flag did not, also for the error of a bad line.
fn the_prompt(
    plan: &RunPlan,
    words: &[String],
    started_in: &Path,
    shared: &Output,
) -> Result<Option<Prompt>, Failure> {
    if plan.list_tools {
        return Ok(None);
    }
    if plan.live {
        return Ok(Some(Prompt::default()));
    }
    let prompt_file = plan.prompt_file.as_deref().map(|f| started_in.join(f));
    let mut version = plan.schema_version;
    let read = read_prompt(plan, words, prompt_file.as_deref(), &mut version);
    if let Some(version) = version {
        shared.set_schema(version);
    }
    read.map(Some)
}

/// The workspace whose newest session a bare `--resume` continues.
struct WorkspaceSessions<'a> {
    cwd: &'a Path,
    /// Stored `cwd`s are redacted: the workspace is compared in the same form.
    redactor: &'a Redactor,
}

/// Decides `--resume` / `--fork` against the store and returns the prompt words without
/// a resume id. A bare `--resume` stays in this workspace: continuing another repository's
/// conversation would send that project's context to the model.
fn select_session(
    plan: &RunPlan,
    store: Option<&Store>,
    workspace: &WorkspaceSessions,
) -> Result<(Selection, Vec<String>), Failure> {
    let mut words = plan.prompt_words.clone();
    let need_store = || {
        store.ok_or_else(|| {
            Failure::Usage(
                "Sessions are unavailable: neither XDG_DATA_HOME nor HOME is set.".to_string(),
            )
        })
    };
    let existing = |id: &str| -> Result<String, Failure> {
        let id = id.trim();
        if !session::valid_id(id) {
            return Err(Failure::Usage(format!("Invalid Zero session id: {id}")));
        }
        if !need_store()?.exists(id) {
            return Err(Failure::Usage(format!("Zero session not found: {id}")));
        }
        Ok(id.to_string())
    };
    let latest = || -> Result<String, Failure> {
        let cwd = workspace.cwd.display().to_string();
        let list = need_store()?.list_for(&cwd, workspace.redactor).map_err(Failure::from)?;
        list.first().map(|m| m.session_id.clone()).ok_or_else(|| {
            Failure::Usage(format!(
                "No Zero sessions available to resume: this workspace ({cwd}) has none. `zero sessions list --all` shows every session; `--resume ID` continues one."
            ))
        })
    };
    let selection = match &plan.session {
        SessionPlan::New => Selection::New,
        SessionPlan::Fork(id) => Selection::Fork(existing(id)?),
        SessionPlan::Latest => Selection::Resume(latest()?),
        SessionPlan::Resume(id) => Selection::Resume(existing(id)?),
        SessionPlan::Candidate { word, index } => {
            let named = store.is_some_and(|s| s.exists(word));
            if named || session::looks_generated(word) {
                if *index < words.len() {
                    words.remove(*index);
                }
                Selection::Resume(existing(word)?)
            } else {
                Selection::Resume(latest()?)
            }
        }
    };
    Ok((selection, words))
}

/// `-C`: the directory must exist; it becomes the process's and the workspace's directory.
fn change_directory(dir: Option<&Path>) -> Result<PathBuf, Failure> {
    let current = std::env::current_dir()
        .map_err(|err| Failure::Usage(format!("Cannot read the current directory: {err}")))?;
    let Some(dir) = dir else { return Ok(current) };
    let target = current.join(dir);
    match std::fs::metadata(&target) {
        Err(_) => Err(Failure::Usage(format!("Working directory not found: {}", target.display()))),
        Ok(meta) if !meta.is_dir() => Err(Failure::Usage(format!(
            "Working directory is not a directory: {}",
            target.display()
        ))),
        Ok(_) => {
            std::env::set_current_dir(&target).map_err(|err| {
                Failure::Usage(format!(
                    "Cannot enter working directory {}: {err}",
                    target.display()
                ))
            })?;
            Ok(std::env::current_dir().unwrap_or(target))
        }
    }
}

/// Reads the prompt: words, `--file` (already made absolute), or stdin when asked; stream-json
/// input reads stdin when it is not a terminal and no file is given.
fn read_prompt(
    plan: &RunPlan,
    words: &[String],
    file: Option<&Path>,
    version: &mut Option<SchemaVersion>,
) -> Result<Prompt, Failure> {
    let mut stdin = crate::sys::stdio::stdin();
    let prompt = match plan.input_format {
        InputFormat::Text => {
            let more = if plan.prompt_stdin {
                Some(PromptText::Stdin(&mut stdin))
            } else {
                file.map(PromptText::File)
            };
            Prompt { text: input::text_prompt(words, more)?, images: Vec::new() }
        }
        InputFormat::StreamJson => {
            let asked = plan.prompt_stdin || (file.is_none() && !std::io::stdin().is_terminal());
            let source: Option<&mut dyn std::io::Read> =
                if asked { Some(&mut stdin) } else { None };
            let read = input::stream_json_prompt(words, file, source, version)?;
            Prompt { text: read.text, images: read.images }
        }
    };
    Ok(prompt)
}
