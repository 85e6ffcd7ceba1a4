//! Compiled knowledge bases kept between runs: a run that finds a folder's
//! rules as an earlier run compiled them loads what that run kept, two to
//! three times quicker than compiling them.
//!
//! One file per folder, named after its path. It holds a key, a hash of
//! everything the compiled form follows from: the rule files' names and
//! texts, `kb.toml`, whether the bundled rules come along, and the `kb`
//! program itself (its path, size and time of change, as a rebuilt program
//! may compile the same rules otherwise). After the key come the compiled
//! bytes ([`KnowledgeBase::to_bytes_without_dfas`]) and their hash, which
//! loading checks: a file damaged on disk is compiled again rather than
//! read with a title or a command altered. Rules are kept compiled the
//! second time they are compiled; the first, only their key is. A file
//! whose key differs, or that does not load, is replaced; one no run has
//! used for a month is removed. Nothing here fails a command: a cache that
//! cannot be read or written is only slower.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kb_dsl::Source;
use kb_engine::KnowledgeBase;

/// The environment variable naming the folder compiled knowledge bases are
/// kept in; set to an empty value, nothing is kept.
pub const DIR_VARIABLE: &str = "KB_CACHE_DIR";

/// What a cache file starts with, before its key.
const MAGIC: &[u8] = b"kb-cache 1\n";

/// Where the compiled form of one folder's rules is kept, and the key the
/// rules as they are now give.
pub struct Entry {
    path: PathBuf,
    key: blake3::Hash,
    /// Whether the file holds this key: the rules were compiled before.
    seen_before: bool,
}

impl Entry {
    /// The entry of a folder of rules, read as given; `None` when no cache
    /// is kept (no cache folder, or the program cannot be found).
    pub fn new(
        dir: &Path,
        manifest: Option<&str>,
        with_bundled: bool,
        sources: &[Arc<Source>],
    ) -> Option<Self> {
        let folder = cache_folder()?;
        let program = std::env::current_exe().ok()?;
        let metadata = program.metadata().ok()?;
        let changed = metadata.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;

        let mut hasher = blake3::Hasher::new();
        let mut field = |bytes: &[u8]| {
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(program.as_os_str().as_encoded_bytes());
        field(&metadata.len().to_le_bytes());
        field(&changed.as_nanos().to_le_bytes());
        field(&[u8::from(with_bundled), u8::from(manifest.is_some())]);
        field(manifest.unwrap_or_default().as_bytes());
        for source in sources {
            field(source.name.as_bytes());
            field(source.text.as_bytes());
        }
        let key = hasher.finalize();

        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let name = blake3::hash(dir.as_os_str().as_encoded_bytes());
        let path = folder.join(format!("{}.kbc", &name.to_hex()[..32]));
        Some(Self {
            path,
            key,
            seen_before: false,
        })
    }

    /// The knowledge base kept for these rules, if it is there, its key is
    /// theirs, and it loads; its locations point into `sources`. Also
    /// notes whether the file says these rules were compiled before.
    pub fn load(&mut self, sources: &[Arc<Source>]) -> Option<KnowledgeBase> {
        // Anything but a file (a FIFO, a device) might never be opened, or end.
        if !std::fs::metadata(&self.path).ok()?.is_file() {
            return None;
        }
        let bytes = std::fs::read(&self.path).ok()?;
        let rest = bytes.strip_prefix(MAGIC)?;
        let (key, rest) = rest.split_at_checked(blake3::OUT_LEN)?;
        if key != self.key.as_bytes() {
            return None;
        }
        self.seen_before = true;
        let (sum, compiled) = rest.split_at_checked(blake3::OUT_LEN)?;
        if sum != blake3::hash(compiled).as_bytes() {
            return None;
        }
        let start = bytes.len() - compiled.len();
        let compiled = bytes::Bytes::from(bytes).slice(start..);
        let kb = KnowledgeBase::from_bytes(compiled, sources.iter().cloned()).ok()?;
        self.mark_used();
        Some(kb)
    }

    /// Marks the file used now, if it was last a day ago or more, so that
    /// [`forget_unused`] keeps it.
    fn mark_used(&self) {
        if older_than(&self.path, MARKED_EVERY)
            && let Ok(file) = std::fs::File::options().write(true).open(&self.path)
        {
            let _ = file.set_modified(SystemTime::now());
        }
    }

    /// Keeps what was compiled of these rules, replacing the file whole: a
    /// run reading it meanwhile sees the old one or the new. The first time
    /// they are compiled only their key is kept; the knowledge base, the
    /// next time. Writing it costs about a third of compiling again, which
    /// rules being edited, compiled once each, would pay every run.
    pub fn store(&self, kb: &KnowledgeBase) {
        let compiled = match self.seen_before {
            true => match kb.to_bytes_without_dfas() {
                Ok(compiled) => Some(compiled),
                Err(_) => return,
            },
            false => None,
        };
        let Some(folder) = self.path.parent() else {
            return;
        };
        let written = std::fs::create_dir_all(folder)
            .and_then(|()| tempfile::NamedTempFile::new_in(folder))
            .and_then(|mut file| {
                use std::io::Write;
                file.write_all(MAGIC)?;
                file.write_all(self.key.as_bytes())?;
                if let Some(compiled) = &compiled {
                    file.write_all(blake3::hash(compiled).as_bytes())?;
                    file.write_all(compiled)?;
                }
                file.persist(&self.path).map_err(|e| e.error)?;
                Ok(())
            });
        // Only slower next time.
        drop(written);
        forget_unused(folder);
    }
}

/// How long a kept file no run has used lasts: folders of rules come
/// and go (a checkout for each CI job, a copy to try something), and each
/// left a file behind.
const UNUSED_FOR: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// How often a load marks its file used.
const MARKED_EVERY: Duration = Duration::from_secs(24 * 60 * 60);

/// Removes the kept files no run has used for [`UNUSED_FOR`] (a load marks
/// its file used, once a day); done as a file is written, which is rare,
/// so that the cache folder does not grow for good.
fn forget_unused(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|ext| ext == "kbc") && older_than(&path, UNUSED_FOR) {
            // Another run may have removed or replaced it meanwhile.
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Whether a file was last changed longer ago than `age`.
fn older_than(path: &Path, age: Duration) -> bool {
    std::fs::metadata(path)
        .and_then(|metadata| metadata.modified())
        .is_ok_and(|modified| modified.elapsed().is_ok_and(|elapsed| elapsed > age))
}

/// The folder compiled knowledge bases are kept in: `KB_CACHE_DIR`, or
/// `kb` in the user's cache folder (`$XDG_CACHE_HOME`, `~/.cache`,
/// `~/Library/Caches`, `%LOCALAPPDATA%`).
fn cache_folder() -> Option<PathBuf> {
    match std::env::var_os(DIR_VARIABLE) {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(dirs::cache_dir()?.join("kb")),
    }
}
