//! Which names are sensitive: keys of JSON objects, `key=value` assignments, headers, query
//! parameters and environment variables.
//!
//! A name is normalised first (`apiKey`, `API-KEY` and `api.key` all become `api_key`), then it
//! is sensitive when it is one of a fixed list, or when its last component says so
//! (`DB_PASSWORD`, `GITLAB_CI_TOKEN`, `stripe_secret`), as the README's Security section says
//! of environment variable names (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`). Plurals and
//! compounds that merely mention tokens (`input_tokens`, `tokenBudget`) are not.

/// Names that are sensitive whatever their last component says, already normalised.
const EXACT: &[&str] = &[
    "access_token",
    "anthropic_api_key",
    "api_key",
    "apikey",
    "auth_token",
    "authorization",
    "aws_secret_access_key",
    "aws_session_token",
    "bearer",
    "bearer_token",
    "client_secret",
    "cookie",
    "credential",
    "credentials",
    "environment_secret",
    "gemini_api_key",
    "github_token",
    "gitlab_token",
    "google_api_key",
    "id_token",
    "jwt",
    "npm_token",
    "oauth_token",
    "openai_api_key",
    "passphrase",
    "password",
    "private_key",
    "proxy_authorization",
    "refresh_token",
    "secret",
    "session_ingress_token",
    "session_token",
    "set_cookie",
    "token",
    "x_api_key",
    "zero_api_key",
];

/// Last components (or last two) that make any longer name sensitive: `CI_JOB_TOKEN`,
/// `stripe_secret_key`, `db_passphrase`.
const SUFFIXES: &[&str] = &[
    "_token",
    "_secret",
    "_password",
    "_passwd",
    "_passphrase",
    "_api_key",
    "_apikey",
    "_secret_key",
    "_private_key",
    "_access_key",
    "_signing_key",
    "_credentials",
    "_credential",
];

/// Normalises a name: `_` between a lower-case letter or digit and a
/// following upper-case letter, lower case, every run of other characters to one `_`, no `_` at
/// either end.
pub(crate) fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower_or_digit = false;
    let mut pending_sep = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            let boundary = c.is_ascii_uppercase() && prev_lower_or_digit;
            if (pending_sep || boundary) && !out.is_empty() {
                out.push('_');
            }
            pending_sep = false;
            out.push(c.to_ascii_lowercase());
            prev_lower_or_digit = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            pending_sep = true;
            prev_lower_or_digit = false;
        }
    }
    out
}

/// Last components that make a name hold a place, not a secret: `PASSWD_FILE`,
/// `POSTGRES_PASSWORD_FILE` (Docker's secrets convention), `SSH_KEY_PATH`, `TOKEN_DIR`. The
/// file may hold a secret; its path is not one, and hiding it would hide where to look.
const PLACE_SUFFIXES: &[&str] = &["_file", "_path", "_dir", "_filename", "_pathname"];

fn names_a_place(key: &str) -> bool {
    PLACE_SUFFIXES.iter().any(|s| key.ends_with(s))
}

/// Whether an already normalised name is sensitive.
pub(crate) fn is_sensitive_normalized(key: &str) -> bool {
    if key.is_empty() || names_a_place(key) {
        return false;
    }
    EXACT.binary_search(&key).is_ok()
        || SUFFIXES.iter().any(|s| key.ends_with(s))
        || key.contains("password")
        || key.contains("passwd")
}

/// Last components that make an environment variable's name secret, beyond the key rules:
/// the spellings real deployments use (`RAILS_MASTER_KEY`, `DB_PASS`, `MYSQL_PWD`,
/// `SENTRY_DSN`, `AZURE_STORAGE_CONNECTION_STRING`, `WP_AUTH_SALT`).
const ENV_SUFFIXES: &[&str] = &[
    "_key",
    "_pass",
    "_pwd",
    "_passwd",
    "_dsn",
    "_cookie",
    "_salt",
    "_jwt",
    "_connection_string",
    "_credentials",
    "_credential",
];

/// Whether an environment variable's value is a secret, by its name: what [`is_sensitive_key`]
/// says, and more, since a variable is named for what it holds (`*_KEY`, `*_PASS`, `*_PWD`,
/// `*_DSN`, `*WEBHOOK*`, `SECRET_*`, `*_CREDENTIALS`, ...). `PWD` and `OLDPWD` are the shell's
/// directories, and a name of a place (`PASSWD_FILE`, `DB_PASSWORD_FILE`, `SSH_KEY_PATH`) is
/// not one: it holds a path.
pub fn is_secret_env_name(name: &str) -> bool {
    let key = normalize(name);
    if key.is_empty() || key == "pwd" || key == "oldpwd" || names_a_place(&key) {
        return false;
    }
    let sensitive = EXACT.binary_search(&key.as_str()).is_ok()
        || SUFFIXES.iter().any(|s| key.ends_with(s))
        || key.contains("password");
    sensitive
        || ENV_SUFFIXES.iter().any(|s| key.ends_with(s))
        || key.contains("webhook")
        || matches!(key.split('_').next(), Some("secret" | "secrets"))
}

/// Whether a name is written as environment variables are (`DB_PASS`, `SECRET_KEY_BASE`):
/// upper case, digits and `_`, starting with a letter.
pub(crate) fn is_env_shaped(name: &[u8]) -> bool {
    name.first().is_some_and(u8::is_ascii_uppercase)
        && name.iter().all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Whether raw name bytes are sensitive, with a quick check first: a sensitive name always
/// contains one of a few fragments, and most names met in text contain none.
pub(crate) fn is_sensitive_bytes(name: &[u8]) -> bool {
    let at = |k: usize, fragment: &[u8]| {
        name.len() - k >= fragment.len()
            && name[k..k + fragment.len()].eq_ignore_ascii_case(fragment)
    };
    // Each position is compared only with the fragments that start with its letter.
    let candidate = (0..name.len()).any(|k| match name[k] | 0x20 {
        b't' => at(k, b"token"),
        b's' => at(k, b"secret"),
        b'p' => at(k, b"pass"),
        b'k' => at(k, b"key"),
        b'a' => at(k, b"auth"),
        b'c' => at(k, b"cookie") || at(k, b"credential"),
        b'b' => at(k, b"bearer"),
        b'j' => at(k, b"jwt"),
        _ => false,
    });
    candidate && is_sensitive_key(&String::from_utf8_lossy(name))
}

/// Whether a raw name (object key, header, variable) is sensitive.
pub fn is_sensitive_key(name: &str) -> bool {
    is_sensitive_normalized(&normalize(name))
}

/// Header names whose value is `<scheme> <credential>` (compared as written, any case: a
/// header is spelled with hyphens, and `api_key:` in code is not one).
pub(crate) fn is_auth_header(name: &str) -> bool {
    ["authorization", "proxy-authorization"].iter().any(|h| name.eq_ignore_ascii_case(h))
}

/// Header names whose whole value, to the end of the line, is secret.
pub(crate) fn is_secret_header(name: &str) -> bool {
    ["x-api-key", "api-key", "cookie", "set-cookie"].iter().any(|h| name.eq_ignore_ascii_case(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_names_that_hold_secrets_and_those_that_do_not() {
        let secret = [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "NPM_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "RAILS_MASTER_KEY",
            "SECRET_KEY_BASE",
            "SECRET_KEY",
            "SECRETS",
            "DB_PASS",
            "DB_PASSWORD",
            "POSTGRES_PASSWORD",
            "PGPASSWORD",
            "MYSQL_PWD",
            "MYSQL_ROOT_PASSWORD",
            "REDIS_PASSWORD",
            "OPENAI_KEY",
            "ENCRYPTION_KEY",
            "STRIPE_SECRET_KEY",
            "STRIPE_KEY",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "DISCORD_WEBHOOK",
            "WEBHOOK_SECRET",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AZURE_CLIENT_SECRET",
            "AZURE_STORAGE_CONNECTION_STRING",
            "JWT_SECRET",
            "SESSION_COOKIE",
            "WP_AUTH_SALT",
            "DATADOG_API_KEY",
            "HF_TOKEN",
            "SMTP_PASS",
            "LDAP_BIND_PASSWORD",
            "GPG_PRIVATE_KEY",
            "VAULT_TOKEN",
            "CI_JOB_TOKEN",
            "TWILIO_AUTH_TOKEN",
            "MAILGUN_API_KEY",
            "FIREBASE_CREDENTIALS",
        ];
        let not_secret = [
            "PATH",
            "HOME",
            "PWD",
            "OLDPWD",
            "KEYBOARD",
            "PASSWD_FILE",
            "SSH_AUTH_SOCK",
            "TERM",
            "LANG",
            "SHELL",
            "USER",
            "TOKENIZERS_PARALLELISM",
            "MAX_TOKENS",
            "KEY",
            "KEYMAP",
            "XDG_CONFIG_HOME",
            "EDITOR",
            "GIT_ASKPASS",
            "SECRETARY_NAME",
            "CARGO_HOME",
            "POSTGRES_PASSWORD_FILE",
            "DB_PASSWORD_FILE",
            "SSH_KEY_PATH",
            "GITHUB_TOKEN_FILE",
            "SECRET_DIR",
        ];
        for name in secret {
            assert!(is_secret_env_name(name), "{name} holds a secret");
        }
        for name in not_secret {
            assert!(!is_secret_env_name(name), "{name} holds no secret");
        }
    }

    #[test]
    fn names_of_places_hold_paths_not_secrets_in_every_rule() {
        for name in ["PASSWD_FILE", "password_file", "DB_PASSWORD_FILE", "tokenPath", "api-key-dir"]
        {
            assert!(!is_sensitive_key(name), "{name}");
        }
        // The same words without the place are secrets.
        for name in ["DB_PASSWORD", "password", "tokenSecret", "API_KEY"] {
            assert!(is_sensitive_key(name), "{name}");
        }
    }

    #[test]
    fn exact_list_is_sorted_for_binary_search() {
        let mut sorted = EXACT.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, EXACT);
    }

    #[test]
    fn names_normalise_as_zero_does() {
        assert_eq!(normalize("apiKey"), "api_key");
        assert_eq!(normalize("x-api-key"), "x_api_key");
        assert_eq!(normalize("OPENAI_API_KEY"), "openai_api_key");
        assert_eq!(normalize("tokenBudget"), "token_budget");
        assert_eq!(normalize("__Secret__"), "secret");
        assert_eq!(normalize("spring.datasource.password"), "spring_datasource_password");
        assert_eq!(normalize("APIKey"), "apikey");
        assert_eq!(normalize("key2Value"), "key2_value");
    }

    #[test]
    fn names_are_classified_as_zero_classifies_them() {
        for key in ["apiKey", "x-api-key", "refresh_token", "private_key", "session_ingress_token"]
        {
            assert!(is_sensitive_key(key), "{key} should be sensitive");
        }
        for key in ["tokenBudget", "input_tokens", "model", "accept", "prompt", "max_tokens"] {
            assert!(!is_sensitive_key(key), "{key} should not be sensitive");
        }
    }

    #[test]
    fn the_quick_check_agrees_with_the_full_one() {
        for key in EXACT.iter().copied().chain([
            "DB_PASSWORD",
            "CI_JOB_TOKEN",
            "apiKey",
            "x-api-key",
            "model",
            "tokens",
            "keyboard",
        ]) {
            assert_eq!(is_sensitive_bytes(key.as_bytes()), is_sensitive_key(key), "{key}");
        }
    }

    #[test]
    fn environment_style_names_are_sensitive() {
        for key in ["GITLAB_CI_TOKEN", "DB_PASSWORD", "STRIPE_SECRET", "MY_SERVICE_API_KEY"] {
            assert!(is_sensitive_key(key), "{key} should be sensitive");
        }
        for key in ["PATH", "HOME", "TOKENIZERS_PARALLELISM", "PWD", "CARGO_TERM_COLOR"] {
            assert!(!is_sensitive_key(key), "{key} should not be sensitive");
        }
    }
}
