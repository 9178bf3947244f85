//! Which provider, model, endpoint, key and reasoning effort a run uses: from the command
//! line, the provider command, the active config profile or the environment, in that order.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::Failure;
use crate::net::http::{ExtraRoots, NetSettings};
use crate::protocol::events::{Warning, WarningCode};
use crate::provider::models::{self, Effort, Family, Model, ModelSpec, Profile};

use super::command::provider_command;
use super::*;

/// The output-token limit when neither the user nor the registry gives one: small enough for
/// a local server's context, and `--max-output-tokens` raises it.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 4096;

/// Where the provider settings came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Command,
    Profile(String),
    Environment,
}

/// Where the provider settings would come from, without resolving a model: the provider
/// command (which is run), the active profile, or the environment.
pub fn provider_origin(env: &Env, config: Option<&UserConfig>) -> Result<Origin, Failure> {
    source(env, config, None).map(|s| s.origin)
}

impl Origin {
    /// Zero's name for the source: `provider-command`, `profile`, `environment`.
    pub fn name(&self) -> &'static str {
        match self {
            Origin::Command => "provider-command",
            Origin::Profile(_) => "profile",
            Origin::Environment => "environment",
        }
    }

    fn describe(&self) -> String {
        match self {
            Origin::Command => "provider-command".to_string(),
            Origin::Profile(name) => format!("profile \"{name}\""),
            Origin::Environment => "environment".to_string(),
        }
    }
}

/// Provider settings from one source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Source {
    pub(super) origin: Origin,
    pub(super) kind: Option<ProviderKind>,
    pub(super) base_url: Option<String>,
    pub(super) api_key: Option<String>,
    pub(super) model: Option<String>,
    pub(super) max_output_tokens: Option<u64>,
    pub(super) openai_api: Option<OpenAiApi>,
    /// Variables of the environment this source overrides.
    pub(super) warnings: Vec<Warning>,
}

/// What the command line chose.
#[derive(Debug, Clone, Default)]
pub struct Choice {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub profile: Option<String>,
    pub effort: Option<String>,
    pub script: Option<PathBuf>,
    /// `--max-output-tokens`.
    pub max_output_tokens: Option<u64>,
}

/// The provider runtime of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Runtime {
    pub kind: ProviderKind,
    pub model_id: String,
    pub model_label: String,
    pub api_model: String,
    pub model: Option<&'static Model>,
    pub profile: Option<Profile>,
    pub base_url: String,
    pub api_key: Option<String>,
    /// The effort the user asked for.
    pub effort: Option<Effort>,
    /// The effort sent to the provider (`None` when the model takes none).
    pub send_effort: Option<Effort>,
    /// Azure `api-version`: the deployments route with it, the v1 route without.
    pub api_version: Option<String>,
    /// Chat Completions or the Responses API (OpenAI-style kinds).
    pub openai_api: OpenAiApi,
    /// The output-token limit of every call (`max_completion_tokens`, `max_tokens`,
    /// `maxOutputTokens`): asked for, or the model's known limit, never above it.
    pub max_tokens: u64,
    pub script: Option<PathBuf>,
    pub net: NetSettings,
    /// Where the provider settings came from (`None` for the scripted provider).
    pub origin: Option<Origin>,
    /// CA certificates trusted besides the bundled ones (`SSL_CERT_FILE`, `SSL_CERT_DIR`).
    pub roots: ExtraRoots,
    /// Things to tell the user once the run has started.
    pub warnings: Vec<Warning>,
}

impl Runtime {
    /// The URL each call is sent to.
    pub fn request_url(&self) -> String {
        let base = &self.base_url;
        if self.openai_api == OpenAiApi::Responses {
            return match (self.kind, &self.api_version) {
                (ProviderKind::Azure, None) => format!("{base}/openai/v1/responses"),
                (ProviderKind::Azure, Some(version)) => {
                    format!("{base}/openai/responses?api-version={}", query_value(version))
                }
                _ => format!("{base}/responses"),
            };
        }
        match (self.kind, &self.api_version) {
            (ProviderKind::Anthropic, _) => format!("{base}/v1/messages"),
            (ProviderKind::Google, _) => {
                format!("{base}/v1beta/models/{}:streamGenerateContent?alt=sse", self.api_model)
            }
            (ProviderKind::Azure, None) => format!("{base}/openai/v1/chat/completions"),
            (ProviderKind::Azure, Some(version)) => format!(
                "{base}/openai/deployments/{}/chat/completions?api-version={}",
                self.api_model,
                query_value(version)
            ),
            _ => format!("{base}/chat/completions"),
        }
    }
}

/// A value for a URL query: everything but unreserved characters percent-encoded.
fn query_value(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Resolves the provider runtime, in this order: config, model or profile, runtime,
/// reasoning effort.
pub fn resolve(
    env: &Env,
    config: Option<&UserConfig>,
    choice: &Choice,
) -> Result<Runtime, Failure> {
    let flag_kind = match choice.provider.as_deref() {
        None => None,
        Some(v) => Some(ProviderKind::parse(v).ok_or_else(|| Failure::Usage(unknown_kind(v)))?),
    };
    let net = net_settings(env)?;
    let user_models = config.map_or(&[][..], |c| c.models.as_slice());
    let scripted = flag_kind == Some(ProviderKind::Scripted)
        || (flag_kind.is_none() && choice.script.is_some())
        || (flag_kind.is_none()
            && env.get("ZERO_PROVIDER").is_some_and(|v| v.eq_ignore_ascii_case("scripted")));
    if scripted {
        return scripted_runtime(choice, net, user_models);
    }
    if choice.script.is_some() {
        return Err(Failure::Usage("--script needs --provider scripted".to_string()));
    }
    let source = source(env, config, flag_kind)?;
    let explicit = flag_kind.or(source.kind).or_else(|| azure_only(env, &source));
    let mut warnings = Vec::new();
    let (profile, requested) = requested_model(env, choice, &source, explicit, &mut warnings)?;
    let mut runtime = runtime(env, &source, explicit, &requested, net, user_models)?;
    runtime.roots = extra_roots(env)?;
    runtime.profile = profile;
    runtime.warnings = source.warnings.iter().cloned().chain(warnings).collect();
    let wanted = match choice.max_output_tokens {
        Some(n) => Some((n, "--max-output-tokens")),
        None => source
            .max_output_tokens
            .map(|n| (n, "the profile's maxOutputTokens"))
            .or_else(|| config.and_then(|c| c.max_output_tokens).map(|n| (n, "maxOutputTokens"))),
    };
    apply_output_limit(&mut runtime, wanted);
    choose_openai_api(&mut runtime, env, source.openai_api.or(config.and_then(|c| c.openai_api)))?;
    apply_effort(&mut runtime, choice.effort.as_deref())?;
    let min_thinking = models::MIN_THINKING_BUDGET;
    if runtime.kind == ProviderKind::Anthropic
        && runtime.send_effort.is_some_and(|e| e != Effort::None)
        && runtime.max_tokens <= min_thinking
    {
        runtime.warnings.push(Warning::new(WarningCode::IgnoredOption, format!(
            "--reasoning-effort is ignored: Anthropic thinking needs an output limit above {min_thinking} tokens (it is {}).",
            runtime.max_tokens
        )));
        runtime.send_effort = None;
    }
    Ok(runtime)
}

/// The model asked for, and the profile it came from: `--model` (which may name a profile),
/// else `--profile` (picked among the families the user has keys for), else the source's
/// model, else the provider's default. A `--profile` beside `--model` is ignored, and says so.
fn requested_model(
    env: &Env,
    choice: &Choice,
    source: &Source,
    explicit: Option<ProviderKind>,
    warnings: &mut Vec<Warning>,
) -> Result<(Option<Profile>, String), Failure> {
    let configured = configured_families(env, source);
    let profile_flag = match choice.profile.as_deref() {
        Some(p) => Some(
            Profile::parse(p)
                .ok_or_else(|| Failure::Usage(format!("Unknown model profile: {}", p.trim())))?,
        ),
        None => None,
    };
    let profile = match (profile_flag, choice.model.as_deref()) {
        (Some(ignored), Some(model)) => {
            warnings.push(Warning::new(
                WarningCode::IgnoredOption,
                format!(
                    "--profile {} is ignored: --model {} names the model.",
                    ignored.name(),
                    model.trim()
                ),
            ));
            Profile::parse(model)
        }
        (Some(profile), None) => Some(profile),
        (None, model) => model.and_then(Profile::parse),
    };
    let requested = match (profile, choice.model.as_deref()) {
        (Some(profile), _) => profile.pick(&configured).id.to_string(),
        (None, Some(model)) => model.trim().to_string(),
        (None, None) => match &source.model {
            Some(model) => model.trim().to_string(),
            None if explicit == Some(ProviderKind::Azure) => {
                env.get("AZURE_OPENAI_DEPLOYMENT").map(str::to_string).ok_or_else(|| {
                    Failure::Provider(
                        "Zero azure provider needs a deployment name: -m <deployment> (or AZURE_OPENAI_DEPLOYMENT)".to_string(),
                    )
                })?
            }
            None => default_model(explicit, &configured).to_string(),
        },
    };
    if requested.is_empty() {
        return Err(Failure::Provider("Missing Zero provider model".to_string()));
    }
    Ok((profile, requested))
}

/// The scripted provider's runtime: the script to play; no key, no endpoint.
fn scripted_runtime(
    choice: &Choice,
    net: NetSettings,
    user_models: &[ModelSpec],
) -> Result<Runtime, Failure> {
    let script = choice
        .script
        .clone()
        .ok_or_else(|| Failure::Usage("--provider scripted needs --script FILE".to_string()))?;
    let requested = choice.model.as_deref().map(str::trim).filter(|m| !m.is_empty());
    let model = requested.and_then(|r| find_model(r, user_models));
    let mut runtime = Runtime {
        kind: ProviderKind::Scripted,
        model_id: model.map_or(requested.unwrap_or("scripted"), |m| m.id).to_string(),
        model_label: model.map_or(requested.unwrap_or("Scripted"), |m| m.label).to_string(),
        api_model: model.map_or(requested.unwrap_or("scripted"), |m| m.api_model).to_string(),
        api_version: None,
        openai_api: OpenAiApi::Chat,
        model,
        profile: None,
        base_url: String::new(),
        api_key: None,
        effort: None,
        send_effort: None,
        max_tokens: 0,
        script: Some(script),
        net,
        origin: None,
        roots: ExtraRoots::default(),
        warnings: Vec::new(),
    };
    if let Some(profile) = &choice.profile {
        runtime.warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            format!(
                "--profile {} is ignored: the scripted provider plays its script.",
                profile.trim()
            ),
        ));
    }
    if let Some(n) = choice.max_output_tokens {
        runtime.warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            format!("--max-output-tokens {n} is ignored: the scripted provider plays its script."),
        ));
    }
    apply_effort(&mut runtime, choice.effort.as_deref())?;
    Ok(runtime)
}

/// The provider source, the first that is set: provider command, active profile,
/// environment.
fn source(
    env: &Env,
    config: Option<&UserConfig>,
    flag_kind: Option<ProviderKind>,
) -> Result<Source, Failure> {
    if let Some(command) = env.get("ZERO_PROVIDER_COMMAND") {
        return provider_command(command);
    }
    if let Some(profile) = config.map(active_profile).transpose()?.flatten() {
        // A wrong value is an error even where the profile decides.
        if let Some(v) = env.get("ZERO_PROVIDER") {
            ProviderKind::parse(v).ok_or_else(|| Failure::Provider(unknown_kind(v)))?;
        }
        let warnings = overridden_by(env, profile)
            .into_iter()
            .map(|name| Warning::new(WarningCode::IgnoredOption, overridden(name, &profile.name)))
            .collect();
        return Ok(Source {
            origin: Origin::Profile(profile.name.clone()),
            kind: profile.provider,
            base_url: profile.base_url.clone(),
            api_key: profile.api_key.clone().filter(|k| !k.trim().is_empty()),
            model: profile.model.clone(),
            max_output_tokens: profile.max_output_tokens,
            openai_api: profile.openai_api,
            warnings,
        });
    }
    if flag_kind.is_some() || PROVIDER_VARS.iter().any(|v| env.get(v).is_some()) {
        let kind = match env.get("ZERO_PROVIDER") {
            None => None,
            Some(v) => {
                Some(ProviderKind::parse(v).ok_or_else(|| Failure::Provider(unknown_kind(v)))?)
            }
        };
        return Ok(Source {
            origin: Origin::Environment,
            kind,
            base_url: None,
            api_key: None,
            model: env.get("OPENAI_MODEL").map(str::to_string),
            max_output_tokens: None,
            openai_api: None,
            warnings: Vec::new(),
        });
    }
    Err(Failure::Provider(
        "No LLM provider configured. Set OPENAI_API_KEY (or ANTHROPIC_API_KEY, GEMINI_API_KEY), \
         add a profile to the config file, or use --provider scripted --script FILE."
            .to_string(),
    ))
}

/// The profile the config file makes active: the one `activeProvider` names, else its only
/// profile; several without `activeProvider` is an error naming them.
fn active_profile(config: &UserConfig) -> Result<Option<&ConfigProfile>, Failure> {
    if let Some(active) = &config.active_provider {
        return Ok(config.providers.iter().find(|p| &p.name == active));
    }
    match config.providers.as_slice() {
        [] => Ok(None),
        [only] => Ok(Some(only)),
        several => {
            let names: Vec<&str> = several.iter().map(|p| p.name.as_str()).collect();
            Err(Failure::Config(format!(
                "The config file has {} provider profiles ({}) and no activeProvider: set \"activeProvider\" to the one to use.",
                names.len(),
                names.join(", ")
            )))
        }
    }
}

/// The variables an active profile overrides that are set: `ZERO_PROVIDER`, `OPENAI_MODEL`
/// and the base URL variable of the profile's provider.
fn overridden_by(env: &Env, profile: &ConfigProfile) -> Vec<&'static str> {
    let base = match profile.provider.unwrap_or(ProviderKind::OpenAi) {
        ProviderKind::OpenAiCompatible => "OPENAI_BASE_URL",
        other => other.env_names().1,
    };
    ["ZERO_PROVIDER", "OPENAI_MODEL", base].into_iter().filter(|n| env.get(n).is_some()).collect()
}

/// For `zero config`: each variable the active profile overrides, and that profile's name
/// (nothing when a provider command decides, or no profile is active).
pub fn overridden_vars(env: &Env, config: Option<&UserConfig>) -> Vec<(&'static str, String)> {
    if env.get("ZERO_PROVIDER_COMMAND").is_some() {
        return Vec::new();
    }
    match config.map(active_profile) {
        Some(Ok(Some(profile))) => {
            overridden_by(env, profile).into_iter().map(|n| (n, profile.name.clone())).collect()
        }
        _ => Vec::new(),
    }
}

/// The warning for a variable an active config profile overrides (`zero config` shows it
/// too).
pub fn overridden(name: &str, profile: &str) -> String {
    format!("{name} is ignored: the config profile \"{profile}\" is in use and sets the provider, model and base URL.")
}

/// The one message for a provider kind that does not exist, from `--provider`,
/// `ZERO_PROVIDER`, a config profile or the provider command.
pub fn unknown_kind(value: &str) -> String {
    format!(
        "Unknown provider \"{}\". Expected openai, anthropic, google, openai-compatible, azure or scripted.",
        value.trim()
    )
}

/// A model by id or alias: the config's models first (they may replace a built-in one), then
/// the registry.
fn find_model(name: &str, user_models: &[ModelSpec]) -> Option<&'static Model> {
    match user_models.iter().find(|m| m.answers_to(name)) {
        Some(spec) => Some(spec.to_static()),
        None => models::find(name),
    }
}

/// ` (closest known models: a, b, c)` for an unknown model name, among the models of the
/// families the user has configured (all of them when none is).
fn closest_models(requested: &str, user_models: &[ModelSpec], families: &[Family]) -> String {
    let wanted = |family: Family| families.is_empty() || families.contains(&family);
    let mut ids: Vec<&str> =
        user_models.iter().filter(|m| wanted(m.family)).map(|m| m.id.as_str()).collect();
    ids.extend(models::MODELS.iter().filter(|m| !m.deprecated && wanted(m.family)).map(|m| m.id));
    format!(
        " (closest known models: {})",
        crate::text::closest(requested, &ids, 3, false).join(", ")
    )
}

/// How to use a model the registry does not know.
const OTHER_MODELS: &str = "To use another model name, point the provider's base URL at a gateway or local server that serves it (any name is taken there), or add it to the config file's \"models\"";

/// An environment that configures Azure OpenAI and no other provider means Azure.
fn azure_only(env: &Env, source: &Source) -> Option<ProviderKind> {
    let others = [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ];
    (source.origin == Origin::Environment
        && env.get("AZURE_OPENAI_ENDPOINT").is_some()
        && others.iter().all(|v| env.get(v).is_none()))
    .then_some(ProviderKind::Azure)
}

/// Families the user has keys or endpoints for, first the source's own.
fn configured_families(env: &Env, source: &Source) -> Vec<Family> {
    let mut out = Vec::new();
    if source.origin != Origin::Environment {
        out.push(source.kind.and_then(ProviderKind::family).unwrap_or(Family::OpenAi));
    }
    if let Some(family) = source.kind.and_then(ProviderKind::family) {
        out.push(family);
    }
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic, ProviderKind::Google] {
        let (keys, base) = kind.env_names();
        let has_key = keys.iter().any(|k| env.get(k).is_some());
        if has_key || (kind == ProviderKind::OpenAi && env.get(base).is_some()) {
            out.extend(kind.family());
        }
    }
    out.dedup();
    out
}

fn default_model(explicit: Option<ProviderKind>, configured: &[Family]) -> &'static str {
    let family = explicit.and_then(ProviderKind::family).or_else(|| configured.first().copied());
    models::default_for(family.unwrap_or(Family::OpenAi))
}

/// The runtime of the chosen provider: its base URL, key and API, each provider on its own
/// host and key.
fn runtime(
    env: &Env,
    source: &Source,
    explicit: Option<ProviderKind>,
    requested: &str,
    net: NetSettings,
    user_models: &[ModelSpec],
) -> Result<Runtime, Failure> {
    let openai_base = endpoint(env, source, ProviderKind::OpenAi).0.map(checked_url).transpose()?;
    let known = find_model(requested, user_models);
    let official_openai = openai_base.as_deref().is_none_or(is_official_openai);
    let kind = match known {
        Some(model) => kind_of_model(model, explicit, official_openai)?,
        None => kind_of_unknown(env, source, explicit, requested, user_models, official_openai)?,
    };
    let (base, key) = endpoint(env, source, kind);
    let base_url = base_url_of(env, kind, base.map(checked_url).transpose()?)?;
    if kind == ProviderKind::Azure && !valid_deployment(requested) {
        return Err(Failure::Provider(format!(
            "Invalid Azure deployment name \"{requested}\": letters, digits, '.', '-' and '_' only"
        )));
    }
    // A gateway or local server may take no key; the vendors' own hosts always do.
    let keyless = kind == ProviderKind::OpenAiCompatible
        || (matches!(kind, ProviderKind::Anthropic | ProviderKind::Google)
            && custom_host(env, source, kind));
    if key.is_none() && !keyless {
        let var = kind.env_names().0[0];
        return Err(Failure::Provider(format!(
            "Zero {} provider requires an API key (set {var})",
            kind.name()
        )));
    }
    let max_tokens = known.map_or(DEFAULT_MAX_OUTPUT_TOKENS, |m| m.max_output);
    // An Azure deployment is called by the name it was given, whatever model it serves.
    let api_model = if kind == ProviderKind::Azure {
        requested
    } else {
        known.map_or(requested, |m| m.api_model)
    };
    Ok(Runtime {
        kind,
        model_id: known.map_or(requested, |m| m.id).to_string(),
        model_label: known.map_or(requested, |m| m.label).to_string(),
        api_model: api_model.to_string(),
        api_version: (kind == ProviderKind::Azure)
            .then(|| env.get("AZURE_OPENAI_API_VERSION").map(str::to_string))
            .flatten(),
        openai_api: OpenAiApi::Chat,
        model: known,
        profile: None,
        base_url,
        api_key: key,
        effort: None,
        send_effort: None,
        max_tokens,
        script: None,
        net,
        origin: Some(source.origin.clone()),
        roots: ExtraRoots::default(),
        warnings: Vec::new(),
    })
}

/// A base URL as zero sends to it, or the error naming it.
fn checked_url(url: String) -> Result<String, Failure> {
    normalize_url(&url)
        .ok_or_else(|| Failure::Provider(format!("Invalid Zero provider baseURL: {url}")))
}

/// Where a registry model runs: the provider its family names, unless the user chose Azure or
/// an OpenAI-style server (or pointed OpenAI at another host).
fn kind_of_model(
    model: &Model,
    explicit: Option<ProviderKind>,
    official_openai: bool,
) -> Result<ProviderKind, Failure> {
    if let Some(e) = explicit.filter(|e| *e != ProviderKind::OpenAiCompatible) {
        if e.family() != Some(model.family) {
            return Err(Failure::Provider(format!(
                "Zero model {} belongs to {}, not {}",
                model.id,
                model.family.name(),
                e.name()
            )));
        }
    }
    Ok(if explicit == Some(ProviderKind::Azure) {
        ProviderKind::Azure
    } else if explicit == Some(ProviderKind::OpenAiCompatible)
        || (model.family == Family::OpenAi && !official_openai)
    {
        ProviderKind::OpenAiCompatible
    } else {
        family_kind(model.family)
    })
}

/// Where a model the registry does not know runs: only where models are named by their
/// owners (an OpenAI-style server, Azure, a gateway); an official provider refuses it.
fn kind_of_unknown(
    env: &Env,
    source: &Source,
    explicit: Option<ProviderKind>,
    requested: &str,
    user_models: &[ModelSpec],
    official_openai: bool,
) -> Result<ProviderKind, Failure> {
    let closest = || closest_models(requested, user_models, &configured_families(env, source));
    match explicit {
        Some(ProviderKind::OpenAiCompatible) => Ok(ProviderKind::OpenAiCompatible),
        // Azure deployments have names their owners chose.
        Some(ProviderKind::Azure) => Ok(ProviderKind::Azure),
        // A gateway or local server speaking the Anthropic or Gemini format serves models
        // of its own naming, as openai-compatible servers do.
        Some(kind @ (ProviderKind::Anthropic | ProviderKind::Google))
            if custom_host(env, source, kind) =>
        {
            Ok(kind)
        }
        Some(kind) => Err(Failure::Provider(format!(
            "Unknown Zero model \"{requested}\" for official {} provider runtime. Official providers require a model from the Zero model registry{}. {OTHER_MODELS}.",
            kind.name(),
            closest()
        ))),
        None if !official_openai => Ok(ProviderKind::OpenAiCompatible),
        None => Err(Failure::Provider(format!(
            "Unknown Zero model \"{requested}\" for {} provider runtime{}. {OTHER_MODELS} (for OpenAI-style servers, provider: \"openai-compatible\").",
            source.origin.describe(),
            closest()
        ))),
    }
}

/// The base URL requests go to: the one configured, else the vendor's own.
fn base_url_of(env: &Env, kind: ProviderKind, base: Option<String>) -> Result<String, Failure> {
    Ok(match kind {
        ProviderKind::OpenAiCompatible => match base {
            Some(url) if !is_official_openai(&url) => url,
            _ => {
                return Err(Failure::Provider(
                    "Zero openai-compatible provider requires an explicit non-official baseURL (set OPENAI_BASE_URL). Use provider: \"openai\" for the official OpenAI API.".to_string(),
                ))
            }
        },
        ProviderKind::OpenAi => official_openai_url(env),
        ProviderKind::Anthropic => base.unwrap_or_else(|| ANTHROPIC_URL.to_string()),
        ProviderKind::Google => base.unwrap_or_else(|| GEMINI_URL.to_string()),
        ProviderKind::Azure => azure_endpoint(base)?,
        ProviderKind::Scripted => String::new(),
    })
}

/// Base URL and key for a provider kind: the source's own when it is for that kind (or for
/// OpenAI-style endpoints when it names no kind), else that kind's environment variables.
fn endpoint(env: &Env, source: &Source, kind: ProviderKind) -> (Option<String>, Option<String>) {
    let openai_style = |k: Option<ProviderKind>| {
        matches!(k, None | Some(ProviderKind::OpenAi | ProviderKind::OpenAiCompatible))
    };
    let source_fits = source.origin != Origin::Environment
        && (source.kind == Some(kind) || (openai_style(source.kind) && openai_style(Some(kind))));
    if source_fits {
        return (source.base_url.clone(), source.api_key.clone());
    }
    let (keys, base) = kind.env_names();
    let key = keys.iter().find_map(|k| env.get(k)).map(str::to_string);
    (env.get(base).map(str::to_string), key)
}

/// Trims, removes trailing slashes, and checks for `http(s)://host`.
pub(super) fn normalize_url(url: &str) -> Option<String> {
    let url = url.trim().trim_end_matches('/');
    let valid = crate::net::url::Url::parse(url).is_ok() && !url.contains(char::is_whitespace);
    valid.then(|| url.to_string())
}

/// The official OpenAI endpoint. Debug builds (the test suite's) may point it at a loopback
/// mock with `ZERO_DEBUG_OPENAI_URL`, so the official path is tested end to end; release
/// builds always use OpenAI's.
fn official_openai_url(env: &Env) -> String {
    match env.get("ZERO_DEBUG_OPENAI_URL").filter(|_| cfg!(debug_assertions)) {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => OPENAI_URL.to_string(),
    }
}

/// Whether `kind`'s base URL is set and is not the vendor's own host.
fn custom_host(env: &Env, source: &Source, kind: ProviderKind) -> bool {
    let official = match kind {
        ProviderKind::Anthropic => ANTHROPIC_URL,
        ProviderKind::Google => GEMINI_URL,
        _ => OPENAI_URL,
    };
    let base = endpoint(env, source, kind).0.and_then(|url| normalize_url(&url));
    base.is_some_and(|url| !is_vendor_url(&url, official))
}

/// Whether `url` is the vendor endpoint `official` (`https://<host>`, maybe with a path):
/// the same host by a real parse, on https and the default port, with no userinfo, and the
/// official path or none.
fn is_vendor_url(url: &str, official: &str) -> bool {
    let (Ok(url), Ok(vendor)) =
        (crate::net::url::Url::parse(url), crate::net::url::Url::parse(official))
    else {
        return false;
    };
    let path = url.path.trim_end_matches('/');
    url.is_https_host(&vendor.host)
        && !url.userinfo
        && (path.is_empty() || path == vendor.path.trim_end_matches('/'))
}

/// `AZURE_OPENAI_ENDPOINT` (or a profile's baseURL) as the resource's root: the
/// `https://<resource>.openai.azure.com` users copy, with any `/openai` or `/openai/v1` path
/// they copied with it removed.
fn azure_endpoint(base: Option<String>) -> Result<String, Failure> {
    let base = base.ok_or_else(|| {
        Failure::Provider(
            "Zero azure provider requires AZURE_OPENAI_ENDPOINT (https://<resource>.openai.azure.com)".to_string(),
        )
    })?;
    let root = base.strip_suffix("/openai/v1").or_else(|| base.strip_suffix("/openai"));
    Ok(root.unwrap_or(&base).to_string())
}

/// Azure deployment names go into a URL path: a conservative alphabet.
fn valid_deployment(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

fn is_official_openai(url: &str) -> bool {
    is_vendor_url(url, OPENAI_URL)
}

/// The OpenAI API: `ZERO_OPENAI_API`, else the config, else Responses for OpenAI's own
/// reasoning models (which work best through it) and Chat Completions for the rest.
fn choose_openai_api(
    runtime: &mut Runtime,
    env: &Env,
    configured: Option<OpenAiApi>,
) -> Result<(), Failure> {
    let from_env = match env.get("ZERO_OPENAI_API") {
        None => None,
        Some(v) => Some(OpenAiApi::parse(v).ok_or_else(|| {
            Failure::Provider(format!(
                "Invalid ZERO_OPENAI_API \"{v}\": expected \"chat\" or \"responses\""
            ))
        })?),
    };
    let openai_style = matches!(
        runtime.kind,
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible | ProviderKind::Azure
    );
    if !openai_style {
        if from_env.is_some() {
            runtime.warnings.push(Warning::new(
                WarningCode::IgnoredOption,
                format!(
                    "ZERO_OPENAI_API is ignored: the {} provider has its own API.",
                    runtime.kind.name()
                ),
            ));
        }
        return Ok(());
    }
    let reasoning_model = runtime.kind == ProviderKind::OpenAi
        && runtime.model.is_some_and(|m| !m.efforts.is_empty());
    runtime.openai_api = from_env.or(configured).unwrap_or(if reasoning_model {
        OpenAiApi::Responses
    } else {
        OpenAiApi::Chat
    });
    Ok(())
}

/// The output limit asked for (and by what), capped at the model's known limit with a warning.
fn apply_output_limit(runtime: &mut Runtime, wanted: Option<(u64, &str)>) {
    let Some((wanted, by)) = wanted else { return };
    match runtime.model {
        Some(model) if wanted > model.max_output => runtime.warnings.push(Warning::new(
            WarningCode::OutputLimit,
            format!(
                "{by} {wanted} is above the {} limit of {} output tokens; {} is sent.",
                model.label, model.max_output, model.max_output
            ),
        )),
        _ => runtime.max_tokens = wanted,
    }
}

/// Validates `--reasoning-effort` for the model and decides what is sent.
fn apply_effort(runtime: &mut Runtime, value: Option<&str>) -> Result<(), Failure> {
    let Some(value) = value else { return Ok(()) };
    let effort = Effort::parse(value).ok_or_else(|| {
        Failure::Usage(format!(
            "Invalid reasoning effort \"{}\". Expected none, minimal, low, medium, high, xhigh.",
            value.trim()
        ))
    })?;
    runtime.effort = Some(effort);
    if runtime.kind == ProviderKind::Scripted {
        runtime.warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            format!(
            "The scripted provider takes no reasoning effort; --reasoning-effort {} is ignored.",
            effort.name()
        ),
        ));
        return Ok(());
    }
    match runtime.model {
        Some(model) if !model.efforts.is_empty() => {
            if !model.efforts.contains(&effort) {
                let list: Vec<&str> = model.efforts.iter().map(|e| e.name()).collect();
                return Err(Failure::Usage(format!(
                    "Reasoning effort \"{}\" is not supported by {}. Supported efforts: {}.",
                    effort.name(),
                    model.label,
                    list.join(", ")
                )));
            }
            runtime.send_effort = Some(effort);
        }
        Some(model) => runtime.warnings.push(Warning::new(
            WarningCode::IgnoredOption,
            format!(
                "{} does not take a reasoning effort; --reasoning-effort {} is ignored.",
                model.label,
                effort.name()
            ),
        )),
        // Unknown models behind compatible servers get what the user asked for.
        None => runtime.send_effort = Some(effort),
    }
    Ok(())
}

/// `SSL_CERT_FILE` and `SSL_CERT_DIR`: extra trusted CAs (a path that does not exist is
/// reported before anything is sent).
pub fn extra_roots(env: &Env) -> Result<ExtraRoots, Failure> {
    let file = env.get("SSL_CERT_FILE").map(Path::new);
    let dir = env.get("SSL_CERT_DIR").map(Path::new);
    ExtraRoots::at(file, dir).map_err(|err| Failure::Provider(err.to_string()))
}

/// Timeouts and retries from the environment.
pub fn net_settings(env: &Env) -> Result<NetSettings, Failure> {
    let mut net = NetSettings::default();
    let millis = |name: &str, slot: &mut Duration| -> Result<(), Failure> {
        if let Some(v) = env.get(name) {
            let ms = v.parse::<u64>().ok().filter(|ms| *ms > 0).ok_or_else(|| {
                Failure::Provider(format!(
                    "Invalid {name} \"{v}\": expected milliseconds (a positive integer)"
                ))
            })?;
            *slot = Duration::from_millis(ms);
        }
        Ok(())
    };
    millis("ZERO_CONNECT_TIMEOUT_MS", &mut net.connect)?;
    millis("ZERO_HEADERS_TIMEOUT_MS", &mut net.headers)?;
    millis("ZERO_IDLE_TIMEOUT_MS", &mut net.idle)?;
    millis("ZERO_TOTAL_TIMEOUT_MS", &mut net.total)?;
    let either = |name: &str| env.get(name).or_else(|| env.get(&name.to_ascii_lowercase()));
    debug_assert!(["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"]
        .iter()
        .all(|v| SETTING_VARS.contains(v)));
    net.proxies = crate::net::url::Proxies {
        https: either("HTTPS_PROXY").map(str::to_string),
        http: either("HTTP_PROXY").map(str::to_string),
        all: either("ALL_PROXY").map(str::to_string),
        no_proxy: either("NO_PROXY")
            .map(|list| list.split(',').map(|e| e.trim().to_ascii_lowercase()).collect())
            .unwrap_or_default(),
    };
    if let Some(v) = env.get("ZERO_MAX_RETRIES") {
        net.max_retries = v.parse::<u32>().ok().filter(|n| *n <= 10).ok_or_else(|| {
            Failure::Provider(format!(
                "Invalid ZERO_MAX_RETRIES \"{v}\": expected an integer from 0 to 10"
            ))
        })?;
    }
    Ok(net)
}

/// Max turns: `--max-turns` > `ZERO_MAX_TURNS` > config `maxTurns` > 12. The flag was
/// validated by the caller.
pub fn max_turns(
    flag: Option<u32>,
    env: &Env,
    config: Option<&UserConfig>,
) -> Result<u32, Failure> {
    if let Some(n) = flag {
        return Ok(n);
    }
    if let Some(v) = env.get("ZERO_MAX_TURNS") {
        return v.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
            Failure::Usage(format!("Invalid ZERO_MAX_TURNS \"{v}\": expected a positive integer"))
        });
    }
    Ok(config.and_then(|c| c.max_turns).unwrap_or(12))
}
