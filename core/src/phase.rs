//! The four phases of a bootstrap, named as tiny-cloud 3.x names them, and the actions
//! each one runs.

use crate::metadata_item::Item;
use crate::text::Plain;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Boot,
    Early,
    Main,
    Final,
}

/// The names of `Phase`, in the order of its variants.
const PHASE_NAMES: &str = "boot early main final";

impl Phase {
    pub const ALL: [Phase; 4] = [Phase::Boot, Phase::Early, Phase::Main, Phase::Final];

    pub fn name(self) -> &'static str {
        crate::text::nth_word(PHASE_NAMES, self as usize)
    }

    pub fn from_name(name: &[u8]) -> Option<Phase> {
        crate::text::word_index(PHASE_NAMES, name).and_then(|index| Phase::ALL.get(index).copied())
    }
}

/// tiny-cloud's action names; `INIT_ACTIONS_*` and `SKIP_INIT_ACTIONS` use them. The
/// `userdata_*` ones apply user-data (cloud-config keys, boothooks); tiny-cloud names its
/// alpine-config actions the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    ExpandRoot,
    InstallHotplugs,
    SetEphemeralNetwork,
    SetDefaultInterfaces,
    EnableSshd,
    SaveUserdata,
    UserdataBoothooks,
    CreateDefaultUser,
    SetHostname,
    SetSshKeys,
    SetSshHostKeys,
    UserdataUsers,
    UserdataSshPwauth,
    UserdataWriteFiles,
    UserdataMounts,
    UserdataTimezone,
    UserdataNtp,
    UserdataBootcmd,
    UserdataApkRepos,
    UserdataPackages,
    UserdataWriteFilesDeferred,
    RunUserdata,
    UserdataRuncmd,
    BootstrapComplete,
    UserdataPowerState,
}

/// The names of `Action`, in the order of its variants (`Action::name`).
const ACTION_NAMES: &str = "expand_root install_hotplugs set_ephemeral_network set_default_interfaces enable_sshd save_userdata userdata_boothooks create_default_user set_hostname set_ssh_keys set_ssh_host_keys userdata_users userdata_ssh_pwauth userdata_write_files userdata_mounts userdata_timezone userdata_ntp userdata_bootcmd userdata_apk_repos userdata_packages userdata_write_files_deferred run_userdata userdata_runcmd bootstrap_complete userdata_power_state";

impl Action {
    const ALL: [Action; 25] = [
        Action::ExpandRoot,
        Action::InstallHotplugs,
        Action::SetEphemeralNetwork,
        Action::SetDefaultInterfaces,
        Action::EnableSshd,
        Action::SaveUserdata,
        Action::UserdataBoothooks,
        Action::CreateDefaultUser,
        Action::SetHostname,
        Action::SetSshKeys,
        Action::SetSshHostKeys,
        Action::UserdataUsers,
        Action::UserdataSshPwauth,
        Action::UserdataWriteFiles,
        Action::UserdataMounts,
        Action::UserdataTimezone,
        Action::UserdataNtp,
        Action::UserdataBootcmd,
        Action::UserdataApkRepos,
        Action::UserdataPackages,
        Action::UserdataWriteFilesDeferred,
        Action::RunUserdata,
        Action::UserdataRuncmd,
        Action::BootstrapComplete,
        Action::UserdataPowerState,
    ];

    pub fn name(self) -> &'static str {
        crate::text::nth_word(ACTION_NAMES, self as usize)
    }

    pub fn from_name(name: &[u8]) -> Option<Action> {
        crate::text::word_index(ACTION_NAMES, name).and_then(|index| Action::ALL.get(index).copied())
    }

    /// What the action reads from the metadata service; `run_userdata` reads the saved
    /// copy instead, so the final phase works without the network.
    pub const fn metadata(self) -> Option<Item> {
        match self {
            Action::SaveUserdata => Some(Item::UserData),
            Action::SetHostname => Some(Item::Hostname),
            Action::SetSshKeys => Some(Item::SshKeys),
            _ => None,
        }
    }

    /// Actions that also run on later boots of a bootstrapped instance, as cloud-init's
    /// per-boot work does: boothooks, `bootcmd`, and the per-boot scripts (which
    /// `run_userdata` limits itself to on such a boot); and the network, which an image
    /// with no DHCP client of its own needs at every boot to reach the metadata service.
    pub const fn every_boot(self) -> bool {
        matches!(self, Action::SetEphemeralNetwork | Action::UserdataBoothooks | Action::UserdataBootcmd | Action::RunUserdata)
    }
}

/// What an action needs to have gone well, in this boot, before it may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    Nothing,
    /// Each of these actions, where it ran: one that failed (or was itself held back)
    /// holds this one back. An action not planned this boot holds nothing back.
    Actions(&'static [Action]),
    /// No failure at all this boot, of any action or phase: `bootstrap_complete`, which
    /// vouches for everything before it.
    Everything,
}

/// What of the user-data an action applies. The one table of the user-data actions:
/// what they need (`Action::needs`), the feature a build needs for them
/// (`Action::feature`) and how bin runs them follow from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserdataWork {
    /// `#cloud-boothook` parts.
    Boothooks,
    /// Script parts and cloud-init's script directories.
    Scripts,
    /// A key of the merged `#cloud-config`.
    CloudConfig,
}

/// The Cargo features (bin's) that actions need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    Grow,
    Ssh,
    Ntp,
    ApkRepos,
    Userdata,
    CloudConfig,
}

impl Feature {
    /// The feature's name in bin's Cargo.toml.
    pub const fn name(self) -> &'static str {
        match self {
            Feature::Grow => "grow",
            Feature::Ssh => "ssh",
            Feature::Ntp => "ntp",
            Feature::ApkRepos => "apk-repos",
            Feature::Userdata => "userdata",
            Feature::CloudConfig => "cloud-config",
        }
    }
}

impl Action {
    /// What of the user-data the action applies; `None`: none (`save_userdata` keeps it,
    /// it applies none).
    pub const fn userdata_work(self) -> Option<UserdataWork> {
        match self {
            Action::UserdataBoothooks => Some(UserdataWork::Boothooks),
            Action::RunUserdata => Some(UserdataWork::Scripts),
            Action::UserdataBootcmd
            | Action::UserdataUsers
            | Action::UserdataSshPwauth
            | Action::UserdataWriteFiles
            | Action::UserdataMounts
            | Action::UserdataTimezone
            | Action::UserdataNtp
            | Action::UserdataApkRepos
            | Action::UserdataPackages
            | Action::UserdataWriteFilesDeferred
            | Action::UserdataRuncmd
            | Action::UserdataPowerState => Some(UserdataWork::CloudConfig),
            _ => None,
        }
    }

    /// The Cargo feature a build needs to run the action; `None`: every build runs it.
    pub const fn feature(self) -> Option<Feature> {
        match self {
            Action::ExpandRoot => Some(Feature::Grow),
            Action::SetSshHostKeys | Action::UserdataSshPwauth => Some(Feature::Ssh),
            Action::UserdataNtp => Some(Feature::Ntp),
            Action::UserdataApkRepos => Some(Feature::ApkRepos),
            _ => match self.userdata_work() {
                Some(UserdataWork::Boothooks) => Some(Feature::Userdata),
                Some(UserdataWork::CloudConfig) => Some(Feature::CloudConfig),
                // A build without `userdata` runs a plain `#!` document.
                Some(UserdataWork::Scripts) | None => None,
            },
        }
    }

    /// The dependencies, as data: the keys go to the default user, so they need it; every
    /// user-data action reads the copy `save_userdata` keeps, so a failed save (which may
    /// leave a previous instance's copy) applies none of it; power goes off only once the
    /// bootstrap is marked complete, so a failed boot stays up for its owner to look at.
    /// Everything else is independent: one failure never stops the others.
    pub const fn needs(self) -> Needs {
        match self {
            Action::SetSshKeys => Needs::Actions(&[Action::CreateDefaultUser]),
            Action::BootstrapComplete => Needs::Everything,
            Action::UserdataPowerState => Needs::Actions(&[Action::BootstrapComplete]),
            _ => match self.userdata_work() {
                Some(_) => Needs::Actions(&[Action::SaveUserdata]),
                None => Needs::Nothing,
            },
        }
    }

    /// Whether the action applies the user-data `save_userdata` kept, and so is held
    /// back once an action reported that it cannot be applied.
    pub fn needs_saved_userdata(self) -> bool {
        self.needs() == Needs::Actions(&[Action::SaveUserdata])
    }

    /// Why this action must not run, given what failed so far this boot; `None`: it may.
    pub fn held_back(self, failed: Failed) -> Option<HeldBack> {
        match self.needs() {
            Needs::Nothing => None,
            Needs::Actions(needed) => needed.iter().find(|&&need| failed.contains(need)).map(|&need| HeldBack::By(need)),
            Needs::Everything => failed.any().then_some(HeldBack::EarlierFailure),
        }
    }
}

/// Why an action was not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeldBack {
    By(Action),
    EarlierFailure,
}

impl core::fmt::Display for HeldBack {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            HeldBack::By(action) => write!(f, "not run: needs {}", Plain(action.name())),
            HeldBack::EarlierFailure => f.write_str("not run: an earlier action failed"),
        }
    }
}

/// The actions that failed or were held back this boot, and whether anything else (a
/// phase that could not start its actions) failed. Rebuilt in a later phase, run as its
/// own process, from the errors cloud-init's `status.json` recorded for this boot, which
/// name their action as `phase/action: reason`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failed {
    actions: u32,
    other: bool,
}

impl Failed {
    pub fn add(&mut self, action: Action) {
        self.actions |= 1 << action as u32;
    }

    pub fn contains(self, action: Action) -> bool {
        self.actions & (1 << action as u32) != 0
    }

    pub fn any(self) -> bool {
        self.actions != 0 || self.other
    }

    /// Adds what an error message of the status file names; a message that names no
    /// action (`main: failed: ...`) counts as a failure of no action in particular.
    pub fn add_message(&mut self, message: &[u8]) {
        if message.is_empty() {
            return;
        }
        let named = message
            .iter()
            .position(|&b| b == b'/')
            .filter(|&slash| Phase::from_name(&message[..slash]).is_some())
            .and_then(|slash| {
                let rest = &message[slash + 1..];
                let end = rest.iter().position(|&b| b == b':').unwrap_or(rest.len());
                Action::from_name(&rest[..end])
            });
        match named {
            Some(action) => self.add(action),
            None => self.other = true,
        }
    }
}

impl Phase {
    /// The default actions of each phase, in order: tiny-cloud 3.x's, with the user-data
    /// actions where cloud-init runs the same work (boothooks first, `bootcmd` before the
    /// other keys, `runcmd` after the user's scripts, power last).
    pub const fn default_actions(self) -> &'static [Action] {
        match self {
            // tiny-cloud also lists install_hotplugs: it runs mdev scripts, which wisp does
            // not ship (see the README).
            Phase::Boot => &[Action::ExpandRoot, Action::SetEphemeralNetwork, Action::SetDefaultInterfaces, Action::EnableSshd],
            Phase::Early => &[Action::SaveUserdata, Action::UserdataBoothooks],
            // The user and keys come first, as in tiny-cloud.
            Phase::Main => &[
                Action::CreateDefaultUser,
                Action::SetHostname,
                Action::SetSshKeys,
                Action::SetSshHostKeys,
                Action::UserdataBootcmd,
                Action::UserdataUsers,
                Action::UserdataSshPwauth,
                Action::UserdataWriteFiles,
                Action::UserdataMounts,
                Action::UserdataTimezone,
                Action::UserdataNtp,
                Action::UserdataApkRepos,
                Action::UserdataPackages,
            ],
            Phase::Final => &[
                Action::UserdataWriteFilesDeferred,
                Action::RunUserdata,
                Action::UserdataRuncmd,
                Action::BootstrapComplete,
                Action::UserdataPowerState,
            ],
        }
    }
}

/// Most actions one phase can run.
pub const PLAN_LIMIT: usize = 16;
// `TooManyActions` names the limit as a literal, not a number carried and formatted.
const _: () = assert!(PLAN_LIMIT == 16);

pub type Plan = heapless::Vec<Action, PLAN_LIMIT>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// More than `PLAN_LIMIT` actions in the variable.
    TooManyActions { variable: &'static str },
}

impl core::fmt::Display for PlanError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PlanError::TooManyActions { variable } => write!(f, "{variable} lists more than 16 actions", variable = Plain(variable)),
        }
    }
}

impl Phase {
    pub fn init_actions_variable(self) -> &'static str {
        crate::text::nth_word(crate::config_variables::VARIABLES, crate::config_variables::FIRST_INIT_ACTIONS + self as usize)
    }

    /// The actions this phase runs: `INIT_ACTIONS_<PHASE>` when set (even to nothing),
    /// else the defaults, less those named in `SKIP_INIT_ACTIONS`. Names are separated by
    /// white space or commas; a name that is no action was refused with its line when the
    /// configuration was read (`Config::check_actions`), and is passed over here.
    pub fn plan(self, init_actions: Option<&str>, skip_actions: &str) -> Result<Plan, PlanError> {
        let skipped = |action: Action| action_names(skip_actions).any(|name| name == action.name());
        let mut plan = Plan::new();
        let mut add = |action: Action, variable: &'static str| {
            if skipped(action) {
                return Ok(());
            }
            plan.push(action).map_err(|_| PlanError::TooManyActions { variable })
        };
        match init_actions {
            Some(list) => {
                let variable = self.init_actions_variable();
                for action in action_names(list).filter_map(|name| Action::from_name(name.as_bytes())) {
                    add(action, variable)?;
                }
            }
            None => {
                for &action in self.default_actions() {
                    add(action, "defaults")?;
                }
            }
        }
        Ok(plan)
    }
}

/// Most metadata items the actions of all phases read.
pub const ITEMS_LIMIT: usize = 6;

/// The metadata items the plans of `from` and the phases after it read, each once, in
/// plan order: the first fetch of a run asks for all of them in one round.
pub fn metadata_items(plans: &[Plan; 4], from: Phase) -> heapless::Vec<Item, ITEMS_LIMIT> {
    let mut items = heapless::Vec::new();
    for plan in &plans[from as usize..] {
        for action in plan {
            match action.metadata() {
                Some(item) if !items.contains(&item) => drop(items.push(item)),
                _ => {}
            }
        }
    }
    items
}

/// Files that switch wisp off, as tiny-cloud's does.
pub const DISABLED_FILES: [&str; 2] = ["/etc/wisp.disabled", "/etc/tiny-cloud.disabled"];

/// The file that switches wisp off, if the image has one: every phase is then done at
/// once, with nothing to do.
pub fn disabled_by(host: &mut impl crate::host::files::Files) -> Option<&'static str> {
    DISABLED_FILES.into_iter().find(|file| matches!(host.metadata(file.as_bytes()), Ok(Some(_))))
}

/// The names in an action list: separated by white space or commas. Split as bytes (the
/// separators are ASCII, so each name stays UTF-8): `str::split` by a closure would be
/// one more copy of its searcher.
pub fn action_names(list: &str) -> impl Iterator<Item = &str> {
    list.as_bytes().split(|b| b.is_ascii_whitespace() || *b == b',').filter(|name| !name.is_empty()).map(|name| core::str::from_utf8(name).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_list_is_split_at_white_space_and_commas_and_keeps_other_text_whole() {
        let names: Vec<&str> = action_names(" set_hostname,\tset_ssh_keys ,,\r\nbootcmd\x0cdé_jà  ").collect();
        assert_eq!(names, ["set_hostname", "set_ssh_keys", "bootcmd", "dé_jà"]);
        assert_eq!(action_names(" , \t").count(), 0);
        // A separator is ASCII only: a non-breaking space is part of a name.
        assert_eq!(action_names("a\u{a0}b").collect::<Vec<_>>(), ["a\u{a0}b"]);
    }

    #[test]
    fn names_round_trip() {
        for phase in Phase::ALL {
            assert_eq!(Phase::from_name(phase.name().as_bytes()), Some(phase));
        }
        for action in Action::ALL {
            assert_eq!(Action::from_name(action.name().as_bytes()), Some(action));
        }
        assert_eq!(Phase::from_name(b"net"), None);
        assert_eq!(Action::from_name(b"expand-root"), None);
    }

    #[test]
    fn each_phase_has_its_names() {
        let names: Vec<_> = Phase::ALL.iter().map(|phase| (phase.name(), phase.init_actions_variable())).collect();
        assert_eq!(
            names,
            [("boot", "INIT_ACTIONS_BOOT"), ("early", "INIT_ACTIONS_EARLY"), ("main", "INIT_ACTIONS_MAIN"), ("final", "INIT_ACTIONS_FINAL")]
        );
    }

    #[test]
    fn each_action_has_its_own_name_in_the_list() {
        assert_eq!(ACTION_NAMES.split(' ').count(), Action::ALL.len());
        assert_eq!(Action::ExpandRoot.name(), "expand_root");
        assert_eq!(Action::SetSshHostKeys.name(), "set_ssh_host_keys");
        assert_eq!(Action::UserdataWriteFilesDeferred.name(), "userdata_write_files_deferred");
        assert_eq!(Action::UserdataPowerState.name(), "userdata_power_state");
    }

    #[test]
    fn defaults_less_skipped() {
        let plan = Phase::Main.plan(Some("create_default_user set_hostname set_ssh_keys"), "set_hostname").unwrap();
        assert_eq!(plan.as_slice(), &[Action::CreateDefaultUser, Action::SetSshKeys]);
        let plan = Phase::Final.plan(None, "userdata_power_state userdata_runcmd userdata_write_files_deferred").unwrap();
        assert_eq!(plan.as_slice(), &[Action::RunUserdata, Action::BootstrapComplete]);
    }

    #[test]
    fn init_actions_replace_defaults_even_when_empty() {
        let plan = Phase::Main.plan(Some("set_ssh_keys, set_hostname"), "").unwrap();
        assert_eq!(plan.as_slice(), &[Action::SetSshKeys, Action::SetHostname]);
        assert!(Phase::Boot.plan(Some("  "), "").unwrap().is_empty());
        let plan = Phase::Boot.plan(Some("enable_sshd expand_root"), "expand_root").unwrap();
        assert_eq!(plan.as_slice(), &[Action::EnableSshd]);
    }

    #[test]
    fn plan_limit() {
        let list = "enable_sshd ".repeat(PLAN_LIMIT);
        assert_eq!(Phase::Boot.plan(Some(&list), "").unwrap().len(), PLAN_LIMIT);
        let list = "enable_sshd ".repeat(PLAN_LIMIT + 1);
        assert_eq!(
            Phase::Boot.plan(Some(&list), ""),
            Err(PlanError::TooManyActions { variable: "INIT_ACTIONS_BOOT" })
        );
        assert_eq!(PlanError::TooManyActions { variable: "INIT_ACTIONS_BOOT" }.to_string(), "INIT_ACTIONS_BOOT lists more than 16 actions");
    }

    #[test]
    fn dependencies_hold_back_only_what_needs_the_failure() {
        let mut failed = Failed::default();
        assert!(!failed.any());
        for action in Action::ALL {
            assert_eq!(action.held_back(failed), None, "{}", action.name());
        }
        failed.add(Action::SetHostname);
        // A host name that fails stops nothing but the completion marker.
        assert_eq!(Action::SetSshKeys.held_back(failed), None);
        assert_eq!(Action::UserdataRuncmd.held_back(failed), None);
        assert_eq!(Action::BootstrapComplete.held_back(failed), Some(HeldBack::EarlierFailure));
        failed.add(Action::BootstrapComplete);
        assert_eq!(Action::UserdataPowerState.held_back(failed), Some(HeldBack::By(Action::BootstrapComplete)));

        let mut failed = Failed::default();
        failed.add(Action::CreateDefaultUser);
        assert_eq!(Action::SetSshKeys.held_back(failed), Some(HeldBack::By(Action::CreateDefaultUser)));
        assert_eq!(Action::UserdataUsers.held_back(failed), None);

        let mut failed = Failed::default();
        failed.add(Action::SaveUserdata);
        for action in [Action::UserdataBoothooks, Action::UserdataBootcmd, Action::UserdataWriteFiles, Action::RunUserdata, Action::UserdataRuncmd] {
            assert_eq!(action.held_back(failed), Some(HeldBack::By(Action::SaveUserdata)), "{}", action.name());
        }
        for action in [Action::CreateDefaultUser, Action::SetHostname, Action::SetSshKeys, Action::ExpandRoot] {
            assert_eq!(action.held_back(failed), None, "{}", action.name());
        }
    }

    #[test]
    fn one_table_of_the_userdata_actions() {
        // Every userdata_* action applies user-data, and needs its saved copy, but power:
        // that waits for the completion marker.
        for action in Action::ALL {
            let userdata_name = action.name().starts_with("userdata_") || action == Action::RunUserdata;
            assert_eq!(action.userdata_work().is_some(), userdata_name, "{}", action.name());
            assert_eq!(action.needs_saved_userdata(), userdata_name && action != Action::UserdataPowerState, "{}", action.name());
        }
        assert_eq!(Action::UserdataBoothooks.feature(), Some(Feature::Userdata));
        assert_eq!(Action::UserdataRuncmd.feature(), Some(Feature::CloudConfig));
        assert_eq!(Action::UserdataPowerState.feature(), Some(Feature::CloudConfig));
        assert_eq!(Action::UserdataNtp.feature(), Some(Feature::Ntp));
        assert_eq!(Action::UserdataSshPwauth.feature(), Some(Feature::Ssh));
        assert_eq!(Action::ExpandRoot.feature(), Some(Feature::Grow));
        assert_eq!(Feature::ApkRepos.name(), "apk-repos");
        for action in [Action::RunUserdata, Action::SaveUserdata, Action::SetSshKeys, Action::BootstrapComplete] {
            assert_eq!(action.feature(), None, "{}", action.name());
        }
    }

    #[test]
    fn an_action_not_planned_holds_nothing_back() {
        // SKIP_INIT_ACTIONS=create_default_user: the keys still go in (to a user the image
        // made), as tiny-cloud's lists mean; only a failure holds an action back.
        let plan = Phase::Main.plan(None, "create_default_user").unwrap();
        assert!(!plan.contains(&Action::CreateDefaultUser) && plan.contains(&Action::SetSshKeys));
        assert_eq!(Action::SetSshKeys.held_back(Failed::default()), None);
        assert_eq!(Action::BootstrapComplete.held_back(Failed::default()), None);
    }

    #[test]
    fn failures_read_back_from_status_messages() {
        let mut failed = Failed::default();
        failed.add_message(b"main/set_hostname: hostname has byte 0x5f at position 3");
        failed.add_message(b"early/save_userdata: metadata user-data: timed out");
        assert!(failed.contains(Action::SetHostname) && failed.contains(Action::SaveUserdata));
        assert!(!failed.contains(Action::SetSshKeys));
        assert_eq!(failed, {
            let mut expected = Failed::default();
            expected.add(Action::SetHostname);
            expected.add(Action::SaveUserdata);
            expected
        });
        let mut other = Failed::default();
        other.add_message(b"main: failed: metadata instance-id: connection refused");
        assert!(other.any() && !other.contains(Action::SetHostname));
        assert_eq!(Action::BootstrapComplete.held_back(other), Some(HeldBack::EarlierFailure));
        let mut odd = Failed::default();
        odd.add_message(b"");
        assert!(!odd.any());
        odd.add_message(b"main/no_such_action: x");
        assert!(odd.any());
    }

    #[test]
    fn either_file_switches_wisp_off() {
        use crate::host::memory::MemoryHost;
        assert_eq!(disabled_by(&mut MemoryHost::new().with_file("/etc/hostname", b"a\n")), None);
        assert_eq!(disabled_by(&mut MemoryHost::new().with_file("/etc/tiny-cloud.disabled", b"")), Some("/etc/tiny-cloud.disabled"));
        let both = MemoryHost::new().with_file("/etc/tiny-cloud.disabled", b"").with_file("/etc/wisp.disabled", b"");
        assert_eq!(disabled_by(&mut { both }), Some("/etc/wisp.disabled"));
    }

    #[test]
    fn a_run_fetches_what_its_phases_and_the_later_ones_read_once() {
        let mut plans = [const { Plan::new() }; 4];
        for phase in Phase::ALL {
            plans[phase as usize] = phase.plan(None, "").unwrap();
        }
        let all = metadata_items(&plans, Phase::Boot);
        assert!(all.iter().enumerate().all(|(i, item)| !all[..i].contains(item)), "each item once: {all:?}");
        for action in plans.iter().flatten() {
            assert!(action.metadata().is_none_or(|item| all.contains(&item)), "{action:?}");
        }
        // The final phase reads nothing from the service.
        assert!(metadata_items(&plans, Phase::Final).is_empty());
        let main = metadata_items(&plans, Phase::Main);
        assert!(main.iter().all(|item| all.contains(item)) && main.len() < all.len(), "{main:?} {all:?}");
    }
}
