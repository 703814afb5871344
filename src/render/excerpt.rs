//! The `excerpt` template function: each kept file's lines, as the manifest's sections
//! say, fenced and numbered, read through the trust boundary (from what the compile held,
//! else read again and checked against its hash), in parallel ahead of the render and
//! within the byte caps.

use super::*;

/// The language of a fence for a file name.
#[must_use]
pub fn fence_language(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map_or("", |(_, e)| e)
        .to_ascii_lowercase();
    match ext.as_str() {
        "md" | "markdown" => "markdown",
        "rs" => "rust",
        "ts" | "tsx" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "py" => "python",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" | "cxx" => "cpp",
        "json" | "jsonl" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "sh" | "bash" => "bash",
        "patch" | "diff" => "diff",
        "html" | "htm" => "html",
        "css" => "css",
        "sql" => "sql",
        "rb" => "ruby",
        "kt" => "kotlin",
        "swift" => "swift",
        "tera" | "j2" | "jinja" => "jinja",
        "xml" => "xml",
        _ => "text",
    }
}

/// The label of a line in an excerpt, `{n:>width$} |`, counted up in place from one line to
/// the next (formatting each number anew was a tenth of a bulk bundle's render).
pub(super) struct Numbering {
    /// `width` characters: the number's digits, spaces on the left.
    digits: String,
}

impl Numbering {
    pub(super) fn new(first: u64, width: usize) -> Self {
        Self {
            digits: format!("{first:>width$}"),
        }
    }

    /// Writes the label, `digits |`.
    pub(super) fn write(&self, out: &mut String) {
        out.push_str(&self.digits);
        out.push_str(" |");
    }

    /// The next number: the last digit replaced, carried left past each 9. Within a range
    /// the numbers never grow wider than the label, whose width is that of the range's last
    /// line.
    pub(super) fn advance(&mut self) {
        let mut nines = 0;
        while let Some(last) = self.digits.pop() {
            match last {
                '9' => nines += 1,
                ' ' => {
                    self.digits.push('1');
                    break;
                }
                _ => {
                    let next = last.to_digit(10).and_then(|d| char::from_digit(d + 1, 10));
                    self.digits.push(next.unwrap_or(last));
                    break;
                }
            }
        }
        for _ in 0..nines {
            self.digits.push('0');
        }
    }
}

/// The lines of a text in order, numbered from 1, each without its line end (`\n`, and any
/// `\r` before it): read forward only, one `memchr` a line, nothing built per line.
pub(super) struct LineWalk<'a> {
    text: &'a str,
    /// Where line `next` starts.
    at: usize,
    next: u64,
}

impl<'a> LineWalk<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            at: 0,
            next: 1,
        }
    }

    /// Line `n` (at or after the next one; `""` past the end).
    fn line(&mut self, n: u64) -> &'a str {
        while self.next < n {
            self.step();
        }
        self.step()
    }

    fn step(&mut self) -> &'a str {
        let rest = self.text.get(self.at..).unwrap_or_default();
        let line = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(end) => {
                self.at += end + 1;
                rest.get(..end).unwrap_or_default()
            }
            None => {
                self.at = self.text.len();
                rest
            }
        };
        self.next += 1;
        // `\r` is one byte: cut before the last of them is a character boundary.
        let kept = line.len() - line.bytes().rev().take_while(|&b| b == b'\r').count();
        line.get(..kept).unwrap_or_default()
    }
}

/// What a whole file's excerpt holds, counted over its bytes without a line's own: for a
/// text without `\r` (whose lines are then exactly the bytes between `\n`s).
pub(super) struct Whole {
    /// Each line's bytes and one newline.
    used: u64,
    lines: usize,
    /// The lines that are not empty (a space between number and text).
    spaced: usize,
}

impl Whole {
    fn of(text: &[u8], lines: u64) -> Option<Whole> {
        if memchr::memchr(b'\r', text).is_some() {
            return None;
        }
        let lines = usize::try_from(lines).ok()?;
        // An empty line is a `\n` at the start or right after another; counted in blocks a
        // byte-wide sum holds (which the compiler turns into vector code).
        let pairs = text.get(1..).unwrap_or_default();
        let empty = usize::from(text.first() == Some(&b'\n'))
            + text
                .chunks(255)
                .zip(pairs.chunks(255))
                .map(|(a, b)| {
                    let block = a.iter().zip(b).fold(0u8, |n, (a, b)| {
                        n + (u8::from(*a == b'\n') & u8::from(*b == b'\n'))
                    });
                    usize::from(block)
                })
                .sum::<usize>();
        Some(Whole {
            used: text.len() as u64 + u64::from(text.last().is_some_and(|&b| b != b'\n')),
            lines,
            spaced: lines - empty,
        })
    }
}

/// The numbered, fenced text of one entry's selected lines, and whether it was cut.
#[must_use]
pub fn excerpt_text(path: &str, bytes: &[u8], sections: &Sections, per_file: u64) -> String {
    let text = crate::util::read::text_of(bytes);
    let count = measure::count_lines(text.as_bytes());
    // Most files hold no backtick: then no line needs looking at for the fence.
    let backticks = memchr::memchr(b'`', text.as_bytes()).is_some();
    let ranges: Vec<[u64; 2]> = match sections.as_ranges() {
        None => {
            if count == 0 {
                vec![]
            } else {
                vec![[1, count]]
            }
        }
        Some(r) => r
            .iter()
            .filter(|[s, _]| *s <= count)
            .map(|&[s, e]| [s, e.min(count)])
            .collect(),
    };
    let width = ranges.last().map_or(1, |[_, e]| e.to_string().len());
    // First pass: which lines fit the byte cap, and the longest backtick run among them
    // (the fence must be longer). Second pass: write them, with no copy per line.
    let mut used: u64 = 0;
    let (mut shown, mut spaced): (usize, usize) = (0, 0);
    let mut cut = None;
    let mut longest_run = 0;
    let mut lines = LineWalk::new(&text);
    let whole = (!backticks && sections.as_ranges().is_none() && per_file == 0)
        .then(|| Whole::of(text.as_bytes(), count))
        .flatten();
    let measured = match whole {
        // Nearly every file of a bulk bundle: counted over the bytes, not line by line.
        Some(whole) => {
            (used, shown, spaced) = (whole.used, whole.lines, whole.spaced);
            &[][..]
        }
        _ => &ranges[..],
    };
    'measure: for &[s, e] in measured {
        for n in s..=e {
            let line = lines.line(n);
            let size = line.len() as u64 + 1;
            if per_file > 0 && used + size > per_file {
                cut = Some(n);
                break 'measure;
            }
            used += size;
            shown += 1;
            spaced += usize::from(!line.is_empty());
            if backticks && line.contains('`') {
                let run = line.split(|c| c != '`').map(str::len).max().unwrap_or(0);
                longest_run = longest_run.max(run);
            }
        }
    }
    let fence = "`".repeat((longest_run + 1).max(3));
    // Exactly what is written below, but for the cut note: each line with its number and
    // " |" (its newline is in `used`), a space before a line's text, "...\n" between
    // ranges, the two fences.
    let capacity = usize::try_from(used).unwrap_or(0)
        + shown * (width + 2)
        + spaced
        + ranges.len().saturating_sub(1) * 4
        + 2 * fence.len()
        + fence_language(path).len()
        + 1;
    let mut out = String::with_capacity(capacity);
    out.push_str(&fence);
    out.push_str(fence_language(path));
    out.push('\n');
    let mut lines = LineWalk::new(&text);
    'write: for (i, &[s, e]) in ranges.iter().enumerate() {
        if i > 0 {
            out.push_str("...\n");
        }
        let mut number = Numbering::new(s, width);
        for n in s..=e {
            if Some(n) == cut {
                break 'write;
            }
            let line = lines.line(n);
            number.write(&mut out);
            number.advance();
            if !line.is_empty() {
                out.push(' ');
                out.push_str(line);
            }
            out.push('\n');
        }
    }
    out.push_str(&fence);
    if let Some(n) = cut {
        let total: usize = bytes.len();
        let _ = write!(
            out,
            "\n[curate: cut before line {n}: this entry's selected text is over --max-file-bytes {per_file} ({total} bytes in the file)]"
        );
    }
    out
}

/// The excerpts of a render read ahead of it, from the moment a compile has decided what it
/// keeps ([`compile::compile_then`]), while the rest of the compile and the render's context
/// are made: for [`render_to_with`].
pub struct ReadAhead {
    pub(super) excerpt: std::sync::Arc<Excerpt>,
}

impl ReadAhead {
    /// Starts reading the excerpts of `kept` (what a compile of `root` keeps, `held` the
    /// bytes it holds), as a render with these caps shows them.
    pub fn start(
        root: &Path,
        kept: &[Kept],
        held: &std::sync::Arc<Held>,
        max_file_size: u64,
        caps: ByteCaps,
    ) -> Result<ReadAhead> {
        let from = Source {
            root,
            kept,
            held,
            max_file_size,
            caps,
        };
        let excerpt = Excerpt::new(&from, crate::trust::admit::rules()?);
        excerpt.start_producers();
        Ok(ReadAhead {
            excerpt: std::sync::Arc::new(excerpt),
        })
    }

    /// Made for these entries, in this order, with these caps.
    pub(super) fn serves(&self, job: &Job<'_>) -> bool {
        let shared = &self.excerpt.shared;
        shared.root.as_path() == job.ws.root.path()
            && shared.max_file_size == job.max_file_size
            && self.excerpt.caps == job.caps
            && shared.order.len() == job.kept.len()
            && shared.order.iter().zip(job.kept).all(|(w, k)| {
                w.file == k.entry.file && w.sha256 == k.sha256 && w.sections == k.entry.sections
            })
    }
}

/// The excerpts behind the `excerpt(file=…)` and `excerpt_text(file=…)` template functions.
/// Producer threads (one a core; started by [`ReadAhead`] inside the compile, else before the
/// render when the template names `excerpt`, else at the first call) each take the next
/// entry in manifest order, read, check and format it, a bounded window ahead of the
/// template, so the files are read while the template renders on its own thread. An entry
/// the template asks for before any producer took it is made on the template's thread.
pub(super) struct Excerpt {
    pub(super) shared: std::sync::Arc<Shared>,
    producers: Mutex<Vec<std::thread::JoinHandle<()>>>,
    caps: ByteCaps,
    used: Mutex<u64>,
    /// The text of the last `excerpt(file=…, text=false)` that was inlined, by file, for
    /// `excerpt_text(file=…)`: handed over, not copied (tera copies a `set` variable's
    /// field at every use: a bulk bundle's whole text once more).
    waiting: Mutex<Option<(String, String)>>,
}

/// The `excerpt(file=…)` template function (see [`Excerpt`]); with `text=false` the text is
/// left waiting for `excerpt_text`.
pub(super) struct ExcerptFn(pub(super) std::sync::Arc<Excerpt>);

/// The `excerpt_text(file=…)` template function: the text of one entry's excerpt, the one
/// `excerpt(file=…, text=false)` left waiting, else made as `excerpt(file=…)` makes it
/// (counted against the total byte cap; `""` when not inlined).
pub(super) struct ExcerptText(pub(super) std::sync::Arc<Excerpt>);

/// What the template's thread and the producers share.
pub(super) struct Shared {
    root: std::path::PathBuf,
    held: std::sync::Arc<Held>,
    rules: &'static ContentRules,
    max_file_size: u64,
    per_file: u64,
    /// The bytes of excerpts made ahead and not taken, at most ([`WINDOW_BYTES`]).
    pub(super) window_bytes: u64,
    /// The entries in manifest order: the order a template most likely asks for them in.
    order: Vec<Wanted>,
    /// An entry's place in `order`, by file.
    place: HashMap<String, usize>,
    ahead: Mutex<Ahead>,
    /// Signalled when an excerpt is ready, and at the end (the template's thread waits).
    ready: std::sync::Condvar,
    /// Signalled when an excerpt is taken, and at the end (the producers wait for room).
    room: std::sync::Condvar,
}

/// What an excerpt needs of an entry.
pub(super) struct Wanted {
    file: String,
    sections: Sections,
    /// The sha256 the content was admitted with (empty: admit it now).
    sha256: String,
    lines: u64,
}

/// Where each entry's excerpt stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    NotStarted,
    Preparing,
    Ready,
    /// Given to the template (a second call for it is prepared alone).
    Taken,
}

/// The excerpts prepared ahead of the template's calls.
pub(super) struct Ahead {
    stage: Vec<Stage>,
    ready: HashMap<usize, Prepared>,
    /// The excerpts the producers are making or made and the template has not taken yet,
    /// and the bytes of those made (the window's memory).
    window_files: usize,
    window_bytes: u64,
    /// Where the producers look for the next entry.
    next: usize,
    stop: bool,
    /// Threads waiting on `ready` (the template's) and on `room` (producers): a condition
    /// is signalled only when someone waits on it (each signal is a system call, and a warm
    /// bulk bundle makes 10,000 excerpts).
    waiting_ready: usize,
    waiting_room: usize,
}

/// One entry's excerpt made ahead of its call: the selected size and the text,
/// or why the file may not be read.
type Prepared = std::result::Result<(u64, String), String>;

/// The bytes an excerpt made ahead holds until it is taken.
pub(super) fn made_bytes(prepared: &Prepared) -> u64 {
    prepared.as_ref().map_or(0, |(_, text)| text.len() as u64)
}

/// Entries the template's thread prepares together when it asks for one never started and
/// no producer runs: at most this many files, read, checked and formatted in parallel…
pub(super) const BATCH_FILES: usize = 16;

/// … and this many lines between them (the batch's memory).
pub(super) const BATCH_LINES: u64 = 40_000;

/// The producers take an entry while fewer than this many excerpts are being made or ready
/// and not taken, and those ready hold fewer bytes than the compile's hold had room for when
/// they started (they share its budget: a cold bulk bundle's held bytes leave the floor
/// below, a warm one, nothing held, runs well ahead of the template; the room held bytes
/// leave as they are taken is not given to the window, as the memory they free is seldom
/// the one the producers' threads allocate from), …
pub(super) const WINDOW_FILES: usize = 4096;

/// … or than this floor, whatever is held.
pub(super) const WINDOW_BYTES: u64 = 2 << 20;

/// Where the excerpts of a render come from.
pub(super) struct Source<'a> {
    pub(super) root: &'a Path,
    pub(super) kept: &'a [Kept],
    pub(super) held: &'a std::sync::Arc<Held>,
    /// The size cap of a file read (`--max-file-size`).
    pub(super) max_file_size: u64,
    pub(super) caps: ByteCaps,
}

impl Excerpt {
    pub(super) fn new(from: &Source<'_>, rules: &'static ContentRules) -> Excerpt {
        let order: Vec<Wanted> = from
            .kept
            .iter()
            .map(|k| Wanted {
                file: k.entry.file.clone(),
                sections: k.entry.sections.clone(),
                sha256: k.sha256.clone(),
                lines: k.lines,
            })
            .collect();
        let shared = Shared {
            root: from.root.to_owned(),
            held: from.held.clone(),
            rules,
            max_file_size: from.max_file_size,
            per_file: from.caps.per_file,
            window_bytes: from.held.room().max(WINDOW_BYTES),
            place: order
                .iter()
                .enumerate()
                .map(|(i, wanted)| (wanted.file.clone(), i))
                .collect(),
            ahead: Mutex::new(Ahead {
                stage: vec![Stage::NotStarted; order.len()],
                ready: HashMap::new(),
                window_files: 0,
                window_bytes: 0,
                next: 0,
                stop: false,
                waiting_ready: 0,
                waiting_room: 0,
            }),
            order,
            ready: std::sync::Condvar::new(),
            room: std::sync::Condvar::new(),
        };
        Excerpt {
            shared: std::sync::Arc::new(shared),
            producers: Mutex::new(Vec::new()),
            caps: from.caps,
            used: Mutex::new(0),
            waiting: Mutex::new(None),
        }
    }

    /// The excerpt of `file`: made ahead if it was (or as soon as the producer making it is
    /// done), else made now. The first call starts the producers.
    pub(super) fn take(&self, file: &str) -> Prepared {
        let shared = &self.shared;
        let Some((from, wanted)) = shared
            .place
            .get(file)
            .and_then(|&from| Some((from, shared.order.get(from)?)))
        else {
            return Err(format!(
                "excerpt(): {} is not an entry of the manifest",
                quoted(file)
            ));
        };
        let mut ahead = shared.lock();
        loop {
            match ahead.stage.get(from).copied().unwrap_or(Stage::Taken) {
                Stage::Ready => {
                    let prepared = ahead
                        .ready
                        .remove(&from)
                        .unwrap_or_else(|| Err(format!("excerpt(): {} was lost", quoted(file))));
                    ahead.window_files -= 1;
                    ahead.window_bytes -= made_bytes(&prepared);
                    ahead.stage[from] = Stage::Taken;
                    if ahead.waiting_room > 0 {
                        shared.room.notify_all();
                    }
                    return prepared;
                }
                Stage::Preparing => {
                    ahead.waiting_ready += 1;
                    ahead = shared
                        .ready
                        .wait(ahead)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    ahead.waiting_ready -= 1;
                }
                Stage::Taken => {
                    drop(ahead);
                    return shared.prepare(wanted);
                }
                Stage::NotStarted if self.has_producers() => {
                    ahead.stage[from] = Stage::Taken;
                    drop(ahead);
                    return shared.prepare(wanted);
                }
                Stage::NotStarted => {
                    let batch = shared.batch(&mut ahead, from, (BATCH_FILES, BATCH_LINES));
                    drop(ahead);
                    let prepared = shared.prepare_all(&batch);
                    let mine = shared.finish(prepared, Some(from));
                    self.start_producers();
                    return mine.unwrap_or_else(|| shared.prepare(wanted));
                }
            }
        }
    }

    fn has_producers(&self) -> bool {
        !self
            .producers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_empty()
    }

    /// Starts the producers once, one a thread of the pool, unless every entry fits in one
    /// batch of the template's.
    pub(super) fn start_producers(&self) {
        let mut producers = self
            .producers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // On one of the pool's own threads no producer: the template's waits for one would
        // hold a thread of the pool (with `-j 1`, the only one) for nothing.
        if !producers.is_empty()
            || self.shared.order.len() <= BATCH_FILES
            || rayon::current_thread_index().is_some()
        {
            return;
        }
        for _ in 0..rayon::current_num_threads().max(1) {
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("curate-excerpts".to_owned())
                .spawn(move || shared.produce());
            if let Ok(handle) = spawned {
                producers.push(handle);
            }
        }
    }
}

impl Drop for Excerpt {
    /// Stops the producers and waits for them: nothing reads on after the render.
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.room.notify_all();
        let producers = std::mem::take(
            self.producers
                .get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for producer in producers {
            let _ = producer.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Ahead> {
        self.ahead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Read, check and format one entry: the bytes admitted when it was measured
    /// (same hash), or a full admission.
    fn prepare(&self, wanted: &Wanted) -> Prepared {
        let file = &wanted.file;
        let path = crate::model::paths::RepoPath::new(file)
            .map_err(|e| format!("{} {}", quoted(file), e.problem()))?;
        let bytes = if wanted.sha256.is_empty() {
            admit(&self.root, &path, self.max_file_size, self.rules).map(std::sync::Arc::new)
        } else {
            self.held
                .take(&self.root, &path, self.max_file_size, &wanted.sha256)
        }
        .map_err(|r| format!("{} may not be read: {r}", quoted(file)))?;
        let size = measure::selected(&bytes, &wanted.sections).len() as u64;
        Ok((
            size,
            excerpt_text(file, &bytes, &wanted.sections, self.per_file),
        ))
    }

    /// The places of a batch from `from` on (never started ones, `from` first when it is
    /// one; at most `files` of them and `lines` between them), marked as being prepared.
    fn batch(&self, ahead: &mut Ahead, from: usize, (files, lines): (usize, u64)) -> Vec<usize> {
        let mut sum = 0;
        let batch: Vec<usize> = (from..self.order.len())
            .filter(|&place| ahead.stage[place] == Stage::NotStarted)
            .take(files)
            .take_while(|&place| {
                sum += self.order[place].lines;
                place == from || sum <= lines
            })
            .collect();
        for &place in &batch {
            ahead.stage[place] = Stage::Preparing;
        }
        batch
    }

    fn prepare_all(&self, batch: &[usize]) -> Vec<(usize, Prepared)> {
        batch
            .par_iter()
            .map(|&place| (place, self.prepare(&self.order[place])))
            .collect()
    }

    /// Makes a batch's excerpts ready, but for the one at `mine`, which is returned; the
    /// others count in the producers' window until the template takes them.
    fn finish(&self, prepared: Vec<(usize, Prepared)>, mine: Option<usize>) -> Option<Prepared> {
        let mut ahead = self.lock();
        let mut kept = None;
        for (place, excerpt) in prepared {
            if Some(place) == mine {
                ahead.stage[place] = Stage::Taken;
                kept = Some(excerpt);
            } else {
                ahead.stage[place] = Stage::Ready;
                ahead.window_files += 1;
                ahead.window_bytes += made_bytes(&excerpt);
                ahead.ready.insert(place, excerpt);
            }
        }
        self.ready.notify_all();
        kept
    }

    /// A producer: the next entry never started, in manifest order, while the window has
    /// room; each excerpt is ready as soon as it is made.
    fn produce(&self) {
        loop {
            let mut ahead = self.lock();
            let place = loop {
                if ahead.stop {
                    return;
                }
                while ahead
                    .stage
                    .get(ahead.next)
                    .is_some_and(|s| *s != Stage::NotStarted)
                {
                    ahead.next += 1;
                }
                if ahead.next >= self.order.len() {
                    return;
                }
                if ahead.window_files < WINDOW_FILES && ahead.window_bytes < self.window_bytes {
                    let place = ahead.next;
                    ahead.stage[place] = Stage::Preparing;
                    ahead.window_files += 1;
                    break place;
                }
                ahead.waiting_room += 1;
                ahead = self
                    .room
                    .wait(ahead)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                ahead.waiting_room -= 1;
            };
            drop(ahead);
            // Were `prepare` to panic, the place must not stay `Preparing` (the template's
            // thread would wait on it for ever).
            let guard = Unfinished {
                shared: self,
                place,
            };
            let prepared = self.prepare(&self.order[place]);
            std::mem::forget(guard);
            let mut ahead = self.lock();
            ahead.stage[place] = Stage::Ready;
            ahead.window_bytes += made_bytes(&prepared);
            ahead.ready.insert(place, prepared);
            let wake = ahead.waiting_ready > 0;
            drop(ahead);
            if wake {
                self.ready.notify_all();
            }
        }
    }
}

/// An entry while a producer prepares it: on unwinding, it is given back and every producer
/// stops.
pub(super) struct Unfinished<'a> {
    shared: &'a Shared,
    place: usize,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        let mut ahead = self.shared.lock();
        ahead.stage[self.place] = Stage::NotStarted;
        ahead.window_files -= 1;
        ahead.stop = true;
        self.shared.ready.notify_all();
        self.shared.room.notify_all();
    }
}

impl Excerpt {
    /// One entry's excerpt as the template gets it: whether it is inlined (the total byte
    /// cap), its selected size and its text (`""` when not inlined).
    fn inlined(&self, file: &str) -> tera::Result<(bool, u64, String)> {
        let (size, text) = self.take(file).map_err(tera::Error::msg)?;
        // What this entry adds to the total: its selected bytes, or its cut when capped.
        let shown = if self.caps.per_file > 0 {
            size.min(self.caps.per_file)
        } else {
            size
        };
        let mut used = self
            .used
            .lock()
            .map_err(|_| tera::Error::msg("excerpt(): poisoned lock"))?;
        if self.caps.total > 0 && *used + shown > self.caps.total {
            return Ok((false, size, String::new()));
        }
        *used += shown;
        Ok((true, size, text))
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Option<(String, String)>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The `file=` argument of `function`.
pub(super) fn file_arg<'a>(
    args: &'a HashMap<String, Value>,
    function: &str,
) -> tera::Result<&'a str> {
    args.get("file")
        .and_then(Value::as_str)
        .ok_or_else(|| tera::Error::msg(format!("{function}() needs file=<an entry's file>")))
}

impl tera::Function for ExcerptFn {
    fn call(&self, args: &HashMap<String, Value>) -> tera::Result<Value> {
        let file = file_arg(args, "excerpt")?;
        let with_text = match args.get("text") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(tera::Error::msg("excerpt(): text= takes true or false")),
        };
        let (inlined, size, text) = self.0.inlined(file)?;
        if with_text {
            return Ok(json!({"inlined": inlined, "size": size, "text": text}));
        }
        *self.0.waiting() = inlined.then(|| (file.to_owned(), text));
        Ok(json!({"inlined": inlined, "size": size}))
    }

    fn is_safe(&self) -> bool {
        true
    }
}

impl tera::Function for ExcerptText {
    fn call(&self, args: &HashMap<String, Value>) -> tera::Result<Value> {
        let file = file_arg(args, "excerpt_text")?;
        let mut waiting = self.0.waiting();
        if let Some((_, text)) = waiting.take_if(|(waited, _)| waited == file) {
            return Ok(Value::String(text));
        }
        drop(waiting);
        Ok(Value::String(self.0.inlined(file)?.2))
    }

    fn is_safe(&self) -> bool {
        true
    }
}
