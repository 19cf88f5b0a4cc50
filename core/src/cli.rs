//! The command line. This contract is tested from outside and kept exactly.

use core::fmt;

use crate::clean;
use crate::config::{Cloud, CLOUD_NAMES_MESSAGE};
use crate::phase::Phase;
use crate::text::{word_index, Shown, Plain};

pub const USAGE: &str = "\
usage: wisp [--root DIR] [--config FILE] [--cloud NAME] COMMAND
  boot | early | main | final   run one phase, as the service scripts do
  bootstrap                     run the four phases in order
  imds KEY...                   print metadata: @instance-id @hostname @local-hostname
                                @ssh-keys @userdata, or a raw path of the provider
  status [--wait [--timeout SECONDS]]
                                print \"complete\" or \"incomplete\" and the instance-id
                                (exit 0 complete, 1 incomplete); --wait first waits for
                                this boot's result as `cloud-init status --wait` does,
                                then exits 0 done, 1 errors or no result within SECONDS
  mark complete|incomplete      set or clear the completion marker
  grow [MOUNTPOINT]             grow the partition and filesystem under MOUNTPOINT (default /)
  grow --image FILE --partition N   grow partition N in a disk image file
  userdata show [FILE]          print how wisp reads user-data (default: the saved copy), as JSON
  clean [--logs] [--ssh-host-keys] [--machine-id]
                                forget this instance, so that the next boot is a first boot
  net-sync                      make each interface carry the addresses AWS lists for it
  --help  --version
";

/// The exit status of a command that failed.
pub const EXIT_FAILED: i32 = 1;
/// The exit status of a command wrongly given: bad arguments, a bad configuration.
pub const EXIT_USAGE: i32 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invocation<'a> {
    /// `--root` without trailing slashes; `None` for the real root.
    pub root: Option<&'a [u8]>,
    pub config: Option<&'a [u8]>,
    /// Checked here, so that every command refuses the same bad names.
    pub cloud: Option<Cloud>,
    pub command: Command<'a>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    Phase(Phase),
    Bootstrap,
    Imds { keys: &'a [&'a [u8]] },
    /// `wait`: until this boot's phases are over, then by their errors; for at most
    /// `timeout_s` seconds when given.
    Status { wait: bool, timeout_s: Option<u32> },
    Mark { complete: bool },
    Grow { target: GrowTarget<'a> },
    /// `userdata show [FILE]`: FILE taken as given, else the saved user-data.
    Userdata { file: Option<&'a [u8]> },
    Clean(clean::Options),
    /// AWS's secondary addresses, added and removed as the metadata lists them.
    NetSync,
    Help,
    Version,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrowTarget<'a> {
    Mount(&'a [u8]),
    Image { file: &'a [u8], partition: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error<'a> {
    NoCommand,
    UnknownCommand(&'a [u8]),
    UnknownOption(&'a [u8]),
    MissingValue(&'static str),
    /// An option given twice.
    Repeated(&'static str),
    /// Arguments after a command that takes none (or no more).
    UnexpectedArgument(&'a [u8]),
    NoKeys,
    BadMark(&'a [u8]),
    BadPartition(&'a [u8]),
    /// `userdata` followed by another word than `show`.
    BadUserdata(&'a [u8]),
    /// `--image` without `--partition`, or the reverse.
    ImageNeedsPartition,
    BadCloud(&'a [u8]),
    BadTimeout(&'a [u8]),
    /// `status --timeout` without `--wait`.
    TimeoutNeedsWait,
}

impl fmt::Display for Error<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Most errors are a text and the word refused: one write of each, not one per error.
        let (text, word): (&str, Option<&[u8]>) = match *self {
            Error::NoCommand => ("no command given", None),
            Error::UnknownCommand(word) => ("unknown command ", Some(word)),
            Error::UnknownOption(word) => ("unknown option ", Some(word)),
            Error::MissingValue(option) => return write!(f, "{option} needs a value", option = Plain(option)),
            Error::Repeated(option) => return write!(f, "{option} given twice", option = Plain(option)),
            Error::UnexpectedArgument(word) => ("unexpected argument ", Some(word)),
            Error::NoKeys => ("imds needs at least one KEY", None),
            Error::BadMark(word) => ("mark takes complete or incomplete, not ", Some(word)),
            Error::BadPartition(word) => ("--partition takes a partition number from 1 to 128, not ", Some(word)),
            Error::BadUserdata(word) => ("userdata takes show, not ", Some(word)),
            Error::ImageNeedsPartition => ("grow --image FILE needs --partition N, and the reverse", None),
            Error::BadCloud(word) => {
                return write!(f, "--cloud {}: {names}", Shown(word), names = Plain(CLOUD_NAMES_MESSAGE));
            }
            Error::BadTimeout(word) => {
                // The limit as a literal, not formatted at each error: the assertion on
                // TIMEOUT_MAX_S keeps it true.
                return write!(f, "--timeout takes whole seconds from 1 to 86400, not {}", Shown(word));
            }
            Error::TimeoutNeedsWait => ("status --timeout needs --wait", None),
        };
        f.write_str(text)?;
        match word {
            Some(word) => Shown(word).fmt(f),
            None => Ok(()),
        }
    }
}

impl Command<'_> {
    /// The Cargo feature the command needs, with the command's name for the message that
    /// refuses it in a build without; `None` when every build has it.
    pub fn needs(&self) -> Option<(&'static str, &'static str)> {
        match self {
            Command::Grow { .. } => Some(("grow", "grow")),
            Command::Userdata { .. } => Some(("userdata", "cloud-config")),
            Command::NetSync => Some(("net-sync", "network")),
            Command::Status { wait: true, .. } => Some(("status --wait", "cloud-init-status")),
            _ => None,
        }
    }
}

/// The words the command line knows, options and command names alike, in the order of
/// `Word`'s variants.
const WORDS: &str = "--help -h --version --root --config --cloud bootstrap net-sync imds status mark grow userdata clean complete incomplete show --wait --timeout --image --partition --logs --ssh-host-keys --machine-id";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Word {
    Help,
    H,
    Version,
    Root,
    Config,
    Cloud,
    Bootstrap,
    NetSync,
    Imds,
    Status,
    Mark,
    Grow,
    Userdata,
    Clean,
    Complete,
    Incomplete,
    Show,
    Wait,
    Timeout,
    Image,
    Partition,
    Logs,
    SshHostKeys,
    MachineId,
}

impl Word {
    const ALL: [Word; 24] = [
        Word::Help,
        Word::H,
        Word::Version,
        Word::Root,
        Word::Config,
        Word::Cloud,
        Word::Bootstrap,
        Word::NetSync,
        Word::Imds,
        Word::Status,
        Word::Mark,
        Word::Grow,
        Word::Userdata,
        Word::Clean,
        Word::Complete,
        Word::Incomplete,
        Word::Show,
        Word::Wait,
        Word::Timeout,
        Word::Image,
        Word::Partition,
        Word::Logs,
        Word::SshHostKeys,
        Word::MachineId,
    ];
}

/// The word `arg` is, if the command line knows it (`word_index`: one search of `WORDS`
/// instead of a string comparison per `match` arm).
fn known(arg: &[u8]) -> Option<Word> {
    word_index(WORDS, arg).and_then(|index| Word::ALL.get(index).copied())
}

/// `known` of an option's name (`--name` of `--name=value`); `None` for no option.
fn known_option(arg: &[u8]) -> Option<Option<Word>> {
    option_name(arg).map(known)
}

/// Parses the arguments after the program's name.
pub fn parse<'a>(args: &'a [&'a [u8]]) -> Result<Invocation<'a>, Error<'a>> {
    let mut invocation = Invocation { root: None, config: None, cloud: None, command: Command::Help };
    let mut cloud = None;
    let mut i = 0;
    loop {
        let Some(&arg) = args.get(i) else { return Err(Error::NoCommand) };
        i += 1;
        let slot = match known_option(arg) {
            Some(Some(Word::Help | Word::H)) => return only(args, i, Command::Help, invocation),
            Some(Some(Word::Version)) => return only(args, i, Command::Version, invocation),
            Some(Some(Word::Root)) => (&mut invocation.root, "--root"),
            Some(Some(Word::Config)) => (&mut invocation.config, "--config"),
            Some(Some(Word::Cloud)) => (&mut cloud, "--cloud"),
            Some(_) => return Err(Error::UnknownOption(arg)),
            None => break,
        };
        let (slot, name) = slot;
        let value = option_value(arg, args, &mut i, name)?;
        if slot.replace(value).is_some() {
            return Err(Error::Repeated(name));
        }
    }
    // Paths are appended to the root: `--root /mnt/` is `/mnt`, and `--root /` the real root.
    invocation.root = invocation.root.map(trim_trailing_slashes).filter(|root| !root.is_empty());
    if let Some(name) = cloud {
        invocation.cloud = Some(Cloud::from_name(name).ok_or(Error::BadCloud(name))?);
    }
    let name = args[i - 1];
    let rest = &args[i..];
    invocation.command = match known(name) {
        Some(Word::Bootstrap) => no_more(rest, Command::Bootstrap)?,
        Some(Word::NetSync) => no_more(rest, Command::NetSync)?,
        Some(Word::Imds) if rest.is_empty() => return Err(Error::NoKeys),
        Some(Word::Imds) => Command::Imds { keys: rest },
        Some(Word::Status) => status(rest)?,
        Some(Word::Mark) => match rest {
            [] => return Err(Error::MissingValue("mark")),
            [_, extra, ..] => return Err(Error::UnexpectedArgument(extra)),
            [value] => match known(value) {
                Some(Word::Complete) => Command::Mark { complete: true },
                Some(Word::Incomplete) => Command::Mark { complete: false },
                _ => return Err(Error::BadMark(value)),
            },
        },
        Some(Word::Grow) => Command::Grow { target: grow_target(rest)? },
        Some(Word::Userdata) => match rest {
            [] => return Err(Error::MissingValue("userdata")),
            [other, ..] if known(other) != Some(Word::Show) => return Err(Error::BadUserdata(other)),
            [_, file, ..] if option_name(file).is_some() => return Err(Error::UnknownOption(file)),
            [_, file] => Command::Userdata { file: Some(file) },
            [_, _, extra, ..] => return Err(Error::UnexpectedArgument(extra)),
            [_] => Command::Userdata { file: None },
        },
        Some(Word::Clean) => Command::Clean(clean_options(rest)?),
        _ => match Phase::from_name(name) {
            Some(phase) => no_more(rest, Command::Phase(phase))?,
            None => return Err(Error::UnknownCommand(name)),
        },
    };
    Ok(invocation)
}

fn trim_trailing_slashes(mut path: &[u8]) -> &[u8] {
    while let [rest @ .., b'/'] = path {
        path = rest;
    }
    path
}

/// `--name` or `--name=value` gives `--name`; anything not starting with `-` is no option.
fn option_name(arg: &[u8]) -> Option<&[u8]> {
    if arg.first() != Some(&b'-') {
        return None;
    }
    Some(arg.iter().position(|&b| b == b'=').map_or(arg, |eq| &arg[..eq]))
}

fn option_value<'a>(arg: &'a [u8], args: &'a [&'a [u8]], i: &mut usize, name: &'static str) -> Result<&'a [u8], Error<'a>> {
    let value = match arg.iter().position(|&b| b == b'=') {
        Some(eq) => &arg[eq + 1..],
        None => {
            let value = args.get(*i).ok_or(Error::MissingValue(name))?;
            *i += 1;
            value
        }
    };
    if value.is_empty() {
        return Err(Error::MissingValue(name));
    }
    Ok(value)
}

fn only<'a>(args: &'a [&'a [u8]], i: usize, command: Command<'a>, mut invocation: Invocation<'a>) -> Result<Invocation<'a>, Error<'a>> {
    invocation.command = no_more(&args[i..], command)?;
    Ok(invocation)
}

fn no_more<'a>(rest: &'a [&'a [u8]], command: Command<'a>) -> Result<Command<'a>, Error<'a>> {
    match rest.first() {
        Some(extra) => Err(Error::UnexpectedArgument(extra)),
        None => Ok(command),
    }
}

/// Longest `status --wait --timeout`: a day.
pub const TIMEOUT_MAX_S: u32 = 86_400;
const _: () = assert!(TIMEOUT_MAX_S == 86_400, "BadTimeout's message says 86400");

/// `status`, `status --wait`, `status --wait --timeout SECONDS`.
fn status<'a>(rest: &'a [&'a [u8]]) -> Result<Command<'a>, Error<'a>> {
    let is_timeout = |arg: &[u8]| known_option(arg) == Some(Some(Word::Timeout));
    let more = match rest {
        [first, more @ ..] if known(first) == Some(Word::Wait) => more,
        [first, ..] if is_timeout(first) => return Err(Error::TimeoutNeedsWait),
        _ => return no_more(rest, Command::Status { wait: false, timeout_s: None }),
    };
    let mut timeout_s = None;
    let mut i = 0;
    if let Some(&arg) = more.first().filter(|arg| is_timeout(arg)) {
        i = 1;
        let value = option_value(arg, more, &mut i, "--timeout")?;
        let seconds = crate::text::decimal(value, 5).map(|n| n as u32).filter(|n| (1..=TIMEOUT_MAX_S).contains(n));
        timeout_s = Some(seconds.ok_or(Error::BadTimeout(value))?);
    }
    no_more(&more[i..], Command::Status { wait: true, timeout_s })
}

fn grow_target<'a>(rest: &'a [&'a [u8]]) -> Result<GrowTarget<'a>, Error<'a>> {
    let (mut image, mut partition, mut mount) = (None, None, None);
    let mut i = 0;
    while let Some(&arg) = rest.get(i) {
        i += 1;
        match known_option(arg) {
            Some(Some(Word::Image)) => {
                let value = option_value(arg, rest, &mut i, "--image")?;
                if image.replace(value).is_some() {
                    return Err(Error::Repeated("--image"));
                }
            }
            Some(Some(Word::Partition)) => {
                let value = option_value(arg, rest, &mut i, "--partition")?;
                let number = parse_partition(value).ok_or(Error::BadPartition(value))?;
                if partition.replace(number).is_some() {
                    return Err(Error::Repeated("--partition"));
                }
            }
            Some(_) => return Err(Error::UnknownOption(arg)),
            None if mount.is_none() => mount = Some(arg),
            None => return Err(Error::UnexpectedArgument(arg)),
        }
    }
    match (image, partition, mount) {
        (Some(file), Some(partition), None) => Ok(GrowTarget::Image { file, partition }),
        (None, None, mount) => Ok(GrowTarget::Mount(mount.unwrap_or(b"/"))),
        (Some(_), Some(_), Some(extra)) => Err(Error::UnexpectedArgument(extra)),
        _ => Err(Error::ImageNeedsPartition),
    }
}

/// `clean`'s flags, in any order; a flag given twice is given.
fn clean_options<'a>(rest: &'a [&'a [u8]]) -> Result<clean::Options, Error<'a>> {
    let mut options = clean::Options::default();
    for &arg in rest {
        match known(arg) {
            Some(Word::Logs) => options.logs = true,
            Some(Word::SshHostKeys) => options.ssh_host_keys = true,
            Some(Word::MachineId) => options.machine_id = true,
            _ if option_name(arg).is_some() => return Err(Error::UnknownOption(arg)),
            _ => return Err(Error::UnexpectedArgument(arg)),
        }
    }
    Ok(options)
}

/// GPT allows 128 entries in the usual array; MBR has 4 primaries.
fn parse_partition(digits: &[u8]) -> Option<u32> {
    let n = crate::text::decimal(digits, 3)? as u32;
    (1..=128).contains(&n).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> Result<Invocation<'static>, Error<'static>> {
        crate::fuzz::seed("cli", line.replace(' ', "\0").as_bytes());
        let args: Vec<&'static [u8]> = line.split_whitespace().map(|w| &*Box::leak(w.as_bytes().to_vec().into_boxed_slice())).collect();
        parse(Box::leak(args.into_boxed_slice()))
    }

    fn command(line: &str) -> Command<'static> {
        run(line).unwrap().command
    }

    #[test]
    fn commands() {
        assert_eq!(command("boot"), Command::Phase(Phase::Boot));
        assert_eq!(command("final"), Command::Phase(Phase::Final));
        assert_eq!(command("bootstrap"), Command::Bootstrap);
        let Command::Imds { keys } = command("imds @hostname /latest/meta-data/ami-id") else { panic!() };
        assert_eq!(keys, [&b"@hostname"[..], b"/latest/meta-data/ami-id"]);
        assert_eq!(command("status"), Command::Status { wait: false, timeout_s: None });
        assert_eq!(command("status --wait"), Command::Status { wait: true, timeout_s: None });
        assert_eq!(command("status --wait --timeout 90"), Command::Status { wait: true, timeout_s: Some(90) });
        assert_eq!(command("status --wait --timeout=86400"), Command::Status { wait: true, timeout_s: Some(86_400) });
        assert_eq!(command("mark complete"), Command::Mark { complete: true });
        assert_eq!(command("mark incomplete"), Command::Mark { complete: false });
        assert_eq!(command("grow"), Command::Grow { target: GrowTarget::Mount(b"/") });
        assert_eq!(command("grow /srv"), Command::Grow { target: GrowTarget::Mount(b"/srv") });
        assert_eq!(
            command("grow --image disk.img --partition 2"),
            Command::Grow { target: GrowTarget::Image { file: b"disk.img", partition: 2 } }
        );
        assert_eq!(
            command("grow --partition=128 --image=d"),
            Command::Grow { target: GrowTarget::Image { file: b"d", partition: 128 } }
        );
        assert_eq!(command("userdata show"), Command::Userdata { file: None });
        assert_eq!(command("userdata show /tmp/ud"), Command::Userdata { file: Some(b"/tmp/ud") });
        assert_eq!(command("clean"), Command::Clean(clean::Options::default()));
        assert_eq!(
            command("clean --machine-id --logs --ssh-host-keys"),
            Command::Clean(clean::Options { logs: true, ssh_host_keys: true, machine_id: true })
        );
        assert_eq!(command("clean --logs --logs"), Command::Clean(clean::Options { logs: true, ..Default::default() }));
        assert_eq!(command("--help"), Command::Help);
        assert_eq!(command("-h"), Command::Help);
        assert_eq!(command("--version"), Command::Version);
    }

    #[test]
    fn each_word_is_known_by_its_own_name() {
        assert_eq!(WORDS.split(' ').count(), Word::ALL.len());
        for (name, word) in WORDS.split(' ').zip(Word::ALL) {
            assert_eq!(known(name.as_bytes()), Some(word), "{name}");
        }
        assert_eq!(known(b"--ssh-host-keys"), Some(Word::SshHostKeys));
        assert_eq!(known(b"net-sync"), Some(Word::NetSync));
        for unknown in [&b""[..], b"clean ", b"-", b"--", b"Clean", b"\xff"] {
            assert_eq!(known(unknown), None, "{unknown:?}");
        }
    }

    #[test]
    fn commands_a_build_may_lack() {
        assert_eq!(command("grow /").needs(), Some(("grow", "grow")));
        assert_eq!(command("userdata show").needs(), Some(("userdata", "cloud-config")));
        assert_eq!(command("net-sync").needs(), Some(("net-sync", "network")));
        assert_eq!(command("status --wait").needs(), Some(("status --wait", "cloud-init-status")));
        for always in ["status", "boot", "bootstrap", "imds @hostname", "mark complete", "clean"] {
            assert_eq!(command(always).needs(), None, "{always}");
        }
    }

    #[test]
    fn options_before_the_command() {
        let invocation = run("--root /mnt --config=/etc/x.conf --cloud aws main").unwrap();
        assert_eq!(invocation.root, Some(&b"/mnt"[..]));
        assert_eq!(invocation.config, Some(&b"/etc/x.conf"[..]));
        assert_eq!(invocation.cloud, Some(Cloud::Aws));
        assert_eq!(invocation.command, Command::Phase(Phase::Main));
        assert_eq!(run("--root=/r --help").unwrap().root, Some(&b"/r"[..]));
        assert_eq!(run("--root /mnt// main").unwrap().root, Some(&b"/mnt"[..]));
        assert_eq!(run("--root / main").unwrap().root, None);
        assert_eq!(run("--root=// main").unwrap().root, None);
    }

    #[test]
    fn usage_errors() {
        let cases: [(&str, Error<'static>); 30] = [
            ("", Error::NoCommand),
            ("--root /mnt", Error::NoCommand),
            ("launch", Error::UnknownCommand(b"launch")),
            ("--rooot /x boot", Error::UnknownOption(b"--rooot")),
            ("--root", Error::MissingValue("--root")),
            ("--root= boot", Error::MissingValue("--root")),
            ("--cloud a --cloud b boot", Error::Repeated("--cloud")),
            ("boot now", Error::UnexpectedArgument(b"now")),
            ("--help me", Error::UnexpectedArgument(b"me")),
            ("imds", Error::NoKeys),
            ("mark", Error::MissingValue("mark")),
            ("mark done", Error::BadMark(b"done")),
            ("mark complete again", Error::UnexpectedArgument(b"again")),
            ("status --wait now", Error::UnexpectedArgument(b"now")),
            ("status --wait --wait", Error::UnexpectedArgument(b"--wait")),
            ("status --timeout 5", Error::TimeoutNeedsWait),
            ("status --wait --timeout 0", Error::BadTimeout(b"0")),
            ("status --wait --timeout 86401", Error::BadTimeout(b"86401")),
            ("status --wait --timeout 1.5", Error::BadTimeout(b"1.5")),
            ("status --wait --timeout", Error::MissingValue("--timeout")),
            ("--cloud mars status", Error::BadCloud(b"mars")),
            ("grow --image d", Error::ImageNeedsPartition),
            ("grow --image d --partition 0", Error::BadPartition(b"0")),
            ("grow / /srv", Error::UnexpectedArgument(b"/srv")),
            ("userdata", Error::MissingValue("userdata")),
            ("userdata dump", Error::BadUserdata(b"dump")),
            ("userdata show a b", Error::UnexpectedArgument(b"b")),
            ("userdata show --raw", Error::UnknownOption(b"--raw")),
            ("clean --seed", Error::UnknownOption(b"--seed")),
            ("clean /var/lib/cloud", Error::UnexpectedArgument(b"/var/lib/cloud")),
        ];
        for (line, error) in cases {
            assert_eq!(run(line), Err(error), "{line:?}");
        }
        assert_eq!(run("grow --partition 129 --image d"), Err(Error::BadPartition(b"129")));
        assert_eq!(run("grow --size 1"), Err(Error::UnknownOption(b"--size")));
        assert_eq!(Error::UnknownCommand(b"x\x1b").to_string(), "unknown command x\\x1b");
        assert_eq!(Error::BadUserdata(b"dump").to_string(), "userdata takes show, not dump");
        assert_eq!(Error::BadTimeout(b"86401").to_string(), std::format!("--timeout takes whole seconds from 1 to {TIMEOUT_MAX_S}, not 86401"));
        assert_eq!(
            Error::BadCloud(b"mars").to_string(),
            "--cloud mars: expected auto, aws, azure, gcp, oci, nocloud, configdrive, openstack, hetzner, digitalocean, scaleway, incus or vultr"
        );
        // Every command refuses a bad cloud name, the read-only ones too.
        for line in ["--cloud mars status", "--cloud mars imds @hostname", "--cloud=mars boot", "--cloud mars userdata show"] {
            assert_eq!(run(line), Err(Error::BadCloud(b"mars")), "{line}");
        }
    }
}
