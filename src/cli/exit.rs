//! The process exit codes, in one place: what each status and error stands for.

use crate::error::Error;
use crate::stages::budget::Status;

/// The process exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// `READY`: done, warnings possible.
    Ready = 0,
    /// Bad input, unknown role, I/O, hand edits in the way, a failed check.
    Error = 1,
    /// Command-line usage error, an invalid id or role.
    Usage = 2,
    /// `BLOCKED`: nothing survived selection and exclusion.
    Blocked = 3,
    /// `OVER_BUDGET`: a cap could not be met by dropping lower priorities.
    OverBudget = 4,
}

impl ExitCode {
    /// The numeric code handed to the operating system.
    #[must_use]
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The exit code of a compile status.
    #[must_use]
    pub fn of_status(status: Status) -> ExitCode {
        match status {
            Status::Ready => ExitCode::Ready,
            Status::Blocked => ExitCode::Blocked,
            Status::OverBudget => ExitCode::OverBudget,
        }
    }

    /// The exit code an error stands for: usage errors 2, everything else 1.
    #[must_use]
    pub fn of_error(e: &Error) -> ExitCode {
        if e.is_usage() {
            ExitCode::Usage
        } else {
            ExitCode::Error
        }
    }

    /// Success or a failed check.
    #[must_use]
    pub fn of_check(passed: bool) -> ExitCode {
        if passed {
            ExitCode::Ready
        } else {
            ExitCode::Error
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_numbers() {
        assert_eq!(ExitCode::of_status(Status::Ready).code(), 0);
        assert_eq!(ExitCode::of_status(Status::Blocked).code(), 3);
        assert_eq!(ExitCode::of_status(Status::OverBudget).code(), 4);
        assert_eq!(ExitCode::of_error(&Error::Usage("x".into())).code(), 2);
        let invalid = Error::InvalidName {
            what: "role",
            value: "a b".into(),
        };
        assert_eq!(ExitCode::of_error(&invalid).code(), 2);
        assert_eq!(ExitCode::of_error(&Error::Failed("x".into())).code(), 1);
        assert_eq!(ExitCode::of_check(false).code(), 1);
    }
}
