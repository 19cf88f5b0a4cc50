//! The names of the configuration variables wisp knows, as one list of words: what
//! `config` reads and what `phase` names an action list by. Apart from both, so that
//! neither imports the other for them.

/// Every variable wisp knows, as one list of words searched once: the numeric ones in the
/// order of `config`'s `NUMBERS`, `INIT_ACTIONS_<PHASE>` in the order of `Phase` and
/// SKIP_INIT_ACTIONS (as `Config::action_lines` holds their lines), then the others, each
/// one's index named below; last the two words an error names that are no variable.
pub const VARIABLES: &str = "IMDS_TOKEN_TTL WISP_HTTP_CONNECT_MS WISP_HTTP_READ_MS WISP_HTTP_TOTAL_MS WISP_HTTP_BACKOFF_MS \
    WISP_HTTP_BACKOFF_MAX_MS WISP_DHCP_MS WISP_USERDATA_LIMIT \
    INIT_ACTIONS_BOOT INIT_ACTIONS_EARLY INIT_ACTIONS_MAIN INIT_ACTIONS_FINAL SKIP_INIT_ACTIONS \
    CLOUD CLOUD_USER TINY_CLOUD_VAR TINY_CLOUD_LOGS HOTPLUG_TYPE HOTPLUG_MODULES line value";
/// The index of `INIT_ACTIONS_BOOT`, the first of `Phase`'s variables.
pub const FIRST_INIT_ACTIONS: usize = 8;
/// The index of each variable named in code, by the variable's name.
pub const SKIP_INIT_ACTIONS: usize = 12;
pub const CLOUD: usize = 13;
pub const CLOUD_USER: usize = 14;
pub const TINY_CLOUD_VAR: usize = 15;
pub const TINY_CLOUD_LOGS: usize = 16;
pub const HOTPLUG_TYPE: usize = 17;
pub const HOTPLUG_MODULES: usize = 18;
pub const LINE: usize = 19;
pub const VALUE: usize = 20;
