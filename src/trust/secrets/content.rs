//! The content engine: rules loaded from `rules.toml`, one Aho-Corasick pass
//! over the bytes to find which rule keywords occur, then only those rules'
//! regexes, each candidate checked by the rule's validator.
//!
//! Every pattern is compiled as a byte regex with Unicode off (`(?-u)`), so it
//! runs on invalid UTF-8 and `\w`, `\s`, `\b` and `(?i)` are ASCII-only.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use std::borrow::Cow;

use regex::bytes::{Captures, Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::keywords::{Keywords, token_near_keywords};
use super::layout::Layout;
use super::spec::{AllowSpec, RuleSpec, Table, index_keywords};
use super::validate::{self, Check};

// `embedded_specs()` and `EMBEDDED_LAYOUT`: `rules.toml` as build.rs read it.
include!(concat!(env!("OUT_DIR"), "/secret_rules.rs"));

/// The rules table, embedded at build time.
pub const RULES_TOML: &str = include_str!("rules.toml");

/// Gap between a secret-like name and its value: the rest of the identifier,
/// closing quotes, an assignment operator (or `(`, `,`, `|`, `>` for calls,
/// CSV and XML; a type annotation may precede `=`: `apiKey: string =`) and opening quotes or a YAML block marker.
const ASSIGN_HEAD: &str = r#"[\w \t.-]{0,20}?(?:\\*['"]{0,3})?\]?[ \t]{0,5}(?P<op>:[ \t]*[A-Za-z_][\w.<>\[\]?]{0,40}[ \t]*:?=|[<>?+.!=]?=|:{1,3}=|=>|>|:|\(|,|\|\|?)(?:[bBrRuU]?\\*['"]|[`\t =|>(]){0,5}(?:\r?\n[ \t]+)?"#;
/// What may follow an assigned value.
const ASSIGN_TAIL: &str = r#"(?:['"`\s;\\<,)&}\]]|$)"#;
/// What may precede a stand-alone token.
const TOKEN_HEAD: &str = r"\b";
/// What may follow a stand-alone token: anything that cannot continue it.
const TOKEN_TAIL: &str = r"(?:[^0-9A-Za-z_+=-]|$)";

/// The rules whose keywords are words or parts of words of most text files (`key`, `token`,
/// `secret`, `pass`; `acc`, `pat`, `ske`, `s.t` …), so that nearly every compile runs their
/// regexes (2.5 to 3.5 ms to compile together).
const COMMON: [&str; 6] = [
    "generic-secret-assignment",
    "generic-password-assignment",
    "vault-service-token",
    "twilio-account-sid",
    "twilio-api-key",
    "airtable-personal-access-token",
];

/// A content match: which rule fired and where. Never carries the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentHit {
    /// Short stable rule id, one of [`ContentRules::rule_names`].
    pub rule: &'static str,
    /// 1-based line of the start of the match.
    pub line: usize,
}

impl std::fmt::Display for ContentHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} on line {}", self.rule, self.line)
    }
}

/// Failure to build the content rules. `Clone` so the error behind
/// [`ContentRules::shared`] can be handed on by value. Errors name the rule,
/// never any scanned text.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SecretsError {
    /// A rule's pattern (or one of its allowlist patterns) does not compile.
    #[error("secret rule {rule:?} does not compile")]
    Rule {
        /// The rule id.
        rule: &'static str,
        /// The compile error.
        #[source]
        source: regex::Error,
    },
    /// The rules table is not valid TOML or does not fit the rule schema.
    #[error("secret rules table does not parse: {message}")]
    Table {
        /// The parser's message (about the table, which holds no secrets).
        message: String,
    },
    /// A rule is malformed (no keywords, no pattern, two patterns, ...).
    #[error("secret rule {rule:?} is invalid: {reason}")]
    Invalid {
        /// The rule id.
        rule: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// The keyword automaton does not build.
    #[error("secret rule keywords do not build: {message}")]
    Keywords {
        /// The builder's message.
        message: String,
    },
}

/// A compiled rule.
#[derive(Debug)]
struct Rule {
    id: &'static str,
    description: &'static str,
    /// The full pattern; its syntax is checked when the table is built, and it is compiled
    /// on first use (a process that meets a rule's keyword only then pays for its regex:
    /// compiling all of them costs a short command most of its run).
    pattern: String,
    /// An assignment (`names` + `secret`): its whole match lies on the line of one of its
    /// keywords and the lines next to it, so it runs only there.
    local: bool,
    /// A rule without keywords: it searches the runs of token bytes only (`runs.rs`).
    runs: bool,
    /// For the `prefixed` and `generic` checks: the prefixes the token rules know (see
    /// [`super::prefixed::known_prefixes`]).
    defer_to: Vec<Vec<u8>>,
    /// A `token` rule's token: it runs only there too when the token shows the same (see
    /// [`token_near_keywords`]), which is known once it is compiled.
    token: Option<String>,
    /// The keywords, for that proof.
    keywords: Vec<String>,
    compiled: OnceLock<Option<Compiled>>,
    secret_group: Option<usize>,
    entropy: f64,
    check: Check,
    values: Vec<Vec<u8>>,
    stopwords: Vec<Vec<u8>>,
    /// Allowlist patterns over the secret, compiled with the rule's regex.
    allow_patterns: Vec<String>,
}

/// A rule's regex, once compiled.
#[derive(Debug)]
struct Compiled {
    regex: Regex,
    named_secret: Option<usize>,
    allow: Option<RegexSet>,
    /// A `token` rule whose every match lies on a line of its keywords.
    near_keywords: bool,
}

fn build_allow(patterns: &[String]) -> Result<RegexSet, regex::Error> {
    RegexSetBuilder::new(patterns).unicode(false).build()
}

/// The compiled content rules: the keyword automaton and the rules.
#[derive(Debug)]
pub struct ContentRules {
    keywords: Keywords,
    /// Keyword pattern index to the rules it enables.
    keyword_rules: Vec<Vec<usize>>,
    rules: Vec<Rule>,
    names: Vec<&'static str>,
    /// Whether some rule searches the runs of token bytes.
    run_rules: bool,
}

/// The lazily compiled shared rules.
static SHARED: OnceLock<Result<ContentRules, SecretsError>> = OnceLock::new();

/// Interned rule ids and descriptions (rules are built once per process in
/// practice; interning keeps repeated builds from leaking).
fn intern(text: String) -> &'static str {
    static POOL: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let pool = POOL.get_or_init(|| Mutex::new(HashSet::new()));
    let mut pool = pool
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&known) = pool.get(text.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(text.into_boxed_str());
    pool.insert(leaked);
    leaked
}

fn build_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(16 << 20)
        .dfa_size_limit(8 << 20)
        .build()
}

impl Rule {
    fn compile(spec: RuleSpec, check_syntax: bool) -> Result<Self, SecretsError> {
        let id = intern(spec.id);
        let invalid = |reason| SecretsError::Invalid { rule: id, reason };
        if spec.keywords.is_empty() != spec.runs {
            return Err(invalid(if spec.runs {
                "a rule that searches runs has no keywords"
            } else {
                "it has no keywords"
            }));
        }
        if spec
            .keywords
            .iter()
            .any(|k| k.len() < 3 || k.bytes().any(|b| b.is_ascii_uppercase()))
        {
            return Err(invalid(
                "keywords must be lower-case and at least three bytes long",
            ));
        }
        let local = spec.names.is_some();
        let runs = spec.runs;
        let token = spec.token.clone();
        let keywords = spec.keywords;
        let pattern = match (spec.regex, spec.token, spec.names, spec.secret) {
            (Some(regex), None, None, None) => regex,
            (None, Some(token), None, None) => {
                format!("{TOKEN_HEAD}(?P<secret>{token}){TOKEN_TAIL}")
            }
            (None, None, Some(names), Some(secret)) => {
                format!("(?P<name>(?i:{names})){ASSIGN_HEAD}(?P<secret>{secret}){ASSIGN_TAIL}")
            }
            _ => {
                return Err(invalid(
                    "it needs exactly one of `regex`, `token`, or `names` with `secret`",
                ));
            }
        };
        let check = match spec.check.as_deref() {
            None => Check::Token,
            Some(name) => Check::parse(name).ok_or_else(|| invalid("unknown `check`"))?,
        };
        // The syntax now (fail closed at once); the automaton on first use.
        if check_syntax {
            let hir = regex_syntax::ParserBuilder::new()
                .unicode(false)
                .utf8(false)
                .build()
                .parse(&pattern)
                .map_err(|_| match build_regex(&pattern) {
                    Err(source) => SecretsError::Rule { rule: id, source },
                    Ok(_) => invalid("its pattern does not parse"),
                })?;
            let groups = hir.properties().explicit_captures_len() + 1;
            if spec.secret_group.is_some_and(|g| g >= groups) {
                return Err(invalid("`secret_group` is not a group of the pattern"));
            }
        }
        if check_syntax && !spec.allowlist.regexes.is_empty() {
            build_allow(&spec.allowlist.regexes)
                .map_err(|source| SecretsError::Rule { rule: id, source })?;
        }
        let allow_patterns = spec.allowlist.regexes;
        if spec
            .allowlist
            .stopwords
            .iter()
            .any(|w| w.bytes().any(|b| b.is_ascii_uppercase()))
        {
            return Err(invalid("stopwords must be lower-case"));
        }
        Ok(Self {
            id,
            description: intern(spec.description),
            pattern,
            local,
            runs,
            defer_to: Vec::new(),
            token,
            keywords,
            compiled: OnceLock::new(),
            secret_group: spec.secret_group,
            entropy: spec.entropy.unwrap_or_else(|| check.default_entropy()),
            check,
            values: spec
                .allowlist
                .values
                .into_iter()
                .map(String::into_bytes)
                .collect(),
            stopwords: spec
                .allowlist
                .stopwords
                .into_iter()
                .map(String::into_bytes)
                .collect(),
            allow_patterns,
        })
    }

    /// The rule's regex, compiled on first use; `None` when it does not compile (which
    /// the table's tests rule out; a scan then fails closed).
    fn compiled(&self) -> Option<&Compiled> {
        self.compiled.get_or_init(|| self.build().ok()).as_ref()
    }

    /// Compiles the rule now: the error a lazy compile would meet.
    fn compile_now(&self) -> Result<(), SecretsError> {
        self.build().map(drop)
    }

    /// The regex, its `secret` group and the allowlist set, compiled.
    fn build(&self) -> Result<Compiled, SecretsError> {
        let failed = |source| SecretsError::Rule {
            rule: self.id,
            source,
        };
        let regex = build_regex(&self.pattern).map_err(failed)?;
        if self.secret_group.is_some_and(|g| g >= regex.captures_len()) {
            return Err(SecretsError::Invalid {
                rule: self.id,
                reason: "`secret_group` is not a group of the pattern",
            });
        }
        let named_secret = regex
            .capture_names()
            .position(|name| name == Some("secret"));
        let allow = if self.allow_patterns.is_empty() {
            None
        } else {
            Some(build_allow(&self.allow_patterns).map_err(failed)?)
        };
        let near_keywords = self
            .token
            .as_deref()
            .is_some_and(|token| token_near_keywords(token, &self.keywords));
        Ok(Compiled {
            regex,
            named_secret,
            allow,
            near_keywords,
        })
    }

    /// The secret part of a candidate.
    fn secret<'h>(&self, caps: &Captures<'h>) -> Option<regex::bytes::Match<'h>> {
        if let Some(group) = self.secret_group {
            return caps.get(group);
        }
        if let Some(group) = self.compiled().and_then(|c| c.named_secret)
            && let Some(found) = caps.get(group)
        {
            return Some(found);
        }
        (1..caps.len())
            .find_map(|group| caps.get(group))
            .or_else(|| caps.get(0))
    }

    /// Whether a candidate passes the rule's allowlist and validator.
    fn accepts(&self, caps: &Captures<'_>, haystack: &[u8]) -> bool {
        let Some(secret) = self.secret(caps) else {
            return false;
        };
        let value = secret.as_bytes();
        if self.values.iter().any(|known| known == value) {
            return false;
        }
        if !self.stopwords.is_empty() {
            let lower = value.to_ascii_lowercase();
            if self
                .stopwords
                .iter()
                .any(|word| memchr::memmem::find(&lower, word).is_some())
            {
                return false;
            }
        }
        if self
            .compiled()
            .and_then(|c| c.allow.as_ref())
            .is_some_and(|set| set.is_match(value))
        {
            return false;
        }
        // A provider's name must be a word of the identifier (`SUMO_TOKEN`, `herokuKey`), not
        // letters inside another word (`sumOfExposures`, `CameraKit`); the generic rules'
        // names (`dbpassword`) may be glued.
        if self.local
            && matches!(self.check, Check::Token | Check::Plain)
            && caps
                .name("name")
                .is_some_and(|name| !validate::name_is_a_word(haystack, name.start(), name.end()))
        {
            return false;
        }
        let prefixed = || super::prefixed::prefixed_token_but(value, &self.defer_to);
        match self.check {
            Check::Prefixed => prefixed(),
            Check::Generic => {
                validate::passes(self.check, self.entropy, caps, value, haystack)
                    || validate::generic_assignment(caps, haystack) && prefixed()
            }
            _ => validate::passes(self.check, self.entropy, caps, value, haystack),
        }
    }

    /// Whether the rule runs only around its keywords' lines: an assignment always, a token
    /// when its pattern shows that every match lies on one (unknown before it compiles).
    fn near_keywords(&self) -> bool {
        self.local
            || self.runs
            || self.token.is_some() && self.compiled().is_some_and(|c| c.near_keywords)
    }

    /// Offset of the first accepted candidate, if any.
    fn first_valid(&self, bytes: &[u8]) -> Option<usize> {
        let Some(compiled) = self.compiled() else {
            // A rule that cannot run must not let a secret through: the file is held back.
            return Some(0);
        };
        let mut at = 0;
        // A run rule's rejected candidate (`api.example.net/v1/zvp_…`) may hide one that
        // starts inside it (`zvp_…`): the search goes on from its second byte.
        let mut candidates = std::iter::from_fn(|| {
            let caps = compiled.regex.captures_at(bytes, at)?;
            let whole = caps.get(0)?;
            at = if self.runs {
                whole.start() + 1
            } else {
                whole.end().max(whole.start() + 1)
            };
            Some(caps)
        });
        candidates.find_map(|caps| {
            if !self.accepts(&caps, bytes) {
                return None;
            }
            let whole = caps.get(0)?;
            // A match that starts with the line break before its line (a
            // boundary class) reports the line it is really on.
            let skipped = whole
                .as_bytes()
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n'))
                .count();
            Some(whole.start() + skipped)
        })
    }
}

impl ContentRules {
    /// Compiles every rule's regex now (they are otherwise compiled on first use): the
    /// tests call this, so a table whose pattern parses but does not compile (a size
    /// limit) cannot ship.
    ///
    /// # Errors
    /// The first rule that does not compile.
    pub fn compile_all(&self) -> Result<(), SecretsError> {
        self.rules.iter().try_for_each(Rule::compile_now)
    }

    /// Compiles now the rules nearly every compile runs (see `COMMON`), for a thread that
    /// warms the process up while another reads its input.
    pub fn compile_common(&self) {
        for rule in self.rules.iter().filter(|rule| COMMON.contains(&rule.id)) {
            rule.compiled();
        }
    }

    /// Compile the embedded rules table; a rule that fails to parse or
    /// compile is an error (fail closed, never an empty matcher).
    ///
    /// # Errors
    /// The first problem found in the table.
    pub fn new() -> Result<Self, SecretsError> {
        // The embedded table was read and its keywords laid out at build time. Its patterns
        // are parsed and compiled whole by the tests (`every_embedded_rule_compiles`); at run
        // time each compiles on first use, and one that failed would hold its files back.
        // Skipping the syntax pass here saves a short command most of its start-up.
        Self::build(
            embedded_specs(),
            Some(Keywords::laid_out(EMBEDDED_LAYOUT)),
            false,
        )
    }

    /// Compile a rules table in the `rules.toml` format.
    ///
    /// # Errors
    /// [`SecretsError::Table`] when the text does not parse,
    /// [`SecretsError::Invalid`] or [`SecretsError::Rule`] naming the first
    /// bad rule, [`SecretsError::Keywords`] if the automaton does not build.
    pub fn from_toml(text: &str) -> Result<Self, SecretsError> {
        let table: Table = toml::from_str(text).map_err(|error| SecretsError::Table {
            message: error.message().to_owned(),
        })?;
        Self::build(table.rule, None, true)
    }

    /// The rules of `specs`, with the keyword finder laid out for them (`None`: lay it out
    /// now).
    fn build(
        specs: Vec<RuleSpec>,
        keywords: Option<Keywords>,
        check_syntax: bool,
    ) -> Result<Self, SecretsError> {
        let (keyword_index, keyword_rules) = index_keywords(&specs);
        let known = super::prefixed::known_prefixes(&specs);
        let mut rules = Vec::with_capacity(specs.len());
        let mut seen = HashSet::new();
        for spec in specs {
            let mut rule = Rule::compile(spec, check_syntax)?;
            if matches!(rule.check, Check::Prefixed | Check::Generic) {
                rule.defer_to.clone_from(&known);
            }
            if !seen.insert(rule.id) {
                return Err(SecretsError::Invalid {
                    rule: rule.id,
                    reason: "duplicate rule id",
                });
            }
            rules.push(rule);
        }
        if rules.is_empty() {
            return Err(SecretsError::Table {
                message: "no rules".to_owned(),
            });
        }
        let keywords = match keywords {
            Some(keywords) => keywords,
            None => Keywords::new(&keyword_index)
                .map_err(|message| SecretsError::Keywords { message })?,
        };
        let names = rules.iter().map(|rule| rule.id).collect();
        let run_rules = rules.iter().any(|rule| rule.runs);
        Ok(Self {
            keywords,
            keyword_rules,
            rules,
            names,
            run_rules,
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
    /// line number; `None` when clean. Invalid UTF-8 is fine, and UTF-16 text
    /// inside the bytes is scanned too. The hit names the rule only, never the
    /// matched value.
    #[must_use]
    pub fn scan(&self, bytes: &[u8]) -> Option<ContentHit> {
        let mut best = self
            .first_hit(bytes)
            .map(|(offset, rule)| (line_of(bytes, offset), rule));
        if memchr::memchr(0, bytes).is_some() {
            for view in super::utf16::views(bytes) {
                if let Some((offset, rule)) = self.first_hit(&view.text) {
                    let line = line_of(bytes, view.original_offset(offset));
                    if best.is_none_or(|(best_line, _)| line < best_line) {
                        best = Some((line, rule));
                    }
                }
            }
        }
        if best.is_none() {
            // Written encoded (base64, `\u` escapes): found decoded, at the encoded line.
            best = self.decoded_hit(bytes, super::decoded::MAX_DEPTH);
        }
        best.map(|(line, rule)| ContentHit { rule, line })
    }

    /// The first hit in the decoded views of `bytes` (decoded again `depth - 1` more
    /// times), as the 1-based line of `bytes` the encoded text is on.
    fn decoded_hit(&self, bytes: &[u8], depth: usize) -> Option<(usize, &'static str)> {
        for view in super::decoded::views(bytes) {
            if let Some((offset, rule)) = self.first_hit(&view.text) {
                return Some((view.line_of(offset), rule));
            }
            if depth > 1
                && let Some((line, rule)) = self.decoded_hit(&view.text, depth - 1)
            {
                // That line of the view, as the original's.
                let start = memchr::memchr_iter(b'\n', &view.text)
                    .nth(line.saturating_sub(2))
                    .map_or(0, |k| k + 1);
                let at = if line <= 1 { 0 } else { start };
                return Some((view.line_of(at), rule));
            }
        }
        None
    }

    /// The rule a path or glob holds a secret by, if any: the text as given, then each of its
    /// `/` parts as a line of its own (a value the assignment rules want to end at a word's
    /// end is followed by `/` in a path: `password=hunter2/x`).
    #[must_use]
    pub fn scan_path(&self, path: &str) -> Option<&'static str> {
        self.first_hit(path.as_bytes())
            .or_else(|| {
                path.contains('/')
                    .then(|| self.first_hit(path.replace('/', "\n").as_bytes()))
                    .flatten()
            })
            .map(|(_, rule)| rule)
    }

    /// `text` with every secret by content replaced by `<secret: RULE>`: from the match's
    /// start to the next blank, quote or bracket. For messages that echo what a caller gave
    /// (an argument that holds a token). Past `MAX` replacements the whole text goes.
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        const MAX: usize = 32;
        let mut out = text.to_owned();
        for _ in 0..MAX {
            // `/` as a line break keeps every offset (one byte each way).
            let hit = self.first_hit(out.as_bytes()).or_else(|| {
                out.contains('/')
                    .then(|| self.first_hit(out.replace('/', "\n").as_bytes()))
                    .flatten()
            });
            let Some((start, rule)) = hit else {
                return out;
            };
            let start = (0..=start)
                .rev()
                .find(|&i| out.is_char_boundary(i))
                .unwrap_or(0);
            let end = out[start..]
                .find(|c: char| c.is_whitespace() || "\"'`,;()[]{}<>".contains(c))
                .map_or(out.len(), |n| start + n.max(1));
            out.replace_range(start..end, &format!("<secret: {rule}>"));
        }
        "<a text that holds secrets, never shown>".to_owned()
    }

    /// Offset of the earliest hit's match and its rule: one keyword pass,
    /// then the enabled rules in table order (on the same line the earlier
    /// rule names the hit).
    fn first_hit(&self, bytes: &[u8]) -> Option<(usize, &'static str)> {
        self.first_hit_with(bytes, Rule::near_keywords)
    }

    /// [`Self::first_hit`], with the rules that `near` names run only around their keywords
    /// (the tests compare that with the whole text).
    fn first_hit_with(
        &self,
        bytes: &[u8],
        near: impl Fn(&Rule) -> bool,
    ) -> Option<(usize, &'static str)> {
        let mut enabled = vec![false; self.rules.len()];
        // For the rules that may run near their keywords only, the regions to search: the
        // keyword's line and the lines on either side, merged (keyword matches come in order
        // of their start).
        let mut regions: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.rules.len()];
        let mut any = false;
        // The region of the last keyword's line, with that line's bounds: every keyword on
        // the same line has the same region, found once (a line of a million keywords
        // would otherwise be searched back and forth a million times).
        let mut last: Option<((usize, usize), (usize, usize))> = None;
        self.keywords.each(bytes, |keyword, start, end| {
            let Some(list) = self.keyword_rules.get(keyword) else {
                return;
            };
            let mut region = last
                .filter(|&((line_start, line_end), _)| {
                    (line_start..line_end).contains(&start)
                        && !bytes.get(start..end).unwrap_or_default().contains(&b'\n')
                })
                .map(|(_, region)| region);
            for &index in list {
                let Some(flag) = enabled.get_mut(index) else {
                    continue;
                };
                *flag = true;
                any = true;
                if self
                    .rules
                    .get(index)
                    .is_some_and(|r| r.local || r.token.is_some())
                {
                    let (from, to) = *region.get_or_insert_with(|| {
                        let (line, region) = around(bytes, start, end);
                        last = Some((line, region));
                        region
                    });
                    let list = &mut regions[index];
                    match list.last_mut() {
                        Some(last) if from <= last.1 => last.1 = last.1.max(to),
                        _ => list.push((from, to)),
                    }
                }
            }
        });
        let runs = if self.run_rules {
            super::runs::regions(bytes)
        } else {
            Vec::new()
        };
        if !runs.is_empty() {
            for (index, _) in self.rules.iter().enumerate().filter(|(_, r)| r.runs) {
                enabled[index] = true;
                regions[index].clone_from(&runs);
                any = true;
            }
        }
        if !any {
            return None;
        }
        let mut best: Option<(usize, usize, &'static str)> = None;
        for ((rule, _), regions) in self
            .rules
            .iter()
            .zip(&enabled)
            .zip(&regions)
            .filter(|((_, on), _)| **on)
        {
            let found = if near(rule) {
                regions.iter().find_map(|&(from, to)| {
                    rule.first_valid(bytes.get(from..to).unwrap_or_default())
                        .map(|start| from + start)
                })
            } else {
                rule.first_valid(bytes)
            };
            if let Some(start) = found {
                let line_start = line_start_of(bytes, start);
                if best.is_none_or(|(best_line_start, _, _)| line_start < best_line_start) {
                    best = Some((line_start, start, rule.id));
                }
            }
        }
        best.map(|(_, start, rule)| (start, rule))
    }

    /// The ids of all content rules, in table order.
    #[must_use]
    pub fn rule_names() -> &'static [&'static str] {
        match Self::shared() {
            Ok(rules) => &rules.names,
            Err(_) => &[],
        }
    }

    /// The ids of this rule set, in table order.
    #[must_use]
    pub fn ids(&self) -> &[&'static str] {
        &self.names
    }

    /// A rule's description (provider and kind), by id.
    #[must_use]
    pub fn description(&self, id: &str) -> Option<&'static str> {
        self.rules
            .iter()
            .find(|rule| rule.id == id)
            .map(|rule| rule.description)
    }

    /// Number of rules.
    #[must_use]
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether the set is empty (never, once built).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// Offset of the start of the line holding `offset`.
fn line_start_of(bytes: &[u8], offset: usize) -> usize {
    let before = bytes.get(..offset).unwrap_or(bytes);
    memchr::memrchr(b'\n', before).map_or(0, |newline| newline + 1)
}

/// The region a local rule searches around a keyword at `start..end`: from the start of
/// the line before to the end of the line after; with the bounds of the keyword's own line
/// (its end after its `\n`).
fn around(bytes: &[u8], start: usize, end: usize) -> ((usize, usize), (usize, usize)) {
    let line = line_start_of(bytes, start);
    let from = if line == 0 {
        0
    } else {
        line_start_of(bytes, line - 1)
    };
    let after = |at: usize| {
        bytes
            .get(at..)
            .and_then(|rest| memchr::memchr(b'\n', rest))
            .map_or(bytes.len(), |i| at + i + 1)
    };
    let line_end = after(end);
    ((line, line_end), (from, after(line_end)))
}

/// 1-based line number of a byte offset.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    let before = bytes.get(..offset).unwrap_or(bytes);
    memchr::memchr_iter(b'\n', before).count() + 1
}

/// The distinct keywords of the embedded table, in first-seen order (the
/// keyword finder's tests search with them).
#[cfg(test)]
pub(super) fn keyword_list() -> Vec<String> {
    let table: Table = toml::from_str(RULES_TOML).expect("the embedded table parses");
    index_keywords(&table.rule).0
}

#[cfg(test)]
mod embedded_tests {
    use super::*;

    #[test]
    fn the_common_rules_are_rules_of_the_table() {
        let rules = ContentRules::new().expect("builds");
        for id in COMMON {
            assert!(rules.ids().contains(&id), "{id}");
        }
    }

    #[test]
    fn a_token_runs_near_its_keywords_only_where_its_pattern_shows_every_match_there() {
        let near = |token: &str, keywords: &[&str]| {
            let keywords: Vec<String> = keywords.iter().map(|k| (*k).to_owned()).collect();
            token_near_keywords(token, &keywords)
        };
        assert!(near(
            "AC[0-9a-f]{32}",
            &[
                "ac0", "ac1", "ac2", "ac3", "ac4", "ac5", "ac6", "ac7", "ac8", "ac9", "aca", "acb",
                "acc", "acd", "ace", "acf"
            ]
        ));
        assert!(
            near(r"(?i)abc\w{3}", &["abc"]),
            "case variants all hold the keyword"
        );
        assert!(
            !near("AC[0-9a-f]{32}", &["ac0", "ac1"]),
            "AC2… holds no keyword"
        );
        assert!(!near(r"abc[^x]{3}", &["abc"]), "[^x] matches a line break");
        assert!(!near(r"abc\s+\w+", &["abc"]), "\\s matches a line break");
        assert!(!near(r"(?s)abc.{3}", &["abc"]));
        assert!(!near(r"\w{3}abc", &["abc"]), "no finite prefix");
        assert!(!near(r"xyz[0-9]{4}", &["abc"]));
        assert!(!near(r"(abc", &["abc"]), "does not parse");

        let rules = ContentRules::new().expect("builds");
        let proven: Vec<&str> = rules
            .rules
            .iter()
            .filter(|rule| rule.token.is_some() && rule.near_keywords())
            .map(|rule| rule.id)
            .collect();
        // The token rules whose keywords are parts of common words, which ran over whole
        // files before.
        for id in [
            "twilio-account-sid",
            "twilio-api-key",
            "vault-service-token",
            "aws-access-key-id",
            "airtable-personal-access-token",
            "harness-api-key",
        ] {
            assert!(proven.contains(&id), "{id}");
        }
        assert!(
            !rules
                .rules
                .iter()
                .any(|r| r.token.is_none() && !r.local && !r.runs && r.near_keywords())
        );
    }

    #[test]
    fn a_token_rule_run_near_its_keywords_finds_what_the_whole_text_finds() {
        let rules = ContentRules::shared().expect("builds");
        let table = super::super::tests::sample_table();
        let filler = "let placeholder = compute(access, skip, path);\n".repeat(40);
        let mut texts = 0;
        for (id, (hits, misses)) in &table {
            for sample in hits.iter().chain(misses) {
                for text in [
                    sample.clone(),
                    format!("{sample}\n"),
                    format!("{filler}{sample}\n{filler}"),
                    format!("{filler}{sample}"),
                    format!("{sample}\r\n{filler}{sample} {sample}\r\n"),
                    format!("x{sample}y\n{filler}"),
                ] {
                    texts += 1;
                    assert_eq!(
                        rules.first_hit(text.as_bytes()),
                        rules.first_hit_with(text.as_bytes(), |rule| rule.local),
                        "{id}: {text:?}"
                    );
                }
            }
        }
        assert!(texts > 1000, "{texts}");
    }

    /// A line holding a rule's keyword many times (a generated file, an attack on the scan's
    /// time) shares one region; the lines next to it still get theirs: a secret after,
    /// before or between such lines is found, by its rule, on its line (or before it).
    #[test]
    fn a_secret_next_to_a_line_of_its_keywords_is_found_on_its_line() {
        let rules = ContentRules::shared().expect("builds");
        let table = super::super::tests::sample_table();
        let mut checked = 0;
        for (id, (hits, _)) in &table {
            let Some(rule) = rules.rules.iter().find(|r| r.id == id) else {
                continue;
            };
            let Some(keyword) = rule.keywords.first() else {
                continue;
            };
            let many = format!("{keyword} ").repeat(2000);
            if rules.first_hit(many.as_bytes()).is_some() {
                continue;
            }
            for sample in hits.iter().filter(|s| !s.contains('\n')) {
                let Some(alone) = rules.scan(sample.as_bytes()) else {
                    continue;
                };
                for (text, line) in [
                    (format!("{many}\n{sample}\n"), 2),
                    (format!("{sample}\n{many}\n"), 1),
                    (format!("{many}\n{many}\n{sample}\n{many}"), 3),
                    (format!("{many}\n\n\n{sample}"), 4),
                ] {
                    checked += 1;
                    // A rule whose match may span lines (`curl` and its header) may start it
                    // on a keywords' line before.
                    let hit = rules.scan(text.as_bytes());
                    assert!(
                        hit.as_ref()
                            .is_some_and(|h| h.rule == alone.rule && h.line <= line),
                        "{id}: {sample:?} after or before a line of {keyword:?}: {hit:?}"
                    );
                }
            }
        }
        assert!(checked > 400, "{checked}");
    }

    #[test]
    fn the_table_built_in_is_rules_toml_as_it_stands() {
        let table: Table = toml::from_str(RULES_TOML).expect("the embedded table parses");
        assert_eq!(
            format!("{:?}", embedded_specs()),
            format!("{:?}", table.rule),
            "build.rs wrote another table than rules.toml"
        );
        let keywords = index_keywords(&table.rule).0;
        assert_eq!(
            EMBEDDED_LAYOUT,
            super::super::layout::layout(&keywords).expect("lays out"),
            "build.rs laid out the finder for other keywords"
        );
    }
}
