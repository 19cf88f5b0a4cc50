//! What every command works with: the root every path is taken under, the configuration
//! (its CLOUD replaced by `--cloud`'s: `cloud` resolves it), and the log. It builds no host:
//! the hosts in `host` are built over it (main's `load_configuration` reads the file through one).

use wisp_core::cli::Invocation;
use wisp_core::config::Config;
use wisp_core::host::messages::PathError;
use wisp_core::host::HostError;
use wisp_core::text::{Decimal, ShownUnder};
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::fs::{self, Dir, Resolve};
use wisp_os_linux::process::StartInfo;

use crate::output::{self, Message, Log, Os, Shown};

pub struct Context<'a> {
    pub start: &'a StartInfo,
    /// `--root` without trailing slashes: empty for the real root.
    pub root: &'a [u8],
    /// The same, for chroot(2): `None` for the real root.
    pub program_root: Option<NulTerminated>,
    /// The root, open: every path under it is resolved inside it.
    pub root_dir: Dir,
    pub config: Config,
    /// Which file the configuration came from, for messages.
    pub config_file: NulTerminated,
    pub log: Log,
}

impl<'a> Context<'a> {
    /// An item left out, or a form not applied: said in the log, never fatal.
    #[inline(never)]
    pub fn warn(&self, args: core::fmt::Arguments<'_>) {
        self.log.line(format_args!("warning: {args}"));
    }

    /// The root, open, with the default configuration (main's `load_configuration` reads the file).
    #[inline(never)]
    pub fn open(start: &'a StartInfo, invocation: &Invocation<'a>) -> Result<Context<'a>, Message> {
        let root = invocation.root.unwrap_or(b"");
        let root_path = NulTerminated::from_parts(&[if root.is_empty() { b"/" } else { root }]).map_err(|e| msg!("--root {}: {e}", Shown(root)))?;
        let root_dir = match Dir::open(root_path.as_cstr()) {
            Ok(dir) => dir,
            // A mistyped --root must not become a new tree of wisp's files.
            Err(_) if !root.is_empty() => return Err(msg!("--root {}: no such directory", Shown(root))),
            Err(e) => return Err(output::path_error(root_path.as_bytes(), e)),
        };
        Ok(Context {
            start,
            root,
            program_root: (!root.is_empty()).then_some(root_path),
            root_dir,
            config: Config::default(),
            config_file: NulTerminated::new(),
            log: Log { file: None },
        })
    }

    /// `absolute` under the root.
    pub fn path(&self, absolute: &[u8]) -> Result<NulTerminated, Message> {
        NulTerminated::from_parts(&[self.root, absolute]).map_err(|e| msg!("{}: {e}", ShownUnder { root: self.root, path: absolute }))
    }

    /// The directory, resolved inside the root: its symlinks (`/var/run -> /run`) are
    /// followed, but `..` and absolute links stop at the root.
    #[inline(never)]
    pub fn open_dir(&self, absolute: &[u8]) -> Result<Dir, Message> {
        self.root_dir.open_beneath(absolute, Resolve::InRoot).map_err(|e| self.path_error(absolute, e))
    }

    /// Opens the directory, creating it and its parents (mode 0755) if missing, resolved
    /// inside the root as `open_dir` (`InRoot`), or with no symlink followed (`NoSymlinks`,
    /// for a path user-data chose).
    pub fn create_dir(&self, absolute: &[u8], resolve: Resolve) -> Result<Dir, Message> {
        self.root_dir.create_beneath(absolute, 0o755, resolve).map_err(|e| self.path_error(absolute, e))
    }

    pub fn path_error(&self, absolute: &[u8], e: wisp_os_linux::Errno) -> Message {
        msg!("{}", PathError { path: ShownUnder { root: self.root, path: absolute }, error: HostError { errno: e.raw_os_error() }, reason: Os(e) })
    }

    pub fn var_dir(&self) -> Result<Dir, Message> {
        self.create_dir(self.config.var_dir.as_bytes(), Resolve::InRoot)
    }

    /// TINY_CLOUD_VAR for a command that only reads: `None` when it does not exist.
    /// Resolved inside the root as `var_dir` is.
    pub fn existing_var_dir(&self) -> Result<Option<Dir>, Message> {
        let var = self.config.var_dir.as_bytes();
        match self.root_dir.open_beneath(var, Resolve::InRoot) {
            Ok(dir) => Ok(Some(dir)),
            Err(wisp_os_linux::Errno::NOENT) => Ok(None),
            Err(e) => Err(self.path_error(var, e)),
        }
    }

    pub fn logs_dir(&self) -> Result<Dir, Message> {
        self.create_dir(self.config.logs_dir.as_bytes(), Resolve::InRoot)
    }

    /// Starts copying the log's lines to `wisp.log` in TINY_CLOUD_LOGS. A log that cannot
    /// be opened is reported once and otherwise ignored: logging never stops a bootstrap.
    pub fn open_log(&mut self) {
        let dir = match self.logs_dir() {
            Ok(dir) => dir,
            Err(e) => return output::error(format_args!("no log file: {e}")),
        };
        match dir.open_append(wisp_core::state_files::LOG, 0o640) {
            Ok(file) => self.log.file = Some(file),
            Err(e) => output::error(format_args!("cannot open the log file wisp.log: {}", Os(e))),
        }
    }

    /// stat(2) of `absolute` under the root, symlinks followed inside it (dropbearkey is
    /// often one to dropbearmulti), as a chrooted program would see it: an absolute link
    /// stops at the root and never reaches the host's file; `None` when it cannot be
    /// reached.
    pub fn stat_followed(&self, absolute: &[u8]) -> Option<fs::Metadata> {
        self.root_dir.metadata_beneath(absolute, Resolve::InRoot).ok()?
    }

    /// Incus's guest API socket, else LXD's, when the instance has one and wisp was built
    /// for Incus: the network the metadata service is reached over.
    pub fn guest_socket(&self) -> Option<NulTerminated> {
        if !cfg!(feature = "incus") {
            return None;
        }
        let sockets = [wisp_core::provider::incus::SOCKET, wisp_core::provider::incus::LXD_SOCKET];
        sockets.into_iter().find(|socket| self.stat_followed(socket.as_bytes()).is_some()).and_then(|socket| self.path(socket.as_bytes()).ok())
    }
}

/// `path: larger than N bytes`: a file past the buffer it is read into.
pub fn too_large(path: ShownUnder<'_>, limit: usize) -> Message {
    msg!("{path}: larger than {limit} bytes", limit = Decimal(limit as u64))
}
