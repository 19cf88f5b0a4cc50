//! What wisp prints: messages on standard error, results on standard output, and the
//! action log, which also goes to `$TINY_CLOUD_LOGS/wisp.log`.

use core::fmt::{self, Write};

use wisp_os_linux::fs::Dir;
use wisp_os_linux::stdio::{stderr, stdout, write_all};
use wisp_os_linux::{AsFd, Errno, OwnedFd};

/// Longest message line; longer ones end in "..." rather than being split.
pub const LINE_LIMIT: usize = 1024;

/// A line assembled with `write!` in a fixed buffer.
pub struct Line {
    buf: heapless::String<LINE_LIMIT>,
    cut: bool,
}

impl Line {
    pub fn new() -> Line {
        Line { buf: heapless::String::new(), cut: false }
    }

    /// A line of formatted text; one function for every message, never inlined.
    #[inline(never)]
    pub fn format(args: fmt::Arguments<'_>) -> Line {
        let mut line = Line::new();
        let _ = line.write_fmt(args);
        line
    }

    pub fn bytes(&mut self) -> &[u8] {
        if self.cut {
            let keep = LINE_LIMIT - 4;
            let mut end = keep;
            while !self.buf.is_char_boundary(end) {
                end -= 1;
            }
            self.buf.truncate(end);
            let _ = self.buf.push_str("...");
            self.cut = false;
        }
        if !self.buf.ends_with('\n') {
            let _ = self.buf.push('\n');
        }
        self.buf.as_bytes()
    }

    /// The text, with "..." marking a cut, and without the line break.
    pub fn text(&mut self) -> &str {
        let _ = self.bytes();
        self.buf.trim_end_matches('\n')
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.buf)?;
        if self.cut {
            f.write_str("...")?;
        }
        Ok(())
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            if self.buf.len() + c.len_utf8() > LINE_LIMIT - 1 {
                self.cut = true;
                return Ok(());
            }
            let _ = self.buf.push(c);
        }
        Ok(())
    }
}

/// Shows bytes from outside (paths, names) with anything unprintable escaped, so a
/// message can never carry a terminal escape or a line break.
pub struct Shown<'a>(pub &'a [u8]);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &byte in self.0 {
            if (0x20..0x7f).contains(&byte) {
                f.write_char(byte as char)?;
            } else {
                write!(f, "\\x{byte:02x}")?;
            }
        }
        Ok(())
    }
}

/// An errno as words.
pub struct Os(pub Errno);

impl fmt::Display for Os {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match wisp_os_linux::process::errno_name(self.0) {
            "system error" => write!(f, "errno {}", self.0.raw_os_error()),
            name => f.write_str(name),
        }
    }
}

pub fn print(args: fmt::Arguments<'_>) {
    let mut line = Line::new();
    let _ = line.write_fmt(args);
    let _ = write_all(stdout(), line.bytes());
}

/// Raw bytes to standard output (metadata values), unchanged.
pub fn print_raw(bytes: &[u8]) {
    let _ = write_all(stdout(), bytes);
}

pub fn error(args: fmt::Arguments<'_>) {
    let mut line = Line::new();
    let _ = line.write_fmt(args);
    let _ = write_all(stderr(), b"wisp: ");
    let _ = write_all(stderr(), line.bytes());
}

/// The action log: each line to standard error and, once the log directory is known,
/// to `wisp.log` there, prefixed with the time.
pub struct Log {
    file: Option<OwnedFd>,
}

impl Log {
    pub const FILE_NAME: &'static [u8] = b"wisp.log";

    pub const fn new() -> Log {
        Log { file: None }
    }

    /// Starts copying lines to `dir/wisp.log`. A log that cannot be opened is reported
    /// once and otherwise ignored: logging never stops a bootstrap.
    pub fn open(&mut self, dir: &Dir) {
        match dir.open_append(Self::FILE_NAME, 0o640) {
            Ok(fd) => self.file = Some(fd),
            Err(e) => error(format_args!("cannot open the log file wisp.log: {}", Os(e))),
        }
    }

    pub fn line(&mut self, args: fmt::Arguments<'_>) {
        let mut line = Line::new();
        let _ = line.write_fmt(args);
        let message = line.bytes();
        let _ = write_all(stderr(), b"wisp: ");
        let _ = write_all(stderr(), message);
        if let Some(file) = &self.file {
            let stamp = wisp_core::clock::iso8601(wisp_os_linux::time::realtime_secs());
            let _ = write_all(file.as_fd(), &stamp);
            let _ = write_all(file.as_fd(), b" ");
            let _ = write_all(file.as_fd(), message);
        }
    }
}

impl From<wisp_core::cloud_config::ConfigError> for Line {
    fn from(e: wisp_core::cloud_config::ConfigError) -> Line {
        msg!("{e}")
    }
}
