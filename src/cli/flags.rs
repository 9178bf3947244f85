//! A flag, declared once: its names, the shape of its value, its help line and where its value
//! lands. The parsers, the help texts and the did-you-mean lists are all made from these
//! declarations, so a flag cannot be documented and not parsed, or parsed and not listed.

use std::ffi::OsString;
use std::path::PathBuf;

use lexopt::prelude::*;

/// Where a flag's value lands in its command's arguments, which also says whether it takes one.
pub enum Slot<T> {
    Switch(fn(&mut T) -> &mut bool),
    Text(fn(&mut T) -> &mut Option<String>),
    /// Repeatable: every value is kept, in order.
    Texts(fn(&mut T) -> &mut Vec<String>),
    Path(fn(&mut T) -> &mut Option<PathBuf>),
    Paths(fn(&mut T) -> &mut Vec<PathBuf>),
    /// A flag that reads its value its own way (`--resume[=ID]`).
    Custom(fn(&mut T, &mut lexopt::Parser) -> Result<(), lexopt::Error>),
    /// `-h`, `--help`: the command's help on stdout.
    Help,
    /// `-V`, `--version`.
    Version,
}

/// One flag of one command.
pub struct Flag<T: 'static> {
    pub long: &'static str,
    pub short: Option<char>,
    /// What the help shows after the flag's name: ` <PATH>`, `[=ID]`, or nothing for a switch.
    pub value: &'static str,
    /// The help text; each `\n` starts a continuation line.
    pub help: &'static str,
    pub slot: Slot<T>,
    /// The values the flag takes, when it takes one of a few words (`--auto low|medium|high`):
    /// the completion scripts offer them.
    pub choices: &'static [&'static str],
}

/// What a flag's value is, for the completion scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    Nothing,
    OneOf(&'static [&'static str]),
    File,
    Directory,
    /// Free text: nothing to offer.
    Word,
}

/// What applying a flag asks of the parser.
pub enum Applied {
    Set,
    Help,
    Version,
}

/// Whether a word is one of these flags (`--model`, `--model=x`, `-m`) or `--`: given where a
/// flag's value belongs, it is a mistake rather than a value.
pub fn is_flag<T>(flags: &[&Flag<T>], word: &str) -> bool {
    let name = word.split('=').next().unwrap_or_default();
    if name == "--" {
        return true;
    }
    match (name.strip_prefix("--"), name.strip_prefix('-')) {
        (Some(long), _) => flags.iter().any(|f| f.long == long),
        (None, Some(short)) => {
            let mut chars = short.chars();
            chars.next().is_some_and(|c| flags.iter().any(|f| f.short == Some(c)))
                && chars.next().is_none()
        }
        _ => false,
    }
}

impl<T> Flag<T> {
    pub const fn new(
        long: &'static str,
        short: Option<char>,
        value: &'static str,
        help: &'static str,
        slot: Slot<T>,
    ) -> Flag<T> {
        Flag { long, short, value, help, slot, choices: &[] }
    }

    /// The flag, taking one of `choices`.
    pub const fn one_of(self, choices: &'static [&'static str]) -> Flag<T> {
        Flag { choices, ..self }
    }

    /// What the flag's value is, for completion.
    pub fn takes(&self) -> Takes {
        match &self.slot {
            Slot::Switch(_) | Slot::Help | Slot::Version => Takes::Nothing,
            _ if !self.choices.is_empty() => Takes::OneOf(self.choices),
            _ if self.value.contains("DIR") => Takes::Directory,
            Slot::Path(_) | Slot::Paths(_) => Takes::File,
            _ if self.value.contains("PATH") => Takes::File,
            // `--resume[=ID]`: its value is optional, and only after `=`.
            Slot::Custom(_) => Takes::Nothing,
            _ => Takes::Word,
        }
    }

    /// Whether a parsed argument names this flag.
    pub fn named(&self, arg: &lexopt::Arg<'_>) -> bool {
        match arg {
            Short(c) => self.short == Some(*c),
            Long(l) => *l == self.long,
            Value(_) => false,
        }
    }

    /// Reads the flag's value, if it takes one, and puts it in its slot. `value` reads one
    /// value (commands differ in what they accept there); `shown` is how messages name the flag.
    pub fn apply(
        &self,
        out: &mut T,
        parser: &mut lexopt::Parser,
        value: &dyn Fn(&mut lexopt::Parser, &str) -> Result<OsString, lexopt::Error>,
        shown: &str,
    ) -> Result<Applied, lexopt::Error> {
        match &self.slot {
            Slot::Switch(field) => *field(out) = true,
            Slot::Text(field) => *field(out) = Some(value(parser, shown)?.string()?),
            Slot::Texts(field) => field(out).push(value(parser, shown)?.string()?),
            Slot::Path(field) => *field(out) = Some(value(parser, shown)?.into()),
            Slot::Paths(field) => field(out).push(value(parser, shown)?.into()),
            Slot::Custom(read) => read(out, parser)?,
            Slot::Help => return Ok(Applied::Help),
            Slot::Version => return Ok(Applied::Version),
        }
        Ok(Applied::Set)
    }

    /// The flag's help row, its text starting at column 32 (or two spaces after a long name).
    pub fn help_row(&self) -> String {
        let mut row = match self.short {
            Some(c) => format!("  -{c}, --{}{}", self.long, self.value),
            None => format!("      --{}{}", self.long, self.value),
        };
        let mut lines = self.help.lines();
        // A flag too long for the column gets a line of its own, and its help starts below.
        if row.len() + 2 > HELP_COLUMN {
            row.push('\n');
            row.extend(std::iter::repeat_n(' ', HELP_COLUMN));
        } else {
            row.extend(std::iter::repeat_n(' ', HELP_COLUMN - row.len()));
        }
        row.push_str(lines.next().unwrap_or_default());
        row.push('\n');
        for line in lines {
            row.extend(std::iter::repeat_n(' ', HELP_COLUMN));
            row.push_str(line);
            row.push('\n');
        }
        row
    }
}

/// Where help texts start in a flag's row.
pub const HELP_COLUMN: usize = 31;

/// `-h`, `--help`, the same for every command.
pub const fn help<T>() -> Flag<T> {
    Flag::new("help", Some('h'), "", "print this help", Slot::Help)
}

/// The `--name`s of these flags, for did-you-mean suggestions.
pub fn long_names<T>(flags: &[&Flag<T>]) -> Vec<String> {
    flags.iter().map(|f| format!("--{}", f.long)).collect()
}
