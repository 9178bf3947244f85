//! A Server-Sent Events reader over any `BufRead` (the WHATWG event-stream format).
//!
//! It frames events only; what they mean is each provider decoder's business. Lines end in
//! LF, CRLF or CR; `data:` lines accumulate (joined with `\n`); `event:` names the next event;
//! every other field (`id:`, `retry:`, or one a proxy adds) is ignored; `:` lines are comments
//! (OpenRouter's keep-alives).
//! A blank line dispatches; an event still open at the end of the body is dispatched too.
//!
//! Text that is not SSE at all (an HTML error page, a bare JSON error object after the events, as
//! Vertex AI sends) is collected and returned as [`Frame::Stray`] at the end, so the decoder can
//! name what went wrong instead of reporting an empty answer.

use std::io::BufRead;

/// Longest line or event accepted; a provider sending more is broken or hostile.
pub const MAX_EVENT_BYTES: usize = 8 * 1024 * 1024;
/// Stray text kept for the error message.
const MAX_STRAY_BYTES: usize = 64 * 1024;

/// One decoded unit of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A dispatched event: its `event:` name (if any) and its data.
    Event { name: Option<String>, data: String },
    /// Non-SSE text found in the body, returned once at the end.
    Stray(String),
}

/// Why the stream could not be read.
#[derive(Debug)]
pub enum SseError {
    Io(std::io::Error),
    TooLong,
    NotUtf8,
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseError::Io(err) => write!(f, "{err}"),
            SseError::TooLong => {
                write!(f, "a stream event exceeds {} MiB", MAX_EVENT_BYTES / (1024 * 1024))
            }
            SseError::NotUtf8 => f.write_str("the stream is not valid UTF-8"),
        }
    }
}

impl std::error::Error for SseError {}

/// Reads frames from a byte stream.
pub struct SseReader<R> {
    reader: R,
    line: Vec<u8>,
    data: String,
    has_data: bool,
    name: Option<String>,
    stray: String,
    queue: std::collections::VecDeque<Frame>,
    done: bool,
    /// The last `id:` field seen (a reconnection's `Last-Event-ID`).
    last_event_id: String,
    /// The last valid `retry:` field, in milliseconds.
    retry_ms: Option<u64>,
}

impl<R: BufRead> SseReader<R> {
    pub fn new(reader: R) -> SseReader<R> {
        SseReader {
            reader,
            line: Vec::new(),
            data: String::new(),
            has_data: false,
            name: None,
            stray: String::new(),
            queue: std::collections::VecDeque::new(),
            done: false,
            last_event_id: String::new(),
            retry_ms: None,
        }
    }

    /// The event id to resume after (empty when the stream gave none).
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// Continues a stream that was resumed: the id and retry time it had.
    pub fn resume_from(&mut self, last_event_id: &str, retry: Option<std::time::Duration>) {
        self.last_event_id = last_event_id.to_string();
        self.retry_ms = retry.map(|d| d.as_millis() as u64);
    }

    /// How long the stream asked a client to wait before reconnecting.
    pub fn retry(&self) -> Option<std::time::Duration> {
        self.retry_ms.map(std::time::Duration::from_millis)
    }

    /// The next frame, or `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, SseError> {
        loop {
            if let Some(frame) = self.queue.pop_front() {
                return Ok(Some(frame));
            }
            if self.done {
                if self.stray.trim().is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Frame::Stray(std::mem::take(&mut self.stray))));
            }
            if !self.read_line()? {
                self.done = true;
                if let Some(frame) = self.dispatch() {
                    return Ok(Some(frame));
                }
                continue;
            }
            let bytes = std::mem::take(&mut self.line);
            let line = std::str::from_utf8(&bytes).map_err(|_| SseError::NotUtf8);
            let result = line.and_then(|line| {
                // A lone CR also ends a line.
                for part in line.split('\r') {
                    if let Some(frame) = self.field(part)? {
                        self.queue.push_back(frame);
                    }
                }
                Ok(())
            });
            self.line = bytes;
            result?;
        }
    }

    /// Reads one line (without its LF) into `self.line`; false at the end of the body.
    fn read_line(&mut self) -> Result<bool, SseError> {
        self.line.clear();
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(SseError::Io(err)),
            };
            if buf.is_empty() {
                return Ok(!self.line.is_empty());
            }
            let (take, found) = match buf.iter().position(|&b| b == b'\n') {
                Some(at) => (at + 1, true),
                None => (buf.len(), false),
            };
            if self.line.len() + take > MAX_EVENT_BYTES {
                return Err(SseError::TooLong);
            }
            self.line.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            if found {
                self.line.pop();
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                return Ok(true);
            }
        }
    }

    /// Handles one line; returns a frame when a blank line dispatches one.
    fn field(&mut self, line: &str) -> Result<Option<Frame>, SseError> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                    return Err(SseError::TooLong);
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.name = Some(value.to_string()),
            // As the standard says: an id with a NUL is ignored; retry is only digits.
            "id" if !value.contains('\0') => self.last_event_id = value.to_string(),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            // Other fields (any a server or proxy adds) are ignored, as the standard says; only
            // text that is not field-shaped at all is kept as stray.
            name if is_field_name(name) => {}
            _ => {
                if self.stray.len() < MAX_STRAY_BYTES {
                    self.stray.push_str(line);
                    self.stray.push('\n');
                }
            }
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<Frame> {
        let name = self.name.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(Frame::Event { name, data: std::mem::take(&mut self.data) })
    }
}

/// A field name as servers write them (`data`, `event`, `id`, `retry`, `x-trace-id`): a letter,
/// then letters, digits, `-` or `_`. JSON (`{"error": ...`) and HTML lines are not.
fn is_field_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    /// A reader that hands out at most `step` bytes per call, to prove that chunk boundaries
    /// do not matter.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn frames(input: &[u8], step: usize) -> Vec<Frame> {
        let reader = BufReader::with_capacity(step.max(1), Trickle { bytes: input, step });
        let mut sse = SseReader::new(reader);
        let mut out = Vec::new();
        while let Some(frame) = sse.next_frame().unwrap() {
            out.push(frame);
        }
        out
    }

    fn event(name: Option<&str>, data: &str) -> Frame {
        Frame::Event { name: name.map(str::to_string), data: data.to_string() }
    }

    #[test]
    fn frames_the_common_shapes() {
        let input = b": keep-alive\n\nevent: message_start\ndata: {\"a\":1}\n\ndata: line one\ndata: line two\nid: 7\nretry: 100\n\ndata:[DONE]\n\n";
        let expected = vec![
            event(Some("message_start"), "{\"a\":1}"),
            event(None, "line one\nline two"),
            event(None, "[DONE]"),
        ];
        for step in [1, 2, 3, 7, 64, 4096] {
            assert_eq!(frames(input, step), expected, "step {step}");
        }
    }

    #[test]
    fn crlf_and_lone_cr_end_lines() {
        let two = frames(b"data: a\r\rdata: b\r\r", 100);
        assert_eq!(two, vec![event(None, "a"), event(None, "b")]);
        let input = b"data: a\r\n\r\ndata: b\r\rdata: c\n\n";
        for step in [1, 5, 100] {
            assert_eq!(
                frames(input, step),
                vec![event(None, "a"), event(None, "b"), event(None, "c")]
            );
        }
    }

    #[test]
    fn unknown_fields_are_ignored_as_the_standard_says() {
        let input = b"x-trace-id: abc\ndata: one\nfoo: bar\nweird\n\ndata: two\n\n";
        for step in [1, 4, 100] {
            assert_eq!(frames(input, step), vec![event(None, "one"), event(None, "two")]);
        }
    }

    #[test]
    fn an_event_open_at_the_end_is_dispatched() {
        assert_eq!(frames(b"data: {\"x\":1}", 3), vec![event(None, "{\"x\":1}")]);
        assert_eq!(frames(b"data: tail\n", 1), vec![event(None, "tail")]);
    }

    #[test]
    fn an_event_name_without_data_is_not_dispatched() {
        assert_eq!(frames(b"event: ping\n\ndata: x\n\n", 2), vec![event(None, "x")]);
    }

    #[test]
    fn text_that_is_not_sse_comes_back_once_at_the_end() {
        let input = b"data: {\"t\":1}\n\n{\n  \"error\": {\n    \"code\": 499\n  }\n}\n";
        let got = frames(input, 4);
        assert_eq!(got[0], event(None, "{\"t\":1}"));
        assert_eq!(got[1], Frame::Stray("{\n  \"error\": {\n    \"code\": 499\n  }\n}\n".into()));
        assert_eq!(got.len(), 2);
        let html = frames(b"<html><body>502 Bad Gateway</body></html>", 9);
        assert_eq!(html, vec![Frame::Stray("<html><body>502 Bad Gateway</body></html>\n".into())]);
    }

    #[test]
    fn invalid_utf8_and_huge_lines_are_errors() {
        let mut sse = SseReader::new(&b"data: \xff\xfe\n\n"[..]);
        assert!(matches!(sse.next_frame(), Err(SseError::NotUtf8)));
        let huge = vec![b'a'; MAX_EVENT_BYTES + 10];
        let mut sse = SseReader::new(BufReader::new(&huge[..]));
        assert!(matches!(sse.next_frame(), Err(SseError::TooLong)));
    }

    #[test]
    fn random_splits_give_the_same_frames() {
        let input = b"event: a\r\ndata: 1\r\n\r\n: c\ndata: 2\ndata: 3\n\ndata: [DONE]\n\n";
        let whole = frames(input, input.len());
        for step in 1..input.len() {
            assert_eq!(frames(input, step), whole);
        }
    }
}
