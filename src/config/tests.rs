use super::file::parse_user_config;
use super::*;
use crate::error::Failure;
use crate::protocol::events::{Warning, WarningCode};
use crate::provider::models::{Effort, Profile};
use std::time::Duration;

fn env(pairs: &[(&str, &str)]) -> Env {
    Env::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn choice(model: Option<&str>) -> Choice {
    Choice { model: model.map(str::to_string), ..Choice::default() }
}

fn resolve_ok(env: &Env, choice: &Choice) -> Runtime {
    resolve(env, None, choice).unwrap_or_else(|f| panic!("{f:?}"))
}

fn resolve_err(env: &Env, choice: &Choice) -> Failure {
    resolve(env, None, choice).expect_err("should fail")
}

#[test]
fn environment_openai_defaults() {
    let rt = resolve_ok(&env(&[("OPENAI_API_KEY", "sk-test-1")]), &choice(None));
    assert_eq!(
        (rt.kind, rt.model_id.as_str(), rt.base_url.as_str()),
        (ProviderKind::OpenAi, "gpt-4.1", "https://api.openai.com/v1")
    );
    assert_eq!(rt.api_key.as_deref(), Some("sk-test-1"));
    let rt = resolve_ok(
        &env(&[("OPENAI_API_KEY", "k"), ("OPENAI_BASE_URL", "https://api.openai.com")]),
        &choice(Some("openai:gpt-4.1")),
    );
    assert_eq!((rt.kind, rt.model_id.as_str()), (ProviderKind::OpenAi, "gpt-4.1"));
}

#[test]
fn each_provider_uses_its_own_host_and_key() {
    // An Anthropic model is never sent to the OpenAI host (nor its key with it).
    let e = env(&[("OPENAI_API_KEY", "o"), ("ANTHROPIC_API_KEY", "a-key-123")]);
    let rt = resolve_ok(&e, &choice(Some("sonnet-4.5")));
    assert_eq!(rt.kind, ProviderKind::Anthropic);
    assert_eq!(rt.base_url, "https://api.anthropic.com");
    assert_eq!(rt.api_key.as_deref(), Some("a-key-123"));
    assert_eq!(rt.max_tokens, 64000);
    let e = env(&[("GOOGLE_API_KEY", "g"), ("GEMINI_BASE_URL", "http://127.0.0.1:9/")]);
    let rt = resolve_ok(&e, &choice(Some("gemini-flash")));
    assert_eq!(
        (rt.kind, rt.base_url.as_str(), rt.max_tokens),
        (ProviderKind::Google, "http://127.0.0.1:9", 65536)
    );
    // Only an Anthropic key: the default model is Anthropic's.
    let rt = resolve_ok(&env(&[("ANTHROPIC_API_KEY", "a")]), &choice(None));
    assert_eq!(rt.model_id, "claude-sonnet-4.5");
}

#[test]
fn compatible_gateways_accept_any_model() {
    let e = env(&[("OPENAI_BASE_URL", "http://localhost:11434/v1/")]);
    let rt = resolve_ok(&e, &choice(Some("qwen2.5-coder:7b")));
    assert_eq!(rt.kind, ProviderKind::OpenAiCompatible);
    assert_eq!(
        (rt.base_url.as_str(), rt.api_model.as_str(), rt.model),
        ("http://localhost:11434/v1", "qwen2.5-coder:7b", None)
    );
    assert_eq!(rt.api_key, None, "no key is needed for a local server");
    // A registry OpenAI model behind a gateway is compatible too, with its prices known.
    let rt = resolve_ok(&e, &choice(Some("gpt-4.1-mini")));
    assert_eq!((rt.kind, rt.model_id.as_str()), (ProviderKind::OpenAiCompatible, "gpt-4.1-mini"));
    assert!(rt.model.is_some());
}

#[test]
fn resolution_errors() {
    let key = env(&[("OPENAI_API_KEY", "k")]);
    let err = resolve_err(&key, &choice(Some("local-coder")));
    assert!(
        matches!(&err, Failure::Provider(m) if m.starts_with("Unknown Zero model \"local-coder\" for environment provider runtime")),
        "{err:?}"
    );
    let official = env(&[("OPENAI_API_KEY", "k"), ("ZERO_PROVIDER", "openai")]);
    let err = resolve_err(&official, &choice(Some("local-coder")));
    assert!(
        matches!(&err, Failure::Provider(m) if m.contains("official openai provider runtime")),
        "{err:?}"
    );
    let err = resolve_err(
        &env(&[("OPENAI_API_KEY", "k"), ("ZERO_PROVIDER", "openai-compatible")]),
        &choice(Some("x")),
    );
    assert!(
        matches!(&err, Failure::Provider(m) if m.contains("requires an explicit non-official baseURL")),
        "{err:?}"
    );
    let err = resolve_err(&env(&[("ZERO_PROVIDER", "anthropic")]), &choice(Some("gpt-4.1")));
    assert_eq!(
        err,
        Failure::Provider("Zero model gpt-4.1 belongs to openai, not anthropic".into())
    );
    let err = resolve_err(&env(&[("OPENAI_MODEL", "gpt-4.1")]), &choice(None));
    assert_eq!(
        err,
        Failure::Provider("Zero openai provider requires an API key (set OPENAI_API_KEY)".into())
    );
    let err = resolve_err(&env(&[("OPENAI_API_KEY", "k")]), &choice(Some("claude-haiku-4.5")));
    assert_eq!(
        err,
        Failure::Provider(
            "Zero anthropic provider requires an API key (set ANTHROPIC_API_KEY)".into()
        )
    );
    let err = resolve_err(&env(&[]), &choice(None));
    assert!(
        matches!(&err, Failure::Provider(m) if m.starts_with("No LLM provider configured.")),
        "{err:?}"
    );
    let err = resolve_err(&env(&[("OPENAI_BASE_URL", "not a url")]), &choice(Some("m")));
    assert_eq!(err, Failure::Provider("Invalid Zero provider baseURL: not a url".into()));
    let err = resolve_err(&env(&[("ZERO_PROVIDER", "mystery")]), &choice(None));
    assert_eq!(
        err,
        Failure::Provider(
            "Unknown provider \"mystery\". Expected openai, anthropic, google, openai-compatible, azure or scripted.".into()
        )
    );
    // An unknown model names the nearest registry models, not the provider kinds.
    let err = resolve_err(&key, &choice(Some("gpt4.1")));
    assert!(
        matches!(&err, Failure::Provider(m) if m.contains("(closest known models: gpt-4.1, ")),
        "{err:?}"
    );
}

#[test]
fn profiles_resolve_among_configured_providers() {
    let openai = env(&[("OPENAI_API_KEY", "k")]);
    let deep = Choice { profile: Some(" DEEP ".into()), ..Choice::default() };
    let rt = resolve_ok(&openai, &deep);
    assert_eq!((rt.model_id.as_str(), rt.profile), ("gpt-5", Some(Profile::Deep)));
    // Every profile resolves for a user of each single family, to a model of that family.
    let users = [
        (env(&[("OPENAI_API_KEY", "o")]), ProviderKind::OpenAi),
        (env(&[("ANTHROPIC_API_KEY", "a")]), ProviderKind::Anthropic),
        (env(&[("GEMINI_API_KEY", "g")]), ProviderKind::Google),
    ];
    let expected = [
        ("fast", ["gpt-4.1-mini", "claude-haiku-4.5", "gemini-2.5-flash"]),
        ("balanced", ["gpt-4.1", "claude-sonnet-4.5", "gemini-2.5-pro"]),
        ("deep", ["gpt-5", "claude-opus-4.1", "gemini-2.5-pro"]),
        ("cheap", ["gpt-4.1-nano", "claude-haiku-4.5", "gemini-2.5-flash-lite"]),
    ];
    for (profile, models) in expected {
        for ((user, kind), model) in users.iter().zip(models) {
            let rt = resolve_ok(user, &choice(Some(profile)));
            assert_eq!((rt.model_id.as_str(), rt.kind), (model, *kind), "{profile} for {kind:?}");
        }
    }
    let bogus = Choice { profile: Some("bogus".into()), ..Choice::default() };
    assert_eq!(resolve_err(&openai, &bogus), Failure::Usage("Unknown model profile: bogus".into()));
    // With no provider at all, the provider error comes first (see `resolve`).
    assert!(matches!(resolve_err(&env(&[]), &bogus), Failure::Provider(_)));
}

#[test]
fn reasoning_effort_is_validated_and_sent_where_taken() {
    let e = env(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")]);
    let with = |model: &str, effort: &str| Choice {
        model: Some(model.into()),
        effort: Some(effort.into()),
        ..Choice::default()
    };
    let rt = resolve_ok(&e, &with("sonnet-4.5", "HIGH"));
    assert_eq!((rt.effort, rt.send_effort), (Some(Effort::High), Some(Effort::High)));
    for bad in ["off", "xhigh"] {
        let err = resolve_err(&e, &with("sonnet-4.5", bad));
        assert!(
            matches!(&err, Failure::Usage(m) if m.ends_with("is not supported by Claude Sonnet 4.5. Supported efforts: low, medium, high.")),
            "{err:?}"
        );
    }
    let err = resolve_err(&e, &with("sonnet-4.5", "warp"));
    assert_eq!(
        err,
        Failure::Usage(
            "Invalid reasoning effort \"warp\". Expected none, minimal, low, medium, high, xhigh."
                .into()
        )
    );
    let rt = resolve_ok(&e, &with("gpt-4.1", "low"));
    assert_eq!((rt.effort, rt.send_effort), (Some(Effort::Low), None));
    assert_eq!(
        rt.warnings,
        [Warning::new(
            WarningCode::IgnoredOption,
            "GPT-4.1 does not take a reasoning effort; --reasoning-effort low is ignored."
        )]
    );
    let rt = resolve_ok(&e, &with("gpt-5", "minimal"));
    assert_eq!(rt.send_effort, Some(Effort::Minimal));
}

#[test]
fn config_file_profiles_and_errors() {
    let scratch = crate::testing::kit::TempDir::new("config");
    let dir = scratch.path.clone();
    std::fs::create_dir_all(dir.join("zero")).unwrap();
    let e = env(&[("XDG_CONFIG_HOME", dir.to_str().unwrap())]);
    assert_eq!(load_user_config(&e).unwrap(), None, "a missing file is no config");
    let path = dir.join("zero/config.json");
    std::fs::write(&path, r#"{"activeProvider":"work","maxTurns":7,"providers":[{"name":"work","provider":"anthropic","baseURL":"https://proxy.example.com/","apiKey":"cfg-key-123","model":"haiku-4.5"}]}"#).unwrap();
    let config = load_user_config(&e).unwrap().unwrap();
    assert_eq!(config.max_turns, Some(7));
    let rt = resolve(&e, Some(&config), &Choice::default()).unwrap();
    assert_eq!(
        (rt.kind, rt.base_url.as_str(), rt.api_key.as_deref()),
        (ProviderKind::Anthropic, "https://proxy.example.com", Some("cfg-key-123"))
    );
    assert_eq!(max_turns(None, &e, Some(&config)).unwrap(), 7);
    assert_eq!(max_turns(None, &env(&[("ZERO_MAX_TURNS", "3")]), Some(&config)).unwrap(), 3);
    assert_eq!(max_turns(Some(1), &env(&[("ZERO_MAX_TURNS", "3")]), Some(&config)).unwrap(), 1);
    std::fs::write(&path, "{\n  \"maxTurns\": 5,\n}").unwrap();
    let err = load_user_config(&e).unwrap_err();
    assert!(
        matches!(&err, Failure::Config(m) if m.starts_with(&format!("Invalid config {}: line 3, column 1", path.display()))),
        "{err:?}"
    );
    std::fs::write(&path, r#"{"providers":[{"name":"x","baseURL":"ftp://x","model":"m"}]}"#)
        .unwrap();
    let err = load_user_config(&e).unwrap_err();
    assert!(
        matches!(&err, Failure::Config(m) if m.ends_with("providers[0].baseURL must be an http(s) URL")),
        "{err:?}"
    );
}

#[test]
fn provider_command_source() {
    let e = env(&[(
        "ZERO_PROVIDER_COMMAND",
        r#"printf '{"provider":"openai-compatible","base_url":"http://127.0.0.1:1/v1","model":"local-coder","api_key":"cmd-key-1234"}\n'"#,
    )]);
    let rt = resolve_ok(&e, &Choice::default());
    assert_eq!(
        (rt.kind, rt.model_id.as_str(), rt.api_key.as_deref()),
        (ProviderKind::OpenAiCompatible, "local-coder", Some("cmd-key-1234"))
    );
    let fails = env(&[("ZERO_PROVIDER_COMMAND", "echo oops >&2; exit 3")]);
    assert_eq!(
        resolve_err(&fails, &Choice::default()),
        Failure::Provider(
            "ZERO_PROVIDER_COMMAND failed with exit code 3 (echo oops >&2; exit 3): oops".into()
        )
    );
    let no_model = env(&[("ZERO_PROVIDER_COMMAND", "echo '{}'")]);
    assert_eq!(
        resolve_err(&no_model, &Choice::default()),
        Failure::Provider(
            "ZERO_PROVIDER_COMMAND output must include a model or model_id field".into()
        )
    );
    let bad = env(&[("ZERO_PROVIDER_COMMAND", "echo '{\"model\": 5}'")]);
    assert_eq!(
        resolve_err(&bad, &Choice::default()),
        Failure::Provider(
            "ZERO_PROVIDER_COMMAND returned invalid JSON: model must be a string".into()
        )
    );
}

#[test]
fn scripted_and_network_settings() {
    let scripted = Choice { provider: Some("scripted".into()), ..Choice::default() };
    assert_eq!(
        resolve_err(&env(&[]), &scripted),
        Failure::Usage("--provider scripted needs --script FILE".into())
    );
    let with_script = Choice {
        script: Some("s.json".into()),
        model: Some("gpt-4.1".into()),
        ..Choice::default()
    };
    let rt = resolve_ok(&env(&[]), &with_script);
    assert_eq!((rt.kind, rt.model_id.as_str()), (ProviderKind::Scripted, "gpt-4.1"));
    let e =
        env(&[("OPENAI_API_KEY", "k"), ("ZERO_IDLE_TIMEOUT_MS", "250"), ("ZERO_MAX_RETRIES", "0")]);
    let rt = resolve_ok(&e, &Choice::default());
    assert_eq!((rt.net.idle, rt.net.max_retries), (Duration::from_millis(250), 0));
    let err = resolve_err(
        &env(&[("OPENAI_API_KEY", "k"), ("ZERO_CONNECT_TIMEOUT_MS", "soon")]),
        &Choice::default(),
    );
    assert_eq!(
        err,
        Failure::Provider(
            "Invalid ZERO_CONNECT_TIMEOUT_MS \"soon\": expected milliseconds (a positive integer)"
                .into()
        )
    );
    let bad_kind = Choice { provider: Some("mistral".into()), ..Choice::default() };
    assert!(matches!(resolve_err(&env(&[]), &bad_kind), Failure::Usage(_)));
}

/// A config file parsed from its JSON text.
fn config_of(json: &str) -> UserConfig {
    parse_user_config(&serde_json::from_str(json).unwrap()).unwrap()
}

#[test]
fn a_lone_profile_is_active_several_need_active_provider_and_a_model_may_be_left_out() {
    let none = env(&[]);
    let one = config_of(
        r#"{"providers":[{"name":"work","provider":"anthropic","apiKey":"cfg-key-123"}]}"#,
    );
    let rt = resolve(&none, Some(&one), &Choice::default()).unwrap();
    assert_eq!(
        (rt.kind, rt.model_id.as_str(), rt.origin),
        (ProviderKind::Anthropic, "claude-sonnet-4.5", Some(Origin::Profile("work".into())))
    );
    let google = config_of(r#"{"providers":[{"name":"g","provider":"google","apiKey":"k"}]}"#);
    assert_eq!(
        resolve(&none, Some(&google), &Choice::default()).unwrap().model_id,
        "gemini-2.5-flash"
    );
    let openai = config_of(r#"{"providers":[{"name":"o","apiKey":"k"}]}"#);
    assert_eq!(resolve(&none, Some(&openai), &Choice::default()).unwrap().model_id, "gpt-4.1");
    let two = config_of(
        r#"{"providers":[{"name":"work","apiKey":"k","model":"gpt-4.1"},{"name":"home","apiKey":"k","model":"gpt-4o"}]}"#,
    );
    assert_eq!(
        resolve(&env(&[("OPENAI_API_KEY", "k")]), Some(&two), &Choice::default()),
        Err(Failure::Config("The config file has 2 provider profiles (work, home) and no activeProvider: set \"activeProvider\" to the one to use.".into()))
    );
    let err = parse_user_config(
        &serde_json::json!({"providers": [{"name": "l", "provider": "openai-compatible", "baseURL": "http://localhost:1/v1"}]}),
    );
    assert_eq!(err, Err("providers[0].model must be set for an openai-compatible provider (its server names its models)".into()));
}

#[test]
fn variables_an_active_profile_overrides_are_warned_about_by_name() {
    let config = config_of(
        r#"{"activeProvider":"work","providers":[{"name":"work","provider":"anthropic","apiKey":"k","model":"haiku-4.5"}]}"#,
    );
    let e = env(&[
        ("ZERO_PROVIDER", "openai"),
        ("OPENAI_MODEL", "gpt-4o"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:8"),
    ]);
    let rt = resolve(&e, Some(&config), &Choice::default()).unwrap();
    let said: Vec<&str> = rt.warnings.iter().map(|w| w.message.as_str()).collect();
    let expect = |name: &str| {
        format!("{name} is ignored: the config profile \"work\" is in use and sets the provider, model and base URL.")
    };
    assert_eq!(
        said,
        [expect("ZERO_PROVIDER"), expect("OPENAI_MODEL"), expect("ANTHROPIC_BASE_URL")]
    );
    assert!(rt.warnings.iter().all(|w| w.code == WarningCode::IgnoredOption));
    assert_eq!(rt.model_id, "claude-haiku-4.5");
    assert_eq!(
        overridden_vars(&e, Some(&config)),
        [
            ("ZERO_PROVIDER", "work".to_string()),
            ("OPENAI_MODEL", "work".into()),
            ("ANTHROPIC_BASE_URL", "work".into())
        ]
    );
    // A value that names no provider is an error even so.
    let bad = env(&[("ZERO_PROVIDER", "bogus")]);
    assert!(
        matches!(resolve(&bad, Some(&config), &Choice::default()), Err(Failure::Provider(m)) if m.starts_with("Unknown provider \"bogus\""))
    );
}

#[test]
fn unknown_model_advice_stays_in_the_families_the_user_has() {
    let anthropic = env(&[("ANTHROPIC_API_KEY", "a")]);
    let err = resolve_err(&anthropic, &choice(Some("qwen3-coder")));
    let Failure::Provider(message) = err else { panic!("{err:?}") };
    let shown = message.split("(closest known models: ").nth(1).unwrap().split(')').next().unwrap();
    assert!(shown.split(", ").all(|id| id.starts_with("claude-")), "{message}");
    assert!(message.contains("To use another model name, point the provider's base URL at a gateway or local server that serves it (any name is taken there), or add it to the config file's \"models\""), "{message}");
}

#[test]
fn the_sandbox_keys_are_read_and_checked() {
    let config =
        super::parse_config_bytes(br#"{"sandbox": "read-only", "sandboxNetwork": "off"}"#).unwrap();
    assert_eq!(config.sandbox, Some(crate::tools::sandbox::Mode::ReadOnly));
    assert_eq!(config.sandbox_network, Some(false));
    assert!(config.warnings.is_empty());
    assert_eq!(
        super::parse_config_bytes(br#"{"sandbox": "strict"}"#).unwrap_err(),
        "sandbox must be \"off\", \"read-only\" or \"workspace-write\"".into()
    );
    assert_eq!(
        super::parse_config_bytes(br#"{"sandboxNetwork": false}"#).unwrap_err(),
        "sandboxNetwork must be \"on\" or \"off\"".into()
    );
}
