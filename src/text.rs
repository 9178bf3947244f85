//! Small text helpers used everywhere: one-line summaries and cuts by characters or bytes.
//! Cut only text that is already redacted: a secret cut in half can no longer be recognised.

/// Collapses line breaks and runs of whitespace so a message is one line.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// At most `max` characters of `text`, with `...` when it was cut.
pub fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((end, _)) => format!("{}...", &text[..end]),
    }
}

/// A prefix of at most `cap` bytes ending on a character boundary, and whether it was cut.
pub fn cap_utf8(text: &str, cap: usize) -> (&str, bool) {
    if text.len() <= cap {
        return (text, false);
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// One line of at most 300 characters, cut at a word boundary where there is one: the text is
/// redacted later, and a secret cut in half could no longer be recognised.
pub fn summarize(text: &str) -> String {
    let line = one_line(text);
    if line.chars().count() <= 300 {
        return line;
    }
    let cut: String = line.chars().take(300).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > 0 => &cut[..space],
        _ => &cut[..],
    };
    format!("{cut}...")
}

/// Text for a terminal: C0 and C1 control characters (escape sequences, OSC 52 clipboard
/// writes, screen clears, carriage returns) are shown escaped, so model text, tool output and
/// file names cannot drive the terminal or forge rows. Newlines are kept unless `one_line`;
/// tabs are kept.
pub fn terminal_safe(text: &str, one_line: bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\t' && (one_line || c != '\n');
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !unsafe_char(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A file name as the search tools show it: every control character escaped (tabs too), the
/// characters that reorder text on screen (bidirectional controls) escaped, and a backslash
/// doubled, so one name cannot pass for two entries, for a match, or for another name.
pub fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    let bidi = |c: char| matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let escaped = |c: char| c.is_control() || c == '\\' || bidi(c);
    if !name.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 16);
    for c in name.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if escaped(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The text with its `%XX` escapes decoded, when there are some and the bytes they make are
/// UTF-8 (`sk%2Dproj%2D…` reads `sk-proj-…`, so redaction can recognise what it encodes);
/// otherwise the text as it is.
pub fn percent_decoded(text: &str) -> std::borrow::Cow<'_, str> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = text.as_bytes();
    if !bytes.windows(3).any(|w| w[0] == b'%' && hex(w[1]).is_some() && hex(w[2]).is_some()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push(high << 4 | low);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    match String::from_utf8(out) {
        Ok(decoded) => std::borrow::Cow::Owned(decoded),
        Err(_) => std::borrow::Cow::Borrowed(text),
    }
}

/// The encoded spellings of a value that differ from it, as encoders write them: a space as
/// `%20`, `+` (forms) or as it is; the URL's reserved characters (`/`, `:`, `@`, `&` ..)
/// encoded (a component) or kept (a whole URL, or a text decoded once); hex in upper or
/// lower case; and every byte encoded. A secret in any of these is still the secret.
pub fn percent_encodings(value: &str) -> Vec<String> {
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~');
    let reserved = |b: u8| b"!#$&'()*+,/:;=?@[]".contains(&b);
    let hex = |out: &mut String, b: u8, lower: bool| {
        let digits = if lower { b"0123456789abcdef" } else { b"0123456789ABCDEF" };
        out.push('%');
        out.push(digits[(b >> 4) as usize] as char);
        out.push(digits[(b & 15) as usize] as char);
    };
    // (space as, keep reserved, encode the rest, lower-case hex, encode every byte)
    let encode = |space: &str, keep_reserved: bool, rest: bool, lower: bool, every: bool| {
        let mut out = String::with_capacity(value.len() * 3);
        for &b in value.as_bytes() {
            if b == b' ' && !every {
                out.push_str(space);
            } else if !every && (unreserved(b) || (keep_reserved && reserved(b)) || !rest) {
                out.push(b as char);
            } else {
                hex(&mut out, b, lower);
            }
        }
        out
    };
    let mut forms = Vec::new();
    let mut add = |form: String| {
        if form != value && !forms.contains(&form) {
            forms.push(form);
        }
    };
    for lower in [false, true] {
        for keep_reserved in [false, true] {
            for space in ["%20", "+"] {
                add(encode(space, keep_reserved, true, lower, false));
            }
        }
        add(encode("", false, true, lower, true));
    }
    // Decoded once from a form (`a+c%2Fme` reads `a+c/me`): only the spaces stay encoded.
    add(encode("+", true, false, false, false));
    forms
}

/// The candidates nearest to `word` by edit distance (case-insensitive), at most `n`, nearest
/// first; only those close enough to be a likely typo when `typos_only`.
pub fn closest<'a>(word: &str, candidates: &[&'a str], n: usize, typos_only: bool) -> Vec<&'a str> {
    let word = word.to_ascii_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .iter()
        .map(|c| (edit_distance(&word, &c.to_ascii_lowercase()), *c))
        .filter(|(d, c)| !typos_only || *d <= (c.chars().count() / 3).max(2))
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(n).map(|(_, c)| c).collect()
}

/// ` (did you mean "x"?)` when `word` is a likely typo of one of `known`, else nothing.
pub fn did_you_mean(word: &str, known: &[&str]) -> String {
    match closest(word, known, 1, true).first() {
        Some(near) => format!(" (did you mean \"{near}\"?)"),
        None => String::new(),
    }
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_collapses_whitespace() {
        assert_eq!(
            one_line("No LLM provider configured.\n\nSet  OPENAI_API_KEY."),
            "No LLM provider configured. Set OPENAI_API_KEY."
        );
    }

    #[test]
    fn the_closest_candidates_come_first() {
        let models = ["gpt-4.1", "gpt-4o", "gpt-5", "claude-sonnet-4.5", "gemini-2.5-pro"];
        assert_eq!(closest("gpt4.1", &models, 2, false), ["gpt-4.1", "gpt-4o"]);
        assert_eq!(closest("--modle", &["--model", "--profile"], 3, true), ["--model"]);
        assert!(closest("--xyzzy", &["--model", "--profile"], 3, true).is_empty());
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn cuts_count_characters_and_say_so() {
        assert_eq!(cut_chars("héllo", 5), "héllo");
        assert_eq!(cut_chars("héllo", 2), "hé...");
        assert_eq!(cut_chars("", 0), "");
    }

    #[test]
    fn byte_caps_end_on_a_character() {
        assert_eq!(cap_utf8("héllo", 2), ("h", true));
        assert_eq!(cap_utf8("héllo", 3), ("hé", true));
        assert_eq!(cap_utf8("ab", 5), ("ab", false));
    }

    #[test]
    fn percent_escapes_decode_and_encode() {
        assert_eq!(percent_decoded("sk%2Dproj%2Dabc"), "sk-proj-abc");
        assert_eq!(percent_decoded("100% sure, %zz, %2"), "100% sure, %zz, %2");
        assert_eq!(percent_decoded("%C3%A9t%c3%a9"), "été");
        // Bytes that are no UTF-8: the text stays as it was.
        assert_eq!(percent_decoded("%FF%FE"), "%FF%FE");
        assert_eq!(
            percent_encodings("p@ss w/rd"),
            [
                "p%40ss%20w%2Frd",
                "p%40ss+w%2Frd",
                "p@ss%20w/rd",
                "p@ss+w/rd",
                "%70%40%73%73%20%77%2F%72%64",
                "p%40ss%20w%2frd",
                "p%40ss+w%2frd",
                "%70%40%73%73%20%77%2f%72%64",
            ]
        );
        // Only a space or a byte outside the URL's characters makes a form of its own.
        assert_eq!(
            percent_encodings("ab/cd"),
            ["ab%2Fcd", "%61%62%2F%63%64", "ab%2fcd", "%61%62%2f%63%64"]
        );
        assert_eq!(percent_encodings("ab")[..1], ["%61%62".to_string()]);
    }

    #[test]
    fn summaries_are_one_line_and_cut_at_a_word_where_there_is_one() {
        assert_eq!(summarize("a\n b"), "a b");
        let word = "x".repeat(301);
        assert_eq!(summarize(&word), format!("{}...", "x".repeat(300)));
    }
}
