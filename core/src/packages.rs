//! cloud-config's `packages` entries as apk takes them: `name`, or `[name, version]`,
//! which apk spells `name=version`. Another package manager's form (`{apt: [...]}`) is
//! `cloud_config`'s to leave out.
//!
//! The step is marked done once apk succeeded (`MARKER_WORK`), so that a crash before the
//! bootstrap completes does not make apk fetch and install again. apk's `update`, `upgrade`
//! and `add` run twice end as run once (apk's world file says what is wanted, not what to
//! do), so the marker only saves time: `markers::Durability` makes it durable with the
//! next sync of the boot rather than with one of its own before the next work.

/// The work name of the step's marker (`markers::name`).
pub const MARKER_WORK: &str = "packages";

use core::ffi::CStr;

use crate::cloud_config::{self, CloudConfig};
use crate::host::commands::Commands;
use crate::host::links::Links;
use crate::host::scripts::Scripts;
use crate::out::Out;
use crate::text::Decimal;
use crate::yaml::Kind;

/// Most words of one command wisp runs for cloud-config (`apk add` and its packages).
pub const ARGS_LIMIT: usize = 48;
// The message of too many packages names ARGS_LIMIT - 2 as a literal.
const _: () = assert!(ARGS_LIMIT - 2 == 46);
/// Room for the packages' words, each with its NUL.
const WORDS_LIMIT: usize = 4 * 1024;
/// The image's apk, the only package manager wisp runs.
const APK: &CStr = c"/sbin/apk";

/// One package to add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Package<'a> {
    pub name: &'a str,
    pub version: Option<&'a str>,
}

impl<'a> Package<'a> {
    /// From an entry's words; `None` when they are not one or two words apk would take
    /// as a package (never an option: no word starts with `-`).
    #[inline]
    pub fn from_words(words: &[&'a str]) -> Option<Package<'a>> {
        let valid = |w: &str| w.as_bytes().first().is_some_and(|&b| b != b'-') && w.bytes().all(|b| b.is_ascii_graphic());
        match *words {
            [name] if valid(name) => Some(Package { name, version: None }),
            [name, version] if valid(name) && valid(version) => Some(Package { name, version: Some(version) }),
            _ => None,
        }
    }
}

/// `install`, once per instance: nothing when its marker (`MARKER_WORK`) says apk
/// succeeded for this instance, else the install, marked done once apk succeeded. Nothing
/// asked is no work to mark (nor a sync to make it durable).
pub fn install_once<H: Links + Commands + Scripts>(host: &mut H, config: &CloudConfig<'_>) -> Result<H::Text, H::Text> {
    host.open_markers()?;
    if host.is_done(MARKER_WORK, None)? {
        return Ok(host.text(format_args!("ran already for this instance")));
    }
    match install(host, config)? {
        Some(note) => host.mark_done(MARKER_WORK, None).map(|()| note),
        None => Ok(crate::system_files::no_key(host, "packages")),
    }
}

/// `package_update`, `package_upgrade` and `packages`, in cloud-init's order, with the
/// image's apk; an image without apk gets a clear error. `None`: none of them asks for
/// anything.
#[inline(never)]
pub fn install<H: Links + Commands>(host: &mut H, config: &CloudConfig<'_>) -> Result<Option<H::Text>, H::Text> {
    let update = config.flag("package_update", false)?;
    let upgrade = config.flag("package_upgrade", false)?;
    // `name` or `name=version`, each with its NUL, one after the other.
    let mut words = [0u8; WORDS_LIMIT];
    let mut out = Out::new(&mut words);
    let mut count = 0;
    if let Some(list) = config.value("packages") {
        // Another package manager's form (`{apt: [...]}`) is left out, with a warning.
        for item in cloud_config::items("packages", list)?.filter(|item| item.kind() != Kind::Mapping) {
            // Three words or more are no package: `from_words` refuses them.
            let mut entry: heapless::Vec<&str, 3> = heapless::Vec::new();
            let mut add = |word| cloud_config::text("packages", word).map(|text| {
                let _ = entry.push(text);
            });
            match item.kind() {
                Kind::Sequence => item.items().take(3).try_for_each(&mut add)?,
                _ => add(item)?,
            }
            let Some(package) = Package::from_words(&entry) else {
                return Err(crate::system_files::at_line(host, item, "packages: a package is a name or [name, version]"));
            };
            if count == ARGS_LIMIT - 2 {
                return Err(host.text(format_args!("packages: more than 46 packages")));
            }
            let version = package.version.map_or(&[][..], |v| v.as_bytes());
            let equals: &[u8] = if package.version.is_some() { b"=" } else { b"" };
            out.put_all(&[package.name.as_bytes(), equals, version, b"\0"])
                .map_err(|e| host.text(format_args!("packages: more than {} bytes of names", Decimal(e.limit as u64))))?;
            count += 1;
        }
    }
    if !update && !upgrade && count == 0 {
        return Ok(None);
    }
    if host.followed(APK.to_bytes()).is_none() {
        return Err(host.text(format_args!("packages: /sbin/apk not found (wisp installs packages with apk only)")));
    }
    if update {
        host.run_logged(APK, &[c"apk", c"update"], "apk update")?;
    }
    if upgrade {
        host.run_logged(APK, &[c"apk", c"upgrade"], "apk upgrade")?;
    }
    if count > 0 {
        let mut args: heapless::Vec<&CStr, ARGS_LIMIT> = heapless::Vec::new();
        let _ = args.extend_from_slice(&[c"apk", c"add"]);
        let mut rest = out.written();
        while let Ok(word) = CStr::from_bytes_until_nul(rest) {
            rest = &rest[word.to_bytes().len() + 1..];
            let _ = args.push(word);
        }
        host.run_logged(APK, &args, "apk add")?;
    }
    let done = match (update, upgrade) {
        (false, false) => "",
        (true, false) => ", updated",
        (false, true) => ", upgraded",
        (true, true) => ", updated, upgraded",
    };
    Ok(Some(host.text(format_args!("{} packages{}", Decimal(count as u64), crate::text::Plain(done)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_pinned_versions() {
        assert_eq!(Package::from_words(&["curl"]), Some(Package { name: "curl", version: None }));
        assert_eq!(Package::from_words(&["curl", "8.5.0-r0"]), Some(Package { name: "curl", version: Some("8.5.0-r0") }));
        // Never an option, never a word apk would split.
        for bad in [&[][..], &["-U"], &["a b"], &[""], &["curl", "--allow-untrusted"], &["a", "b", "c"]] {
            assert_eq!(Package::from_words(bad), None, "{bad:?}");
        }
    }

    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;

    fn run(host: &mut MemorySystem, source: &str) -> Result<Option<std::string::String>, std::string::String> {
        with_config(source, |config| install(host, config))
    }

    fn alpine() -> MemorySystem {
        let mut host = MemorySystem::new(MemoryHost::new()).with_file("/sbin/apk", "");
        host.programs.push((b"/sbin/apk".to_vec(), |_, args| (args.get(2) != Some(&&b"broken"[..])).then(Vec::new)));
        host
    }

    #[test]
    fn update_upgrade_then_add_in_cloud_inits_order() {
        let mut host = alpine();
        let said = run(&mut host, "package_update: true\npackage_upgrade: true\npackages:\n  - curl\n  - [jq, 1.7-r0]\n  - {apt: [x]}\n");
        assert_eq!(said.unwrap().unwrap(), "2 packages, updated, upgraded");
        assert_eq!(host.runs, ["apk update", "apk upgrade", "apk add curl jq=1.7-r0"]);
        assert_eq!(run(&mut host, "hostname: x\n").unwrap(), None);
    }

    #[test]
    fn refusals_name_the_entry_or_the_missing_apk() {
        assert_eq!(run(&mut alpine(), "packages:\n  - [a, b, c]\n").unwrap_err(), "cloud-config line 2: packages: a package is a name or [name, version]");
        assert_eq!(run(&mut alpine(), "packages: [--allow-untrusted]\n").unwrap_err(), "cloud-config line 1: packages: a package is a name or [name, version]");
        assert_eq!(run(&mut alpine(), "packages: [broken]\n").unwrap_err(), "apk add exited with status 1 (output in user-data.log)");
        let mut none = MemorySystem::new(MemoryHost::new());
        assert_eq!(run(&mut none, "packages: [curl]\n").unwrap_err(), "packages: /sbin/apk not found (wisp installs packages with apk only)");
        let many = std::format!("packages: [{}]\n", (0..47).map(|i| std::format!("p{i}")).collect::<Vec<_>>().join(", "));
        assert_eq!(run(&mut alpine(), &many).unwrap_err(), "packages: more than 46 packages");
    }

    #[test]
    fn packages_are_installed_once_per_instance_and_marked_only_when_apk_succeeded() {
        let once = |host: &mut MemorySystem, source: &str| with_config(source, |config| install_once(host, config));
        let mut host = alpine();
        assert_eq!(once(&mut host, "packages: [broken]\n").unwrap_err(), "apk add exited with status 1 (output in user-data.log)");
        assert!(host.scripts.marked.is_empty(), "a failed install runs again");
        assert_eq!(once(&mut host, "hostname: x\n").unwrap(), "no packages");
        assert!(host.scripts.marked.is_empty(), "nothing asked is no work to mark");
        assert_eq!(once(&mut host, "packages: [curl]\n").unwrap(), "1 packages");
        assert_eq!(host.scripts.marked.iter().collect::<Vec<_>>(), ["packages "]);
        host.runs.clear();
        assert_eq!(once(&mut host, "packages: [curl]\n").unwrap(), "ran already for this instance");
        assert!(host.runs.is_empty(), "{:?}", host.runs);
    }
}
