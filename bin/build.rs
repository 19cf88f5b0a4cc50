// origin provides `_start`; the C runtime's start files would define it a second time.
// The linker script fragment drops the unwind tables, which a binary that never unwinds
// does not read (see discard-unwind.ld).
fn main() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/discard-unwind.ld");
    println!("cargo:rerun-if-changed={script}");
    println!("cargo:rustc-link-arg-bins=-nostartfiles");
    println!("cargo:rustc-link-arg-bins=-static");
    println!("cargo:rustc-link-arg-bins=-Wl,--no-eh-frame-hdr");
    println!("cargo:rustc-link-arg-bins=-Wl,-T,{script}");
}
