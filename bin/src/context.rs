//! What every command works with: the root every path is taken under, the configuration,
//! the cloud, and the log.

use wisp_core::cli::Invocation;
use wisp_core::config::{self, Cloud, Config};
use wisp_core::detect::{self, Dmi};
use wisp_core::retry::Timeouts;
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::fs::{self, Dir, ReadError};
use wisp_os_linux::process::StartInfo;

use crate::output::{self, Line, Log, Os, Shown};

/// The configuration files wisp reads, first found wins: its own, then tiny-cloud 3.x's
/// and 2.x's, so an image switching from tiny-cloud keeps its settings.
pub const CONFIG_FILES: [&str; 3] = ["/etc/wisp.conf", "/etc/tiny-cloud.conf", "/etc/conf.d/tiny-cloud"];
/// Largest configuration file.
const CONFIG_LIMIT: usize = 16 * 1024;
/// Where the detected cloud is kept, under TINY_CLOUD_VAR.
const AUTODETECT_FILE: &[u8] = b".autodetect";

pub struct Context<'a> {
    pub start: &'a StartInfo,
    /// `--root` without trailing slashes: empty for the real root.
    root: &'a [u8],
    pub config: Config,
    /// Which file the configuration came from, for messages.
    pub config_file: CPath,
    cloud_override: Option<&'a [u8]>,
    pub timeouts: Timeouts,
    pub log: Log,
}

impl<'a> Context<'a> {
    pub fn load(start: &'a StartInfo, invocation: &Invocation<'a>) -> Result<Context<'a>, Line> {
        let mut root = invocation.root.unwrap_or(b"");
        while let [rest @ .., b'/'] = root {
            root = rest;
        }
        let mut context = Context {
            start,
            root,
            config: Config::default(),
            config_file: CPath::new(),
            cloud_override: invocation.cloud,
            timeouts: Timeouts::default(),
            log: Log::new(),
        };
        context.read_config(invocation.config)?;
        let c = &context.config;
        context.timeouts = Timeouts {
            connect_ms: c.http_connect_ms,
            read_ms: c.http_read_ms,
            total_ms: c.http_total_ms,
            backoff_initial_ms: c.http_backoff_ms,
            backoff_max_ms: c.http_backoff_max_ms,
        };
        Ok(context)
    }

    /// `--config FILE` is taken as given; the default files are looked for under the root.
    fn read_config(&mut self, explicit: Option<&[u8]>) -> Result<(), Line> {
        let mut text = [0u8; CONFIG_LIMIT];
        let mut found = None;
        if let Some(file) = explicit {
            self.config_file = CPath::from_parts(&[file]).map_err(|e| msg!("--config: {e}"))?;
            match fs::read_file(self.config_file.as_cstr(), &mut text) {
                Ok(Some(len)) => found = Some(len),
                Ok(None) => return Err(msg!("{}: no such file", Shown(file))),
                Err(e) => return Err(read_error(self.config_file.as_bytes(), e)),
            }
        } else {
            for file in CONFIG_FILES {
                let path = self.path(file.as_bytes())?;
                match fs::read_file(path.as_cstr(), &mut text) {
                    Ok(Some(len)) => {
                        self.config_file = path;
                        found = Some(len);
                        break;
                    }
                    Ok(None) => {}
                    Err(e) => return Err(read_error(path.as_bytes(), e)),
                }
            }
        }
        let Some(len) = found else { return Ok(()) };
        let file = Shown(self.config_file.as_bytes());
        let mut on_warning = |warning: config::Warning| output::error(format_args!("{file}:{warning}"));
        config::parse(&text[..len], &mut self.config, &mut on_warning).map_err(|e| msg!("{file}:{e}"))
    }

    /// `absolute` under the root.
    pub fn path(&self, absolute: &[u8]) -> Result<CPath, Line> {
        CPath::from_parts(&[self.root, absolute]).map_err(|e| msg!("{}{}: {e}", Shown(self.root), Shown(absolute)))
    }

    pub fn open_dir(&self, absolute: &[u8]) -> Result<Dir, Line> {
        let path = self.path(absolute)?;
        Dir::open(path.as_cstr()).map_err(|e| crate::output::path_error(path.as_bytes(), e))
    }

    /// Opens the directory, creating it and its parents (mode 0755) if missing.
    pub fn create_dir(&self, absolute: &[u8]) -> Result<Dir, Line> {
        let path = self.path(absolute)?;
        match Dir::open(path.as_cstr()) {
            Ok(dir) => return Ok(dir),
            Err(wisp_os_linux::Errno::NOENT) => {}
            Err(e) => return Err(crate::output::path_error(path.as_bytes(), e)),
        }
        fs::create_dir_all(path.as_bytes(), 0o755).map_err(|e| crate::output::path_error(path.as_bytes(), e))?;
        self.open_dir(absolute)
    }

    /// The whole file, following symlinks; `Ok(None)` when it does not exist.
    pub fn read<'b>(&self, absolute: &[u8], buf: &'b mut [u8]) -> Result<Option<&'b [u8]>, Line> {
        let path = self.path(absolute)?;
        match fs::read_file(path.as_cstr(), buf) {
            Ok(Some(len)) => Ok(Some(&buf[..len])),
            Ok(None) => Ok(None),
            Err(e) => Err(read_error(path.as_bytes(), e)),
        }
    }

    pub fn var_dir(&self) -> Result<Dir, Line> {
        self.create_dir(self.config.var_dir.as_bytes())
    }

    pub fn logs_dir(&self) -> Result<Dir, Line> {
        self.create_dir(self.config.logs_dir.as_bytes())
    }

    /// Starts the action log in TINY_CLOUD_LOGS.
    pub fn open_log(&mut self) {
        match self.logs_dir() {
            Ok(dir) => self.log.open(&dir),
            Err(e) => output::error(format_args!("no log file: {e}")),
        }
    }

    /// `--cloud`, else `CLOUD`; `auto` is resolved from DMI once and remembered in
    /// `$TINY_CLOUD_VAR/.autodetect`.
    pub fn cloud(&self) -> Result<Cloud, Line> {
        let configured = match self.cloud_override {
            Some(name) => Cloud::from_name(name).ok_or_else(|| msg!("--cloud {}: {}", Shown(name), config::CLOUD_NAMES_MESSAGE))?,
            None => self.config.cloud,
        };
        if configured != Cloud::Auto {
            return Ok(configured);
        }
        let var = self.var_dir()?;
        let mut cached = [0u8; 64];
        if let Ok(Some(len)) = var.read(AUTODETECT_FILE, &mut cached) {
            let line = cached[..len].strip_suffix(b"\n").unwrap_or(&cached[..len]);
            if let Some(cloud) = Cloud::from_name(line.strip_prefix(b"CLOUD=").unwrap_or(line)) {
                if cloud != Cloud::Auto {
                    return Ok(cloud);
                }
            }
        }
        let cloud = self.detect_cloud()?;
        let mut line = heapless::String::<64>::new();
        let _ = core::fmt::write(&mut line, format_args!("CLOUD={}\n", cloud.name()));
        var.write_atomic(AUTODETECT_FILE, line.as_bytes(), 0o644, None)
            .map_err(|e| msg!("cannot save {}: {}", Shown(AUTODETECT_FILE), Os(e)))?;
        Ok(cloud)
    }

    /// Incus's guest API socket, else LXD's, when the instance has one.
    pub fn guest_socket(&self) -> Option<CPath> {
        [wisp_core::provider::incus::SOCKET, wisp_core::provider::incus::LXD_SOCKET]
            .into_iter()
            .filter_map(|socket| self.path(socket.as_bytes()).ok())
            .find(|path| matches!(fs::metadata(path.as_cstr()), Ok(Some(_))))
    }

    fn detect_cloud(&self) -> Result<Cloud, Line> {
        let mut buffers = [[0u8; 128]; 4];
        let mut values: [&[u8]; 4] = [b""; 4];
        for ((file, buf), value) in Dmi::FILES.iter().zip(buffers.iter_mut()).zip(values.iter_mut()) {
            let mut path = heapless::String::<64>::new();
            let _ = core::fmt::write(&mut path, format_args!("/sys/class/dmi/id/{file}"));
            // Missing or unreadable DMI files (product_uuid is root-only) count as empty.
            if let Ok(Some(text)) = self.read(path.as_bytes(), buf) {
                *value = text;
            }
        }
        let dmi = Dmi { sys_vendor: values[0], product_name: values[1], product_uuid: values[2], chassis_asset_tag: values[3] };
        let openstack = || detect::is_openstack(&dmi).then_some(Cloud::Openstack);
        let incus = || self.guest_socket().map(|_| Cloud::Incus);
        match detect::detect(&dmi).or_else(incus).or_else(|| crate::seed::detect(self)).or_else(openstack) {
            Some(cloud) => Ok(cloud),
            None => Err(msg!(
                "CLOUD=auto found no known cloud in /sys/class/dmi/id: set CLOUD in {}",
                self.config_file_for_messages()
            )),
        }
    }

    fn config_file_for_messages(&self) -> Shown<'_> {
        if self.config_file.as_bytes().is_empty() {
            Shown(CONFIG_FILES[0].as_bytes())
        } else {
            Shown(self.config_file.as_bytes())
        }
    }
}

fn read_error(path: &[u8], e: ReadError) -> Line {
    match e {
        ReadError::Io(e) => crate::output::path_error(path, e),
        ReadError::TooLarge { limit } => msg!("{}: larger than {limit} bytes", Shown(path)),
    }
}
