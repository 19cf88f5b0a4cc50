//! YAML 1.1 scalar resolution, as PyYAML's SafeLoader resolves a plain scalar's text, and
//! the explicit tags it constructs (`!!str 123` is the string "123").

use super::ErrorKind;

/// What a scalar resolved to when it was parsed (quoted and block scalars are strings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Resolved {
    Str,
    Null,
    Bool,
    Int,
    Float,
    /// `!!binary`: the text holds the decoded bytes.
    Binary,
}

/// The explicit tags wisp reads: YAML 1.1's core types, as `!!name`. Others (`!local`,
/// `!!timestamp`, `!!set`, verbatim `!<...>`) are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tag {
    Str,
    Int,
    Bool,
    Float,
    Null,
    Binary,
    Map,
    Seq,
}

impl Tag {
    /// The tag written `text` (`!!str`), if wisp reads it.
    pub(super) fn parse(text: &[u8]) -> Option<Tag> {
        // One string, not a table of slices: smaller.
        const TAGS: [Tag; 8] = [Tag::Str, Tag::Int, Tag::Bool, Tag::Float, Tag::Null, Tag::Binary, Tag::Map, Tag::Seq];
        let name = text.strip_prefix(b"!!")?;
        crate::text::word_index("str int bool float null binary map seq", name).map(|i| TAGS[i])
    }
}

/// YAML 1.1's booleans, lowercase.
const BOOL_WORDS: &str = "yes no true false on off";

/// A scalar under an explicit tag, as PyYAML's constructor for the tag reads its text
/// (plain, quoted or block alike), and its length after: `!!null` is null whatever the
/// text, `!!bool` takes the six words in any case, `!!float` also a decimal integer
/// (`!!float 1` is 1.0), `!!binary`'s base64 is decoded in place. `None` when the text is
/// not one (`!!int abc`), or for a collection's tag.
pub(super) fn resolve_tagged(tag: Tag, text: &mut [u8]) -> Option<(Resolved, usize)> {
    let resolved = match tag {
        Tag::Str => Resolved::Str,
        Tag::Null => Resolved::Null,
        Tag::Bool if crate::text::word_index_ignoring_case(BOOL_WORDS, text).is_some() => Resolved::Bool,
        Tag::Int if matches!(int_value(text), Some(Ok(_))) => Resolved::Int,
        Tag::Float if is_float(text) || is_decimal(text) => Resolved::Float,
        Tag::Binary => {
            // Python's decoder wants the padding that wisp's tolerates.
            let padded = text.iter().filter(|b| !b.is_ascii_whitespace()).count() % 4 == 0;
            let decoded = crate::base64::decode_in_place(text).ok().filter(|_| padded)?;
            return Some((Resolved::Binary, decoded));
        }
        _ => return None,
    };
    Some((resolved, text.len()))
}

/// A YAML 1.1 integer in decimal or octal digits (`1`, `010`, `1:30`): what Python's
/// `float` reads of one (`010` is 10.0), not `0x` and `0b`.
fn is_decimal(text: &[u8]) -> bool {
    matches!(int_value(text), Some(Ok(_))) && !text.iter().any(|&b| b == b'x' || b == b'b')
}
pub(super) fn decimal_digits(text: &[u8]) -> u64 {
    text.iter().filter(|b| b.is_ascii_digit()).fold(0u64, |n, &d| n.saturating_mul(10).saturating_add(u64::from(d - b'0')))
}

pub(super) fn split_sign(text: &[u8]) -> (bool, &[u8]) {
    match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    }
}
/// PyYAML's SafeLoader resolvers, for a plain scalar's text.
pub(super) fn resolve(text: &[u8]) -> Result<Resolved, ErrorKind> {
    Ok(match text {
        b"" | b"~" => Resolved::Null,
        _ if in_three_cases(text, "null") => Resolved::Null,
        _ if in_three_cases(text, BOOL_WORDS) => Resolved::Bool,
        b"<<" => return Err(ErrorKind::MergeKey),
        b"=" => return Err(ErrorKind::ValueKey),
        _ if is_float(text) => Resolved::Float,
        _ => match int_value(text) {
            Some(Ok(_)) => Resolved::Int,
            Some(Err(())) => return Err(ErrorKind::BadInteger),
            None => Resolved::Str,
        },
    })
}

/// One of `words` (lowercase, separated by spaces) as PyYAML's resolvers spell it:
/// lowercase, capitalised or uppercase (`null`, `Null`, `NULL`, not `nULL`). Written as
/// a rule, not as the eighteen spellings: a match on byte strings costs about ten bytes of
/// code per character.
fn in_three_cases(text: &[u8], words: &str) -> bool {
    let rest = text.get(1..).unwrap_or(b"");
    let spelled = |word: &[u8]| {
        let lowercase_rest = word.get(1..) == Some(rest);
        crate::text::eq_ignoring_case(text, word) && (lowercase_rest || text.iter().all(u8::is_ascii_uppercase))
    };
    words.split(' ').any(|word| spelled(word.as_bytes()))
}

fn digit_or_underscore(b: &u8) -> bool {
    b.is_ascii_digit() || *b == b'_'
}

/// `[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?` (the part before the dot may also
/// be sexagesimal), `[-+]?\.inf` and `\.nan` in their three spellings; a bare `.5` takes
/// no sign, as in PyYAML's expression.
fn is_float(text: &[u8]) -> bool {
    let (_, body) = split_sign(text);
    let signed = body.len() < text.len();
    if body.strip_prefix(b".").is_some_and(|word| in_three_cases(word, "inf")) || (!signed && matches!(body, b".nan" | b".NaN" | b".NAN")) {
        return true;
    }
    let span = |from: usize, class: fn(&u8) -> bool| body.get(from..).map_or(0, |rest| rest.iter().take_while(|b| class(b)).count());
    let mut i;
    if body.first().is_some_and(u8::is_ascii_digit) {
        i = span(0, digit_or_underscore);
        let mut sexagesimal = false;
        while body.get(i) == Some(&b':') {
            let digits = span(i + 1, u8::is_ascii_digit);
            if !(digits == 1 || digits == 2 && body[i + 1] <= b'5') {
                return false;
            }
            i += 1 + digits;
            sexagesimal = true;
        }
        if body.get(i) != Some(&b'.') {
            return false;
        }
        i += 1 + span(i + 1, digit_or_underscore);
        if sexagesimal {
            return i == body.len();
        }
    } else {
        if signed || body.first() != Some(&b'.') || !body.get(1).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        i = 1 + span(1, digit_or_underscore);
    }
    if matches!(body.get(i), Some(b'e' | b'E')) {
        let digits = span(i + 2, u8::is_ascii_digit);
        if !matches!(body.get(i + 1), Some(b'+' | b'-')) || digits == 0 {
            return false;
        }
        i += 2 + digits;
    }
    i == body.len()
}

/// A YAML 1.1 integer's value: `None` when `text` is not one, `Some(Err)` when it is but
/// has no digits (`0x_`, which PyYAML fails on too) or does not fit in 64 bits.
pub(super) fn int_value(text: &[u8]) -> Option<Result<i64, ()>> {
    let (negative, body) = split_sign(text);
    let (radix, digits) = match body {
        [b'0', b'b', rest @ ..] => (2, rest),
        [b'0', b'x', rest @ ..] => (16, rest),
        [b'0', rest @ ..] if !rest.is_empty() => (8, rest),
        [b'1'..=b'9', ..] => (10, body),
        [b'0'] => (10, body),
        _ => return None,
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: Option<u64> = Some(0);
    let mut seen_digit = false;
    let mut segments = digits.split(|&b| b == b':');
    let first = segments.next().unwrap_or(b"");
    for &b in first {
        if b == b'_' {
            continue;
        }
        let digit = (b as char).to_digit(radix)?;
        value = value.and_then(|v| v.checked_mul(u64::from(radix))?.checked_add(u64::from(digit)));
        seen_digit = true;
    }
    for segment in segments {
        if radix != 10 || !(segment.len() == 1 || segment.len() == 2 && segment[0] <= b'5') || !segment.iter().all(u8::is_ascii_digit) {
            return None;
        }
        value = value.and_then(|v| v.checked_mul(60)?.checked_add(decimal_digits(segment)));
    }
    // An octal `0_` is 0 to PyYAML, which only fails on `0b_` and `0x_`.
    if !seen_digit && radix != 8 {
        return Some(Err(()));
    }
    let value = value.ok_or(());
    Some(value.and_then(|v| if negative { 0i64.checked_sub_unsigned(v).ok_or(()) } else { i64::try_from(v).map_err(|_| ()) }))
}
