//! Credentials known by their shape alone, whoever issued them: a short prefix that names
//! the issuer and the kind (`glpat-`, `sk-proj-`, `dop_v1_`, `CCIPAT_`, `hvs.`), then a long
//! random body. Most providers have issued their keys so since about 2021, so that a scanner
//! can tell them from other strings; a rule per provider knows only the providers it was
//! written for. The test here is the shape: the prefix one to three short segments, each all
//! lower-case or all upper-case (with digits), the body at least 20 bytes, random (letters
//! and digits, entropy, no placeholder, no word structure, no path), and the prefix not one
//! that names a digest or an object id.

use super::shapes::{
    is_camel_identifier, is_code_constant, is_dotted_identifier, is_identifier_like, is_uuid,
    is_version_like,
};
use super::spec::RuleSpec;
use super::validate::{base64_decode, plausible_token};

/// The fewest bytes of a body.
const MIN_BODY: usize = 20;

/// First prefix segments (lower-cased) that name no credential: digests, encodings, and the
/// ids of API objects (Stripe's customers and payment intents, `OpenAI`'s completions and
/// threads, Anthropic's messages) that fill test fixtures and logs and look like keys.
const NOT_A_CREDENTIAL: &[&[u8]] = &[
    b"sha1",
    b"sha224",
    b"sha256",
    b"sha384",
    b"sha512",
    b"sha",
    b"md5",
    b"blake2b",
    b"blake2s",
    b"blake3",
    b"crc32",
    b"xxh64",
    b"xxh3",
    b"base64",
    b"hex",
    b"data",
    b"id",
    b"uuid",
    b"guid",
    b"ulid",
    b"hash",
    b"digest",
    b"commit",
    b"rev",
    b"cus",
    b"pi",
    b"ch",
    b"evt",
    b"msg",
    b"chatcmpl",
    b"cmpl",
    b"asst",
    b"thread",
    b"run",
    b"call",
    b"file",
    b"req",
    b"sub",
    b"prod",
    b"price",
    b"acct",
    b"txn",
    b"src",
    b"tok",
    b"card",
    b"seti",
    b"pm",
    b"in",
    b"ii",
    b"po",
    b"cs",
    b"batch",
    b"step",
    b"toolu",
    b"resp",
    b"ftjob",
    b"vs",
    b"diff",
];

/// Whether `value` is a prefixed token: its prefix and body pass the tests above. A prefix
/// that holds one of `known` (the prefixes the provider rules know: `ghp_`, `sntryu_`,
/// `sk_test`) is left to the provider's rule, which knows its exact length and alphabet: a
/// string of that prefix that its rule rejects is no token of that provider (`ghp_` and 37
/// characters).
pub fn prefixed_token_but(value: &[u8], known: &[Vec<u8>]) -> bool {
    let Some((prefix, body)) = split(value) else {
        return false;
    };
    let lower = prefix.to_ascii_lowercase();
    if !plausible_token(value, 0.0) {
        return false;
    }
    if known
        .iter()
        .any(|keyword| memchr::memmem::find(&lower, keyword).is_some())
    {
        return false;
    }
    let first: Vec<u8> = prefix
        .split(|b| matches!(b, b'_' | b'-' | b'.'))
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if NOT_A_CREDENTIAL.contains(&first.as_slice())
        || is_version_like(value)
        || is_code_constant(value)
    {
        return false;
    }
    // After a `.` a body is a member of code (`proto.GoGoProtoPackageIsVersion3`,
    // `cferr.NotRSAOrECCOrEd25519`) unless it is long and words cover less than two fifths
    // of it (`hvs.…`, `sk.eyJ…`); elsewhere, a mixed-case body mostly of words
    // (`xxx_messageInfo_Int64Value`) is a name too.
    let words = word_bytes(body);
    let mixed = body.iter().any(u8::is_ascii_uppercase) && body.iter().any(u8::is_ascii_lowercase);
    if prefix.ends_with(b".") && (body.len() < 32 || 5 * words >= 2 * body.len())
        || mixed && 4 * words >= 3 * body.len()
    {
        return false;
    }
    random_body(body)
}

/// The prefix (with its last separator) and the body: the leading segments that are one to
/// twelve bytes, all lower-case or all upper-case with digits, each followed by `_`, `-` or
/// `.` (the first of two bytes at least and starting with a letter), at most three.
fn split(value: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut at = 0;
    for index in 0..3 {
        let rest = value.get(at..)?;
        let length = rest
            .iter()
            .position(|b| matches!(b, b'_' | b'-' | b'.'))
            .unwrap_or(rest.len());
        let segment = rest.get(..length)?;
        let one_case = segment
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            || segment
                .iter()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        let fits = one_case
            && (1..=12).contains(&length)
            && length < rest.len()
            && (index > 0 || length >= 2 && segment.first().is_some_and(u8::is_ascii_alphabetic));
        if !fits {
            break;
        }
        at += length + 1;
    }
    (at > 0).then(|| value.split_at(at))
}

/// Whether a piece is a word: three letters or more, lower-case, upper-case or capitalized.
fn is_word(piece: &[u8]) -> bool {
    let rest = piece.get(1..).unwrap_or_default();
    piece.len() >= 3
        && piece.iter().all(u8::is_ascii_alphabetic)
        && (rest.iter().all(u8::is_ascii_lowercase) || piece.iter().all(u8::is_ascii_uppercase))
}

/// The bytes of `body` in words of three letters or more with a vowel (`Proto`, `package`,
/// `HTTP` is none): a random mixed-case body has few, a name of code is mostly them.
fn word_bytes(body: &[u8]) -> usize {
    let mut covered = 0;
    let mut index = 0;
    while index < body.len() {
        let start = index;
        index += usize::from(body.get(index).is_some_and(u8::is_ascii_uppercase));
        index += body
            .get(index..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| b.is_ascii_lowercase())
            .count();
        let word = body.get(start..index).unwrap_or_default();
        if word.len() >= 3 && word.iter().any(|b| b"aeiouyAEIOUY".contains(b)) {
            covered += word.len();
        }
        index = index.max(start + 1);
    }
    covered
}

/// Whether a body is random: long enough, 16 letters and digits in a row (a digit and a
/// letter among them: see `runs.rs`), no placeholder or example
/// (see [`plausible_token`]), not a name, path, UUID or version, and at least 3.0 bits a
/// byte when it is hex, 3.5 when it has one case, 3.6 when both.
fn random_body(body: &[u8]) -> bool {
    if body.len() < MIN_BODY
        || !super::runs::has_random_stretch(body)
        || body
            .first()
            .is_some_and(|b| matches!(b, b'_' | b'-' | b'.'))
    {
        return false;
    }
    // Names of code and data: `.` between pieces shorter than 16 bytes
    // (`BridgeConfig.EnableIPv6`), or two pieces or more that are words
    // (`INSTRUCTIONS_AVAILABLE`, `worker-node-7d4e…`). A random body has few separators,
    // and its pieces are rarely letters of one case.
    let pieces = || body.split(|b| matches!(b, b'_' | b'-' | b'.' | b'+' | b'/'));
    if body.contains(&b'.') && body.split(|&b| b == b'.').any(|piece| piece.len() < 16)
        || pieces().filter(|piece| is_word(piece)).count() >= 2
    {
        return false;
    }
    // `=` pads base64 at the end only (`url=host`, `token=…` are assignments); `..` elides;
    // a `.` and a word at the end is a file's name (`app-54d5….png`).
    let padded = body.iter().rposition(|&b| b != b'=').unwrap_or(0);
    let tail = body.rsplit(|&b| b == b'.').next().unwrap_or_default();
    if body.get(..padded).unwrap_or_default().contains(&b'=')
        || memchr::memmem::find(body, b"..").is_some()
        || tail.len() < body.len()
            && (1..=5).contains(&tail.len())
            && tail.iter().all(u8::is_ascii_alphabetic)
    {
        return false;
    }
    // Base64 of text (`YmVkcm9jay5…` is "bedrock…"): random bytes rarely decode to it.
    if base64_decode(body.get(..=padded).unwrap_or_default())
        .is_some_and(|text| text.len() >= 12 && text.iter().all(|b| matches!(b, b' '..=b'~')))
    {
        return false;
    }
    if is_identifier_like(body)
        || is_camel_identifier(body)
        || is_dotted_identifier(body)
        || is_uuid(body)
        || is_version_like(body)
    {
        return false;
    }
    // A path (`app/src/lib2/x.js`): a `/` beside a `.`, or a piece between slashes that is a
    // word of three lower-case letters or more.
    if body.contains(&b'/')
        && (body.contains(&b'.')
            || body
                .split(|b| *b == b'/')
                .any(|piece| piece.len() >= 3 && piece.iter().all(u8::is_ascii_lowercase)))
    {
        return false;
    }
    let upper = body.iter().any(u8::is_ascii_uppercase);
    let lower = body.iter().any(u8::is_ascii_lowercase);
    // `/` and `+` are base64's, whose bodies have both cases; one case is a path's piece.
    // Nor does base64 mix its two alphabets (`+/` and `-_`) or hold a `.`.
    if body.iter().any(|b| matches!(b, b'/' | b'+'))
        && (!(upper && lower) || body.iter().any(|b| matches!(b, b'-' | b'_' | b'.')))
    {
        return false;
    }
    let hex = body
        .iter()
        .all(|b| b.is_ascii_hexdigit() || matches!(b, b'_' | b'-'));
    let min_entropy = if hex && !(upper && lower) {
        3.0
    } else if upper && lower {
        3.6
    } else {
        3.5
    };
    plausible_token(body, min_entropy)
}

/// The keywords of the token rules (neither assignments nor run rules) that hold a `_`, `-`
/// or `.`, as a token's prefix does (`ghp_`, `sk-proj-`, `hvs.`): a run rule leaves a token
/// of such a prefix to its provider's rule.
pub fn known_prefixes(specs: &[RuleSpec]) -> Vec<Vec<u8>> {
    let mut known: Vec<Vec<u8>> = specs
        .iter()
        .filter(|spec| spec.names.is_none() && !spec.runs)
        .flat_map(|spec| &spec.keywords)
        .filter(|keyword| keyword.bytes().any(|b| matches!(b, b'_' | b'-' | b'.')))
        .map(|keyword| keyword.as_bytes().to_vec())
        .collect();
    known.sort();
    known.dedup();
    known
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefixed_token(value: &[u8]) -> bool {
        prefixed_token_but(value, &[])
    }

    #[test]
    fn prefixed_tokens_of_many_shapes_are_known() {
        for token in [
            "glpat-9xdGDFEOz4SpHbBVZ5fk",
            "sk-proj-RXHZEef9gALOLeCdR9RLt5FIfrsGJmEgTL-isLkILZu_zBQDz",
            "dop_v1_52fc0e9fbe3f0ffc1e0085ab7fc5208e7416ea4a54ff07e8ec3f57706e6d46f1",
            "hvs.ZzZnpZWf3ERHywqrk8fFtHJkaSl8-7nA3ceU29SrlGQlOsKYF5w5",
            "CCIPAT_6LUCtGTJ0P5NgsM4Tb7YNo_b244c30261058ab10edd649d8d5f0421af0b566c",
            "key-93b66431fb3fe5272955e67c3cd6e042",
            "hcaik_01hq8irtcm73l555jitc3vh0kaeak0n1p7y2hlq31x1cbuebkjtruslqj8",
        ] {
            assert!(prefixed_token(token.as_bytes()), "{token}");
        }
    }

    #[test]
    fn names_digests_ids_paths_and_placeholders_are_not() {
        for text in [
            "test_parse_handles_very_long_input_values",
            "sha512-Pd0gQ2gR4iMBk4VnL0gsVRZ8Ck9Jcqc7jH3ZQ1iG9fF3mWY2p7yLv0kKw==",
            "cus_J4Ff8NSaOHTw9UabQ3xZ1p7q",
            "chatcmpl-8XyzAbC3dEf6GhI9jKl2MnO5pQr",
            "my_app/src/components/button2/index",
            "sk_live_xxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "sk-proj-YOUR_KEY_GOES_HERE_1234",
            "api-v2-getUserAccountSettingsById",
            "glpat-abcdefghij0123456789",
            "pat-na1-4b8b23cd-9c75-4eba-926e",
            "Ab3dEfGh7jKlMnOpQrStUvWx",
            "conf.BridgeConfig.EnableIPv6",
            "proto.GoGoProtoPackageIsVersion3",
            "PF_ARM_SVE_B16B16_INSTRUCTIONS_AVAILABLE",
            "infra-ami-eks-worker-node-7d4ec78312",
            "v0.0.0-20210423185535-09eb48e85fd7",
            "r3---sn-apo3qvuoxuxbt-j5pe",
            "cferr.NotRSAOrECCOrEd25519",
            "protocommon.PublicKeyDetails_PKCS1_RSA_PKCS1V5",
            "xxx_messageInfo_Int64Value",
            "S2A_SSL_SIGN_ECDSA_SECP256R1_SHA256",
            "runtime.XplinkLibvec+SYS___ERRNO2",
        ] {
            assert!(!prefixed_token(text.as_bytes()), "{text}");
        }
    }
}
