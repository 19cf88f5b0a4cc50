//! tiny-cloud's `set_default_interfaces`: when the image has no
//! `/etc/network/interfaces`, one with loopback and DHCP on the first ethernet interface
//! (`eth*`, the lowest ifindex), so ifupdown brings the network up at the next boot.

use core::fmt::Write;

use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::system_files::call_failed;
use crate::text::Plain;

const INTERFACES: &[u8] = b"/etc/network/interfaces";

/// Longest interface name kept (IFNAMSIZ).
pub const NAME_LIMIT: usize = 16;

pub type InterfaceName = heapless::String<NAME_LIMIT>;

/// The first ethernet interface among those seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FirstEthernet {
    best: Option<(u32, InterfaceName)>,
}

impl FirstEthernet {
    /// Considers the interface `name` (from /sys/class/net); `ifindex` is asked only of
    /// an ethernet one (unknown: last). On a tie the first seen stays.
    #[inline]
    pub fn consider(&mut self, name: &[u8], ifindex: impl FnOnce(&str) -> Option<u32>) {
        let Some(name) = core::str::from_utf8(name).ok().and_then(|name| InterfaceName::try_from(name).ok()) else { return };
        if !name.starts_with("eth") {
            return;
        }
        let index = ifindex(&name).unwrap_or(u32::MAX);
        if self.best.as_ref().is_none_or(|(best, _)| index < *best) {
            self.best = Some((index, name));
        }
    }

    pub fn name(&self) -> Option<&str> {
        self.best.as_ref().map(|(_, name)| name.as_str())
    }
}

/// Room for the file's text.
pub type InterfacesFile = heapless::String<256>;

/// The file's text into `text`: loopback, and DHCP on `first` when there is one.
#[inline]
pub fn interfaces_file(first: Option<&str>, text: &mut InterfacesFile) {
    let _ = text.push_str("auto lo\niface lo inet loopback\n\n");
    if let Some(name) = first {
        let _ = write!(text, "auto {name}\niface {name}\n\tuse dhcp\n\n", name = Plain(name));
    }
}

/// The action: `/etc/network/interfaces` written unless there is one, its interface the
/// first ethernet one that `sys`'s `/sys/class/net` lists (a second host, so that its
/// listing can read each interface's ifindex from `host`). A note of what it wrote.
#[inline(never)]
pub fn set<H: Files + Messages>(host: &mut H, sys: &mut impl Files) -> Result<H::Text, H::Text> {
    host.create_dir(b"/etc/network", 0o755).map_err(|e| host.path_error(b"/etc/network", e))?;
    if host.metadata(INTERFACES).map_err(|e| call_failed(host, INTERFACES, e))?.is_some() {
        return Ok(host.text(format_args!("already set up")));
    }
    let mut first = FirstEthernet::default();
    // No /sys/class/net (or one that cannot be listed) is no ethernet interface.
    let _ = sys.list(b"/sys/class/net", &mut |name| {
        first.consider(name, |name| {
            let mut path = [0u8; 64];
            let path = crate::system_files::joined(&mut path, &[b"/sys/class/net/", name.as_bytes(), b"/ifindex"]);
            let mut text = [0u8; 16];
            let len = host.read(path, &mut text).ok().flatten()?;
            u32::try_from(crate::text::decimal(text[..len].trim_ascii_end(), 10)?).ok()
        })
    });
    let mut text = InterfacesFile::new();
    interfaces_file(first.name(), &mut text);
    host.write(INTERFACES, text.as_bytes(), 0o644, None).map_err(|e| call_failed(host, INTERFACES, e))?;
    Ok(match first.name() {
        Some(name) => host.text(format_args!("lo and {name} (dhcp)", name = Plain(name))),
        None => host.text(format_args!("lo only: no eth* interface")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowest_ethernet_ifindex_wins() {
        let mut first = FirstEthernet::default();
        let index = |name: &str| match name {
            "eth1" => Some(3),
            "eth0" => Some(2),
            _ => None,
        };
        for name in ["lo", "eth1", "wlan0", "eth0", "ethX", &"e".repeat(20)] {
            first.consider(name.as_bytes(), index);
        }
        assert_eq!(first.name(), Some("eth0"));
        // An unknown ifindex comes last, and the first seen stays on a tie.
        let mut first = FirstEthernet::default();
        first.consider(b"eth7", |_| None);
        first.consider(b"eth8", |_| None);
        assert_eq!(first.name(), Some("eth7"));
        first.consider(b"lo", |_| unreachable!());
        assert_eq!(FirstEthernet::default().name(), None);
    }

    #[test]
    fn the_file() {
        let file = |first| {
            let mut text = InterfacesFile::new();
            interfaces_file(first, &mut text);
            text
        };
        assert_eq!(file(None), "auto lo\niface lo inet loopback\n\n");
        assert_eq!(file(Some("eth0")), "auto lo\niface lo inet loopback\n\nauto eth0\niface eth0\n\tuse dhcp\n\n");
    }

    use crate::host::memory::{MemoryHost, MemorySystem};

    /// An image without /etc/network/interfaces whose /sys lists `eth0` (ifindex 3),
    /// `eth1` (2) and `lo`: the listing (by name) and the lowest ifindex disagree.
    fn image() -> (MemorySystem, MemoryHost) {
        let system = MemorySystem::new(MemoryHost::new()).with_file("/sys/class/net/eth0/ifindex", "3\n").with_file("/sys/class/net/eth1/ifindex", "2\n");
        let sys = MemoryHost::new().with_file("/sys/class/net/eth0", b"").with_file("/sys/class/net/eth1", b"").with_file("/sys/class/net/lo", b"");
        (system, sys)
    }

    #[test]
    fn the_file_is_written_for_the_lowest_ifindex_and_only_once() {
        let (mut system, mut sys) = image();
        assert_eq!(set(&mut system, &mut sys).unwrap(), "lo and eth1 (dhcp)");
        let written = &system.host.files[&b"/etc/network/interfaces"[..]];
        assert_eq!(written.contents, b"auto lo\niface lo inet loopback\n\nauto eth1\niface eth1\n\tuse dhcp\n\n");
        assert_eq!(written.meta.mode, 0o644);
        // One there already, of the image's or ours, is left as it is.
        system.host.files.get_mut(&b"/etc/network/interfaces"[..]).unwrap().contents = b"mine".to_vec();
        assert_eq!(set(&mut system, &mut sys).unwrap(), "already set up");
        assert_eq!(system.host.files[&b"/etc/network/interfaces"[..]].contents, b"mine");
    }

    #[test]
    fn without_an_ethernet_interface_only_loopback() {
        let mut system = MemorySystem::new(MemoryHost::new());
        assert_eq!(set(&mut system, &mut MemoryHost::new()).unwrap(), "lo only: no eth* interface");
        assert_eq!(system.host.files[&b"/etc/network/interfaces"[..]].contents, b"auto lo\niface lo inet loopback\n\n");
    }
}
