//! What `kubectl get -w -o yaml` prints, read as it comes: documents between
//! `---` lines. kubectl writes the marker before an object, only once the
//! next object comes, so a document is also taken as whole when the input
//! pauses and what came of it reads as YAML; should more of it come after
//! all, it is taken again, whole, at its end.

use std::io::{self, BufRead};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use super::MAX_DOCUMENT_BYTES;

/// How long the input has nothing more before the document read so far is
/// taken as whole: kubectl writes each object at once.
const PAUSE: Duration = Duration::from_millis(100);

/// How many bytes are read at a time, and how many such reads may wait
/// to be split into lines.
const CHUNK: usize = 64 << 10;
const CHUNKS_AHEAD: usize = 16;

/// A YAML stream's documents, each as its first line's number and its JSON
/// text, or an error at a line; items of [`super::Documents`].
pub(super) struct YamlWatch {
    chunks: Receiver<io::Result<Vec<u8>>>,
    /// The thread reading them.
    reading: Option<JoinHandle<()>>,
    /// What was read and is not yet in lines, from `split`; no newline
    /// is before `searched`.
    read: Vec<u8>,
    split: usize,
    searched: usize,
    /// Whether the input has ended.
    input_ended: bool,
    /// The number of the next line to come, lines counted as YAML counts
    /// them.
    next_line: usize,
    /// The document being read, the number of its first line, and how
    /// long it is up to the end of its last line that is not blank (0 when
    /// it has none).
    document: Vec<u8>,
    start: usize,
    content: usize,
    /// How long its content was when last tried at a pause, and whether it
    /// was taken then: blank lines after it change nothing.
    tried: Option<(usize, bool)>,
    ended: bool,
}

/// Why a document is taken.
enum Boundary {
    /// The input paused: the document is taken only if it reads as YAML.
    Pause,
    /// A `---` line, or the end of the input.
    End,
}

impl YamlWatch {
    /// Reads `reader` on a thread of its own; `partial` is the start of
    /// line `line`, already read.
    pub(super) fn new(
        reader: Box<dyn BufRead + Send>,
        partial: Vec<u8>,
        line: usize,
    ) -> io::Result<Self> {
        let (send, chunks) = mpsc::sync_channel(CHUNKS_AHEAD);
        // Joined only once the input has ended: when the output fails, the
        // command ends without waiting for more input.
        let reading = thread::Builder::new()
            .name(String::from("kb-read-yaml"))
            .spawn(move || read_chunks(reader, &send))?;
        Ok(Self {
            chunks,
            reading: Some(reading),
            read: partial,
            split: 0,
            searched: 0,
            input_ended: false,
            next_line: line,
            document: Vec::new(),
            start: line,
            content: 0,
            tried: None,
            ended: false,
        })
    }

    /// The next line, waiting at most [`PAUSE`] for more input when the
    /// document read so far may be taken at a pause; `Err(())` when that
    /// time passed, `Ok(None)` at the input's end.
    fn next_line(&mut self) -> Result<Option<io::Result<Vec<u8>>>, ()> {
        loop {
            let unsplit = self.read.get(self.split..).unwrap_or_default();
            let unsearched = self.read.get(self.searched..).unwrap_or_default();
            let end = match memchr::memchr(b'\n', unsearched) {
                Some(newline) => Some(self.searched - self.split + newline + 1),
                // A line too long for a document is one, to be refused.
                None if unsplit.len() > MAX_DOCUMENT_BYTES || self.input_ended => {
                    Some(unsplit.len()).filter(|&length| length > 0)
                }
                None => None,
            };
            if let Some(end) = end {
                let line = unsplit.get(..end).unwrap_or_default().to_vec();
                self.split += end;
                self.searched = self.split;
                return Ok(Some(Ok(line)));
            }
            if self.input_ended {
                return Ok(None);
            }
            let untried = self.tried.is_none_or(|(length, _)| length != self.content);
            let chunk = if untried && self.content > 0 {
                match self.chunks.recv_timeout(PAUSE) {
                    Ok(chunk) => Some(chunk),
                    Err(RecvTimeoutError::Timeout) => return Err(()),
                    Err(RecvTimeoutError::Disconnected) => None,
                }
            } else {
                self.chunks.recv().ok()
            };
            match chunk {
                Some(Ok(chunk)) => {
                    self.read.drain(..self.split);
                    self.searched = self.read.len();
                    self.split = 0;
                    self.read.extend(chunk);
                }
                Some(Err(error)) => return Ok(Some(Err(error))),
                None => self.input_ended = true,
            }
        }
    }

    /// The document read so far, as JSON, unless it is blank, was taken
    /// whole as it is, or (at a pause) does not read as YAML yet. At its
    /// end, it is given up for the next.
    fn take(&mut self, boundary: Boundary) -> Option<(usize, Result<Vec<u8>, String>)> {
        let taken_as_it_is = self.tried == Some((self.content, true));
        let found = if self.content == 0 || taken_as_it_is {
            None
        } else {
            match (to_json(&self.document), &boundary) {
                (Ok(json), _) => json.map(|json| (self.start, Ok(json))),
                (Err(_), Boundary::Pause) => None,
                (Err((line, message)), Boundary::End) => {
                    Some((self.start + line.saturating_sub(1), Err(message)))
                }
            }
        };
        match boundary {
            Boundary::Pause => self.tried = Some((self.content, found.is_some())),
            Boundary::End => {
                self.document.clear();
                self.content = 0;
                self.tried = None;
            }
        }
        found
    }
}

impl Drop for YamlWatch {
    fn drop(&mut self) {
        if let Some(reading) = self.reading.take().filter(|_| self.input_ended) {
            let _ = reading.join();
        }
    }
}

impl Iterator for YamlWatch {
    type Item = (usize, Result<Vec<u8>, String>);

    fn next(&mut self) -> Option<Self::Item> {
        while !self.ended {
            let line = match self.next_line() {
                Ok(line) => line,
                Err(()) => match self.take(Boundary::Pause) {
                    Some(found) => return Some(found),
                    None => continue,
                },
            };
            let line = match line {
                Some(Ok(line)) => line,
                Some(Err(error)) => {
                    self.ended = true;
                    return Some((self.next_line, Err(error.to_string())));
                }
                None => {
                    self.ended = true;
                    return self.take(Boundary::End);
                }
            };
            let number = self.next_line;
            self.next_line += 1 + lone_carriage_returns(&line);
            let marker = is_marker(&line);
            let found = marker.and_then(|_| self.take(Boundary::End));
            // A bare `---` or `...` is no part of a document.
            let bare = marker.is_some() && line.trim_ascii_end().len() == 3;
            if !bare && marker != Some(Marker::End) {
                if self.content == 0 {
                    // Its first line is the first that is not blank.
                    self.document.clear();
                    self.start = number;
                }
                if self.document.len() + line.len() > MAX_DOCUMENT_BYTES {
                    self.ended = true;
                    let most = MAX_DOCUMENT_BYTES >> 20;
                    return Some((
                        self.start,
                        Err(format!("a document larger than {most} MiB")),
                    ));
                }
                let blank = is_blank(&line);
                self.document.extend(line);
                if !blank {
                    self.content = self.document.len();
                }
            }
            if found.is_some() {
                return found;
            }
        }
        None
    }
}

/// Sends what `reader` reads, until it ends or nothing receives it.
fn read_chunks(mut reader: Box<dyn BufRead + Send>, send: &SyncSender<io::Result<Vec<u8>>>) {
    loop {
        let mut chunk = vec![0; CHUNK];
        let read = match reader.read(&mut chunk) {
            Ok(0) => return,
            Ok(read) => {
                chunk.truncate(read);
                Ok(chunk)
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => Err(error),
        };
        let failed = read.is_err();
        if send.send(read).is_err() || failed {
            return;
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Marker {
    /// `---`: a document starts (what follows on its line is of it).
    Start,
    /// `...`: a document ends.
    End,
}

/// Whether a line marks where a document starts or ends.
fn is_marker(line: &[u8]) -> Option<Marker> {
    let line = line.trim_ascii_end();
    let starts_with = |marker: &[u8]| {
        line.strip_prefix(marker)
            .is_some_and(|rest| rest.first().is_none_or(u8::is_ascii_whitespace))
    };
    if starts_with(b"---") {
        Some(Marker::Start)
    } else if starts_with(b"...") {
        Some(Marker::End)
    } else {
        None
    }
}

/// How many `\r` of a line are not followed by `\n`: YAML counts each as
/// a line break, as its errors' positions do.
fn lone_carriage_returns(line: &[u8]) -> usize {
    memchr::memchr_iter(b'\r', line)
        .filter(|&at| line.get(at + 1) != Some(&b'\n'))
        .count()
}

fn is_blank(text: &[u8]) -> bool {
    text.iter().all(u8::is_ascii_whitespace)
}

/// A YAML document as JSON text (`None` when it holds only comments), or
/// where (the line within it) and what is wrong. Several documents (after a
/// `---` line with more on it) are a JSON array of them, which the adapter
/// takes as its items.
fn to_json(text: &[u8]) -> Result<Option<Vec<u8>>, (usize, String)> {
    let mut documents: Vec<serde_json::Value> =
        crate::yaml::parse(text).map_err(|invalid| match invalid.at {
            Some((line, column)) => (
                line,
                format!("column {column}: invalid YAML: {}", invalid.message),
            ),
            None => (1, format!("invalid YAML: {}", invalid.message)),
        })?;
    documents.retain(|document| !document.is_null());
    let json = match documents.as_slice() {
        [] => return Ok(None),
        [document] => serde_json::to_vec(document),
        all => serde_json::to_vec(all),
    };
    json.map(Some).map_err(|error| (1, error.to_string()))
}
