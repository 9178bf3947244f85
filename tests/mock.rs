//! A loopback mock provider in std: a `TcpListener` on 127.0.0.1 that answers each request
//! with the next scripted reply, records every request, and can stop mid-stream until the test
//! says go (so a test can prove an event was written before the next chunk was even sent).

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Lower-case names.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

/// One step of a streamed reply.
pub enum Step {
    /// Bytes sent as one HTTP chunk, flushed.
    Send(Vec<u8>),
    /// Waits for the test's signal (or for the test to drop the sender).
    Wait(Receiver<()>),
    /// A slow provider.
    Pause(Duration),
    /// Closes the connection without ending the chunked body: a reset mid-stream.
    Cut,
}

/// What the mock does with one request.
pub enum Reply {
    /// Status, headers, then the steps as a chunked body.
    Stream { status: u16, headers: Vec<(String, String)>, steps: Vec<Step> },
    /// Reads the request and never answers.
    Hang,
}

impl Reply {
    /// A 200 event stream of the given SSE text pieces.
    pub fn sse<S: AsRef<str>>(pieces: &[S]) -> Reply {
        Reply::stream(pieces.iter().map(|p| Step::Send(p.as_ref().as_bytes().to_vec())).collect())
    }

    pub fn stream(steps: Vec<Step>) -> Reply {
        Reply::Stream {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            steps,
        }
    }

    /// A complete response with a body.
    pub fn status(status: u16, content_type: &str, body: &str) -> Reply {
        Reply::Stream {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            steps: vec![Step::Send(body.as_bytes().to_vec())],
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Stream { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }
}

/// Makes the reply to a request when the scripted replies are used up.
pub type Responder = Box<dyn Fn(&Request) -> Reply + Send + Sync>;

struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    responder: Option<Responder>,
    requests: Mutex<Vec<Request>>,
    arrivals: Mutex<Sender<()>>,
}

/// A running mock provider; it stops serving when dropped.
pub struct Mock {
    pub port: u16,
    shared: Arc<Shared>,
    arrivals: Receiver<()>,
    /// Dropped with the mock: hanging connections notice and close.
    _alive: Sender<()>,
}

impl Mock {
    pub fn start(replies: Vec<Reply>) -> Mock {
        Mock::serve(replies, None)
    }

    /// A mock that answers every request with `responder` (for benchmarks).
    pub fn responding(responder: Responder) -> Mock {
        Mock::serve(Vec::new(), Some(responder))
    }

    fn serve(replies: Vec<Reply>, responder: Option<Responder>) -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let (arrived, arrivals) = channel();
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into()),
            responder,
            requests: Mutex::new(Vec::new()),
            arrivals: Mutex::new(arrived),
        });
        let (alive, gone) = channel::<()>();
        let gone = Arc::new(Mutex::new(gone));
        let for_thread = shared.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let shared = for_thread.clone();
                let gone = gone.clone();
                std::thread::spawn(move || serve(stream, &shared, &gone));
            }
        });
        Mock { port, shared, arrivals, _alive: alive }
    }

    /// `http://127.0.0.1:<port>`
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The OpenAI-style base URL: `http://127.0.0.1:<port>/v1`.
    pub fn v1(&self) -> String {
        format!("{}/v1", self.url())
    }

    pub fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Blocks until one more request has arrived.
    pub fn wait_request(&self) {
        self.arrivals.recv_timeout(Duration::from_secs(30)).expect("the mock received no request");
    }
}

fn serve(stream: TcpStream, shared: &Shared, gone: &Mutex<Receiver<()>>) {
    // Each chunk goes out at once, as a streaming server sends it (no Nagle delay).
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let Some(request) = read_request(&mut reader) else { return };
        let reply = shared.replies.lock().unwrap().pop_front();
        let reply = reply.or_else(|| shared.responder.as_ref().map(|respond| respond(&request)));
        if shared.responder.is_none() {
            shared.requests.lock().unwrap().push(request);
        }
        let _ = shared.arrivals.lock().unwrap().send(());
        match reply {
            None => {
                let body = "{\"error\":{\"message\":\"mock: no reply left for this request\"}}";
                let head = format!("HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len());
                if writer.write_all(head.as_bytes()).is_err() {
                    return;
                }
            }
            Some(Reply::Hang) => {
                // Hold the connection until the mock is dropped.
                let _ = gone.lock().unwrap().recv();
                return;
            }
            Some(Reply::Stream { status, headers, steps }) => {
                let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
                for (name, value) in &headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("transfer-encoding: chunked\r\n\r\n");
                if writer.write_all(head.as_bytes()).and_then(|()| writer.flush()).is_err() {
                    return;
                }
                for step in steps {
                    let ok = match step {
                        Step::Send(bytes) if bytes.is_empty() => true,
                        Step::Send(bytes) => {
                            let mut chunk = format!("{:x}\r\n", bytes.len()).into_bytes();
                            chunk.extend_from_slice(&bytes);
                            chunk.extend_from_slice(b"\r\n");
                            writer.write_all(&chunk).and_then(|()| writer.flush()).is_ok()
                        }
                        Step::Wait(signal) => {
                            let _ = signal.recv_timeout(Duration::from_secs(30));
                            true
                        }
                        Step::Pause(d) => {
                            std::thread::sleep(d);
                            true
                        }
                        Step::Cut => {
                            let _ = writer.shutdown(std::net::Shutdown::Both);
                            return;
                        }
                    };
                    if !ok {
                        return;
                    }
                }
                if writer.write_all(b"0\r\n\r\n").and_then(|()| writer.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = BTreeMap::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':')?;
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
    }
    let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { method, path, headers, body })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// OpenAI chat-completion chunks.
pub mod openai {
    use serde_json::json;

    pub fn text(delta: &str) -> String {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": null}]})
        )
    }

    pub fn finish(reason: &str) -> String {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
        )
    }

    pub fn usage(prompt: u64, completion: u64) -> String {
        format!(
            "data: {}\n\n",
            json!({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}})
        )
    }

    pub fn done() -> String {
        "data: [DONE]\n\n".to_string()
    }

    /// Any chunk.
    pub fn chunk(value: serde_json::Value) -> String {
        format!("data: {value}\n\n")
    }

    /// The first fragment of a tool call (id and name).
    pub fn call_start(index: u64, id: &str, name: &str) -> String {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}, "finish_reason": null}]})
        )
    }

    pub fn call_args(index: u64, fragment: &str) -> String {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}, "finish_reason": null}]})
        )
    }

    /// A whole answer: text chunks, stop, usage, [DONE].
    pub fn answer(chunks: &[&str], prompt: u64, completion: u64) -> Vec<String> {
        let mut out: Vec<String> = chunks.iter().map(|c| text(c)).collect();
        out.push(finish("stop"));
        out.push(usage(prompt, completion));
        out.push(done());
        out
    }

    /// A turn that calls one tool with the given arguments (sent in a few fragments).
    pub fn tool_turn(id: &str, name: &str, args: &str) -> Vec<String> {
        let mut out = vec![call_start(0, id, name)];
        let bytes: Vec<char> = args.chars().collect();
        for piece in bytes.chunks(7) {
            out.push(call_args(0, &piece.iter().collect::<String>()));
        }
        out.push(finish("tool_calls"));
        out.push(usage(10, 5));
        out.push(done());
        out
    }
}

/// Anthropic Messages stream pieces.
pub mod anthropic {
    use serde_json::{json, Value};

    /// One SSE event, named by its `type`.
    pub fn event(data: Value) -> String {
        format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap())
    }

    /// A whole message: `message_start`, each block (text pieces or a tool call whose input
    /// arrives in 5-byte fragments), `message_delta` with the stop reason, `message_stop`.
    pub fn turn(
        blocks: &[Value],
        input_tokens: u64,
        output_tokens: u64,
        stop: &str,
    ) -> Vec<String> {
        let mut out = vec![event(
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}),
        )];
        for (index, block) in blocks.iter().enumerate() {
            match block["type"].as_str().unwrap() {
                "text" => {
                    out.push(event(json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
                    for piece in block["pieces"].as_array().unwrap() {
                        out.push(event(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})));
                    }
                }
                _ => {
                    out.push(event(json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})));
                    let input = block["input"].to_string();
                    for piece in input.as_bytes().chunks(5) {
                        out.push(event(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": String::from_utf8_lossy(piece)}})));
                    }
                }
            }
            out.push(event(json!({"type": "content_block_stop", "index": index})));
        }
        out.push(event(json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": output_tokens}})));
        out.push(event(json!({"type": "message_stop"})));
        out
    }
}

/// Gemini stream pieces.
pub mod gemini {
    use serde_json::Value;

    /// One chunk, framed with CRLF as Google sends it.
    pub fn chunk(value: Value) -> String {
        format!("data: {value}\r\n\r\n")
    }
}
