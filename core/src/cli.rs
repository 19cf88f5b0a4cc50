//! The command line. This contract is tested from outside and kept exactly.

use core::fmt;

use crate::phase::Phase;

pub const USAGE: &str = "\
usage: wisp [--root DIR] [--config FILE] [--cloud NAME] COMMAND
  boot | early | main | final   run one phase, as the service scripts do
  bootstrap                     run the four phases in order
  imds KEY...                   print metadata: @instance-id @hostname @local-hostname
                                @ssh-keys @userdata, or a raw path of the provider
  status [--wait]               print \"complete\" or \"incomplete\" and the instance-id
                                (exit 0 complete, 1 incomplete); --wait first waits for
                                this boot's result as `cloud-init status --wait` does,
                                then exits 0 done, 1 errors
  mark complete|incomplete      set or clear the completion marker
  grow [MOUNTPOINT]             grow the partition and filesystem under MOUNTPOINT (default /)
  grow --image FILE --partition N   grow partition N in a disk image file
  userdata show [FILE]          print how wisp reads user-data (default: the saved copy), as JSON
  net-sync                      make each interface carry the addresses AWS lists for it
  --help  --version
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invocation<'a> {
    pub root: Option<&'a [u8]>,
    pub config: Option<&'a [u8]>,
    pub cloud: Option<&'a [u8]>,
    pub command: Command<'a>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    Phase(Phase),
    Bootstrap,
    Imds { keys: &'a [&'a [u8]] },
    /// `wait`: until this boot's phases are over, then by their errors.
    Status { wait: bool },
    Mark { complete: bool },
    Grow { target: GrowTarget<'a> },
    /// `userdata show [FILE]`: FILE taken as given, else the saved user-data.
    Userdata { file: Option<&'a [u8]> },
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
}

impl fmt::Display for Error<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |f: &mut fmt::Formatter<'_>, bytes: &[u8]| -> fmt::Result {
            for &b in bytes {
                if (0x20..0x7f).contains(&b) {
                    write!(f, "{}", b as char)?;
                } else {
                    write!(f, "\\x{b:02x}")?;
                }
            }
            Ok(())
        };
        match *self {
            Error::NoCommand => f.write_str("no command given"),
            Error::UnknownCommand(word) => {
                f.write_str("unknown command ")?;
                shown(f, word)
            }
            Error::UnknownOption(word) => {
                f.write_str("unknown option ")?;
                shown(f, word)
            }
            Error::MissingValue(option) => write!(f, "{option} needs a value"),
            Error::Repeated(option) => write!(f, "{option} given twice"),
            Error::UnexpectedArgument(word) => {
                f.write_str("unexpected argument ")?;
                shown(f, word)
            }
            Error::NoKeys => f.write_str("imds needs at least one KEY"),
            Error::BadMark(word) => {
                f.write_str("mark takes complete or incomplete, not ")?;
                shown(f, word)
            }
            Error::BadPartition(word) => {
                f.write_str("--partition takes a partition number from 1 to 128, not ")?;
                shown(f, word)
            }
            Error::BadUserdata(word) => {
                f.write_str("userdata takes show, not ")?;
                shown(f, word)
            }
            Error::ImageNeedsPartition => f.write_str("grow --image FILE needs --partition N, and the reverse"),
        }
    }
}

/// Parses the arguments after the program's name.
pub fn parse<'a>(args: &'a [&'a [u8]]) -> Result<Invocation<'a>, Error<'a>> {
    let mut invocation = Invocation { root: None, config: None, cloud: None, command: Command::Help };
    let mut i = 0;
    loop {
        let Some(&arg) = args.get(i) else { return Err(Error::NoCommand) };
        i += 1;
        let slot = match option_name(arg) {
            Some(b"--help") | Some(b"-h") => return only(args, i, Command::Help, invocation),
            Some(b"--version") => return only(args, i, Command::Version, invocation),
            Some(b"--root") => (&mut invocation.root, "--root"),
            Some(b"--config") => (&mut invocation.config, "--config"),
            Some(b"--cloud") => (&mut invocation.cloud, "--cloud"),
            Some(_) => return Err(Error::UnknownOption(arg)),
            None => break,
        };
        let (slot, name) = slot;
        let value = option_value(arg, args, &mut i, name)?;
        if slot.replace(value).is_some() {
            return Err(Error::Repeated(name));
        }
    }
    let word = args[i - 1];
    let rest = &args[i..];
    invocation.command = match word {
        b"bootstrap" => no_more(rest, Command::Bootstrap)?,
        b"net-sync" => no_more(rest, Command::NetSync)?,
        b"imds" if rest.is_empty() => return Err(Error::NoKeys),
        b"imds" => Command::Imds { keys: rest },
        b"status" => match rest {
            [b"--wait", more @ ..] => no_more(more, Command::Status { wait: true })?,
            _ => no_more(rest, Command::Status { wait: false })?,
        },
        b"mark" => match rest {
            [b"complete"] => Command::Mark { complete: true },
            [b"incomplete"] => Command::Mark { complete: false },
            [] => return Err(Error::MissingValue("mark")),
            [other] => return Err(Error::BadMark(other)),
            [_, extra, ..] => return Err(Error::UnexpectedArgument(extra)),
        },
        b"grow" => Command::Grow { target: grow_target(rest)? },
        b"userdata" => match rest {
            [] => return Err(Error::MissingValue("userdata")),
            [b"show", file, ..] if option_name(file).is_some() => return Err(Error::UnknownOption(file)),
            [b"show", file] => Command::Userdata { file: Some(file) },
            [b"show", _, extra, ..] => return Err(Error::UnexpectedArgument(extra)),
            [b"show"] => Command::Userdata { file: None },
            [other, ..] => return Err(Error::BadUserdata(other)),
        },
        _ => match Phase::from_name(word) {
            Some(phase) => no_more(rest, Command::Phase(phase))?,
            None => return Err(Error::UnknownCommand(word)),
        },
    };
    Ok(invocation)
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

fn grow_target<'a>(rest: &'a [&'a [u8]]) -> Result<GrowTarget<'a>, Error<'a>> {
    let (mut image, mut partition, mut mount) = (None, None, None);
    let mut i = 0;
    while let Some(&arg) = rest.get(i) {
        i += 1;
        match option_name(arg) {
            Some(b"--image") => {
                let value = option_value(arg, rest, &mut i, "--image")?;
                if image.replace(value).is_some() {
                    return Err(Error::Repeated("--image"));
                }
            }
            Some(b"--partition") => {
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

/// GPT allows 128 entries in the usual array; MBR has 4 primaries.
fn parse_partition(digits: &[u8]) -> Option<u32> {
    let n = crate::text::decimal(digits, 3)? as u32;
    (1..=128).contains(&n).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> Result<Invocation<'static>, Error<'static>> {
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
        assert_eq!(command("status"), Command::Status { wait: false });
        assert_eq!(command("status --wait"), Command::Status { wait: true });
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
        assert_eq!(command("--help"), Command::Help);
        assert_eq!(command("-h"), Command::Help);
        assert_eq!(command("--version"), Command::Version);
    }

    #[test]
    fn options_before_the_command() {
        let invocation = run("--root /mnt --config=/etc/x.conf --cloud aws main").unwrap();
        assert_eq!(invocation.root, Some(&b"/mnt"[..]));
        assert_eq!(invocation.config, Some(&b"/etc/x.conf"[..]));
        assert_eq!(invocation.cloud, Some(&b"aws"[..]));
        assert_eq!(invocation.command, Command::Phase(Phase::Main));
        assert_eq!(run("--root=/r --help").unwrap().root, Some(&b"/r"[..]));
    }

    #[test]
    fn usage_errors() {
        let cases: [(&str, Error<'static>); 21] = [
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
            ("grow --image d", Error::ImageNeedsPartition),
            ("grow --image d --partition 0", Error::BadPartition(b"0")),
            ("grow / /srv", Error::UnexpectedArgument(b"/srv")),
            ("userdata", Error::MissingValue("userdata")),
            ("userdata dump", Error::BadUserdata(b"dump")),
            ("userdata show a b", Error::UnexpectedArgument(b"b")),
            ("userdata show --raw", Error::UnknownOption(b"--raw")),
        ];
        for (line, error) in cases {
            assert_eq!(run(line), Err(error), "{line:?}");
        }
        assert_eq!(run("grow --partition 129 --image d"), Err(Error::BadPartition(b"129")));
        assert_eq!(run("grow --size 1"), Err(Error::UnknownOption(b"--size")));
        assert_eq!(Error::UnknownCommand(b"x\x1b").to_string(), "unknown command x\\x1b");
        assert_eq!(Error::BadUserdata(b"dump").to_string(), "userdata takes show, not dump");
    }
}
