//! The README's CLI reference, made from the flag tables: a test compares it with the
//! README's text between its markers, so the manual cannot drift from what zero parses.
//! `ZERO_UPDATE_README=1 cargo test --bin zero readme_cli_reference` writes it there.

use super::companions::COMPANIONS;
use super::exec::EXEC_FLAGS;
use super::flags::Flag;

const START: &str =
    "<!-- cli-reference: made from src/cli's flag tables; a test keeps it in step -->\n";
const END: &str = "<!-- cli-reference: end -->\n";

/// A flag's row: its names and value, and its help on one line.
fn row<T>(flag: &Flag<T>) -> String {
    let names = match flag.short {
        Some(c) => format!("-{c}, --{}{}", flag.long, flag.value),
        None => format!("--{}{}", flag.long, flag.value),
    };
    let help = flag.help.replace('\n', " ").replace('|', "\\|");
    format!("| `{}` | {help} |\n", names.replace('|', "\\|"))
}

/// The reference, as the README holds it (between and with its markers).
fn reference() -> String {
    let mut out = String::from(START);
    out.push_str("\n`zero exec [OPTIONS] [PROMPT...]` (and `zero -p PROMPT [OPTIONS]`, the same with text output):\n");
    for section in EXEC_FLAGS {
        out.push_str(&format!("\n| {} | |\n|---|---|\n", section.heading));
        for flag in section.flags {
            out.push_str(&row(flag));
        }
    }
    out.push_str("\nThe other commands (each also takes `-h`, `--help`):\n\n| Command | What it does | Options |\n|---|---|---|\n");
    for command in COMPANIONS {
        let about = command.about.replace('\n', " ");
        let first = about.split(". ").next().unwrap_or_default().trim_end_matches(['.', ' ']);
        let options: Vec<String> = command
            .flags
            .iter()
            .filter(|f| f.long != "help")
            .map(|f| format!("`--{}{}`", f.long, f.value))
            .collect();
        out.push_str(&format!(
            "| `zero {}{}` | {}. | {} |\n",
            command.name,
            command.words,
            first.replace('|', "\\|"),
            options.join(", ").replace('|', "\\|")
        ));
    }
    // `zero acp` takes exec's flags that set a run's defaults, and one of its own.
    let mut acp: Vec<String> = super::exec::ACP_FLAGS.iter().map(|f| format!("`--{f}`")).collect();
    acp.push("`--client-terminal`".to_string());
    out.push_str(&format!(
        "| `zero acp` | Serves editors over the Agent Client Protocol on stdin and stdout (see [Driving zero from an editor](#driving-zero-from-an-editor)). | {} |\n",
        acp.join(", ")
    ));
    out.push('\n');
    out.push_str(END);
    out
}

#[test]
fn readme_cli_reference_matches_the_flag_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        panic!("README.md has no CLI reference markers");
    };
    let current = &readme[start..end + END.len()];
    let made = reference();
    if current != made && std::env::var_os("ZERO_UPDATE_README").is_some() {
        let updated = format!("{}{made}{}", &readme[..start], &readme[end + END.len()..]);
        std::fs::write(path, updated).unwrap();
        return;
    }
    assert!(
        current == made,
        "the README's CLI reference differs from the flag tables; ZERO_UPDATE_README=1 cargo test --bin zero readme_cli_reference writes it"
    );
}
