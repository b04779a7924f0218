"""Quarry's environment service for the workers of a Ray cluster that was started before the launch.

A Ray cluster started with `ray start` (the two-node Slurm flow of docs/training.md, a Ray job cluster) forks its
workers from raylets that never saw the launch's environment, so QUARRY_ENV_URL and QUARRY_ENV_TOKEN, exported by
launch.sh to the driver, do not reach verl's reward and agent-loop workers. Two parts fix that without putting the
token where Ray logs or shows it (Ray's runtime-env agent logs every runtime env it creates, env_vars included, at INFO:
ray/_private/runtime_env/agent/runtime_env_agent.py; the dashboard shows a job's runtime env):

- `runtime_env_hook`, which launch.sh names in RAY_RUNTIME_ENV_HOOK: Ray calls it on the runtime env of every
  `ray.init` in the driver (ray/_private/worker.py `_maybe_modify_runtime_env`, also after a Ray job's own runtime env
  is merged in) and the result is the job's runtime env, which every task and actor of the job gets. It adds
  QUARRY_ENV_URL and QUARRY_ENV_DIRECTORY (the name of the directory actor below) to `env_vars`, keeping every other
  variable (verl's own `get_ppo_ray_runtime_env`, verl/trainer/constants_ppo.py, and the recipe's). Never the token.
- `python -m quarry_trainer.ray_env serve`, which launch.sh runs in the background while the trainer runs: a Ray driver
  of its own that, when a Ray cluster is running (found as verl's `ray.init()` finds it: RAY_ADDRESS, then the
  cluster `ray start` recorded, ray/_private/services.py `canonicalize_bootstrap_address`), starts a named actor in the
  `quarry` namespace holding the token and the service URLs. EnvClient (quarry_trainer/env.py) asks it for the URL of
  the service on its own node and the token when QUARRY_ENV_DIRECTORY is set and the token is not in its environment.
  With --per-node it first starts one `quarry serve-env` on every node, each inside a Ray actor pinned to that node
  (NodeAffinitySchedulingStrategy, ray/util/scheduling_strategies.py) and bound to the node's IP, so SQL and scoring
  grow with the cluster; a node whose service does not start uses the launch's. It prints one line on stdout,
  `quarry ray env: directory NAME` or `quarry ray env: none` (no cluster running: verl's `ray.init` starts one from
  the driver, whose workers inherit its environment), then holds the actors until SIGTERM or SIGINT, stops the
  services and exits; when it dies, Ray ends its actors and the services with them (they die with their actor).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Sequence
from typing import Any

NAMESPACE = "quarry"
DIRECTORY_VAR = "QUARRY_ENV_DIRECTORY"
FORWARDED_VARS = ("QUARRY_ENV_URL", DIRECTORY_VAR)
LISTENING = "quarry env server listening on "


def runtime_env_hook(runtime_env: dict[str, Any] | None) -> dict[str, Any] | None:
    """RAY_RUNTIME_ENV_HOOK: the driver's runtime env plus QUARRY_ENV_URL and QUARRY_ENV_DIRECTORY in env_vars.

    A value the runtime env already sets is kept (a recipe's own choice wins); other variables are untouched."""
    add = {k: os.environ[k] for k in FORWARDED_VARS if os.environ.get(k)}
    if not add:
        return runtime_env
    env = dict(runtime_env or {})
    env_vars = dict(env.get("env_vars") or {})
    for key, value in add.items():
        env_vars.setdefault(key, value)
    env["env_vars"] = env_vars
    return env


class EnvDirectory:
    """The named actor workers ask for their node's service URL and the token (through Ray, never an env var)."""

    def __init__(self, default_url: str, token: str | None, node_urls: dict[str, str]):
        self.default_url = default_url
        self.token = token
        self.node_urls = dict(node_urls)

    def lookup(self, node_id: str | None) -> dict[str, str | None]:
        return {"url": self.node_urls.get(node_id or "", self.default_url), "token": self.token}

    def urls(self) -> dict[str, Any]:
        """What the directory serves, without the token: {"default": URL, "nodes": {node id: URL}}."""
        return {"default": self.default_url, "nodes": dict(self.node_urls)}


_looked_up: dict[tuple[str, str | None], dict[str, str | None]] = {}


def lookup(name: str) -> dict[str, str | None]:
    """{url, token} the directory NAME gives this process's Ray node; {} outside a connected Ray process."""
    try:
        import ray
    except ImportError:
        return {}
    if not ray.is_initialized():
        return {}
    node_id = ray.get_runtime_context().get_node_id()
    key = (name, node_id)
    if key not in _looked_up:
        directory = ray.get_actor(name, namespace=NAMESPACE)
        _looked_up[key] = ray.get(directory.lookup.remote(node_id), timeout=60)
    return _looked_up[key]


def _die_with_parent() -> None:
    """In the service's process before exec: SIGTERM when the actor's process (its parent) dies (Linux prctl)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


class NodeEnvService:
    """One `quarry serve-env` on this actor's node, bound to the node's IP, with the launch's token (a 0600 file in a
    private temp dir of the node). Raises when the service stops before printing its URL."""

    def __init__(self, command: Sequence[str], db_dirs: Sequence[str], token: str | None, start_timeout: float = 60):
        import ray

        self.dir = tempfile.mkdtemp(prefix="quarry-env-")
        args = [*command, "serve-env", "--host", ray.util.get_node_ip_address(), "--port", "0"]
        for d in db_dirs:
            args += ["--db-dir", d]
        if token:
            token_file = os.path.join(self.dir, "token")
            fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(token)
            args += ["--token-file", token_file]
        self.log = os.path.join(self.dir, "serve-env.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                args, stdout=subprocess.PIPE, stderr=log, text=True, preexec_fn=_die_with_parent
            )
        first: list[str] = []
        stdout = self.proc.stdout
        assert stdout is not None  # stdout=PIPE above
        reader = threading.Thread(target=lambda: first.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(start_timeout)
        line = first[0] if first else ""
        if not line.startswith(LISTENING):
            self.stop()
            raise RuntimeError(f"quarry serve-env did not start on this node: {line.strip() or 'no URL'}")
        self._url = line[len(LISTENING) :].strip()

    def url(self) -> str:
        return self._url

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def _actor_runtime_env() -> dict[str, Any] | None:
    """The helper's actors import quarry_trainer as the launch does: its PYTHONPATH, when it has one. Not when the
    launch runs as a Ray job whose runtime env sets it already: ray.init refuses a variable both set
    (ray/runtime_env/runtime_env.py `_merge_runtime_env`), and the job's reaches the actors anyway."""
    path = os.environ.get("PYTHONPATH")
    job = json.loads(os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR") or "{}")
    if not path or "PYTHONPATH" in ((job.get("runtime_env") or {}).get("env_vars") or {}):
        return None
    return {"env_vars": {"PYTHONPATH": path}}


def start_node_services(command: Sequence[str], db_dirs: Sequence[str], token: str | None, timeout: float):
    """One NodeEnvService actor on every alive node; returns (actors, {node id: URL}) for those that started."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    service = ray.remote(NodeEnvService)
    # Any: ray types an actor handle's method as the class's plain function, without its .remote (ray/actor.py).
    started: dict[str, Any] = {}
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        node_id = node["NodeID"]
        started[node_id] = service.options(
            num_cpus=0,
            max_restarts=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False),
        ).remote(list(command), list(db_dirs), token, timeout)
    actors, urls = [], {}
    for node_id, actor in started.items():
        try:
            urls[node_id] = ray.get(actor.url.remote(), timeout=timeout)
            actors.append(actor)
        except Exception as err:  # a node without the CLI or the databases: its workers use the launch's service
            print(f"quarry ray env: no service on node {node_id}: {err}", file=sys.stderr, flush=True)
            ray.kill(actor)
    return actors, urls


def serve(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quarry_trainer.ray_env serve")
    parser.add_argument("--url", required=True, help="the launch's service (the default for every node)")
    parser.add_argument("--token-file", help="the launch's token file (read here, handed to the actors)")
    parser.add_argument("--name", help="the directory actor's name (default: quarry-env-<random>)")
    parser.add_argument("--per-node", action="store_true", help="start `quarry serve-env` on every node")
    parser.add_argument("--db-dir", action="append", default=[], help="the services' --db-dir (repeatable)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a node's service may take to start")
    parser.add_argument("command", nargs="*", help="after --: how to run the quarry CLI on the nodes")
    args = parser.parse_args(argv)
    if args.per_node and not (args.command and args.db_dir):
        parser.error("--per-node needs --db-dir and, after --, the quarry command")

    try:
        import ray
        from ray._private.services import canonicalize_bootstrap_address
    except ImportError:  # no Ray in the trainer's Python: no cluster to hand the service to
        print("quarry ray env: none", flush=True)
        return 0
    # None reads the address from RAY_ADDRESS or the last `ray start` (ray/_private/services.py
    # canonicalize_bootstrap_address: "may be None"), which its annotation, `addr: str`, leaves out.
    address = canonicalize_bootstrap_address(None)  # type: ignore[arg-type]
    if address is None:
        print("quarry ray env: none", flush=True)
        return 0
    token = None
    if args.token_file:
        with open(args.token_file) as f:
            token = f.read().strip() or None
    ray.init(address=address, namespace=NAMESPACE, log_to_driver=False, runtime_env=_actor_runtime_env())
    # After ray.init, which installs its own SIGTERM handler (exit at once): here SIGTERM stops the services first.
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    actors, urls = start_node_services(args.command, args.db_dir, token, args.timeout) if args.per_node else ([], {})
    name = args.name or f"quarry-env-{uuid.uuid4().hex[:12]}"
    directory_class = ray.remote(EnvDirectory).options(name=name, num_cpus=0, max_restarts=0)
    directory: Any = directory_class.remote(args.url, token, urls)  # Any: see start_node_services
    ray.get(directory.urls.remote(), timeout=args.timeout)
    for node_id, url in urls.items():
        print(f"quarry ray env: node {node_id} service {url}", file=sys.stderr, flush=True)
    print(f"quarry ray env: directory {name}", flush=True)
    while not stop.wait(1.0):
        pass
    for actor in actors:
        with contextlib.suppress(Exception):
            ray.get(actor.stop.remote(), timeout=15)
    ray.shutdown()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "serve":
        print(
            "usage: python -m quarry_trainer.ray_env serve --url URL [--token-file F] [--per-node …]",
            file=sys.stderr,
        )
        return 2
    return serve(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
