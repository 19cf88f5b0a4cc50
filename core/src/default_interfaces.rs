//! tiny-cloud's `set_default_interfaces`: when the image has no
//! `/etc/network/interfaces`, one with loopback and DHCP on the first ethernet interface
//! (`eth*`, the lowest ifindex), so ifupdown brings the network up at the next boot.

use core::fmt::Write;

use crate::text::Plain;

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
}
