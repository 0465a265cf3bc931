//! Errors of the ring buffer's fallible constructors.
//!
//! Callers should match on these instead of reaching for unwrap: a bad capacity comes from the
//! command line, and the dump tool prints a usage line for it.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CapacityError {
    /// The argument was not a number.
    NotANumber(String),
    /// Zero slots would make every push fail (and tempt callers to unwrap the result).
    Zero,
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapacityError::NotANumber(arg) => write!(f, "capacity {arg:?} is not a number"),
            CapacityError::Zero => f.write_str("capacity must be at least 1 (do not unwrap a zero)"),
        }
    }
}

impl std::error::Error for CapacityError {}
