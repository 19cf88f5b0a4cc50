//! `/etc/apk/repositories` from cloud-config: cloud-init's `apk_repos` (its
//! `apk_configure` module, whose template the file follows line for line), and
//! tiny-cloud's alpine-config `apk: repositories:` (each repository added once).

use crate::out::{Full, Out};

/// cloud-init's mirror when `alpine_repo` names none.
pub const DEFAULT_MIRROR: &str = "https://alpine.global.ssl.fastly.net/alpine";

/// cloud-init's `alpine_repo` and `local_repo_base_url`.
pub struct AlpineRepo<'a> {
    pub base_url: &'a str,
    pub version: &'a str,
    pub community: bool,
    pub testing: bool,
    pub local_repo: &'a str,
}

/// The file cloud-init's template renders.
pub fn render(repo: &AlpineRepo<'_>, out: &mut Out<'_>) -> Result<(), Full> {
    let AlpineRepo { base_url, version, .. } = *repo;
    let (base, version) = (base_url.as_bytes(), version.as_bytes());
    out.put(b"#\n# Created by cloud-init\n#\n# This file is written on first boot of an instance\n#\n\n")?;
    out.put_all(&[base, b"/", version, b"/main\n"])?;
    if repo.community {
        out.put_all(&[base, b"/", version, b"/community\n"])?;
    }
    if repo.testing {
        if version != b"edge" {
            out.put(b"#\n# Testing - using with non-Edge installation may cause problems!\n#\n")?;
        }
        out.put_all(&[base, b"/edge/testing\n"])?;
    }
    out.put(b"\n")?;
    if !repo.local_repo.is_empty() {
        out.put_all(&[b"#\n# Local repo\n#\n", repo.local_repo.as_bytes(), b"/", version, b"\n\n"])?;
    }
    Ok(())
}

/// tiny-cloud's version when a repository names none: from `/etc/os-release`'s
/// `VERSION_ID`, `edge` for edge and alpha releases, `vX.Y` for `X.Y.Z`.
pub fn default_version<'b>(os_release: &[u8], out: &'b mut [u8; 16]) -> Option<&'b [u8]> {
    let line = os_release.split(|&b| b == b'\n').find_map(|line| line.strip_prefix(b"VERSION_ID="))?;
    let id = line.trim_ascii();
    let id = id.strip_prefix(b"\"").and_then(|id| id.strip_suffix(b"\"")).unwrap_or(id);
    if id.starts_with(b"edge") || id.windows(7).any(|w| w == b"_alpha2") || id.windows(6).any(|w| w == b"_alpha") {
        out[..4].copy_from_slice(b"edge");
        return Some(&out[..4]);
    }
    let mut parts = id.split(|&b| b == b'.');
    let (major, minor, patch) = (parts.next()?, parts.next()?, parts.next()?);
    let numeric = |part: &[u8]| !part.is_empty() && part[0].is_ascii_digit();
    if !(numeric(major) && numeric(minor) && numeric(patch)) || major.len() + minor.len() + 2 > out.len() {
        return None;
    }
    let mut writer = Out::new(&mut out[..]);
    writer.put_all(&[b"v", major, b".", minor]).ok()?;
    let len = writer.len();
    Some(&out[..len])
}

/// `base_url/version/repo` as tiny-cloud joins them (a version of `.` or `/`, or none,
/// adds no part).
pub fn uri(base_url: &[u8], version: &[u8], repo: &[u8], out: &mut Out<'_>) -> Result<(), Full> {
    let base = base_url.strip_suffix(b"/").unwrap_or(base_url);
    out.put(base)?;
    if !version.is_empty() && version != b"." && version != b"/" {
        out.put_all(&[b"/", version])?;
    }
    out.put_all(&[b"/", repo])
}

/// Whether a line of `existing` says `line` already (tiny-cloud's `add_once` test).
pub fn has_line(existing: &[u8], line: &[u8]) -> bool {
    existing.split(|&b| b == b'\n').any(|l| l == line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(repo: AlpineRepo<'_>) -> String {
        let mut buf = [0u8; 1024];
        let mut out = Out::new(&mut buf);
        render(&repo, &mut out).unwrap();
        let len = out.len();
        String::from_utf8(buf[..len].to_vec()).unwrap()
    }

    const HEADER: &str = "#\n# Created by cloud-init\n#\n# This file is written on first boot of an instance\n#\n\n";

    #[test]
    fn cloud_init_template() {
        // As cloud-init 23's templater renders them.
        let all = AlpineRepo { base_url: "B", version: "v3.12", community: true, testing: true, local_repo: "https://l/x" };
        assert_eq!(rendered(all), format!("{HEADER}B/v3.12/main\nB/v3.12/community\n#\n# Testing - using with non-Edge installation may cause problems!\n#\nB/edge/testing\n\n#\n# Local repo\n#\nhttps://l/x/v3.12\n\n"));
        let main = AlpineRepo { base_url: "B", version: "v3.20", community: false, testing: false, local_repo: "" };
        assert_eq!(rendered(main), format!("{HEADER}B/v3.20/main\n\n"));
        let edge = AlpineRepo { base_url: "B", version: "edge", community: true, testing: true, local_repo: "" };
        assert_eq!(rendered(edge), format!("{HEADER}B/edge/main\nB/edge/community\nB/edge/testing\n\n"));
    }

    #[test]
    fn tiny_cloud_form() {
        let mut v = [0u8; 16];
        assert_eq!(default_version(b"NAME=\"Alpine Linux\"\nVERSION_ID=3.20.3\n", &mut v), Some(&b"v3.20"[..]));
        assert_eq!(default_version(b"VERSION_ID=3.21_alpha20240807\n", &mut v), Some(&b"edge"[..]));
        assert_eq!(default_version(b"VERSION_ID=\"edge\"\n", &mut v), Some(&b"edge"[..]));
        assert_eq!(default_version(b"VERSION_ID=3.20\n", &mut v), None);
        assert_eq!(default_version(b"", &mut v), None);
        let mut buf = [0u8; 128];
        let mut out = Out::new(&mut buf);
        uri(b"https://cdn/alpine/", b"v3.20", b"main", &mut out).unwrap();
        uri(b"/x", b".", b"y", &mut out).unwrap();
        let len = out.len();
        assert_eq!(&buf[..len], b"https://cdn/alpine/v3.20/main/x/y");
        assert!(has_line(b"a\nb\n", b"b") && !has_line(b"a\nbc\n", b"b"));
    }
}
