//! The process environment, read once into a snapshot, and the list of the variables zero
//! reads.

use std::collections::BTreeMap;

/// A snapshot of the environment. Empty values count as unset.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, String>,
    /// Names of variables whose name or value is not UTF-8 (not in `vars`), which child
    /// processes would still inherit.
    other_names: Vec<std::ffi::OsString>,
}

impl Env {
    /// The process environment, read once (variables that are not UTF-8 are kept by name
    /// only).
    pub fn from_process() -> Env {
        let mut vars = BTreeMap::new();
        let mut other_names = Vec::new();
        for (k, v) in std::env::vars_os() {
            match (k.into_string(), v.into_string()) {
                (Ok(k), Ok(v)) => {
                    vars.insert(k, v);
                }
                (Ok(k), Err(_)) => other_names.push(k.into()),
                (Err(k), _) => other_names.push(k),
            }
        }
        Env { vars, other_names }
    }

    #[cfg(test)]
    pub fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Env {
        Env { vars: pairs.into_iter().collect(), other_names: Vec::new() }
    }

    /// A set, non-blank variable, trimmed.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    /// Every variable, for secret registration.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The values of variables whose names say they hold secrets: exact secrets from the
    /// start.
    pub fn secret_values(&self) -> impl Iterator<Item = String> + '_ {
        self.iter()
            .filter(|(name, _)| crate::redact::is_secret_env_name(name))
            .map(|(_, v)| v.to_string())
    }

    /// The variables child processes (`bash`, MCP servers) do not get: those whose names say
    /// they hold secrets, and those the user declared secret (`--redact-env`), unless
    /// `inherit`, or named in `keep`.
    pub fn hidden_from_shell(
        &self,
        inherit: bool,
        keep: &[String],
        declared: &[String],
    ) -> Vec<std::ffi::OsString> {
        if inherit {
            return Vec::new();
        }
        let kept = |name: &str| keep.iter().any(|k| k == name);
        let utf8 = self.vars.keys().filter(|name| {
            (crate::redact::is_secret_env_name(name) || declared.contains(name)) && !kept(name)
        });
        let other = self.other_names.iter().filter(|name| {
            let text = name.to_string_lossy();
            crate::redact::is_secret_env_name(&text) && !kept(&text)
        });
        utf8.map(std::ffi::OsString::from).chain(other.cloned()).collect()
    }
}

/// The variables that configure a provider from the environment.
pub const PROVIDER_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_VERSION",
    "AZURE_OPENAI_DEPLOYMENT",
    "ZERO_PROVIDER",
];

/// The other variables zero reads: the provider command, limits, timeouts, certificates and
/// proxies (each proxy variable is also read in lower case).
pub const SETTING_VARS: &[&str] = &[
    "ZERO_PROVIDER_COMMAND",
    "ZERO_OPENAI_API",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "ZERO_MAX_TURNS",
    "ZERO_MAX_RETRIES",
    "ZERO_PROMPT_CACHE",
    "ZERO_CONNECT_TIMEOUT_MS",
    "ZERO_HEADERS_TIMEOUT_MS",
    "ZERO_IDLE_TIMEOUT_MS",
    "ZERO_TOTAL_TIMEOUT_MS",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
];

/// Where zero keeps its files: the config file and the sessions.
pub const PLACE_VARS: &[&str] = &["XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"];

/// Every variable zero reads (besides the values of those whose names say they hold secrets,
/// which are redacted), in the order `zero exec --help` lists them.
pub fn read_vars() -> impl Iterator<Item = &'static str> {
    PROVIDER_VARS.iter().chain(SETTING_VARS).chain(PLACE_VARS).copied()
}
