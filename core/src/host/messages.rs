//! What a rule says: its result and error lines, and the warnings of items it leaves out.

use core::fmt;

use super::HostError;
use crate::cloud_config::ConfigError;

/// A line of text kept by the host, and the system's words for an errno: what every host
/// trait that says something (`Messages`, `SeedSources`) builds its lines as, written once
/// for the host's line type rather than once for each host.
pub trait Line: fmt::Display {
    fn format(args: fmt::Arguments<'_>) -> Self;

    /// The system's words for `error` ("No such file or directory").
    fn reason(error: HostError) -> impl fmt::Display;
}

/// The host's message lines. A rule builds its lines here, in the host's words for what
/// core cannot know (the system's reason for an errno, a path under the root), so that
/// what is printed is the host's to store and show.
pub trait Messages {
    /// One line of text, kept by the host.
    type Text: Line + From<ConfigError>;

    fn text(&self, args: fmt::Arguments<'_>) -> Self::Text {
        Self::Text::format(args)
    }

    /// A line of the action log.
    fn log(&self, args: fmt::Arguments<'_>);

    /// An item left out, or a form not applied: said in the log, never fatal.
    fn warn(&self, args: fmt::Arguments<'_>) {
        self.log(format_args!("warning: {args}"))
    }

    /// A problem said at once (on standard error), never fatal.
    fn error(&self, args: fmt::Arguments<'_>);

    /// The system's words for `error` ("No such file or directory").
    fn reason(error: HostError) -> impl fmt::Display {
        Self::Text::reason(error)
    }

    /// Bytes from outside (names, paths) with anything unprintable escaped.
    fn shown(bytes: &[u8]) -> impl fmt::Display + '_ {
        crate::text::Shown(bytes)
    }

    /// `path: reason` for a call on an image path, the path as the host reached it
    /// (under its root); a symlink it refused to follow is said as such (`PathError`).
    fn path_error(&self, path: &[u8], error: HostError) -> Self::Text {
        self.text(format_args!("{}", PathError { path: self.under_root(path), error, reason: Self::reason(error) }))
    }

    /// An image path as the host reaches it (under its root), for messages.
    fn under_root<'p>(&'p self, path: &'p [u8]) -> impl fmt::Display + 'p;
}

/// `path: reason` for a failed call on a path; a symlink the host refused to follow
/// (ELOOP) is said as such, since the system's words ("Too many levels of symbolic
/// links") would send the reader looking for a loop.
pub struct PathError<P, R> {
    pub path: P,
    pub error: HostError,
    /// The system's words for `error`.
    pub reason: R,
}

impl<P: fmt::Display, R: fmt::Display> fmt::Display for PathError<P, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.error {
            HostError::SYMLINK_REFUSED => write!(f, "{}: a symlink in the path is refused", self.path),
            _ => write!(f, "{}: {}", self.path, self.reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_error_says_a_refused_symlink_as_such_and_else_the_reason() {
        let said = |errno| std::format!("{}", PathError { path: "/mnt/etc/passwd", error: HostError { errno }, reason: "Permission denied" });
        assert_eq!(said(13), "/mnt/etc/passwd: Permission denied");
        assert_eq!(said(40), "/mnt/etc/passwd: a symlink in the path is refused");
    }
}
