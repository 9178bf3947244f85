use super::companions::{self, COMPANIONS};
use super::exec::{exec_flags, exec_help};
use super::flags::Slot;
use super::*;

fn exec(args: &[&str]) -> ExecArgs {
    let mut all = vec!["exec"];
    all.extend_from_slice(args);
    match parse(all.iter().map(OsString::from).collect()) {
        Command::Exec(args) => *args,
        other => panic!("expected exec, got {other:?}"),
    }
}

#[test]
fn every_spelling_of_a_valued_flag() {
    for spelling in [&["-m", "x"][..], &["-mx"], &["--model", "x"], &["--model=x"], &["-m=x"]] {
        assert_eq!(exec(spelling).model.as_deref(), Some("x"), "{spelling:?}");
    }
    assert_eq!(exec(&["-m", "a", "-m", "b"]).model.as_deref(), Some("b"));
    assert_eq!(exec(&["-o", "json"]).output_format.as_deref(), Some("json"));
    assert_eq!(
        exec(&["--output-format=stream-json"]).output_format.as_deref(),
        Some("stream-json")
    );
    assert_eq!(exec(&["-C", "/tmp"]).cwd, Some(PathBuf::from("/tmp")));
    assert_eq!(exec(&["-f", "p.txt"]).file, Some(PathBuf::from("p.txt")));
}

#[test]
fn prompt_words_and_options_mix_in_any_order() {
    let args = exec(&["fix", "-m", "gpt-4.1", "the", "bug", "--", "-x"]);
    assert_eq!(args.prompt_words, ["fix", "the", "bug", "-x"]);
    assert_eq!(args.model.as_deref(), Some("gpt-4.1"));
}

#[test]
fn list_flags_accumulate() {
    let args = exec(&["--enabled-tools", "read_file,grep", "--enabled-tools=glob"]);
    assert_eq!(args.enabled_tools, ["read_file,grep", "glob"]);
    assert_eq!(exec(&["--redact-env", "A", "--redact-env", "B"]).redact_env, ["A", "B"]);
    let args = exec(&["--shell-env", "inherit", "--shell-env-keep", "A", "--shell-env-keep=B"]);
    assert_eq!(
        (args.shell_env.as_deref(), args.shell_env_keep),
        (Some("inherit"), vec!["A".to_string(), "B".to_string()])
    );
}

#[test]
fn resume_forms_follow_a11() {
    assert_eq!(exec(&["--resume"]).resume, Some(Resume::Latest));
    assert_eq!(exec(&["--resume="]).resume, Some(Resume::Latest));
    assert_eq!(exec(&["--resume=abc"]).resume, Some(Resume::Id("abc".into())));
    let args = exec(&["--resume", "fix", "it"]);
    assert_eq!(args.resume, Some(Resume::Candidate { word: "fix".into(), index: 0 }));
    assert_eq!(args.prompt_words, ["fix", "it"]);
    let args = exec(&["hello", "--resume"]);
    assert_eq!(args.resume, Some(Resume::Latest));
    let args = exec(&["--resume", "--", "hello"]);
    assert_eq!(args.resume, Some(Resume::Latest));
    assert_eq!(args.prompt_words, ["hello"]);
    let args = exec(&["--resume", "-m", "x"]);
    assert_eq!((args.resume, args.model.as_deref()), (Some(Resume::Latest), Some("x")));
}

#[test]
fn errors_are_kept_and_parsing_continues_to_find_the_output_format() {
    let args = exec(&["--bogus", "-o", "stream-json"]);
    assert_eq!(args.error.as_deref(), Some("invalid option '--bogus'"));
    assert_eq!(args.output_format.as_deref(), Some("stream-json"));
    let args = exec(&["-o", "json", "--model"]);
    assert_eq!(args.error.as_deref(), Some("missing argument for option '--model'"));
    let args = exec(&["--model", "-p", "x"]);
    assert_eq!(
        args.error.as_deref(),
        Some("--model needs a value, but the next word is the flag -p (write --model=VALUE for a value that starts with '-')")
    );
    let args = exec(&["--list-tools=yes", "-o", "json"]);
    assert!(args.error.as_deref().is_some_and(|e| e.contains("--list-tools")));
    assert_eq!(args.output_format.as_deref(), Some("json"));
}

#[test]
fn root_command_takes_p_and_exec_options() {
    let cmd = parse(["-p", "hi", "-m", "x"].iter().map(OsString::from).collect());
    let Command::Exec(args) = cmd else { panic!("expected exec") };
    assert_eq!(args.prompt_words, ["hi"]);
    assert_eq!(args.model.as_deref(), Some("x"));
    assert!(matches!(parse(vec![]), Command::Invalid(_)));
    assert_eq!(
        parse(vec!["sesions".into()]),
        Command::Invalid("unknown command \"sesions\" (did you mean \"sessions\"?); commands: exec, acp, sessions, search, config, doctor, mcp, redact, schema, completions (see zero --help)".into())
    );
    assert!(
        matches!(parse(vec!["hello".into()]), Command::Invalid(m) if m.starts_with("unknown command \"hello\"; "))
    );
    let Command::Exec(args) = parse(["exec", "--modle", "x"].iter().map(OsString::from).collect())
    else {
        panic!()
    };
    assert_eq!(args.error.as_deref(), Some("invalid option '--modle' (did you mean \"--model\"?)"));
    assert_eq!(parse(vec!["--version".into()]), Command::Version);
    assert_eq!(parse(vec!["-V".into()]), Command::Version);
    assert_eq!(parse(vec!["--help".into()]), Command::Help(HELP.to_string()));
    assert_eq!(parse(vec!["exec".into(), "-h".into()]), Command::Help(exec_help()));
}

#[test]
fn sessions_subcommands() {
    let p = |a: &[&str]| parse(a.iter().map(OsString::from).collect());
    assert_eq!(
        p(&["sessions", "list"]),
        Command::Sessions(SessionsArgs::List { json: false, all: false })
    );
    assert_eq!(
        p(&["sessions", "list", "--all", "--json"]),
        Command::Sessions(SessionsArgs::List { json: true, all: true })
    );
    assert_eq!(
        p(&["sessions", "delete", "a", "b"]),
        Command::Sessions(SessionsArgs::Delete { ids: vec!["a".into(), "b".into()] })
    );
    assert_eq!(
        p(&["sessions", "prune", "--older-than", "30", "--dry-run"]),
        Command::Sessions(SessionsArgs::Prune { older_than: "30".into(), dry_run: true })
    );
    assert!(matches!(p(&["sessions", "prune"]), Command::Invalid(_)));
    assert_eq!(
        p(&["search", "--limit", "5", "zero", "search", "--json"]),
        Command::Search(SearchArgs {
            query: vec!["zero".into(), "search".into()],
            json: true,
            limit: Some("5".into()),
            ..SearchArgs::default()
        })
    );
    assert!(matches!(p(&["sessions", "search", "x"]), Command::Search(_)));
    assert_eq!(p(&["config", "--json"]), Command::Config { json: true });
    assert_eq!(p(&["doctor", "--offline"]), Command::Doctor { json: false, offline: true });
    assert_eq!(
        p(&["sessions", "lsit"]),
        Command::Invalid("unknown sessions command \"lsit\" (did you mean \"list\"?); expected list, show, delete, prune or search".into())
    );
    assert_eq!(
        p(&["sessions", "list", "--jsno"]),
        Command::Invalid(
            "invalid option '--jsno' for zero sessions list (did you mean \"--json\"?)".into()
        )
    );
    assert_eq!(
        p(&["sessions", "show", "abc", "--json"]),
        Command::Sessions(SessionsArgs::Show { id: "abc".into(), json: true })
    );
    assert!(matches!(p(&["sessions"]), Command::Invalid(_)));
    assert_eq!(p(&["redact", "--redact-env", "A"]), Command::Redact(vec!["A".into()]));
    assert!(matches!(p(&["redact", "file.txt"]), Command::Invalid(_)));
}

#[test]
fn the_help_names_the_schema_versions_zero_speaks() {
    let list = crate::protocol::events::SchemaVersion::supported();
    assert!(companions::SCHEMA.about.contains(&format!("(versions this zero speaks: {list})")));
    assert!(HELP.contains(&format!("zero schema [{}|config]", list.replace(", ", "|"))));
}

#[test]
fn exec_help_names_every_variable_zero_reads() {
    let help = exec_help();
    for name in crate::config::read_vars() {
        assert!(
            help.contains(&format!(" {name},"))
                || help.contains(&format!(" {name}."))
                || help.contains(&format!("\n{name},")),
            "{name} is not in exec --help"
        );
    }
    assert!(!help.contains("{ENVIRONMENT}"));
}

#[test]
fn help_lines_fit_79_columns() {
    let mut texts = vec![HELP.to_string(), exec_help(), companions::sessions_help()];
    texts.extend(COMPANIONS.iter().map(|c| c.help()));
    for text in &texts {
        for line in text.lines() {
            assert!(line.chars().count() <= 79, "too long: {line}");
        }
    }
}

/// What each `exec` flag is given in `every_declared_flag_is_read`: the words that give it, and
/// the words the run needs beside it. A flag added to the table without an example fails there.
fn exec_example(long: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    let live: &[&str] = &["--live", "-i", "stream-json", "-o", "stream-json"];
    Some(match long {
        "prompt" => (&["--prompt", "hello"], &[]),
        "file" => (&["--file", "p.txt"], &["x"]),
        "input-format" => (&["-i", "stream-json"], &[]),
        "output-format" => (&["-o", "json"], &["x"]),
        "schema-version" => (&["--schema-version", "2"], &["x"]),
        "heartbeat-ms" => (&["--heartbeat-ms", "5"], &["x"]),
        "image" => (&["--image", "a.png"], &["x"]),
        "live" => (&["--live"], &["-i", "stream-json", "-o", "stream-json"]),
        "approvals" => (&["--approvals", "stdin"], live),
        "approval-timeout-ms" => (
            &["--approval-timeout-ms", "5"],
            &["--approvals", "stdin", "--live", "-i", "stream-json", "-o", "stream-json"],
        ),
        "model" => (&["--model", "m"], &["x"]),
        "profile" => (&["--profile", "fast"], &["x"]),
        "reasoning-effort" => (&["-r", "high"], &["x"]),
        "provider" => (&["--provider", "scripted"], &["x"]),
        "script" => (&["--script", "s.json"], &["x"]),
        "max-turns" => (&["--max-turns", "3"], &["x"]),
        "max-output-tokens" => (&["--max-output-tokens", "3"], &["x"]),
        "auto" => (&["--auto", "medium"], &["x"]),
        "skip-permissions-unsafe" => (&["--skip-permissions-unsafe"], &["x"]),
        "enabled-tools" => (&["--enabled-tools", "grep"], &["x"]),
        "disabled-tools" => (&["--disabled-tools", "grep"], &["x"]),
        "list-tools" => (&["--list-tools"], &[]),
        "shell-env" => (&["--shell-env", "inherit"], &["x"]),
        "shell-env-keep" => (&["--shell-env-keep", "HOME"], &["x"]),
        "resume" => (&["--resume=abc"], &["x"]),
        "fork" => (&["--fork", "abc"], &["x"]),
        "ephemeral" => (&["--ephemeral"], &["x"]),
        "cwd" => (&["-C", "/tmp"], &["x"]),
        "redact-env" => (&["--redact-env", "HOME"], &["x"]),
        "add-dir" => (&["--add-dir", "/tmp"], &["x"]),
        "mcp-config" => (&["--mcp-config", "m.json"], &["x"]),
        "sandbox" => (&["--sandbox", "read-only"], &["x"]),
        "sandbox-network" => (&["--sandbox-network", "off"], &["x"]),
        "sandbox-writable" => (&["--sandbox-writable", "/tmp/x"], &["x"]),
        "sandbox-caches" => (&["--sandbox-caches", "off"], &["x"]),
        "sandbox-required" => (&["--sandbox-required"], &["x"]),
        "strict-mcp-config" => (&["--strict-mcp-config"], &["x"]),
        "output-schema" => (&["--output-schema", "s.json"], &["x"]),
        "output-schema-attempts" => {
            (&["--output-schema-attempts", "5"], &["--output-schema", "s.json", "x"])
        }
        "max-budget-usd" => (&["--max-budget-usd", "2"], &["x"]),
        "system-prompt" => (&["--system-prompt", "be brief"], &["x"]),
        "system-prompt-file" => (&["--system-prompt-file", "s.md"], &["x"]),
        "append-system-prompt" => (&["--append-system-prompt", "be brief"], &["x"]),
        "append-system-prompt-file" => (&["--append-system-prompt-file", "s.md"], &["x"]),
        "no-project-instructions" => (&["--no-project-instructions"], &["x"]),
        "record" => (&["--record", "run.json"], &["x"]),
        _ => return None,
    })
}

/// Each declared flag changes what its command does: an `exec` flag changes the run plan, a
/// companion's flag the command it parses to. A flag that is parsed and then never read (as
/// `zero doctor --connectivity` once was) fails here.
#[test]
fn every_declared_flag_is_read() {
    let env = crate::config::Env::from_pairs([("HOME".to_string(), "/home/u".to_string())]);
    let plan = |words: &[&str]| {
        let mut all = vec!["exec"];
        all.extend_from_slice(words);
        match parse(all.iter().map(OsString::from).collect()) {
            Command::Exec(args) => format!("{:?}", crate::run::plan::resolve(&args, &env)),
            other => panic!("{words:?}: {other:?}"),
        }
    };
    for flag in exec_flags() {
        if matches!(flag.slot, Slot::Help | Slot::Version) {
            continue;
        }
        let Some((given, beside)) = exec_example(flag.long) else {
            panic!("--{} has no example in exec_example", flag.long)
        };
        let with: Vec<&str> = given.iter().chain(beside).copied().collect();
        let without = if beside.is_empty() { vec!["x"] } else { beside.to_vec() };
        let (with, without) = (plan(&with), plan(&without));
        assert!(with.starts_with("Ok("), "--{}: {with}", flag.long);
        assert_ne!(with, without, "--{} changes nothing in the plan", flag.long);
    }
    for command in COMPANIONS {
        let words: Vec<&str> = command.name.split(' ').collect();
        let base: &[&str] = match command.name {
            "sessions show" => &["abc"],
            "sessions delete" => &["abc"],
            "sessions prune" => &["--older-than", "3"],
            _ => &[],
        };
        for flag in command.flags {
            if matches!(flag.slot, Slot::Help | Slot::Version) {
                continue;
            }
            let long = format!("--{}", flag.long);
            let given: Vec<&str> = match flag.slot {
                Slot::Switch(_) => vec![&long],
                _ => vec![&long, "7"],
            };
            let run = |extra: &[&str]| {
                let all: Vec<&str> = words.iter().chain(base).chain(extra).copied().collect();
                parse(all.iter().map(OsString::from).collect())
            };
            let (with, without) = if flag.long == "older-than" {
                (run(&["--older-than", "9"]), run(&[]))
            } else {
                (run(&given), run(&[]))
            };
            assert!(!matches!(with, Command::Invalid(_) | Command::Help(_)), "{long}: {with:?}");
            assert_ne!(with, without, "zero {} {long} changes nothing", command.name);
        }
    }
}

#[test]
fn each_command_help_lists_its_flags_and_did_you_mean_knows_them() {
    for command in COMPANIONS {
        let help = command.help();
        for flag in command.flags {
            assert!(
                help.contains(&format!("--{}", flag.long)),
                "{}: --{}",
                command.name,
                flag.long
            );
        }
    }
    let exec = exec_help();
    for flag in exec_flags() {
        assert!(exec.contains(&format!("--{}", flag.long)), "exec --help lacks --{}", flag.long);
    }
    let p = |a: &[&str]| parse(a.iter().map(OsString::from).collect());
    assert_eq!(
        p(&["doctor", "--ofline"]),
        Command::Invalid(
            "invalid option '--ofline' for zero doctor (did you mean \"--offline\"?)".into()
        )
    );
    assert_eq!(
        p(&["doctor", "--connectivity"]),
        Command::Invalid("invalid option '--connectivity' for zero doctor".into())
    );
    assert_eq!(p(&["sessions", "list", "--help"]), Command::Help(companions::SESSIONS_LIST.help()));
}

#[test]
fn every_flag_acp_takes_is_an_exec_flag_and_the_help_lists_it() {
    let help = super::exec::acp_help();
    for name in super::exec::ACP_FLAGS {
        assert!(
            super::exec::exec_flags().iter().any(|f| f.long == *name),
            "{name} is no exec flag"
        );
        assert!(help.contains(&format!("--{name}")), "{name} is not in zero acp --help");
    }
    assert!(help.contains("--client-terminal"));
    assert!(!help.contains("--output-format") && !help.contains("--live"));
}
