"""The pinned environment: every engine the lock installs here imports at the locked version, and `quarry doctor`
(the TypeScript side) reads this interpreter the same way Python does."""

from __future__ import annotations

import importlib
import importlib.metadata as md
import json
import subprocess
import sys

import pytest
import tomllib  # type: ignore[import-not-found]  # Python >= 3.11 here; the package itself supports 3.10

import quarry_trainer

# Engines `npm run setup:python` installs on this machine (skyrl-train and vllm belong in other environments).
ENGINES = {
    "torch": "torch",
    "transformers": "transformers",
    "trl": "trl",
    "peft": "peft",
    "accelerate": "accelerate",
    "datasets": "datasets",
    "verl": "verl",
    "skyrl-gym": "skyrl_gym",
    "ray": "ray",
    "onnx": "onnx",
    "onnxscript": "onnxscript",
    "onnxruntime": "onnxruntime",
}


def locked_versions(repo_root) -> dict[str, set[str]]:
    lock = tomllib.loads((repo_root / "trainer" / "uv.lock").read_text())
    out: dict[str, set[str]] = {}
    for p in lock["package"]:
        out.setdefault(p["name"], set()).add(p.get("version", ""))
    return out


def test_package_version_matches_pyproject(repo_root):
    project = tomllib.loads((repo_root / "trainer" / "pyproject.toml").read_text())["project"]
    assert quarry_trainer.__version__ == project["version"] == md.version("quarry-trainer")


@pytest.mark.parametrize("dist,module", sorted(ENGINES.items()))
def test_engine_imports_at_its_locked_version(repo_root, dist, module):
    installed = md.version(dist)
    assert installed.split("+")[0] in locked_versions(repo_root)[dist], f"{dist} {installed} is not the locked version"
    importlib.import_module(module)


def test_verl_agent_loop_has_its_server_dependencies():
    # Plain `verl` leaves out fastapi/uvicorn/cachetools, which its multi-turn agent loop imports: the extra asks for
    # verl[verl-core] so the tool agent loop imports here.
    importlib.import_module("verl.experimental.agent_loop.tool_agent_loop")


def test_quarry_doctor_reports_this_interpreter_ready(quarry_cli, repo_root):
    run = subprocess.run(
        [*quarry_cli, "doctor", "--python", sys.executable, "--json"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert report["ready"] is True
    assert report["python"]["source"] == "flag"
    by_name = {e["name"]: e for e in report["engines"]}
    for dist in ENGINES:
        assert by_name[dist]["version"] == md.version(dist), dist
        assert by_name[dist]["imports"] is True, (dist, by_name[dist].get("error"))
    assert by_name["skyrl-train"]["version"] is None
    assert any(n.startswith("skyrl-train needs Python 3.12") for n in report["notes"])
