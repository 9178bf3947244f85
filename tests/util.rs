//! Running the real `zero` binary in an isolated directory: a clean environment (no real keys,
//! no proxies, HOME and XDG folders inside the test directory), stdin written from a thread,
//! a time limit, and failures that print everything needed to understand them.
#![allow(unsafe_code)] // libc calls that std lacks, on the test's own descriptors

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const ZERO: &str = env!("CARGO_BIN_EXE_zero");

/// How long any one run may take before the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// A fresh directory per test: `work/` (the cwd), `home/`, `data/`, `config/`.
pub struct TestDir {
    pub root: PathBuf,
}

impl TestDir {
    pub fn new(name: &str) -> TestDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        // Under `/var/tmp`, not `/tmp`: bash's sandbox leaves a temp directory that holds the
        // home directory read-only, and a user's home is not in one (a test that wants that
        // sets HOME there itself).
        let root = Path::new("/var/tmp").join(format!(
            "zero-e2e-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        for sub in ["work", "home", "data", "config"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        TestDir { root }
    }

    pub fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn sessions(&self) -> PathBuf {
        self.root.join("data/zero/sessions")
    }

    /// A command for the binary with only the environment the test gives it.
    pub fn zero(&self) -> Zero {
        let mut env = BTreeMap::new();
        env.insert("PATH".to_string(), "/usr/local/bin:/usr/bin:/bin".to_string());
        env.insert("HOME".to_string(), self.path("home").display().to_string());
        env.insert("XDG_DATA_HOME".to_string(), self.path("data").display().to_string());
        env.insert("XDG_CONFIG_HOME".to_string(), self.path("config").display().to_string());
        Zero {
            args: Vec::new(),
            env,
            cwd: self.work(),
            stdin: None,
            address_space_kib: None,
            file_modes_bind: false,
            user: None,
        }
    }

    /// Writes a scripted-provider script and returns its path.
    pub fn script(&self, script: &Value) -> PathBuf {
        self.write("script.json", &script.to_string())
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// A run to make.
pub struct Zero {
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
    pub stdin: Option<Vec<u8>>,
    /// `ulimit -v` for the run: the most memory it may map, as a small container allows.
    pub address_space_kib: Option<u64>,
    /// File modes hold for the run even when the tests run as root (see [`Zero::with_file_modes_binding`]).
    pub file_modes_bind: bool,
    /// Runs as this user and group instead of the test's (see [`Zero::run_as`]).
    pub user: Option<(u32, u32)>,
}

impl Zero {
    pub fn args(mut self, args: &[&str]) -> Zero {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Zero {
        self.env.insert(key.to_string(), value.to_string());
        self
    }

    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Zero {
        self.stdin = Some(input.into());
        self
    }

    /// Points the OpenAI-compatible provider at a mock.
    pub fn openai(self, base: &str, model: &str) -> Zero {
        self.openai_keyed(base, "test-key-0123456789", model)
    }

    /// The same, with the given API key.
    pub fn openai_keyed(self, base: &str, key: &str, model: &str) -> Zero {
        self.env("OPENAI_BASE_URL", base).env("OPENAI_API_KEY", key).env("OPENAI_MODEL", model)
    }

    /// Points the Anthropic provider at a mock (`mock.url()`).
    pub fn anthropic_at(self, url: &str) -> Zero {
        self.env("ANTHROPIC_API_KEY", "ant-test-key-123").env("ANTHROPIC_BASE_URL", url)
    }

    /// Points the Gemini provider at a mock (`mock.url()`).
    pub fn gemini_at(self, url: &str) -> Zero {
        self.env("GEMINI_API_KEY", "gem-test-key-123").env("GEMINI_BASE_URL", url)
    }

    /// Points the official OpenAI provider at a mock (`mock.v1()`): its requests are the
    /// official host's (debug builds only).
    pub fn official_openai_at(self, v1: &str) -> Zero {
        self.env("OPENAI_API_KEY", "sk-test-official-123456").env("ZERO_DEBUG_OPENAI_URL", v1)
    }

    /// Runs without the power to write a file its mode forbids, as a user would: when the tests
    /// run as root, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH leave the run's bounding set
    /// before it starts (nothing changes for any other user).
    pub fn with_file_modes_binding(mut self) -> Zero {
        self.file_modes_bind = true;
        self
    }

    /// Runs as `uid`:`gid` with no other groups (the tests must run as root to ask it), as
    /// `setpriv --reuid --regid --clear-groups` would.
    pub fn run_as(mut self, uid: u32, gid: u32) -> Zero {
        self.user = Some((uid, gid));
        self
    }

    /// Runs with at most `mib` MiB of address space, as in a container with a memory limit.
    pub fn memory_limit_mib(mut self, mib: u64) -> Zero {
        self.address_space_kib = Some(mib * 1024);
        self
    }

    pub fn command(&self) -> Command {
        let mut cmd = match self.address_space_kib {
            None => Command::new(zero_for(self.user)),
            Some(kib) => {
                let mut sh = Command::new("/bin/sh");
                let zero = zero_for(self.user);
                sh.arg("-c").arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\"")).arg(zero);
                sh
            }
        };
        cmd.args(&self.args).env_clear().envs(&self.env).current_dir(&self.cwd);
        if let Some((uid, gid)) = self.user {
            use std::os::unix::process::CommandExt;
            // std also drops the supplementary groups when root changes its user.
            cmd.gid(gid).uid(uid);
        }
        if self.file_modes_bind {
            use std::os::unix::process::CommandExt;
            extern "C" {
                fn prctl(option: i32, ...) -> i32;
            }
            const PR_CAPBSET_DROP: i32 = 24;
            const CAP_DAC_OVERRIDE: u64 = 1;
            const CAP_DAC_READ_SEARCH: u64 = 2;
            // SAFETY: prctl with plain integers, between fork and exec; a failure (no
            // privilege to drop, as any other user) changes nothing.
            unsafe {
                cmd.pre_exec(|| {
                    prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0u64, 0u64, 0u64);
                    prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0u64, 0u64, 0u64);
                    Ok(())
                });
            }
        }
        cmd
    }

    pub fn spawn(&self) -> Child {
        let mut cmd = self.command();
        cmd.stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.spawn().expect("spawn zero")
    }

    /// Runs to completion (within the time limit).
    pub fn run(&self) -> Output {
        let mut child = self.spawn();
        if let Some(input) = self.stdin.clone() {
            let mut stdin = child.stdin.take().unwrap();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&input);
            });
        }
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let out = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = stdout.read_to_end(&mut s);
            s
        });
        let err = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = stderr.read_to_end(&mut s);
            s
        });
        let started = Instant::now();
        let pid = child.id();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(child.wait());
        });
        let status = match finished.recv_timeout(RUN_LIMIT) {
            Ok(status) => status.expect("wait for zero"),
            Err(_) => {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                panic!("zero {:?} did not finish within {RUN_LIMIT:?}", self.args);
            }
        };
        let output = Output {
            code: status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.join().unwrap()).into_owned(),
            stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
            args: self.args.clone(),
            elapsed: started.elapsed(),
        };
        capture(&output);
        conforms(&output);
        accepted_input_conforms(&output, self.stdin.as_deref());
        output
    }
}

/// The JSON Schema `zero schema N` prints (N is 1 or 2), read once per test process.
pub fn printed_schema(version: u64) -> &'static Value {
    static SCHEMAS: [std::sync::OnceLock<Value>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    assert!(version == 1 || version == 2, "no schema version {version}");
    SCHEMAS[version as usize - 1].get_or_init(|| {
        let v = version.to_string();
        let out = Command::new(env!("CARGO_BIN_EXE_zero")).args(["schema", &v]).output();
        let out = out.expect("run zero schema");
        assert!(out.status.success(), "zero schema {v} failed");
        serde_json::from_slice(&out.stdout).expect("zero schema prints JSON")
    })
}

/// The stream-json input of a run that got past reading it (a bad line is a usage error,
/// exit 2) matches the input events of the schema zero prints.
fn accepted_input_conforms(output: &Output, stdin: Option<&[u8]>) {
    let args = &output.args;
    let stream_input = args
        .windows(2)
        .any(|w| matches!(w[0].as_str(), "-i" | "--input-format") && w[1] == "stream-json")
        || args.iter().any(|a| a == "--input-format=stream-json");
    let Some(stdin) = stdin else { return };
    if !stream_input || output.code == 2 || args.iter().any(|a| a == "--file" || a == "-f") {
        return;
    }
    let text = String::from_utf8_lossy(stdin);
    for line in text.trim_start_matches('\u{feff}').lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let event: Value = serde_json::from_str(line).unwrap_or_else(|e| {
            panic!("an accepted input line is not JSON ({e}): {line}\n{output:?}")
        });
        let version = event["schemaVersion"].as_u64().unwrap_or(0);
        let schema = printed_schema(version);
        if let Err(err) = crate::jsonschema::validate(schema, &schema["$defs"]["input"], &event) {
            panic!("an accepted input line does not match `zero schema {version}`: {err}\nline: {line}\n{output:?}");
        }
    }
}

/// Every stream-json line a run writes matches the schema zero prints for its version, and,
/// separately, the strict mirror of that version (schema.rs, schema2.rs) with its ordering
/// rules.
fn conforms(output: &Output) {
    let args = &output.args;
    let stream_json = args
        .windows(2)
        .any(|w| matches!(w[0].as_str(), "-o" | "--output-format") && w[1] == "stream-json")
        || args.iter().any(|a| a == "--output-format=stream-json");
    let informational = args.iter().any(|a| matches!(a.as_str(), "-h" | "--help" | "--version"));
    let json = args
        .windows(2)
        .any(|w| matches!(w[0].as_str(), "-o" | "--output-format") && w[1] == "json")
        || args.iter().any(|a| a == "--output-format=json");
    if json && !stream_json && !informational && args.first().is_some_and(|a| a == "exec") {
        if let Err(err) = check_json_lines(&output.stdout) {
            panic!("{err}\n{output:?}");
        }
    }
    if !stream_json || informational {
        return;
    }
    if let Err(err) = check_stream(&output.stdout, args, output.code) {
        panic!("{err}\n{output:?}");
    }
}

/// The `-o json` lines: each is JSON, the call ordering holds as in stream-json (no text of
/// a call after its tool call, usage or final answer), and the last line ends the run.
fn check_json_lines(stdout: &str) -> Result<(), String> {
    let mut events = Vec::new();
    for line in stdout.lines() {
        let event: Value = serde_json::from_str(line)
            .map_err(|e| format!("a json line is not JSON ({e}): {line}"))?;
        events.push(event);
    }
    crate::schema::check_call_order(&events)
        .map_err(|e| format!("the json lines break the ordering rules: {e}"))?;
    match events.last().map(|e| e["type"].as_str()) {
        None | Some(Some("done" | "error")) => Ok(()),
        Some(other) => Err(format!("the last json line is {other:?}, not done or error")),
    }
}

/// The checks of [`conforms`] for a stream read some other way (a run that was signalled,
/// driven line by line): each line against `zero schema N` and the mirror, the ordering rules,
/// and the exit code against `run_end`.
pub fn check_stream(stdout: &str, args: &[String], code: i32) -> Result<(), String> {
    let mut events = Vec::new();
    for line in stdout.lines() {
        let event: Value = serde_json::from_str(line)
            .map_err(|e| format!("a stream-json line is not JSON ({e}): {line}"))?;
        let version = event["schemaVersion"].as_u64().unwrap_or(0);
        let schema = printed_schema(version);
        crate::jsonschema::validate(schema, &schema["$defs"]["output"], &event).map_err(|e| {
            format!("a line does not match `zero schema {version}`: {e}\nline: {line}")
        })?;
        crate::schema::check_line(line).map_err(|e| {
            format!("a line breaks the strict mirror of schema {version}: {e}\nline: {line}")
        })?;
        events.push(event);
    }
    let checked = if args.iter().any(|a| a == "--live") {
        crate::schema::check_live_sequence(&events)
    } else {
        crate::schema::check_sequence(&events)
    };
    checked.map_err(|e| format!("the stream breaks the ordering rules: {e}"))?;
    // The process exits with the code its last line says.
    match events.last().filter(|e| e["type"] == "run_end") {
        Some(end) if end["exitCode"] != code => {
            Err(format!("run_end says exit {} but the process exited {code}", end["exitCode"]))
        }
        _ => Ok(()),
    }
}

/// With `ZERO_E2E_CAPTURE=<dir>`, every run's exit code, stdout and stderr are appended to
/// `<dir>/<test>.txt` with what differs from run to run (ids, temporary paths, ports, retry
/// jitter) replaced, so two versions of zero can be compared byte for byte:
/// `ZERO_E2E_CAPTURE=/tmp/a cargo test --test e2e`, change, `.../tmp/b`, then `diff -r`.
fn capture(output: &Output) {
    let Some(dir) = std::env::var_os("ZERO_E2E_CAPTURE") else { return };
    let test = std::thread::current().name().unwrap_or("unnamed").replace("::", "-");
    let block = format!(
        "=== {:?} exit {}\n--- stdout\n{}--- stderr\n{}",
        output.args, output.code, output.stdout, output.stderr
    );
    let block = normalize(&block);
    let path = Path::new(&dir).join(format!("{test}.txt"));
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    file.write_all(block.as_bytes()).unwrap();
}

/// Replaces the parts of a run's output that change from run to run.
fn normalize(text: &str) -> String {
    // Generated ids: `run_` or `zero_`, 14 digits, `_`, then letters and digits.
    let mut out = text.to_string();
    for (prefix, with) in [("run_", "run_ID"), ("zero_", "zero_SESSION")] {
        out = replace_each(&out, prefix, |after| {
            let stamp = after.len() > 14
                && after.as_bytes()[..14].iter().all(u8::is_ascii_digit)
                && after.as_bytes()[14] == b'_';
            let n = after.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
            stamp.then(|| (with.to_string(), n))
        });
    }
    // Temporary directories: `zero-e2e-<name>-<pid>-<n>`.
    out = replace_each(&out, "zero-e2e-", |after| {
        let end = after.find(['/', '"', ' ', '\n', ')']).unwrap_or(after.len());
        let parts: Vec<&str> = after[..end].rsplitn(3, '-').collect();
        let numbered = parts.len() == 3
            && parts[..2].iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        numbered.then(|| (format!("zero-e2e-{}", parts[2]), end))
    });
    // Timestamps of session files: `2026-12-01T09:51:13.676Z`.
    out = replace_each(&out, "T", |after| {
        let b = after.as_bytes();
        let shaped = b.len() >= 13
            && [2, 5].iter().all(|&i| b[i] == b':')
            && b[8] == b'.'
            && b[12] == b'Z'
            && [0, 1, 3, 4, 6, 7, 9, 10, 11].iter().all(|&i| b[i].is_ascii_digit());
        shaped.then(|| ("TTIME".to_string(), 13))
    });
    // Mock ports, retry jitter, pids of other runs, places in the source (of a panic).
    for (marker, with) in [
        ("127.0.0.1:", "127.0.0.1:PORT"),
        ("retrying in ", "retrying in N"),
        ("(pid ", "(pid N"),
        (".rs:", ".rs:LINE"),
    ] {
        out = replace_each(&out, marker, |after| {
            let n = after.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
            (n > 0).then(|| (with.to_string(), n))
        });
    }
    out
}

/// Replaces each `prefix` and the `n` bytes after it with what `decide` says, where it says.
fn replace_each(
    text: &str,
    prefix: &str,
    decide: impl Fn(&str) -> Option<(String, usize)>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        out.push_str(&rest[..at]);
        let after = &rest[at + prefix.len()..];
        match decide(after) {
            Some((with, n)) => {
                out.push_str(&with);
                rest = &after[n..];
            }
            None => {
                out.push_str(prefix);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A finished run.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub args: Vec<String>,
    pub elapsed: Duration,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "\nzero {:?}\nexit: {}\n---- stdout ----\n{}\n---- stderr ----\n{}\n----------------",
            self.args, self.code, self.stdout, self.stderr
        )
    }
}

impl Output {
    /// Every stdout line as JSON, each checked against the strict stream-json schema when
    /// `strict` is set.
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}\n{self:?}"))
            })
            .collect()
    }

    /// Stream-json events, validated strictly.
    pub fn stream(&self) -> Vec<Value> {
        let events = self.events();
        for line in self.stdout.lines() {
            if let Err(err) = crate::schema::check_line(line) {
                panic!("schema violation: {err}\nline: {line}\n{self:?}");
            }
        }
        let checked = if self.args.iter().any(|a| a == "--live") {
            crate::schema::check_live_sequence(&events)
        } else {
            crate::schema::check_sequence(&events)
        };
        checked.unwrap_or_else(|e| panic!("{e}\n{self:?}"));
        events
    }

    /// The messages of the `warning` lines, in order.
    pub fn warnings(&self) -> Vec<String> {
        self.events()
            .iter()
            .filter(|e| e["type"] == "warning")
            .map(|e| e["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    pub fn types(&self) -> Vec<String> {
        self.events().iter().map(|e| e["type"].as_str().unwrap_or("?").to_string()).collect()
    }

    /// Concatenated `text` deltas.
    pub fn text(&self) -> String {
        self.events()
            .iter()
            .filter(|e| e["type"] == "text")
            .map(|e| e["delta"].as_str().unwrap().to_string())
            .collect()
    }

    /// Text mode's stderr after its first row, which names the run's session
    /// (`[zero] session <id>`, an id that changes from run to run).
    #[track_caller]
    pub fn rows(&self) -> String {
        let (first, rest) = self.stderr.split_once('\n').unwrap_or((&self.stderr, ""));
        assert!(first.starts_with("[zero] session zero_"), "no session row first{self:?}");
        rest.to_string()
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Output {
        assert_eq!(self.code, code, "unexpected exit code{self:?}");
        self
    }
}

/// The binary as `user` runs it: for another user than the tests', a copy in a directory every
/// user may enter, since the checkout (a `mktemp -d` clone is mode 0700) may be closed to them.
pub fn zero_for(user: Option<(u32, u32)>) -> PathBuf {
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if user.is_none() {
        return PathBuf::from(ZERO);
    }
    COPY.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        // One directory per checkout (not per run, so runs do not pile up copies); the copy
        // is renamed into place, which a run still executing the last one does not mind.
        let checkout = ZERO.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let dir = std::env::temp_dir().join(format!("zero-e2e-bin-{checkout:016x}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let fresh = dir.join(format!("zero.{}", std::process::id()));
        std::fs::copy(ZERO, &fresh).unwrap();
        std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o755)).unwrap();
        let copy = dir.join("zero");
        std::fs::rename(&fresh, &copy).unwrap();
        copy
    })
    .clone()
}

/// A child's stdout, line by line, read on a thread of the test so a wait for a line can have
/// a deadline (`recv_timeout`).
pub fn stdout_lines(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("stdout is piped");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    lines
}

/// Whether a process is alive (not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) != Some("Z")
        }
        Err(_) => false,
    }
}

/// Waits (polling, at most `limit`) for a process to be gone; false if it is still alive.
pub fn gone_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// Fails if any 12-byte piece of `secret` appears in `text` (so neither the secret nor a
/// recognisable part of it was written).
#[track_caller]
pub fn assert_no_piece_of(text: &str, secret: &str, what: &str) {
    for window in secret.as_bytes().windows(12.min(secret.len())) {
        let piece = String::from_utf8_lossy(window);
        assert!(!text.contains(piece.as_ref()), "{piece:?} of a secret leaked in {what}:\n{text}");
    }
}

/// Every session file of a test directory, one after the other.
pub fn read_sessions(dir: &TestDir) -> String {
    fn walk(path: &Path, out: &mut String) {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for entry in entries {
            if entry.is_dir() {
                walk(&entry, out);
            } else {
                out.push_str(&std::fs::read_to_string(&entry).unwrap_or_default());
            }
        }
    }
    let mut out = String::new();
    walk(&dir.sessions(), &mut out);
    out
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Reads lines until one contains `needle` (the run is then in the state the test waits for).
pub fn read_until(reader: &mut impl std::io::BufRead, needle: &str) {
    let mut line = String::new();
    while !line.contains(needle) {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the run ended before {needle:?}");
    }
}

pub fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Whether the tests run as root (some tests then also run zero as another user).
pub fn is_root() -> bool {
    extern "C" {
        fn geteuid() -> u32;
    }
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { geteuid() == 0 }
}

/// Why a test cannot run here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// A program or data set the tests need is not installed: `.ci/run` installs it, so
    /// there (`ZERO_CI` set) this is a failure, not a skip.
    Missing,
    /// The machine cannot give what the test needs (root, a kernel feature).
    Machine,
}

/// Says that a test is skipped and why: on stderr past the harness's capture, and appended
/// to `$ZERO_SKIP_LOG` when it is set (`.ci/run` counts the lines). Under `ZERO_CI` a skip for
/// something missing panics.
pub fn skip(test: &str, kind: Skip, why: &str) {
    use std::io::Write;
    if kind == Skip::Missing && std::env::var_os("ZERO_CI").is_some() {
        panic!("{test} cannot run: {why}; .ci/run installs what the tests need");
    }
    let line = format!("skipped: {test}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    if let Some(log) = std::env::var_os("ZERO_SKIP_LOG") {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(log);
        if let Ok(mut file) = file {
            let _ = file.write_all(line.as_bytes());
        }
    }
}
