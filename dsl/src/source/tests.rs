#![expect(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use miette::SourceCode;
use proptest::prelude::*;

use super::{Loc, MARGIN, MAX_SOURCE_BYTES, Source, SourceText};
use crate::problem::{Code, Problem};

/// Text with `\n`, `\r\n`, lone `\r` and multi-byte characters, and a span
/// on character boundaries.
fn text_and_span() -> impl Strategy<Value = (String, usize, usize)> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "bc", " ", "\n", "\r\n", "\r", "中"]),
        0..120,
    )
    .prop_flat_map(|pieces| with_span(pieces.concat()))
}

/// The text and a span in it, on character boundaries.
fn with_span(text: String) -> impl Strategy<Value = (String, usize, usize)> {
    let boundaries: Vec<usize> = (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    let n = boundaries.len();
    (0..n, 0..n).prop_map(move |(a, b)| {
        let (start, end) = (boundaries[a.min(b)], boundaries[a.max(b)]);
        (text.clone(), start, end - start)
    })
}

proptest! {
    #[test]
    fn snippets_are_those_miette_reads_from_the_whole_text(
        (text, offset, len) in text_and_span(),
        before in 0usize..4,
        after in 0usize..4,
    ) {
        let span = (offset, len).into();
        let whole = text.as_str().read_span(&span, before, after).unwrap();
        let source = SourceText(Source::new("f.kb", text.clone()));
        let fast = source.read_span(&span, before, after).unwrap();
        prop_assert_eq!(fast.data(), whole.data());
        prop_assert_eq!(fast.span(), whole.span());
        prop_assert_eq!(fast.line(), whole.line());
        prop_assert_eq!(fast.line_count(), whole.line_count());
    }

    #[test]
    fn positions_count_lines_and_characters((text, offset, _) in text_and_span()) {
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        prop_assert_eq!(Source::new("f.kb", text.clone()).line_col(offset), (line, column));
    }
}

/// Text with lines far longer than a snippet shows, and a span in it.
fn long_lines_and_span() -> impl Strategy<Value = (String, usize, usize)> {
    prop::collection::vec(
        prop::sample::select(vec!["a", " ", "\n", "\r\n", "\r", "中", "\t"]),
        0..40,
    )
    .prop_flat_map(|pieces| {
        let long = ["x".repeat(70_000), "磁".repeat(500)];
        let text: String = pieces
            .iter()
            .enumerate()
            .map(|(i, piece)| match i % 7 {
                3 => long[0].as_str(),
                5 => long[1].as_str(),
                _ => piece,
            })
            .collect();
        with_span(text)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn problems_on_long_lines_render_a_window_of_them((text, start, len) in long_lines_and_span()) {
        let src = Source::new("f.kb", text.clone());
        let loc = Loc::new(src, start, start + len);
        let problem = Problem::error(Code::ALL[0], &loc, "a problem").with_label("this");
        let mut out = String::new();
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .render_report(&mut out, &problem)
            .unwrap();
        let widest = out.lines().map(|line| line.chars().count()).max().unwrap_or(0);
        prop_assert!(widest < 6 * MARGIN, "a line of {widest} characters:\n{out}");
        prop_assert!(out.contains("[f.kb:"), "{out}");
    }
}

#[test]
fn a_span_past_the_end_is_out_of_bounds() {
    let source = SourceText(Source::new("f.kb", "abc\ndef"));
    assert!(source.read_span(&(20, 1).into(), 1, 1).is_err());
    assert_eq!(Source::new("f.kb", "abc\ndef").line_col(20), (2, 4));
}

#[test]
fn offsets_beyond_what_a_location_holds_point_past_any_source() {
    let src = Source::new("f.kb", "abc");
    let loc = Loc::new(src, 1, MAX_SOURCE_BYTES + 10);
    assert_eq!((loc.start(), loc.end()), (1, MAX_SOURCE_BYTES));
    assert_eq!(loc.text(), "", "a span past the end covers no text");
    let loc = Loc::new(Source::new("f.kb", "abc"), 1, 3);
    assert_eq!((loc.start(), loc.end(), loc.text()), (1, 3, "bc"));
}
