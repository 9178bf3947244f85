//! The user config file: `$XDG_CONFIG_HOME/zero/config.json`, else
//! `~/.config/zero/config.json`, read as a small regular file and checked key by key.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::Failure;
use crate::provider::models::{Effort, ModelSpec, Prices, Rates};

use super::schema;
use super::*;

/// One entry of the config file's `providers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProfile {
    pub name: String,
    pub provider: Option<ProviderKind>,
    /// Optional for the official providers, whose endpoints are known.
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    /// `None`: the provider's default model.
    pub model: Option<String>,
    /// `maxOutputTokens` of this profile.
    pub max_output_tokens: Option<u64>,
    /// `openaiApi` of this profile.
    pub openai_api: Option<OpenAiApi>,
}

/// Which OpenAI API the OpenAI-style kinds speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenAiApi {
    Chat,
    Responses,
}

impl OpenAiApi {
    pub fn parse(value: &str) -> Option<OpenAiApi> {
        match value.trim().to_ascii_lowercase().as_str() {
            "chat" | "chat-completions" => Some(OpenAiApi::Chat),
            "responses" => Some(OpenAiApi::Responses),
            _ => None,
        }
    }
}

/// The user config file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UserConfig {
    pub active_provider: Option<String>,
    pub providers: Vec<ConfigProfile>,
    pub max_turns: Option<u32>,
    /// `maxOutputTokens` for every profile that sets none.
    pub max_output_tokens: Option<u64>,
    /// `openaiApi` for every profile that sets none.
    pub openai_api: Option<OpenAiApi>,
    /// `models`: models added to the registry or replacing a built-in one of the same id.
    pub models: Vec<ModelSpec>,
    /// `projectInstructions`: read `AGENTS.md` files (default true).
    pub project_instructions: Option<bool>,
    /// `promptCache`: mark cache breakpoints and send cache keys (default true).
    pub prompt_cache: Option<bool>,
    /// `maxBudgetUsd`: the most a run may spend, in dollars.
    pub max_budget_usd: Option<f64>,
    /// `addDirs`: extra roots for the file tools (absolute, or under `~/`).
    pub add_dirs: Vec<PathBuf>,
    /// `contextWindow`: the window of a model the registry does not know.
    pub context_window: Option<u64>,
    /// `mcpServers`, as written (checked when a run resolves its servers, with the
    /// environment its `${VAR}`s expand from).
    pub mcp_servers: Option<Value>,
    /// `sandbox`: `off`, `read-only` or `workspace-write`.
    pub sandbox: Option<crate::tools::sandbox::Mode>,
    /// `sandboxNetwork`: `on` (true) or `off`.
    pub sandbox_network: Option<bool>,
    /// Keys this zero does not know (the file may be shared with other Zero versions): one
    /// line each, naming the closest known key.
    pub warnings: Vec<String>,
}

/// The user config file is read up to this size.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A file a flag names (`--mcp-config`, `--hooks`): at most this many bytes.
const MAX_FLAG_FILE_BYTES: u64 = 1024 * 1024;

/// Why a file a flag names cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlagFileError {
    Missing,
    NotRegular,
    /// Its size, when it was known.
    TooLarge(Option<u64>),
    NotUtf8,
    Io(String),
}

impl std::fmt::Display for FlagFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FlagFileError::Missing => write!(f, "no such file"),
            FlagFileError::NotRegular => write!(f, "not a regular file"),
            FlagFileError::TooLarge(Some(size)) => {
                write!(f, "{size} bytes, over the limit of 1 MiB")
            }
            FlagFileError::TooLarge(None) => write!(f, "over the limit of 1 MiB"),
            FlagFileError::NotUtf8 => write!(f, "not UTF-8"),
            FlagFileError::Io(why) => write!(f, "{why}"),
        }
    }
}

/// Reads a file a flag names: regular, at most 1 MiB, UTF-8.
pub fn read_flag_file(path: &Path) -> Result<String, FlagFileError> {
    use std::io::Read;
    // Looked at before it is opened: opening a FIFO would wait for a writer.
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Err(FlagFileError::NotRegular),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(FlagFileError::Missing)
        }
        _ => {}
    }
    let file = std::fs::File::open(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => FlagFileError::Missing,
        _ => FlagFileError::Io(crate::net::http::io_text(&err)),
    })?;
    let meta = file.metadata().map_err(|e| FlagFileError::Io(e.to_string()))?;
    if !meta.is_file() {
        return Err(FlagFileError::NotRegular);
    }
    if meta.len() > MAX_FLAG_FILE_BYTES {
        return Err(FlagFileError::TooLarge(Some(meta.len())));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FLAG_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FlagFileError::Io(e.to_string()))?;
    if bytes.len() as u64 > MAX_FLAG_FILE_BYTES {
        return Err(FlagFileError::TooLarge(None));
    }
    String::from_utf8(bytes).map_err(|_| FlagFileError::NotUtf8)
}

/// `$XDG_CONFIG_HOME/zero/config.json`, else `~/.config/zero/config.json`.
pub fn config_path(env: &Env) -> Option<PathBuf> {
    if let Some(dir) = env.get("XDG_CONFIG_HOME") {
        return Some(Path::new(dir).join("zero").join("config.json"));
    }
    env.get("HOME").map(|home| Path::new(home).join(".config").join("zero").join("config.json"))
}

/// Reads the user config; a missing file is no config, an invalid one an error naming the
/// file and the place.
pub fn load_user_config(env: &Env) -> Result<Option<UserConfig>, Failure> {
    let Some(path) = config_path(env) else { return Ok(None) };
    let cannot = |detail: String| {
        Failure::Config(format!("Cannot read config {}: {detail}", path.display()))
    };
    // Only a regular file, and only so much of it: a config linked to /dev/zero or a FIFO is
    // an error at once, not a hang or an endless read.
    let text = match crate::sys::dirfd::read_small_file(&path, MAX_CONFIG_BYTES) {
        Ok(text) => text,
        Err(crate::sys::dirfd::SmallFileError::NotFound) => return Ok(None),
        Err(err) => return Err(cannot(err.to_string())),
    };
    let mut config = parse_config_bytes(&text).map_err(|detail| {
        Failure::Config(format!("Invalid config {}: {detail}", path.display()))
    })?;
    for warning in &mut config.warnings {
        *warning = format!("Config {}: {warning}", path.display());
    }
    Ok(Some(config))
}

/// `unknown key "x" is ignored (did you mean "y"?)`, or `None` for a known key.
/// Keys starting with `$` (`"$schema"`, for editors) are accepted and ignored.
fn unknown_key(key: &str, known: &[schema::Key], at: &str) -> Option<String> {
    let known = schema::names(known);
    if known.contains(&key) || key.starts_with('$') {
        return None;
    }
    Some(format!("unknown key {at}\"{key}\" is ignored{}", crate::text::did_you_mean(key, &known)))
}

/// What is wrong with the config file, by kind; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// It is not JSON (or not UTF-8): where the reading stopped.
    NotJson(String),
    /// A field's value is not what it may be.
    Invalid(String),
}

crate::error::message_error!(FileError: NotJson, Invalid);

/// Every check of a field says what is wrong with it in words: those are `Invalid`.
impl From<String> for FileError {
    fn from(message: String) -> FileError {
        FileError::Invalid(message)
    }
}

impl From<&str> for FileError {
    fn from(message: &str) -> FileError {
        FileError::Invalid(message.to_string())
    }
}

/// The config file's bytes to a config, or what is wrong and where, in one line.
pub(crate) fn parse_config_bytes(bytes: &[u8]) -> Result<UserConfig, FileError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| FileError::NotJson("not valid UTF-8".to_string()))?;
    let value: Value = serde_json::from_str(text).map_err(|err| {
        FileError::NotJson(format!("line {}, column {}: {err}", err.line(), err.column()))
    })?;
    parse_user_config(&value)
}

pub(super) fn parse_user_config(value: &Value) -> Result<UserConfig, FileError> {
    let map = value.as_object().ok_or("expected a JSON object")?;
    let mut config = UserConfig::default();
    config.warnings.extend(map.keys().filter_map(|k| unknown_key(k, schema::TOP_LEVEL, "")));
    if let Some(active) = map.get("activeProvider") {
        config.active_provider =
            Some(active.as_str().ok_or("activeProvider must be a string")?.to_string());
    }
    if let Some(turns) = map.get("maxTurns") {
        let n = turns.as_u64().filter(|n| (1..=100).contains(n));
        config.max_turns = Some(n.ok_or("maxTurns must be an integer from 1 to 100")? as u32);
    }
    config.max_output_tokens = output_limit(map.get("maxOutputTokens"), "maxOutputTokens")?;
    config.openai_api = openai_api(map.get("openaiApi"), "openaiApi")?;
    if let Some(list) = map.get("models") {
        let list = list.as_array().ok_or("models must be an array")?;
        for (i, entry) in list.iter().enumerate() {
            let spec = model_spec(entry, i, &mut config.warnings)?;
            if config.models.iter().any(|m| m.id == spec.id) {
                return Err(FileError::Invalid(format!(
                    "models[{i}].id \"{}\" is defined twice",
                    spec.id
                )));
            }
            config.models.push(spec);
        }
    }
    config.project_instructions = switch(map.get("projectInstructions"), "projectInstructions")?;
    config.prompt_cache = switch(map.get("promptCache"), "promptCache")?;
    if let Some(budget) = map.get("maxBudgetUsd") {
        config.max_budget_usd = Some(budget.as_f64().filter(|f| budget_in_range(*f)).ok_or(
            "maxBudgetUsd must be a number of dollars greater than 0 and at most 1000000",
        )?);
    }
    if let Some(dirs) = map.get("addDirs") {
        config.add_dirs = add_dirs(dirs)?;
    }
    config.mcp_servers = map.get("mcpServers").cloned();
    sandbox_settings(map, &mut config)?;
    if let Some(window) = map.get("contextWindow") {
        let n = window.as_u64().filter(|n| (1_000..=100_000_000).contains(n));
        config.context_window =
            Some(n.ok_or("contextWindow must be an integer from 1000 to 100000000")?);
    }
    for key in ["planMode", "debug"] {
        if map.get(key).is_some_and(|v| !v.is_boolean()) {
            return Err(FileError::Invalid(format!("{key} must be true or false")));
        }
    }
    providers(map, &mut config)?;
    Ok(config)
}

/// `sandbox` and `sandboxNetwork`.
fn sandbox_settings(map: &Map<String, Value>, config: &mut UserConfig) -> Result<(), FileError> {
    if let Some(mode) = map.get("sandbox") {
        let mode = mode.as_str().and_then(crate::tools::sandbox::Mode::parse);
        config.sandbox =
            Some(mode.ok_or("sandbox must be \"off\", \"read-only\" or \"workspace-write\"")?);
    }
    if let Some(network) = map.get("sandboxNetwork") {
        config.sandbox_network = Some(match network.as_str() {
            Some("on") => true,
            Some("off") => false,
            _ => {
                return Err(FileError::Invalid(
                    "sandboxNetwork must be \"on\" or \"off\"".to_string(),
                ))
            }
        });
    }
    Ok(())
}

/// `providers`, and the `activeProvider` that must name one of them.
fn providers(map: &Map<String, Value>, config: &mut UserConfig) -> Result<(), FileError> {
    if let Some(list) = map.get("providers") {
        let list = list.as_array().ok_or("providers must be an array")?;
        for (i, entry) in list.iter().enumerate() {
            let profile = config_profile(entry, i, &mut config.warnings)?;
            config.providers.push(profile);
        }
    }
    if let Some(active) = &config.active_provider {
        if !config.providers.iter().any(|p| &p.name == active) {
            let names: Vec<&str> = config.providers.iter().map(|p| p.name.as_str()).collect();
            let known = if names.is_empty() {
                "there are none".to_string()
            } else {
                format!("known: {}", names.join(", "))
            };
            return Err(FileError::Invalid(format!(
                "activeProvider \"{active}\" names no entry of providers ({known})"
            )));
        }
    }
    Ok(())
}

/// One entry of `providers`: a `name`, and what the official providers can do without (a
/// base URL, a model) where an OpenAI-style server or Azure needs it.
fn config_profile(
    entry: &Value,
    i: usize,
    warnings: &mut Vec<String>,
) -> Result<ConfigProfile, FileError> {
    let at = |field: &str, what: &str| format!("providers[{i}].{field} must be {what}");
    let entry = entry.as_object().ok_or(format!("providers[{i}] must be an object"))?;
    let place = format!("providers[{i}].");
    warnings.extend(entry.keys().filter_map(|k| unknown_key(k, schema::PROVIDER, &place)));
    let text = |field: &str, required: bool| -> Result<Option<String>, FileError> {
        match entry.get(field) {
            None if required => Err(FileError::Invalid(at(field, "a non-empty string"))),
            None => Ok(None),
            Some(Value::String(s)) if !required || !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(FileError::Invalid(at(
                field,
                if required { "a non-empty string" } else { "a string" },
            ))),
        }
    };
    let name = text("name", true)?.unwrap_or_default();
    let provider = match text("provider", false)? {
        None => None,
        Some(kind) => {
            Some(ProviderKind::parse(&kind).filter(|k| *k != ProviderKind::Scripted).ok_or_else(
                || at("provider", "openai, anthropic, google, openai-compatible or azure"),
            )?)
        }
    };
    let base_url = text("baseURL", false)?;
    if let Some(url) = &base_url {
        normalize_url(url).ok_or_else(|| at("baseURL", "an http(s) URL"))?;
    } else if provider == Some(ProviderKind::OpenAiCompatible) {
        return Err(FileError::Invalid(at("baseURL", "set for an openai-compatible provider")));
    } else if provider == Some(ProviderKind::Azure) {
        return Err(FileError::Invalid(at(
            "baseURL",
            "set for an azure provider (https://<resource>.openai.azure.com)",
        )));
    }
    let api_key = text("apiKey", false)?;
    let model = text("model", false)?.filter(|m| !m.trim().is_empty());
    if model.is_none() && provider == Some(ProviderKind::OpenAiCompatible) {
        return Err(FileError::Invalid(at(
            "model",
            "set for an openai-compatible provider (its server names its models)",
        )));
    }
    text("description", false)?;
    let max_output_tokens =
        output_limit(entry.get("maxOutputTokens"), &format!("providers[{i}].maxOutputTokens"))?;
    let openai_api = openai_api(entry.get("openaiApi"), &format!("providers[{i}].openaiApi"))?;
    Ok(ConfigProfile { name, provider, base_url, api_key, model, max_output_tokens, openai_api })
}

/// One entry of `models`: `id` and `provider` (the vendor family) required; the API name
/// defaults to the id, the limits to 128,000 and 4,096 tokens; without `prices` no cost is
/// reported.
fn model_spec(entry: &Value, i: usize, warnings: &mut Vec<String>) -> Result<ModelSpec, FileError> {
    let at = |field: &str, what: &str| format!("models[{i}].{field} must be {what}");
    let entry = entry.as_object().ok_or(format!("models[{i}] must be an object"))?;
    let place = format!("models[{i}].");
    warnings.extend(entry.keys().filter_map(|k| unknown_key(k, schema::MODEL, &place)));
    let text = |field: &str| -> Result<Option<String>, FileError> {
        match entry.get(field) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
            Some(_) => Err(FileError::Invalid(at(field, "a non-empty string"))),
        }
    };
    let count = |field: &str, default: u64| -> Result<u64, FileError> {
        match entry.get(field) {
            None => Ok(default),
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=100_000_000).contains(n))
                .ok_or_else(|| FileError::Invalid(at(field, "an integer from 1 to 100000000"))),
        }
    };
    let id = text("id")?.ok_or_else(|| at("id", "a non-empty string"))?.to_ascii_lowercase();
    let family = match text("provider")?.as_deref().map(ProviderKind::parse) {
        Some(Some(kind)) => {
            kind.family().ok_or_else(|| at("provider", "openai, anthropic or google"))?
        }
        _ => return Err(FileError::Invalid(at("provider", "openai, anthropic or google"))),
    };
    let aliases =
        aliases(entry.get("aliases")).ok_or_else(|| at("aliases", "an array of strings"))?;
    let efforts = match entry.get("reasoningEfforts") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|e| e.as_str().and_then(Effort::parse))
            .collect::<Option<Vec<Effort>>>()
            .ok_or_else(|| {
                at("reasoningEfforts", "an array of none, minimal, low, medium, high, xhigh")
            })?,
        Some(_) => return Err(FileError::Invalid(at("reasoningEfforts", "an array of efforts"))),
    };
    let prices = prices(entry.get("prices")).map_err(|(field, what)| at(&field, what))?;
    Ok(ModelSpec {
        api_model: text("apiModel")?.unwrap_or_else(|| id.clone()),
        id,
        family,
        aliases,
        context_window: count("contextWindow", 128_000)?,
        max_output: count("maxOutputTokens", DEFAULT_MAX_OUTPUT_TOKENS)?,
        efforts,
        prices,
    })
}

/// A model's `aliases`: non-empty strings, in lower case; `None` when they are not that.
fn aliases(value: Option<&Value>) -> Option<Vec<String>> {
    match value {
        None => Some(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| {
                a.as_str().filter(|a| !a.trim().is_empty()).map(|a| a.trim().to_ascii_lowercase())
            })
            .collect(),
        Some(_) => None,
    }
}

/// A model's `prices`, in dollars per million tokens: input and output required, cached
/// input optional; none at all is no cost reported. An error names the field and what it
/// must be.
fn prices(value: Option<&Value>) -> Result<Prices, (String, &'static str)> {
    let per_million = "a number of dollars per million tokens";
    let p = match value {
        None => return Ok(Prices::Unknown),
        Some(Value::Object(p)) => p,
        Some(_) => return Err(("prices".into(), "an object with input, output and cachedInput")),
    };
    let rate = |k: &str, required: bool| -> Result<Option<f64>, (String, &'static str)> {
        match p.get(k) {
            None if !required => Ok(None),
            None => Err((format!("prices.{k}"), per_million)),
            Some(v) => match v.as_f64().filter(|f| f.is_finite() && *f >= 0.0 && *f <= 1_000_000.0)
            {
                Some(f) => Ok(Some(f)),
                None => Err((format!("prices.{k}"), per_million)),
            },
        }
    };
    Ok(Prices::Flat(Rates {
        input: rate("input", true)?.unwrap_or(0.0),
        cached_input: rate("cachedInput", false)?,
        output: rate("output", true)?.unwrap_or(0.0),
    }))
}

/// An `openaiApi` value: `chat` or `responses`.
fn openai_api(value: Option<&Value>, place: &str) -> Result<Option<OpenAiApi>, FileError> {
    match value {
        None => Ok(None),
        Some(v) => match v.as_str().and_then(OpenAiApi::parse) {
            Some(api) => Ok(Some(api)),
            None => Err(FileError::Invalid(format!("{place} must be \"chat\" or \"responses\""))),
        },
    }
}

/// A `maxOutputTokens` value: a positive integer.
fn output_limit(value: Option<&Value>, place: &str) -> Result<Option<u64>, FileError> {
    match value {
        None => Ok(None),
        Some(v) => match v.as_u64().filter(|n| (1..=10_000_000).contains(n)) {
            Some(n) => Ok(Some(n)),
            None => {
                Err(FileError::Invalid(format!("{place} must be an integer from 1 to 10000000")))
            }
        },
    }
}

/// A spending cap zero accepts: more than nothing, less than absurd.
pub fn budget_in_range(dollars: f64) -> bool {
    dollars.is_finite() && dollars > 0.0 && dollars <= 1_000_000.0
}

/// A `true`/`false` setting.
fn switch(value: Option<&Value>, key: &str) -> Result<Option<bool>, FileError> {
    match value {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(FileError::Invalid(format!("{key} must be true or false"))),
    }
}

/// `addDirs`: absolute paths, or `~/...` (expanded when the run starts). A relative path would
/// mean something different in every directory zero starts in, so it is refused.
fn add_dirs(value: &Value) -> Result<Vec<PathBuf>, FileError> {
    let list = value.as_array().ok_or("addDirs must be an array of absolute paths")?;
    list.iter()
        .enumerate()
        .map(|(i, dir)| match dir.as_str() {
            Some(d) if d.starts_with('/') || d.starts_with("~/") => Ok(PathBuf::from(d)),
            _ => Err(FileError::Invalid(format!(
                "addDirs[{i}] must be an absolute path (or start with ~/)"
            ))),
        })
        .collect()
}
