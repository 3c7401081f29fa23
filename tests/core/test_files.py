"""Reading inputs and writing outputs (ovearth_core.files), through the API and every command.

Special files are our own, made in a temporary folder: named pipes (``os.mkfifo``, read by
a thread), a pseudo-terminal (a character device this test owns), and, when the tests run
as root, device nodes made with ``os.mknod`` (a null device, a zero device, an unused
block device). The system's ``/dev/null`` and ``/dev/zero`` are never touched. Commands
run in subprocesses with a 3 GB address-space limit and a timeout, so that a regression
(reading a zero device whole, waiting on a pipe forever) fails instead of taking the
machine down.
"""

from __future__ import annotations

import os
import resource
import socket
import stat
import subprocess
import sys
import threading
import time
import tty
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from app_fixtures import Dataset, write_dataset

from ovearth_core import files
from ovearth_core.errors import OVEarthInputError
from ovearth_core.io import read_json

PY = sys.executable
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="os.mknod needs root")
NULL_DEVICE, ZERO_DEVICE = os.makedev(1, 3), os.makedev(1, 5)
UNUSED_BLOCK_DEVICE = os.makedev(240, 77)  # "local/experimental" major: no driver, ENXIO
TIMEOUT = 120


def _limit_memory() -> None:
    limit = 3 * 1024 ** 3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run(args: list[str], timeout: float = TIMEOUT, **kwargs: object
        ) -> subprocess.CompletedProcess[bytes]:
    """A command in a subprocess, memory-capped, killed after ``timeout`` seconds."""
    return subprocess.run(args, capture_output=True, timeout=timeout, check=False,
                          preexec_fn=_limit_memory, **kwargs)  # type: ignore[call-overload]


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


def commands(ds: Dataset, out: str) -> dict[str, list[str]]:
    """Every command that writes one output file, writing to ``out``."""
    evaluator = ["--gt", str(ds.gt), "--predictions", str(ds.model_a), "--modalities",
                 "segmentation,bbox"]
    return {
        "evaluator": [PY, "-m", "ovearth_core", *evaluator, "--output", out],
        "analysis": [PY, "-m", "ovearth_core.analysis", *evaluator, "--output", out],
        "leaderboard": [PY, "-m", "ovearth_core.leaderboard", str(ds.root), "--task",
                        "vocabulary", "--subsets", "20", "--output", out],
        "report": [PY, "-m", "ovearth_core.report", *evaluator, "--images", str(ds.images),
                   "--task", "vocabulary", "--worst", "1", "--out", out],
    }


COMMANDS = ["evaluator", "analysis", "leaderboard", "report"]


def _expected_start(command: str) -> bytes:
    return b"<!DOCTYPE html>" if command == "report" else b"{"


class PipeReader(threading.Thread):
    """Reads a named pipe to its end. The pipe is opened read-write first (a reader and a
    writer at once), so a command's ``open`` never waits and :meth:`finish` can always end
    the read, even when the command replaced the pipe instead of writing into it."""

    def __init__(self, fifo: Path):
        super().__init__(daemon=True)
        self._keep = os.open(fifo, os.O_RDWR)
        self._fd = os.open(fifo, os.O_RDONLY)
        self.data = b""

    def run(self) -> None:
        chunks = []
        while chunk := os.read(self._fd, 1 << 16):
            chunks.append(chunk)
        self.data = b"".join(chunks)
        os.close(self._fd)

    def finish(self) -> bytes:
        os.close(self._keep)  # the last writer gone: the read ends
        self.join(timeout=30)
        assert not self.is_alive()
        return self.data


@pytest.fixture()
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    yield path


def _only(folder: Path, names: set[str]) -> None:
    """No temporary file was left in ``folder``."""
    assert {p.name for p in folder.iterdir()} == names


# ---------------------------------------------------------------- outputs: commands


@pytest.mark.parametrize("command", COMMANDS)
def test_a_named_pipe_is_streamed_to_not_replaced(ds: Dataset, fifo: Path,
                                                  command: str) -> None:
    reader = PipeReader(fifo)
    reader.start()
    proc = run(commands(ds, str(fifo))[command])
    data = reader.finish()
    assert proc.returncode == 0, proc.stderr.decode()
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert data.startswith(_expected_start(command)) and len(data) > 100
    if command != "report":
        assert orjson.loads(data)
    _only(fifo.parent, {"pipe.json", "data"})


def test_a_pipe_without_a_reader_yet_waits_for_it(ds: Dataset, fifo: Path) -> None:
    note = f"waiting for a reader of the named pipe {fifo}"
    err_path = fifo.parent / "stderr.txt"
    with err_path.open("wb") as err:
        proc = subprocess.Popen(commands(ds, str(fifo))["evaluator"], stdout=subprocess.PIPE,
                                stderr=err, preexec_fn=_limit_memory)
        try:
            # Open the reader only once the command says it waits (however slow its start).
            deadline = time.monotonic() + TIMEOUT
            while note not in err_path.read_text() and time.monotonic() < deadline:
                assert proc.poll() is None, err_path.read_text()
                time.sleep(0.05)
            with open(fifo, "rb") as handle:  # the command is blocked opening it for writing
                data = handle.read()
            proc.communicate(timeout=TIMEOUT)
        finally:
            proc.kill()
    assert proc.returncode == 0
    assert orjson.loads(data)["task"] == "open_vocabulary"
    assert note in err_path.read_text()


def test_process_substitution_is_streamed(ds: Dataset, tmp_path: Path) -> None:
    """The issue's ``--output >(jq .)``: a pipe named /dev/fd/N, written as it is."""
    copy = tmp_path / "copy.json"
    args = " ".join(f"'{a}'" for a in commands(ds, "OUT")["evaluator"][:-1])
    proc = run(["bash", "-c", f"{args} >(cat > '{copy}'); wait"])
    assert proc.returncode == 0, proc.stderr.decode()
    for _ in range(100):  # bash does not wait for a process substitution's reader
        if copy.exists() and copy.stat().st_size and copy.read_bytes().endswith(b"}\n"):
            break
        time.sleep(0.1)
    assert orjson.loads(copy.read_bytes())["task"] == "open_vocabulary"


def test_an_inherited_descriptor_is_written_as_it_is(ds: Dataset, tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_bytes(b"previous line\n")
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        proc = run(commands(ds, f"/dev/fd/{fd}")["evaluator"], pass_fds=(fd,))
    finally:
        os.close(fd)
    assert proc.returncode == 0, proc.stderr.decode()
    text = log.read_bytes()
    assert text.startswith(b"previous line\n{")  # appended, as the descriptor says
    assert orjson.loads(text[len(b"previous line\n"):])["task"] == "open_vocabulary"


def test_dash_is_standard_output(ds: Dataset) -> None:
    dash = run(commands(ds, "-")["evaluator"])
    default = run(commands(ds, "-")["evaluator"][:-2])
    assert dash.returncode == default.returncode == 0
    assert dash.stdout == default.stdout and orjson.loads(dash.stdout)


@ROOT_ONLY
@pytest.mark.parametrize("command", COMMANDS)
def test_a_null_device_is_written_to_never_replaced(ds: Dataset, tmp_path: Path,
                                                    command: str) -> None:
    """As root, ``--output /dev/null`` replaced the system's /dev/null with a regular file;
    here with a null device of our own."""
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, NULL_DEVICE)
    before = null.lstat()
    proc = run(commands(ds, str(null))[command])
    assert proc.returncode == 0, proc.stderr.decode()
    after = null.lstat()
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == NULL_DEVICE
    assert after.st_ino == before.st_ino
    _only(tmp_path, {"null", "data"})


def test_a_terminal_through_a_symlink_is_written_to(ds: Dataset, tmp_path: Path) -> None:
    """A character device of our own (a pseudo-terminal), named through a symlink: the
    device receives the bytes, the link stays, and the note says where they went."""
    master, slave = os.openpty()
    tty.setraw(slave)
    link, device = tmp_path / "terminal", os.ttyname(slave)
    link.symlink_to(device)
    received: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # EIO once the slave side is closed
                return
            if not chunk:
                return
            received.append(chunk)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    try:
        proc = run(commands(ds, str(link))["evaluator"])
    finally:
        time.sleep(0.2)
        os.close(slave)
        thread.join(timeout=10)
        os.close(master)
    assert proc.returncode == 0, proc.stderr.decode()
    assert link.is_symlink()
    assert orjson.loads(b"".join(received))["task"] == "open_vocabulary"
    assert f"{link} is a symbolic link; writing its target {device}" in proc.stderr.decode()


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("how", ["same path", "hard link", "symlink"])
def test_an_input_is_never_overwritten(ds: Dataset, tmp_path: Path, command: str,
                                       how: str) -> None:
    target = ds.model_a
    if how == "hard link":
        os.link(target, tmp_path / "out.json")
        out = tmp_path / "out.json"
    elif how == "symlink":
        (tmp_path / "out.json").symlink_to(target)
        out = tmp_path / "out.json"
    else:
        out = target
    before = target.read_bytes()
    proc = run(commands(ds, str(out))[command])
    stderr = proc.stderr.decode()
    assert proc.returncode == 2
    assert f"cannot write {out}" in stderr and "input" in stderr and "Traceback" not in stderr
    assert target.read_bytes() == before


@pytest.mark.parametrize("kind", ["folder", "socket", "block device"])
def test_folders_sockets_and_block_devices_are_refused(ds: Dataset, tmp_path: Path,
                                                       kind: str) -> None:
    out = tmp_path / "out"
    if kind == "folder":
        out.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(out))
    else:
        if os.geteuid() != 0:
            pytest.skip("os.mknod needs root")
        os.mknod(out, stat.S_IFBLK | 0o600, UNUSED_BLOCK_DEVICE)
    mode = out.lstat().st_mode
    started = time.perf_counter()
    proc = run(commands(ds, str(out))["evaluator"])
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in stderr
    assert f"cannot write {out}: it is a {kind}" in stderr
    assert out.lstat().st_mode == mode
    assert time.perf_counter() - started < 60


def test_a_symlink_to_a_file_elsewhere_writes_the_target_and_says_so(ds: Dataset,
                                                                     tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    real = tmp_path / "results" / "run.json"
    real.write_bytes(b"old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    proc = run(commands(ds, str(link))["evaluator"])
    assert proc.returncode == 0, proc.stderr.decode()
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert orjson.loads(real.read_bytes())["task"] == "open_vocabulary"
    assert f"{link} is a symbolic link; writing its target {real}" in proc.stderr.decode()
    _only(tmp_path / "results", {"run.json"})


def test_a_dangling_symlink_creates_its_target_and_says_so(ds: Dataset, tmp_path: Path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "made.json")
    proc = run(commands(ds, str(link))["evaluator"])
    assert proc.returncode == 0
    assert orjson.loads((tmp_path / "made.json").read_bytes())
    assert "is a symbolic link; writing its target" in proc.stderr.decode()


def test_a_replaced_file_keeps_its_permissions(ds: Dataset, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_bytes(b"old")
    out.chmod(0o640)
    proc = run(commands(ds, str(out))["evaluator"])
    assert proc.returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert orjson.loads(out.read_bytes())


def test_a_refused_output_is_refused_before_the_work(ds: Dataset, tmp_path: Path) -> None:
    """A folder as output fails at once, not after the evaluation (a bad input and a bad
    output: the output is named, nothing is evaluated)."""
    (tmp_path / "out").mkdir()
    args = commands(ds, str(tmp_path / "out"))["evaluator"]
    args[args.index("--predictions") + 1] = str(tmp_path / "missing.json")
    proc = run(args)
    assert proc.returncode == 2
    assert "it is a folder" in proc.stderr.decode()
    assert "missing.json" not in proc.stderr.decode()


def test_synth_streams_to_a_pipe_and_refuses_a_folder(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    os.mkfifo(out / "README.md")
    reader = PipeReader(out / "README.md")
    reader.start()
    proc = run([PY, "-m", "ovearth_core.synth", "--scale", "tiny", "--out", str(out),
                "--no-images", "--workers", "1"])
    readme = reader.finish()
    assert proc.returncode == 0, proc.stderr.decode()
    assert readme.startswith(b"# Synthetic OVEarth benchmark")
    assert stat.S_ISFIFO((out / "README.md").lstat().st_mode)
    (out / "ground_truth.json").unlink()
    (out / "ground_truth.json").mkdir()
    proc = run([PY, "-m", "ovearth_core.synth", "--scale", "tiny", "--out", str(out),
                "--no-images", "--workers", "1"])
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in stderr
    assert f"cannot write {out / 'ground_truth.json'}: it is a folder" in stderr


def test_stdout_closed_early_is_a_message_not_a_traceback(ds: Dataset) -> None:
    args = " ".join(f"'{a}'" for a in commands(ds, "-")["analysis"])
    proc = run(["bash", "-c", f"{args} | true; exit ${{PIPESTATUS[0]}}"])
    stderr = proc.stderr.decode()
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    assert proc.returncode == 2
    assert "cannot write standard output: Broken pipe" in stderr


# ---------------------------------------------------------------- outputs: the function


def test_write_output_api(tmp_path: Path, fifo: Path) -> None:
    notes: list[str] = []
    assert files.write_output(tmp_path / "new.json", b"{}", notify=notes.append) == \
        str(tmp_path / "new.json")
    assert (tmp_path / "new.json").read_bytes() == b"{}" and notes == []
    reader = PipeReader(fifo)
    reader.start()
    assert files.write_output(fifo, b"streamed", notify=notes.append) == str(fifo)
    assert reader.finish() == b"streamed"
    with pytest.raises(files.OutputRefused) as info:
        files.write_output(tmp_path / "new.json", b"x", inputs=[tmp_path / "new.json"])
    assert info.value.found == "an input file"
    with pytest.raises(files.OutputRefused):
        files.check_output(tmp_path, [])
    files.check_output(tmp_path / "absent.json", [tmp_path / "new.json"])  # fine


def test_hard_links_of_a_replaced_file_are_noted(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b"old")
    os.link(tmp_path / "a.json", tmp_path / "b.json")
    notes: list[str] = []
    files.write_output(tmp_path / "a.json", b"new", notify=notes.append)
    assert (tmp_path / "a.json").read_bytes() == b"new"
    assert (tmp_path / "b.json").read_bytes() == b"old"
    assert notes == [f"note: {tmp_path / 'a.json'} had 2 hard links; the other names keep "
                     "the previous content"]


def test_a_failed_write_leaves_the_target_and_no_temporary(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    out = tmp_path / "out.json"
    out.write_bytes(b"previous")

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError):
        files.write_output(out, b"new" * 1000)
    assert out.read_bytes() == b"previous"
    _only(tmp_path, {"out.json"})


# ---------------------------------------------------------------- inputs


def _evaluate(ds: Dataset, gt: Path | None = None, pred: Path | None = None,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return run([PY, "-m", "ovearth_core", "--gt", str(gt or ds.gt), "--predictions",
                str(pred or ds.model_a), "--modalities", "bbox"], timeout=60,
               env={**os.environ, **(env or {})})


@pytest.mark.parametrize("command", ["evaluator", "analysis", "report"])
@pytest.mark.parametrize("role", ["--gt", "--predictions"])
def test_a_named_pipe_as_input_is_refused_without_waiting(ds: Dataset, fifo: Path, tmp_path: Path,
                                                          command: str, role: str) -> None:
    """No writer will ever come: reading (or hashing, for the report) would wait forever,
    inside the GC pause."""
    args = commands(ds, str(tmp_path / "out"))[command]
    args[args.index(role) + 1] = str(fifo)
    proc = run(args, timeout=60)
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in stderr
    assert f"{fifo}, field (file)" in stderr and "found a named pipe (FIFO)" in stderr
    assert not (tmp_path / "out").exists()


@ROOT_ONLY
def test_a_zero_device_as_input_is_refused_without_reading(ds: Dataset, tmp_path: Path) -> None:
    zero = tmp_path / "zero.json"
    os.mknod(zero, stat.S_IFCHR | 0o444, ZERO_DEVICE)
    proc = _evaluate(ds, pred=zero)
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and "MemoryError" not in stderr and "Traceback" not in stderr
    assert "expected a prediction JSON file: a regular file, found a character device" in stderr


def test_a_file_over_the_cap_is_refused_without_reading(ds: Dataset, tmp_path: Path) -> None:
    """A sparse 1.5 GB file costs nothing to make; reading it whole took 44 s and 3 GB."""
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(1_500_000_000)
    started = time.perf_counter()
    proc = _evaluate(ds, pred=big)
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in stderr
    assert "a file of at most 200 MB" in stderr and "found 1.4 GB (1,500,000,000 bytes)" in stderr
    assert time.perf_counter() - started < 30


def test_the_cap_can_be_changed_by_environment(ds: Dataset) -> None:
    size = ds.model_a.stat().st_size
    small = _evaluate(ds, env={files.MAX_INPUT_MB_VAR: str(size / 2 / 2**20)})
    assert small.returncode == 2 and b"OVEARTH_MAX_INPUT_MB changes it" in small.stderr
    assert _evaluate(ds, env={files.MAX_INPUT_MB_VAR: str(2 * size / 2**20)}).returncode == 0


@pytest.mark.parametrize(("text", "expected"), [
    (None, 200 * 2**20), ("", 200 * 2**20), ("1", 2**20), ("0.5", 2**19),
    ("1e3", 1000 * 2**20)])
def test_max_input_bytes(text: str | None, expected: int) -> None:
    env = {} if text is None else {files.MAX_INPUT_MB_VAR: text}
    assert files.max_input_bytes(env) == expected


@pytest.mark.parametrize("text", ["x", "0", "-3", "inf", "-inf", "nan", "1e400", "9" * 5000,
                                  "2e6"])
def test_a_bad_max_input_is_refused_not_guessed(text: str) -> None:
    # Issue 35 item 12: "inf" and "1e400" raised OverflowError; "x", "0" and "-3" fell
    # back to 200 MB without a word.
    with pytest.raises(ValueError, match="OVEARTH_MAX_INPUT_MB: expected a number above 0"):
        files.max_input_bytes({files.MAX_INPUT_MB_VAR: text})


def test_a_bad_max_input_is_a_message_naming_the_file(ds: Dataset) -> None:
    run = _evaluate(ds, env={files.MAX_INPUT_MB_VAR: "inf"})
    assert run.returncode == 2, run.stderr
    assert b"Traceback" not in run.stderr
    assert b"OVEARTH_MAX_INPUT_MB" in run.stderr and b"'inf'" in run.stderr
    assert os.fsencode(ds.gt.name) in run.stderr


def test_the_cap_is_the_apps_upload_cap() -> None:
    import tomllib

    config = tomllib.loads((Path(__file__).parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == files.DEFAULT_MAX_INPUT_MB


def test_read_bounded(tmp_path: Path, fifo: Path) -> None:
    (tmp_path / "a.json").write_bytes(b"x" * 100)
    assert files.read_bounded(tmp_path / "a.json", 100) == b"x" * 100
    with pytest.raises(files.InputRefused) as info:
        files.read_bounded(tmp_path / "a.json", 99)
    assert info.value.found == "0.0 MB (100 bytes)"
    for special, found in ((fifo, "a named pipe (FIFO)"), (tmp_path, "a folder")):
        with pytest.raises(files.InputRefused) as info:
            files.read_bounded(special)
        assert info.value.found == found and info.value.expected == "a regular file"
    with pytest.raises(FileNotFoundError):
        files.read_bounded(tmp_path / "absent.json")


def test_a_file_growing_after_the_check_is_not_read_whole(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``/proc`` files report size 0; a file may grow between ``fstat`` and ``read``: only
    ``cap + 1`` bytes are read, and the file is refused."""
    path = tmp_path / "grows.json"
    path.write_bytes(b"y" * 50)
    real_stat = files.check_input_stat
    monkeypatch.setattr(files, "check_input_stat", lambda p, st, m=None: real_stat(p, st, 10**9))
    with pytest.raises(files.InputRefused) as info:
        files.read_bounded(path, 10)
    assert info.value.found == "more than 0.0 MB (10 bytes)"


def test_read_json_names_the_role_and_the_kind(tmp_path: Path, fifo: Path) -> None:
    with pytest.raises(OVEarthInputError) as info:
        read_json(fifo, "ground-truth")
    (problem,) = info.value.problems
    assert (problem.file, problem.field) == (str(fifo), "(file)")
    assert problem.expected == "a ground-truth JSON file: a regular file"
    assert problem.found == "a named pipe (FIFO)"


# ---------------------------------------------------------------- more special cases


def _special(tmp_path: Path, name: str) -> str:
    """Make the output or input named ``name`` in ``tmp_path``; the path to pass."""
    path = tmp_path / name
    if name == "loop":
        path.symlink_to("loop")
    elif name == "under-a-file":
        (tmp_path / "afile").write_text("x")
        return str(tmp_path / "afile" / "out.json")
    elif name == "link-to-folder":
        path.symlink_to(tmp_path)
    elif name == "link-into-missing-folder":
        path.symlink_to(tmp_path / "missing" / "out.json")
    elif name == "full-device":
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    elif name == "empty":
        return ""
    elif name == "trailing-slash":
        return f"{path}/"
    return str(path)


@pytest.mark.parametrize(("name", "message", "root_only"), [
    ("empty", "cannot write '': it is an empty path", False),
    ("loop", "Too many levels of symbolic links", False),
    ("under-a-file", "Not a directory", False),
    ("trailing-slash", "No such file or directory", False),
    ("link-to-folder", "it is a folder", False),
    ("link-into-missing-folder", "No such file or directory", False),
    ("full-device", "No space left on device", True),  # our own /dev/full
])
def test_more_outputs_that_cannot_be_written(ds: Dataset, tmp_path: Path, name: str,
                                             message: str, root_only: bool) -> None:
    if root_only and os.geteuid() != 0:
        pytest.skip("os.mknod needs root")
    proc = run(commands(ds, _special(tmp_path, name))["evaluator"])
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in stderr
    assert message in stderr and "cannot write" in stderr


@pytest.mark.parametrize(("kind", "found"), [
    ("socket", "found a socket"), ("block device", "found a block device"),
    ("loop", "found Too many levels of symbolic links"), ("standard input", "found a named pipe"),
])
def test_more_inputs_that_are_refused(ds: Dataset, tmp_path: Path, kind: str, found: str) -> None:
    path = tmp_path / "in.json"
    stdin = None
    if kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    elif kind == "block device":
        if os.geteuid() != 0:
            pytest.skip("os.mknod needs root")
        os.mknod(path, stat.S_IFBLK | 0o600, UNUSED_BLOCK_DEVICE)
    elif kind == "loop":
        path.symlink_to("in.json")
    else:
        path, stdin = Path("/dev/stdin"), subprocess.PIPE  # `--predictions <(...)` is the same
    proc = run([PY, "-m", "ovearth_core", "--gt", str(ds.gt), "--predictions", str(path),
                "--modalities", "bbox"], timeout=60, stdin=stdin)
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in stderr
    assert f"{path}, field (file)" in stderr and found in stderr


@pytest.mark.parametrize("link", [False, True])
def test_a_placed_pipe_is_refused_linked_or_copied(tmp_path: Path, link: bool) -> None:
    """FolderWriter.place refuses a named pipe whether it copies or hard-links (a hard link
    of a pipe was made without the check before: the converters link by default)."""
    fifo = tmp_path / "scene.png"
    os.mkfifo(fifo)
    out = tmp_path / "bench"
    with pytest.raises(files.InputRefused, match="a regular file"):
        with files.folder_writer(tmp_path, "bench") as folder:
            folder.place("images/scene.png", fifo, link=link)
    assert not out.exists()
