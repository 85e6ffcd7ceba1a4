//! One module per subcommand.

pub mod check;
pub mod docs;
pub mod eval;
pub mod explain;
pub mod facts;
pub mod fmt;
pub mod graph;
pub mod init;
pub mod test;
