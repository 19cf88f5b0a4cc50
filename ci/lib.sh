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
    cloud-image-utils genisoimage dosfstools mtools openssh-client dropbear-bin"

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
