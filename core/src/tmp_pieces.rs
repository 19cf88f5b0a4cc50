// TEMPORARY (not to be committed): stand-ins until the pieces branch lands.
pub mod shadow {
    use crate::accounts::AccountsError;
    pub fn set_shadow_password(shadow: &[u8], name: &[u8], hash: &[u8], days: u64, out: &mut [u8]) -> Result<usize, AccountsError> {
        let mut o = crate::out::Out::new(out);
        let mut found = false;
        for line in shadow.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let fields: heapless::Vec<&[u8], 9> = line.split(|&b| b == b':').collect();
            if fields.first() == Some(&name) && fields.len() >= 3 {
                found = true;
                o.put_all(&[name, b":", hash, b":"]).unwrap(); o.put_decimal(days).unwrap();
                for f in &fields[3..] { o.put_all(&[b":", f]).unwrap(); }
                o.put(b"\n").unwrap();
            } else { o.put_all(&[line, b"\n"]).unwrap(); }
        }
        if !found { return Err(AccountsError::MissingGroup); }
        Ok(o.len())
    }
}
pub mod timezone {
    pub fn validate(name: &str) -> Result<(), &'static str> {
        if name.is_empty() || name.contains("..") || name.starts_with('/') { return Err("bad name"); }
        Ok(())
    }
}
