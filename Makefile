# Builds and installs wisp, as tiny-cloud's Makefile does: `make install` with PREFIX and
# DESTDIR, the service files of one init system by `install-openrc` or `install-systemd`.
#
#   make                                  the release binary (cargo build --release)
#   make install DESTDIR=/mnt/image       binary, man page, example /etc/wisp.conf
#   make install-openrc DESTDIR=...       /etc/init.d/wisp-{boot,early,main,final}
#   make install-systemd DESTDIR=...      wisp-{boot,early,main,final}.service
#   make TARGET=aarch64-unknown-linux-gnu install   another target's binary

PREFIX ?= /usr
DESTDIR ?=
BINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
INITDIR ?= $(SYSCONFDIR)/init.d
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
CARGO ?= cargo
CARGOFLAGS ?=
TARGET ?= x86_64-unknown-linux-gnu
BINARY = target/$(TARGET)/release/wisp
PHASES = boot early main final

.PHONY: all install install-openrc install-systemd

all: $(BINARY)

# cargo decides whether anything changed.
.PHONY: $(BINARY)
$(BINARY):
	$(CARGO) build --release --target $(TARGET) $(CARGOFLAGS)

install: $(BINARY)
	install -D -m 0755 $(BINARY) $(DESTDIR)$(BINDIR)/wisp
	install -D -m 0644 doc/wisp.8 $(DESTDIR)$(MANDIR)/man8/wisp.8
	install -D -m 0644 dist/wisp.conf $(DESTDIR)$(SYSCONFDIR)/wisp.conf

install-openrc:
	for phase in $(PHASES); do \
		install -D -m 0755 dist/openrc/wisp-$$phase $(DESTDIR)$(INITDIR)/wisp-$$phase || exit 1; \
	done

install-systemd:
	for phase in $(PHASES); do \
		install -D -m 0644 dist/systemd/wisp-$$phase.service $(DESTDIR)$(SYSTEMDUNITDIR)/wisp-$$phase.service || exit 1; \
	done
