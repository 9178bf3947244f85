//! Lines from a client, each at most a limit long: a longer line is dropped as it is read
//! (its bytes are never held past the limit) and reported once, so a client that sends 20 MiB
//! on one line costs zero the limit's memory, not the line's, and the next line is read as
//! usual.

use std::io::BufRead;

/// What one read gives.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line, without its `\n` (or `\r\n`); never empty.
    Text(Vec<u8>),
    /// A line past the limit: how many bytes it had (all of them read, none kept).
    TooLong(u64),
    /// The end of input.
    End,
}

/// Reads lines of at most `limit` bytes from `reader`.
pub struct Lines<R> {
    reader: R,
    limit: usize,
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R, limit: usize) -> Lines<R> {
        Lines { reader, limit }
    }

    /// The next line that is not blank. A read error is the end of input.
    pub fn next_line(&mut self) -> std::io::Result<Line> {
        loop {
            let mut line = Vec::new();
            let mut length: u64 = 0;
            let mut over = false;
            loop {
                let buffer = match self.reader.fill_buf() {
                    Ok(buffer) => buffer,
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(err) => return Err(err),
                };
                if buffer.is_empty() {
                    break;
                }
                let (piece, ends) = match buffer.iter().position(|&b| b == b'\n') {
                    Some(at) => (&buffer[..at], Some(at + 1)),
                    None => (buffer, None),
                };
                length += piece.len() as u64;
                if !over && line.len() + piece.len() > self.limit {
                    // Past the limit: what was kept goes, and the rest is only counted.
                    over = true;
                    line = Vec::new();
                }
                if !over {
                    line.extend_from_slice(piece);
                }
                let consumed = ends.unwrap_or(buffer.len());
                self.reader.consume(consumed);
                if ends.is_some() {
                    break;
                }
            }
            if over {
                return Ok(Line::TooLong(length));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if length == 0 && line.is_empty() {
                // Nothing was read at all: the end; a blank line is skipped.
                if self.reader.fill_buf()?.is_empty() {
                    return Ok(Line::End);
                }
                continue;
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Ok(Line::Text(line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], limit: usize) -> Vec<Line> {
        // A small buffer, so lines span many reads.
        let mut lines = Lines::new(std::io::BufReader::with_capacity(4, input), limit);
        let mut out = Vec::new();
        loop {
            let line = lines.next_line().unwrap();
            let end = line == Line::End;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[test]
    fn lines_are_split_trimmed_of_cr_and_blank_ones_skipped() {
        assert_eq!(
            all(b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}", 100),
            [
                Line::Text(b"{\"a\":1}".to_vec()),
                Line::Text(b"{\"b\":2}".to_vec()),
                Line::Text(b"{\"c\":3}".to_vec()),
                Line::End
            ]
        );
        assert_eq!(all(b"", 100), [Line::End]);
        assert_eq!(all(b"\n\n", 100), [Line::End]);
    }

    #[test]
    fn a_line_past_the_limit_is_dropped_and_the_next_one_read() {
        let mut input = vec![b'x'; 1000];
        input.extend_from_slice(b"\nok\n");
        input.extend_from_slice(&[b'y'; 11]);
        assert_eq!(
            all(&input, 10),
            [Line::TooLong(1000), Line::Text(b"ok".to_vec()), Line::TooLong(11), Line::End]
        );
        assert_eq!(all(b"0123456789\n", 10), [Line::Text(b"0123456789".to_vec()), Line::End]);
    }
}
