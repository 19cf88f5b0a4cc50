#![no_main]
//! /etc/passwd, /etc/group and /etc/shadow from an image: a user or group added is found
//! afterwards, and no line wisp writes holds a name useradd would refuse.
use libfuzzer_sys::fuzz_target;
use wisp_core::accounts::{add_group, add_member, add_user, check_name, find_group, find_user, free_id, User};
use wisp_core::shadow::set_shadow_password;
use wisp_fuzz::split;

fuzz_target!(|data: &[u8]| {
    let (name, file) = split(data);
    let mut out = vec![0u8; 16 * 1024];
    if let Some(id) = free_id(file, file) {
        let user = User { name, uid: id, gid: id, home: b"/home/x", shell: b"/bin/sh" };
        if let Ok(len) = add_user(file, &user, b"", &mut out) {
            assert_eq!(check_name(name), Ok(()));
            if find_user(file, name).is_none() {
                assert_eq!(find_user(&out[..len], name).map(|u| u.uid), Some(id));
            }
        }
        if let Ok(len) = add_group(file, name, id, &mut out) {
            if find_group(file, name).is_none() {
                assert_eq!(find_group(&out[..len], name).map(|g| g.gid), Some(id));
            }
        }
    }
    if let Ok(Some(len)) = add_member(file, b"wheel", b"alpine", &mut out) {
        assert!(find_group(&out[..len], b"wheel").is_some_and(|g| g.has_member(b"alpine")));
    }
    let _ = set_shadow_password(file, b"alpine", b"!", 1, &mut out);
});
