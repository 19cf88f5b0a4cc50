//! Which cloud this is, from the DMI strings the firmware gives (/sys/class/dmi/id), with
//! no network probe: a wrong guess would cost a boot's worth of timeouts.

use crate::config::Cloud;

/// The DMI files wisp reads, each already stripped of its trailing newline; an
/// unreadable file is empty.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dmi<'a> {
    pub sys_vendor: &'a [u8],
    pub product_name: &'a [u8],
    pub product_uuid: &'a [u8],
    pub chassis_asset_tag: &'a [u8],
}

impl Dmi<'_> {
    /// The files the fields are read from, in field order.
    pub const PATHS: [&'static str; 4] = [
        "/sys/class/dmi/id/sys_vendor",
        "/sys/class/dmi/id/product_name",
        "/sys/class/dmi/id/product_uuid",
        "/sys/class/dmi/id/chassis_asset_tag",
    ];
}

const AZURE_ASSET_TAG: &[u8] = b"7783-7084-3265-9085-8269-3286-77";

/// The clouds known by their `sys_vendor` alone. A table rather than a `match`: byte-string
/// patterns compile to a compare and branch per byte.
const VENDORS: [(&[u8], Cloud); 4] =
    [(b"Hetzner", Cloud::Hetzner), (b"DigitalOcean", Cloud::Digitalocean), (b"Scaleway", Cloud::Scaleway), (b"Vultr", Cloud::Vultr)];

pub fn detect(dmi: &Dmi<'_>) -> Option<Cloud> {
    if <[u8]>::trim_ascii_end(dmi.sys_vendor) == b"Amazon EC2" || is_ec2_uuid(<[u8]>::trim_ascii_end(dmi.product_uuid)) {
        Some(Cloud::Aws)
    } else if <[u8]>::trim_ascii_end(dmi.chassis_asset_tag) == AZURE_ASSET_TAG {
        Some(Cloud::Azure)
    } else if <[u8]>::trim_ascii_end(dmi.product_name) == b"Google Compute Engine" {
        Some(Cloud::Gcp)
    } else if <[u8]>::trim_ascii_end(dmi.chassis_asset_tag) == b"OracleCloud.com" {
        Some(Cloud::Oci)
    } else {
        let vendor = <[u8]>::trim_ascii_end(dmi.sys_vendor);
        VENDORS.iter().find(|(name, _)| *name == vendor).map(|&(_, cloud)| cloud)
    }
}

/// OpenStack, from DMI. Checked after the local seeds: an OpenStack instance with a config
/// drive reads the drive rather than the network.
pub fn is_openstack(dmi: &Dmi<'_>) -> bool {
    [&b"OpenStack Nova"[..], b"OpenStack Compute"].contains(&dmi.product_name.trim_ascii_end())
}

/// Xen-era EC2 instances lack "Amazon EC2" in sys_vendor but their UUID starts with
/// "ec2"; some firmware prints the first field byte-swapped (`45E12AEC-...` for
/// `EC2AE145-...`), which puts "ec" at offset 6 and the "2" at offset 4.
fn is_ec2_uuid(uuid: &[u8]) -> bool {
    let lower = |i: usize| uuid.get(i).map(u8::to_ascii_lowercase);
    let straight = lower(0) == Some(b'e') && lower(1) == Some(b'c') && lower(2) == Some(b'2');
    let swapped = lower(6) == Some(b'e') && lower(7) == Some(b'c') && lower(4) == Some(b'2');
    uuid.len() == 36 && (straight || swapped)
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cloud() {
        let aws = Dmi { sys_vendor: b"Amazon EC2\n", ..Dmi::default() };
        assert_eq!(detect(&aws), Some(Cloud::Aws));
        let xen = Dmi { product_uuid: b"EC2E1916-9099-7CAF-FD21-012345678902", ..Dmi::default() };
        assert_eq!(detect(&xen), Some(Cloud::Aws));
        let swapped = Dmi { product_uuid: b"45e12aec-dcd1-b213-94ed-012345678abc\n", ..Dmi::default() };
        assert_eq!(detect(&swapped), Some(Cloud::Aws));
        let azure = Dmi { chassis_asset_tag: b"7783-7084-3265-9085-8269-3286-77\n", ..Dmi::default() };
        assert_eq!(detect(&azure), Some(Cloud::Azure));
        let gcp = Dmi { product_name: b"Google Compute Engine\n", ..Dmi::default() };
        assert_eq!(detect(&gcp), Some(Cloud::Gcp));
        let oci = Dmi { chassis_asset_tag: b"OracleCloud.com\n", ..Dmi::default() };
        assert_eq!(detect(&oci), Some(Cloud::Oci));
        let vendor = |sys_vendor| detect(&Dmi { sys_vendor, ..Dmi::default() });
        assert_eq!(vendor(b"Hetzner\n"), Some(Cloud::Hetzner));
        assert_eq!(vendor(b"DigitalOcean\n"), Some(Cloud::Digitalocean));
        assert_eq!(vendor(b"Scaleway\n"), Some(Cloud::Scaleway));
        assert_eq!(vendor(b"Vultr\n"), Some(Cloud::Vultr));
        assert_eq!(vendor(b"Hetzner Online GmbH\n"), None);
    }

    #[test]
    fn openstack() {
        assert!(is_openstack(&Dmi { product_name: b"OpenStack Nova\n", ..Dmi::default() }));
        assert!(is_openstack(&Dmi { product_name: b"OpenStack Compute", ..Dmi::default() }));
        assert!(!is_openstack(&Dmi { product_name: b"OpenStack", ..Dmi::default() }));
        assert_eq!(detect(&Dmi { product_name: b"OpenStack Nova\n", ..Dmi::default() }), None);
    }

    #[test]
    fn none() {
        assert_eq!(detect(&Dmi::default()), None);
        let qemu = Dmi {
            sys_vendor: b"QEMU\n",
            product_name: b"Standard PC (Q35 + ICH9, 2009)\n",
            product_uuid: b"5a3f0c2e-1111-2222-3333-444455556666\n",
            chassis_asset_tag: b"\n",
        };
        assert_eq!(detect(&qemu), None);
        // "ec2" somewhere else, or a short value, is not EC2.
        let short = Dmi { product_uuid: b"ec2", ..Dmi::default() };
        assert_eq!(detect(&short), None);
        let vendor_prefix = Dmi { sys_vendor: b"Amazon EC2 Lookalike", ..Dmi::default() };
        assert_eq!(detect(&vendor_prefix), None);
    }
}
