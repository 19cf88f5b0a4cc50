//! `/etc/apk/repositories` from cloud-config: cloud-init's `apk_repos` (its
//! `apk_configure` module, whose template the file follows line for line), and
//! tiny-cloud's alpine-config `apk: repositories:` (each repository added once).

use crate::cloud_config::{self, CloudConfig};
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::room::Room;
use crate::out::{Full, Out};
use crate::system_files;
use crate::text::{Decimal, Plain};
use crate::yaml::{Kind, NodeRef};

/// Largest repositories file.
pub const FILE_LIMIT: usize = 16 * 1024;
// Its messages name it as a literal, not a number formatted.
const _: () = assert!(FILE_LIMIT == 16384);
/// Largest /etc/os-release read for the default version.
const OS_RELEASE_LIMIT: usize = 4096;
const PATH: &[u8] = b"/etc/apk/repositories";

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
    // `_alpha` also finds tiny-cloud's `_alpha2`.
    if id.starts_with(b"edge") || id.windows(6).any(|w| w == b"_alpha") {
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

/// cloud-config `apk_repos` and `apk: repositories:`: the file cloud-init's template
/// renders (unless `preserve_repositories`), then each tiny-cloud repository not listed
/// yet appended; written only when that changed it. Runs before `packages`, so the
/// packages come from these repositories.
pub fn apply<'c, H: Files + Messages + Room>(host: &mut H, config: &CloudConfig<'c>) -> Result<H::Text, H::Text> {
    let cloud_init = config.value("apk_repos");
    let tiny_cloud = config.value("apk").and_then(|apk| apk.get("repositories")).filter(|v| !v.is_null());
    if cloud_init.is_none() && tiny_cloud.is_none() {
        return Ok(crate::system_files::no_key(host, "apk_repos"));
    }
    system_files::make_dir(host, b"/etc/apk")?;
    let mut room = host.room(2 * FILE_LIMIT, "/etc/apk/repositories")?;
    let Some([file, scratch]) = room.as_chunks_mut::<FILE_LIMIT>().0.first_chunk_mut::<2>() else { return Err(too_large(host)) };
    edit(host, cloud_init, tiny_cloud, file, scratch)
}

/// `apply` with the file read into `file` and rewritten there, `scratch` the room to
/// compare it with what is on disk (and, before that, to read /etc/os-release).
// Not inlined into its one caller (bin's action dispatch, a large function): there it
// costs 64 bytes more.
#[inline(never)]
fn edit<'c, H: Files + Messages>(host: &mut H, cloud_init: Option<NodeRef<'c>>, tiny_cloud: Option<NodeRef<'c>>, file: &mut [u8; FILE_LIMIT], scratch: &mut [u8; FILE_LIMIT]) -> Result<H::Text, H::Text> {
    let mut len = match host.read(PATH, file) {
        Ok(found) => found.unwrap_or(0),
        Err(_) => return Err(host.text(format_args!("/etc/apk/repositories: unreadable or larger than 16384 bytes"))),
    };
    let mut note = "";
    if let Some(section) = cloud_init {
        let field = |value: NodeRef<'c>, name| value.get(name).filter(|v| !v.is_null());
        let flag = |value, name, default| field(value, name).map(|v| cloud_config::flag("apk_repos", v)).transpose().map(|v| v.unwrap_or(default));
        let text = |value, name, default| field(value, name).map(|v| cloud_config::text("apk_repos", v)).transpose().map(|v| v.unwrap_or(default));
        if section.kind() != Kind::Mapping {
            return Err(cloud_config::error("apk_repos", section, cloud_config::Problem::ExpectedMapping).into());
        }
        // As cloud-init: nothing without alpine_repo and its version.
        match field(section, "alpine_repo") {
            _ if flag(section, "preserve_repositories", false)? => note = "preserved",
            Some(alpine) if !text(alpine, "version", "")?.is_empty() => {
                let repo = AlpineRepo {
                    base_url: text(alpine, "base_url", DEFAULT_MIRROR)?,
                    version: text(alpine, "version", "")?,
                    community: flag(alpine, "community_enabled", false)?,
                    testing: flag(alpine, "testing_enabled", false)?,
                    local_repo: text(section, "local_repo_base_url", "")?,
                };
                let mut out = Out::new(file);
                render(&repo, &mut out).map_err(|_| too_large(host))?;
                len = out.len();
                note = "written";
            }
            _ => note = "no alpine_repo version: left alone",
        }
    }
    let mut added = 0;
    if let Some(list) = tiny_cloud {
        // The scratch room is free until the file is compared with what is on disk.
        let os_release = &mut scratch[..OS_RELEASE_LIMIT];
        let os_release_len = host.read(b"/etc/os-release", os_release).ok().flatten().unwrap_or(0);
        let mut version_buf = [0u8; 16];
        let default_version = default_version(&os_release[..os_release_len], &mut version_buf).unwrap_or(b"");
        for entry in cloud_config::items("apk", list)? {
            let text = |name| entry.get(name).filter(|v| !v.is_null()).map(|v| cloud_config::text("apk", v)).transpose();
            let base_url = text("base_url")?.ok_or_else(|| cloud_config::error("apk", entry, cloud_config::Problem::NoBaseUrl))?;
            let version = text("version")?.map_or(default_version, str::as_bytes);
            let Some(repos) = entry.get("repos").filter(|v| !v.is_null()) else { continue };
            for repo in cloud_config::items("apk", repos)? {
                // Appended in place: the file so far, a line break if it lacks its last,
                // then the repository.
                let start = len + usize::from(len > 0 && file[len - 1] != b'\n');
                let mut out = Out::new(file.get_mut(start..).unwrap_or_default());
                let repo = cloud_config::text("apk", repo)?.as_bytes();
                uri(base_url.as_bytes(), version, repo, &mut out).map_err(|_| too_large(host))?;
                out.put(b"\n").map_err(|_| too_large(host))?;
                let line_len = out.len();
                if !has_line(&file[..len], &file[start..start + line_len - 1]) {
                    if start > len {
                        file[len] = b'\n';
                    }
                    len = start + line_len;
                    added += 1;
                }
            }
        }
    }
    let changed = note == "written" || added > 0;
    if changed {
        system_files::write_if_changed(host, PATH, &file[..len], scratch)?;
    }
    Ok(host.text(format_args!("apk_repos {}; {} repositories added", Plain(note), Decimal(added as u64))))
}

fn too_large<H: Messages>(host: &H) -> H::Text {
    host.text(format_args!("/etc/apk/repositories would be larger than 16384 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;

    const OS_RELEASE: &str = "NAME=\"Alpine Linux\"\nVERSION_ID=3.20.3\n";

    fn run(host: &mut MemorySystem, source: &str) -> Result<std::string::String, std::string::String> {
        with_config(source, |config| apply(host, config))
    }

    #[test]
    fn tiny_cloud_repositories_are_added_once_after_the_existing_lines() {
        let mut host = MemorySystem::new(MemoryHost::new()).with_file("/etc/os-release", OS_RELEASE).with_file("/etc/apk/repositories", "https://cdn/v3.20/main");
        let source = "apk:\n  repositories:\n    - base_url: https://cdn\n      repos: [main, community]\n";
        assert_eq!(run(&mut host, source).unwrap(), "apk_repos ; 1 repositories added");
        assert_eq!(host.contents("/etc/apk/repositories"), Some("https://cdn/v3.20/main\nhttps://cdn/v3.20/community\n"));
        let writes = host.host.calls.iter().filter(|c| c.starts_with("write")).count();
        assert_eq!(run(&mut host, source).unwrap(), "apk_repos ; 0 repositories added");
        assert_eq!(host.host.calls.iter().filter(|c| c.starts_with("write")).count(), writes);
    }

    #[test]
    fn cloud_inits_template_replaces_the_file_unless_preserved() {
        let mut host = MemorySystem::new(MemoryHost::new()).with_file("/etc/apk/repositories", "old\n");
        let preserve = "apk_repos:\n  preserve_repositories: true\n  alpine_repo: {version: v3.20}\n";
        assert_eq!(run(&mut host, preserve).unwrap(), "apk_repos preserved; 0 repositories added");
        assert_eq!(host.contents("/etc/apk/repositories"), Some("old\n"));
        assert_eq!(run(&mut host, "apk_repos:\n  alpine_repo: {}\n").unwrap(), "apk_repos no alpine_repo version: left alone; 0 repositories added");
        assert_eq!(run(&mut host, "apk_repos:\n  alpine_repo: {version: v3.20, base_url: B}\n").unwrap(), "apk_repos written; 0 repositories added");
        assert!(host.contents("/etc/apk/repositories").unwrap().ends_with("#\n\nB/v3.20/main\n\n"));
    }

    #[test]
    fn bad_sections_and_a_full_file_are_errors() {
        let mut host = MemorySystem::new(MemoryHost::new());
        assert_eq!(run(&mut host, "hostname: a\n").unwrap(), "no apk_repos");
        assert!(run(&mut host, "apk_repos: [a]\n").unwrap_err().contains("expected a mapping"));
        assert!(run(&mut host, "apk:\n  repositories:\n    - repos: [main]\n").unwrap_err().contains("a repository needs base_url"));
        let big = "x".repeat(FILE_LIMIT - 4);
        let mut host = MemorySystem::new(MemoryHost::new()).with_file("/etc/apk/repositories", &big);
        let err = run(&mut host, "apk:\n  repositories:\n    - {base_url: https://cdn, version: v3.20, repos: [main]}\n").unwrap_err();
        assert_eq!(err, "/etc/apk/repositories would be larger than 16384 bytes");
        let mut host = MemorySystem::new(MemoryHost::new()).with_file("/etc/apk/repositories", &"x".repeat(FILE_LIMIT + 1));
        assert!(run(&mut host, "apk_repos: {}\n").unwrap_err().contains("unreadable or larger than 16384 bytes"));
    }

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
        assert_eq!(default_version(b"VERSION_ID=3.21.0_alpha\n", &mut v), Some(&b"edge"[..]));
        assert_eq!(default_version(b"VERSION_ID=3.21.0_alph\n", &mut v), Some(&b"v3.21"[..]));
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
