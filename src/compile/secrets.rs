//! Secret detection: decides whether a candidate file is a secret and must be
//! kept out of the output.
//!
//! What the stage does: every candidate file is checked twice. First by its
//! repository-relative path ([`by_path`]): well-known secret file names
//! (`.env`, `*.pem`, `id_rsa*`, `credentials.json`, ...) and any file under a
//! `secret/` or `secrets/` folder. Then by its content ([`ContentRules::scan`]):
//! a small set of high-confidence patterns (private-key blocks, cloud and service
//! access tokens, URLs carrying a password, high-entropy literals assigned to
//! secret-like names). A file that matches either check is excluded, and the
//! caller notes only the *name* of the rule that fired (plus, for content, the
//! line number).
//!
//! What it gets: a path string, or the raw bytes of a file (which need not be
//! valid UTF-8). It is pure: it never touches the disk, the network or the
//! environment.
//!
//! What it must never do: return, log, print or otherwise carry the matched
//! secret value. [`ContentHit`] holds a rule name and a line number, nothing
//! more; errors name the rule, never a haystack. The rules fail closed: a rule
//! that does not compile is an error, never a silently empty matcher.

use std::sync::OnceLock;

use regex::bytes::{Captures, Regex, RegexSet};

/// Extensions after which `credentials*`, `token` and `tokens` are treated as
/// data files (and therefore secrets).
const DATA_EXTENSIONS: &[&str] = &[
    "json", "yaml", "yml", "toml", "ini", "txt", "xml", "csv", "cfg", "conf",
];

/// Base-name suffix rules (the name is lower-cased first).
const SUFFIX_RULES: &[(&str, &str)] = &[
    (".pem", "private key file (`*.pem`)"),
    (".key", "private key file (`*.key`)"),
    (".p12", "key store file (`*.p12`)"),
    (".pfx", "key store file (`*.pfx`)"),
    (".jks", "key store file (`*.jks`)"),
    (".keystore", "key store file (`*.keystore`)"),
    (".tfvars", "Terraform variables file (`*.tfvars`)"),
    (".tfvars.json", "Terraform variables file (`*.tfvars`)"),
    (".token", "token file (`*.token`)"),
];

/// Base-name prefix rules for SSH keys (the name is lower-cased first).
const SSH_KEY_RULES: &[(&str, &str)] = &[
    ("id_rsa", "SSH key file (`id_rsa*`)"),
    ("id_ecdsa", "SSH key file (`id_ecdsa*`)"),
    ("id_ed25519", "SSH key file (`id_ed25519*`)"),
];

/// Exact base names (the name is lower-cased first).
const EXACT_RULES: &[(&str, &str)] = &[
    (".env", "`.env` file"),
    (".npmrc", "`.npmrc` file"),
    (".pypirc", "`.pypirc` file"),
    (".netrc", "`.netrc` file"),
    (".git-credentials", "`.git-credentials` file"),
];

/// Why a file is a secret by its path, or `None` when its name is harmless.
///
/// `rel_path` is repository-relative with `/` separators, e.g.
/// `"config/.env.local"`. Matching is ASCII case-insensitive. The base name
/// is checked against the name rules (`.env`, `.env.*`, `*.pem`, `*.key`,
/// `*.p12`, `*.pfx`, `*.jks`, `*.keystore`, `id_rsa*`, `id_ecdsa*`,
/// `id_ed25519*`, `.npmrc`, `.pypirc`, `.netrc`, `.git-credentials`,
/// `*.tfvars`, `*.token`, and `credentials*` / `token` / `tokens` with no
/// extension or a data extension); every folder is checked for being named
/// exactly `secret` or `secrets`. The returned rule is a short human phrase
/// such as "`.env` file" or "`secrets/` folder".
#[must_use]
pub fn by_path(rel_path: &str) -> Option<&'static str> {
    let trimmed = rel_path.trim_end_matches('/');
    let (dirs, base) = trimmed.rsplit_once('/').unwrap_or(("", trimmed));
    base_name_rule(&base.to_ascii_lowercase()).or_else(|| {
        dirs.split('/').find_map(|dir| {
            if dir.eq_ignore_ascii_case("secret") {
                Some("`secret/` folder")
            } else if dir.eq_ignore_ascii_case("secrets") {
                Some("`secrets/` folder")
            } else {
                None
            }
        })
    })
}

/// The rule for a lower-cased base name, if any.
fn base_name_rule(name: &str) -> Option<&'static str> {
    if name.starts_with(".env.") {
        return Some("`.env` file");
    }
    let named = EXACT_RULES
        .iter()
        .find(|(exact, _)| name == *exact)
        .or_else(|| {
            SUFFIX_RULES
                .iter()
                .find(|(suffix, _)| name.ends_with(suffix))
        })
        .or_else(|| {
            SSH_KEY_RULES
                .iter()
                .find(|(prefix, _)| name.starts_with(prefix))
        });
    if let Some(&(_, rule)) = named {
        return Some(rule);
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) => (stem, Some(ext)),
        None => (name, None),
    };
    if !ext.is_none_or(|ext| DATA_EXTENSIONS.contains(&ext)) {
        return None;
    }
    if name.starts_with("credentials") {
        Some("credentials file")
    } else if stem == "token" || stem == "tokens" {
        Some("token file (`token`, `tokens`)")
    } else {
        None
    }
}

/// A content match: which rule fired and where. Never carries the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentHit {
    /// Short stable rule name, one of [`ContentRules::rule_names`].
    pub rule: &'static str,
    /// 1-based line of the start of the match.
    pub line: usize,
}

/// Failure to build the content rules. `Clone` so the error behind
/// [`ContentRules::shared`] can be handed on by value.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SecretsError {
    /// A rule's pattern (or the combined pre-check set) does not compile.
    #[error("secret rule {rule:?} does not compile")]
    Rule {
        /// The rule name (or `"rule set"` for the combined pre-check).
        rule: &'static str,
        /// The compile error.
        #[source]
        source: regex::Error,
    },
}

/// Post-match validation applied to a candidate before it counts as a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Group 1 is a token: reject placeholders and low-entropy filler.
    Token,
    /// Group 1 is a token that must also look random (letters and digits,
    /// higher entropy).
    StrongToken,
    /// Group 1 is a JWT: reject well-known documentation examples.
    Jwt,
    /// Groups 1, 2, 3 are user, password and host of a URL: reject
    /// placeholders, templates and dev defaults.
    UrlPassword,
    /// One of groups 1..=3 is a quoted literal assigned to a secret-like name:
    /// it must be high-entropy and not a placeholder or reference.
    Assignment,
}

/// One content rule: a stable name, a pattern and its validation.
#[derive(Debug, Clone, Copy)]
struct Rule {
    name: &'static str,
    pattern: &'static str,
    check: Check,
}

/// The content rules, most specific first (when two rules hit on the same
/// line, the earlier one names the hit). Every pattern is byte-oriented (`(?-u)`), so it runs
/// on invalid UTF-8 and keeps the DFA small.
const RULES: &[Rule] = &[
    Rule {
        name: "private-key-block",
        // Header, a short gap (newlines, quotes, `\n` escapes, string
        // concatenation), optional armor headers, then real base64 body.
        pattern: r#"(?-u)-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s"'`+,;]|\\[nr]){1,24}(?:[A-Za-z][A-Za-z-]{1,40}:[^\r\n\\]{0,200}(?:[\s"'`+,;]|\\[nr]){1,24})*([A-Za-z0-9+/=]{32,})"#,
        check: Check::Token,
    },
    Rule {
        name: "aws-access-key-id",
        pattern: r"(?-u)\b((?:AKIA|ASIA)[A-Z0-9]{16})\b",
        check: Check::Token,
    },
    Rule {
        name: "aws-secret-access-key",
        pattern: r#"(?-u)(?i:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)["'`]?[ \t]*(?::=|=>|=|:|,)[ \t]*["'`]?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        check: Check::StrongToken,
    },
    Rule {
        name: "github-token",
        pattern: r"(?-u)\b(gh[pousr]_[A-Za-z0-9]{36,})\b",
        check: Check::Token,
    },
    Rule {
        name: "github-fine-grained-token",
        pattern: r"(?-u)\b(github_pat_[A-Za-z0-9_]{82,})\b",
        check: Check::Token,
    },
    Rule {
        name: "gitlab-token",
        pattern: r"(?-u)\b(glpat-[A-Za-z0-9_-]{20,})",
        check: Check::Token,
    },
    Rule {
        name: "slack-token",
        pattern: r"(?-u)\b(xox[baprs]-(?:[0-9]{6,}-){1,3}[A-Za-z0-9]{8,}|xox[ar]-[0-9]-[A-Za-z0-9-]{20,})",
        check: Check::Token,
    },
    Rule {
        name: "slack-webhook",
        pattern: r"(?-u)hooks\.slack\.com/services/(T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,})",
        check: Check::Token,
    },
    Rule {
        name: "stripe-secret-key",
        pattern: r"(?-u)\b([sr]k_live_[A-Za-z0-9]{24,})\b",
        check: Check::Token,
    },
    Rule {
        name: "anthropic-api-key",
        pattern: r"(?-u)\b(sk-ant-[A-Za-z0-9_-]{40,})",
        check: Check::Token,
    },
    Rule {
        name: "openai-api-key",
        pattern: r"(?-u)\b(sk-(?:[A-Za-z0-9_-]{10,}T3BlbkFJ[A-Za-z0-9_-]{10,}|(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}))",
        check: Check::Token,
    },
    Rule {
        name: "google-api-key",
        pattern: r"(?-u)\b(AIza[0-9A-Za-z_-]{35})(?:[^0-9A-Za-z_-]|$)",
        check: Check::Token,
    },
    Rule {
        name: "npm-token",
        pattern: r"(?-u)\b(npm_[A-Za-z0-9]{36})\b",
        check: Check::Token,
    },
    Rule {
        name: "jwt",
        pattern: r"(?-u)\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,})",
        check: Check::Jwt,
    },
    Rule {
        name: "database-url-password",
        pattern: r"(?-u)(?i:\b(?:postgres(?:ql)?|mysql|mariadb|mongodb|rediss?|amqps?)(?:\+[a-z0-9]+)?)://([!#-&(-.0-9;=?A-_a-~]{0,64}):([!#-&(-.0-?A-_a-~]{1,128})@([A-Za-z0-9._-]*)",
        check: Check::UrlPassword,
    },
    Rule {
        name: "url-basic-auth",
        pattern: r"(?-u)(?i:\bhttps?)://([!#-&(-.0-9;=?A-_a-~]{1,64}):([!#-&(-.0-?A-_a-~]{1,128})@([A-Za-z0-9._-]*)",
        check: Check::UrlPassword,
    },
    Rule {
        name: "generic-secret-assignment",
        // A secret-like name ending an identifier (`DB_PASSWORD`, `apiKey`,
        // `"client_secret"`), an optional type annotation, an assignment
        // operator, then a quoted printable-ASCII literal without spaces.
        pattern: r#"(?-u)(?i:password|passwd|secret|api[_.-]?key|access[_.-]?token|auth[_.-]?token|secret[_.-]?key)["'`]?\]?(?:[ \t]*:[ \t]*[A-Za-z_][A-Za-z0-9_.<>\[\]?]*)?[ \t]*(?::=|=>|=|:)[ \t]*[bBrRuU]?(?:"([!#-\[\]-~]{16,})"|'([!-&(-\[\]-~]{16,})'|`([!-\[\]-_a-~]{16,})`)"#,
        check: Check::Assignment,
    },
];

/// [`RULES`] names, in order, for [`ContentRules::rule_names`].
static RULE_NAMES: [&str; RULES.len()] = rule_names_of();

const fn rule_names_of() -> [&'static str; RULES.len()] {
    let mut names = [""; RULES.len()];
    let mut i = 0;
    while i < RULES.len() {
        names[i] = RULES[i].name;
        i += 1;
    }
    names
}

/// A rule with its compiled pattern.
#[derive(Debug)]
struct Compiled {
    rule: Rule,
    regex: Regex,
}

/// The compiled content rules: a [`RegexSet`] for the single-pass pre-check
/// and the individual regexes for locating (and validating) the first hit.
#[derive(Debug)]
pub struct ContentRules {
    set: RegexSet,
    rules: Vec<Compiled>,
}

/// The lazily compiled shared rules.
static SHARED: OnceLock<Result<ContentRules, SecretsError>> = OnceLock::new();

impl ContentRules {
    /// Compile every rule; a rule that fails to compile is an error (fail
    /// closed, never an empty matcher).
    ///
    /// # Errors
    /// [`SecretsError::Rule`] naming the first rule that does not compile.
    pub fn new() -> Result<Self, SecretsError> {
        Self::compile(RULES)
    }

    /// Compile the given rules (separate from [`ContentRules::new`] so the
    /// fail-closed path can be tested).
    fn compile(rules: &[Rule]) -> Result<Self, SecretsError> {
        let compiled = rules
            .iter()
            .map(|&rule| {
                Regex::new(rule.pattern)
                    .map(|regex| Compiled { rule, regex })
                    .map_err(|source| SecretsError::Rule {
                        rule: rule.name,
                        source,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let set = RegexSet::new(rules.iter().map(|rule| rule.pattern)).map_err(|source| {
            SecretsError::Rule {
                rule: "rule set",
                source,
            }
        })?;
        Ok(Self {
            set,
            rules: compiled,
        })
    }

    /// The shared, lazily compiled rules (compiled once per process through
    /// [`OnceLock`]).
    ///
    /// # Errors
    /// The compile error, if any rule does not compile.
    pub fn shared() -> Result<&'static ContentRules, &'static SecretsError> {
        SHARED.get_or_init(Self::new).as_ref()
    }

    /// First hit in the bytes (the one on the earliest line), with its 1-based
    /// line number; `None` when clean. Invalid UTF-8 is fine. The hit names
    /// the rule only, never the matched value.
    ///
    /// One pass of the combined set decides whether anything can match (the
    /// common, clean case ends there); only the rules it reports are then run
    /// individually to validate candidates and find the earliest line.
    #[must_use]
    pub fn scan(&self, bytes: &[u8]) -> Option<ContentHit> {
        let candidates = self.set.matches(bytes);
        if !candidates.matched_any() {
            return None;
        }
        // The earliest line wins; on the same line the more specific rule
        // (earlier in the table) names the hit, so `apiKey: "AIza..."` is a
        // Google key rather than a generic assignment.
        let mut best: Option<(usize, &'static str)> = None;
        for compiled in candidates.iter().filter_map(|index| self.rules.get(index)) {
            if let Some(start) = compiled.first_valid(bytes) {
                let line_start = line_start_of(bytes, start);
                if best.is_none_or(|(best_line_start, _)| line_start < best_line_start) {
                    best = Some((line_start, compiled.rule.name));
                }
            }
        }
        best.map(|(line_start, rule)| ContentHit {
            rule,
            line: line_of(bytes, line_start),
        })
    }

    /// The names of all content rules, for documentation.
    #[must_use]
    pub fn rule_names() -> &'static [&'static str] {
        &RULE_NAMES
    }
}

impl Compiled {
    /// Start offset of the first match that passes the rule's check.
    fn first_valid(&self, bytes: &[u8]) -> Option<usize> {
        self.regex
            .captures_iter(bytes)
            .find(|caps| passes(self.rule.check, caps))
            .and_then(|caps| caps.get(0))
            .map(|found| found.start())
    }
}

/// Offset of the start of the line holding `offset`.
fn line_start_of(bytes: &[u8], offset: usize) -> usize {
    let before = bytes.get(..offset).unwrap_or(bytes);
    memchr::memrchr(b'\n', before).map_or(0, |newline| newline + 1)
}

/// 1-based line number of a byte offset.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    let before = bytes.get(..offset).unwrap_or(bytes);
    memchr::memchr_iter(b'\n', before).count() + 1
}

/// Whether a candidate match passes its rule's validation.
fn passes(check: Check, caps: &Captures<'_>) -> bool {
    let group = |index: usize| caps.get(index).map_or(&[][..], |found| found.as_bytes());
    match check {
        Check::Token => plausible_token(group(1), 3.0),
        Check::StrongToken => {
            let token = group(1);
            plausible_token(token, 4.0) && has_letter_and_digit(token)
        }
        Check::Jwt => {
            let jwt = group(1);
            !KNOWN_EXAMPLES.iter().any(|example| contains(jwt, example))
        }
        Check::UrlPassword => real_url_password(group(1), group(2), group(3)),
        Check::Assignment => (1..=3)
            .find_map(|index| caps.get(index))
            .is_some_and(|value| secret_literal(value.as_bytes())),
    }
}

/// Well-known documentation values that are not secrets (matched
/// case-sensitively anywhere in the candidate): the jwt.io and `PyJWT`
/// example signatures, the AWS documentation marker, the classic TOTP
/// example seed, OAuth RFC examples and empty-input digests.
const KNOWN_EXAMPLES: &[&[u8]] = &[
    b"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    b"4twFt5NiznN84AWoo1d7KO1T_yoc0Z6XOpOVswacPZg",
    b"EXAMPLE",
    b"JBSWY3DPEHPK3PXP",
    // RFC 6749 and RFC 5849 (OAuth) example values, copied into many
    // libraries' docs and tests.
    b"2YotnFZFEjr1zCsicMWpAA",
    b"tGzv3JOkF0XG5Qx2TlKWIA",
    b"7Fjfp0ZBr1KtDRbnfVdmIw",
    b"ad180jjd733klru7",
    b"0685bd9184jfhq22",
    b"kd94hf93k423kf44",
    b"hh5s93j4hdidpola",
    b"pfkkdhi9sl3r4s00",
    b"nnch734d00sl2jdk",
    b"dh893hdasih9",
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
];

/// Lower-case fragments that mark an assigned literal as a placeholder (or a
/// descriptive value rather than a secret).
const LITERAL_PLACEHOLDERS: &[&[u8]] = &[
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

/// Fragments that mark a literal as a template, interpolation or lookup.
const LITERAL_REFERENCES: &[&[u8]] = &[
    b"${", b"$(", b"{{", b"}}", b"#{", b"%(", b"%s", b"://", b"env:", b"env.", b"environ",
    b"getenv", b"vault:",
];

/// Lower-case words that make up placeholder passwords and well-known dev
/// defaults (each alphanumeric run of a URL password is compared after
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

/// Whether a token-shaped value is plausibly real: not a known example, not a
/// placeholder, and at least `min_entropy` bits per byte.
fn plausible_token(token: &[u8], min_entropy: f64) -> bool {
    !KNOWN_EXAMPLES
        .iter()
        .any(|example| contains(token, example))
        && !contains_any_lowercase(token, TOKEN_PLACEHOLDERS)
        && shannon_entropy(token) >= min_entropy
}

/// Whether `user:password@host` carries a real-looking password.
fn real_url_password(user: &[u8], password: &[u8], host: &[u8]) -> bool {
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
    let host = String::from_utf8_lossy(host).to_ascii_lowercase();
    !(host.contains("example")
        || host == "localhost"
        || host.starts_with("127.")
        || host == "0.0.0.0"
        || PLACEHOLDER_HOSTS.contains(&host.as_str()))
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

/// Decode standard or URL-safe base64 (padding optional); `None` when the
/// input is not base64.
fn base64_decode(text: &[u8]) -> Option<Vec<u8>> {
    let body = text
        .strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text);
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

/// Whether a quoted literal assigned to a secret-like name looks like a real
/// secret: long, high-entropy, letters and digits, and not a placeholder,
/// template, reference, path or identifier.
fn secret_literal(value: &[u8]) -> bool {
    if value.len() < 16 || value.len() > 512 || !has_letter_and_digit(value) {
        return false;
    }
    if matches!(
        value.first(),
        Some(b'$' | b'%' | b'/' | b'~' | b'.' | b'<' | b'@')
    ) {
        return false;
    }
    if LITERAL_REFERENCES
        .iter()
        .any(|reference| contains(value, reference))
        || contains_any_lowercase(value, LITERAL_PLACEHOLDERS)
        || contains_any_lowercase(&unleet(value), LITERAL_PLACEHOLDERS)
        || KNOWN_EXAMPLES
            .iter()
            .any(|example| contains(value, example))
    {
        return false;
    }
    if is_identifier_like(value) {
        return false;
    }
    // Base64-wrapped placeholders (`bm90IG15IHJlYWwgcGFzc3dvcmQ=` is "not my
    // real password"): only text decodes to printable ASCII.
    if let Some(decoded) = base64_decode(value)
        && decoded.iter().all(|byte| matches!(byte, b' '..=b'~'))
        && contains_any_lowercase(&decoded, LITERAL_PLACEHOLDERS)
    {
        return false;
    }
    shannon_entropy(value) >= 3.5
}

/// Identifiers and paths rather than secrets: `STRIPE_KEY_V2`,
/// `config.auth.client2`, `prod/db/main-2024`: every segment between
/// separators is all letters or all digits.
fn is_identifier_like(value: &[u8]) -> bool {
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

fn has_letter_and_digit(bytes: &[u8]) -> bool {
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

/// Shannon entropy in bits per byte.
fn shannon_entropy(bytes: &[u8]) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    // ---------------------------------------------------------------- paths

    #[test]
    fn path_rules_positive() {
        let cases: &[(&str, &str)] = &[
            (".env", "`.env` file"),
            (".ENV", "`.env` file"),
            ("config/.env.local", "`.env` file"),
            (".env.example", "`.env` file"),
            ("config/secrets/app.yaml", "`secrets/` folder"),
            ("secret/x.txt", "`secret/` folder"),
            ("a/SECRETS/b/c.rs", "`secrets/` folder"),
            ("certs/server.pem", "private key file (`*.pem`)"),
            ("server.key", "private key file (`*.key`)"),
            ("cert.p12", "key store file (`*.p12`)"),
            ("cert.PFX", "key store file (`*.pfx`)"),
            ("keystore.jks", "key store file (`*.jks`)"),
            ("android/release.keystore", "key store file (`*.keystore`)"),
            ("id_rsa", "SSH key file (`id_rsa*`)"),
            ("home/.ssh/id_rsa.pub", "SSH key file (`id_rsa*`)"),
            ("id_ecdsa", "SSH key file (`id_ecdsa*`)"),
            ("deploy/id_ed25519_ci", "SSH key file (`id_ed25519*`)"),
            (".npmrc", "`.npmrc` file"),
            ("pkg/.pypirc", "`.pypirc` file"),
            (".netrc", "`.netrc` file"),
            (".git-credentials", "`.git-credentials` file"),
            ("infra/prod.tfvars", "Terraform variables file (`*.tfvars`)"),
            (
                "infra/prod.auto.tfvars.json",
                "Terraform variables file (`*.tfvars`)",
            ),
            ("github.token", "token file (`*.token`)"),
            ("token", "token file (`token`, `tokens`)"),
            ("tokens.json", "token file (`token`, `tokens`)"),
            ("cfg/token.TXT", "token file (`token`, `tokens`)"),
            ("credentials", "credentials file"),
            ("credentials.yaml", "credentials file"),
            ("Credentials.JSON", "credentials file"),
            ("gcp/credentials-prod.json", "credentials file"),
            (".aws/credentials", "credentials file"),
        ];
        for &(path, rule) in cases {
            assert_eq!(by_path(path), Some(rule), "{path}");
        }
    }

    #[test]
    fn path_rules_negative() {
        for path in [
            "tokenizer.rs",
            "src/tokenizer.rs",
            "src/auth/credentials.ts",
            "credentials_test.go",
            "docs/tokens.md",
            "token.rs",
            "my-secrets-notes.md",
            "src/secret.rs",
            "src/secrets.rs",
            "secretsmanager/client.py",
            "docs/env.md",
            ".envrc",
            "environment.ts",
            "src/keys.rs",
            "keyboard.pem.rs",
            "README.md",
            "src/id_rsa_parser/mod.rs",
            "",
        ] {
            assert_eq!(by_path(path), None, "{path}");
        }
    }

    #[test]
    fn base_name_wins_over_folder() {
        assert_eq!(by_path("secrets/.env"), Some("`.env` file"));
        assert_eq!(by_path("secrets/notes.md"), Some("`secrets/` folder"));
    }

    // -------------------------------------------------------------- content

    fn rules() -> &'static ContentRules {
        match ContentRules::shared() {
            Ok(rules) => rules,
            Err(error) => panic!("rules must compile: {error}"),
        }
    }

    /// Scan `text` and return the hit.
    fn scan(text: &str) -> Option<ContentHit> {
        rules().scan(text.as_bytes())
    }

    /// Assert that `value`, placed on line 3 of a small file, is found by
    /// `rule` at line 3.
    fn assert_hit(rule: &str, line_text: &str) {
        let text = format!("// header\nfn main() {{}}\n{line_text}\nmore();\n");
        assert_eq!(
            scan(&text),
            Some(ContentHit {
                rule: rule_name(rule),
                line: 3
            }),
            "{rule} should fire on line 3 of {line_text:?}",
        );
    }

    fn assert_clean(line_text: &str) {
        let text = format!("// header\n{line_text}\n");
        assert_eq!(scan(&text), None, "expected clean: {line_text}");
    }

    /// Rule names are `&'static str`; tests compare by value.
    fn rule_name(rule: &str) -> &'static str {
        ContentRules::rule_names()
            .iter()
            .copied()
            .find(|name| *name == rule)
            .unwrap_or_else(|| panic!("unknown rule {rule}"))
    }

    /// Deterministic pseudo-random alphanumerics (so fakes look random but no
    /// real-looking token sits in the source).
    fn noise(len: usize, alphabet: &[u8], seed: u64) -> String {
        let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let index = usize::try_from(state >> 33).unwrap_or(0) % alphabet.len();
                char::from(alphabet[index])
            })
            .collect()
    }

    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const UPPER_ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

    fn pem_body(seed: u64) -> String {
        (0..4)
            .map(|i| noise(64, BASE64, seed + i))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn rule_names_are_listed_and_unique() {
        let names = ContentRules::rule_names();
        assert_eq!(names.len(), RULES.len());
        assert!(names.contains(&"private-key-block"));
        assert!(names.contains(&"generic-secret-assignment"));
        let mut sorted = names.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "duplicate rule name");
    }

    #[test]
    fn every_rule_compiles_individually() {
        for rule in RULES {
            assert!(Regex::new(rule.pattern).is_ok(), "{}", rule.name);
        }
        assert!(ContentRules::new().is_ok());
    }

    #[test]
    fn bad_rule_fails_closed() {
        let bad = [
            RULES[0],
            Rule {
                name: "broken",
                pattern: "(unclosed",
                check: Check::Token,
            },
        ];
        match ContentRules::compile(&bad) {
            Err(SecretsError::Rule { rule, .. }) => assert_eq!(rule, "broken"),
            Ok(_) => panic!("a broken rule must not compile into a matcher"),
        }
        let error = ContentRules::compile(&bad).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("secret rule \"broken\" does not compile")
        );
    }

    #[test]
    fn private_key_blocks() {
        for label in [
            "PRIVATE KEY",
            "RSA PRIVATE KEY",
            "EC PRIVATE KEY",
            "DSA PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
        ] {
            let block = format!(
                "-----BEGIN {label}-----\n{}\n-----END {label}-----",
                pem_body(7)
            );
            assert_hit("private-key-block", &block);
        }
        // PGP armor with headers and a blank line.
        let pgp = format!(
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\nComment: fake\n\n{}\n-----END PGP PRIVATE KEY BLOCK-----",
            pem_body(8)
        );
        assert_hit("private-key-block", &pgp);
        // Legacy encrypted PEM headers.
        let encrypted = format!(
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{}\n\n{}\n-----END RSA PRIVATE KEY-----",
            noise(32, b"0123456789ABCDEF", 3),
            pem_body(9)
        );
        assert_hit("private-key-block", &encrypted);
        // Embedded in JSON with `\n` escapes (service-account files).
        let json = format!(
            r#"  "private_key": "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n","#,
            noise(64, BASE64, 10)
        );
        assert_hit("private-key-block", &json);
    }

    #[test]
    fn private_key_negatives() {
        // PEM parsers mention the header without a body.
        assert_clean(r#"const HEADER: &str = "-----BEGIN RSA PRIVATE KEY-----";"#);
        assert_clean(r#"if line == "-----BEGIN PRIVATE KEY-----\n" { start() }"#);
        assert_clean("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg...\n-----END PRIVATE KEY-----");
        assert_clean(
            "-----BEGIN PRIVATE KEY-----\nYOUR_PRIVATE_KEY_HERE\n-----END PRIVATE KEY-----",
        );
        let filler = "x".repeat(64);
        assert_clean(&format!(
            "-----BEGIN PRIVATE KEY-----\n{filler}\n-----END PRIVATE KEY-----"
        ));
        // Public keys and certificates are not secrets.
        assert_clean(&format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----",
            pem_body(1)
        ));
        assert_clean(&format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----",
            pem_body(2)
        ));
    }

    #[test]
    fn non_utf8_buffer_with_key_block_hits() {
        let mut bytes = vec![0xff, 0xfe, 0x00, b'\n', 0xc3, 0x28, b'\n', 0x80];
        bytes.extend_from_slice(b"\n-----BEGIN OPENSSH PRIVATE KEY-----\n");
        bytes.extend_from_slice(pem_body(4).as_bytes());
        bytes.extend_from_slice(b"\n-----END OPENSSH PRIVATE KEY-----\n\xff\xff");
        assert_eq!(
            rules().scan(&bytes),
            Some(ContentHit {
                rule: "private-key-block",
                line: 4
            })
        );
    }

    #[test]
    fn aws_access_key_id() {
        let id = ["AKIA", &noise(16, UPPER_ALNUM, 11)].concat();
        assert_hit("aws-access-key-id", &format!("aws_access_key_id = {id}"));
        let session = ["ASIA", &noise(16, UPPER_ALNUM, 12)].concat();
        assert_hit(
            "aws-access-key-id",
            &format!(r#"{{"AccessKeyId": "{session}"}}"#),
        );
    }

    #[test]
    fn aws_access_key_id_negatives() {
        // The AWS documentation key, filler, and longer identifiers.
        assert_clean(&["key = ", "AKIA", "IOSFODNN7", "EXAMPLE"].concat());
        assert_clean(&["key = ", "AKIA", &"X".repeat(16)].concat());
        assert_clean(&["AKIA", &noise(16, UPPER_ALNUM, 13), "EXTRA"].concat());
        assert_clean(&["let x = MAKIA", &noise(16, UPPER_ALNUM, 14)].concat());
    }

    #[test]
    fn aws_secret_access_key() {
        let secret = noise(40, BASE64, 21);
        assert_hit(
            "aws-secret-access-key",
            &format!("aws_secret_access_key = {secret}"),
        );
        assert_hit(
            "aws-secret-access-key",
            &format!(r#"  "SecretAccessKey": "{secret}","#),
        );
        assert_hit(
            "aws-secret-access-key",
            &format!("export AWS_SECRET_ACCESS_KEY='{secret}'"),
        );
    }

    #[test]
    fn aws_secret_access_key_negatives() {
        assert_clean(
            &[
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
                "EXAMPLE",
                "KEY",
            ]
            .concat(),
        );
        assert_clean("aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']");
        assert_clean(&format!("aws_secret_access_key = {}", "x".repeat(40)));
        assert_clean("aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}");
    }

    #[test]
    fn github_tokens() {
        for prefix in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
            let token = [prefix, &noise(36, ALNUM, 31)].concat();
            assert_hit("github-token", &format!("GITHUB_TOKEN={token}"));
        }
        let pat = [
            "github_pat_",
            &noise(22, ALNUM, 32),
            "_",
            &noise(59, ALNUM, 33),
        ]
        .concat();
        assert_hit("github-fine-grained-token", &format!("token: {pat}"));
    }

    #[test]
    fn github_token_negatives() {
        assert_clean(&["GITHUB_TOKEN=", "ghp_", &"x".repeat(36)].concat());
        assert_clean(&["GITHUB_TOKEN=", "ghp_", &noise(20, ALNUM, 34)].concat());
        assert_clean(&["github_pat_", &noise(40, ALNUM, 35)].concat());
        assert_clean("let ghp_count = 3;");
    }

    #[test]
    fn gitlab_token() {
        let token = ["glpat-", &noise(20, URLSAFE, 41)].concat();
        assert_hit("gitlab-token", &format!("private_token: {token}"));
        assert_clean(&["private_token: glpat-", &"x".repeat(20)].concat());
        assert_clean("glpat-short");
    }

    #[test]
    fn slack_tokens_and_webhooks() {
        let bot = [
            "xoxb-",
            &noise(11, b"0123456789", 51),
            "-",
            &noise(13, b"0123456789", 52),
            "-",
            &noise(24, ALNUM, 53),
        ]
        .concat();
        assert_hit("slack-token", &format!("SLACK_BOT={bot}"));
        let user = [
            "xoxp-",
            &noise(11, b"0123456789", 54),
            "-",
            &noise(11, b"0123456789", 55),
            "-",
            &noise(12, b"0123456789", 56),
            "-",
            &noise(32, b"0123456789abcdef", 57),
        ]
        .concat();
        assert_hit("slack-token", &format!("token = '{user}'"));
        let hook = [
            "https://hooks.slack.com/services/T",
            &noise(8, UPPER_ALNUM, 58),
            "/B",
            &noise(10, UPPER_ALNUM, 59),
            "/",
            &noise(24, ALNUM, 60),
        ]
        .concat();
        assert_hit("slack-webhook", &format!("url: {hook}"));
    }

    #[test]
    fn slack_negatives() {
        assert_clean("SLACK_TOKEN=xoxb-your-token-here");
        assert_clean("SLACK_TOKEN=xoxb-not-a-real-token-at-all");
        assert_clean(
            &[
                "https://hooks.slack.com/services/",
                "T00000000/B00000000/",
                &"X".repeat(24),
            ]
            .concat(),
        );
        assert_clean("See https://hooks.slack.com/services/ for webhooks");
    }

    #[test]
    fn stripe_secret_key() {
        let live = ["sk_live_", &noise(24, ALNUM, 61)].concat();
        assert_hit("stripe-secret-key", &format!("Stripe.api_key = {live}"));
        let restricted = ["rk_live_", &noise(99, ALNUM, 62)].concat();
        assert_hit("stripe-secret-key", &format!("key: {restricted}"));
        assert_clean(&["sk_test_", &noise(24, ALNUM, 63)].concat());
        assert_clean(&["sk_live_", &"x".repeat(24)].concat());
    }

    #[test]
    fn openai_api_key() {
        let legacy = [
            "sk-",
            &noise(20, ALNUM, 71),
            "T3Blbk",
            "FJ",
            &noise(20, ALNUM, 72),
        ]
        .concat();
        assert_hit("openai-api-key", &format!("OPENAI_API_KEY={legacy}"));
        let project = ["sk-proj-", &noise(120, URLSAFE, 73)].concat();
        assert_hit("openai-api-key", &format!("openai.api_key = {project}"));
        let service = ["sk-svcacct-", &noise(64, URLSAFE, 74)].concat();
        assert_hit("openai-api-key", &format!("key {service}"));
    }

    #[test]
    fn openai_negatives() {
        assert_clean("OPENAI_API_KEY=sk-...");
        assert_clean(&["OPENAI_API_KEY=sk-proj-", &"x".repeat(48)].concat());
        assert_clean(&["sk-", &noise(48, ALNUM, 75)].concat());
        assert_clean("let task-proj-thing = 1;");
    }

    #[test]
    fn anthropic_api_key() {
        let key = ["sk-ant-api03-", &noise(93, URLSAFE, 81), "AA"].concat();
        assert_hit("anthropic-api-key", &format!("ANTHROPIC_API_KEY={key}"));
        assert_clean("ANTHROPIC_API_KEY=sk-ant-...");
        assert_clean(&["ANTHROPIC_API_KEY=sk-ant-api03-", &"X".repeat(90)].concat());
    }

    #[test]
    fn google_api_key() {
        let key = ["AIza", &noise(35, URLSAFE, 91)].concat();
        assert_hit("google-api-key", &format!(r#"apiKey: "{key}","#));
        assert_clean(&["maps(\"AIza", &noise(20, URLSAFE, 92), "\")"].concat());
        assert_clean(&["maps(\"AIza", &"x".repeat(35), "\")"].concat());
    }

    #[test]
    fn npm_token() {
        let token = ["npm_", &noise(36, ALNUM, 101)].concat();
        assert_hit(
            "npm-token",
            &format!("//registry.npmjs.org/:_authToken={token}"),
        );
        assert_clean(&["npm_", &"x".repeat(36)].concat());
        assert_clean("npm_config_registry=https://registry.npmjs.org/");
    }

    #[test]
    fn jwt() {
        let token = [
            "eyJ",
            &noise(33, URLSAFE, 111),
            ".eyJ",
            &noise(60, URLSAFE, 112),
            ".",
            &noise(43, URLSAFE, 113),
        ]
        .concat();
        assert_hit("jwt", &format!("Authorization: Bearer {token}"));
    }

    #[test]
    fn jwt_negatives() {
        // The jwt.io documentation example, unsigned tokens and short lookalikes.
        let example = [
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
            ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
            ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        ]
        .concat();
        assert_clean(&example);
        let unsigned = ["eyJhbGciOiJub25lIn0", ".eyJzdWIiOiIxMjM0NTY3ODkwIn0", "."].concat();
        assert_clean(&unsigned);
        assert_clean("eyJhbGc.eyJzdWI.abc");
    }

    #[test]
    fn database_url_password() {
        let password = noise(18, ALNUM, 121);
        for scheme in [
            "postgres",
            "postgresql",
            "postgresql+psycopg2",
            "mysql",
            "mongodb",
            "mongodb+srv",
            "redis",
            "amqp",
        ] {
            assert_hit(
                "database-url-password",
                &format!(r#"DATABASE_URL="{scheme}://app_user:{password}@db.internal:5432/app""#),
            );
        }
        assert_hit(
            "database-url-password",
            &format!("REDIS_URL=redis://:{password}@cache.internal:6379/0"),
        );
    }

    #[test]
    fn database_url_placeholders() {
        for line in [
            "postgres://user:password@localhost:5432/db",
            "postgres://user:pass@db.internal/app",
            "postgres://postgres:postgres@localhost/test",
            "mysql://root:root@127.0.0.1/app",
            "postgres://user:${PASSWORD}@db.internal/app",
            "postgres://user:$DB_PASSWORD@db.internal/app",
            "postgres://${DB_USER}:${DB_PASS}@${DB_HOST}/app",
            "mongodb+srv://<username>:<password>@cluster0.mongodb.net/test",
            "postgres://user:****@db.internal/app",
            "postgres://user:xxxxxxxx@db.internal/app",
            "postgres://user:{password}@{host}/app",
            "postgres://%s:%s@%s/%s",
            "postgres://user:changeme@db.internal/app",
            "postgres://user:mysecretpassword@db.internal/app",
            "postgres://user:password123@db.internal/app",
            "postgres://user:1234@db.internal/app",
            "postgres://admin:Xk29sLq0pWm3@host:5432/app",
            "postgres://admin:Xk29sLq0pWm3@db.example.com:5432/app",
            "postgres://localhost:5432/app",
            "redis://localhost:6379",
        ] {
            assert_clean(line);
        }
    }

    #[test]
    fn url_basic_auth() {
        let password = noise(16, ALNUM, 131);
        assert_hit(
            "url-basic-auth",
            &format!("git clone https://deploy:{password}@git.internal.corp/repo.git"),
        );
        assert_hit(
            "url-basic-auth",
            &format!(r#"proxy = "http://svc-proxy:{password}@10.0.0.1:3128""#),
        );
    }

    #[test]
    fn url_basic_auth_placeholders() {
        for line in [
            "os.environ['http_proxy'] = 'http://john.doe:p4ssw0rd@10.1.2.3:8180'",
            "http://user:pass%20pass@complex.url.com/path?query=yes",
            "http://svc:Xk29sLq0pWm3@127.0.0.1:8180/",
            "http://svc:Xk29sLq0pWm3@localhost:8180/",
            "#     http://jschmoe:xyzzy@www.bogus.net:8000/foo/bar.tml",
            "https://user:pass@example.com/",
            "https://username:password@git.internal.corp/repo.git",
            "https://x-access-token:${GITHUB_TOKEN}@github.com/org/repo",
            "https://oauth2:$CI_JOB_TOKEN@gitlab.com/group/repo.git",
            "https://<user>:<token>@registry.internal/",
            "https://user:****@registry.internal/",
            "https://a:b@c",
            "http://localhost:8080/path@v1",
            "https://github.com/org/repo@v1.2.3",
            "see https://host:8080 and mail@domain",
            "https://token:x-oauth-basic@github.com/org/repo",
        ] {
            assert_clean(line);
        }
    }

    #[test]
    fn generic_secret_assignment() {
        let value = noise(32, ALNUM, 141);
        for line in [
            format!(r#"password = "{value}""#),
            format!(r"DB_PASSWORD: '{value}'"),
            format!(r#"  "client_secret": "{value}","#),
            format!(r#"const apiKey: string = "{value}";"#),
            format!(r"api_key => '{value}',"),
            format!(r#"authToken := "{value}""#),
            format!(r"ACCESS_TOKEN = `{value}`"),
            format!(r#"app.config["SECRET_KEY"] = "{value}""#),
            format!(r#"passwd="{value}""#),
        ] {
            assert_hit("generic-secret-assignment", &line);
        }
    }

    #[test]
    fn generic_assignment_negatives() {
        for line in [
            r#"password = getenv("X")"#,
            r"let secret = config.secret;",
            r"token: String,",
            r#"password = "changeme""#,
            r#"password = "example-password-123""#,
            r#"api_key = "xxxxxxxxxxxxxxxxxxxxxxxx""#,
            r#"api_key = "${API_KEY}""#,
            r#"api_key = "{{ .Values.apiKey }}""#,
            r#"api_key = os.environ["API_KEY"]"#,
            r#"secret = "STRIPE_SECRET_KEY_V2""#,
            r#"secret: "config.auth.client2.value""#,
            r#"secret_key = "/etc/app/keys/prod-2024.key""#,
            r#"SECRET_KEY = "django-insecure-a8f3k2l9d8s7f6g5h4j3k2l1q0w9e8r7""#,
            r#"password: "Enter your password here""#,
            r#""forgotPassword": "Forgot your password?""#,
            r#"password = "aaaaaaaaaaaaaaaa1""#,
            r#"password = "short1""#,
            r#"secretary = "a8Fk2LmQ9zX4vB7nR1tY""#,
            r#"passwordHash = "a8Fk2LmQ9zX4vB7nR1tY""#,
            r#"password == "a8Fk2LmQ9zX4vB7nR1tY""#,
            r#"secret = "JBSWY3DPEHPK3PXP""#,
            r#"password = "$2b$12$KIXQJfPqGZ0l1nmRzN4xTe8eJvEo5Yq1u0r9bM3mX6sPz7wL2cDgK""#,
            r#"secret = "0123456789abcdef0123456789abcdef""#,
            r#"password = "Sup3rS3cr3tP4ssw0rd2024""#,
            r#"webhook_secret = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855""#,
            // Base64 of "not my real password".
            r"password: 'bm90IG15IHJlYWwgcGFzc3dvcmQ=',",
            // An RFC 6749 example token.
            r#""access_token":"2YotnFZFEjr1zCsicMWpAA","#,
        ] {
            assert_clean(line);
        }
        // The value is on another line (an encrypted CI setting).
        assert_clean(&format!(
            "password:\n    secure: \"{}\"",
            noise(64, BASE64, 142)
        ));
    }

    #[test]
    fn first_hit_wins_and_reports_its_line() {
        let jwt = [
            "eyJ",
            &noise(33, URLSAFE, 151),
            ".eyJ",
            &noise(60, URLSAFE, 152),
            ".",
            &noise(43, URLSAFE, 153),
        ]
        .concat();
        let npm = ["npm_", &noise(36, ALNUM, 154)].concat();
        let text = format!("a\nb\nc\nd\ntoken={npm}\nx\n{jwt}\n");
        assert_eq!(
            scan(&text),
            Some(ContentHit {
                rule: "npm-token",
                line: 5
            })
        );
        // A placeholder earlier in the file does not hide a later real hit.
        let text = format!("password = \"changeme-changeme\"\n\n{jwt}\n");
        assert_eq!(
            scan(&text),
            Some(ContentHit {
                rule: "jwt",
                line: 3
            })
        );
    }

    #[test]
    fn clean_inputs() {
        assert_eq!(rules().scan(b""), None);
        assert_eq!(rules().scan(&[0xff; 1024]), None);
        let code = "fn tokenize(secret: &str) -> Vec<Token> {\n    let password = std::env::var(\"PASSWORD\")?;\n    Ok(lex(&password))\n}\n";
        assert_eq!(scan(code), None);
    }

    #[test]
    fn entropy_helper() {
        assert!(shannon_entropy(b"aaaaaaaa") < 0.01);
        assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-9);
        assert!(shannon_entropy(noise(64, BASE64, 1).as_bytes()) > 4.5);
    }

    #[test]
    fn hit_never_carries_the_value() {
        let token = ["npm_", &noise(36, ALNUM, 161)].concat();
        let hit = scan(&token);
        let shown = format!("{hit:?}");
        assert!(hit.is_some());
        assert!(!shown.contains(&token[4..]), "{shown}");
    }
}
