//! Configuration: the environment (`env`), the user config file (`file`),
//! `ZERO_PROVIDER_COMMAND` (`command`), and the resolution of provider, model, endpoint, key
//! and reasoning effort from them (`resolve`).
//!
//! This is the only module that reads the process environment, once, into [`Env`]. Nothing is
//! written at start-up and no project-level file is read: a cloned repository must not be able
//! to send your keys to another host.

mod command;
mod env;
mod file;
mod resolve;
pub mod schema;
mod settings;

pub use env::*;
pub use file::*;
pub use resolve::*;
pub use settings::*;

use crate::provider::models::Family;

/// Where providers run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
    Google,
    OpenAiCompatible,
    /// Azure OpenAI: its own key header and URL shape, deployments named by the user.
    Azure,
    Scripted,
}

impl ProviderKind {
    pub fn parse(value: &str) -> Option<ProviderKind> {
        match value.trim().to_ascii_lowercase().as_str() {
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            "google" | "gemini" => Some(ProviderKind::Google),
            "openai-compatible" => Some(ProviderKind::OpenAiCompatible),
            "azure" | "azure-openai" => Some(ProviderKind::Azure),
            "scripted" => Some(ProviderKind::Scripted),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Google => "google",
            ProviderKind::OpenAiCompatible => "openai-compatible",
            ProviderKind::Azure => "azure",
            ProviderKind::Scripted => "scripted",
        }
    }

    pub fn family(self) -> Option<Family> {
        match self {
            ProviderKind::OpenAi | ProviderKind::OpenAiCompatible | ProviderKind::Azure => {
                Some(Family::OpenAi)
            }
            ProviderKind::Anthropic => Some(Family::Anthropic),
            ProviderKind::Google => Some(Family::Google),
            ProviderKind::Scripted => None,
        }
    }

    /// The environment variables holding this kind's key and base URL.
    pub fn env_names(self) -> (&'static [&'static str], &'static str) {
        match self {
            ProviderKind::Anthropic => (&["ANTHROPIC_API_KEY"], "ANTHROPIC_BASE_URL"),
            ProviderKind::Google => (&["GEMINI_API_KEY", "GOOGLE_API_KEY"], "GEMINI_BASE_URL"),
            ProviderKind::Azure => (&["AZURE_OPENAI_API_KEY"], "AZURE_OPENAI_ENDPOINT"),
            _ => (&["OPENAI_API_KEY"], "OPENAI_BASE_URL"),
        }
    }
}

fn family_kind(family: Family) -> ProviderKind {
    match family {
        Family::OpenAi => ProviderKind::OpenAi,
        Family::Anthropic => ProviderKind::Anthropic,
        Family::Google => ProviderKind::Google,
    }
}

const OPENAI_URL: &str = "https://api.openai.com/v1";
const ANTHROPIC_URL: &str = "https://api.anthropic.com";
const GEMINI_URL: &str = "https://generativelanguage.googleapis.com";

#[cfg(test)]
mod tests;
