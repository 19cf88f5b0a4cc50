# Shared by the ci/ scripts: install steps and output helpers. Sourced, not run.

step() { printf '\n== %s\n' "$*"; }

need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "ci: run as root (the tests make network namespaces and loop devices)" >&2
        exit 1
    fi
}

# Debian's own interpreter, whatever `python3` the PATH finds first: its modules come
# from Debian packages (below), and Debian's python3 refuses `pip install` (PEP 668).
PYTHON=/usr/bin/python3

# Debian packages the demo and the tests use, installed once; apt is asked only when one
# is missing. busybox-static is the scratch roots' /bin/sh: user-data's commands run
# chrooted into the root they are given.
DEBIAN_PACKAGES="python3 python3-pytest python3-yaml iproute2 dnsmasq-base util-linux e2fsprogs fdisk gdisk xfsprogs btrfs-progs \
    cloud-guest-utils cloud-init cloud-image-utils genisoimage dosfstools mtools openssh-client busybox-static strace make mandoc systemd dropbear-bin"

# The Debian packages named that are not installed yet, installed; apt is asked only then.
install_missing() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        step "installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

install_test_tools() {
    # shellcheck disable=SC2086 # a list of package names
    install_missing $DEBIAN_PACKAGES
}

# The aarch64 cross build: rustup's target, Debian's cross gcc (linker driver) and
# qemu-user (runs the binary and core's tests on this x86_64 machine).
AARCH64_PACKAGES="gcc-aarch64-linux-gnu qemu-user"

install_aarch64_tools() {
    # shellcheck disable=SC2086 # a list of package names
    install_missing $AARCH64_PACKAGES
    if ! rustup target list --installed | grep -qx aarch64-unknown-linux-gnu; then
        step "installing Rust's aarch64-unknown-linux-gnu target"
        rustup target add aarch64-unknown-linux-gnu
    fi
}

# A QEMU system emulator package (qemu-system-arm holds qemu-system-aarch64). Where the
# machine has the backported qemu-utils, bookworm's own QEMU conflicts with it, so the
# emulator comes from bookworm-backports too (see ci/vm-setup).
install_qemu_system() {
    local package=$1
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" && return
    step "installing $package"
    if dpkg-query -W -f='${Version}' qemu-utils 2>/dev/null | grep -q bpo; then
        if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
            printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                > /etc/apt/sources.list.d/wisp-backports.sources
        fi
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t bookworm-backports "$package" >/dev/null
    else
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" >/dev/null
    fi
}

# Debian's arm64 cloud kernel and busybox for the aarch64 first boot, fetched by apt with
# a private state directory (the machine's own apt configuration is left as it is) and
# unpacked under target/vm-arm64, never installed.
fetch_arm64_guest() {
    local cache=target/vm-arm64
    [ -e "$cache/ok" ] && return
    step "fetching Debian's arm64 cloud kernel and busybox"
    rm -rf "$cache"
    mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial" "$cache/debs" "$cache/kernel"
    local apt=(-o "Dir::State::Lists=$PWD/$cache/apt/lists" -o "Dir::Cache=$PWD/$cache/apt/cache"
        -o APT::Architecture=arm64 -o APT::Architectures=arm64)
    apt-get "${apt[@]}" update -qq
    local image
    image=$(apt-cache "${apt[@]}" depends linux-image-cloud-arm64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    (cd "$cache/debs" && apt-get "${apt[@]}" download -qq "$image" busybox-static 2>/dev/null)
    dpkg-deb -x "$cache"/debs/linux-image-*.deb "$cache/kernel/root"
    dpkg-deb -x "$cache"/debs/busybox-static_*.deb "$cache/busybox"
    rm -rf "$cache/apt" "$cache/debs"
    touch "$cache/ok"
}
