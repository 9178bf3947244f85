//! The run settings beside the provider: project instructions, prompt caching, the spending
//! cap and extra directories, each from the first layer that sets it (the command line, the
//! environment, the user file, the defaults), with that layer's name for `zero config`.

use std::path::{Path, PathBuf};

use crate::error::Failure;

use super::{Env, UserConfig};

/// A value and the layer it comes from: `cli`, `env:<VARIABLE>`, `user` or `defaults`.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    pub value: T,
    pub source: &'static str,
}

/// What the command line says about the settings.
#[derive(Debug, Clone, Default)]
pub struct SettingFlags {
    /// `--no-project-instructions`.
    pub no_project_instructions: bool,
    pub max_budget_usd: Option<f64>,
    /// `--add-dir`, already absolute.
    pub add_dirs: Vec<PathBuf>,
}

/// The settings of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    pub project_instructions: Setting<bool>,
    pub prompt_cache: Setting<bool>,
    pub max_budget_usd: Setting<Option<f64>>,
    /// Absolute paths; `--add-dir` replaces the file's list rather than adding to it, as any
    /// flag replaces its setting.
    pub add_dirs: Setting<Vec<PathBuf>>,
    /// The file's `contextWindow`, for a model the registry does not know.
    pub context_window: Option<u64>,
}

/// `ZERO_PROMPT_CACHE`: `off` (or `false`, `0`) sends no cache marks, `on` the default.
fn prompt_cache_var(value: &str) -> Result<bool, Failure> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(Failure::Usage(format!(
            "Invalid ZERO_PROMPT_CACHE \"{}\": expected \"on\" or \"off\"",
            value.trim()
        ))),
    }
}

/// `~/x` with `$HOME`; other paths as they are.
fn expand_home(path: &Path, env: &Env) -> Result<PathBuf, Failure> {
    match path.strip_prefix("~") {
        Ok(rest) => match env.get("HOME") {
            Some(home) => Ok(Path::new(home).join(rest)),
            None => Err(Failure::Config(format!(
                "addDirs: {} starts with ~/ but HOME is not set",
                path.display()
            ))),
        },
        Err(_) => Ok(path.to_path_buf()),
    }
}

/// Each setting from the first layer that sets it.
pub fn run_settings(
    flags: &SettingFlags,
    env: &Env,
    config: Option<&UserConfig>,
) -> Result<RunSettings, Failure> {
    let from_file = |set: bool| if set { "user" } else { "defaults" };
    let project_instructions = if flags.no_project_instructions {
        Setting { value: false, source: "cli" }
    } else {
        let file = config.and_then(|c| c.project_instructions);
        Setting { value: file.unwrap_or(true), source: from_file(file.is_some()) }
    };
    let prompt_cache = match env.get("ZERO_PROMPT_CACHE") {
        Some(value) => Setting { value: prompt_cache_var(value)?, source: "env:ZERO_PROMPT_CACHE" },
        None => {
            let file = config.and_then(|c| c.prompt_cache);
            Setting { value: file.unwrap_or(true), source: from_file(file.is_some()) }
        }
    };
    let max_budget_usd = match flags.max_budget_usd {
        Some(dollars) => Setting { value: Some(dollars), source: "cli" },
        None => {
            let file = config.and_then(|c| c.max_budget_usd);
            Setting { value: file, source: from_file(file.is_some()) }
        }
    };
    let file_dirs = config.map(|c| c.add_dirs.as_slice()).unwrap_or_default();
    let add_dirs = if !flags.add_dirs.is_empty() {
        Setting { value: flags.add_dirs.clone(), source: "cli" }
    } else {
        let dirs = file_dirs.iter().map(|d| expand_home(d, env)).collect::<Result<_, _>>()?;
        Setting { value: dirs, source: from_file(!file_dirs.is_empty()) }
    };
    Ok(RunSettings {
        project_instructions,
        prompt_cache,
        max_budget_usd,
        add_dirs,
        context_window: config.and_then(|c| c.context_window),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn each_setting_comes_from_the_first_layer_that_sets_it() {
        let file = crate::config::parse_config_bytes(
            br#"{"projectInstructions": false, "promptCache": false, "maxBudgetUsd": 2.5, "addDirs": ["~/docs", "/srv/shared"]}"#,
        )
        .unwrap();
        let home = env(&[("HOME", "/home/u")]);
        let s = run_settings(&SettingFlags::default(), &home, Some(&file)).unwrap();
        assert_eq!(s.project_instructions, Setting { value: false, source: "user" });
        assert_eq!(s.prompt_cache, Setting { value: false, source: "user" });
        assert_eq!(s.max_budget_usd, Setting { value: Some(2.5), source: "user" });
        assert_eq!(s.add_dirs.value, [PathBuf::from("/home/u/docs"), PathBuf::from("/srv/shared")]);
        let flags = SettingFlags {
            no_project_instructions: true,
            max_budget_usd: Some(1.0),
            add_dirs: vec![PathBuf::from("/x")],
        };
        let on = env(&[("HOME", "/home/u"), ("ZERO_PROMPT_CACHE", "ON")]);
        let s = run_settings(&flags, &on, Some(&file)).unwrap();
        assert_eq!(s.project_instructions, Setting { value: false, source: "cli" });
        assert_eq!(s.prompt_cache, Setting { value: true, source: "env:ZERO_PROMPT_CACHE" });
        assert_eq!(s.max_budget_usd, Setting { value: Some(1.0), source: "cli" });
        assert_eq!(s.add_dirs, Setting { value: vec![PathBuf::from("/x")], source: "cli" });
        let none = run_settings(&SettingFlags::default(), &env(&[]), None).unwrap();
        assert_eq!(none.project_instructions, Setting { value: true, source: "defaults" });
        assert_eq!(none.prompt_cache, Setting { value: true, source: "defaults" });
        assert_eq!(none.max_budget_usd, Setting { value: None, source: "defaults" });
        let bad =
            run_settings(&SettingFlags::default(), &env(&[("ZERO_PROMPT_CACHE", "maybe")]), None);
        assert_eq!(
            bad.unwrap_err().message(),
            "Invalid ZERO_PROMPT_CACHE \"maybe\": expected \"on\" or \"off\""
        );
    }

    #[test]
    fn bad_values_in_the_file_name_their_key() {
        let err = |json: &str| crate::config::parse_config_bytes(json.as_bytes()).unwrap_err();
        assert_eq!(err(r#"{"promptCache": "no"}"#), "promptCache must be true or false".into());
        assert_eq!(
            err(r#"{"maxBudgetUsd": 0}"#),
            "maxBudgetUsd must be a number of dollars greater than 0 and at most 1000000".into()
        );
        assert_eq!(
            err(r#"{"addDirs": ["rel/dir"]}"#),
            "addDirs[0] must be an absolute path (or start with ~/)".into()
        );
        assert_eq!(
            err(r#"{"contextWindow": 10}"#),
            "contextWindow must be an integer from 1000 to 100000000".into()
        );
    }
}
