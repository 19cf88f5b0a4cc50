//! `/etc/apk/repositories` from cloud-init's `apk_repos` (the whole file, from its
//! template) and tiny-cloud's alpine-config `apk: repositories:` (each repository added
//! once). Runs before `packages`, so the packages come from these repositories.

use wisp_core::apk_repositories::{self, AlpineRepo, DEFAULT_MIRROR};
use wisp_core::cloud_config::{self, CloudConfig};
use wisp_core::out::Out;
use wisp_core::yaml::{Kind, Value};

use crate::context::Context;
use crate::output::Line;

/// Largest repositories file.
const FILE_LIMIT: usize = 16 * 1024;

#[inline(never)]
pub fn apk_repos(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Line, Line> {
    let cloud_init = config.value("apk_repos");
    let tiny_cloud = config.value("apk").and_then(|apk| apk.get("repositories")).filter(|v| !v.is_null());
    if cloud_init.is_none() && tiny_cloud.is_none() {
        return Ok(msg!("no apk_repos"));
    }
    let etc_apk = ctx.create_dir(b"/etc/apk")?;
    let mut file = [0u8; FILE_LIMIT];
    let mut len = match etc_apk.read(b"repositories", &mut file) {
        Ok(found) => found.unwrap_or(0),
        Err(_) => return Err(msg!("/etc/apk/repositories: unreadable or larger than {FILE_LIMIT} bytes")),
    };
    let too_large = |_| msg!("/etc/apk/repositories would be larger than {FILE_LIMIT} bytes");
    let mut note = "";
    if let Some(section) = cloud_init {
        let field = |value: Value<'static>, name| value.get(name).filter(|v| !v.is_null());
        let flag = |value, name, default| field(value, name).map(|v| cloud_config::flag("apk_repos", v)).transpose().map(|v| v.unwrap_or(default));
        let text = |value, name, default| field(value, name).map(|v| cloud_config::text("apk_repos", v)).transpose().map(|v| v.unwrap_or(default));
        if section.kind() != Kind::Mapping {
            return Err(cloud_config::error("apk_repos", section, "expected a mapping").into());
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
                let mut out = Out::new(&mut file);
                apk_repositories::render(&repo, &mut out).map_err(too_large)?;
                len = out.len();
                note = "written";
            }
            _ => note = "no alpine_repo version: left alone",
        }
    }
    let mut added = 0;
    if let Some(list) = tiny_cloud {
        let mut os_release = [0u8; 4096];
        let os_release_len = ctx.read(b"/etc/os-release", &mut os_release).ok().flatten().map_or(0, <[u8]>::len);
        let mut version_buf = [0u8; 16];
        let default_version = apk_repositories::default_version(&os_release[..os_release_len], &mut version_buf).unwrap_or(b"");
        for entry in cloud_config::items("apk", list)? {
            let text = |name| entry.get(name).filter(|v| !v.is_null()).map(|v| cloud_config::text("apk", v)).transpose();
            let base_url = text("base_url")?.ok_or_else(|| Line::from(cloud_config::error("apk", entry, "a repository needs base_url")))?;
            let version = text("version")?.map_or(default_version, str::as_bytes);
            let Some(repos) = entry.get("repos").filter(|v| !v.is_null()) else { continue };
            for repo in cloud_config::items("apk", repos)? {
                // Appended in place: the file so far, a line break if it lacks its last,
                // then the repository.
                let start = len + usize::from(len > 0 && file[len - 1] != b'\n');
                let mut out = Out::new(file.get_mut(start..).unwrap_or_default());
                let repo = cloud_config::text("apk", repo)?.as_bytes();
                apk_repositories::uri(base_url.as_bytes(), version, repo, &mut out).map_err(too_large)?;
                out.put(b"\n").map_err(too_large)?;
                let line_len = out.len();
                if !apk_repositories::has_line(&file[..len], &file[start..start + line_len - 1]) {
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
    if changed && !etc_apk.has_contents(b"repositories", &file[..len]).unwrap_or(false) {
        etc_apk.write_atomic(b"repositories", &file[..len], 0o644, None).map_err(|e| crate::output::os_error("/etc/apk/repositories", e))?;
    }
    Ok(msg!("apk_repos {note}; {added} repositories added"))
}
