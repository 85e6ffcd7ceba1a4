//! A compiled knowledge base as bytes: a program embeds one and loads it
//! without parsing or compiling rules (`kb` does so with its bundled one).

use std::sync::Arc;

use kb_dsl::Source;

use crate::KnowledgeBase;

/// What the bytes start with: the format changes with the engine, so bytes
/// of another version are refused rather than misread.
const HEADER: &str = concat!("kb-engine ", env!("CARGO_PKG_VERSION"), "\n");

/// Why bytes are not a compiled knowledge base.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Made by another version of the engine, or not by the engine at all.
    #[error("not a knowledge base compiled by {}", HEADER.trim_end())]
    Version,
    /// Truncated or altered.
    #[error("damaged compiled knowledge base: {0}")]
    Format(#[from] postcard::Error),
}

impl KnowledgeBase {
    /// The knowledge base as bytes for [`KnowledgeBase::from_bytes`]. The
    /// same knowledge base always gives the same bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, SnapshotError> {
        let mut bytes = HEADER.as_bytes().to_vec();
        postcard::to_io(self, &mut bytes)?;
        Ok(bytes)
    }

    /// A knowledge base from [`KnowledgeBase::to_bytes`], with its locations
    /// pointing into `sources`, the rule files it was compiled from. Regular
    /// expressions and command templates compile when first used; the
    /// warnings compiling found are not kept.
    pub fn from_bytes(
        bytes: &[u8],
        sources: impl IntoIterator<Item = Arc<Source>>,
    ) -> Result<Self, SnapshotError> {
        let body = bytes
            .strip_prefix(HEADER.as_bytes())
            .ok_or(SnapshotError::Version)?;
        kb_dsl::source::with_sources(sources, || Ok(postcard::from_bytes(body)?))
    }
}
