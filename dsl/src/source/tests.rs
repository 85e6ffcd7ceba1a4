#![expect(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use miette::SourceCode;
use proptest::prelude::*;

use super::{Source, SourceText};

/// Text with `\n`, `\r\n`, lone `\r` and multi-byte characters, and a span
/// on character boundaries.
fn text_and_span() -> impl Strategy<Value = (String, usize, usize)> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "bc", " ", "\n", "\r\n", "\r", "中"]),
        0..120,
    )
    .prop_flat_map(|pieces| {
        let text = pieces.concat();
        let boundaries: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        let n = boundaries.len();
        (Just(text), Just(boundaries), 0..n, 0..n)
    })
    .prop_map(|(text, boundaries, a, b)| {
        let (start, end) = (boundaries[a.min(b)], boundaries[a.max(b)]);
        (text, start, end - start)
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

#[test]
fn a_span_past_the_end_is_out_of_bounds() {
    let source = SourceText(Source::new("f.kb", "abc\ndef"));
    assert!(source.read_span(&(20, 1).into(), 1, 1).is_err());
    assert_eq!(Source::new("f.kb", "abc\ndef").line_col(20), (2, 4));
}
