#!/bin/sh
# Unpack Debian's OpenSSH server (and the libwrap it links) into $1 for the test suite's SSH
# target: nothing is installed on the system and no service starts. Needs apt (root: `apt-get
# download` into a temp folder). Prints one line; exit 1 with the reason when it cannot.
set -eu
dest=$1
[ -x "$dest/usr/sbin/sshd" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
pkgs="openssh-server openssh-sftp-server libwrap0"
if ! apt-get download $pkgs >apt.log 2>&1; then
  apt-get update >>apt.log 2>&1 || true
  apt-get download $pkgs >>apt.log 2>&1 || { echo "sshd: apt-get download failed: $(tail -n 1 apt.log)"; exit 1; }
fi
mkdir -p "$dest.part"
for f in ./*.deb; do dpkg -x "$f" "$dest.part"; done
rm -rf "$dest" && mv "$dest.part" "$dest"
echo "sshd: unpacked $(ls ./*.deb | wc -l) packages into $dest"
