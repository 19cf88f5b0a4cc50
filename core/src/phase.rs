//! The four phases of a bootstrap, named as tiny-cloud 3.x names them, and the actions
//! each one runs.

use crate::provider::Item;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Boot,
    Early,
    Main,
    Final,
}

impl Phase {
    pub const ALL: [Phase; 4] = [Phase::Boot, Phase::Early, Phase::Main, Phase::Final];

    pub const fn name(self) -> &'static str {
        match self {
            Phase::Boot => "boot",
            Phase::Early => "early",
            Phase::Main => "main",
            Phase::Final => "final",
        }
    }

    pub fn from_name(name: &[u8]) -> Option<Phase> {
        Phase::ALL.into_iter().find(|phase| phase.name().as_bytes() == name)
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

    pub const fn name(self) -> &'static str {
        match self {
            Action::ExpandRoot => "expand_root",
            Action::InstallHotplugs => "install_hotplugs",
            Action::SetEphemeralNetwork => "set_ephemeral_network",
            Action::SetDefaultInterfaces => "set_default_interfaces",
            Action::EnableSshd => "enable_sshd",
            Action::SaveUserdata => "save_userdata",
            Action::UserdataBoothooks => "userdata_boothooks",
            Action::CreateDefaultUser => "create_default_user",
            Action::SetHostname => "set_hostname",
            Action::SetSshKeys => "set_ssh_keys",
            Action::SetSshHostKeys => "set_ssh_host_keys",
            Action::UserdataUsers => "userdata_users",
            Action::UserdataSshPwauth => "userdata_ssh_pwauth",
            Action::UserdataNtp => "userdata_ntp",
            Action::UserdataApkRepos => "userdata_apk_repos",
            Action::UserdataWriteFiles => "userdata_write_files",
            Action::UserdataMounts => "userdata_mounts",
            Action::UserdataTimezone => "userdata_timezone",
            Action::UserdataBootcmd => "userdata_bootcmd",
            Action::UserdataPackages => "userdata_packages",
            Action::UserdataWriteFilesDeferred => "userdata_write_files_deferred",
            Action::RunUserdata => "run_userdata",
            Action::UserdataRuncmd => "userdata_runcmd",
            Action::BootstrapComplete => "bootstrap_complete",
            Action::UserdataPowerState => "userdata_power_state",
        }
    }

    pub fn from_name(name: &[u8]) -> Option<Action> {
        Action::ALL.into_iter().find(|action| action.name().as_bytes() == name)
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
    /// `run_userdata` limits itself to on such a boot).
    pub const fn every_boot(self) -> bool {
        matches!(self, Action::UserdataBoothooks | Action::UserdataBootcmd | Action::RunUserdata)
    }
}

impl Phase {
    /// The default actions of each phase, in order: tiny-cloud 3.x's, with the user-data
    /// actions where cloud-init runs the same work (boothooks first, `bootcmd` before the
    /// other keys, `runcmd` after the user's scripts, power last).
    pub const fn default_actions(self) -> &'static [Action] {
        match self {
            // tiny-cloud also lists install_hotplugs and set_ephemeral_network: they run
            // mdev scripts and a DHCP client, which wisp does not ship (see the README).
            Phase::Boot => &[Action::ExpandRoot, Action::SetDefaultInterfaces, Action::EnableSshd],
            Phase::Early => &[Action::SaveUserdata, Action::UserdataBoothooks],
            // The user and keys come first, so that bad user-data (which stops the phase
            // at the first user-data action) never locks the owner out.
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

pub type Plan = heapless::Vec<Action, PLAN_LIMIT>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// A name in `INIT_ACTIONS_<PHASE>` or `SKIP_INIT_ACTIONS` that is no action.
    UnknownAction { variable: &'static str },
    TooManyActions { variable: &'static str, limit: usize },
}

impl core::fmt::Display for PlanError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PlanError::UnknownAction { variable } => write!(f, "{variable} names an unknown action"),
            PlanError::TooManyActions { variable, limit } => {
                write!(f, "{variable} lists more than {limit} actions")
            }
        }
    }
}

impl Phase {
    pub const fn init_actions_variable(self) -> &'static str {
        match self {
            Phase::Boot => "INIT_ACTIONS_BOOT",
            Phase::Early => "INIT_ACTIONS_EARLY",
            Phase::Main => "INIT_ACTIONS_MAIN",
            Phase::Final => "INIT_ACTIONS_FINAL",
        }
    }

    /// The actions this phase runs: `INIT_ACTIONS_<PHASE>` when set (even to nothing),
    /// else the defaults, less those named in `SKIP_INIT_ACTIONS`. Names are separated by
    /// white space or commas; an unknown name is an error, not a silent no-op, because a
    /// misspelt skip would otherwise run the very action the user meant to skip.
    pub fn plan(self, init_actions: Option<&str>, skip_actions: &str) -> Result<Plan, PlanError> {
        const SKIP: &str = "SKIP_INIT_ACTIONS";
        for name in names(skip_actions) {
            Action::from_name(name.as_bytes()).ok_or(PlanError::UnknownAction { variable: SKIP })?;
        }
        let skipped = |action: Action| names(skip_actions).any(|name| name == action.name());
        let mut plan = Plan::new();
        let mut add = |action: Action, variable: &'static str| {
            if skipped(action) {
                return Ok(());
            }
            plan.push(action).map_err(|_| PlanError::TooManyActions { variable, limit: PLAN_LIMIT })
        };
        match init_actions {
            Some(list) => {
                let variable = self.init_actions_variable();
                for name in names(list) {
                    let action = Action::from_name(name.as_bytes())
                        .ok_or(PlanError::UnknownAction { variable })?;
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

fn names(list: &str) -> impl Iterator<Item = &str> {
    list.split(|c: char| c.is_ascii_whitespace() || c == ',').filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn unknown_names_are_errors() {
        assert_eq!(
            Phase::Main.plan(None, "set_hostnme"),
            Err(PlanError::UnknownAction { variable: "SKIP_INIT_ACTIONS" })
        );
        assert_eq!(
            Phase::Early.plan(Some("save_userdata bogus"), ""),
            Err(PlanError::UnknownAction { variable: "INIT_ACTIONS_EARLY" })
        );
    }

    #[test]
    fn plan_limit() {
        let list = "enable_sshd ".repeat(PLAN_LIMIT);
        assert_eq!(Phase::Boot.plan(Some(&list), "").unwrap().len(), PLAN_LIMIT);
        let list = "enable_sshd ".repeat(PLAN_LIMIT + 1);
        assert_eq!(
            Phase::Boot.plan(Some(&list), ""),
            Err(PlanError::TooManyActions { variable: "INIT_ACTIONS_BOOT", limit: PLAN_LIMIT })
        );
    }
}
