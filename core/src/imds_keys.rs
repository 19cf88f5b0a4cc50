//! `wisp imds KEY...`: what each key names and how its value is printed. A key is an item
//! every cloud offers (`@instance-id`: its value, a line; `@userdata` byte for byte) or
//! else a path of the cloud's service, printed as served; values are printed in the order
//! of the keys, and the first key that fails stops the command.

use core::fmt;

use crate::cli::{EXIT_FAILED, EXIT_USAGE};
use crate::provider::metadata::Metadata;
use crate::provider::Item;
use crate::text::Shown;

/// Longest path a key may name, with its leading `/`.
pub const PATH_LIMIT: usize = 511;

/// The items the keys name, fetched together before anything is printed.
pub fn items(keys: &[&[u8]]) -> heapless::Vec<Item, 5> {
    Item::ALL.into_iter().filter(|item| keys.iter().any(|key| item.key().as_bytes() == *key)).collect()
}

/// Why a key printed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyError<'k, E> {
    /// `@` and a name no item has.
    UnknownItem(&'k [u8]),
    NotUtf8(&'k [u8]),
    PathTooLong,
    /// The service has nothing at the path (404).
    NotFound(&'k [u8]),
    /// The service could not be asked.
    Service(E),
}

impl<E> KeyError<'_, E> {
    /// A key mistyped is a usage error; a service that fails, a failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            KeyError::UnknownItem(_) | KeyError::NotUtf8(_) | KeyError::PathTooLong => EXIT_USAGE,
            KeyError::NotFound(_) | KeyError::Service(_) => EXIT_FAILED,
        }
    }
}

impl<E: fmt::Display> fmt::Display for KeyError<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (before, key, after): (&str, &[u8], &str) = match self {
            KeyError::UnknownItem(key) => ("unknown key ", key, ": known keys are @instance-id @hostname @local-hostname @ssh-keys @userdata"),
            KeyError::NotUtf8(key) => ("path ", key, " is not UTF-8"),
            KeyError::PathTooLong => ("path longer than 511 bytes", b"", ""),
            KeyError::NotFound(key) => ("", key, ": not found"),
            KeyError::Service(e) => return e.fmt(f),
        };
        f.write_str(before)?;
        Shown(key).fmt(f)?;
        f.write_str(after)
    }
}

/// Fetches a metadata path into the buffer given: the value (`None` for a 404) borrows it.
pub type GetPath<'f, E> = dyn for<'b> FnMut(&str, &'b mut [u8]) -> Result<Option<&'b [u8]>, E> + 'f;

/// Prints each key's value through `print`: items from `metadata` (fetched before, see
/// `items`), paths as `get_path` fetches them into `buf` (`None` for a 404).
pub fn print<'k, E>(
    keys: &[&'k [u8]],
    metadata: &Metadata<'_>,
    buf: &mut [u8],
    get_path: &mut GetPath<'_, E>,
    print: &mut dyn FnMut(&[u8]),
) -> Result<(), KeyError<'k, E>> {
    for &key in keys {
        let value = match Item::from_key(key) {
            Some(Item::UserData) => {
                print(metadata.get(Item::UserData).unwrap_or(b""));
                continue;
            }
            Some(item) => metadata.get(item).unwrap_or(b""),
            None if key.first() == Some(&b'@') => return Err(KeyError::UnknownItem(key)),
            None => {
                let path = core::str::from_utf8(key).map_err(|_| KeyError::NotUtf8(key))?;
                let mut absolute = heapless::String::<PATH_LIMIT>::new();
                let prefix = if path.starts_with('/') { "" } else { "/" };
                absolute.push_str(prefix).and_then(|()| absolute.push_str(path)).map_err(|_| KeyError::PathTooLong)?;
                get_path(&absolute, buf).map_err(KeyError::Service)?.ok_or(KeyError::NotFound(key))?
            }
        };
        // A value is a line: one line break after it, never two.
        print(value);
        if !value.is_empty() && !value.ends_with(b"\n") {
            print(b"\n");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::metadata::Metadata;

    fn run<'k>(keys: &[&'k [u8]], metadata: &Metadata<'_>, served: &[(&str, &[u8])]) -> (Vec<u8>, Vec<String>, Result<(), KeyError<'k, &'static str>>) {
        let mut out = Vec::new();
        let mut asked = Vec::new();
        let mut buf = [0u8; 64];
        let result = print(
            keys,
            metadata,
            &mut buf,
            &mut |path, buf| {
                asked.push(path.to_string());
                match served.iter().find(|(p, _)| *p == path) {
                    Some((_, body)) if *body == b"fail" => Err("connection refused"),
                    Some((_, body)) => {
                        buf[..body.len()].copy_from_slice(body);
                        Ok(Some(&buf[..body.len()]))
                    }
                    None => Ok(None),
                }
            },
            &mut |bytes| out.extend_from_slice(bytes),
        );
        (out, asked, result)
    }

    fn metadata_with(values: &[(Item, &[u8])], storage: &mut Vec<u8>) -> Metadata<'static> {
        let storage: &'static mut [u8] = Box::leak(core::mem::take(storage).into_boxed_slice());
        let mut metadata = Metadata::new(storage);
        for &(item, value) in values {
            metadata.set(item, value).unwrap();
        }
        metadata
    }

    #[test]
    fn items_are_fetched_once_whatever_the_keys() {
        let keys: [&[u8]; 8] = [b"@ssh-keys", b"@instance-id", b"latest/meta-data/x", b"@instance-id", b"@instance-id", b"@instance-id", b"@instance-id", b"@bogus"];
        assert_eq!(items(&keys).as_slice(), [Item::InstanceId, Item::SshKeys]);
    }

    #[test]
    fn values_in_key_order_each_a_line_user_data_as_is() {
        let mut storage = vec![0u8; crate::provider::metadata::METADATA_SIZE];
        let metadata = metadata_with(&[(Item::InstanceId, b"i-1"), (Item::SshKeys, b"ssh-ed25519 A\n"), (Item::UserData, b"#!/bin/sh\necho")], &mut storage);
        let keys: [&[u8]; 5] = [b"@userdata", b"@instance-id", b"@ssh-keys", b"latest/meta-data/ami-id", b"/latest/x"];
        let (out, asked, result) = run(&keys, &metadata, &[("/latest/meta-data/ami-id", b"ami-9"), ("/latest/x", b"")]);
        assert_eq!(result, Ok(()));
        assert_eq!(String::from_utf8(out).unwrap(), "#!/bin/sh\nechoi-1\nssh-ed25519 A\nami-9\n");
        assert_eq!(asked, ["/latest/meta-data/ami-id", "/latest/x"]);
    }

    #[test]
    fn the_first_failing_key_stops_with_its_exit_code() {
        let mut storage = vec![0u8; crate::provider::metadata::METADATA_SIZE];
        let metadata = metadata_with(&[(Item::InstanceId, b"i-1")], &mut storage);
        let long = [b'a'; PATH_LIMIT];
        let cases: [(&[u8], &str, i32); 5] = [
            (b"@bogus", "unknown key @bogus: known keys are @instance-id @hostname @local-hostname @ssh-keys @userdata", 2),
            (b"a\xff", "path a\\xff is not UTF-8", 2),
            (&long, "path longer than 511 bytes", 2),
            (b"missing", "missing: not found", 1),
            (b"down", "connection refused", 1),
        ];
        for (key, message, code) in cases {
            let (out, _, result) = run(&[b"@instance-id", key, b"@instance-id"], &metadata, &[("/down", b"fail")]);
            let error = result.unwrap_err();
            assert_eq!((error.to_string().as_str(), error.exit_code()), (message, code));
            // What came before was printed; nothing after.
            assert_eq!(out, b"i-1\n");
        }
        // 510 bytes and the added `/` fit.
        let (_, asked, _) = run(&[&long[1..]], &metadata, &[]);
        assert_eq!(asked[0].len(), PATH_LIMIT);
    }
}
