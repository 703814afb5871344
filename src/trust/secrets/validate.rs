//! Validators: what a regex candidate must also satisfy to count as a secret
//! (placeholder and example filtering, entropy, URL passwords, assignments).
//!
//! Each rule in `rules.toml` names one [`Check`] in its `check` field.

use regex::bytes::Captures;

use super::shapes::{
    is_camel_identifier, is_code_constant, is_dotted_identifier, is_identifier_like, is_uuid,
    is_version_like, shannon_entropy,
};

/// Post-match validation applied to a candidate before it counts as a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// A provider token: not a known example or placeholder, entropy.
    Token,
    /// Entropy (and the rule's allowlist) only.
    Plain,
    /// A JSON Web Token: a JSON header with `alg`/`typ`, not a known example.
    Jwt,
    /// A base64-wrapped JSON Web Token.
    JwtBase64,
    /// Groups `user`, `pass`, `host` of a URL: not a placeholder or template.
    UrlPassword,
    /// A value assigned to a secret-like name: long, random, not a
    /// reference, placeholder, identifier, path or UUID.
    Generic,
    /// A value assigned to a password-like name.
    Password,
    /// `user:password` given to `curl -u`.
    CurlUser,
    /// An `Authorization` header value (group `scheme` may be `Basic`).
    AuthHeader,
    /// A token known by its shape: a short prefix, a random body (`prefixed.rs`).
    Prefixed,
}

impl Check {
    /// The validator named in `rules.toml`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "token" => Self::Token,
            "plain" => Self::Plain,
            "jwt" => Self::Jwt,
            "jwt-base64" => Self::JwtBase64,
            "url-password" => Self::UrlPassword,
            "generic" => Self::Generic,
            "password" => Self::Password,
            "curl-user" => Self::CurlUser,
            "auth-header" => Self::AuthHeader,
            "prefixed" => Self::Prefixed,
            _ => return None,
        })
    }

    /// Minimum entropy when the rule gives none.
    pub fn default_entropy(self) -> f64 {
        match self {
            Self::Token | Self::Password => 2.5,
            Self::Plain | Self::UrlPassword | Self::CurlUser | Self::Prefixed => 0.0,
            Self::Jwt | Self::JwtBase64 | Self::AuthHeader => 3.0,
            Self::Generic => 3.5,
        }
    }
}

/// Whether a candidate passes its validator. `value` is the secret group.
pub fn passes(
    check: Check,
    min_entropy: f64,
    caps: &Captures<'_>,
    value: &[u8],
    haystack: &[u8],
) -> bool {
    let group = |name: &str| caps.name(name).map_or(&[][..], |found| found.as_bytes());
    match check {
        Check::Token => plausible_token(value, min_entropy),
        Check::Plain => !all_same(value) && shannon_entropy(value) >= min_entropy,
        Check::Jwt => jwt(value) && shannon_entropy(value) >= min_entropy,
        Check::JwtBase64 => base64_decode(trim_padding(value)).is_some_and(|decoded| {
            let end = decoded
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')))
                .unwrap_or(decoded.len());
            jwt(decoded.get(..end).unwrap_or_default())
        }),
        Check::UrlPassword => real_url_password(group("user"), group("pass"), group("host")),
        Check::Generic => {
            assignment_context(caps, haystack, false) && {
                let credential = names_a_credential(caps, haystack);
                generic_literal(value, min_entropy, credential)
                    || (credential && is_uuid(value) && random_uuid(value))
            }
        }
        Check::Password => {
            assignment_context(caps, haystack, true) && password_literal(value, min_entropy)
        }
        Check::CurlUser => curl_user(value),
        // Asked of `prefixed.rs` by the rule, which holds the prefixes it needs.
        Check::Prefixed => false,
        Check::AuthHeader => {
            let scheme = group("scheme");
            if scheme.eq_ignore_ascii_case(b"basic") {
                basic_credentials(value)
            } else {
                opaque_token(value, min_entropy)
            }
        }
    }
}

/// Well-known documentation values that are not secrets (matched
/// case-sensitively anywhere in the candidate): the jwt.io and `PyJWT`
/// example signatures, the AWS documentation marker, the classic TOTP
/// example seed, OAuth and HTTP RFC examples and empty-input digests.
const KNOWN_EXAMPLES: &[&[u8]] = &[
    b"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    b"4twFt5NiznN84AWoo1d7KO1T_yoc0Z6XOpOVswacPZg",
    b"EXAMPLE",
    b"JBSWY3DPEHPK3PXP",
    // RFC 6749, RFC 6750 and RFC 5849 (OAuth) example values, copied into
    // many libraries' docs and tests.
    b"2YotnFZFEjr1zCsicMWpAA",
    b"tGzv3JOkF0XG5Qx2TlKWIA",
    b"7Fjfp0ZBr1KtDRbnfVdmIw",
    b"mF_9.B5f-4.1JqM",
    b"ad180jjd733klru7",
    b"0685bd9184jfhq22",
    b"kd94hf93k423kf44",
    b"hh5s93j4hdidpola",
    b"pfkkdhi9sl3r4s00",
    b"nnch734d00sl2jdk",
    b"dh893hdasih9",
    // RFC 7617 / RFC 2617 Basic examples ("Aladdin:open sesame").
    b"QWxhZGRpbjpvcGVuIHNlc2FtZQ",
    // The Azure storage emulator (Azurite) account key, from Microsoft's docs.
    b"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq",
    // Stripe's public documentation test key.
    b"4eC39HqLyjWDarjtT1zdp7dc",
    // xkcd 936's example passwords, quoted in many password tests.
    b"Tr0ub4dor",
    b"correcthorsebatterystaple",
    // The Docker Engine API documentation's example registry password (api/docs/v1.*.md).
    b"conta1n3rize14",
    // Docker's documentation example swarm join token (`docker swarm join --token ...`).
    b"3pu6hszjas19xyp7ghgosyx9k8atbfcr8p2is99znpy26u2lkl",
    // Mailgun's documentation example API key.
    b"3ax6xnjp29jd6fds4gc373sgvjxteol0",
    // The UUID of RFC 4122's and Wikipedia's examples, and the nil UUID.
    b"123e4567-e89b-12d3",
    b"00000000-0000-",
    // Digests of the empty input (SHA-256, SHA-1, MD5), common test values.
    b"e3b0c44298fc1c149afbf4c8996fb924",
    b"da39a3ee5e6b4b0d3255bfef95601890",
    b"d41d8cd98f00b204e9800998ecf8427e",
];

/// Lower-case fragments that mark a token-shaped value as a placeholder.
const TOKEN_PLACEHOLDERS: &[&[u8]] = &[
    b"example",
    b"xxxx",
    b"****",
    b"....",
    b"your",
    b"placeholder",
    b"dummy",
    b"sample",
    b"fake",
    b"redacted",
    b"changeme",
    b"insecure",
    b"12345678",
    b"abcdefgh",
    b"0000000",
];

/// Lower-case fragments that mark an assigned literal as a placeholder (or a
/// descriptive value rather than a secret).
const LITERAL_PLACEHOLDERS: &[&[u8]] = &[
    b"example",
    b"xxxx",
    b"****",
    // An elided value (`ops_eyJzaW...`).
    b"...",
    b"your",
    b"placeholder",
    b"dummy",
    b"sample",
    b"fake",
    b"redacted",
    b"change_me",
    b"change-me",
    b"changeme",
    b"changeit",
    b"insecure",
    b"test",
    b"secret",
    b"password",
    b"passwd",
    b"token",
    b"apikey",
    b"api_key",
    b"api-key",
    b"12345",
    b"abcdef",
    b"qwerty",
    b"lorem",
    b"todo",
    b"fixme",
    b"replace",
    b"default",
    b"not-real",
    b"not_real",
    b"notreal",
];

/// Smaller placeholder list for passwords (the password words themselves
/// are judged word by word, see [`is_placeholder_word`]).
const PASSWORD_FRAGMENTS: &[&[u8]] = &[
    b"example",
    b"xxx",
    b"***",
    b"...",
    b"your",
    b"placeholder",
    b"dummy",
    b"sample",
    b"fake",
    b"redacted",
    b"change_me",
    b"change-me",
    b"changeme",
    b"changeit",
    b"insecure",
    b"test",
    b"12345",
    b"qwerty",
    b"lorem",
    b"todo",
    b"fixme",
    b"replace",
    b"not-real",
    b"not_real",
    b"notreal",
];

/// Fragments that mark a literal as a template, interpolation or lookup.
const LITERAL_REFERENCES: &[&[u8]] = &[
    b"${",
    b"$(",
    b"{{",
    b"}}",
    b"#{",
    b"%(",
    b"%s",
    b"://",
    b"env:",
    b"env.",
    b"environ",
    b"getenv",
    b"vault:",
    b"secrets.",
    b"process.",
];

/// Lower-case words that make up placeholder passwords and well-known dev
/// defaults (each alphanumeric run of a password is compared after
/// normalising, see [`is_placeholder_word`]).
const PASSWORD_PLACEHOLDERS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "pw",
    "secret",
    "secrets",
    "changeme",
    "changeit",
    "example",
    "test",
    "testing",
    "tester",
    "dummy",
    "fake",
    "sample",
    "placeholder",
    "redacted",
    "hidden",
    "masked",
    "admin",
    "administrator",
    "root",
    "user",
    "username",
    "guest",
    "default",
    "postgres",
    "postgresql",
    "mysql",
    "mariadb",
    "mongo",
    "mongodb",
    "redis",
    "rabbitmq",
    "amqp",
    "foo",
    "bar",
    "foobar",
    "baz",
    "qwerty",
    "letmein",
    "hunter",
    "xyzzy",
    "supersecret",
    "topsecret",
    "secretpassword",
    "token",
    "apikey",
    "key",
    "none",
    "null",
    "empty",
    "x",
    "oauth",
    "basic",
    "dev",
    "development",
    "local",
    "localhost",
    "docker",
    "app",
    "demo",
    "aladdin",
    "open",
    "sesame",
];

/// Lower-case host names that mark a URL as documentation.
const PLACEHOLDER_HOSTS: &[&str] = &[
    "host",
    "hostname",
    "server",
    "domain",
    "your-host",
    "yourhost",
    "myhost",
];

/// Users (and passwords) that mark the other half of `user:password` in a
/// URL as a bare token (`https://<token>:x-oauth-basic@github.com/`).
const TOKEN_URL_MARKERS: &[&[u8]] = &[
    b"x-oauth-basic",
    b"x-access-token",
    b"oauth2",
    b"x-token-auth",
    b"gitlab-ci-token",
    b"oauth",
    b"token",
    b"private-token",
];

/// Identifier fragments (lower-case) that mark a name as *about* a secret
/// rather than holding one (`public_key`, `token_type`, `keyboard`,
/// `secretName`, ...).
const IDENT_DENY: &[&[u8]] = &[
    b"public",
    b"pubkey",
    // A verifier key (`vkey`, golang.org/x/mod/sumdb/note) is a public key.
    b"vkey",
    b"verifier",
    b"pub_key",
    b"secretary",
    b"keyboard",
    b"keyword",
    b"keystroke",
    b"keypress",
    b"keycode",
    b"keyframe",
    b"keymap",
    b"keybind",
    b"hotkey",
    b"monkey",
    b"keying",
    b"donkey",
    b"turkey",
    b"hockey",
    b"jockey",
    b"whiskey",
    b"author",
    b"accessor",
    b"accessib",
    b"tokeniz",
    b"token_type",
    b"tokentype",
    b"token-type",
    b"grant_type",
    b"auth_type",
    b"authtype",
    b"auth-type",
    b"auth_method",
    b"authmethod",
    b"access_type",
    b"accesstype",
    b"access_mode",
    b"access_level",
    b"access_log",
    b"accesslog",
    b"key_type",
    b"keytype",
    b"key_size",
    b"keysize",
    b"key_usage",
    b"keyusage",
    b"key_alg",
    b"keyalg",
    b"key_spec",
    b"keyspec",
    b"key_store",
    b"keystore",
    b"keychain",
    b"keyring",
    b"keyspace",
    b"key_space",
    b"key_pair",
    b"keypair",
    b"primary_key",
    b"primarykey",
    b"foreign_key",
    b"foreignkey",
    b"sort_key",
    b"sortkey",
    b"partition_key",
    b"cache_key",
    b"cachekey",
    b"idempotency",
    b"csrf",
    b"xsrf",
    b"checksum",
    b"hash",
    b"digest",
    b"fingerprint",
    b"thumbprint",
    b"nonce",
    b"issuer",
    b"audience",
    b"placeholder",
    b"example",
    b"sample",
    b"mount=type=secret",
    b"forgot",
    b"reset",
    b"strength",
    b"minlen",
    b"maxlen",
    b"min_len",
    b"max_len",
    b"validat",
];

/// Identifier endings (lower-case) that mark a name as *about* a secret (its
/// id, type, path, name, length, ...), not holding one.
const IDENT_DENY_SUFFIX: &[&[u8]] = &[
    b"id",
    b"ids",
    b"class",
    b"type",
    b"mode",
    b"kind",
    b"url",
    b"uri",
    b"urls",
    b"path",
    b"paths",
    b"file",
    b"files",
    b"dir",
    b"name",
    b"names",
    b"host",
    b"title",
    b"index",
    b"length",
    b"len",
    b"count",
    b"field",
    b"fields",
    b"header",
    b"headers",
    b"param",
    b"params",
    b"prefix",
    b"suffix",
    b"version",
    b"format",
    b"pattern",
    b"regex",
    b"ttl",
    b"label",
    b"prompt",
    b"message",
    b"msg",
    b"description",
    b"desc",
    b"policy",
    b"endpoint",
    b"enabled",
    b"required",
    b"timeout",
    b"expiry",
    b"expires",
    b"expiration",
    b"env",
    b"size",
    b"hint",
    b"text",
    b"error",
    b"location",
    b"provider",
    b"store",
    b"storage",
    b"source",
    b"method",
    b"scheme",
    b"scope",
    b"scopes",
    b"algorithm",
    b"alg",
    b"bits",
];

/// Stopwords (lower-case): a generic value containing one is a word-like
/// identifier, a path or prose rather than a random secret.
const GENERIC_STOPWORDS: &[&[u8]] = &[
    b"about",
    b"access",
    b"account",
    b"action",
    b"active",
    b"admin",
    b"after",
    b"agent",
    b"alias",
    b"allow",
    b"alpha",
    b"amazon",
    b"android",
    b"apache",
    b"apple",
    b"array",
    b"asset",
    b"async",
    b"audio",
    b"author",
    b"azure",
    b"backend",
    b"backup",
    b"basic",
    b"batch",
    b"before",
    b"begin",
    b"binary",
    b"block",
    b"bool",
    b"branch",
    b"bridge",
    b"browser",
    b"buffer",
    b"build",
    b"bundle",
    b"button",
    b"bytes",
    b"cache",
    b"callback",
    b"channel",
    b"chart",
    b"check",
    b"chrome",
    b"class",
    b"clear",
    b"client",
    b"close",
    b"cloud",
    b"cluster",
    b"color",
    b"column",
    b"command",
    b"commit",
    b"common",
    b"config",
    b"connect",
    b"console",
    b"const",
    b"contain",
    b"content",
    b"context",
    b"control",
    b"cookie",
    b"create",
    b"crypto",
    b"current",
    b"custom",
    b"daemon",
    b"data",
    b"debug",
    b"decode",
    b"default",
    b"delete",
    b"deploy",
    b"detail",
    b"device",
    b"dialog",
    b"digest",
    b"direct",
    b"docker",
    b"document",
    b"domain",
    b"double",
    b"download",
    b"driver",
    b"dummy",
    b"dynamic",
    b"editor",
    b"element",
    b"email",
    b"empty",
    b"enable",
    b"encode",
    b"engine",
    b"entry",
    b"error",
    b"event",
    b"example",
    b"except",
    b"export",
    b"extend",
    b"false",
    b"feature",
    b"fetch",
    b"field",
    b"filter",
    b"final",
    b"first",
    b"float",
    b"folder",
    b"format",
    b"frame",
    b"function",
    b"gateway",
    b"generat",
    b"github",
    b"gitlab",
    b"global",
    b"google",
    b"group",
    b"handle",
    b"header",
    b"hello",
    b"helper",
    b"image",
    b"import",
    b"index",
    b"input",
    b"insert",
    b"install",
    b"instance",
    b"integer",
    b"interface",
    b"internal",
    b"invalid",
    b"issue",
    b"items",
    b"java",
    b"label",
    b"lambda",
    b"latest",
    b"layer",
    b"layout",
    b"length",
    b"level",
    b"library",
    b"linux",
    b"listen",
    b"loader",
    b"local",
    b"logger",
    b"login",
    b"lookup",
    b"manage",
    b"manifest",
    b"master",
    b"match",
    b"media",
    b"memory",
    b"message",
    b"method",
    b"metric",
    b"middle",
    b"mobile",
    b"model",
    b"module",
    b"mount",
    b"native",
    b"network",
    b"node",
    b"normal",
    b"notify",
    b"null",
    b"number",
    b"object",
    b"option",
    b"order",
    b"origin",
    b"output",
    b"owner",
    b"package",
    b"param",
    b"parent",
    b"parse",
    b"partial",
    b"pattern",
    b"payload",
    b"plugin",
    b"policy",
    b"prefix",
    b"preview",
    b"print",
    b"private",
    b"process",
    b"product",
    b"profile",
    b"project",
    b"property",
    b"protocol",
    b"provider",
    b"proxy",
    b"public",
    b"python",
    b"query",
    b"queue",
    b"random",
    b"range",
    b"react",
    b"reader",
    b"record",
    b"redirect",
    b"refresh",
    b"region",
    b"register",
    b"release",
    b"remote",
    b"render",
    b"report",
    b"request",
    b"require",
    b"reset",
    b"resource",
    b"response",
    b"result",
    b"return",
    b"review",
    b"route",
    b"runtime",
    b"sample",
    b"schema",
    b"scope",
    b"script",
    b"search",
    b"section",
    b"select",
    b"server",
    b"service",
    b"session",
    b"setting",
    b"setup",
    b"shared",
    b"signal",
    b"simple",
    b"single",
    b"source",
    b"stage",
    b"standard",
    b"start",
    b"state",
    b"static",
    b"status",
    b"storage",
    b"store",
    b"stream",
    b"string",
    b"struct",
    b"style",
    b"super",
    b"switch",
    b"symbol",
    b"system",
    b"table",
    b"target",
    b"template",
    b"tenant",
    b"test",
    b"text",
    b"thread",
    b"timeout",
    b"title",
    b"toggle",
    b"topic",
    b"trace",
    b"tracker",
    b"true",
    b"type",
    b"update",
    b"upload",
    b"user",
    b"util",
    b"valid",
    b"value",
    b"vector",
    b"version",
    b"view",
    b"visible",
    b"volume",
    b"widget",
    b"window",
    b"worker",
    b"wrapper",
    b"write",
];

/// Whether `haystack[start..end]` (a provider name matched case-insensitively) is a word of
/// its identifier: it starts after a non-alphanumeric byte or at a camel-case hump (`myHeroku`)
/// and ends before one, or before a hump (`herokuKey`, `SNYK_TOKEN`). Letters inside
/// another word (`sumOfExposures` for `sumo`, `CameraKit` for `meraki`) are not the name.
pub fn name_is_a_word(haystack: &[u8], start: usize, end: usize) -> bool {
    let (Some(&first), Some(&last)) = (haystack.get(start), haystack.get(end.wrapping_sub(1)))
    else {
        return false;
    };
    let starts = match start.checked_sub(1).and_then(|i| haystack.get(i)) {
        Some(&before) if before.is_ascii_alphanumeric() => {
            (before.is_ascii_lowercase() || before.is_ascii_digit()) && first.is_ascii_uppercase()
        }
        _ => true,
    };
    // The name may run on into a longer word (`sumologic`), but not end on the hump of the
    // next camel-case word (`sumOf`: `sumo` would end on its `O`).
    let before_last = haystack.get(end.wrapping_sub(2)).copied().unwrap_or(b' ');
    let ends = !(end - start > 1
        && last.is_ascii_uppercase()
        && before_last.is_ascii_lowercase()
        && haystack.get(end).is_some_and(u8::is_ascii_lowercase));
    starts && ends
}

/// Whether a token-shaped value is plausibly real: not a known example, not a
/// placeholder, and at least `min_entropy` bits per byte.
pub fn plausible_token(token: &[u8], min_entropy: f64) -> bool {
    !KNOWN_EXAMPLES
        .iter()
        .any(|example| contains(token, example))
        && !contains_any_lowercase(token, TOKEN_PLACEHOLDERS)
        && !all_same(token)
        && !has_sequence(token, 6)
        && shannon_entropy(token) >= min_entropy
}

/// Whether `bytes` holds a run of `len` consecutive ascending characters
/// (`012345`, `abcdef`, `CDEFGH`, separators skipped): the mark of a hand-made placeholder, all
/// but impossible in a random token.
fn has_sequence(bytes: &[u8], len: usize) -> bool {
    let alnum: Vec<u8> = bytes
        .iter()
        .copied()
        .filter(u8::is_ascii_alphanumeric)
        .collect();
    let mut run = 1;
    for pair in alnum.windows(2) {
        let next = matches!(pair, [a, b] if b.checked_sub(1) == Some(*a));
        run = if next { run + 1 } else { 1 };
        if run >= len {
            return true;
        }
    }
    false
}

/// Base64 that decodes to text naming a placeholder or to prose.
fn encoded_text(value: &[u8]) -> bool {
    base64_decode(trim_padding(value)).is_some_and(|decoded| {
        decoded.len() >= 6
            && decoded.iter().all(|byte| matches!(byte, b' '..=b'~'))
            && (decoded.contains(&b' ') || contains_any_lowercase(&decoded, LITERAL_PLACEHOLDERS))
    })
}

/// A bearer-style token: plausible, not a reference or a word.
fn opaque_token(token: &[u8], min_entropy: f64) -> bool {
    plausible_token(token, min_entropy)
        && has_letter_and_digit(token)
        && !is_identifier_like(token)
        && !contains_any_lowercase(token, LITERAL_PLACEHOLDERS)
}

/// A JSON Web Token whose header decodes to JSON naming an algorithm or type,
/// and which is not a documentation example.
fn jwt(token: &[u8]) -> bool {
    if KNOWN_EXAMPLES
        .iter()
        .any(|example| contains(token, example))
    {
        return false;
    }
    let mut parts = token.split(|&b| b == b'.');
    let (Some(header), Some(payload)) = (parts.next(), parts.next()) else {
        return false;
    };
    let json = |part: &[u8]| base64_decode(trim_padding(part));
    let Some(header) = json(header) else {
        return false;
    };
    let header_ok = header.first() == Some(&b'{')
        && (contains(&header, b"\"alg\"") || contains(&header, b"\"typ\""));
    // The payload may be cut short by the match, so only its start counts.
    let payload_ok = json(payload.get(..payload.len() & !3).unwrap_or(payload))
        .is_some_and(|decoded| decoded.first() == Some(&b'{'));
    header_ok && payload_ok
}

/// Whether `user:password@host` carries a real-looking password (or, for a
/// token URL such as `https://<token>:x-oauth-basic@github.com/`, a real
/// token).
pub fn real_url_password(user: &[u8], password: &[u8], host: &[u8]) -> bool {
    let lower_user = user.to_ascii_lowercase();
    let lower_password = password.to_ascii_lowercase();
    if TOKEN_URL_MARKERS.contains(&lower_password.as_slice()) {
        return url_token(user) && real_host(host);
    }
    if TOKEN_URL_MARKERS.contains(&lower_user.as_slice()) && url_token(password) {
        return real_host(host);
    }
    if password.len() < 3 || all_same(password) {
        return false;
    }
    if password.eq_ignore_ascii_case(user) {
        return false;
    }
    // Templates and environment lookups: `${PASS}`, `$PASS`, `{password}`,
    // `<password>`, `%s`, `[password]`.
    if password
        .iter()
        .any(|byte| matches!(byte, b'$' | b'{' | b'}' | b'<' | b'>' | b'[' | b']'))
        || has_format_percent(password)
    {
        return false;
    }
    if contains_any_lowercase(password, TOKEN_PLACEHOLDERS) {
        return false;
    }
    let decoded = percent_decode(password);
    if decoded
        .split(|byte| !byte.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .all(is_placeholder_word)
    {
        return false;
    }
    real_host(host)
}

/// A token standing in a URL's user or password slot.
fn url_token(token: &[u8]) -> bool {
    token.len() >= 16
        && !token
            .iter()
            .any(|byte| matches!(byte, b'$' | b'{' | b'}' | b'<' | b'>' | b'[' | b']' | b'%'))
        && plausible_token(token, 3.0)
        && has_letter_and_digit(token)
}

/// Whether a URL host is not documentation or loopback.
fn real_host(host: &[u8]) -> bool {
    let host = String::from_utf8_lossy(host).to_ascii_lowercase();
    !(host.contains("example")
        || host == "localhost"
        || host.starts_with("127.")
        || host == "0.0.0.0"
        || PLACEHOLDER_HOSTS.contains(&host.as_str()))
}

/// `curl -u user:password`.
fn curl_user(value: &[u8]) -> bool {
    if !(3..=400).contains(&value.len()) {
        return false;
    }
    let value: Vec<u8> = value
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'"' | b'\''))
        .collect();
    let Some(colon) = memchr::memchr(b':', &value) else {
        return false;
    };
    let (user, password) = (
        unbrace(value.get(..colon).unwrap_or_default()),
        unbrace(value.get(colon + 1..).unwrap_or_default()),
    );
    // `-u user:` (an empty password) or `-u :password` (no user): the one half is the
    // credential.
    if password.is_empty() {
        return lone_credential(user);
    }
    if user.is_empty() {
        return lone_credential(password);
    }
    real_url_password(user, password, b"")
}

/// A value wrapped in one pair of braces (`{ZqL5kVrX1n8tA2}`, as some API docs quote their
/// credentials) without them, when what is inside is no template name (`{client_secret}`):
/// letters and digits, not an identifier.
fn unbrace(part: &[u8]) -> &[u8] {
    match part
        .strip_prefix(b"{")
        .and_then(|rest| rest.strip_suffix(b"}"))
    {
        Some(inner)
            if !inner.iter().any(|b| matches!(b, b'{' | b'}' | b'$'))
                && has_letter_and_digit(inner)
                && !is_identifier_like(inner) =>
        {
            inner
        }
        _ => part,
    }
}

/// One half of `user:password` standing alone: a random credential, not a template,
/// placeholder, identifier or dev default (`admin1234`).
fn lone_credential(token: &[u8]) -> bool {
    token.len() >= 8
        && !token
            .iter()
            .any(|byte| matches!(byte, b'$' | b'{' | b'}' | b'<' | b'>' | b'[' | b']' | b'%'))
        && plausible_token(token, 3.0)
        && has_letter_and_digit(token)
        && !is_identifier_like(token)
        && !contains_any_lowercase(token, LITERAL_PLACEHOLDERS)
        && !token
            .split(|byte| !byte.is_ascii_alphanumeric())
            .filter(|word| !word.is_empty())
            .all(is_placeholder_word)
}

/// A Basic credential: base64 of `user:password` with a real password.
fn basic_credentials(value: &[u8]) -> bool {
    if KNOWN_EXAMPLES
        .iter()
        .any(|example| contains(value, example))
    {
        return false;
    }
    let Some(decoded) = base64_decode(trim_padding(value)) else {
        return false;
    };
    let Some(colon) = memchr::memchr(b':', &decoded) else {
        return false;
    };
    let (user, password) = (
        decoded.get(..colon).unwrap_or_default(),
        decoded.get(colon + 1..).unwrap_or_default(),
    );
    // A byte or two outside printable ASCII is a mangled copy (a pasted credential), not
    // binary data; more is no `user:password`.
    let printable = |b: &u8| matches!(b, b'!'..=b'~');
    user.iter().all(printable)
        && password.iter().filter(|b| !printable(b)).count() <= 1
        && real_url_password(user, password, b"")
}

/// Whether one alphanumeric run of a password is a placeholder word: after
/// dropping a numeric suffix (`password123`) and undoing digit-for-letter
/// spelling (`p4ssw0rd`), it is empty, or a placeholder or dev default,
/// possibly with a `my`/`your` prefix.
fn is_placeholder_word(word: &[u8]) -> bool {
    let letters_end = word
        .iter()
        .rposition(|byte| !byte.is_ascii_digit())
        .map_or(0, |last| last + 1);
    let normalized =
        String::from_utf8_lossy(&unleet(word.get(..letters_end).unwrap_or(word))).into_owned();
    let bare = normalized
        .strip_prefix("your")
        .or_else(|| normalized.strip_prefix("my"))
        .unwrap_or(&normalized);
    bare.is_empty() || PASSWORD_PLACEHOLDERS.contains(&bare)
}

/// The assignment around a generic candidate: not a comparison, and the
/// name it is assigned to is not about a secret (a type, an id, a path).
fn assignment_context(caps: &Captures<'_>, haystack: &[u8], password: bool) -> bool {
    let op = caps.name("op").map_or(&[][..], |found| found.as_bytes());
    if [&b"=="[..], b"!=", b"<=", b">="]
        .iter()
        .any(|comparison| op.ends_with(comparison))
    {
        return false;
    }
    let (Some(whole), Some(op_match)) = (caps.get(0), caps.name("op")) else {
        return false;
    };
    // After `(` or `,` (an argument list) only a quoted literal is a value: an unquoted
    // word there is a parameter or a variable (`get_input(console, self.password, …)`).
    if matches!(op, b"(" | b",")
        && let Some(secret) = caps.name("secret")
        && !matches!(
            haystack.get(secret.start().wrapping_sub(1)),
            Some(b'"' | b'\'' | b'`')
        )
    {
        return false;
    }
    // A name that is one part of a colon path (`arn:aws:secretsmanager:…:secret:prod/db-x1Y2`,
    // a URN) is no variable: what follows its `:` is the path's next part.
    if op == b":" && name_follows_colon(haystack, whole.start()) {
        return false;
    }
    let ident = identifier(haystack, whole.start(), op_match.start());
    let lower = ident.to_ascii_lowercase();
    if IDENT_DENY.iter().any(|word| contains(&lower, word)) {
        return false;
    }
    // `$PWD`, `PWD=`: the shell's working directory, not a password.
    if password && (lower == b"$pwd" || ident == b"PWD") {
        return false;
    }
    // `.pass("...")` is a method call, not a password.
    if password && op == b"(" && lower.rsplit(|b| *b == b'.').next() == Some(&b"pass"[..]) {
        return false;
    }
    !IDENT_DENY_SUFFIX
        .iter()
        .any(|suffix| lower.ends_with(suffix))
}

/// Whether a generic candidate is an assignment (see [`assignment_context`]).
pub fn generic_assignment(caps: &Captures<'_>, haystack: &[u8]) -> bool {
    assignment_context(caps, haystack, false)
}

/// Whether the identifier that ends at or runs through `start` comes right after a `:`.
fn name_follows_colon(haystack: &[u8], start: usize) -> bool {
    let before = haystack.get(..start).unwrap_or_default();
    let head = before
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        .count();
    before.len() > head && before.get(before.len() - head - 1) == Some(&b':')
}

/// The identifier a candidate is assigned to: the name bytes before the
/// match start plus the match up to the operator, without quotes and blanks.
fn identifier(haystack: &[u8], start: usize, op_start: usize) -> Vec<u8> {
    let before = haystack.get(..start).unwrap_or_default();
    let head_len = before
        .iter()
        .rev()
        .take(64)
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'$' | b'@'))
        .count();
    let head = before.get(start - head_len..).unwrap_or_default();
    let tail = haystack.get(start..op_start).unwrap_or_default();
    head.iter()
        .chain(tail)
        .copied()
        .filter(|b| !matches!(b, b'"' | b'\'' | b'\\' | b' ' | b'\t' | b'`'))
        .collect()
}

/// Whether a value assigned to a secret-like name looks like a real secret:
/// long, high-entropy, letters and digits, and not a placeholder, template,
/// reference, path, identifier, UUID or encoded text.
fn generic_literal(value: &[u8], min_entropy: f64, credential: bool) -> bool {
    if value.len() < 10 || value.len() > 512 || !has_letter_and_digit(value) {
        return false;
    }
    if is_code_constant(value) {
        return false;
    }
    if matches!(
        value.first(),
        Some(b'$' | b'%' | b'/' | b'~' | b'.' | b'<' | b'@' | b'-' | b'=')
    ) {
        return false;
    }
    if LITERAL_REFERENCES
        .iter()
        .any(|reference| contains(value, reference))
        || contains_any_lowercase(value, LITERAL_PLACEHOLDERS)
        || contains_any_lowercase(&unleet(value), LITERAL_PLACEHOLDERS)
        || contains_any_lowercase(value, GENERIC_STOPWORDS)
        || KNOWN_EXAMPLES
            .iter()
            .any(|example| contains(value, example))
    {
        return false;
    }
    if is_identifier_like(value)
        || is_dotted_identifier(value)
        || is_camel_identifier(value)
        || is_uuid(value)
        || is_version_like(value)
    {
        return false;
    }
    // Base64-wrapped text (`bm90IG15IHJlYWwgcGFzc3dvcmQ=` is "not my real
    // password"): a secret decodes to bytes, not to words.
    if encoded_text(value) || has_sequence(value, 6) {
        return false;
    }
    // Hex digits carry at most 4 bits a byte: 32 random ones fall under 3.5 bits one time in
    // six (Datadog, Bugsnag and Twilio keys are hex), so hex under a name that says it holds
    // a credential is held to 3.0 (under `keys:` in prose it is more often an encoding).
    let min_entropy = if credential && value.len() >= 20 && value.iter().all(u8::is_ascii_hexdigit)
    {
        min_entropy.min(3.0)
    } else {
        min_entropy
    };
    shannon_entropy(value) >= min_entropy
}

/// Whether the name a value is assigned to says it holds a credential (`SCW_SECRET_KEY`,
/// `POSTMARK_SERVER_TOKEN`, `apiKey`), not merely a key: a UUID under such a name is one
/// (Postmark, Scaleway, Snyk and Heroku keys are UUIDs), under `key` or `id` it is an id.
fn names_a_credential(caps: &Captures<'_>, haystack: &[u8]) -> bool {
    let (Some(whole), Some(op)) = (caps.get(0), caps.name("op")) else {
        return false;
    };
    let lower = identifier(haystack, whole.start(), op.start()).to_ascii_lowercase();
    [
        &b"token"[..],
        b"secret",
        b"apikey",
        b"api_key",
        b"api-key",
        b"auth_key",
        b"authkey",
        b"access_key",
        b"accesskey",
    ]
    .iter()
    .any(|word| contains(&lower, word))
}

/// A UUID drawn at random (version 4: 122 random bits), not a documented example or a
/// run of one digit.
fn random_uuid(value: &[u8]) -> bool {
    value.get(14) == Some(&b'4')
        && !KNOWN_EXAMPLES
            .iter()
            .any(|example| contains(value, example))
        && shannon_entropy(value) >= 3.0
}

/// Whether a value assigned to a password-like name looks like a real
/// password: not a reference, template, placeholder or identifier, with
/// letters and a digit or symbol.
fn password_literal(value: &[u8], min_entropy: f64) -> bool {
    if value.len() < 8 || value.len() > 256 || is_code_constant(value) {
        return false;
    }
    if matches!(
        value.first(),
        Some(
            b'$' | b'%'
                | b'/'
                | b'~'
                | b'.'
                | b'<'
                | b'@'
                | b'-'
                | b'='
                | b'*'
                | b'&'
                | b'!'
                | b':'
        )
    ) || has_format_percent(value)
    {
        return false;
    }
    // Code, not a literal: `name?:`, `other:` (a TypeScript parameter list).
    if matches!(value.last(), Some(b':' | b'?'))
        || value
            .iter()
            .filter(|b| !matches!(b, b'?' | b':' | b'!'))
            .all(u8::is_ascii_alphabetic)
    {
        return false;
    }
    let letters = value.iter().any(u8::is_ascii_alphabetic);
    let others = value.iter().any(|b| !b.is_ascii_alphabetic());
    if !(letters && others) {
        return false;
    }
    if LITERAL_REFERENCES
        .iter()
        .any(|reference| contains(value, reference))
        || contains_any_lowercase(value, PASSWORD_FRAGMENTS)
        || KNOWN_EXAMPLES
            .iter()
            .any(|example| contains(value, example))
    {
        return false;
    }
    if is_identifier_like(value) || is_uuid(value) || is_version_like(value) || encoded_text(value)
    {
        return false;
    }
    if percent_decode(value)
        .split(|byte| !byte.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .all(is_placeholder_word)
    {
        return false;
    }
    !all_same(value) && shannon_entropy(value) >= min_entropy
}

/// Lower-case with digit-for-letter spelling undone (`P4ssw0rd` becomes
/// `password`).
fn unleet(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .map(|&byte| match byte.to_ascii_lowercase() {
            b'4' => b'a',
            b'3' => b'e',
            b'1' => b'i',
            b'0' => b'o',
            b'5' => b's',
            b'7' => b't',
            other => other,
        })
        .collect()
}

/// Decode `%XX` escapes, leaving anything else as is.
fn percent_decode(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        let escaped = (byte == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        if let Some(decoded) = escaped {
            out.push(decoded);
            index += 3;
        } else {
            out.push(byte);
            index += 1;
        }
    }
    out
}

fn trim_padding(text: &[u8]) -> &[u8] {
    let end = text
        .iter()
        .rposition(|&b| b != b'=')
        .map_or(0, |last| last + 1);
    text.get(..end).unwrap_or(text)
}

/// Decode standard or URL-safe base64 without padding; `None` when the input
/// is not base64.
pub fn base64_decode(body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0u32;
    for &byte in body {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((buffer >> bits) & 0xff).ok()?);
        }
    }
    Some(out)
}

/// A `%` that is not a `%XX` URL escape (so a format directive like `%s`).
fn has_format_percent(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().any(|(index, &byte)| {
        byte == b'%'
            && !bytes
                .get(index + 1..index + 3)
                .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
    })
}

pub fn has_letter_and_digit(bytes: &[u8]) -> bool {
    bytes.iter().any(u8::is_ascii_alphabetic) && bytes.iter().any(u8::is_ascii_digit)
}

fn all_same(bytes: &[u8]) -> bool {
    bytes.windows(2).all(|pair| pair.first() == pair.last())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// Whether the lower-cased bytes contain any of the (lower-case) needles.
fn contains_any_lowercase(bytes: &[u8], needles: &[&[u8]]) -> bool {
    let lower = bytes.to_ascii_lowercase();
    needles.iter().any(|needle| contains(&lower, needle))
}
