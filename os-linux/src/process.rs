//! The process itself (arguments, environment, exit) and the programs it starts.

use core::ffi::{c_char, CStr};
use core::ptr;

use rustix::fd::{AsFd, BorrowedFd};
use rustix::io::Errno;
use rustix::process::{WaitOptions, WaitStatus};
use rustix::runtime::Fork;

/// Most arguments `run` passes to a program, its own name included.
pub const ARGS_LIMIT: usize = 64;
/// Most environment variables a program started with an extra one gets.
pub const ENV_LIMIT: usize = 128;

/// The arguments and environment the kernel handed to the program.
#[derive(Clone, Copy)]
pub struct StartInfo {
    argc: usize,
    argv: *const *const u8,
    envp: *const *const u8,
}

impl StartInfo {
    /// # Safety
    /// The three values must be the ones origin passed to `origin_main`: `argv` holds
    /// `argc` valid C strings and `envp` is a NULL-terminated array of C strings, both
    /// alive, unmodified, for the rest of the program.
    pub unsafe fn new(argc: usize, argv: *mut *mut u8, envp: *mut *mut u8) -> Self {
        StartInfo { argc, argv: argv as *const *const u8, envp: envp as *const *const u8 }
    }

    /// The value of environment variable `name`, if set.
    pub fn env(&self, name: &[u8]) -> Option<&'static [u8]> {
        let mut i = 0;
        loop {
            // SAFETY: `new`'s contract: `envp` is NULL-terminated and its strings live on.
            let entry = unsafe { *self.envp.add(i) };
            if entry.is_null() {
                return None;
            }
            // SAFETY: as above, `entry` is a live C string.
            let bytes = unsafe { CStr::from_ptr(entry as *const c_char) }.to_bytes();
            if let Some(value) = bytes.strip_prefix(name).and_then(|rest| rest.strip_prefix(b"=")) {
                return Some(value);
            }
            i += 1;
        }
    }

    /// The arguments, the program's name first.
    pub fn args(&self) -> impl Iterator<Item = &'static [u8]> + '_ {
        (0..self.argc).map(move |i| {
            // SAFETY: `new`'s contract: `argv[i]` for `i < argc` is a live C string.
            unsafe { CStr::from_ptr(*self.argv.add(i) as *const c_char) }.to_bytes()
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    Exited(i32),
    Signaled(i32),
}

/// Runs `program` with `args` (its own name first) and wisp's environment (plus `extra`,
/// a `NAME=value`, when given), standard output and error going to `output`, standard
/// input from `input`, and waits for it: fork(2), dup2(2), chroot(2) and chdir(2) into
/// `root` when given (`program` is then a path inside it), execve(2), waitpid(2). A
/// program that cannot be executed ends with status 127, as in the shell, after writing
/// why to `output`.
pub fn run(
    start: &StartInfo,
    root: Option<&CStr>,
    program: &CStr,
    args: &[&CStr],
    extra: Option<&CStr>,
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
) -> Result<ExitStatus, Errno> {
    if args.len() >= ARGS_LIMIT {
        return Err(Errno::TOOBIG);
    }
    let mut argv: [*const u8; ARGS_LIMIT] = [ptr::null(); ARGS_LIMIT];
    for (slot, arg) in argv.iter_mut().zip(args) {
        *slot = arg.as_ptr().cast();
    }
    let mut env: [*const u8; ENV_LIMIT] = [ptr::null(); ENV_LIMIT];
    let envp = match extra {
        None => start.envp,
        Some(extra) => {
            let mut count = 0;
            loop {
                // SAFETY: `StartInfo::new`'s contract: `envp` is NULL-terminated.
                let entry = unsafe { *start.envp.add(count) };
                if entry.is_null() {
                    break;
                }
                // Room for the extra entry and the NULL after it.
                *env.get_mut(count..ENV_LIMIT - 2).and_then(|rest| rest.first_mut()).ok_or(Errno::TOOBIG)? = entry;
                count += 1;
            }
            env[count] = extra.as_ptr().cast();
            env.as_ptr()
        }
    };
    // SAFETY: wisp is single-threaded, so the child is a complete copy of the process, and
    // it only makes system calls before execve or exit_group.
    match unsafe { rustix::runtime::kernel_fork()? } {
        Fork::Child(_) => {
            let _ = rustix::stdio::dup2_stdin(input);
            let _ = rustix::stdio::dup2_stdout(output.as_fd());
            let _ = rustix::stdio::dup2_stderr(output);
            if let Some(root) = root {
                if let Err(errno) = rustix::process::chroot(root).and_then(|()| rustix::process::chdir(c"/")) {
                    child_fails(b"chroot to", root, errno)
                }
            }
            // SAFETY: `argv` is NULL-terminated (ARGS_LIMIT > args.len()) and points at C
            // strings that outlive this call; `envp` is the kernel's, per `StartInfo::new`,
            // or `env`: its entries and `extra`, NULL-terminated (at most ENV_LIMIT - 1 set).
            let errno = unsafe { rustix::runtime::execve(program, argv.as_ptr(), envp) };
            child_fails(b"execute", program, errno)
        }
        Fork::ParentOf(child) => loop {
            match rustix::process::waitpid(Some(child), WaitOptions::empty()) {
                Ok(Some((_, status))) => return Ok(exit_status(status)),
                Ok(None) | Err(Errno::INTR) => {}
                Err(e) => return Err(e),
            }
        },
    }
}

/// In the child, before execve: `wisp: cannot <what> <path>: <errno>` on its output, then
/// exit status 127, as the shell gives a command it cannot run.
fn child_fails(what: &[u8], path: &CStr, errno: Errno) -> ! {
    for piece in [&b"wisp: cannot "[..], what, b" ", path.to_bytes(), b": ", errno_name(errno).as_bytes(), b"\n"] {
        let _ = crate::stdio::write_all(crate::stdio::stderr(), piece);
    }
    rustix::runtime::exit_group(127)
}

fn exit_status(status: WaitStatus) -> ExitStatus {
    match (status.exit_status(), status.terminating_signal()) {
        (Some(code), _) => ExitStatus::Exited(code),
        (None, Some(signal)) => ExitStatus::Signaled(signal),
        (None, None) => ExitStatus::Exited(-1),
    }
}

/// exit_group(2).
pub fn exit(code: i32) -> ! {
    rustix::runtime::exit_group(code)
}

/// A short name for the errors wisp meets, for messages (no strerror without libc).
pub fn errno_name(errno: Errno) -> &'static str {
    // A table rather than a match: a match of this many sparse values costs ten bytes
    // of code and a jump-table entry per name.
    const NAMED: [Errno; 27] = [
        Errno::ACCESS,
        Errno::PERM,
        Errno::NOENT,
        Errno::EXIST,
        Errno::NOTDIR,
        Errno::ISDIR,
        Errno::LOOP,
        Errno::NOSPC,
        Errno::ROFS,
        Errno::NAMETOOLONG,
        Errno::INVAL,
        Errno::NOEXEC,
        Errno::TOOBIG,
        Errno::CONNREFUSED,
        Errno::NETUNREACH,
        Errno::HOSTUNREACH,
        Errno::TIMEDOUT,
        Errno::CONNRESET,
        Errno::PIPE,
        Errno::NOTTY,
        Errno::NOTSUP,
        Errno::BUSY,
        Errno::IO,
        Errno::BADF,
        Errno::NODEV,
        Errno::NXIO,
        Errno::FBIG,
    ];
    const NAMES: &str = "\
permission denied\n\
operation not permitted\n\
no such file or directory\n\
file exists\n\
not a directory\n\
is a directory\n\
symbolic link refused\n\
no space left on device\n\
read-only file system\n\
name too long\n\
invalid argument\n\
exec format error\n\
argument list too long\n\
connection refused\n\
network unreachable\n\
host unreachable\n\
timed out\n\
connection reset\n\
broken pipe\n\
inappropriate ioctl for device\n\
operation not supported\n\
device or resource busy\n\
input/output error\n\
bad file descriptor\n\
no such device\n\
no such device or address\n\
file too large\n\
";
    let index = NAMED.iter().position(|&named| named == errno).unwrap_or(NAMED.len());
    NAMES.split_terminator('\n').nth(index).unwrap_or("system error")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_names_line_up_with_their_codes() {
        assert_eq!(errno_name(Errno::ACCESS), "permission denied");
        assert_eq!(errno_name(Errno::NOENT), "no such file or directory");
        assert_eq!(errno_name(Errno::IO), "input/output error");
        assert_eq!(errno_name(Errno::FBIG), "file too large");
        assert_eq!(errno_name(Errno::AGAIN), "system error");
    }
}
