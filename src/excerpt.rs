//! This module defines [`Excerpt`]: the source text a diagnostic shows, with true line and column numbers, cut
//! to a window around its label on a long line, and byte ranges snapped to character boundaries.
//!
//! miette pads a label to its column with a format width, which Rust limits to 65,535: a label further right
//! panics. Nobody reads a 70,000-character line either, so a line longer than [`LONG_LINE`] bytes is shown as
//! the [`WINDOW`] bytes or so around the label, and a label on it covers at most [`LONG_LABEL`] bytes.

use std::ops::Range;
use std::sync::Arc;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

/// A line longer than this many bytes is shown as a window around the label.
pub const LONG_LINE: usize = 400;
/// Bytes shown on each side of a label on a long line.
pub const WINDOW: usize = 80;
/// The most bytes a label on a long line underlines.
pub const LONG_LABEL: usize = 160;

/// The largest character boundary of `text` at or before `i` (`text.len()` past the end).
pub fn floor_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary of `text` at or after `i` (`text.len()` past the end).
pub fn ceil_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `range` inside `text`, both ends on character boundaries (the start moved back, the end forward).
pub fn snap(text: &str, range: Range<usize>) -> Range<usize> {
    let start = floor_boundary(text, range.start);
    start..ceil_boundary(text, range.end.max(start))
}

/// `text` safe to print on a terminal: control characters a file or rule put there (an escape sequence that sets
/// the window title, a bell, an 8-bit CSI) are shown as `\u{1b}`-style escapes instead of acting. Kept as they
/// are: line feeds and tabs, and the colour (SGR, `ESC [ … m`) and hyperlink (OSC 8) sequences the diagnostics
/// themselves use.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let acts = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(acts) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let kept = if c == '\u{1b}' {
            sgr_or_link(rest)
        } else {
            None
        };
        if let Some(n) = kept {
            out.push_str(&rest[..n]);
            rest = &rest[n..];
            continue;
        }
        if acts(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out.into()
}

/// The length of the SGR (`ESC [ digits;… m`) or OSC 8 hyperlink (`ESC ] 8 ; params ; URI ESC \`, the URI
/// printable) sequence `text` starts with, if it starts with one.
fn sgr_or_link(text: &str) -> Option<usize> {
    if let Some(rest) = text.strip_prefix("\u{1b}[") {
        let n = rest
            .bytes()
            .take_while(|c| c.is_ascii_digit() || *c == b';')
            .count();
        return (rest.as_bytes().get(n) == Some(&b'm')).then_some(2 + n + 1);
    }
    let rest = text.strip_prefix("\u{1b}]8;")?;
    let end = rest.find("\u{1b}\\")?;
    let body = &rest[..end];
    (!body.chars().any(char::is_control)).then_some(4 + end + 2)
}

/// `bytes` as text, or where it stops being UTF-8: `line L, column C (byte N) is not UTF-8` (the column counts the
/// characters before it on its line).
pub fn utf8_text(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&e.as_bytes()[..at]).unwrap_or_default();
        let (line, col) = line_col(valid, valid.len());
        format!("line {line}, column {col} (byte {at}) is not UTF-8; save the file as UTF-8 text")
    })
}

/// 1-based line and column (in characters) of a byte offset (inside a character: that character's).
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..floor_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// The byte offset of a 1-based line and column (in characters); the end of its line past the line's end, the
/// end of the text past the last line.
pub fn offset_of(text: &str, line: usize, col: usize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return offset
                + l.char_indices()
                    .nth(col.saturating_sub(1))
                    .map_or(l.trim_end_matches('\n').len(), |(b, _)| b);
        }
        offset += l.len();
    }
    text.len()
}

/// A source text (or a part of one, placed at its offset, line and column in the whole) that diagnostics show.
#[derive(Clone)]
pub struct Excerpt {
    name: String,
    text: Arc<str>,
    /// Byte offset of `text` in the whole source.
    offset: usize,
    /// 0-based line of `text`'s first byte in the whole source.
    line: usize,
    /// 0-based column (in characters) of `text`'s first byte.
    column: usize,
}

impl std::fmt::Debug for Excerpt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {:?}", self.name, self.line + 1, self.text)
    }
}

impl Excerpt {
    /// A whole text.
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Self {
        Self::part(name, text, 0, 0, 0)
    }

    /// A part of a source: `text` starts at byte `offset`, on 0-based `line`, at 0-based `column`.
    pub fn part(
        name: impl Into<String>,
        text: impl Into<Arc<str>>,
        offset: usize,
        line: usize,
        column: usize,
    ) -> Self {
        Self {
            name: name.into(),
            text: text.into(),
            offset,
            line,
            column,
        }
    }

    /// The name diagnostics show.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The line of `text` holding byte `at`, as a byte range (without its line break).
    fn line_around(&self, at: usize) -> Range<usize> {
        let start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = self.text[at..]
            .find(['\n', '\r'])
            .map_or(self.text.len(), |i| at + i);
        start..end
    }

    /// A label's range (in the whole source's offsets) as it should be drawn: on character boundaries, inside
    /// the text, and on a long line within its line and at most [`LONG_LABEL`] bytes.
    pub fn clip(&self, range: Range<usize>) -> Range<usize> {
        let local = range.start.saturating_sub(self.offset)..range.end.saturating_sub(self.offset);
        let local = snap(&self.text, local);
        let line = self.line_around(local.start);
        if line.len() <= LONG_LINE {
            return local.start + self.offset..local.end + self.offset;
        }
        let end = ceil_boundary(
            &self.text,
            local.end.min(line.end).min(local.start + LONG_LABEL),
        );
        local.start + self.offset..end.max(local.start) + self.offset
    }

    /// 1-based line and column (in characters) of a byte offset of the whole source.
    pub fn line_col(&self, at: usize) -> (usize, usize) {
        let (line, column) = line_col(&self.text, at.saturating_sub(self.offset));
        let column = if line == 1 {
            column + self.column
        } else {
            column
        };
        (self.line + line, column)
    }

    fn contents<'a>(&'a self, local: Range<usize>) -> Box<dyn SpanContents<'a> + 'a> {
        let (line, column) = self.line_col(local.start + self.offset);
        Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            self.text[local.clone()].as_bytes(),
            SourceSpan::new((local.start + self.offset).into(), local.len()),
            line - 1,
            column - 1,
            self.text[local].matches('\n').count(),
        ))
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let start = span
            .offset()
            .checked_sub(self.offset)
            .filter(|&s| s <= self.text.len())
            .ok_or(MietteError::OutOfBounds)?;
        let local = snap(&self.text, start..start + span.len());
        let line = self.line_around(local.start);
        if context_lines_before == 0 && context_lines_after == 0 {
            // The label itself (miette reads the primary label's position from this).
            let end = if line.len() > LONG_LINE {
                ceil_boundary(
                    &self.text,
                    local.end.min(line.end).min(local.start + LONG_LABEL),
                )
            } else {
                local.end
            };
            return Ok(self.contents(local.start..end.max(local.start)));
        }
        if line.len() <= LONG_LINE && local.end <= line.end.max(local.start + 1) {
            // A short one-line label: its lines with the context asked for, unless a context line is long.
            let mut from = line.start;
            for _ in 0..context_lines_before {
                if from == 0 {
                    break;
                }
                let before = self.line_around(floor_boundary(&self.text, from - 1));
                if before.len() > LONG_LINE {
                    break;
                }
                from = before.start;
            }
            let mut to = line.end;
            for _ in 0..context_lines_after {
                let next = self.text[to..]
                    .find('\n')
                    .map(|i| to + i + 1)
                    .filter(|&n| n < self.text.len());
                let Some(next) = next else { break };
                let after = self.line_around(next);
                if after.len() > LONG_LINE {
                    break;
                }
                to = after.end;
            }
            return Ok(self.contents(from..to));
        }
        // A long line: a window around the label's start.
        let from = floor_boundary(
            &self.text,
            line.start.max(local.start.saturating_sub(WINDOW)),
        );
        let label_end = local.end.min(line.end).min(local.start + LONG_LABEL);
        let to = ceil_boundary(
            &self.text,
            line.end.min(label_end.max(local.start) + WINDOW),
        );
        Ok(self.contents(from..to.max(from)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan};

    #[test]
    fn control_characters_are_shown_escaped_and_the_diagnostics_own_colours_and_links_kept() {
        let title = "rule \u{1b}]0;owned\u{7}x\u{9b}2J done\r";
        assert_eq!(
            printable(title),
            "rule \\u{1b}]0;owned\\u{7}x\\u{9b}2J done\\u{d}"
        );
        let own =
            "\u{1b}[1;31merror\u{1b}[0m\tat\n\u{1b}]8;;https://e/x\u{1b}\\link\u{1b}]8;;\u{1b}\\";
        assert_eq!(printable(own), own);
        assert!(matches!(
            printable("plain text\n"),
            std::borrow::Cow::Borrowed(_)
        ));
        // An unfinished sequence is escaped, not kept.
        assert_eq!(printable("\u{1b}[31"), "\\u{1b}[31");
    }

    #[derive(Debug, thiserror::Error)]
    #[error("bad")]
    struct Bad {
        code: Excerpt,
        label: Range<usize>,
    }

    impl Diagnostic for Bad {
        fn source_code(&self) -> Option<&dyn SourceCode> {
            Some(&self.code)
        }
        fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
            let r = self.code.clip(self.label.clone());
            Some(Box::new(std::iter::once(
                LabeledSpan::new_primary_with_span(Some("here".to_owned()), (r.start, r.len())),
            )))
        }
    }

    fn render(source: Excerpt, label: Range<usize>) -> String {
        let mut out = String::new();
        GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_width(80)
            .render_report(
                &mut out,
                &Bad {
                    code: source,
                    label,
                },
            )
            .unwrap();
        out
    }

    #[test]
    fn a_label_past_column_65535_renders_as_a_window_with_its_true_position() {
        let text = format!("first\nx = \"{}\" ) y\nlast", "x".repeat(70_000));
        let at = text.find(") y").unwrap();
        let out = render(Excerpt::new("r.rq", text.as_str()), at..at + 1);
        assert!(out.contains("[r.rq:2:70008]"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() < 400), "{out}");
    }

    #[test]
    fn a_long_label_on_a_long_line_is_cut() {
        let text = "y".repeat(100_000);
        let out = render(Excerpt::new("t", text.as_str()), 5..90_000);
        assert!(out.lines().all(|l| l.chars().count() < 400), "{out}");
    }

    #[test]
    fn offsets_inside_a_character_snap_to_its_boundaries() {
        let text = "aé\n€b";
        assert_eq!(snap(text, 2..2), 1..3);
        assert_eq!(snap(text, 2..5), 1..7);
        let e = Excerpt::new("t", text);
        assert_eq!(e.line_col(2), (1, 2));
        assert_eq!(e.line_col(6), (2, 1));
        let out = render(e, 2..3);
        assert!(out.contains("[t:1:2]"), "{out}");
    }

    #[test]
    fn a_part_reports_lines_and_columns_of_the_whole_source() {
        let e = Excerpt::part("t", "abc\ndef", 100, 9, 4);
        assert_eq!(e.line_col(101), (10, 6));
        assert_eq!(e.line_col(105), (11, 2));
        let out = render(e, 105..106);
        assert!(out.contains("[t:11:2]"), "{out}");
    }

    #[test]
    fn line_and_column_round_trip() {
        let text = "ab\ncdé\nf";
        let off = offset_of(text, 2, 3);
        assert_eq!(&text[off..off + 2], "é");
        assert_eq!(line_col(text, off), (2, 3));
        assert_eq!(line_col(text, off + 1), (2, 3));
        assert_eq!(offset_of(text, 9, 1), text.len());
    }

    #[test]
    fn context_lines_are_shown_when_short() {
        let out = render(Excerpt::new("t", "one\ntwo\nthree"), 4..7);
        assert!(out.contains("one") && out.contains("three"), "{out}");
    }
}
