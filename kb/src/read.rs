//! Reading inputs: files or stdin, one JSON document, concatenated
//! documents, NDJSON streamed line by line in constant memory, or YAML read
//! whole.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::mpsc::Receiver;

use kb_engine::json::Json;
use kb_engine::needs::{Needs, Pruner};
use serde::Deserialize;
use serde_json::value::RawValue;

mod yaml_watch;

use yaml_watch::YamlWatch;

/// The largest single document of a stream: a line of NDJSON, or a
/// document of `--watch`.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// The largest input read whole (a file or standard input, one or more
/// documents): a cluster's dump as `kubectl get pods,events,nodes -A -o
/// json` prints it runs to hundreds of megabytes for tens of thousands of
/// pods. It is held in memory as it is parsed, with what the rules read.
pub const MAX_INPUT_BYTES: usize = 1 << 30;

/// From this size, a whole document is parsed keeping what the knowledge
/// base reads, as a line of a stream is (a cluster's dump, say, where most
/// of each object is read by no rule); working out what that is costs more
/// than a small document saves.
const PRUNED_FROM: usize = 1 << 20;

/// The buffer an input is read through.
const BUFFER: usize = 1 << 16;

/// What a large whole document is parsed with, worked out when one comes.
pub type LazyPruner<'a> = &'a dyn Fn() -> Pruner;

/// The largest text file read whole (a rule file, a manifest, a test's
/// input, a template): compiling rules takes about twenty times their size
/// in memory, and a device or an endless file must not take it all.
pub const MAX_TEXT_FILE_BYTES: usize = 64 << 20;

/// A text file of the user's (rules, a manifest, a template), whole; an
/// error that names the file, and where it stops being UTF-8, or that it is
/// larger than [`MAX_TEXT_FILE_BYTES`].
pub fn text_file(path: &Path) -> Result<String, String> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| format!("cannot read `{name}`: {e}"))?;
    // Room for the whole file at once: read through `take`, it would be
    // read in ever larger pieces, each copied again.
    let len = file.metadata().map_or(0, |metadata| metadata.len());
    text(file, len, &name)
}

/// Standard input as text, read as [`text_file`] reads a file, named `<stdin>`.
pub fn stdin_text() -> Result<String, String> {
    text(io::stdin().lock(), 0, "<stdin>")
}

/// What `reader` holds, of about `len` bytes, as text; `name` names it in errors.
fn text(reader: impl Read, len: u64, name: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    bytes.reserve_exact(len.min(MAX_TEXT_FILE_BYTES as u64 + 1) as usize);
    reader
        .take(MAX_TEXT_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read `{name}`: {e}"))?;
    if bytes.len() > MAX_TEXT_FILE_BYTES {
        return Err(format!(
            "`{name}` is larger than {} MiB, the most kb reads of one file; split it",
            MAX_TEXT_FILE_BYTES >> 20
        ));
    }
    if is_utf16(&bytes) {
        return Err(format!("`{name}` is {UTF16}"));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.as_bytes().get(..e.utf8_error().valid_up_to());
        let valid = String::from_utf8_lossy(valid.unwrap_or_default());
        let line = valid.matches('\n').count() + 1;
        let column = valid
            .rsplit('\n')
            .next()
            .unwrap_or_default()
            .chars()
            .count()
            + 1;
        format!("`{name}` is not UTF-8 text: an invalid byte at line {line}, column {column}")
    })
}

/// A UTF-8 byte order mark, which Windows editors write at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What is said of a file in UTF-16.
const UTF16: &str = "UTF-16 text, and kb reads UTF-8 (PowerShell's `>` writes UTF-16; \
                     `| Out-File -Encoding utf8` writes UTF-8)";

/// Whether `bytes` start with a UTF-16 byte order mark.
fn is_utf16(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF")
}

/// What is said of an input that starts as a compressed file does (a
/// cluster's dump is often kept compressed), found by its first three bytes.
fn compressed(bytes: &[u8]) -> Option<String> {
    const FORMATS: [(&[u8], &str, &str); 4] = [
        (b"\x1F\x8B", "gzip", "gunzip -c"),
        (b"\x28\xB5\x2F", "zstd", "zstd -dc"),
        (b"BZh", "bzip2", "bzip2 -dc"),
        (b"\xFD7z", "xz", "xz -dc"),
    ];
    let (_, format, command) = FORMATS
        .into_iter()
        .find(|(magic, _, _)| bytes.starts_with(magic))?;
    Some(format!(
        "compressed with {format}, and kb reads JSON text: decompress it first (`{command}`)"
    ))
}

/// An input opened: what reads it, and its size when it is a file.
pub struct Input {
    reader: Box<dyn BufRead + Send>,
    /// The size of a regular file; `None` for standard input, a pipe or a device.
    size: Option<u64>,
}

impl<R: BufRead + Send + 'static> From<R> for Input {
    /// An input read from `reader`, of a size not known ahead.
    fn from(reader: R) -> Self {
        Self {
            reader: Box::new(reader),
            size: None,
        }
    }
}

/// An input source: a path, or `-` for standard input.
pub fn open(path: &str) -> Result<Input, String> {
    if path == "-" {
        return Ok(BufReader::new(io::stdin()).into());
    }
    let file = File::open(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
    let meta = file.metadata();
    if meta.as_ref().is_ok_and(|m| m.is_dir()) {
        return Err(format!("`{path}` is a directory, not an input file"));
    }
    let size = meta.ok().filter(|m| m.is_file()).map(|m| m.len());
    // A file smaller than the buffer is read in one buffer of its size:
    // one `kb eval` of a few kilobytes allocates no more than it reads.
    let capacity = size
        .and_then(|len| usize::try_from(len).ok())
        .map_or(BUFFER, |len| len.saturating_add(1).clamp(4 << 10, BUFFER));
    Ok(Input {
        reader: Box::new(BufReader::with_capacity(capacity, file)),
        size,
    })
}

/// Whether standard input may stay open: a pipe or a terminal, not a file
/// (`kb eval - < case.json`), which always ends.
pub fn stdin_may_stay_open() -> bool {
    std::fs::metadata("/dev/stdin").map_or(true, |meta| !meta.is_file())
}

/// What an input source holds.
pub enum Content {
    /// One or more JSON documents to read as a whole.
    Documents(Vec<Json<'static>>),
    /// One document per line, to stream.
    Lines(Lines),
}

/// NDJSON: yields each non-blank line's number and document, in order, in
/// constant memory. A line that is not JSON yields its error, and the next
/// lines still come.
pub struct Lines {
    /// The lines read to tell a stream from whole documents, in order.
    ahead: VecDeque<(usize, Result<Vec<u8>, String>)>,
    rest: Box<dyn BufRead + Send>,
    next_line: usize,
    buffer: Vec<u8>,
    /// Buffers of lines already diagnosed, to read the next lines into.
    spare: Option<Receiver<Vec<u8>>>,
}

impl Lines {
    /// Reads lines into the buffers sent back on `spare` when there are
    /// some: a stream then reuses a few buffers, warm in the cache, rather
    /// than writing every line to memory never touched before.
    pub fn reusing(self, spare: Receiver<Vec<u8>>) -> Self {
        Self {
            spare: Some(spare),
            ..self
        }
    }
}

impl Iterator for Lines {
    type Item = (usize, Result<Vec<u8>, String>);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(read) = self.ahead.pop_front() {
            return Some(read);
        }
        loop {
            self.buffer.clear();
            let line = self.next_line;
            self.next_line += 1;
            match read_line(&mut *self.rest, &mut self.buffer) {
                Ok(0) => return None,
                Ok(_) if is_blank(&self.buffer) => {}
                Ok(_) => {
                    let next = self.spare.as_ref().and_then(|spare| spare.try_recv().ok());
                    let read = std::mem::replace(&mut self.buffer, next.unwrap_or_default());
                    return Some((line, Ok(read)));
                }
                Err(error) => return Some((line, Err(error.to_string()))),
            }
        }
    }
}

/// Whole JSON documents one after another, as `kubectl get -w -o json`
/// prints them (indented, over many lines): yields each document's first
/// line and text as soon as its last byte has come. A document that is not
/// JSON ends the stream with its error, since where the next one starts is
/// then unknown. A stream that starts as YAML (`-o yaml`) is read as
/// YAML documents, taken whole at a `---` line or when the input pauses,
/// each made JSON text.
pub struct Documents {
    reader: Counted,
    ended: bool,
    /// Whether a document was read: YAML may start a stream, not follow JSON.
    any: bool,
    /// The documents, once the stream is known to be YAML.
    yaml: Option<YamlWatch>,
}

/// A source's reader that counts how long the document being read is, and
/// where the next one starts, for its position and those of its errors.
struct Counted {
    inner: Box<dyn BufRead + Send>,
    /// Where the next byte is, once a document is read whole.
    at: Position,
    /// Bytes read of the current document.
    document: usize,
}

/// A line and a column, 1-based; columns count bytes, as serde_json's do.
#[derive(Clone, Copy)]
struct Position {
    line: usize,
    column: usize,
}

impl Position {
    /// Where `self` is once `bytes` are passed over.
    fn advance(&mut self, bytes: &[u8]) {
        match memchr::memrchr(b'\n', bytes) {
            Some(last) => {
                self.line += memchr::memchr_iter(b'\n', bytes).count();
                self.column = bytes.len() - last;
            }
            None => self.column += bytes.len(),
        }
    }
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = MAX_DOCUMENT_BYTES.saturating_sub(self.document);
        if room == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a document larger than {} MiB", MAX_DOCUMENT_BYTES >> 20),
            ));
        }
        let limit = buf.len().min(room);
        let read = self.inner.read(buf.get_mut(..limit).unwrap_or_default())?;
        self.document += read;
        Ok(read)
    }
}

impl Counted {
    /// A value that is not an object, an array or a string, whose end
    /// serde_json finds only by reading the byte after it: the bytes up to
    /// the next white space or bracket, which kb then tells is no document.
    fn scalar(&mut self) -> io::Result<Vec<u8>> {
        self.read_while(|byte| !byte.is_ascii_whitespace() && !b"{[\"".contains(&byte))
    }

    /// The bytes up to the first for which `keep` is false (not read), up to
    /// the most a document may have.
    fn read_while(&mut self, keep: impl Fn(u8) -> bool) -> io::Result<Vec<u8>> {
        let mut read = Vec::new();
        loop {
            let available = match self.inner.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            let length = available.iter().take_while(|b| keep(**b)).count();
            let done = length < available.len() || available.is_empty();
            let room = MAX_DOCUMENT_BYTES.saturating_sub(read.len());
            read.extend_from_slice(available.get(..length.min(room)).unwrap_or_default());
            self.inner.consume(length);
            if done {
                return Ok(read);
            }
        }
    }

    /// The bytes up to the end of the line (not its line break), up to the
    /// most a document may have.
    fn rest_of_line(&mut self) -> io::Result<Vec<u8>> {
        self.read_while(|byte| byte != b'\n')
    }

    /// Passes over white space; the first byte of what follows, if anything does.
    fn skip_blanks(&mut self) -> io::Result<Option<u8>> {
        loop {
            let available = match self.inner.fill_buf() {
                Ok(available) => available,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            let blanks = available
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
            let (ended, next) = (available.is_empty(), available.get(blanks).copied());
            self.at.advance(available.get(..blanks).unwrap_or_default());
            self.inner.consume(blanks);
            if ended || next.is_some() {
                return Ok(next);
            }
        }
    }
}

/// What is said of YAML after JSON under `--watch`.
const YAML_AFTER_JSON: &str = "YAML after JSON: `--watch` reads what `kubectl get -w` prints \
                               with `-o json` or with `-o yaml`, not both";

/// Reads `reader` as whole documents one after another; a byte order mark
/// is passed over, UTF-16 refused.
pub fn documents(name: &str, input: Input) -> Result<Documents, String> {
    let mut reader = input.reader;
    // Read rather than looked at in the buffer, which may hold fewer bytes.
    let mut start = Vec::with_capacity(BOM.len());
    reader
        .by_ref()
        .take(BOM.len() as u64)
        .read_to_end(&mut start)
        .map_err(|e| format!("{name}: {e}"))?;
    if is_utf16(&start) {
        return Err(format!("{name}: {UTF16}"));
    }
    if let Some(compressed) = compressed(&start) {
        return Err(format!("{name}: {compressed}"));
    }
    if start.starts_with(BOM) {
        start.clear();
    }
    Ok(Documents {
        reader: Counted {
            inner: Box::new(io::Cursor::new(start).chain(reader)),
            at: Position { line: 1, column: 1 },
            document: 0,
        },
        ended: false,
        any: false,
        yaml: None,
    })
}

impl Iterator for Documents {
    type Item = (usize, Result<Vec<u8>, String>);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(yaml) = &mut self.yaml {
            return yaml.next();
        }
        if self.ended {
            return None;
        }
        let reader = &mut self.reader;
        let first = match reader.skip_blanks() {
            Ok(Some(first)) => first,
            Ok(None) => {
                // A terminal's input would be read again after its end.
                self.ended = true;
                return None;
            }
            Err(error) => {
                self.ended = true;
                return Some((reader.at.line, Err(error.to_string())));
            }
        };
        let start = reader.at;
        reader.document = 0;
        let json_start = b"{[\"".contains(&first);
        let read = if json_start {
            let mut json = serde_json::Deserializer::from_reader(&mut *reader);
            Box::<RawValue>::deserialize(&mut json)
                .map(|raw| Box::<str>::from(raw).into_string().into_bytes())
        } else if first == b'-' || first.is_ascii_digit() || b"tfn".contains(&first) {
            reader.scalar().map_err(serde_json::Error::io)
        } else {
            // What cannot start JSON (a line kubectl printed to stderr, mixed
            // in by `2>&1`): one error for the line, not one for each word.
            reader.rest_of_line().map_err(serde_json::Error::io)
        };
        // A scalar `---` or a line `kind: Pod`: not a document of JSON's.
        if let Some(raw) = read.as_ref().ok().filter(|raw| !json_start && is_yaml(raw)) {
            self.ended = true;
            if self.any {
                return Some((start.line, Err(String::from(YAML_AFTER_JSON))));
            }
            // The first line as it is, its indentation included.
            let mut partial = vec![b' '; start.column - 1];
            partial.extend(raw);
            let rest = std::mem::replace(&mut reader.inner, Box::new(io::empty()));
            return match YamlWatch::new(rest, partial, start.line) {
                Ok(yaml) => self.yaml.insert(yaml).next(),
                Err(error) => Some((start.line, Err(error.to_string()))),
            };
        }
        self.any = true;
        match read {
            Ok(raw) => {
                reader.at.advance(&raw);
                // Columns of its first line as in the input, for its errors.
                let mut document = vec![b' '; start.column - 1];
                document.extend(raw);
                Some((start.line, Ok(document)))
            }
            Err(error) => {
                self.ended = true;
                let message = match error.column() {
                    // serde_json counts from where this document starts.
                    0 => describe(&error),
                    column if error.line() == 1 => invalid(start.column + column - 1, &error),
                    column => invalid(column, &error),
                };
                Some((start.line + error.line().max(1) - 1, Err(message)))
            }
        }
    }
}

/// Reads the start of a source to tell a stream of lines from whole documents:
/// a first line holding exactly one complete document, followed by more
/// documents, is NDJSON. Large whole documents are parsed with `pruner`
/// when there is one.
pub fn content(
    name: &str,
    input: Input,
    pruner: Option<LazyPruner<'_>>,
) -> Result<Content, String> {
    let Input { mut reader, size } = input;
    let failed = |e: io::Error| format!("{name}: {e}");
    let mut first = Vec::new();
    let mut first_line = 0;
    loop {
        first.clear();
        first_line += 1;
        if read_line(&mut reader, &mut first).map_err(failed)? == 0 {
            return Err(format!("{name}: the input is empty"));
        }
        if first_line == 1 {
            if is_utf16(&first) {
                return Err(format!("{name}: {UTF16}"));
            }
            if let Some(compressed) = compressed(&first) {
                return Err(format!("{name}: {compressed}"));
            }
            if first.starts_with(BOM) {
                first.drain(..BOM.len());
            }
        }
        if !is_blank(&first) {
            break;
        }
    }
    let parsed = match pruned(&first, pruner) {
        Some(mut documents) if documents.len() == 1 => (documents.pop().map(Ok), None),
        _ => {
            let mut values = serde_json::Deserializer::from_slice(&first).into_iter::<Json>();
            (values.next(), values.next())
        }
    };
    let error = match parsed {
        (Some(Ok(document)), None) => {
            let mut peek = Vec::new();
            let mut peek_line = first_line;
            let second = loop {
                peek.clear();
                peek_line += 1;
                match read_line(&mut reader, &mut peek) {
                    Ok(0) => return Ok(Content::Documents(vec![document])),
                    Ok(_) if is_blank(&peek) => {}
                    Ok(_) => break Ok(peek),
                    // A line too long to read is the stream's to report.
                    Err(e) if e.kind() == io::ErrorKind::InvalidData => break Err(e.to_string()),
                    Err(e) => return Err(failed(e)),
                }
            };
            return Ok(Content::Lines(Lines {
                ahead: VecDeque::from([(first_line, Ok(first)), (peek_line, second)]),
                rest: reader,
                next_line: peek_line + 1,
                buffer: Vec::new(),
                spare: None,
            }));
        }
        (Some(Err(error)), _) if !error.is_eof() => error,
        _ => {
            let too_large = || {
                format!(
                    "larger than {} MiB, the most kb reads whole; split it, or give one object per line (NDJSON)",
                    MAX_INPUT_BYTES >> 20
                )
            };
            let all = read_rest(first, Input { reader, size }, MAX_INPUT_BYTES, too_large)
                .map_err(|e| format!("{name}: {e}"))?;
            return parse_whole(name, &all, first_line, pruner).map(Content::Documents);
        }
    };
    if is_yaml(&first) {
        let too_large = || {
            format!(
                "YAML larger than {} MiB, the most kb reads of it (it takes about seven times its \
                 size in memory); give it as JSON (`-o json`), read up to {} MiB keeping what the \
                 rules read",
                crate::yaml::MAX_BYTES >> 20,
                MAX_INPUT_BYTES >> 20
            )
        };
        let all = read_rest(
            first,
            Input { reader, size },
            crate::yaml::MAX_BYTES,
            too_large,
        )
        .map_err(|e| format!("{name}: {e}"))?;
        return crate::yaml::documents(&all, name, first_line).map(Content::Documents);
    }
    let mut message = position(name, first_line, &error);
    if not_json_from_its_start(&first, &error) {
        let said = kubectl_says(&first).or_else(|| for_people(&first));
        message.push_str(&said.unwrap_or_else(|| {
            String::from(
                "; kb reads JSON or YAML, as `kubectl get … -o json` or `-o yaml` prints it",
            )
        }));
    }
    Err(message)
}

/// Whether a text that is not JSON from its start is YAML: not kubectl's
/// message, nor its output for people.
fn is_yaml(text: &[u8]) -> bool {
    crate::yaml::starts_yaml(text) && kubectl_says(text).is_none() && for_people(text).is_none()
}

/// What is said of a text that starts as kubectl's output for people does:
/// `kubectl describe`'s, or the table `kubectl get` prints without `-o`.
fn for_people(text: &[u8]) -> Option<String> {
    let line = first_line(text);
    let blank_after = |word: &[u8]| {
        line.strip_prefix(word)
            .and_then(|rest| rest.first())
            .is_some_and(u8::is_ascii_whitespace)
    };
    let said = if blank_after(b"Name:") {
        "this is what `kubectl describe` prints, for people"
    } else if [&b"NAME"[..], b"NAMESPACE", b"LAST SEEN"]
        .into_iter()
        .any(blank_after)
    {
        "this is the table `kubectl get` prints, for people"
    } else {
        return None;
    };
    Some(format!(
        "; {said}: kb reads `kubectl get … -o json` (or `-o yaml`)"
    ))
}

/// The first line of `text`, without the blanks around it.
fn first_line(text: &[u8]) -> &[u8] {
    let end = memchr::memchr(b'\n', text).unwrap_or(text.len());
    text.get(..end).unwrap_or_default().trim_ascii()
}

/// Whether `error` is at the first character of `text` that is not blank.
fn not_json_from_its_start(text: &[u8], error: &serde_json::Error) -> bool {
    let blanks = text.iter().take_while(|b| b.is_ascii_whitespace()).count();
    error.line() <= 1 && error.column() == blanks + 1
}

/// What is said of a text that starts with what kubectl says when it fails
/// or warns (to its first 200 characters): mixed into its output by `2>&1`.
fn kubectl_says(text: &[u8]) -> Option<String> {
    const STARTS: [&str; 6] = [
        "Error from server",
        "error: ",
        "Warning: ",
        "The connection to the server",
        "Unable to connect to the server",
        "No resources found",
    ];
    let line = String::from_utf8_lossy(first_line(text));
    let said = STARTS.iter().any(|start| line.starts_with(start));
    said.then(|| {
        let said: String = line.chars().take(200).collect();
        format!(
            "; this is kubectl's message, not its JSON: `{said}` (kubectl writes its errors and \
             warnings to stderr, which `2>&1` mixes in)"
        )
    })
}

/// Reads the rest of a source after `all`, its start, up to `limit` bytes
/// in all; `too_large` says what it is beyond.
fn read_rest(
    mut all: Vec<u8>,
    input: Input,
    limit: usize,
    too_large: impl Fn() -> String,
) -> Result<Vec<u8>, String> {
    // A file is refused before it is read; anything else, once read up to the limit.
    if input.size.is_some_and(|size| size > limit as u64) {
        return Err(too_large());
    }
    let mut reader = input.reader;
    let room = (limit + 1).saturating_sub(all.len());
    // What is buffered, at once: the whole of a file read in one buffer.
    let buffered = reader.fill_buf().map_or(0, <[u8]>::len);
    all.reserve(buffered.min(room));
    reader
        .take(room as u64)
        .read_to_end(&mut all)
        .map_err(|e| e.to_string())?;
    if all.len() > limit {
        return Err(too_large());
    }
    Ok(all)
}

/// The JSON documents of a source read whole, which starts on `first_line`.
fn parse_whole(
    name: &str,
    all: &[u8],
    first_line: usize,
    pruner: Option<LazyPruner<'_>>,
) -> Result<Vec<Json<'static>>, String> {
    if let Some(documents) = pruned(all, pruner) {
        return Ok(documents);
    }
    serde_json::Deserializer::from_slice(all)
        .into_iter::<Json>()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| position(name, e.line() + first_line - 1, &e))
}

/// The documents of a file's text read whole (a rule test's input), told
/// JSON or YAML by its first line as inputs of `kb eval` are; `name` names
/// it in errors. A byte order mark is passed over.
pub fn text_documents(text: &str, name: &str) -> Result<Vec<Json<'static>>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = text.lines().find(|line| !line.trim().is_empty());
    if first.is_some_and(|line| is_yaml(line.as_bytes())) {
        return crate::yaml::documents(text.as_bytes(), name, 1);
    }
    serde_json::Deserializer::from_str(text)
        .into_iter::<Json>()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{name}: invalid JSON: {e}"))
}

/// The documents of `text` parsed with the pruner, when it is large and
/// there is one; `None` otherwise, errors included: read whole, it says
/// what is wrong.
fn pruned(text: &[u8], pruner: Option<LazyPruner<'_>>) -> Option<Vec<Json<'static>>> {
    let pruner = pruner.filter(|_| text.len() >= PRUNED_FROM)?;
    let documents = pruner().parse_many(text).ok()?;
    Some(documents.into_iter().map(Json::into_owned).collect())
}

/// `name:line:column: invalid JSON: …`; no column when the line ended early.
fn position(name: &str, line: usize, error: &serde_json::Error) -> String {
    match error.column() {
        0 => format!("{name}:{line}: invalid JSON: {}", describe(error)),
        column => format!("{name}:{line}:{column}: invalid JSON: {}", describe(error)),
    }
}

/// Parses one line of NDJSON, or one document of a stream, keeping what
/// `pruner` needs; an error says on which of its lines.
pub fn parse_line<'t>(line: &'t [u8], pruner: &Pruner) -> Result<Json<'t>, (usize, String)> {
    pruner.parse(line).map_err(|e| {
        let mut message = invalid(e.column(), &e);
        if not_json_from_its_start(line, &e) {
            message.push_str(&kubectl_says(line).unwrap_or_default());
        }
        (e.line().max(1), message)
    })
}

/// `column C: invalid JSON: …`, or without a column when there is none.
fn invalid(column: usize, error: &serde_json::Error) -> String {
    match column {
        0 => format!("invalid JSON: {}", describe(error)),
        column => format!("column {column}: invalid JSON: {}", describe(error)),
    }
}

/// Whether a line holds nothing but white space.
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Reads one line (without limit on count, with a limit on length): the
/// bytes up to the next newline and it, found with memchr's SIMD search
/// (`BufRead::read_until` looks at a word at a time). Of a line too long,
/// the rest is read and dropped, so the next one starts clean, and the
/// line is an error.
pub fn read_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut line = 0usize;
    let ended = loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            break false;
        }
        let (used, ended) = match memchr::memchr(b'\n', available) {
            Some(newline) => (newline + 1, true),
            None => (available.len(), false),
        };
        let room = (MAX_DOCUMENT_BYTES + 1).saturating_sub(line);
        buf.extend_from_slice(available.get(..used.min(room)).unwrap_or_default());
        reader.consume(used);
        line = line.saturating_add(used);
        if ended {
            break true;
        }
    };
    if line - usize::from(ended) > MAX_DOCUMENT_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a line longer than {} MiB", MAX_DOCUMENT_BYTES >> 20),
        ));
    }
    Ok(line)
}

/// serde_json's message without its position (which the caller states).
pub fn describe(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text.get(..at).unwrap_or(&text).to_owned(),
        None => text,
    }
}

/// Reads every input whole (NDJSON lines included) and splits it into
/// subjects: for commands that look at a few inputs, not a stream.
pub fn split(inputs: &[String]) -> Result<crate::adapter::Split<'static>, String> {
    let everything = Needs::everything().pruner();
    let mut documents = Vec::new();
    for name in inputs {
        let shown = if name == "-" {
            "<stdin>"
        } else {
            name.as_str()
        };
        match content(shown, open(name)?, None)? {
            Content::Documents(found) => documents.extend(found),
            Content::Lines(lines) => {
                for (number, text) in lines {
                    let document = text.and_then(|text| {
                        parse_line(&text, &everything)
                            .map(Json::into_owned)
                            .map_err(|(_, message)| message)
                    });
                    documents.push(document.map_err(|e| format!("{shown}:{number}: {e}"))?);
                }
            }
        }
    }
    let split = crate::adapter::split(documents)?;
    if split.is_empty() {
        return Err(String::from(
            "the input holds no pod, owner, namespace or facts to diagnose",
        ));
    }
    Ok(split)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::indexing_slicing, clippy::unwrap_used, reason = "tests")]

    use std::io::BufReader;

    use super::*;

    #[test]
    fn a_text_file_is_read_up_to_the_limit_and_refused_beyond() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.kb");
        let file = File::create(&path).unwrap();
        // Sparse files: as long as the limit, then one byte longer.
        file.set_len(MAX_TEXT_FILE_BYTES as u64).unwrap();
        assert_eq!(text_file(&path).map(|t| t.len()), Ok(MAX_TEXT_FILE_BYTES));
        file.set_len(MAX_TEXT_FILE_BYTES as u64 + 1).unwrap();
        let error = text_file(&path).unwrap_err();
        assert!(
            error.ends_with(
                "rules.kb` is larger than 64 MiB, the most kb reads of one file; split it"
            ),
            "{error}"
        );
    }

    /// Every line of `text`, read through a buffer of `capacity` bytes.
    fn lines(text: &[u8], capacity: usize) -> Vec<Result<Vec<u8>, String>> {
        let mut reader = BufReader::with_capacity(capacity, text);
        let mut lines = Vec::new();
        loop {
            let mut buf = Vec::new();
            match read_line(&mut reader, &mut buf) {
                Ok(0) => return lines,
                Ok(n) => {
                    assert_eq!(n, buf.len());
                    lines.push(Ok(buf));
                }
                Err(error) => lines.push(Err(error.to_string())),
            }
        }
    }

    #[test]
    fn lines_are_read_whole_across_buffer_refills() {
        let text = b"{\"a\": 1}\n\n{\"b\": \"two\"}\r\nlast, no newline";
        for capacity in [1, 3, 7, 64] {
            let read: Vec<Vec<u8>> = lines(text, capacity)
                .into_iter()
                .map(Result::unwrap)
                .collect();
            assert_eq!(
                read,
                [
                    &b"{\"a\": 1}\n"[..],
                    b"\n",
                    b"{\"b\": \"two\"}\r\n",
                    b"last, no newline"
                ],
                "buffer of {capacity}"
            );
        }
    }

    #[test]
    fn a_line_over_the_limit_is_an_error_and_the_next_line_starts_clean() {
        let mut text = vec![b'x'; MAX_DOCUMENT_BYTES];
        text.extend_from_slice(b"\n");
        text.extend(std::iter::repeat_n(b'y', MAX_DOCUMENT_BYTES + 1));
        text.extend_from_slice(b"\nnext\n");
        let read = lines(&text, 1 << 16);
        assert_eq!(read.len(), 3);
        assert_eq!(
            read[0].as_ref().map(Vec::len),
            Ok(MAX_DOCUMENT_BYTES + 1),
            "at the limit"
        );
        assert_eq!(read[1], Err(String::from("a line longer than 64 MiB")));
        assert_eq!(read[2], Ok(b"next\n".to_vec()));
    }

    #[test]
    fn documents_are_read_whole_with_where_each_starts_across_buffer_refills() {
        let text =
            "\u{feff}{\n  \"a\": \"}{ \\\" [\"\n}  [1,\n2]\n\n 12 true\"s\"{\"b\": {}}\n{\"c\": ]";
        for capacity in [1, 3, 7, 64] {
            let reader = BufReader::with_capacity(capacity, text.as_bytes());
            let read: Vec<(usize, Result<String, String>)> = documents("test", reader.into())
                .unwrap()
                .map(|(line, document)| (line, document.map(|d| String::from_utf8(d).unwrap())))
                .collect();
            let ok = |line, text: &str| (line, Ok(String::from(text)));
            assert_eq!(
                read,
                [
                    ok(1, "{\n  \"a\": \"}{ \\\" [\"\n}"),
                    // Spaces keep the columns of a document's first line.
                    ok(3, "   [1,\n2]"),
                    ok(6, " 12"),
                    ok(6, "    true"),
                    ok(6, "        \"s\""),
                    ok(6, "           {\"b\": {}}"),
                    (
                        7,
                        Err(String::from("column 7: invalid JSON: expected value"))
                    ),
                ],
                "buffer of {capacity}"
            );
        }
    }

    #[test]
    fn yaml_documents_are_placed_on_the_lines_yaml_counts() {
        // A lone `\r` breaks a line in YAML: the error is on the third line,
        // and the next document starts on the fifth.
        let text = "x: 1\r\ry: [\n---\ny: 1\n---\n# only a comment\n---\r\nz: 1\r\n";
        for capacity in [1, 5, 64] {
            let reader = BufReader::with_capacity(capacity, text.as_bytes());
            let read: Vec<(usize, Result<String, String>)> = documents("test", reader.into())
                .unwrap()
                .map(|(line, document)| (line, document.map(|d| String::from_utf8(d).unwrap())))
                .collect();
            assert_eq!(
                read,
                [
                    (
                        3,
                        Err(String::from("column 4: invalid YAML: unclosed bracket '['"))
                    ),
                    (5, Ok(String::from("{\"y\":1}"))),
                    (9, Ok(String::from("{\"z\":1}"))),
                ],
                "buffer of {capacity}"
            );
        }
    }
}
