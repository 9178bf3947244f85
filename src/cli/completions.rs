//! `zero completions bash|zsh|fish`: completion scripts made from the flag tables, so a flag
//! cannot be parsed and not completed. Each script completes the commands, each command's
//! flags, the values of the flags that take one of a few words, and files or directories
//! where a flag takes a path.

use super::flags::{Flag, Takes};
use super::{companions, exec, COMMANDS};

/// A shell zero writes completions for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl Shell {
    pub const NAMES: &'static [&'static str] = &["bash", "zsh", "fish"];

    pub fn parse(name: &str) -> Option<Shell> {
        match name {
            "bash" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            "fish" => Some(Shell::Fish),
            _ => None,
        }
    }
}

/// One flag as the scripts see it.
struct FlagView {
    long: &'static str,
    short: Option<char>,
    takes: Takes,
    /// The first line of its help, for the shells that show one.
    help: &'static str,
}

fn options<T: 'static>(flags: impl IntoIterator<Item = &'static Flag<T>>) -> Vec<FlagView> {
    flags
        .into_iter()
        .map(|f| FlagView {
            long: f.long,
            short: f.short,
            takes: f.takes(),
            help: f.help.lines().next().unwrap_or_default(),
        })
        .collect()
}

/// A command as typed after `zero` (`exec`, `sessions list`), its flags, and the words it
/// takes when they are a fixed few (`zero schema 1|2|config`).
struct Completed {
    path: &'static str,
    options: Vec<FlagView>,
    words: &'static [&'static str],
}

/// Every command with flags; the root (`zero -p ...`) takes `exec`'s flags and `-p`.
fn commands() -> Vec<Completed> {
    let mut all =
        vec![Completed { path: "exec", options: options(exec::exec_flags()), words: &[] }];
    let mut root = options(exec::exec_flags());
    root.extend(options([&exec::ROOT_PROMPT]));
    all.push(Completed { path: "", options: root, words: &[] });
    for command in companions::COMPANIONS {
        all.push(Completed {
            path: command.name,
            options: options(command.flags),
            words: command.choices,
        });
    }
    all
}

/// The subcommands of the commands that have them (`sessions`, `mcp`).
fn groups() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut groups: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for command in companions::COMPANIONS {
        if let Some((group, sub)) = command.name.split_once(' ') {
            match groups.iter_mut().find(|(g, _)| *g == group) {
                Some((_, subs)) => subs.push(sub),
                None => groups.push((group, vec![sub])),
            }
        }
    }
    groups
}

/// The completion script for `shell`.
pub fn script(shell: Shell) -> String {
    match shell {
        Shell::Bash => bash(),
        Shell::Zsh => zsh(),
        Shell::Fish => fish(),
    }
}

fn names(option: &FlagView) -> Vec<String> {
    let mut names = vec![format!("--{}", option.long)];
    names.extend(option.short.map(|c| format!("-{c}")));
    names
}

fn bash() -> String {
    let mut out = String::from(
        "# zero completions for bash. Load with: source <(zero completions bash)\n\
         # or save as ~/.local/share/bash-completion/completions/zero\n\
         _zero() {\n\
         \x20   local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command=\n",
    );
    let groups = groups();
    let group_names: Vec<&str> = groups.iter().map(|(g, _)| *g).collect();
    let singles: Vec<&str> =
        COMMANDS.iter().map(|(name, _)| *name).filter(|n| !group_names.contains(n)).collect();
    out.push_str(&format!(
        "    case ${{COMP_WORDS[1]}} in\n        {})\n            command=${{COMP_WORDS[1]}} ;;\n        {})\n            if (( COMP_CWORD > 2 )); then command=\"${{COMP_WORDS[1]}} ${{COMP_WORDS[2]}}\"; else command=${{COMP_WORDS[1]}}; fi ;;\n    esac\n    case $command in\n",
        singles.join("|"),
        group_names.join("|")
    ));
    for (group, subs) in &groups {
        out.push_str(&format!(
            "        {group})\n            COMPREPLY=($(compgen -W \"{} --help\" -- \"$cur\")) ;;\n",
            subs.join(" ")
        ));
    }
    for command in commands() {
        out.push_str(&format!("        \"{}\")\n", command.path));
        out.push_str("            case $prev in\n");
        for option in &command.options {
            let action = match option.takes {
                Takes::Nothing => continue,
                Takes::OneOf(words) => {
                    format!("COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))", words.join(" "))
                }
                Takes::File => {
                    "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))".into()
                }
                Takes::Directory => {
                    "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))".into()
                }
                Takes::Word => "COMPREPLY=()".into(),
            };
            out.push_str(&format!(
                "                {}) {action}; return ;;\n",
                names(option).join("|")
            ));
        }
        out.push_str("            esac\n");
        let flags: Vec<String> = command.options.iter().flat_map(names).collect();
        let mut words: Vec<&str> = command.words.to_vec();
        if command.path.is_empty() {
            words.extend(COMMANDS.iter().map(|(name, _)| *name));
        }
        out.push_str(&format!(
            "            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); else COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); fi ;;\n",
            flags.join(" "),
            words.join(" ")
        ));
    }
    out.push_str("    esac\n}\ncomplete -F _zero zero\n");
    out
}

/// A help line as zsh and fish can quote it: no quotes, brackets or colons.
fn plain(help: &str) -> String {
    help.chars()
        .map(|c| if matches!(c, '\'' | '"' | '[' | ']' | ':' | '\\' | '`' | '$') { ' ' } else { c })
        .collect()
}

fn zsh() -> String {
    let mut out = String::from(
        "#compdef zero\n# zero completions for zsh. Save as _zero in a directory of $fpath\n# (e.g. ~/.zfunc, with fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc)\n\n_zero() {\n    local -a commands\n    commands=(\n",
    );
    for (name, summary) in COMMANDS {
        out.push_str(&format!("        '{name}:{}'\n", plain(summary)));
    }
    out.push_str("    )\n    local command=$words[2]\n");
    let groups = groups();
    for (group, _) in &groups {
        out.push_str(&format!(
            "    if [[ $command == {group} ]] && (( CURRENT > 3 )); then command=\"{group} $words[3]\"; fi\n"
        ));
    }
    out.push_str("    case $command in\n");
    for (group, subs) in &groups {
        out.push_str(&format!(
            "        {group}) _values 'command' {} ;;\n",
            subs.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(" ")
        ));
    }
    // The root's `*` comes last: it takes whatever else was typed (`zero -p ...`).
    let mut ordered = commands();
    let root = ordered.remove(1);
    ordered.push(root);
    for command in ordered {
        let pattern =
            if command.path.is_empty() { "*".to_string() } else { format!("'{}'", command.path) };
        let shift = command.path.split(' ').count() * usize::from(!command.path.is_empty());
        out.push_str(&format!("        {pattern})\n"));
        if shift > 0 {
            out.push_str(&format!(
                "            words=(zero \"${{(@)words[{}, -1]}}\"); (( CURRENT -= {shift} ))\n",
                shift + 2
            ));
        }
        out.push_str("            _arguments -s -S \\\n");
        for option in &command.options {
            let value = match option.takes {
                Takes::Nothing => String::new(),
                Takes::OneOf(words) => format!(":value:({})", words.join(" ")),
                Takes::File => ":file:_files".into(),
                Takes::Directory => ":directory:_files -/".into(),
                Takes::Word => ":value: ".into(),
            };
            for name in names(option) {
                out.push_str(&format!(
                    "                '*{name}[{}]{value}' \\\n",
                    plain(option.help)
                ));
            }
        }
        if command.path.is_empty() {
            out.push_str("                '1:command:->command' \\\n");
        } else if !command.words.is_empty() {
            out.push_str(&format!("                '1:value:({})' \\\n", command.words.join(" ")));
        }
        out.push_str("                '*::word: '\n");
        if command.path.is_empty() {
            out.push_str("            [[ $state == command ]] && _describe 'command' commands\n");
        }
        out.push_str("            ;;\n");
    }
    out.push_str("    esac\n}\n\n_zero \"$@\"\n");
    out
}

fn fish() -> String {
    let mut out = String::from(
        "# zero completions for fish. Save as ~/.config/fish/completions/zero.fish\ncomplete -c zero -f\n",
    );
    let all: Vec<&str> = COMMANDS.iter().map(|(name, _)| *name).collect();
    for (name, summary) in COMMANDS {
        out.push_str(&format!(
            "complete -c zero -n __fish_use_subcommand -a {name} -d '{}'\n",
            plain(summary)
        ));
    }
    let groups = groups();
    for (group, subs) in &groups {
        for sub in subs {
            out.push_str(&format!(
                "complete -c zero -n '__fish_seen_subcommand_from {group}; and not __fish_seen_subcommand_from {}' -a {sub}\n",
                subs.join(" ")
            ));
        }
    }
    for command in commands() {
        let condition = match command.path.split_once(' ') {
            _ if command.path.is_empty() => {
                format!("not __fish_seen_subcommand_from {}", all.join(" "))
            }
            Some((group, sub)) => format!(
                "__fish_seen_subcommand_from {group}; and __fish_seen_subcommand_from {sub}"
            ),
            None => format!("__fish_seen_subcommand_from {}", command.path),
        };
        if !command.words.is_empty() {
            out.push_str(&format!(
                "complete -c zero -n '{condition}' -a '{}'\n",
                command.words.join(" ")
            ));
        }
        for option in &command.options {
            let mut line = format!("complete -c zero -n '{condition}' -l {}", option.long);
            if let Some(c) = option.short {
                line.push_str(&format!(" -s {c}"));
            }
            match option.takes {
                Takes::Nothing => {}
                Takes::OneOf(words) => line.push_str(&format!(" -x -a '{}'", words.join(" "))),
                Takes::File => line.push_str(" -r -F"),
                Takes::Directory => line.push_str(" -x -a '(__fish_complete_directories)'"),
                Takes::Word => line.push_str(" -x"),
            }
            line.push_str(&format!(" -d '{}'\n", plain(option.help)));
            out.push_str(&line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::kit::{skip, Skip, TempDir};

    /// What the bash script offers for `words` (the last one being completed), as bash
    /// itself computes it with the script loaded.
    fn bash_offers(dir: &TempDir, words: &[&str]) -> Vec<String> {
        let script = dir.join("zero.bash");
        std::fs::write(&script, script_for(Shell::Bash)).unwrap();
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let program = format!(
            "source {}; COMP_WORDS=({}); COMP_CWORD={}; _zero; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            quoted.join(" "),
            words.len() - 1
        );
        // Serialized with the bash tool's tests: a call's cleanup reaps the orphans it finds.
        let out = crate::sys::process::serialized(|| {
            std::process::Command::new("bash").args(["--norc", "-c", &program]).output()
        });
        let out = out.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
    }

    fn script_for(shell: Shell) -> String {
        script(shell)
    }

    #[test]
    fn bash_completes_flags_their_values_and_commands_from_the_tables() {
        let dir = TempDir::new("completions");
        assert_eq!(
            bash_offers(&dir, &["zero", "exec", "--ou"]),
            ["--output-format", "--output-schema", "--output-schema-attempts"]
        );
        assert_eq!(bash_offers(&dir, &["zero", "exec", "--auto", ""]), ["low", "medium", "high"]);
        assert_eq!(
            bash_offers(&dir, &["zero", "exec", "-o", "s"]),
            ["stream-json"],
            "a short flag's values too"
        );
        assert_eq!(bash_offers(&dir, &["zero", "sessions", "p"]), ["prune"]);
        assert_eq!(
            bash_offers(&dir, &["zero", "sessions", "prune", "--"]),
            ["--older-than", "--dry-run", "--help"]
        );
        assert_eq!(bash_offers(&dir, &["zero", "schema", ""]), ["1", "2", "config"]);
        assert_eq!(bash_offers(&dir, &["zero", "comp"]), ["completions"]);
        assert_eq!(
            bash_offers(&dir, &["zero", "-p", "hi", "--skip"]),
            ["--skip-permissions-unsafe"]
        );
        // A flag that takes a directory offers the directories there.
        std::fs::create_dir(dir.join("subdir")).unwrap();
        std::fs::write(dir.join("subfile"), "").unwrap();
        let prefix = format!("{}/sub", dir.path.display());
        assert_eq!(
            bash_offers(&dir, &["zero", "exec", "--add-dir", &prefix]),
            [format!("{prefix}dir")]
        );
        // Every flag of every command is in the script.
        let bash = script_for(Shell::Bash);
        for command in commands() {
            for option in &command.options {
                assert!(bash.contains(&format!("--{}", option.long)), "--{}", option.long);
            }
        }
    }

    #[test]
    fn zsh_and_fish_scripts_parse() {
        let dir = TempDir::new("completions");
        for (shell, name) in [(Shell::Zsh, "zsh"), (Shell::Fish, "fish")] {
            let path = dir.join(name);
            std::fs::write(&path, script_for(shell)).unwrap();
            let run = || std::process::Command::new(name).arg("-n").arg(&path).output();
            let Ok(out) = crate::sys::process::serialized(run) else {
                skip(
                    &format!("{name} completions"),
                    Skip::Missing,
                    &format!("{name} is not installed"),
                );
                continue;
            };
            assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }

    #[test]
    fn fish_completes_an_enum_flag_and_the_sessions_commands() {
        let dir = TempDir::new("completions");
        let path = dir.join("zero.fish");
        std::fs::write(&path, script_for(Shell::Fish)).unwrap();
        let program = format!(
            "source {}; complete -C 'zero exec --auto '; complete -C 'zero sessions '",
            path.display()
        );
        let run =
            || std::process::Command::new("fish").args(["--no-config", "-c", &program]).output();
        let Ok(out) = crate::sys::process::serialized(run) else {
            return skip("fish completions", Skip::Missing, "fish is not installed");
        };
        let offered: Vec<&str> = std::str::from_utf8(&out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default())
            .collect();
        assert_eq!(offered, ["high", "low", "medium", "delete", "list", "prune", "search", "show"]);
    }
}
