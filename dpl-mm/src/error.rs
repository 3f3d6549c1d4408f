//! Why a Matrix Market file could not be read.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a Matrix Market file could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum MmError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The text is not valid Matrix Market.
    Parse {
        /// The file, when reading one with [`read`](crate::read).
        path: Option<PathBuf>,
        /// The 1-based line where the problem was found (for a missing entry: the last line).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Valid Matrix Market that this reader does not handle (complex values, hermitian
    /// symmetry, vectors).
    Unsupported {
        /// The file, when reading one with [`read`](crate::read).
        path: Option<PathBuf>,
        /// The 1-based line of the header.
        line: usize,
        /// What is not supported.
        what: String,
    },
}

impl MmError {
    pub(crate) fn parse(line: usize, message: impl Into<String>) -> Self {
        MmError::Parse {
            path: None,
            line,
            message: message.into(),
        }
    }

    /// The same error, naming `file`.
    pub(crate) fn in_file(self, file: &Path) -> Self {
        match self {
            MmError::Parse { line, message, .. } => MmError::Parse {
                path: Some(file.to_path_buf()),
                line,
                message,
            },
            MmError::Unsupported { line, what, .. } => MmError::Unsupported {
                path: Some(file.to_path_buf()),
                line,
                what,
            },
            other => other,
        }
    }

    /// The 1-based line of a parse or unsupported-feature error.
    pub fn line(&self) -> Option<usize> {
        match self {
            MmError::Parse { line, .. } | MmError::Unsupported { line, .. } => Some(*line),
            MmError::Io { .. } => None,
        }
    }
}

impl fmt::Display for MmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |f: &mut fmt::Formatter<'_>, path: &Option<PathBuf>, line: usize| match path {
            Some(p) => write!(f, "{}:{line}: ", p.display()),
            None => write!(f, "line {line}: "),
        };
        match self {
            MmError::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            MmError::Parse {
                path,
                line,
                message,
            } => {
                at(f, path, *line)?;
                f.write_str(message)
            }
            MmError::Unsupported { path, line, what } => {
                at(f, path, *line)?;
                write!(f, "{what} matrices are not supported")
            }
        }
    }
}

impl std::error::Error for MmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MmError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
