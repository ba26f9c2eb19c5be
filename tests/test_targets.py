"""Targets over SSH, against a real OpenSSH sshd on 127.0.0.1 (tests/sshd_support.py: Debian's
sshd in bubblewrap, the target seeing only /usr and its home): naming a host and its key, what
it is, the faults (unknown or changed host key, a refused key, nothing listening, a full disk, a
dropped connection, the server killed mid-run), two measurements taking turns on one target,
and forms of a1 measured there and judged here."""

from __future__ import annotations

import json
import platform
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploytui.core.measure import launcher_path
from deploytui.launchers import ssh, targets
from deploytui.launchers.ssh import Destination, TargetError
from deploytui.views.cli.main import main
from sshd_support import Sshd, free_port, keygen


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    s = Sshd(tmp_path_factory.mktemp("sshd")).start()
    yield s
    s.stop()


def box(s: Sshd) -> Destination:
    return Destination("box", config=str(s.config))


def accept(s: Sshd) -> None:
    ssh.run(box(s), "true", accept_new=True)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# the address as users write it -----------------------------------------------------------------


def test_destinations_as_users_write_them():
    assert Destination.parse("ssh://pi@board.local:2222") == Destination("board.local", "pi", 2222)
    assert Destination.parse("ssh://board") == Destination("board")
    assert Destination.parse("pi@board") == Destination("board", "pi")
    assert Destination.parse("gpu-box") == Destination("gpu-box")
    assert Destination("board.local", "pi", 2222).text() == "ssh://pi@board.local:2222"
    for bad in ("http://x", "ssh://pi@:22", "-oProxyCommand=x", "a b", "ssh://h:notaport"):
        with pytest.raises(TargetError):
            Destination.parse(bad)


def test_ssh_words_become_one_line():
    d = Destination("box")
    assert "changed" in ssh.explain("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\nx", 255, d)
    assert "not known" in ssh.explain("Host key verification failed.", 255, d)
    assert "refused the login" in ssh.explain("deploy@127.0.0.1: Permission denied (publickey).", 255, d)
    assert "unreachable" in ssh.explain("ssh: connect to host 127.0.0.1 port 9: Connection refused", 255, d)
    assert "no disk space" in ssh.explain("tar: ./x: Cannot write: No space left on device", 2, d)


def test_a_target_name_is_checked():
    assert targets.check_name("box") == ""
    assert "this machine" in targets.check_name("here")
    assert targets.check_name("a b") and targets.check_name("") and targets.check_name("x" * 65)


def test_a_damaged_targets_file_keeps_what_reads(tmp_path: Path):
    path = tmp_path / "targets.json"
    good = {"host": "box", "facts": {"arch": "x86_64"}}
    path.write_text(json.dumps({"version": 1, "targets": {"a": good, "b": {"host": 3}}}))
    store = targets.store(path)
    assert list(store.doc.targets) == ["a"] and store.doc.targets["a"].facts == {"arch": "x86_64"}
    assert any("'b'" in line for line in store.dropped)


# naming a host: its key, what it is ------------------------------------------------------------


def test_a_new_host_is_accepted_only_when_the_user_says_so(server, tmp_path, capsys):
    art = str(tmp_path / "art")
    fresh = Sshd(tmp_path / "sshd", port=0)  # its own known_hosts: the key is new to it
    fresh.start()
    try:
        add = ("target", "add", "b", "box", "--ssh-config", str(fresh.config), "--artifacts", art)
        code, out, err = cli(capsys, *add)
        assert code == 1 and err.count("\n") == 1 and "not known" in err and "--accept-new" in err
        assert not (tmp_path / "art" / "targets.json").exists()
        code, out, err = cli(capsys, *add, "--accept-new")
        assert code == 0, err
        stored = targets.store(tmp_path / "art" / "targets.json").doc.targets["b"]
        facts = stored.facts
        assert facts["arch"] == platform.machine() and facts["cores"] >= 1 and facts["memory_bytes"] > 2**20
        assert facts["glibc"].startswith("glibc ") and facts["free_disk_bytes"] > 0
        assert any(v.startswith("3.") for v in facts["pythons"])
        code, out, err = cli(capsys, "target", "list", "--artifacts", art)
        assert code == 0 and out.startswith("b ") and platform.machine() in out
        assert cli(capsys, "target", "check", "b", "--artifacts", art)[0] == 0
        assert cli(capsys, "target", "remove", "b", "--artifacts", art)[0] == 0
        assert targets.store(tmp_path / "art" / "targets.json").doc.targets == {}
    finally:
        fresh.stop()


def test_a_changed_host_key_is_refused(tmp_path, capsys):
    s = Sshd(tmp_path / "sshd").start()
    art = str(tmp_path / "art")
    try:
        assert cli(capsys, "target", "add", "b", "box", "--ssh-config", str(s.config), "--artifacts", art,
                   "--accept-new")[0] == 0  # fmt: skip
        s.stop()
        s.new_host_key()
        s.start()
        code, _out, err = cli(capsys, "target", "check", "b", "--artifacts", art)
        assert code == 1 and "changed" in err and err.count("\n") == 1
        again = (
            "target",
            "add",
            "c",
            "box",
            "--ssh-config",
            str(s.config),
            "--artifacts",
            art,
            "--accept-new",
        )
        code, _out, err = cli(capsys, *again)
        assert code == 1 and "changed" in err  # accept-new accepts new keys, never changed ones
    finally:
        s.stop()


def test_a_refused_key_and_nothing_listening_are_one_line(server, tmp_path):
    accept(server)
    other = tmp_path / "other"
    keygen(other)
    wrong = tmp_path / "wrong"
    wrong.write_text(server.config.read_text().replace(str(server.dir / "userkey"), str(other)))
    with pytest.raises(TargetError, match="refused the login"):
        ssh.facts(Destination("box", config=str(wrong)))
    config = tmp_path / "config"
    closed = server.config.read_text().replace(f"Port {server.port}", f"Port {_closed_port()}")
    config.write_text(closed)
    with pytest.raises(TargetError, match="unreachable"):
        ssh.facts(Destination("box", config=str(config)))


def _closed_port() -> int:
    return free_port()  # nothing listens there once the probe socket is closed


def test_a_full_disk_on_the_target_is_one_line(tmp_path):
    s = Sshd(tmp_path / "sshd", home_bytes=1 << 20).start()
    try:
        accept(s)
        big = tmp_path / "bundle"
        big.mkdir()
        (big / "weights.bin").write_bytes(bytes(3 << 20))
        root = ssh.home(box(s))
        with pytest.raises(TargetError, match="no disk space"):
            ssh.send_tree(box(s), big, f"{root}/bundles/big")
        assert ssh.run(box(s), 'ls "$1"', f"{root}/bundles").strip() == ""  # nothing half-written kept
    finally:
        s.stop()


# runs there: the launcher, the lock, a dropped connection ---------------------------------------


def _fake_bundle(tmp_path: Path, script: str) -> Path:
    b = tmp_path / "fake"
    b.mkdir(parents=True, exist_ok=True)
    run = b / "run"
    run.write_text("#!/bin/sh\n" + script)
    run.chmod(0o755)
    return b


def _on_target(s: Sshd, tmp_path: Path, script: str, name: str) -> tuple[str, str]:
    accept(s)
    d = box(s)
    root = ssh.home(d)
    launcher = f"{root}/bin/{launcher_path().name}"
    ssh.send_file(d, launcher_path(), launcher, mode="755")
    folder = f"{root}/bundles/{name}"
    ssh.send_tree(d, _fake_bundle(tmp_path / name, script), folder)
    return launcher, folder


def test_measurements_on_one_target_take_turns(server, tmp_path):
    log = "$HOME/turns.log"
    script = f'echo "start $(date +%s%N)" >> {log}; sleep 0.4; echo "end $(date +%s%N)" >> {log}\n'
    launcher, folder = _on_target(server, tmp_path, script, "turns")
    samples = []

    def one() -> None:
        samples.append(ssh.run_once(box(server), launcher, folder, ["./run"], timeout_s=30))

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s.ok for s in samples), [s.error for s in samples]
    assert all(s.wall_s >= 0.4 for s in samples)
    events = [ln.split() for ln in ssh.run(box(server), 'cat "$HOME/turns.log"').splitlines()]
    assert [e[0] for e in events] == ["start", "end"] * 3  # never two at once


def test_a_dropped_connection_stops_the_run_there(server, tmp_path):
    launcher, folder = _on_target(server, tmp_path, "sleep 61\n", "dropped")
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    t0 = time.monotonic()
    s = ssh.run_once(box(server), launcher, folder, ["./run"], timeout_s=60, cancel=cancel)
    assert s.error == "cancelled" and time.monotonic() - t0 < 15
    time.sleep(1.0)  # the watcher there has seen the connection close
    procs = ssh.run(box(server), 'for p in /proc/[0-9]*; do tr "\\0" " " < "$p/cmdline"; echo; done')
    assert "sleep 61" not in procs


NESTED = 'sh -c "sleep 63; :" & echo $! > "$HOME/setup.pid"; wait\n'  # pip's children, as a shell's


def _alive(d: Destination, pattern: str) -> bool:
    listing = 'for p in /proc/[0-9]*; do tr "\\0" " " < "$p/cmdline" 2>/dev/null; echo; done'
    return pattern in ssh.run(d, listing)


def test_a_cancelled_setup_stops_its_whole_group_there(server):
    """A venv's set-up (launchers/watched.py): cancelled, the script there and what it started
    (pip's children) are gone; one line says so."""
    from deploytui.launchers import watched

    accept(server)
    cancel = threading.Event()
    threading.Timer(1.5, cancel.set).start()
    t0 = time.monotonic()
    with pytest.raises(TargetError, match=r"^cancelled$"):
        watched.run(box(server), NESTED, timeout_s=60, cancel=cancel)
    assert time.monotonic() - t0 < 15
    time.sleep(0.5)
    assert not _alive(box(server), "sleep 63")
    assert watched.run(box(server), 'echo "$1"', "done", timeout_s=30).strip() == "done"
    with pytest.raises(TargetError, match="did not finish within 1 s"):
        watched.run(box(server), NESTED, timeout_s=1)


def test_the_server_killed_mid_run_is_one_line(tmp_path):
    s = Sshd(tmp_path / "sshd").start()
    try:
        launcher, folder = _on_target(s, tmp_path, "sleep 30\n", "killed")
        threading.Timer(1.0, s.stop).start()
        sample = ssh.run_once(box(s), launcher, folder, ["./run"], timeout_s=60)
        assert not sample.ok and "\n" not in sample.error and "box" in sample.error
    finally:
        s.stop()


# forms of a1 on the target ---------------------------------------------------------------------


def test_forms_of_a1_measured_on_the_target(server, copy_ws, capsys):
    art = str(copy_ws.artifacts)
    assert cli(capsys, "target", "add", "box", "box", "--ssh-config", str(server.config), "--artifacts", art,
               "--accept-new")[0] == 0  # fmt: skip
    argv = ["bench", "--model", "a1", "--artifacts", art, "--bundles", str(copy_ws.bundles)]
    argv += ["--no-build", "--target", "box", "-n", "3", "--json", "burn-file", "onnxruntime", "tract"]
    code, out, err = cli(capsys, *argv)
    doc = json.loads(out)
    (there,) = doc["targets"]
    assert there["target"] == "box" and there["machine"]["arch"] == platform.machine()
    by_form = {r["form"]: r for r in there["forms"]}
    for key in ("burn-file", "onnxruntime", "tract"):
        rec = by_form[key]
        assert rec["status"] == "ok" and rec["within_tol"], (key, rec["error"], err)
        assert len(rec["wall_s"]) == 3 and min(rec["peak_rss_bytes"]) > 0
        assert rec["target"]["target"] == "box" and rec["cwd"].startswith("box:")
    assert code == 0, err
    stored = json.loads((copy_ws.target_dir("box") / "results.json").read_text())
    assert set(stored["forms"]) == {"burn-file", "onnxruntime", "tract"}
    assert not (
        copy_ws.results_path.exists() and "burn-file" in json.loads(copy_ws.results_path.read_text())["forms"]
    )
    code, out, err = cli(capsys, *argv[:-3], "burn-file")  # the bundle is there already: not sent again
    assert "already on box" in err and code == 0


def onnxruntime_on_a_new_target(tmp_path, ws, capsys, home_bytes: int | None = None) -> tuple[int, str, str]:
    """a1's onnxruntime (a Python bundle: its venv made there) benched on a target of its own,
    "box": the exit code, what the CLI said, and the wheels that reached the target."""
    s = Sshd(tmp_path / "sshd", home_bytes=home_bytes).start()
    try:
        art = str(ws.artifacts)
        assert cli(capsys, "target", "add", "box", "box", "--ssh-config", str(s.config), "--artifacts", art,
                   "--accept-new")[0] == 0  # fmt: skip
        argv = ["bench", "--model", "a1", "--artifacts", art, "--bundles", str(ws.bundles), "--no-build"]
        code, out, err = cli(capsys, *argv, "--target", "box", "-n", "1", "onnxruntime")
        root = ssh.home(box(s))
        return code, out + err, ssh.run(box(s), 'ls "$1/wheels" 2>/dev/null || true', root).strip()
    finally:
        s.stop()


def test_a_venv_that_does_not_fit_is_refused_before_it_is_sent(tmp_path, copy_ws, capsys):
    """A Python bundle's venv (onnxruntime's: numpy, onnxruntime, ~100 MiB installed) on a target
    with 40 MiB: one line with the sizes, before any wheel goes there."""
    code, said, sent = onnxruntime_on_a_new_target(tmp_path, copy_ws, capsys, home_bytes=40 << 20)
    assert code == 1 and sent == ""
    assert re.search(r"box has [\d.]+ MiB free; onnxruntime.s venv needs [\d.]+ MiB installed", said), said


def test_a_wheelhouse_missing_a_pin_is_said_before_anything_is_sent(tmp_path, copy_ws, capsys, monkeypatch):
    """A Python bundle's pins with no file in the wheelhouse (a download that stopped short): one
    line naming them and `make wheelhouse`, not pip failing on the target after the sending."""
    from deploytui.scenarios.isolated import shipping
    from deploytui.ship import wheelhouse as wheelhouses

    real = shipping.wheelhouse()
    house = tmp_path / "house"
    house.mkdir()
    for f in real.glob("numpy-*.whl"):  # one of onnxruntime's pins is there, the others are not
        (house / f.name).hardlink_to(f)
    monkeypatch.setattr(shipping, "wheelhouse", lambda: house)
    monkeypatch.setattr(wheelhouses, "fill", lambda *_: "")  # the download "stopped short"
    code, said, sent = onnxruntime_on_a_new_target(tmp_path, copy_ws, capsys)
    assert code == 1 and sent == ""
    line = next(ln for ln in said.splitlines() if "has no file for" in ln)
    assert "onnxruntime==" in line and "numpy==" not in line and "`make wheelhouse`" in line, line


def test_a_target_of_another_architecture_says_what_is_needed(copy_ws, capsys):
    art = copy_ws.artifacts
    facts = {"pi": {"arch": "aarch64"}, "sifive": {"arch": "riscv64"}}
    doc = {"version": 1, "targets": {k: {"host": f"{k}.invalid", "facts": f} for k, f in facts.items()}}
    (art / "targets.json").write_text(json.dumps(doc))
    argv = [
        "bench",
        "--model",
        "a1",
        "--artifacts",
        str(art),
        "--no-build",
        "--target",
        "sifive",
        "burn-file",
    ]
    code, out, _err = cli(capsys, *argv)
    assert code == 1 and "sifive is riscv64" in out and "an riscv64 build" in out
    # aarch64 bundles are made here (docs/arm64.md), but not of a Rust form: its stage says why
    code, out, _err = cli(capsys, *argv[:-2], "pi", "burn-file")
    assert code == 1 and "aarch64-unknown-linux-gnu standard library" in out


def test_serving_cells_and_a_variants_accuracy_set_on_the_target(server, copy_ws, capsys):
    """`--batch/--threads` cells there (tract on its dynamic-batch export, sent beside the fixed
    one; the batch's inputs sent once), judged here against eager at that batch; an int8
    variant's accuracy set run there sample by sample, judged by its budget."""
    from deploytui.judge.precision import SAMPLES

    art = str(copy_ws.artifacts)
    assert cli(capsys, "target", "add", "box", "box", "--ssh-config", str(server.config), "--artifacts", art,
               "--accept-new")[0] == 0  # fmt: skip
    where = ["--model", "a1", "--artifacts", art, "--bundles", str(copy_ws.bundles), "--target", "box"]
    code, out, err = cli(
        capsys, "bench", *where, "--batch", "1,4", "--threads", "1", "--json", "burn-file", "tract"
    )
    (there,) = json.loads(out)["targets"]
    cells = {c["cell"]: c for c in there["cells"]}
    assert set(cells) == {f"{f}@b{b}@t1" for f in ("burn-file", "tract") for b in (1, 4)}, err
    for key, c in cells.items():
        assert c["status"] == "ok" and c["within_tol"], (key, c["error"], err)
        assert c["batch"] == int(key.split("@b")[1].split("@")[0]) and c["forwards"]["n"] > 0
        assert c["target"]["target"] == "box" and c["items_per_s"] > 0
    assert code == 0, err
    assert "tract-batch" in err  # the dynamic-batch bundle, beside the fixed one
    stored = json.loads((copy_ws.target_dir("box") / "serve.json").read_text())
    assert set(stored["forms"]) == set(cells)
    assert not copy_ws.serve_path.exists() or not set(
        json.loads(copy_ws.serve_path.read_text())["forms"]
    ) & set(cells)
    code, out, err = cli(capsys, "bench", *where, "--no-build", "--json", "tract-int8")
    (rec,) = json.loads(out)["targets"][0]["forms"]
    assert rec["status"] == "ok" and rec["accuracy"]["within_budget"], (rec["error"], err)
    assert rec["accuracy"]["samples"] == SAMPLES + 1 and "evaluation set" in err  # the example and the set
