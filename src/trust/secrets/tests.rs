//! Tests of the secret detector: name rules, the per-rule sample table (at
//! least two true and two false samples for every rule), the engine
//! (earliest hit, UTF-16, fail-closed build) and that no value ever leaks.
//!
//! True samples are synthetic: token bodies are generated deterministically
//! from each rule's own pattern (a small generator over the regex syntax
//! tree), and `samples.toml` holds hand-written samples built from the
//! providers' documented formats, with `{kind:N}` placeholders filled with
//! deterministic noise.

use std::collections::BTreeMap;

use regex_syntax::hir::{Class, Hir, HirKind};

use super::shapes::shannon_entropy;
use super::*;

const SAMPLES_TOML: &str = include_str!("samples.toml");

// ------------------------------------------------------------------ helpers

fn rules() -> &'static ContentRules {
    match ContentRules::shared() {
        Ok(rules) => rules,
        Err(error) => panic!("rules must compile: {error}"),
    }
}

fn scan(text: &str) -> Option<ContentHit> {
    rules().scan(text.as_bytes())
}

/// A deterministic generator (PCG-style LCG).
pub(super) struct Noise(u64);

impl Noise {
    pub(super) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1))
    }

    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next()).unwrap_or(0) % n.max(1)
    }

    fn string(&mut self, len: usize, alphabet: &[u8]) -> String {
        (0..len)
            .map(|_| char::from(alphabet[self.below(alphabet.len())]))
            .collect()
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

fn alphabet(kind: &str) -> Option<&'static [u8]> {
    Some(match kind {
        "an" => ALNUM,
        "b64" => BASE64,
        "url" => URLSAFE,
        "hex" => b"0123456789abcdef",
        "HEX" => b"0123456789ABCDEF",
        "dig" => b"0123456789",
        "up" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        "lo" => b"abcdefghijklmnopqrstuvwxyz0123456789",
        "al" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        _ => return None,
    })
}

fn b64(bytes: &[u8], url: bool) -> String {
    let table = if url { URLSAFE } else { BASE64 };
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(table[((n >> (18 - 6 * i)) & 63) as usize]));
        }
        if !url {
            out.push_str(&"=".repeat(3 - chunk.len()));
        }
    }
    out
}

/// A signed-looking JWT with random claims.
fn make_jwt(noise: &mut Noise) -> String {
    let header = b64(br#"{"alg":"HS256","typ":"JWT"}"#, true);
    let claims = format!(
        r#"{{"sub":"{}","iat":{},"scope":"{}"}}"#,
        noise.string(12, ALNUM),
        1_600_000_000 + noise.below(100_000_000),
        noise.string(10, ALNUM)
    );
    let payload = b64(claims.as_bytes(), true);
    format!("{header}.{payload}.{}", noise.string(43, URLSAFE))
}

/// Four lines of PEM-looking base64.
fn pem_lines(noise: &mut Noise) -> Vec<String> {
    (0..4).map(|_| noise.string(64, BASE64)).collect()
}

/// Expand `{kind:N}` and the named generators in a sample template.
fn expand(template: &str, seed: u64, generated: Option<&str>) -> String {
    let mut noise = Noise::new(seed);
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let inner = &after[..close];
        let replacement = match inner.split_once(':') {
            Some((kind, len)) if alphabet(kind).is_some() && len.parse::<usize>().is_ok() => {
                Some(noise.string(len.parse().unwrap_or(0), alphabet(kind).unwrap_or(ALNUM)))
            }
            _ => match inner {
                "gen" => generated.map(str::to_owned),
                "jwt" => Some(make_jwt(&mut noise)),
                "jwt-b64" => Some(b64(make_jwt(&mut noise).as_bytes(), false)),
                "basic" => Some(b64(
                    format!("deploy:{}", noise.string(18, ALNUM)).as_bytes(),
                    false,
                )),
                "pem" => Some(pem_lines(&mut noise).join("\n")),
                "pem-esc" => Some(pem_lines(&mut noise).join("\\n")),
                "pem-esc2" => Some(pem_lines(&mut noise).join("\\\\n")),
                _ => None,
            },
        };
        if let Some(text) = replacement {
            out.push_str(&text);
            rest = &after[close + 1..];
        } else {
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// How to fill the classes of a pattern when generating from it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Fill {
    /// Random members: a plausible secret.
    Random,
    /// `x` where allowed, else the first member: an `xxxx` placeholder.
    Placeholder,
    /// Members in order (`abcdefgh...`, `0123456...`): a sequence.
    Sequence,
}

/// Generate bytes matching `hir`.
pub(super) fn generate(
    hir: &Hir,
    fill: Fill,
    noise: &mut Noise,
    counter: &mut usize,
    out: &mut Vec<u8>,
) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(literal) => out.extend_from_slice(&literal.0),
        HirKind::Class(class) => {
            let members: Vec<u8> = match class {
                Class::Bytes(bytes) => bytes
                    .iter()
                    .flat_map(|range| range.start()..=range.end())
                    .collect(),
                Class::Unicode(chars) => chars
                    .iter()
                    .flat_map(|range| range.start()..=range.end())
                    .filter_map(|c| u8::try_from(u32::from(c)).ok())
                    .collect(),
            };
            // Prefer printable ASCII members.
            let printable: Vec<u8> = members
                .iter()
                .copied()
                .filter(u8::is_ascii_graphic)
                .collect();
            let pool = if printable.is_empty() {
                members
            } else {
                printable
            };
            let byte = match fill {
                Fill::Random => pool[noise.below(pool.len())],
                Fill::Placeholder => {
                    if pool.contains(&b'x') {
                        b'x'
                    } else {
                        pool[0]
                    }
                }
                Fill::Sequence => {
                    let alnum: Vec<u8> = pool
                        .iter()
                        .copied()
                        .filter(u8::is_ascii_alphanumeric)
                        .collect();
                    let seq = if alnum.is_empty() { &pool } else { &alnum };
                    *counter += 1;
                    seq[(*counter - 1) % seq.len()]
                }
            };
            out.push(byte);
        }
        HirKind::Repetition(rep) => {
            let min = rep.min as usize;
            let max = rep.max.map_or(min + 10, |max| max as usize);
            let count = if fill == Fill::Random && max > min {
                min + noise.below(max - min + 1)
            } else {
                min
            };
            for _ in 0..count {
                generate(&rep.sub, fill, noise, counter, out);
            }
        }
        HirKind::Capture(capture) => generate(&capture.sub, fill, noise, counter, out),
        HirKind::Concat(parts) => {
            for part in parts {
                generate(part, fill, noise, counter, out);
            }
        }
        HirKind::Alternation(branches) => {
            let pick = if fill == Fill::Random {
                noise.below(branches.len())
            } else {
                0
            };
            generate(&branches[pick], fill, noise, counter, out);
        }
    }
}

fn generate_from(pattern: &str, fill: Fill, seed: u64) -> String {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
        .unwrap_or_else(|error| panic!("pattern {pattern:?}: {error}"));
    let mut out = Vec::new();
    generate(&hir, fill, &mut Noise::new(seed), &mut 0, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// A rule as the test reads it from `rules.toml`.
struct RuleView {
    id: String,
    token: Option<String>,
    names: Option<String>,
    secret: Option<String>,
    check: Option<String>,
}

fn rule_views() -> Vec<RuleView> {
    let table: toml::Table = RULES_TOML.parse().expect("rules.toml parses");
    let rules = table
        .get("rule")
        .and_then(toml::Value::as_array)
        .expect("rules");
    rules
        .iter()
        .map(|rule| {
            let field = |name: &str| {
                rule.get(name)
                    .and_then(toml::Value::as_str)
                    .map(str::to_owned)
            };
            RuleView {
                id: field("id").expect("id"),
                token: field("token"),
                names: field("names"),
                secret: field("secret"),
                check: field("check"),
            }
        })
        .collect()
}

/// The hand-written samples.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SampleFile {
    sample: Vec<SampleSpec>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SampleSpec {
    rule: String,
    #[serde(default)]
    hit: Vec<String>,
    #[serde(default)]
    miss: Vec<String>,
}

/// Every rule's true and false samples: generated ones for token and
/// assignment rules whose validator is the token check, plus the
/// hand-written ones.
pub(super) fn sample_table() -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let mut table: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for (index, rule) in rule_views().iter().enumerate() {
        let seed = 1000 + 97 * index as u64;
        let entry = table.entry(rule.id.clone()).or_default();
        let token_check = rule.check.is_none();
        let body = rule.token.as_ref().or(rule.secret.as_ref());
        let (Some(body), true) = (body, token_check) else {
            continue;
        };
        let secret = generate_from(body, Fill::Random, seed);
        let secret2 = generate_from(body, Fill::Random, seed + 1);
        let placeholder = generate_from(body, Fill::Placeholder, seed);
        let sequence = generate_from(body, Fill::Sequence, seed);
        if let Some(names) = &rule.names {
            let name = generate_from(names, Fill::Random, seed + 2).replace(['\\', '\n'], "");
            entry.0.push(format!("{name}_api_token = \"{secret}\""));
            entry.0.push(format!("{name}_token: |\n  {secret2}"));
            entry.0.push(format!("<{name}Token>{secret}</{name}Token>"));
            entry
                .1
                .push(format!("{name}_api_token = \"{placeholder}\""));
            entry.1.push(format!("{name}_api_token: {sequence}"));
        } else {
            entry.0.push(format!("credential = \"{secret}\""));
            entry.0.push(format!(
                "curl -s https://api.internal/v1 --data {secret2} ;"
            ));
            entry.1.push(format!("credential = \"{placeholder}\""));
            entry.1.push(format!("PROVIDER_CREDENTIAL={sequence}"));
        }
    }
    let samples: SampleFile = toml::from_str(SAMPLES_TOML).expect("samples.toml parses");
    let views = rule_views();
    for (index, spec) in samples.sample.iter().enumerate() {
        let view = views
            .iter()
            .find(|view| view.id == spec.rule)
            .unwrap_or_else(|| panic!("samples.toml names unknown rule {}", spec.rule));
        let generated = view
            .token
            .as_ref()
            .or(view.secret.as_ref())
            .map(|body| generate_from(body, Fill::Random, 50_000 + index as u64));
        let entry = table.entry(spec.rule.clone()).or_default();
        for (k, hit) in spec.hit.iter().enumerate() {
            let seed = 7_000 + 31 * index as u64 + k as u64;
            entry.0.push(expand(hit, seed, generated.as_deref()));
        }
        for (k, miss) in spec.miss.iter().enumerate() {
            let seed = 9_000 + 31 * index as u64 + k as u64;
            entry.1.push(expand(miss, seed, generated.as_deref()));
        }
    }
    table
}

// ------------------------------------------------------------- rule samples

#[test]
fn every_rule_has_true_and_false_samples_that_behave() {
    let table = sample_table();
    let mut failures = Vec::new();
    let (mut hits, mut misses) = (0usize, 0usize);
    for id in rules().ids() {
        let Some((true_samples, false_samples)) = table.get(*id) else {
            failures.push(format!("{id}: no samples"));
            continue;
        };
        if true_samples.len() < 2 || false_samples.len() < 2 {
            failures.push(format!(
                "{id}: {} true and {} false samples (need 2 + 2)",
                true_samples.len(),
                false_samples.len()
            ));
        }
        for sample in true_samples {
            hits += 1;
            let text = format!("# config\n{sample}\n");
            match rules().scan(text.as_bytes()) {
                Some(hit) if hit.rule == *id && hit.line == 2 => {}
                other => failures.push(format!("{id}: true sample {sample:?} gave {other:?}")),
            }
        }
        for sample in false_samples {
            misses += 1;
            let text = format!("# config\n{sample}\n");
            if let Some(hit) = rules().scan(text.as_bytes()) {
                failures.push(format!("{id}: false sample {sample:?} hit {hit:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {hits} true / {misses} false samples failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(hits >= 2 * rules().len() && misses >= 2 * rules().len());
}

#[test]
fn rule_table_is_well_formed() {
    let ids = rules().ids();
    assert!(ids.len() >= 180, "only {} rules", ids.len());
    for required in [
        "private-key-block",
        "aws-access-key-id",
        "github-pat",
        "gitlab-pat",
        "generic-secret-assignment",
        "generic-password-assignment",
        "jwt",
        "url-basic-auth",
        "database-url-password",
    ] {
        assert!(ids.contains(&required), "{required} missing");
    }
    assert_eq!(ContentRules::rule_names(), ids);
    for id in ids {
        assert!(
            rules().description(id).is_some_and(|d| !d.is_empty()),
            "{id}"
        );
    }
}

// ------------------------------------------------------------- fail closed

#[test]
fn every_embedded_rule_compiles() {
    // Rules compile on first use; this is where a pattern that parses but does not
    // compile (over a size limit) is caught before it ships.
    ContentRules::new().unwrap().compile_all().unwrap();
}

#[test]
fn a_rule_that_cannot_compile_holds_the_file_back() {
    // Parses, but its automaton is far over the size limit: it fails only when compiled.
    let table = r#"
[[rule]]
id = "huge"
description = "huge"
keywords = ["zzz"]
token = '''zzz(?:[a-z0-9]{1000}){1000}'''
"#;
    let rules = ContentRules::from_toml(table).unwrap();
    assert!(rules.compile_all().is_err());
    let hit = rules
        .scan(b"line one\nzzz is named here\n")
        .expect("held back");
    assert_eq!(hit.rule, "huge");
    assert!(rules.scan(b"no keyword here\n").is_none());
}

#[test]
fn bad_regex_fails_closed() {
    let table = r#"
[[rule]]
id = "fine"
description = "fine"
keywords = ["abc"]
token = '''abc[0-9]{8}'''

[[rule]]
id = "broken"
description = "broken"
keywords = ["xyz"]
regex = '''(unclosed'''
"#;
    match ContentRules::from_toml(table) {
        Err(SecretsError::Rule { rule, .. }) => assert_eq!(rule, "broken"),
        other => panic!("a broken rule must not build: {other:?}"),
    }
    let message = ContentRules::from_toml(table).err().map(|e| e.to_string());
    assert_eq!(
        message.as_deref(),
        Some("secret rule \"broken\" does not compile")
    );
}

#[test]
fn malformed_tables_fail_closed() {
    let cases = [
        ("not toml at all [[[", "does not parse"),
        (
            "[[rule]]\nid = \"a\"\ndescription = \"d\"\nkeywords = []\ntoken = 'x'",
            "no keywords",
        ),
        (
            "[[rule]]\nid = \"a\"\ndescription = \"d\"\nkeywords = [\"xyz\"]",
            "exactly one",
        ),
        (
            "[[rule]]\nid = \"a\"\ndescription = \"d\"\nkeywords = [\"X\"]\ntoken = 'x'",
            "lower-case",
        ),
        (
            "[[rule]]\nid = \"a\"\ndescription = \"d\"\nkeywords = [\"xyz\"]\ntoken = 'x'\ncheck = \"nope\"",
            "unknown `check`",
        ),
        (
            "[[rule]]\nid = \"a\"\ndescription = \"d\"\nkeywords = [\"xyz\"]\ntoken = 'x'\nsurprise = 1",
            "does not parse",
        ),
        (
            "[[rule]]\nid = \"a\"\ndescription = \"d\"\nkeywords = [\"xyz\"]\ntoken = 'x'\n[rule.allowlist]\nregexes = ['(']",
            "does not compile",
        ),
        (
            "[[rule]]\nid = \"a\"\ndescription = \"d\"\nkeywords = [\"xyz\"]\ntoken = 'x'\n[[rule]]\nid = \"a\"\ndescription = \"d\"\nkeywords = [\"xyz\"]\ntoken = 'y'",
            "duplicate",
        ),
        (
            "[[rule]]\nid = \"a\"\ndescription = \"d\"\nkeywords = [\"ab\"]\ntoken = 'ab'",
            "three bytes",
        ),
        ("", "does not parse"),
    ];
    for (table, expected) in cases {
        match ContentRules::from_toml(table) {
            Ok(_) => panic!("table must not build: {table}"),
            Err(error) => assert!(
                error.to_string().contains(expected),
                "{table}: {error} (wanted {expected})"
            ),
        }
    }
}

// ------------------------------------------------------------- no leaking

#[test]
fn hit_never_carries_the_value() {
    let mut noise = Noise::new(5);
    let body = noise.string(36, ALNUM);
    let token = format!("ghp_{body}");
    let hit = scan(&format!("token = {token}")).expect("hit");
    for shown in [format!("{hit:?}"), hit.to_string()] {
        assert!(!shown.contains(&body), "{shown}");
        assert!(!shown.contains(&body[..8]), "{shown}");
    }
    let password = format!("Zq{}7!", noise.string(14, ALNUM));
    let hit = scan(&format!("DB_PASSWORD={password}\n")).expect("hit");
    assert!(!format!("{hit:?}{hit}").contains(&password));
}

#[test]
fn errors_never_carry_scanned_text() {
    let table = "[[rule]]\nid = \"leaky\"\ndescription = \"d\"\nkeywords = [\"x\"]\nregex = '''ghp_SECRETVALUE('''";
    let error = ContentRules::from_toml(table).expect_err("error");
    let shown = format!("{error}");
    assert!(!shown.contains("SECRETVALUE"), "{shown}");
}

// --------------------------------------------------------------- the engine

#[test]
fn earliest_line_wins_and_reports_its_line() {
    let mut noise = Noise::new(11);
    let npm = format!("npm_{}", noise.string(36, ALNUM));
    let jwt = make_jwt(&mut noise);
    let text = format!("a\nb\nc\nd\ntoken={npm}\nx\n{jwt}\n");
    assert_eq!(
        scan(&text),
        Some(ContentHit {
            rule: "npm-access-token",
            line: 5
        })
    );
    // A placeholder earlier in the file does not hide a later real hit.
    let text = format!("password = \"changeme-changeme\"\n\nauth = {jwt}\n");
    assert_eq!(
        scan(&text),
        Some(ContentHit {
            rule: "jwt",
            line: 3
        })
    );
}

/// A token ends where a path or URL goes on (`/`, `?`, `#`, `.`), not where a base64 run
/// does (`+`, `=`, `-`, `_`, more letters): `ghp_…/x.md` is a GitHub token in a path.
#[test]
fn a_token_followed_by_a_slash_is_caught() {
    let token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    for text in [
        format!("see src/{token}/x.md\n"),
        format!("git clone https://x.example/{token}/repo.git\n"),
        format!("{token}?ref=main\n"),
        format!("a-{token}.md\n"),
    ] {
        let hit = scan(&text).unwrap_or_else(|| panic!("not caught: {text}"));
        assert_eq!(hit.rule, "github-pat", "{text}");
    }
    for text in [
        format!("{token}B\n"),
        format!("{token}+more/base64==\n"),
        format!("{token}=\n"),
    ] {
        assert_eq!(scan(&text), None, "{text}");
    }
}

#[test]
fn clean_inputs() {
    assert_eq!(rules().scan(b""), None);
    assert_eq!(rules().scan(&[0xff; 1024]), None);
    assert_eq!(rules().scan(&[0; 4096]), None);
    for code in [
        "fn tokenize(secret: &str) -> Vec<Token> {\n    let password = std::env::var(\"PASSWORD\")?;\n    Ok(lex(&password))\n}\n",
        "password = \"${PASSWORD}\"\ntoken: <your-token>\napi_key = os.environ[\"API_KEY\"]\n",
        "checksum = \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"\n",
        "id = \"123e4567-e89b-12d3-a456-426614174000\"\napi_key = \"123e4567-e89b-12d3-a456-426614174000\"\n",
        "key: SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgdGVzdC4=\n",
        "struct Login { password: SecretString, token: CancellationToken }\n",
        "if password == \"a8Fk2LmQ9zX4vB7nR1tY\" { deny() }\n",
    ] {
        assert_eq!(scan(code), None, "{code}");
    }
}

#[test]
fn non_utf8_buffer_with_key_block_hits() {
    let mut noise = Noise::new(4);
    let mut bytes = vec![0xff, 0xfe, 0x00, b'\n', 0xc3, 0x28, b'\n', 0x80];
    bytes.extend_from_slice(b"\n-----BEGIN OPENSSH PRIVATE KEY-----\n");
    bytes.extend_from_slice(pem_lines(&mut noise).join("\n").as_bytes());
    bytes.extend_from_slice(b"\n-----END OPENSSH PRIVATE KEY-----\n\xff\xff");
    assert_eq!(
        rules().scan(&bytes),
        Some(ContentHit {
            rule: "private-key-block",
            line: 4
        })
    );
}

fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
    text.encode_utf16()
        .flat_map(|unit| {
            if big_endian {
                unit.to_be_bytes()
            } else {
                unit.to_le_bytes()
            }
        })
        .collect()
}

#[test]
fn utf16_text_inside_a_file_is_scanned() {
    let mut noise = Noise::new(21);
    let token = format!("ghp_{}", noise.string(36, ALNUM));
    for big_endian in [false, true] {
        let mut bytes = b"plain ascii header\nsecond line\n".to_vec();
        bytes.extend(utf16(
            &format!("first utf16 line\nGITHUB_TOKEN={token}\n"),
            big_endian,
        ));
        assert_eq!(
            rules().scan(&bytes),
            Some(ContentHit {
                rule: "github-pat",
                line: 4
            }),
            "big endian: {big_endian}"
        );
        // The same text without a secret stays clean.
        let mut clean = b"plain ascii header\n".to_vec();
        clean.extend(utf16("just some harmless utf16 words\n", big_endian));
        assert_eq!(rules().scan(&clean), None);
    }
}

#[test]
fn entropy_helper() {
    assert!(shannon_entropy(b"aaaaaaaa") < 0.01);
    assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-9);
    assert!(shannon_entropy(Noise::new(1).string(64, BASE64).as_bytes()) > 4.5);
}

// ------------------------------------------------------------------ names

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
        ("id_dsa", "SSH key file (`id_dsa*`)"),
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
        (
            "infra/terraform.tfstate",
            "Terraform state file (`*.tfstate`)",
        ),
        (
            "infra/terraform.tfstate.backup",
            "Terraform state file (`*.tfstate`)",
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
        (
            "home/.docker/config.json",
            "Docker credentials file (`.docker/config.json`)",
        ),
        (".kube/config", "Kubernetes config (`.kube/config`)"),
        ("deploy/kubeconfig", "Kubernetes config (`kubeconfig*`)"),
        ("kubeconfig-prod.yaml", "Kubernetes config (`kubeconfig*`)"),
        ("web/.htpasswd", "`.htpasswd` file"),
        (".pgpass", "`.pgpass` file"),
        ("keys/server.ppk", "PuTTY private key file (`*.ppk`)"),
        ("site/wp-config.php", "`wp-config.php` file"),
        (".vault-token", "`.vault-token` file"),
        ("vault.kdbx", "KeePass database (`*.kdbx`)"),
        (".s3cfg", "`.s3cfg` file"),
        (".boto", "`.boto` file"),
        (".git/config", "`.git/` folder (never read)"),
        ("sub/.git/objects/ab/cdef", "`.git/` folder (never read)"),
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
        "src/kubeconfig.go",
        "docker/config.json",
        "src/config.json",
        ".gitignore",
        ".github/workflows/ci.yml",
        "src/git/config.rs",
        "wp-config-sample.php",
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

#[test]
fn redact_replaces_each_secret_and_leaves_the_rest() {
    let token = "ghp_R7mK2pQ9xV4nL8wT3yH6jB1cF5dG0sZeAa9u";
    assert_eq!(
        crate::trust::redact::redact("paths: \"../docs/guide.md\" climbs out"),
        "paths: \"../docs/guide.md\" climbs out"
    );
    assert_eq!(
        crate::trust::redact::redact(&format!(
            "task_file: \"../{token}\" climbs out; and {token} again"
        )),
        "task_file: \"../<secret: github-pat>\" climbs out; and <secret: github-pat> again"
    );
    let said = crate::trust::redact::redact(&format!("cannot read /r/{token}/t.json"));
    assert!(!said.contains("R7mK2pQ9"), "{said}");
    // A token that is a path's segment: the rest of the path stays, to tell paths apart.
    assert_eq!(
        crate::trust::redact::redact_path(&format!("/tmp/x/{token}/repo")),
        "/tmp/x/<secret: github-pat>/repo"
    );
    assert_eq!(
        crate::trust::redact::redact_path("/tmp/x/repo"),
        "/tmp/x/repo"
    );
    // What curate's own messages hold is left alone: digests, hashes, ids.
    for text in [
        "// curate: 0.1.0 contracts=8a0c3c206a26 digest=6300160ad0b0",
        "entry \"a.md\": sha256 3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea, the file has 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "the change \"11-28-login\" is not in .trellis/tasks; did you mean 11-28-login-rate-limit?",
        "run-4b7e2d90-1c3a-4f5e-8a6b-2d9c0e1f3a57: no plan",
    ] {
        assert_eq!(crate::trust::redact::redact(text), text);
    }
}
