//! What wisp prints: messages on standard error, results on standard output, and the
//! action log, which also goes to `$TINY_CLOUD_LOGS/wisp.log`.

use core::fmt::{self, Write};

use wisp_core::message_line::{LineHandle, LineStore, STORE_LIMIT};
use wisp_core::text::Decimal;
use wisp_os_linux::append_only::AppendOnly;
use wisp_os_linux::stdio::{stderr, stdout, write_all};
use wisp_os_linux::{AsFd, Errno, OwnedFd};

/// Room for every message of one run: a run writes a few hundred short lines at most.
const MESSAGES_LIMIT: usize = 256 * 1024;
const _: () = assert!(MESSAGES_LIMIT < STORE_LIMIT);

/// Every message of the run, appended and never changed, so that a `Message` is a small
/// handle to its text here.
struct Messages(AppendOnly<MESSAGES_LIMIT>);

static MESSAGES: Messages = Messages(AppendOnly::new());

impl LineStore for Messages {
    fn used(&self) -> usize {
        self.0.used()
    }

    fn room(&self) -> usize {
        MESSAGES_LIMIT - self.0.used()
    }

    fn append(&self, bytes: &[u8]) {
        self.0.append(bytes);
    }

    fn text(&self, start: usize, len: usize) -> &str {
        // `LineHandle` appends whole characters only.
        core::str::from_utf8(self.0.get(start, len)).unwrap_or("")
    }
}

/// A message line: a handle to its text in the run's message store, one non-zero `u32`
/// (`LineHandle`), so that a `Result<T, Message>` with a `T` of 4 bytes or less travels
/// in a register, not through memory: 24 KB less code than three fields.
#[derive(Clone, Copy)]
pub struct Message(LineHandle);

impl Message {
    /// A line of formatted text; one function for every message, never inlined.
    #[inline(never)]
    pub fn format(args: fmt::Arguments<'_>) -> Message {
        let mut line = Message(LineHandle::at(MESSAGES.0.used()));
        let _ = line.write_fmt(args);
        line
    }

    /// The text, without a line break; "..." follows a line cut at the limit.
    pub fn text(&self) -> &'static str {
        MESSAGES.text(self.0.start(), self.0.len())
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())?;
        if self.0.cut() {
            f.write_str("...")?;
        }
        Ok(())
    }
}

impl Write for Message {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.write(&MESSAGES, s);
        Ok(())
    }
}

/// Any error in its own words: one function per error type, not one per call.
#[inline(never)]
pub fn line(e: impl fmt::Display) -> Message {
    Message::format(format_args!("{e}"))
}

/// `path: reason` for a failed system call on a path from outside, shown safely (or on
/// what wisp names it, printable as it is).
#[inline(never)]
pub fn path_error(path: &[u8], e: Errno) -> Message {
    Message::format(format_args!("{}: {}", Shown(path), Os(e)))
}

pub use wisp_core::text::Shown;

/// An errno as words.
pub struct Os(pub Errno);

impl fmt::Display for Os {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match wisp_os_linux::process::errno_name(self.0) {
            "system error" => write!(f, "errno {}", Decimal(self.0.raw_os_error().unsigned_abs() as u64)),
            name => f.write_str(name),
        }
    }
}

/// A line on standard output.
pub fn print_line(line: Message) {
    write_line(stdout(), b"", line);
}

/// `prefix`, the line ("..." if cut) and a line break, to `fd`.
fn write_line(fd: wisp_os_linux::BorrowedFd<'_>, prefix: &[u8], line: Message) {
    let _ = write_all(fd, prefix);
    let _ = write_all(fd, line.text().as_bytes());
    let _ = write_all(fd, if line.0.cut() { b"...\n" } else { b"\n" });
}

pub fn print_raw(bytes: &[u8]) {
    let _ = write_all(stdout(), bytes);
}

pub fn error(args: fmt::Arguments<'_>) {
    write_line(stderr(), b"wisp: ", Message::format(args));
}

/// `e` on standard error, and the exit status `code`: a command's failure.
#[inline(never)]
pub fn failed(e: Message, code: i32) -> i32 {
    write_line(stderr(), b"wisp: ", e);
    code
}

/// The action log: each line to standard error and, once the log directory is known,
/// to `wisp.log` there, prefixed with the time.
pub struct Log {
    /// `wisp.log`, once `Context::open_log` opened it.
    pub file: Option<OwnedFd>,
}

impl Log {
    pub fn line(&self, args: fmt::Arguments<'_>) {
        self.message(Message::format(args));
    }

    /// A line already made, written as it is.
    pub fn message(&self, line: Message) {
        write_line(stderr(), b"wisp: ", line);
        if let Some(file) = &self.file {
            let _ = write_all(file.as_fd(), &wisp_core::clock::iso8601(wisp_os_linux::time::realtime_secs()));
            write_line(file.as_fd(), b" ", line);
        }
    }
}

impl From<wisp_core::cloud_config::ConfigError> for Message {
    fn from(e: wisp_core::cloud_config::ConfigError) -> Message {
        msg!("{e}")
    }
}
