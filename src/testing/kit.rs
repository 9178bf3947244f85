//! Helpers shared by the unit tests: a temporary directory, an in-memory writer, a small
//! deterministic generator, a stream-json emitter to read back, and the decoders fed whole
//! SSE bodies.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A fresh directory, removed when dropped (kept when the test failed, to look at).
pub struct TempDir {
    pub path: PathBuf,
}

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "zero-unit-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir { path }
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }

    /// Writes a file (creating its directories) and returns its path.
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.path.join(rel);
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path.join(rel)).unwrap()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// A writer whose bytes the test can read back, shared between clones.
#[derive(Clone, Default)]
pub struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl SharedBuf {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()).unwrap()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Polls (at most `limit`) until process `pid` is gone or a zombie: a killed process takes a
/// moment to go. False if it is still alive at the deadline.
pub fn process_gone_within(pid: u32, limit: std::time::Duration) -> bool {
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                stat.rsplit_once(')').is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
            })
            .unwrap_or(false)
    };
    let deadline = std::time::Instant::now() + limit;
    while alive() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    true
}

/// A xorshift generator: the same seed gives the same cases on every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A stream-json emitter of run `run_id` in `schema`, whose stdout the test reads from the
/// buffer returned (stderr is dropped).
pub fn stream_emitter(
    run_id: &str,
    schema: crate::protocol::events::SchemaVersion,
) -> (crate::output::Emitter, SharedBuf) {
    let sink = SharedBuf::default();
    let mut emitter = crate::output::Emitter::new(
        crate::output::Format::StreamJson,
        run_id.into(),
        Box::new(sink.clone()),
        Box::new(SharedBuf::default()),
        crate::redact::Redactor::default(),
    );
    emitter.set_schema(schema);
    (emitter, sink)
}

/// Decodes a whole SSE body with a fresh `D`; the error, if any, ends the list (for the
/// decoders' tests and the fuzzer).
pub fn decode_body<D: crate::provider::Decoder + Default>(
    body: &str,
) -> (Vec<crate::provider::StreamEvent>, Option<String>) {
    let mut sse = crate::net::sse::SseReader::new(body.as_bytes());
    let mut decoder = D::default();
    let mut out = Vec::new();
    while let Some(frame) = sse.next_frame().unwrap() {
        if let Err(err) = decoder.feed(frame, &mut out) {
            return (out, Some(err.message));
        }
    }
    match decoder.finish(&mut out) {
        Ok(()) => (out, None),
        Err(err) => (out, Some(err.message)),
    }
}

/// The events of a body that decodes with a fresh `D` and no error.
pub fn decoded_body<D: crate::provider::Decoder + Default>(
    body: &str,
) -> Vec<crate::provider::StreamEvent> {
    let (events, error) = decode_body::<D>(body);
    assert_eq!(error, None, "{events:?}");
    events
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
