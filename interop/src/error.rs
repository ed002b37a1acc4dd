//! The one error every reader returns: where in the input (file, line, the op's index when the
//! format numbers its ops), which field, and what is wrong, so a person can open the file at the
//! right place and fix it.

use std::fmt;

/// Input that cannot be read into a history.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ImportError {
    /// The file, as the caller named it (empty when the caller gave none).
    pub file: String,
    /// The line, from 1 (0 when the problem is the input as a whole).
    pub line: usize,
    /// The operation's position among the source's operations, from 0, when the format has one
    /// (a Jepsen op's `:index`, or its place in the file).
    pub op: Option<usize>,
    /// The field, as the source spells it (`value.generation`, `fencing.outcome`, `kind`).
    pub field: Option<String>,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.file.is_empty() {
            write!(f, "{}: ", self.file)?;
        }
        if self.line > 0 {
            write!(f, "line {}", self.line)?;
            if let Some(op) = self.op {
                write!(f, " (op {op})")?;
            }
            f.write_str(": ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "`{field}`: ")?;
        }
        f.write_str(&self.problem)
    }
}

/// Where an operation was read: what an error names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Loc {
    pub line: usize,
    pub op: Option<usize>,
}

impl Loc {
    pub(crate) fn line(line: usize) -> Loc {
        Loc { line, op: None }
    }

    /// An error at this place about `field`.
    pub(crate) fn field(&self, field: &str, problem: impl Into<String>) -> ImportError {
        ImportError {
            file: String::new(),
            line: self.line,
            op: self.op,
            field: Some(field.to_string()),
            problem: problem.into(),
        }
    }

    /// An error at this place about the operation as a whole.
    pub(crate) fn whole(&self, problem: impl Into<String>) -> ImportError {
        ImportError {
            file: String::new(),
            line: self.line,
            op: self.op,
            field: None,
            problem: problem.into(),
        }
    }
}

impl ImportError {
    /// The same error, naming `file`.
    pub fn in_file(mut self, file: &str) -> ImportError {
        self.file = file.to_string();
        self
    }

    pub(crate) fn input(problem: impl Into<String>) -> ImportError {
        ImportError { file: String::new(), line: 0, op: None, field: None, problem: problem.into() }
    }
}

/// The largest input read whole, in bytes. Readers hold the input and the history built from
/// it in memory, so a larger file is refused before it is read rather than exhausting memory.
pub const MAX_INPUT: usize = 512 * 1024 * 1024;

/// The longest line, or the largest single operation, in bytes. Real operations are a few
/// hundred bytes; a line this long is damaged or not a history.
pub const MAX_LINE: usize = 1024 * 1024;

/// Refuses input larger than [`MAX_INPUT`].
pub(crate) fn check_size(len: usize) -> Result<(), ImportError> {
    if len > MAX_INPUT {
        return Err(ImportError::input(format!(
            "the input is {len} bytes; the largest read is {MAX_INPUT} bytes"
        )));
    }
    Ok(())
}

/// Turns bytes into text, naming the line of the first byte that is not UTF-8.
pub fn utf8(bytes: &[u8]) -> Result<&str, ImportError> {
    check_size(bytes.len())?;
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
        let column = at - bytes[..at].iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1) + 1;
        ImportError {
            file: String::new(),
            line,
            op: None,
            field: None,
            problem: format!("invalid UTF-8 at column {column} (byte {at} of the input)"),
        }
    })
}
