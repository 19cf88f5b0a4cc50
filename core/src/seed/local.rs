//! The local clouds' seeds, as cloud-init and tiny-cloud read them: which NoCloud seed
//! wins (the `ds=nocloud` tokens' `s=`, a seed directory, a filesystem labelled
//! `cidata`), how NoCloud's meta-data and ConfigDrive's meta_data.json fill the metadata
//! store, and which of a seed's files are kept beside the user-data. Where a seed is and
//! how its bytes are read is the host's (`SeedMedia`).

use crate::config::Cloud;
use crate::host::files::Files;
use crate::host::seed_media::SeedMedia;
use crate::http;
use crate::provider::metadata::Metadata;
use crate::provider::{azure, openstack, Item};
use crate::seed::nocloud::{self, Tokens};
use crate::state_files::{META_DATA, NETWORK_CONFIG, VENDOR_DATA};
use crate::text::{Decimal, Plain};

/// The seed directories NoCloud looks in, as cloud-init and tiny-cloud do.
pub const SEED_DIRS: [&str; 2] = ["/var/lib/cloud/seed/nocloud", "/var/lib/cloud/seed/nocloud-net"];
/// Largest meta-data or network document read.
pub const DOCUMENT_LIMIT: usize = 64 * 1024;
/// Largest kernel command line or DMI serial read for the tokens.
pub const TOKENS_LIMIT: usize = 4096;

/// The `ds=nocloud` tokens' text, from the kernel command line, else the DMI serial: its
/// length in `buf`.
#[inline(never)]
pub fn token_text<F: Files>(files: &mut F, buf: &mut [u8; TOKENS_LIMIT]) -> Option<usize> {
    for file in [&b"/proc/cmdline"[..], b"/sys/class/dmi/id/product_serial"] {
        if let Ok(Some(len)) = files.read(file, buf) {
            if nocloud::tokens(&buf[..len]).is_some() {
                return Some(len);
            }
        }
    }
    None
}

/// The local cloud whose seed is there, for `CLOUD=auto`: NoCloud's, else a filesystem
/// labelled `config-2`.
pub fn detect<H: SeedMedia, F: Files>(host: &mut H, files: &mut F) -> Option<Cloud> {
    if H::NOCLOUD && has_nocloud_seed(host, files) {
        return Some(Cloud::Nocloud);
    }
    if H::CONFIGDRIVE && host.labelled(b"config-2").is_some() {
        return Some(Cloud::Configdrive);
    }
    None
}

/// What a run reads locally before it asks a cloud's metadata service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeforeService {
    /// The NoCloud or ConfigDrive seed, whole (`load`): it is the metadata.
    Seed,
    /// Azure's provisioning CD (`load_azure_ovf`): custom data only it carries.
    AzureCd,
}

/// The local source `cloud` reads first, if any: the one rule `wisp imds` and the phases
/// follow.
pub fn before_service(cloud: Cloud) -> Option<BeforeService> {
    match cloud {
        Cloud::Nocloud | Cloud::Configdrive => Some(BeforeService::Seed),
        Cloud::Azure => Some(BeforeService::AzureCd),
        _ => None,
    }
}

/// Fills `metadata` from the seed of `cloud`, keeping its extras when `keep`; returns
/// where the seed was found. `document`: room for the seed's documents, read one at a
/// time (`DOCUMENT_LIMIT` bytes: the host maps it, as a stack buffer would be probed whole).
pub fn load<H: SeedMedia, F: Files>(host: &mut H, files: &mut F, cloud: Cloud, metadata: &mut Metadata<'_>, keep: bool, document: &mut [u8]) -> Result<H::Text, H::Text> {
    match cloud {
        Cloud::Configdrive if H::CONFIGDRIVE => load_configdrive(host, metadata, keep, document),
        Cloud::Nocloud if H::NOCLOUD => load_nocloud(host, files, metadata, keep, document),
        other => Err(host.text(format_args!("{} has no local seed", Plain(other.name())))),
    }
}

/// Whether a NoCloud seed is there, for `CLOUD=auto`: tokens, a seed directory, or a
/// filesystem labelled `cidata`.
pub fn has_nocloud_seed<H: SeedMedia, F: Files>(host: &mut H, files: &mut F) -> bool {
    token_text(files, &mut [0u8; TOKENS_LIMIT]).is_some()
        || SEED_DIRS.iter().any(|dir| host.is_directory(dir.as_bytes()))
        || host.labelled(b"cidata").is_some()
}

/// The NoCloud seed that wins: the tokens' `s=` (an http:// URL, a path or file://), else
/// the first seed directory there, else the filesystem labelled `cidata`.
#[inline(never)]
pub fn nocloud_seed<H: SeedMedia>(host: &mut H, seed_from: Option<&[u8]>) -> Result<H::Seed, H::Text> {
    if let Some(seed) = seed_from {
        let shown = crate::text::Shown(seed);
        if seed.starts_with(b"http") {
            let text = core::str::from_utf8(seed).map_err(|_| host.text(format_args!("ds=nocloud;s=: the URL is not UTF-8")))?;
            let url = http::parse_url(text).map_err(|e| host.text(format_args!("ds=nocloud;s={shown}: {e}")))?;
            return host.url(&url, seed);
        }
        let path = seed.strip_prefix(b"file://").unwrap_or(seed);
        if path.first() != Some(&b'/') {
            return Err(host.text(format_args!("ds=nocloud;s={shown}: a seed is a path, file:// or http://")));
        }
        return host.directory(path.strip_suffix(b"/").unwrap_or(path));
    }
    for dir in SEED_DIRS {
        if host.is_directory(dir.as_bytes()) {
            return host.directory(dir.as_bytes());
        }
    }
    host.labelled(b"cidata").ok_or_else(|| host.text(format_args!("no NoCloud seed: no ds=nocloud token, no seed directory, no filesystem labelled cidata")))
}

/// NoCloud: the winning seed's meta-data fills the store (the tokens' `h=` and `i=` over
/// it), then its user-data; with `keep`, its meta-data, vendor-data and network-config
/// are kept. Returns where the seed was.
pub fn load_nocloud<H: SeedMedia, F: Files>(host: &mut H, files: &mut F, metadata: &mut Metadata<'_>, keep: bool, document: &mut [u8]) -> Result<H::Text, H::Text> {
    let mut token_buf = [0u8; TOKENS_LIMIT];
    let token_len = token_text(files, &mut token_buf);
    let tokens = token_len.and_then(|len| nocloud::tokens(&token_buf[..len])).unwrap_or_default();
    let mut seed = nocloud_seed(host, tokens.seed_from)?;
    fill_nocloud(host, &mut seed, document, metadata, &tokens)?;
    let len = host.read(&mut seed, &[b"user-data"], metadata.buffer(Item::UserData))?;
    metadata.set_len(Item::UserData, len);
    if keep {
        let files: [(&[&[u8]], &[u8]); 3] =
            [(&[b"meta-data"], META_DATA), (&[b"vendor-data"], VENDOR_DATA), (&[b"network-config"], NETWORK_CONFIG)];
        keep_extras(host, &mut seed, &files, document)?;
    }
    Ok(host.describe(&seed))
}

/// meta-data's `instance-id` (`nocloud` when it has none), `local-hostname` (else
/// `hostname`) for both names, and `public-keys`; then the tokens' overrides.
fn fill_nocloud<H: SeedMedia>(host: &mut H, seed: &mut H::Seed, document: &mut [u8], metadata: &mut Metadata<'_>, tokens: &Tokens<'_>) -> Result<(), H::Text> {
    let len = host.read(seed, &[b"meta-data"], document)?.ok_or_else(|| host.text(format_args!("{}: no meta-data", host.describe(seed))))?;
    let meta = &document[..len];
    let mut fill = |item: Item, keys: &[&str]| -> Result<(), H::Text> {
        for key in keys {
            if let Some(len) = nocloud::value(meta, key, metadata.buffer(item)).map_err(|e| host.text(format_args!("{e}")))? {
                metadata.set_len(item, Some(len));
                return Ok(());
            }
        }
        metadata.set_len(item, None);
        Ok(())
    };
    fill(Item::InstanceId, &["instance-id"])?;
    fill(Item::Hostname, &["local-hostname", "hostname"])?;
    fill(Item::LocalHostname, &["local-hostname", "hostname"])?;
    fill(Item::SshKeys, &["public-keys"])?;
    let said = |e| host.text(format_args!("{e}"));
    if metadata.get(Item::InstanceId).is_none() {
        metadata.set(Item::InstanceId, b"nocloud").map_err(said)?;
    }
    if let Some(hostname) = tokens.hostname {
        metadata.set(Item::Hostname, hostname).map_err(said)?;
    }
    if let Some(id) = tokens.instance_id {
        metadata.set(Item::InstanceId, id).map_err(said)?;
    }
    Ok(())
}

/// ConfigDrive: the filesystem labelled `config-2`; its `openstack/<version>/`, `latest`
/// or the newest dated version there, gives meta_data.json and user_data; with `keep`,
/// its meta_data.json, vendor_data.json and network_data.json are kept.
pub fn load_configdrive<H: SeedMedia>(host: &mut H, metadata: &mut Metadata<'_>, keep: bool, document: &mut [u8]) -> Result<H::Text, H::Text> {
    let mut seed = host.labelled(b"config-2").ok_or_else(|| host.text(format_args!("no filesystem labelled config-2")))?;
    let version = fill_configdrive(host, &mut seed, document, metadata)?;
    let v = version.as_bytes();
    let len = host.read(&mut seed, &[b"openstack", v, b"user_data"], metadata.buffer(Item::UserData))?;
    metadata.set_len(Item::UserData, len);
    if keep {
        let files: [(&[&[u8]], &[u8]); 3] = [
            (&[b"openstack", v, b"meta_data.json"], META_DATA),
            (&[b"openstack", v, b"vendor_data.json"], VENDOR_DATA),
            (&[b"openstack", v, b"network_data.json"], NETWORK_CONFIG),
        ];
        keep_extras(host, &mut seed, &files, document)?;
    }
    Ok(host.describe(&seed))
}

fn fill_configdrive<H: SeedMedia>(host: &mut H, seed: &mut H::Seed, document: &mut [u8], metadata: &mut Metadata<'_>) -> Result<&'static str, H::Text> {
    let mut found = None;
    for version in openstack::VERSIONS {
        if let Some(len) = host.read(seed, &[b"openstack", version.as_bytes(), b"meta_data.json"], document)? {
            found = Some((version, len));
            break;
        }
    }
    let (version, len) = found.ok_or_else(|| host.text(format_args!("{}: no openstack/<version>/meta_data.json", host.describe(seed))))?;
    let meta = &document[..len];
    for item in [Item::InstanceId, Item::Hostname, Item::LocalHostname, Item::SshKeys] {
        let found = openstack::extract(meta, item, metadata.buffer(item)).map_err(|e| host.text(format_args!("meta_data.json: {e}")))?;
        metadata.set_len(item, found);
    }
    Ok(version)
}

/// Largest ovf-env.xml read (its custom data is up to 64 KiB, base64 encoded).
pub const OVF_LIMIT: usize = 160 * 1024;

/// Azure's provisioning CD, the block device holding `ovf-env.xml`: its custom data (which
/// only the CD carries, and which wins over IMDS `userData`, as in cloud-init), a
/// non-empty host name and its SSH keys fill the store; IMDS gives the rest. `room` (of
/// `OVF_LIMIT` bytes) holds the document. Returns what was found where, if anything.
pub fn load_azure_ovf<H: SeedMedia>(host: &mut H, metadata: &mut Metadata<'_>, room: &mut [u8]) -> Result<Option<H::Text>, H::Text> {
    let Some(mut seed) = host.holding(b"ovf-env.xml") else { return Ok(None) };
    let len = host.read(&mut seed, &[b"ovf-env.xml"], room)?.unwrap_or(0);
    let xml = &room[..len];
    let found = azure::ovf_custom_data(xml, metadata.buffer(Item::UserData)).map_err(|e| host.text(format_args!("ovf-env.xml CustomData: {e}")))?;
    if let Some(custom) = found {
        metadata.set_len(Item::UserData, Some(custom));
    }
    if let Some(hostname) = azure::ovf_element(xml, b"HostName").filter(|name| !name.is_empty()) {
        metadata.set(Item::Hostname, hostname).map_err(|e| host.text(format_args!("ovf-env.xml HostName: {e}")))?;
    }
    let keys = azure::ovf_keys(xml, metadata.buffer(Item::SshKeys)).map_err(|full| host.text(format_args!("ovf-env.xml keys larger than {} bytes", Decimal(full.limit as u64))))?;
    if keys > 0 {
        metadata.set_len(Item::SshKeys, Some(keys));
    }
    let (custom, keys) = (Decimal(found.unwrap_or(0) as u64), Decimal(keys as u64));
    Ok(Some(host.text(format_args!("ovf-env.xml on {}: {custom} bytes of custom data, {keys} bytes of keys", host.describe(&seed)))))
}

/// The seed's meta-data, vendor-data and network configuration, kept beside user-data for
/// later use (0600: vendor-data can hold secrets too); rewritten only when they change,
/// so a new instance's seed replaces the old one's.
#[inline(never)]
fn keep_extras<H: SeedMedia>(host: &mut H, seed: &mut H::Seed, files: &[(&[&[u8]], &[u8]); 3], buf: &mut [u8]) -> Result<(), H::Text> {
    for &(path, name) in files {
        let Some(len) = host.read(seed, path, buf)? else { continue };
        if !host.kept(name, &buf[..len]) {
            host.keep(name, &buf[..len])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySeeds};
    use crate::provider::metadata::METADATA_SIZE;

    const META: &str = "instance-id: i-seed\nlocal-hostname: alpha\nhostname: beta\npublic-keys:\n  - ssh-ed25519 AAAA one\n";

    fn seeds() -> MemorySeeds {
        MemorySeeds::default()
            .with("dir:/var/lib/cloud/seed/nocloud-net", "meta-data", "instance-id: i-net\n")
            .with("label:CIDATA", "meta-data", "instance-id: i-cidata\n")
    }

    fn cmdline(text: &str) -> MemoryHost {
        MemoryHost::new().with_file("/proc/cmdline", text.as_bytes())
    }

    /// Where the winning seed is, or the error.
    fn chosen(seeds: &mut MemorySeeds, seed_from: Option<&str>) -> std::string::String {
        nocloud_seed(seeds, seed_from.map(str::as_bytes)).unwrap_or_else(|e| e)
    }

    #[test]
    fn the_tokens_seed_wins_then_the_directories_in_order_then_cidata() {
        let mut all = seeds().with("dir:/var/lib/cloud/seed/nocloud", "meta-data", "");
        assert_eq!(chosen(&mut all, Some("http://10.0.0.2:8000/seed/")), "url:10.0.0.2:8000/seed/");
        assert_eq!(chosen(&mut all, Some("file:///srv/seed/")), "/srv/seed: errno 2");
        assert_eq!(chosen(&mut all, Some("/var/lib/cloud/seed/nocloud-net/")), "dir:/var/lib/cloud/seed/nocloud-net");
        assert_eq!(chosen(&mut all, None), "dir:/var/lib/cloud/seed/nocloud");
        assert_eq!(chosen(&mut seeds(), None), "dir:/var/lib/cloud/seed/nocloud-net");
        let mut label_only = MemorySeeds::default().with("label:CIDATA", "meta-data", "");
        assert_eq!(chosen(&mut label_only, None), "label:CIDATA");
        assert_eq!(chosen(&mut MemorySeeds::default(), None), "no NoCloud seed: no ds=nocloud token, no seed directory, no filesystem labelled cidata");
    }

    #[test]
    fn a_bad_seedfrom_is_an_error_naming_it() {
        let mut all = seeds();
        assert_eq!(chosen(&mut all, Some("seed/dir")), "ds=nocloud;s=seed/dir: a seed is a path, file:// or http://");
        assert!(chosen(&mut all, Some("https://10.0.0.2/")).starts_with("ds=nocloud;s=https://10.0.0.2/: https URLs are not supported"));
        assert!(chosen(&mut all, Some("http://seed.example/")).contains("must be an IPv4 address"));
    }

    #[test]
    fn meta_data_fills_the_store_and_the_tokens_override_it() {
        let mut space = std::vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        let mut seeds = MemorySeeds::default().with("dir:/seed", "meta-data", META).with("dir:/seed", "user-data", "#cloud-config\n");
        let mut files = cmdline("console=ttyS0 ds=nocloud;s=/seed;h=gamma\n");
        assert_eq!(load_nocloud(&mut seeds, &mut files, &mut metadata, false, &mut [0u8; DOCUMENT_LIMIT]).unwrap(), "dir:/seed");
        assert_eq!(metadata.get(Item::InstanceId), Some(&b"i-seed"[..]));
        assert_eq!(metadata.get(Item::Hostname), Some(&b"gamma"[..]));
        assert_eq!(metadata.get(Item::LocalHostname), Some(&b"alpha"[..]));
        assert_eq!(metadata.get(Item::SshKeys), Some(&b"ssh-ed25519 AAAA one\n"[..]));
        assert_eq!(metadata.get(Item::UserData), Some(&b"#cloud-config\n"[..]));
        assert!(seeds.kept.is_empty());
        // No instance-id: `nocloud`, unless the tokens' i= says one; no user-data: absent.
        let mut seeds = MemorySeeds::default().with("dir:/seed", "meta-data", "hostname: beta\n");
        load_nocloud(&mut seeds, &mut cmdline("ds=nocloud;s=/seed\n"), &mut metadata, false, &mut [0u8; DOCUMENT_LIMIT]).unwrap();
        assert_eq!((metadata.get(Item::InstanceId), metadata.get(Item::LocalHostname)), (Some(&b"nocloud"[..]), Some(&b"beta"[..])));
        assert_eq!((metadata.get(Item::SshKeys), metadata.get(Item::UserData)), (None, None));
        load_nocloud(&mut seeds, &mut cmdline("ds=nocloud;s=/seed;i=i-token\n"), &mut metadata, false, &mut [0u8; DOCUMENT_LIMIT]).unwrap();
        assert_eq!(metadata.get(Item::InstanceId), Some(&b"i-token"[..]));
        let mut empty = MemorySeeds::default().with("dir:/seed", "user-data", "");
        assert_eq!(load_nocloud(&mut empty, &mut cmdline("ds=nocloud;s=/seed\n"), &mut metadata, false, &mut [0u8; DOCUMENT_LIMIT]).unwrap_err(), "dir:/seed: no meta-data");
    }

    #[test]
    fn the_dmi_serial_gives_the_tokens_when_the_command_line_has_none() {
        let mut files = cmdline("console=ttyS0\n").with_file("/sys/class/dmi/id/product_serial", b"ds=nocloud;s=/seed\n");
        let mut buf = [0u8; TOKENS_LIMIT];
        let len = token_text(&mut files, &mut buf).unwrap();
        assert_eq!(&buf[..len], b"ds=nocloud;s=/seed\n");
        assert!(has_nocloud_seed(&mut MemorySeeds::default(), &mut files));
        assert!(!has_nocloud_seed(&mut MemorySeeds::default(), &mut cmdline("console=ttyS0\n")));
        assert!(has_nocloud_seed(&mut MemorySeeds::default().with("label:cidata", "meta-data", ""), &mut MemoryHost::new()));
    }

    #[test]
    fn the_extras_are_kept_only_when_asked_and_rewritten_only_when_changed() {
        let mut space = std::vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        let mut seeds = MemorySeeds::default().with("dir:/seed", "meta-data", META).with("dir:/seed", "network-config", "version: 2\n");
        let mut files = cmdline("ds=nocloud;s=/seed\n");
        load_nocloud(&mut seeds, &mut files, &mut metadata, true, &mut [0u8; DOCUMENT_LIMIT]).unwrap();
        assert_eq!(seeds.kept.keys().collect::<std::vec::Vec<_>>(), [&b"meta-data".to_vec(), &b"network-config".to_vec()]);
        assert_eq!(seeds.writes, 2);
        load_nocloud(&mut seeds, &mut files, &mut metadata, true, &mut [0u8; DOCUMENT_LIMIT]).unwrap();
        assert_eq!(seeds.writes, 2);
    }

    #[test]
    fn configdrive_reads_the_newest_version_there() {
        let mut space = std::vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        let json = r#"{"uuid": "83679162-1378-4288-a2d4-70e13ec132aa", "hostname": "drive", "public_keys": {"k": "ssh-ed25519 AAAA k"}}"#;
        let mut seeds = MemorySeeds::default()
            .with("label:config-2", "openstack/2015-10-15/meta_data.json", json)
            .with("label:config-2", "openstack/2015-10-15/user_data", "#!/bin/sh\n")
            .with("label:config-2", "openstack/2015-10-15/network_data.json", "{}")
            .with("label:config-2", "openstack/2013-04-04/meta_data.json", "{}");
        assert_eq!(load_configdrive(&mut seeds, &mut metadata, true, &mut [0u8; DOCUMENT_LIMIT]).unwrap(), "label:config-2");
        assert_eq!(metadata.get(Item::InstanceId), Some(&b"83679162-1378-4288-a2d4-70e13ec132aa"[..]));
        assert_eq!(metadata.get(Item::LocalHostname), Some(&b"drive"[..]));
        assert_eq!(metadata.get(Item::UserData), Some(&b"#!/bin/sh\n"[..]));
        assert_eq!(seeds.kept.get(&b"network-config"[..]).map(std::vec::Vec::as_slice), Some(&b"{}"[..]));
        assert_eq!(seeds.kept.get(&b"meta-data"[..]).map(std::vec::Vec::as_slice), Some(json.as_bytes()));
        let mut no_version = MemorySeeds::default().with("label:CONFIG-2", "openstack/content/0000", "");
        assert_eq!(load_configdrive(&mut no_version, &mut metadata, false, &mut [0u8; DOCUMENT_LIMIT]).unwrap_err(), "label:CONFIG-2: no openstack/<version>/meta_data.json");
        assert_eq!(load_configdrive(&mut MemorySeeds::default(), &mut metadata, false, &mut [0u8; DOCUMENT_LIMIT]).unwrap_err(), "no filesystem labelled config-2");
    }

    const OVF: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:ns1="http://schemas.microsoft.com/windowsazure">
 <ns1:ProvisioningSection><ns1:LinuxProvisioningConfigurationSet>
  <ns1:HostName>azure-vm</ns1:HostName>
  <ns1:CustomData>I2Nsb3VkLWNvbmZpZwo=</ns1:CustomData>
  <ns1:SSH><ns1:PublicKeys><ns1:PublicKey><ns1:Fingerprint>F</ns1:Fingerprint><ns1:Path>/home/azureuser/.ssh/authorized_keys</ns1:Path><ns1:Value>ssh-ed25519 AAAA azure</ns1:Value></ns1:PublicKey></ns1:PublicKeys></ns1:SSH>
 </ns1:LinuxProvisioningConfigurationSet></ns1:ProvisioningSection>
</Environment>"#;

    #[test]
    fn only_the_seed_clouds_and_azure_read_something_before_the_service() {
        assert_eq!([Cloud::Nocloud, Cloud::Configdrive, Cloud::Azure].map(before_service), [Some(BeforeService::Seed), Some(BeforeService::Seed), Some(BeforeService::AzureCd)]);
        for cloud in [Cloud::Aws, Cloud::Gcp, Cloud::Oci, Cloud::Incus] {
            assert_eq!(before_service(cloud), None, "{}", cloud.name());
        }
    }

    #[test]
    fn azures_ovf_env_gives_custom_data_host_name_and_keys() {
        let mut space = std::vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        let mut room = std::vec![0u8; OVF_LIMIT];
        assert_eq!(load_azure_ovf(&mut MemorySeeds::default(), &mut metadata, &mut room), Ok(None));
        let mut seeds = MemorySeeds::default().with("label:", "ovf-env.xml", OVF);
        let said = load_azure_ovf(&mut seeds, &mut metadata, &mut room).unwrap().unwrap();
        assert_eq!(metadata.get(Item::UserData), Some(&b"#cloud-config\n"[..]));
        assert_eq!(metadata.get(Item::Hostname), Some(&b"azure-vm"[..]));
        assert_eq!(metadata.get(Item::SshKeys), Some(&b"ssh-ed25519 AAAA azure\n"[..]));
        assert_eq!(said, "ovf-env.xml on label:: 14 bytes of custom data, 23 bytes of keys");
        // No custom data and an empty host name: IMDS's values stay.
        let mut space = std::vec![0u8; METADATA_SIZE];
        let mut metadata = Metadata::new(&mut space);
        metadata.set(Item::Hostname, b"from-imds").unwrap();
        let bare = OVF.replace("azure-vm", "").replace("<ns1:CustomData>I2Nsb3VkLWNvbmZpZwo=</ns1:CustomData>", "");
        let mut seeds = MemorySeeds::default().with("label:", "ovf-env.xml", &bare);
        load_azure_ovf(&mut seeds, &mut metadata, &mut room).unwrap();
        assert_eq!((metadata.get(Item::Hostname), metadata.get(Item::UserData)), (Some(&b"from-imds"[..]), None));
    }
}
