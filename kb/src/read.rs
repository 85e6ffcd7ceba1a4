//! Reading inputs: files or stdin, one JSON document, concatenated
//! documents, or NDJSON streamed line by line in constant memory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use serde_json::Value as Json;

/// The largest single document (a file, or a line of NDJSON).
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// An input source: a path, or `-` for standard input.
pub fn open(path: &str) -> Result<Box<dyn BufRead>, String> {
    if path == "-" {
        return Ok(Box::new(BufReader::new(io::stdin())));
    }
    let file = File::open(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!("`{path}` is a directory, not an input file"));
    }
    Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
}

/// What an input source holds.
pub enum Content {
    /// One or more JSON documents to read as a whole.
    Documents(Vec<Json>),
    /// One document per line: the first one, already parsed, and the rest to stream.
    Lines {
        /// The first line's document.
        first: Json,
        /// The reader, positioned after the first line.
        rest: Box<dyn BufRead>,
    },
}

/// Reads the start of a source to tell a stream of lines from whole documents.
pub fn content(name: &str, mut reader: Box<dyn BufRead>) -> Result<Content, String> {
    let mut first = Vec::new();
    let mut first_line_number = 0;
    loop {
        first.clear();
        first_line_number += 1;
        if read_line(&mut reader, &mut first).map_err(|e| format!("{name}: {e}"))? == 0 {
            return Err(format!("{name}: the input is empty"));
        }
        if !first.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    match serde_json::from_slice::<Json>(&first) {
        Ok(document) => {
            let mut peek = Vec::new();
            loop {
                peek.clear();
                if read_line(&mut reader, &mut peek).map_err(|e| format!("{name}: {e}"))? == 0 {
                    return Ok(Content::Documents(vec![document]));
                }
                if !peek.iter().all(u8::is_ascii_whitespace) {
                    break;
                }
            }
            let rest = Box::new(io::Cursor::new(peek).chain(reader));
            Ok(Content::Lines {
                first: document,
                rest,
            })
        }
        Err(error) if error.is_eof() => {
            let mut all = first;
            reader
                .take((MAX_DOCUMENT_BYTES + 1 - all.len().min(MAX_DOCUMENT_BYTES)) as u64)
                .read_to_end(&mut all)
                .map_err(|e| format!("{name}: {e}"))?;
            if all.len() > MAX_DOCUMENT_BYTES {
                return Err(format!(
                    "{name}: a document larger than {} MiB; split it, or give one object per line (NDJSON)",
                    MAX_DOCUMENT_BYTES >> 20
                ));
            }
            let mut documents = Vec::new();
            for document in serde_json::Deserializer::from_slice(&all).into_iter::<Json>() {
                let document = document.map_err(|e| {
                    let line = e.line() + first_line_number - 1;
                    format!(
                        "{name}:{line}:{}: invalid JSON: {}",
                        e.column(),
                        describe(&e)
                    )
                })?;
                documents.push(document);
            }
            Ok(Content::Documents(documents))
        }
        Err(error) => Err(format!(
            "{name}:{first_line_number}:{}: invalid JSON: {}",
            error.column(),
            describe(&error)
        )),
    }
}

/// Reads one line (without limit on count, with a limit on length).
pub fn read_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut limited = reader.take(MAX_DOCUMENT_BYTES as u64 + 1);
    let n = limited.read_until(b'\n', buf)?;
    if buf.len() > MAX_DOCUMENT_BYTES && !buf.ends_with(b"\n") {
        // Skip the rest of the over-long line so the next one starts clean.
        let mut sink = Vec::new();
        loop {
            sink.clear();
            let more = reader.take(1 << 20).read_until(b'\n', &mut sink)?;
            if more == 0 || sink.ends_with(b"\n") {
                break;
            }
        }
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a line longer than {} MiB", MAX_DOCUMENT_BYTES >> 20),
        ));
    }
    Ok(n)
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
pub fn subjects(inputs: &[String]) -> Result<Vec<crate::adapter::Subject>, String> {
    let mut documents = Vec::new();
    for name in inputs {
        let shown = if name == "-" {
            "<stdin>"
        } else {
            name.as_str()
        };
        match content(shown, open(name)?)? {
            Content::Documents(found) => documents.extend(found),
            Content::Lines { first, mut rest } => {
                documents.push(first);
                let mut line = Vec::new();
                let mut number = 1;
                loop {
                    line.clear();
                    number += 1;
                    if read_line(&mut *rest, &mut line)
                        .map_err(|e| format!("{shown}:{number}: {e}"))?
                        == 0
                    {
                        break;
                    }
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let document = serde_json::from_slice(&line).map_err(|e| {
                        format!(
                            "{shown}:{number}:{}: invalid JSON: {}",
                            e.column(),
                            describe(&e)
                        )
                    })?;
                    documents.push(document);
                }
            }
        }
    }
    let subjects = crate::adapter::subjects(documents)?;
    if subjects.is_empty() {
        return Err(String::from(
            "the input holds no pod, owner, namespace or facts to diagnose",
        ));
    }
    Ok(subjects)
}
