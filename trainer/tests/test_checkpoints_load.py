"""`quarry checkpoints load` on a checkpoint a real TRL SFT run wrote (the tiny model, 2 steps on the CPU): exported to
ONNX and registered with its provenance (step, run.json's data hash, base model) and a passing parity; then served by
transformers' own OpenAI-compatible server (`--serve`), waited for, checked against transformers greedy, answering
chat requests on its registered spec, and stopped by `unload`. The served half needs the `serve` extra (openai)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

from quarry_trainer.parity import first_divergence, text_divergence


def sft_rows() -> str:
    rows = []
    for q, sql in [
        ("How many singers are there?", "SELECT count(*) FROM singer"),
        ("List names.", "SELECT name FROM t"),
    ]:
        rows.append(
            {
                "schema": "quarry.sft/1",
                "messages": [
                    {"role": "user", "content": f"Question: {q}", "loss": False},
                    {"role": "assistant", "content": f"<solution>{sql}</solution>", "loss": True},
                ],
            }
        )
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.fixture(scope="module")
def sft_run(repo_root, tmp_path_factory):
    root = tmp_path_factory.mktemp("ckload")
    data = root / "sft.jsonl"
    data.write_text(sft_rows())
    out = root / "runs" / "sft-tiny"
    cmd = [sys.executable, "-m", "quarry_trainer.train.sft", "--model", str(repo_root / "media/models/tiny-sql")]
    cmd += ["--data", str(data), "--out", str(out), "--max-steps", "2", "--save-steps", "2", "--cpu", "--lr", "5e-3"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (out / "checkpoint-2" / "config.json").exists()
    return root, out / "checkpoint-2", data


def quarry(quarry_cli, cwd, *args, env=None):
    return subprocess.run([*quarry_cli, "checkpoints", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_a_trl_checkpoint_loads_as_onnx_with_provenance_and_parity(quarry_cli, sft_run, repo_root):
    ws, ckpt, data = sft_run
    run = quarry(quarry_cli, ws, "load", str(ckpt), "--as", "sft-2", "--json")
    assert run.returncode == 0, run.stderr
    model = json.loads(run.stdout)["model"]
    assert model["spec"] == f"onnx:{ws / '.quarry' / 'models' / 'sft-2'}"
    assert model["parity"]["equal"] is True and model["parity"]["cases"] == 3
    p = model["provenance"]
    assert p["step"] == 2 and p["engine"] == "trl-sft"
    assert p["baseModel"] == str(repo_root / "media/models/tiny-sql")
    assert p["data"] == [{"path": str(data.resolve()), "sha256": hashlib.sha256(data.read_bytes()).hexdigest()}]
    registry = json.loads((ws / ".quarry" / "models.json").read_text())
    assert [m["name"] for m in registry["models"]] == ["sft-2"]
    assert (ws / ".quarry" / "models" / "sft-2" / "model.onnx").exists()


@pytest.mark.skipif(importlib.util.find_spec("openai") is None, reason="transformers serve needs the serve extra")
def test_the_checkpoint_served_by_transformers_matches_greedy_and_unload_stops_it(quarry_cli, sft_run):
    ws, ckpt, _ = sft_run
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = quarry(quarry_cli, ws, "load", str(ckpt), "--as", "sft-2-served", "--serve", "--json", env=env)
    assert run.returncode == 0, run.stderr
    model = json.loads(run.stdout)["model"]
    assert model["form"] == "served" and model["server"]["kind"] == "transformers"
    assert model["spec"].startswith("openai:http://127.0.0.1:") and model["spec"].endswith(f"#{ckpt}")
    assert model["parity"] == {**model["parity"], "equal": True, "cases": 3, "against": "served"}
    base, name = model["spec"][len("openai:") :].split("#", 1)
    body = json.dumps({"model": name, "messages": [{"role": "user", "content": "Question: x"}], "max_tokens": 4})
    req = urllib.request.Request(f"{base}/chat/completions", body.encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as res:
        assert json.loads(res.read())["choices"][0]["message"]["role"] == "assistant"
    pid = model["server"]["pid"]
    gone = quarry(quarry_cli, ws, "unload", "sft-2-served")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert f"stopped the transformers server (pid {pid})" in gone.stdout
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the server (pid {pid}) still runs after unload")
    names = [m["name"] for m in json.loads((ws / ".quarry" / "models.json").read_text())["models"]]
    assert "sft-2-served" not in names


def test_divergence_is_the_first_differing_token(repo_root):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(repo_root / "media/models/tiny-sql"), local_files_only=True)
    ids = tok("SELECT name FROM singer", add_special_tokens=False)["input_ids"]
    assert text_divergence(tok, ids, "SELECT name FROM singer") is None
    d = text_divergence(tok, ids, "SELECT name FROM stadium")
    assert d is not None and d["expected"] == ids[d["position"]]
    assert "SELECT name FROM stadium".startswith(tok.decode(ids[: d["position"]]))
    assert not "SELECT name FROM stadium".startswith(tok.decode(ids[: d["position"] + 1]))
    assert text_divergence(tok, ids, "SELECT name FROM singer;")["position"] == len(ids)
    assert first_divergence([1, 2, 3], [1, 2]) == {"position": 2, "expected": 3, "got": None}
    assert first_divergence([1, 2], [1, 2]) is None


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def loopback_ssh(tmp_path):
    """A real sshd on 127.0.0.1 (its own host key, one authorized key, no password) and an ssh config naming it."""
    sshd = "/usr/sbin/sshd"
    if not os.path.exists(sshd) or os.geteuid() != 0:
        pytest.skip("needs /usr/sbin/sshd and root to start a loopback sshd")
    for key in ("host", "user"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / key)], check=True)
    (tmp_path / "authorized_keys").write_text((tmp_path / "user.pub").read_text())
    port = free_port()
    (tmp_path / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {tmp_path / 'host'}\n"
        f"AuthorizedKeysFile {tmp_path / 'authorized_keys'}\nPasswordAuthentication no\n"
        f"PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile {tmp_path / 'sshd.pid'}\n"
    )
    (tmp_path / "ssh_config").write_text(
        f"Host quarry-loop\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile {tmp_path / 'user'}\n"
        "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
    )
    os.makedirs("/run/sshd", exist_ok=True)
    proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(tmp_path / "sshd_config")], stderr=subprocess.DEVNULL)
    config = str(tmp_path / "ssh_config")
    for _ in range(100):
        ok = subprocess.run(["ssh", "-F", config, "-o", "BatchMode=yes", "quarry-loop", "true"], capture_output=True)
        if ok.returncode == 0:
            break
        time.sleep(0.1)
    else:
        proc.terminate()
        pytest.fail("the loopback sshd did not accept the key")
    yield config
    proc.terminate()
    proc.wait(timeout=30)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def health(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3) as res:
            return res.status == 200
    except OSError:
        return False


@pytest.mark.skipif(importlib.util.find_spec("openai") is None, reason="transformers serve needs the serve extra")
def test_served_on_an_ssh_host_through_a_tunnel_that_reopens(quarry_cli, sft_run, loopback_ssh):
    ws, ckpt, _ = sft_run
    pythonpath = os.pathsep.join(p for p in sys.path if p)
    run = quarry(
        quarry_cli,
        ws,
        "load",
        str(ckpt),
        "--as",
        "sft-2-ssh",
        "--serve",
        "--ssh",
        "quarry-loop",
        f"--ssh-option=-F{loopback_ssh}",
        "--remote-env",
        f"PYTHONPATH={pythonpath}",
        "--json",
        env={**os.environ, "PYTHONPATH": pythonpath},
    )
    assert run.returncode == 0, run.stderr
    model = json.loads(run.stdout)["model"]
    server = model["server"]
    assert server["host"] == "quarry-loop" and server["tunnel"]["localPort"] != server["port"]
    assert model["parity"]["equal"] is True and model["parity"]["against"] == "served"
    url = f"http://127.0.0.1:{server['tunnel']['localPort']}/health"
    assert health(url)
    # Drop the tunnel's ssh: the keeper opens a new one and the server answers again on the same local port.
    keeper = server["tunnel"]["pid"]
    first = subprocess.run(["pgrep", "-P", str(keeper), "ssh"], capture_output=True, text=True).stdout.split()
    assert len(first) == 1
    os.kill(int(first[0]), 15)
    for _ in range(150):
        again = subprocess.run(["pgrep", "-P", str(keeper), "ssh"], capture_output=True, text=True).stdout.split()
        if again and again != first and health(url):
            break
        time.sleep(0.2)
    else:
        pytest.fail("the tunnel was not reopened")
    # -F is not kept in .quarry/models.json (a config file can run commands): unload is given it again.
    assert "sshOptions" not in server and server["sshOptionsLeftOut"] is True
    kept = quarry(quarry_cli, ws, "unload", "sft-2-ssh")
    assert kept.returncode == 1 and "--ssh-option" in kept.stdout, kept.stdout + kept.stderr
    gone = quarry(quarry_cli, ws, "unload", "sft-2-ssh", f"--ssh-option=-F{loopback_ssh}")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert "stopped the transformers server on quarry-loop" in gone.stdout
    for _ in range(150):
        if not alive(server["pid"]) and not alive(keeper):
            break
        time.sleep(0.2)
    else:
        pytest.fail("the server or the tunnel still runs after unload")


@pytest.mark.skipif(importlib.util.find_spec("openai") is None, reason="transformers serve needs the serve extra")
def test_served_on_an_ssh_host_with_the_checkpoint_only_there_checks_parity_there(
    quarry_cli, sft_run, loopback_ssh, tmp_path
):
    """The checkpoint is on the host alone (its path here does not exist): the server and transformers' greedy decode
    both run on the host, over the same ssh, and nothing is copied here."""
    ws, ckpt, _ = sft_run
    there = tmp_path / "remote" / "checkpoint-2"
    shutil.copytree(ckpt, there)
    here = ws / "not-pulled" / "checkpoint-2"
    assert not here.exists()
    pythonpath = os.pathsep.join(p for p in sys.path if p)
    run = quarry(
        quarry_cli,
        ws,
        "load",
        str(here),
        "--as",
        "sft-2-remote-only",
        "--serve",
        "--ssh",
        "quarry-loop",
        f"--ssh-option=-F{loopback_ssh}",
        "--remote-dir",
        str(there),
        "--remote-env",
        f"PYTHONPATH={pythonpath}",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    assert "checking greedy parity against transformers on quarry-loop" in run.stderr
    model = json.loads(run.stdout)["model"]
    assert model["parity"] == {**model["parity"], "equal": True, "cases": 3, "against": "served"}
    assert model["spec"].endswith(f"#{there}")
    assert not here.exists()
    assert quarry(quarry_cli, ws, "unload", "sft-2-remote-only", f"--ssh-option=-F{loopback_ssh}").returncode == 0
    # A folder the host does not have is said before any server starts.
    bad = quarry(
        quarry_cli,
        ws,
        "load",
        str(here),
        "--serve",
        "--ssh",
        "quarry-loop",
        f"--ssh-option=-F{loopback_ssh}",
        "--remote-dir",
        str(tmp_path / "remote" / "nothing"),
    )
    assert bad.returncode == 2 and "on quarry-loop is not a Hugging Face checkpoint" in bad.stderr
