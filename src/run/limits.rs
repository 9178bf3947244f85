//! What a run may send and spend: before each model call the request is fitted to the model's
//! context window, and the run stops once its spending cap is reached.
//!
//! Fitting estimates the request's size (the last call's reported prompt tokens plus what was
//! added since, else bytes / 4). Above 75 % of the window, the bodies of the oldest tool
//! results (outside the two newest model calls and their results) are elided around a note,
//! then, if that is not enough, the oldest whole exchanges after the first user message are
//! left out (never the prompt being answered), down to 60 %. What was trimmed stays trimmed in
//! later calls, so their start, which the provider caches, stays the same. Only the request is
//! trimmed: the conversation and the session keep everything.

use crate::conversation::{Message, Role, ToolSpec};
use crate::error::Failure;
use crate::protocol::events::{Warning, WarningCode};

/// Trimming starts above this share of the window (in percent)...
const TRIM_AT_PERCENT: u64 = 75;
/// ...and goes down to this share, so that the next calls send the same trimmed start (which
/// the provider has cached) until the conversation has grown by another 15 %.
const TRIM_TO_PERCENT: u64 = 60;
/// An elided result keeps this much of its start and of its end.
const KEEP_EACH_END: usize = 1024;
/// The context window of a model nothing describes.
pub const DEFAULT_WINDOW: u64 = 128_000;

/// The run's spending so far.
#[derive(Debug, Default, Clone, Copy)]
struct Spent {
    usd: f64,
    calls: u32,
}

/// The limits of a run (of a live process: its turns share them).
#[derive(Debug)]
pub struct Limits {
    /// Messages at the front that are always sent as they are: the system prompt, and the
    /// project instructions when there are any.
    pub head: usize,
    /// The model's context window, in tokens.
    pub window: u64,
    /// `--max-budget-usd`.
    pub max_usd: Option<f64>,
    spent: Spent,
    /// The last call's reported prompt tokens, and the bytes of the request it measured.
    measured: Option<(u64, u64)>,
    /// The bytes of the request last sent (until its usage arrives).
    sent_bytes: u64,
    /// What earlier calls trimmed.
    trimmed: Trimmed,
}

/// A request fitted to the window: the messages to send, and the warning when any were
/// trimmed.
pub struct Fitted<'m> {
    pub messages: std::borrow::Cow<'m, [Message]>,
    pub warning: Option<Warning>,
}

impl Limits {
    pub fn new(head: usize, window: u64, max_usd: Option<f64>) -> Limits {
        Limits {
            head,
            window,
            max_usd,
            spent: Spent::default(),
            measured: None,
            sent_bytes: 0,
            trimmed: Trimmed::default(),
        }
    }

    /// Before a model call: the run stops once what it spent has reached the cap.
    pub fn check_budget(&self) -> Result<(), Failure> {
        let Some(max) = self.max_usd else { return Ok(()) };
        if self.spent.usd + 1e-12 < max {
            return Ok(());
        }
        Err(Failure::BudgetExceeded(format!(
            "Budget of ${} reached (${} spent over {} call{})",
            dollars(max),
            dollars(self.spent.usd),
            self.spent.calls,
            if self.spent.calls == 1 { "" } else { "s" }
        )))
    }

    /// A call's usage: its cost counts against the cap, its prompt tokens measure the request.
    pub fn record(&mut self, prompt_tokens: u64, cost: Option<f64>) {
        self.spent.usd += cost.unwrap_or(0.0);
        self.spent.calls += 1;
        if prompt_tokens > 0 {
            self.measured = Some((prompt_tokens, self.sent_bytes));
        }
    }

    /// The estimated tokens of a request of `bytes` bytes.
    fn estimate(&self, bytes: u64) -> u64 {
        match self.measured {
            Some((tokens, measured)) if bytes >= measured => tokens + (bytes - measured) / 4,
            Some((tokens, measured)) => tokens.saturating_sub((measured - bytes) / 4),
            None => bytes / 4,
        }
    }

    /// The request for `messages`, trimmed when it is above 75 % of the window. A request that
    /// cannot fit even trimmed is a provider error naming its largest part.
    pub fn fit<'m>(
        &mut self,
        messages: &'m [Message],
        tools: &[ToolSpec],
    ) -> Result<Fitted<'m>, Failure> {
        // The conversation was rebuilt (a live turn trims its history): earlier trimming
        // no longer applies to the same messages.
        if messages.len() < self.trimmed.seen {
            self.trimmed = Trimmed::default();
        }
        self.trimmed.seen = messages.len();
        let fixed = tools_bytes(tools);
        let total = |sizes: &[u64]| fixed + sizes.iter().sum::<u64>();
        let sizes: Vec<u64> = messages.iter().map(message_bytes).collect();
        let before = self.estimate(total(&sizes));
        let threshold = self.window * TRIM_AT_PERCENT / 100;
        if self.trimmed.is_empty() && before <= threshold {
            self.sent_bytes = total(&sizes);
            return Ok(Fitted { messages: messages.into(), warning: None });
        }
        let mut plan = Plan::new(messages, self.head, sizes);
        // What earlier calls trimmed stays trimmed, so the request's start, which the
        // provider caches, stays the same until the next trimming.
        plan.apply(&self.trimmed);
        let mut warning = None;
        if self.estimate(total(&plan.sizes)) > threshold {
            let target = self.window * TRIM_TO_PERCENT / 100;
            let fits = |plan: &Plan| self.estimate(total(&plan.sizes)) <= target;
            let mut trimmed = self.trimmed.clone();
            let mut changed = false;
            while !fits(&plan) && plan.elide_next(&mut trimmed) {
                changed = true;
            }
            while !fits(&plan) && plan.drop_next(&mut trimmed) {
                changed = true;
            }
            let after = self.estimate(total(&plan.sizes));
            if changed {
                let (elided, dropped) = plan.counts();
                warning = Some(Warning::new(
                    WarningCode::ContextTrimmed,
                    format!(
                        "Context trimmed: {elided} tool results elided, {dropped} exchanges dropped (estimate {before} -> {after} tokens of {})",
                        self.window
                    ),
                ));
            }
            self.trimmed = trimmed;
        }
        let after = self.estimate(total(&plan.sizes));
        if after > self.window {
            let (size, part) = messages
                .iter()
                .map(|m| (message_bytes(m), role_name(m.role)))
                .chain(std::iter::once((fixed, "the tool definitions")))
                .max_by_key(|(size, _)| *size)
                .unwrap_or((0, "a user message"));
            return Err(Failure::Provider(format!(
                "The request does not fit the model's context window of {} tokens even trimmed (estimate {after} tokens); its largest part, {part} of {size} bytes (about {} tokens), is too large. If the model's window is larger, set contextWindow in the config file (in its models entry for a model zero knows).",
                self.window,
                size / 4
            )));
        }
        self.sent_bytes = total(&plan.sizes);
        Ok(Fitted { messages: plan.messages().into(), warning })
    }
}

/// What earlier calls trimmed: tool results before `elided_below` have their bodies elided,
/// and the exchanges that start before `dropped_below` are left out (both past the head and
/// outside the two newest calls).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Trimmed {
    elided_below: usize,
    dropped_below: usize,
    /// How many messages the conversation had at the last call.
    seen: usize,
}

impl Trimmed {
    fn is_empty(&self) -> bool {
        self.elided_below == 0 && self.dropped_below == 0
    }
}

/// One request being trimmed.
struct Plan<'m> {
    messages: &'m [Message],
    /// Elided bodies, by index.
    elided: Vec<Option<String>>,
    dropped: Vec<bool>,
    sizes: Vec<u64>,
    /// Where trimming may start: after the head and the first user message.
    start: usize,
    /// Where it must stop: the two newest calls and what follows them.
    protected: usize,
    /// The newest user message before the protected part: the prompt being answered.
    current_prompt: Option<usize>,
}

impl<'m> Plan<'m> {
    fn new(messages: &'m [Message], head: usize, sizes: Vec<u64>) -> Plan<'m> {
        let first_user = (head..messages.len()).find(|&i| messages[i].role == Role::User);
        let start = first_user.map_or(head, |u| u + 1);
        let protected = protected_from(messages, head).max(start);
        // A reminder zero added (`--output-schema`) is not what the user asked.
        let current_prompt = (start..protected).rev().find(|&i| {
            messages[i].role == Role::User
                && messages[i].content != crate::run::structured::REMINDER
        });
        let n = messages.len();
        Plan {
            messages,
            elided: vec![None; n],
            dropped: vec![false; n],
            sizes,
            start,
            protected,
            current_prompt,
        }
    }

    fn elide(&mut self, i: usize) {
        let message = &self.messages[i];
        if message.role == Role::Tool
            && message.content.len() > 2 * KEEP_EACH_END + 200
            && self.elided[i].is_none()
        {
            let body = elide(&message.content);
            self.sizes[i] =
                message_bytes(message) - message.content.len() as u64 + body.len() as u64;
            self.elided[i] = Some(body);
        }
    }

    fn drop_unit(&mut self, i: usize) -> usize {
        let end = exchange_end(self.messages, i, self.protected);
        for slot in i..end {
            self.dropped[slot] = true;
            self.sizes[slot] = 0;
        }
        end
    }

    /// Trimming of earlier calls, on this call's messages.
    fn apply(&mut self, trimmed: &Trimmed) {
        for i in self.start..trimmed.elided_below.min(self.protected) {
            self.elide(i);
        }
        let mut i = self.start;
        while i < trimmed.dropped_below.min(self.protected) {
            i = if Some(i) == self.current_prompt { i + 1 } else { self.drop_unit(i) };
        }
    }

    /// Elides the next old tool result; false when none is left.
    fn elide_next(&mut self, trimmed: &mut Trimmed) -> bool {
        let mut i = trimmed.elided_below.max(self.start);
        while i < self.protected {
            let worth =
                self.messages[i].role == Role::Tool && self.elided[i].is_none() && !self.dropped[i];
            i += 1;
            if worth && self.messages[i - 1].content.len() > 2 * KEEP_EACH_END + 200 {
                self.elide(i - 1);
                trimmed.elided_below = i;
                return true;
            }
        }
        trimmed.elided_below = trimmed.elided_below.max(self.protected);
        false
    }

    /// Leaves out the next oldest exchange (never the prompt being answered); false when none
    /// is left.
    fn drop_next(&mut self, trimmed: &mut Trimmed) -> bool {
        let mut i = trimmed.dropped_below.max(self.start);
        while i < self.protected && (self.dropped[i] || Some(i) == self.current_prompt) {
            i += 1;
        }
        if i >= self.protected {
            return false;
        }
        trimmed.dropped_below = self.drop_unit(i);
        true
    }

    /// Elided results still sent, and exchanges left out.
    fn counts(&self) -> (usize, usize) {
        let elided = (0..self.messages.len())
            .filter(|&i| self.elided[i].is_some() && !self.dropped[i])
            .count();
        let mut dropped = 0;
        let mut i = 0;
        while i < self.messages.len() {
            if self.dropped[i] {
                dropped += 1;
                i = exchange_end(self.messages, i, self.messages.len());
            } else {
                i += 1;
            }
        }
        (elided, dropped)
    }

    fn messages(&self) -> Vec<Message> {
        (0..self.messages.len())
            .filter(|&i| !self.dropped[i])
            .map(|i| match &self.elided[i] {
                Some(body) => Message { content: body.clone(), ..self.messages[i].clone() },
                None => self.messages[i].clone(),
            })
            .collect()
    }
}

/// `2`, `0.50`, `1.25`, `0.0032`: dollars as a user writes them, to a hundredth of a cent.
fn dollars(value: f64) -> String {
    if value > 0.0 && value < 0.0001 {
        return format!("{value}");
    }
    let mut text = format!("{value:.4}");
    while text.ends_with('0') && text.len() - text.find('.').unwrap_or(0) > 3 {
        text.pop();
    }
    match text.strip_suffix(".00") {
        Some(whole) => whole.to_string(),
        None => text,
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "the system prompt",
        Role::User => "a user message",
        Role::Assistant => "an assistant message",
        Role::Tool => "a tool result",
    }
}

/// The first message of the two newest model calls (an assistant message and what follows):
/// from there on nothing is trimmed.
fn protected_from(messages: &[Message], head: usize) -> usize {
    let assistants: Vec<usize> =
        (head..messages.len()).filter(|&i| messages[i].role == Role::Assistant).collect();
    match assistants.len() {
        0 => messages.len(),
        1 => assistants[0],
        n => assistants[n - 2],
    }
    .max(head)
}

/// Where the exchange starting at `start` ends: a message and the tool results after it.
fn exchange_end(messages: &[Message], start: usize, limit: usize) -> usize {
    let mut end = start + 1;
    while end < limit && messages[end].role == Role::Tool {
        end += 1;
    }
    end
}

/// A tool result's first and last 1 KiB around a note of what was left out.
fn elide(content: &str) -> String {
    let (head, _) = crate::text::cap_utf8(content, KEEP_EACH_END);
    let mut tail_start = content.len() - KEEP_EACH_END;
    while !content.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let left_out = tail_start - head.len();
    format!(
        "{head}\n[... {left_out} bytes of this old tool result were left out to fit the context window ...]\n{}",
        &content[tail_start..]
    )
}

/// About what a message weighs in a request.
fn message_bytes(message: &Message) -> u64 {
    let calls: usize =
        message.tool_calls.iter().map(|c| c.name.len() + c.arguments.len() + 32).sum();
    let native: usize = message.native.iter().map(|v| v.to_string().len()).sum();
    // An image costs about 1,600 tokens whatever its bytes.
    let images = message.images.len() * 6400;
    (message.content.len() + calls + native + images + 16) as u64
}

fn tools_bytes(tools: &[ToolSpec]) -> u64 {
    tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
        .sum::<usize>() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "read_file".into(), arguments: "{}".into() }
    }

    /// system, user, then `n` model calls each with one result of `size` bytes.
    fn conversation(n: usize, size: usize) -> Vec<Message> {
        let mut messages = vec![Message::system("s"), Message::user("go")];
        for i in 0..n {
            let c = call(&format!("c{i}"));
            messages.push(Message::assistant("", vec![c.clone()]));
            messages.push(Message::tool_result(&c, format!("{i}").repeat(size)));
        }
        messages
    }

    #[test]
    fn below_three_quarters_nothing_is_trimmed() {
        let messages = conversation(3, 1000);
        let mut limits = Limits::new(1, 10_000, None);
        let fitted = limits.fit(&messages, &[]).unwrap();
        assert!(fitted.warning.is_none());
        assert_eq!(fitted.messages[..], messages[..]);
    }

    #[test]
    fn old_results_are_elided_first_and_the_newest_two_calls_are_kept() {
        let messages = conversation(6, 8000);
        // 48,485 bytes in all, 12,121 tokens; 75 % of 12,000 is 9,000. Each elision saves
        // about 1,465 tokens.
        let mut limits = Limits::new(1, 12_000, None);
        let fitted = limits.fit(&messages, &[]).unwrap();
        let warning = fitted.warning.unwrap();
        // Down to 60 % (7,200 tokens): all four results before the newest two calls go.
        assert_eq!(
            warning.message,
            "Context trimmed: 4 tool results elided, 0 exchanges dropped (estimate 12121 -> 6255 tokens of 12000)"
        );
        assert!(fitted.messages[9].content.contains("left out to fit"));
        assert_eq!(fitted.messages.len(), messages.len());
        assert!(fitted.messages[3].content.contains("bytes of this old tool result were left out"));
        assert!(fitted.messages[3].content.starts_with(&"0".repeat(1024)));
        assert!(fitted.messages[3].content.ends_with(&"0".repeat(1024)));
        assert_eq!(fitted.messages[13], messages[13], "the newest results are whole");
        assert_eq!(fitted.messages[11], messages[11]);
    }

    #[test]
    fn then_whole_exchanges_go_and_the_first_user_message_stays() {
        let messages = conversation(8, 2000);
        let mut limits = Limits::new(1, 2_000, None);
        let fitted = limits.fit(&messages, &[]).unwrap();
        let message = fitted.warning.unwrap().message;
        assert!(
            message.starts_with("Context trimmed: 0 tool results elided, 6 exchanges dropped"),
            "{message}"
        );
        let roles: Vec<Role> = fitted.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::System, Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::Tool]
        );
        assert_eq!(fitted.messages[2].tool_calls[0].id, "c6");
        assert_eq!(fitted.messages[1].content, "go");
    }

    #[test]
    fn trimming_sticks_so_the_next_calls_send_the_same_start() {
        let mut messages = conversation(6, 8000);
        let mut limits = Limits::new(1, 12_000, None);
        let first = limits.fit(&messages, &[]).unwrap();
        assert!(first.warning.is_some());
        let sent: Vec<Message> = first.messages.to_vec();
        // One more small call: the same four results stay elided, nothing new is trimmed.
        let c = call("c6");
        messages.push(Message::assistant("", vec![c.clone()]));
        messages.push(Message::tool_result(&c, "small"));
        let next = limits.fit(&messages, &[]).unwrap();
        assert!(next.warning.is_none());
        assert_eq!(next.messages[..sent.len()], sent[..], "the start of the request is unchanged");
        // A rebuilt (shorter) conversation starts afresh.
        let short = conversation(1, 10);
        assert_eq!(limits.fit(&short, &[]).unwrap().messages[..], short[..]);
    }

    #[test]
    fn the_prompt_being_answered_is_never_dropped() {
        // A resumed session: an old prompt and its calls, then today's prompt and its calls.
        let mut messages = conversation(2, 2000);
        messages.push(Message::user("today's task"));
        for i in 10..14 {
            let c = call(&format!("c{i}"));
            messages.push(Message::assistant("", vec![c.clone()]));
            messages.push(Message::tool_result(&c, "r".repeat(2000)));
        }
        let mut limits = Limits::new(1, 3_000, None);
        let fitted = limits.fit(&messages, &[]).unwrap();
        assert!(fitted.warning.is_some());
        let users: Vec<&str> = fitted
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.content.as_str())
            .collect();
        assert_eq!(users, ["go", "today's task"]);
        assert_eq!(fitted.messages.last(), messages.last());
        // A reminder zero added after today's prompt is not mistaken for it.
        messages.insert(12, Message::user(crate::run::structured::REMINDER));
        let mut limits = Limits::new(1, 3_000, None);
        let fitted = limits.fit(&messages, &[]).unwrap();
        assert!(fitted.messages.iter().any(|m| m.content == "today's task"));
    }

    #[test]
    fn a_message_too_large_for_the_window_is_a_provider_error() {
        let mut messages = conversation(1, 10);
        messages[1].content = "x".repeat(40_000);
        let mut limits = Limits::new(1, 5_000, None);
        let err = limits.fit(&messages, &[]).err().unwrap();
        assert!(matches!(err, Failure::Provider(_)));
        assert!(err.message().contains("a user message of 40016 bytes"), "{}", err.message());
    }

    #[test]
    fn the_reported_prompt_tokens_measure_the_next_request() {
        let messages = conversation(1, 100);
        let mut limits = Limits::new(1, 100_000, None);
        limits.fit(&messages, &[]).unwrap();
        let sent = limits.sent_bytes;
        limits.record(80_000, None);
        assert_eq!(limits.estimate(sent), 80_000);
        assert_eq!(limits.estimate(sent + 400), 80_100);
        // Above 75 % but with nothing older than the two newest calls: sent as it is.
        let mut more = messages.clone();
        more.push(Message::assistant("x".repeat(100), vec![]));
        let fitted = limits.fit(&more, &[]).unwrap();
        assert!(fitted.warning.is_none());
        assert_eq!(fitted.messages[..], more[..]);
        assert_eq!(limits.sent_bytes, sent + 116);
    }

    #[test]
    fn the_budget_stops_once_reached_and_says_how_much_was_spent() {
        let mut limits = Limits::new(1, 1000, Some(0.5));
        limits.record(10, Some(0.3));
        assert!(limits.check_budget().is_ok());
        limits.record(10, Some(0.25));
        let err = limits.check_budget().unwrap_err();
        assert_eq!(err.message(), "Budget of $0.50 reached ($0.55 spent over 2 calls)");
        assert_eq!(err.exit(), crate::error::Exit::Incomplete);
        let whole = Limits { spent: Spent { usd: 2.0, calls: 3 }, ..Limits::new(1, 1, Some(2.0)) };
        assert_eq!(
            whole.check_budget().unwrap_err().message(),
            "Budget of $2 reached ($2 spent over 3 calls)"
        );
        assert_eq!(dollars(0.0032), "0.0032");
    }
}
