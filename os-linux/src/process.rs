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
        *slot = arg.as_ptr() as *const u8;
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
            env[count] = extra.as_ptr() as *const u8;
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
    match errno {
        Errno::ACCESS => "permission denied",
        Errno::PERM => "operation not permitted",
        Errno::NOENT => "no such file or directory",
        Errno::EXIST => "file exists",
        Errno::NOTDIR => "not a directory",
        Errno::ISDIR => "is a directory",
        Errno::LOOP => "symbolic link refused",
        Errno::NOSPC => "no space left on device",
        Errno::ROFS => "read-only file system",
        Errno::NAMETOOLONG => "name too long",
        Errno::INVAL => "invalid argument",
        Errno::NOEXEC => "exec format error",
        Errno::TOOBIG => "argument list too long",
        Errno::CONNREFUSED => "connection refused",
        Errno::NETUNREACH => "network unreachable",
        Errno::HOSTUNREACH => "host unreachable",
        Errno::TIMEDOUT => "timed out",
        Errno::CONNRESET => "connection reset",
        Errno::PIPE => "broken pipe",
        Errno::NOTTY => "inappropriate ioctl for device",
        Errno::NOTSUP => "operation not supported",
        Errno::BUSY => "device or resource busy",
        Errno::IO => "input/output error",
        Errno::BADF => "bad file descriptor",
        Errno::NODEV => "no such device",
        Errno::NXIO => "no such device or address",
        Errno::FBIG => "file too large",
        _ => "system error",
    }
}
