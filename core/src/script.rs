//! The `#!` line of a user-data script. wisp runs the interpreter itself, with the script
//! as its argument, so the saved script keeps mode 0600 and never needs the execute bit.

use crate::text::Decimal;

/// The `#!` line, its newline included, must fit in the 256 bytes the kernel reads
/// (BINPRM_BUF_SIZE).
pub const SHEBANG_LIMIT: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shebang<'a> {
    pub interpreter: &'a [u8],
    /// Everything after the interpreter, as one argument, as Linux passes it.
    pub argument: Option<&'a [u8]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShebangError {
    NotAScript,
    NoInterpreter,
    RelativeInterpreter,
    LineTooLong { limit: usize },
    ControlCharacter,
}

impl core::fmt::Display for ShebangError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ShebangError::NotAScript => f.write_str("does not start with #!"),
            ShebangError::NoInterpreter => f.write_str("#! names no interpreter"),
            ShebangError::RelativeInterpreter => f.write_str("#! interpreter is not an absolute path"),
            ShebangError::LineTooLong { limit } => write!(f, "#! line longer than {limit} bytes", limit = Decimal(*limit as u64)),
            ShebangError::ControlCharacter => f.write_str("#! line holds a control character"),
        }
    }
}

/// Parses the first line of `script` as the kernel would.
pub fn parse(script: &[u8]) -> Result<Shebang<'_>, ShebangError> {
    let rest = script.strip_prefix(b"#!").ok_or(ShebangError::NotAScript)?;
    let line_end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    if line_end + 3 > SHEBANG_LIMIT {
        return Err(ShebangError::LineTooLong { limit: SHEBANG_LIMIT });
    }
    let line = rest[..line_end].trim_ascii();
    if line.iter().any(|&b| b < 0x20 && b != b'\t' || b == 0x7f) {
        return Err(ShebangError::ControlCharacter);
    }
    let split = line.iter().position(|&b| b == b' ' || b == b'\t').unwrap_or(line.len());
    let (interpreter, argument) = (&line[..split], line[split..].trim_ascii());
    if interpreter.is_empty() {
        return Err(ShebangError::NoInterpreter);
    }
    if interpreter[0] != b'/' {
        return Err(ShebangError::RelativeInterpreter);
    }
    Ok(Shebang { interpreter, argument: (!argument.is_empty()).then_some(argument) })
}


#[cfg(test)]
mod tests {
    use super::*;

    fn ok(interpreter: &'static [u8], argument: Option<&'static [u8]>) -> Result<Shebang<'static>, ShebangError> {
        Ok(Shebang { interpreter, argument })
    }

    #[test]
    fn forms() {
        assert_eq!(parse(b"#!/bin/sh\necho hi\n"), ok(b"/bin/sh", None));
        assert_eq!(parse(b"#! /bin/sh -eu \r\n"), ok(b"/bin/sh", Some(b"-eu")));
        assert_eq!(parse(b"#!/usr/bin/env python3 -u"), ok(b"/usr/bin/env", Some(b"python3 -u")));
    }

    #[test]
    fn refusals() {
        assert_eq!(parse(b"#cloud-config\n"), Err(ShebangError::NotAScript));
        assert_eq!(parse(b"#!\n"), Err(ShebangError::NoInterpreter));
        assert_eq!(parse(b"#!sh\n"), Err(ShebangError::RelativeInterpreter));
        assert_eq!(parse(b"#!/bin/sh\x1b[2J\n"), Err(ShebangError::ControlCharacter));
        let mut long = b"#!/".to_vec();
        long.resize(SHEBANG_LIMIT - 1, b'a');
        assert!(parse(&long).is_ok());
        long.push(b'a');
        assert_eq!(parse(&long), Err(ShebangError::LineTooLong { limit: SHEBANG_LIMIT }));
    }
}
