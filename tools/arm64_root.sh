#!/bin/sh
# The emulated arm64 target's set-up (`make arm64`; docs/arm64.md): into $1 (the cache's arm64/)
#   1. the tools: qemu-user-static, mmdebstrap (+ arch-test), g++-aarch64-linux-gnu (apt-get, as root);
#   2. qemu-aarch64 registered with binfmt_misc (as root; flag F: the kernel opens the emulator
#      now, so arm64 programs start inside any root or sandbox without a copy of it there);
#   3. an arm64 Debian bookworm made by mmdebstrap into root/: the Essential set, python3, python3-venv
#      and libstdc++6 with their dependencies, extracted (variant extract: this machine's dpkg-deb
#      unpacks them, no maintainer script runs under qemu), then what those scripts would have left
#      that the target uses: /etc/passwd and /etc/group, the loader's cache (ldconfig, emulated)
#      and the standard library's .pyc (this machine's python3.11: a .pyc is the same on any CPU).
#      minbase, installed under qemu, took 168 CPU-seconds; this takes ~25 (docs/setup-time.md).
# Each step is skipped when done (root/ appears only whole: made in root.part, then renamed), so a
# run stopped half-way resumes where it stopped. One line per step; without root or apt, one
# line saying what is missing, exit 1 (the native forms are untouched).
set -eu
dest=$1
root=$dest/root
mkdir -p "$dest"
say() { echo "arm64: $*"; }
is_root() { [ "$(id -u)" = 0 ]; }

need=""
command -v qemu-aarch64-static >/dev/null 2>&1 || need="$need qemu-user-static"
command -v mmdebstrap >/dev/null 2>&1 || need="$need mmdebstrap"
command -v arch-test >/dev/null 2>&1 || need="$need arch-test"  # mmdebstrap's check of a foreign arch
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need="$need g++-aarch64-linux-gnu"
if [ -n "$need" ]; then
  if ! is_root || ! command -v apt-get >/dev/null 2>&1; then
    say "missing$need: install them (Debian/Ubuntu: apt-get install$need) and run this as root"
    exit 1
  fi
  say "installing$need (apt-get; log: $dest/apt.log)"
  if ! apt-get install -y --no-install-recommends $need >"$dest/apt.log" 2>&1; then
    apt-get update >>"$dest/apt.log" 2>&1 || true
    apt-get install -y --no-install-recommends $need >>"$dest/apt.log" 2>&1 \
      || { say "apt-get install$need failed: $(tail -n 1 "$dest/apt.log")"; exit 1; }
  fi
fi

binfmt=/proc/sys/fs/binfmt_misc
if ! grep -qs enabled "$binfmt/qemu-aarch64"; then
  if ! is_root; then
    say "qemu-aarch64 is not registered with binfmt_misc, and that needs root"
    exit 1
  fi
  if [ ! -e "$binfmt/register" ]; then
    mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null \
      || { say "cannot mount binfmt_misc on $binfmt (a container without CAP_SYS_ADMIN?)"; exit 1; }
  fi
  [ -e "$binfmt/qemu-aarch64" ] && echo -1 >"$binfmt/qemu-aarch64"
  magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
  mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
  printf '%s\n' ":qemu-aarch64:M::$magic:$mask:$(command -v qemu-aarch64-static):OCF" >"$binfmt/register" \
    || { say "registering qemu-aarch64 with binfmt_misc failed"; exit 1; }
  say "qemu-aarch64 registered with binfmt_misc"
fi

if [ ! -e "$root/.complete" ]; then
  rm -rf "$root.part" "$root"
  say "making an arm64 Debian bookworm with python3 (mmdebstrap, under a minute; log: $dest/mmdebstrap.log)"
  start=$(date +%s)
  if ! mmdebstrap --variant=extract --arch=arm64 --include='?essential' \
      --include=python3,python3-venv,libstdc++6 --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      --aptopt='Acquire::Check-Valid-Until "false"' bookworm "$root.part" \
      http://deb.debian.org/debian >"$dest/mmdebstrap.log" 2>&1; then
    rm -rf "$root.part"
    say "mmdebstrap failed: $(grep -v '^I: ' "$dest/mmdebstrap.log" | tail -n 1)"
    exit 1
  fi
  cp "$root.part/usr/share/base-passwd/passwd.master" "$root.part/etc/passwd"
  cp "$root.part/usr/share/base-passwd/group.master" "$root.part/etc/group"
  # the loader's cache (chroot needs root; without it the loader still searches the multiarch dirs)
  if is_root; then chroot "$root.part" /sbin/ldconfig >>"$dest/mmdebstrap.log" 2>&1 || true; fi
  if command -v python3.11 >/dev/null 2>&1; then
    python3.11 -m compileall -q -s "$root.part" -p / "$root.part/usr/lib/python3.11" >>"$dest/mmdebstrap.log" 2>&1 || true
  fi
  secs=$(($(date +%s) - start))
  size=$(du -sh "$root.part" | cut -f1)
  printf 'made in %s s, %s\n' "$secs" "$size" >"$root.part/.complete"
  mv "$root.part" "$root"
  say "root made in $secs s ($size): $root"
fi
