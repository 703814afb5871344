//! The shapes of a value that say it is no secret but a name, a number or a version: an
//! identifier (snake, dotted or camel case), a UUID, a code constant, a version string;
//! and the Shannon entropy that says a value is random.
//! The validators (`validate.rs`) ask them of the values assigned to secret-like names.

/// Identifiers and paths rather than secrets: `STRIPE_KEY_V2`,
/// `config.auth.client2`, `prod/db/main-2024`: every segment between
/// separators is all letters or all digits.
pub fn is_identifier_like(value: &[u8]) -> bool {
    let mut segments = value
        .split(|byte| matches!(byte, b'_' | b'-' | b'.' | b'/' | b':'))
        .filter(|segment| !segment.is_empty())
        .peekable();
    let mut count = 0usize;
    let mut all_plain = true;
    while let Some(segment) = segments.next() {
        count += 1;
        // A word, a number, or a word with a numeric suffix (`client2`).
        let letters = segment
            .iter()
            .position(|byte| !byte.is_ascii_alphabetic())
            .unwrap_or(segment.len());
        let plain = segment
            .get(letters..)
            .is_some_and(|rest| rest.iter().all(u8::is_ascii_digit));
        all_plain &= plain;
        if !all_plain && segments.peek().is_some() {
            return false;
        }
    }
    count >= 2 && all_plain
}

/// A dotted name (`k8s.replicaset.uid`, OpenTelemetry's semantic-convention attribute
/// keys): lower-case segments starting with a letter, at least half of them plain words.
pub fn is_dotted_identifier(value: &[u8]) -> bool {
    let segments: Vec<&[u8]> = value.split(|b| *b == b'.').collect();
    segments.len() >= 2
        && segments.iter().all(|segment| {
            segment.first().is_some_and(u8::is_ascii_lowercase)
                && segment
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
        })
        && 2 * segments
            .iter()
            .filter(|segment| segment.iter().all(|b| b.is_ascii_lowercase() || *b == b'_'))
            .count()
            >= segments.len()
}

/// A camel-case identifier (`oidExtKeyUsageMicrosoftKeyRecovery3`, `transportCredsForS2A`):
/// letters and digits only, at least three words of two or more lower-case letters (with a
/// vowel), two of
/// them starting with a capital (a random lower-case value has long runs but no humps), and
/// those words at least four fifths of it. Random base62 is mostly short runs.
pub fn is_camel_identifier(value: &[u8]) -> bool {
    if !value.iter().all(u8::is_ascii_alphanumeric) {
        return false;
    }
    let (mut words, mut humps, mut covered, mut index) = (0usize, 0usize, 0usize, 0usize);
    while index < value.len() {
        let start = index;
        if value.get(index).is_some_and(u8::is_ascii_uppercase) {
            index += 1;
        }
        let lower = value
            .get(index..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| b.is_ascii_lowercase())
            .count();
        // A word has a vowel: `Dbcfnv` or `Qjgth` in a random key is no word.
        let vowel = value
            .get(start..index + lower)
            .unwrap_or_default()
            .iter()
            .any(|b| {
                matches!(
                    b.to_ascii_lowercase(),
                    b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
                )
            });
        if lower >= 2 && vowel {
            humps += usize::from(index > start);
            index += lower;
            words += 1;
            covered += index - start;
        } else {
            index = start + 1;
        }
    }
    words >= 3 && humps >= 2 && 5 * covered >= 4 * value.len()
}

/// `8-4-4-4-12` hex digits.
pub fn is_uuid(value: &[u8]) -> bool {
    value.len() == 36
        && value.iter().enumerate().all(|(i, b)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *b == b'-'
            } else {
                b.is_ascii_hexdigit()
            }
        })
}

/// A constant of code, not a literal secret: a number with a type suffix (`16384u32`,
/// `0x8031005Cu32`, `2i32`) or another constant's SCREAMING_SNAKE name
/// (`FLG_ADDREG_64BITKEY`).
pub fn is_code_constant(value: &[u8]) -> bool {
    let number = {
        let body = value
            .strip_prefix(b"0x")
            .or_else(|| value.strip_prefix(b"0X"))
            .unwrap_or(value);
        let hex = body.len() < value.len();
        // Decimal digits, or hex ones after `0x`: a hex secret without `0x` is no number.
        let digits = body
            .iter()
            .take_while(|b| {
                **b == b'_'
                    || if hex {
                        b.is_ascii_hexdigit()
                    } else {
                        b.is_ascii_digit()
                    }
            })
            .count();
        let suffix = body.get(digits..).unwrap_or_default();
        digits > 0
            && matches!(
                suffix,
                b"" | b"u8"
                    | b"u16"
                    | b"u32"
                    | b"u64"
                    | b"u128"
                    | b"usize"
                    | b"i8"
                    | b"i16"
                    | b"i32"
                    | b"i64"
                    | b"i128"
                    | b"isize"
                    | b"f32"
                    | b"f64"
                    | b"u"
                    | b"l"
                    | b"ul"
                    | b"ull"
                    | b"ll"
                    | b"L"
                    | b"UL"
                    | b"ULL"
                    | b"LL"
            )
    };
    let screaming = value.contains(&b'_')
        && value.first().is_some_and(u8::is_ascii_uppercase)
        && value
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_');
    number || screaming
}

/// Version strings and dates: digits and dots with an optional `v`.
pub fn is_version_like(value: &[u8]) -> bool {
    let body = value.strip_prefix(b"v").unwrap_or(value);
    let dots = memchr::memchr_iter(b'.', body).count();
    // `1.2.3`, or a packaging version with a suffix (`4.13+dfsg1-1+deb12u1`).
    let suffixed = dots >= 1 && body.iter().any(|b| matches!(b, b'+' | b'-' | b'~'));
    (dots >= 2 || suffixed)
        && body
            .split(|b| *b == b'-' || *b == b'+')
            .next()
            .is_some_and(|core| core.iter().all(|b| b.is_ascii_digit() || *b == b'.'))
}

/// Shannon entropy in bits per byte.
pub fn shannon_entropy(bytes: &[u8]) -> f64 {
    let Ok(total) = u32::try_from(bytes.len()) else {
        return 0.0;
    };
    if total == 0 {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &byte in bytes {
        if let Some(count) = counts.get_mut(usize::from(byte)) {
            *count += 1;
        }
    }
    let total = f64::from(total);
    counts
        .iter()
        .filter(|&&count| count > 0)
        .map(|&count| {
            let p = f64::from(count) / total;
            -p * p.log2()
        })
        .sum()
}
