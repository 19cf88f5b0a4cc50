# Shared by the ci/ scripts: install steps and output helpers. Sourced, not run.

step() { printf '\n== %s\n' "$*"; }

need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "ci: run as root (the tests make network namespaces and loop devices)" >&2
        exit 1
    fi
}

# Debian packages the tests use, installed once; apt is asked only when one is missing.
DEBIAN_PACKAGES="iproute2 util-linux e2fsprogs fdisk gdisk xfsprogs btrfs-progs cloud-guest-utils cloud-init \
    cloud-image-utils genisoimage dosfstools mtools openssh-client make mandoc systemd"

install_test_tools() {
    local missing=()
    for package in $DEBIAN_PACKAGES; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        step "installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if ! python3 -c 'import pytest' 2>/dev/null; then
        step "installing pytest"
        python3 -m pip install -q pytest
    fi
    if ! python3 -c 'import yaml' 2>/dev/null; then
        step "installing PyYAML"
        python3 -m pip install -q pyyaml
    fi
}

# The aarch64 cross build: rustup's target, Debian's cross gcc (linker driver) and
# qemu-user (runs the binary and core's tests on this x86_64 machine).
AARCH64_PACKAGES="gcc-aarch64-linux-gnu qemu-user"

install_aarch64_tools() {
    local missing=()
    for package in $AARCH64_PACKAGES; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        step "installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if ! rustup target list --installed | grep -qx aarch64-unknown-linux-gnu; then
        step "installing Rust's aarch64-unknown-linux-gnu target"
        rustup target add aarch64-unknown-linux-gnu
    fi
}
