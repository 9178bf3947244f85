//! The model registry: ids, aliases, API names, limits, prices, reasoning efforts,
//! and the four profiles. Cost of a provider call comes from here too.
//!
//! Beyond Zero's table: the OpenAI reasoning models (`gpt-5*`, `o3`, `o4-mini`), which
//! are the models that take a reasoning effort on the Chat Completions API.

/// The provider families the registry knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    OpenAi,
    Anthropic,
    Google,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::OpenAi => "openai",
            Family::Anthropic => "anthropic",
            Family::Google => "google",
        }
    }
}

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub input: f64,
    pub cached_input: Option<f64>,
    pub output: f64,
}

/// Prices: one set of rates, or two split at a prompt size (Gemini 2.5 Pro).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prices {
    Flat(Rates),
    Tiered {
        up_to_input: u64,
        low: Rates,
        high: Rates,
    },
    /// A model added in the config without prices: no cost is reported, never a guess.
    Unknown,
}

/// The smallest Anthropic thinking budget the API takes; it must also stay below the call's
/// `max_tokens`.
pub const MIN_THINKING_BUDGET: u64 = 1_024;

/// Reasoning efforts in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effort {
    None,
    Minimal,
    Low,
    Medium,
    High,
    XHigh,
}

impl Effort {
    /// Parses `none|minimal|low|medium|high|xhigh` (and `off`), trimmed, any case.
    pub fn parse(value: &str) -> Option<Effort> {
        match value.trim().to_ascii_lowercase().as_str() {
            "none" | "off" => Some(Effort::None),
            "minimal" => Some(Effort::Minimal),
            "low" => Some(Effort::Low),
            "medium" => Some(Effort::Medium),
            "high" => Some(Effort::High),
            "xhigh" => Some(Effort::XHigh),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Effort::None => "none",
            Effort::Minimal => "minimal",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::XHigh => "xhigh",
        }
    }
}

/// One registry entry.
#[derive(Debug, PartialEq)]
pub struct Model {
    pub id: &'static str,
    pub api_model: &'static str,
    pub family: Family,
    pub label: &'static str,
    pub deprecated: bool,
    pub aliases: &'static [&'static str],
    pub context_window: u64,
    pub max_output: u64,
    pub prices: Prices,
    /// Efforts the model accepts; empty when it takes no reasoning effort at all.
    pub efforts: &'static [Effort],
}

const fn flat(input: f64, cached: f64, output: f64) -> Prices {
    Prices::Flat(Rates { input, cached_input: Some(cached), output })
}

const LMH: &[Effort] = &[Effort::Low, Effort::Medium, Effort::High];
/// Gemini 3's thinking levels.
const LOW_HIGH: &[Effort] = &[Effort::Low, Effort::High];
const GPT5: &[Effort] = &[Effort::Minimal, Effort::Low, Effort::Medium, Effort::High];

macro_rules! model {
    ($id:expr, $api:expr, $family:ident, $label:expr, [$($alias:expr),*], $ctx:expr, $out:expr,
     $prices:expr, $efforts:expr) => {
        Model {
            id: $id,
            api_model: $api,
            family: Family::$family,
            label: $label,
            deprecated: false,
            aliases: &[$($alias),*],
            context_window: $ctx,
            max_output: $out,
            prices: $prices,
            efforts: $efforts,
        }
    };
}

pub static MODELS: &[Model] = &[
    // developers.openai.com/api/docs/models/gpt-5.4: 1,050,000 context, 128,000 output;
    // prompts over 272K input tokens cost 2x input and 1.5x output.
    Model {
        id: "gpt-5.4",
        api_model: "gpt-5.4",
        family: Family::OpenAi,
        label: "GPT-5.4",
        deprecated: false,
        aliases: &["openai:gpt-5.4"],
        context_window: 1_050_000,
        max_output: 128_000,
        prices: Prices::Tiered {
            up_to_input: 272_000,
            low: Rates { input: 2.5, cached_input: Some(0.25), output: 15.0 },
            high: Rates { input: 5.0, cached_input: Some(0.5), output: 22.5 },
        },
        efforts: &[Effort::None, Effort::Low, Effort::Medium, Effort::High, Effort::XHigh],
    },
    model!(
        "gpt-4.1",
        "gpt-4.1",
        OpenAi,
        "GPT-4.1",
        ["openai:gpt-4.1"],
        1_047_576,
        32_768,
        flat(2.0, 0.5, 8.0),
        &[]
    ),
    model!(
        "gpt-4.1-mini",
        "gpt-4.1-mini",
        OpenAi,
        "GPT-4.1 mini",
        ["openai:gpt-4.1-mini"],
        1_047_576,
        32_768,
        flat(0.4, 0.1, 1.6),
        &[]
    ),
    model!(
        "gpt-4.1-nano",
        "gpt-4.1-nano",
        OpenAi,
        "GPT-4.1 nano",
        ["openai:gpt-4.1-nano"],
        1_047_576,
        32_768,
        flat(0.1, 0.025, 0.4),
        &[]
    ),
    model!(
        "gpt-4o",
        "gpt-4o",
        OpenAi,
        "GPT-4o",
        ["openai:gpt-4o"],
        128_000,
        16_384,
        flat(2.5, 1.25, 10.0),
        &[]
    ),
    model!(
        "gpt-4o-mini",
        "gpt-4o-mini",
        OpenAi,
        "GPT-4o mini",
        ["openai:gpt-4o-mini"],
        128_000,
        16_384,
        flat(0.15, 0.075, 0.6),
        &[]
    ),
    Model {
        id: "gpt-4-turbo",
        api_model: "gpt-4-turbo",
        family: Family::OpenAi,
        label: "GPT-4 Turbo",
        deprecated: true,
        aliases: &["openai:gpt-4-turbo"],
        context_window: 128_000,
        max_output: 4_096,
        prices: Prices::Flat(Rates { input: 10.0, cached_input: None, output: 30.0 }),
        efforts: &[],
    },
    model!(
        "gpt-5",
        "gpt-5",
        OpenAi,
        "GPT-5",
        ["openai:gpt-5"],
        400_000,
        128_000,
        flat(1.25, 0.125, 10.0),
        GPT5
    ),
    model!(
        "gpt-5-mini",
        "gpt-5-mini",
        OpenAi,
        "GPT-5 mini",
        ["openai:gpt-5-mini"],
        400_000,
        128_000,
        flat(0.25, 0.025, 2.0),
        GPT5
    ),
    model!(
        "gpt-5-nano",
        "gpt-5-nano",
        OpenAi,
        "GPT-5 nano",
        ["openai:gpt-5-nano"],
        400_000,
        128_000,
        flat(0.05, 0.005, 0.4),
        GPT5
    ),
    model!("o3", "o3", OpenAi, "o3", ["openai:o3"], 200_000, 100_000, flat(2.0, 0.5, 8.0), LMH),
    model!(
        "o4-mini",
        "o4-mini",
        OpenAi,
        "o4-mini",
        ["openai:o4-mini"],
        200_000,
        100_000,
        flat(1.1, 0.275, 4.4),
        LMH
    ),
    // Anthropic's models overview: 1M context, 128K output, $5 / $0.50 cached / $25. It
    // takes only adaptive thinking, which zero does not send yet: no effort.
    model!(
        "claude-opus-4.7",
        "claude-opus-4-7",
        Anthropic,
        "Claude Opus 4.7",
        ["anthropic:claude-opus-4.7", "opus-4.7"],
        1_000_000,
        128_000,
        flat(5.0, 0.5, 25.0),
        &[]
    ),
    // Anthropic's models overview: 1M context, 64K output, $3 / $0.30 cached / $15.
    model!(
        "claude-sonnet-4.6",
        "claude-sonnet-4-6",
        Anthropic,
        "Claude Sonnet 4.6",
        ["anthropic:claude-sonnet-4.6", "sonnet-4.6"],
        1_000_000,
        64_000,
        flat(3.0, 0.3, 15.0),
        LMH
    ),
    model!(
        "claude-opus-4.1",
        "claude-opus-4-1-20250805",
        Anthropic,
        "Claude Opus 4.1",
        ["anthropic:claude-opus-4.1", "opus-4.1"],
        200_000,
        32_000,
        flat(15.0, 1.5, 75.0),
        LMH
    ),
    model!(
        "claude-opus-4",
        "claude-opus-4-20250514",
        Anthropic,
        "Claude Opus 4",
        ["anthropic:claude-opus-4", "opus-4"],
        200_000,
        32_000,
        flat(15.0, 1.5, 75.0),
        LMH
    ),
    model!(
        "claude-sonnet-4.5",
        "claude-sonnet-4-5-20250929",
        Anthropic,
        "Claude Sonnet 4.5",
        ["anthropic:claude-sonnet-4.5", "sonnet-4.5"],
        200_000,
        64_000,
        flat(3.0, 0.3, 15.0),
        LMH
    ),
    model!(
        "claude-sonnet-4",
        "claude-sonnet-4-20250514",
        Anthropic,
        "Claude Sonnet 4",
        ["anthropic:claude-sonnet-4", "sonnet-4"],
        200_000,
        64_000,
        flat(3.0, 0.3, 15.0),
        LMH
    ),
    model!(
        "claude-haiku-4.5",
        "claude-haiku-4-5-20251001",
        Anthropic,
        "Claude Haiku 4.5",
        ["anthropic:claude-haiku-4.5", "haiku-4.5"],
        200_000,
        64_000,
        flat(1.0, 0.1, 5.0),
        LMH
    ),
    model!(
        "claude-haiku-3.5",
        "claude-3-5-haiku-20241022",
        Anthropic,
        "Claude Haiku 3.5",
        ["anthropic:claude-haiku-3.5", "haiku-3.5"],
        200_000,
        8_192,
        flat(0.8, 0.08, 4.0),
        &[]
    ),
    // Vertex AI's model page: 1,048,576 input, 65,536 output; thinking levels low and high.
    // Gemini API pricing: $2 / $0.20 cached / $12, over 200K input $4 / $0.40 / $18.
    Model {
        id: "gemini-3-pro-preview",
        api_model: "gemini-3-pro-preview",
        family: Family::Google,
        label: "Gemini 3 Pro (preview)",
        deprecated: false,
        aliases: &["google:gemini-3-pro-preview", "gemini-3-pro"],
        context_window: 1_048_576,
        max_output: 65_536,
        prices: Prices::Tiered {
            up_to_input: 200_000,
            low: Rates { input: 2.0, cached_input: Some(0.2), output: 12.0 },
            high: Rates { input: 4.0, cached_input: Some(0.4), output: 18.0 },
        },
        efforts: LOW_HIGH,
    },
    // Gemini API pricing: $0.50 / $0.05 cached / $3.00.
    model!(
        "gemini-3-flash-preview",
        "gemini-3-flash-preview",
        Google,
        "Gemini 3 Flash (preview)",
        ["google:gemini-3-flash-preview", "gemini-3-flash"],
        1_048_576,
        65_536,
        flat(0.5, 0.05, 3.0),
        LOW_HIGH
    ),
    Model {
        id: "gemini-2.5-pro",
        api_model: "gemini-2.5-pro",
        family: Family::Google,
        label: "Gemini 2.5 Pro",
        deprecated: false,
        aliases: &["google:gemini-2.5-pro", "gemini-pro"],
        context_window: 1_048_576,
        max_output: 65_536,
        prices: Prices::Tiered {
            up_to_input: 200_000,
            low: Rates { input: 1.25, cached_input: None, output: 10.0 },
            high: Rates { input: 2.5, cached_input: None, output: 15.0 },
        },
        efforts: LMH,
    },
    model!(
        "gemini-2.5-flash",
        "gemini-2.5-flash",
        Google,
        "Gemini 2.5 Flash",
        ["google:gemini-2.5-flash", "gemini-flash"],
        1_048_576,
        65_536,
        flat(0.3, 0.03, 2.5),
        LMH
    ),
    model!(
        "gemini-2.5-flash-lite",
        "gemini-2.5-flash-lite",
        Google,
        "Gemini 2.5 Flash-Lite",
        ["google:gemini-2.5-flash-lite", "gemini-flash-lite"],
        1_048_576,
        65_536,
        flat(0.1, 0.025, 0.4),
        LMH
    ),
];

/// Looks a model up by id or alias (trimmed, any case; no fuzzy matching).
pub fn find(name: &str) -> Option<&'static Model> {
    let name = name.trim().to_ascii_lowercase();
    MODELS.iter().find(|m| m.id == name || m.aliases.contains(&name.as_str()))
}

/// The default model of each family, used when a provider is configured without a model.
pub fn default_for(family: Family) -> &'static str {
    match family {
        Family::OpenAi => "gpt-4.1",
        Family::Anthropic => "claude-sonnet-4.5",
        Family::Google => "gemini-2.5-flash",
    }
}

/// `--profile` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Fast,
    Balanced,
    Deep,
    Cheap,
}

impl Profile {
    pub fn parse(value: &str) -> Option<Profile> {
        match value.trim().to_ascii_lowercase().as_str() {
            "fast" => Some(Profile::Fast),
            "balanced" => Some(Profile::Balanced),
            "deep" => Some(Profile::Deep),
            "cheap" => Some(Profile::Cheap),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Fast => "fast",
            Profile::Balanced => "balanced",
            Profile::Deep => "deep",
            Profile::Cheap => "cheap",
        }
    }

    /// The profile's model in each family (the README's table says the same).
    pub fn model_for(self, family: Family) -> &'static str {
        use Family::{Anthropic, Google, OpenAi};
        match (self, family) {
            (Profile::Fast, OpenAi) => "gpt-4.1-mini",
            (Profile::Fast, Anthropic) => "claude-haiku-4.5",
            (Profile::Fast, Google) => "gemini-2.5-flash",
            (Profile::Balanced, OpenAi) => "gpt-4.1",
            (Profile::Balanced, Anthropic) => "claude-sonnet-4.5",
            (Profile::Balanced, Google) => "gemini-2.5-pro",
            (Profile::Deep, OpenAi) => "gpt-5",
            (Profile::Deep, Anthropic) => "claude-opus-4.1",
            (Profile::Deep, Google) => "gemini-2.5-pro",
            (Profile::Cheap, OpenAi) => "gpt-4.1-nano",
            (Profile::Cheap, Anthropic) => "claude-haiku-4.5",
            (Profile::Cheap, Google) => "gemini-2.5-flash-lite",
        }
    }

    /// The profile's model in the first family the user has configured (their provider's
    /// own first), else OpenAI's (whose missing key is then reported).
    pub fn pick(self, configured: &[Family]) -> &'static Model {
        let family = configured.first().copied().unwrap_or(Family::OpenAi);
        // Every profile model is in the registry (tested).
        find(self.model_for(family)).unwrap_or(&MODELS[0])
    }
}

/// Token counts of one provider call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's cache (part of `prompt_tokens`).
    pub cached_tokens: u64,
    /// Prompt tokens written to the provider's cache (Anthropic; part of `prompt_tokens`).
    pub cache_write_tokens: u64,
    /// The provider reported its cache reads, its cache writes (schema 2 shows each count
    /// only then).
    pub cache_read_reported: bool,
    pub cache_write_reported: bool,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

/// The cost of one call in USD: the tier is chosen by prompt size, cached prompt tokens
/// are billed at the cached rate where the model has one.
pub fn cost(model: &Model, usage: &Usage) -> Option<f64> {
    let rates = match model.prices {
        Prices::Unknown => return None,
        Prices::Flat(rates) => rates,
        Prices::Tiered { up_to_input, low, high } => {
            if usage.prompt_tokens <= up_to_input {
                low
            } else {
                high
            }
        }
    };
    let cached = match rates.cached_input {
        Some(_) => usage.cached_tokens.min(usage.prompt_tokens),
        None => 0,
    };
    // Anthropic bills a cache write at 1.25 times the input price (its 5-minute cache).
    let written = match model.family {
        Family::Anthropic => usage.cache_write_tokens.min(usage.prompt_tokens - cached),
        _ => 0,
    };
    let fresh = usage.prompt_tokens - cached - written;
    let dollars = fresh as f64 * rates.input
        + written as f64 * rates.input * 1.25
        + cached as f64 * rates.cached_input.unwrap_or(rates.input)
        + usage.completion_tokens as f64 * rates.output;
    Some(dollars / 1_000_000.0)
}

/// A model the user's config adds or overrides, as read (owned).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    pub id: String,
    pub family: Family,
    pub api_model: String,
    pub aliases: Vec<String>,
    pub context_window: u64,
    pub max_output: u64,
    pub efforts: Vec<Effort>,
    pub prices: Prices,
}

impl ModelSpec {
    /// Whether `name` (any case) is this model's id or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        let name = name.trim().to_ascii_lowercase();
        self.id.eq_ignore_ascii_case(&name)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(&name))
    }

    /// The model as the rest of zero holds models, for the whole run: made once, for the
    /// model a run uses, so it lives as long as the process (a few hundred bytes).
    pub fn to_static(&self) -> &'static Model {
        let text = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
        let aliases: Vec<&'static str> = self.aliases.iter().map(|a| text(a)).collect();
        Box::leak(Box::new(Model {
            id: text(&self.id),
            api_model: text(&self.api_model),
            family: self.family,
            label: text(&self.id),
            deprecated: false,
            aliases: Box::leak(aliases.into_boxed_slice()),
            context_window: self.context_window,
            max_output: self.max_output,
            prices: self.prices,
            efforts: Box::leak(self.efforts.clone().into_boxed_slice()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_aliases_are_unique_and_lowercase() {
        let mut seen = std::collections::HashSet::new();
        for model in MODELS {
            for name in std::iter::once(&model.id).chain(model.aliases) {
                assert!(seen.insert(*name), "duplicate {name}");
                assert_eq!(*name, name.to_ascii_lowercase());
            }
        }
    }

    #[test]
    fn lookup_by_id_and_alias() {
        assert_eq!(find(" OPENAI:GPT-4.1 ").map(|m| m.id), Some("gpt-4.1"));
        assert_eq!(find("sonnet-4.5").map(|m| m.api_model), Some("claude-sonnet-4-5-20250929"));
        assert_eq!(find("gemini-flash").map(|m| m.family), Some(Family::Google));
        assert!(find("gpt-4.1-latest").is_none());
    }

    #[test]
    fn every_profile_has_a_model_of_every_family_and_follows_the_users_providers() {
        use Family::{Anthropic, Google, OpenAi};
        // (profile, OpenAI-only, Anthropic-only, Google-only user)
        let table = [
            (Profile::Fast, "gpt-4.1-mini", "claude-haiku-4.5", "gemini-2.5-flash"),
            (Profile::Balanced, "gpt-4.1", "claude-sonnet-4.5", "gemini-2.5-pro"),
            (Profile::Deep, "gpt-5", "claude-opus-4.1", "gemini-2.5-pro"),
            (Profile::Cheap, "gpt-4.1-nano", "claude-haiku-4.5", "gemini-2.5-flash-lite"),
        ];
        for (profile, openai, anthropic, google) in table {
            for (family, id) in [(OpenAi, openai), (Anthropic, anthropic), (Google, google)] {
                let model = profile.pick(&[family]);
                assert_eq!((model.id, model.family), (id, family), "{profile:?} for {family:?}");
            }
        }
        // The user's own provider first; OpenAI's when none is configured.
        assert_eq!(Profile::Deep.pick(&[Anthropic, OpenAi]).id, "claude-opus-4.1");
        assert_eq!(Profile::Cheap.pick(&[]).id, "gpt-4.1-nano");
    }

    #[test]
    fn cost_uses_tiers_and_cached_rates() {
        let gpt = find("gpt-4.1").unwrap();
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 500_000,
            cached_tokens: 0,
            ..Usage::default()
        };
        assert!((cost(gpt, &usage).unwrap() - 6.0).abs() < 1e-9);
        let cached = Usage { cached_tokens: 400_000, ..usage };
        assert!((cost(gpt, &cached).unwrap() - (0.6 * 2.0 + 0.4 * 0.5 + 4.0)).abs() < 1e-9);
        let pro = find("gemini-2.5-pro").unwrap();
        let small = Usage {
            prompt_tokens: 200_000,
            completion_tokens: 0,
            cached_tokens: 0,
            ..Usage::default()
        };
        assert!((cost(pro, &small).unwrap() - 0.25).abs() < 1e-9);
        let large = Usage {
            prompt_tokens: 200_001,
            completion_tokens: 0,
            cached_tokens: 0,
            ..Usage::default()
        };
        assert!((cost(pro, &large).unwrap() - 200_001.0 * 2.5 / 1e6).abs() < 1e-9);
        // No cached rate: cached tokens are billed as ordinary input.
        let turbo = MODELS.iter().find(|m| m.id == "gpt-4-turbo").unwrap();
        let u = Usage {
            prompt_tokens: 100,
            completion_tokens: 0,
            cached_tokens: 100,
            ..Usage::default()
        };
        assert!((cost(turbo, &u).unwrap() - 100.0 * 10.0 / 1e6).abs() < 1e-12);
        // Anthropic: a cache write costs 1.25 times the input price, a read its cached rate.
        let sonnet = find("claude-sonnet-4.5").unwrap();
        let Prices::Flat(rates) = sonnet.prices else { panic!("flat prices") };
        let anthropic = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 0,
            cached_tokens: 600_000,
            cache_write_tokens: 300_000,
            cache_read_reported: true,
            cache_write_reported: true,
        };
        let expected =
            0.1 * rates.input + 0.3 * rates.input * 1.25 + 0.6 * rates.cached_input.unwrap();
        assert!((cost(sonnet, &anthropic).unwrap() - expected).abs() < 1e-9);
    }

    #[test]
    fn efforts_parse_with_off_alias() {
        assert_eq!(Effort::parse(" OFF "), Some(Effort::None));
        assert_eq!(Effort::parse("xhigh"), Some(Effort::XHigh));
        assert_eq!(Effort::parse("warp"), None);
    }

    #[test]
    fn the_readme_lists_the_registry_exactly() {
        let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"));
        let start = readme.find("**Registry.**").expect("the README's registry paragraph");
        let list = &readme[start..];
        let list = &list[..list.find("with aliases").expect("the end of the list")];
        let named: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
        let mut ids: Vec<&str> = MODELS.iter().map(|m| m.id).collect();
        let mut sorted = named.clone();
        sorted.sort_unstable();
        ids.sort_unstable();
        assert_eq!(sorted, ids);
    }
}
