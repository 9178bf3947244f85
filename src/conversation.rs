//! A conversation as zero holds it, whatever the provider: who said what, the tool calls an
//! assistant turn made, and the tools offered. Providers translate it to their wire format,
//! sessions store it, the agent loop grows it.

use std::borrow::Cow;

use serde_json::Value;

use crate::protocol::images::Image;

/// Who said something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A complete tool call from the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them: JSON text, `{}` when it sent none.
    pub arguments: String,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// Calls the assistant made in this message.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers, and that call's tool.
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    /// Provider-native content of an assistant turn that must be sent back verbatim
    /// (Anthropic thinking blocks with their signatures, Gemini parts with thought signatures).
    pub native: Vec<Value>,
    /// Images attached to a user message, sent in each provider's format.
    pub images: Vec<Image>,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message::plain(Role::System, content.into())
    }

    pub fn user(content: impl Into<String>) -> Message {
        Message::plain(Role::User, content.into())
    }

    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Message {
        Message { tool_calls, ..Message::plain(Role::Assistant, content.into()) }
    }

    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Message {
        Message {
            tool_call_id: Some(call.id.clone()),
            tool_name: Some(call.name.clone()),
            ..Message::plain(Role::Tool, content.into())
        }
    }

    fn plain(role: Role, content: String) -> Message {
        Message {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            native: Vec::new(),
            images: Vec::new(),
        }
    }
}

/// A tool as advertised to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Built-in tools' names and descriptions are static; tools from outside (an MCP
    /// server's) are owned.
    pub name: Cow<'static, str>,
    pub description: Cow<'static, str>,
    pub parameters: Value,
    /// The parameters are any JSON Schema (an output schema), not a built-in tool's plain
    /// one: Gemini gets them whole, as `parametersJsonSchema`.
    pub full_schema: bool,
}

/// What a run (or a live turn) answers: its text, and with `--output-schema` the value the
/// text is the compact JSON of.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub structured: Option<Value>,
}

impl Answer {
    pub fn text(text: impl Into<String>) -> Answer {
        Answer { text: text.into(), structured: None }
    }

    pub fn structured(value: Value) -> Answer {
        Answer { text: value.to_string(), structured: Some(value) }
    }
}
