// origin provides `_start`; the C runtime's start files would define it a second time.
fn main() {
    println!("cargo:rustc-link-arg-bins=-nostartfiles");
    println!("cargo:rustc-link-arg-bins=-static");
}
