"""A client for `quarry serve-env`, Quarry's environment service, and a way to start one.

    from quarry_trainer.env import EnvClient, serve_env
    with serve_env(db_dirs=["data/spider/database"]) as url:
        env = EnvClient(url)
        ep = env.create_episode(protocol="skyrl", db="concert_singer", question="How many singers?", gold_sql=...)
        step = env.step(ep["id"], "<think>…</think><sql>SELECT count(*) FROM singer</sql>")

The service's routes (GET /v1/openapi.json lists them; docs/training.md explains them): episodes (create, step, end),
/v1/reward (what `quarry reward --json` prints), /v1/execute, /v1/odt; batches are lists. The URL and the bearer
token default to the environment variables QUARRY_ENV_URL and QUARRY_ENV_TOKEN, so a trainer's workers, started on
other machines by Ray, find the service the launch started; on a Ray cluster started before the launch, a worker
whose runtime env names QUARRY_ENV_DIRECTORY asks the launch's directory actor for its node's service and the token
(quarry_trainer/ray_env.py). One keep-alive connection per thread; a connection that
drops is reopened and the request retried (idempotent routes only: never a step, which would run a turn twice). A
connection idle for longer than the service keeps one open (its keep-alive timeout is 65 s; a training step on a busy
CPU can take longer than that between two requests) is replaced before it is used, and a request whose sending fails
on a reused connection (the service closed it) is sent again on a new one: the service never read it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


class EnvServiceError(RuntimeError):
    """An error the service answered with (`kind`: bad-request, not-found, too-many, …) or a transport failure."""

    def __init__(self, kind: str, message: str, status: int | None = None):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.status = status


# Reopen a connection idle for this long: well under the service's keep-alive timeout (server.ts: 65 s).
IDLE_REOPEN_SECONDS = 30.0


class _SendFailed(Exception):
    """Sending a request on a reused keep-alive connection failed: the service had closed it and read nothing."""


def _from_ray_directory() -> dict:
    """{url, token} for this Ray node from the launch's directory actor (quarry_trainer/ray_env.py), named by
    QUARRY_ENV_DIRECTORY in a Ray worker's runtime env; {} when it is not set or Ray is not connected here."""
    name = os.environ.get("QUARRY_ENV_DIRECTORY")
    if not name:
        return {}
    from quarry_trainer.ray_env import lookup

    try:
        return lookup(name)
    except Exception as err:
        raise EnvServiceError("config", f"the launch's Ray directory {name!r} did not answer: {err}") from err


class EnvClient:
    def __init__(self, url: str | None = None, token: str | None = None, timeout: float = 120.0, retries: int = 3):
        # On a Ray cluster started before the launch the URL of this node's service and the token come from the
        # launch's directory actor; otherwise (and for what a caller passes) from the arguments and the environment.
        found = {} if url and token is not None else _from_ray_directory()
        url = url or found.get("url") or os.environ.get("QUARRY_ENV_URL")
        if not url:
            raise EnvServiceError(
                "config", "no service URL: pass url= or set QUARRY_ENV_URL (quarry serve-env prints it)"
            )
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise EnvServiceError("config", f"the service URL must be http://HOST:PORT, got {url!r}")
        self.host = parsed.hostname
        self.port = parsed.port or 80
        self.token = token if token is not None else os.environ.get("QUARRY_ENV_TOKEN") or found.get("token")
        self.timeout = timeout
        self.retries = retries
        self._local = threading.local()

    def _conn(self, fresh: bool = False) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection and whether it was used before (a new one is made when asked or when idle)."""
        conn = getattr(self._local, "conn", None)
        idle = time.monotonic() - getattr(self._local, "used", 0.0)
        if conn is not None and (fresh or idle > IDLE_REOPEN_SECONDS):
            conn.close()
            conn = None
        if conn is None:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._local.conn = conn
            self._local.served = False
        return conn, self._local.served

    def _exchange(self, method: str, path: str, data: bytes | None, headers: dict[str, str]):
        conn, reused = self._conn()
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
        except (ConnectionError, OSError) as err:
            # A reused connection the service had closed: the send fails, or the service hangs up without a byte of
            # answer (http.client's RemoteDisconnected). Either way it read nothing of this request.
            if not reused or not isinstance(err, (BrokenPipeError, ConnectionResetError)):
                raise
            raise _SendFailed() from err
        raw = resp.read()
        self._local.used = time.monotonic()
        self._local.served = True
        return resp, raw

    def request(self, method: str, path: str, body: Any = None, idempotent: bool = True) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        attempts = self.retries if idempotent else 1
        for attempt in range(attempts):
            try:
                try:
                    resp, raw = self._exchange(method, path, data, headers)
                except _SendFailed:
                    self._conn(fresh=True)
                    resp, raw = self._exchange(method, path, data, headers)
                break
            except (ConnectionError, http.client.HTTPException, OSError, _SendFailed) as err:
                self._conn(fresh=True)
                if attempt + 1 >= attempts:
                    raise EnvServiceError("transport", f"{method} {path} failed: {err}") from err
                time.sleep(0.2 * (attempt + 1))
        payload = json.loads(raw) if raw else None
        if resp.status >= 400:
            error = (payload or {}).get("error", {}) if isinstance(payload, dict) else {}
            raise EnvServiceError(
                error.get("kind", "http"), error.get("message", raw.decode(errors="replace")), resp.status
            )
        return payload

    # Routes -----------------------------------------------------------------------------------------------------
    def health(self) -> dict:
        return self.request("GET", "/v1/health")

    def create_episode(self, protocol: str, db: str, question: str, gold_sql: str | None = None, **extra: Any) -> dict:
        body = {"protocol": protocol, "db": db, "question": question, **_camel(extra)}
        if gold_sql is not None:
            body["goldSql"] = gold_sql
        return self.request("POST", "/v1/episodes", body, idempotent=False)

    def step(self, episode_id: str, action: str) -> dict:
        return self.request("POST", f"/v1/episodes/{episode_id}/step", {"action": action}, idempotent=False)

    def end_episode(self, episode_id: str) -> None:
        with contextlib.suppress(EnvServiceError):
            self.request("DELETE", f"/v1/episodes/{episode_id}")

    def reward(self, items: dict | Sequence[dict]) -> Any:
        """One reward request ({panel, db, goldSql, predSql | trajectory, …}) or a list of them."""
        return self.request("POST", "/v1/reward", items if isinstance(items, dict) else list(items))

    def execute(self, items: dict | Sequence[dict]) -> Any:
        return self.request("POST", "/v1/execute", items if isinstance(items, dict) else list(items))

    def odt(self, items: dict | Sequence[dict]) -> Any:
        return self.request("POST", "/v1/odt", items if isinstance(items, dict) else list(items))


def _camel(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if v is None:
            continue
        head, *rest = k.split("_")
        out[head + "".join(w.title() for w in rest)] = v
    return out


def quarry_command() -> list[str]:
    """The `quarry` command of this checkout: the pinned Node with dist/cli.js (built by `npm run build`)."""
    node = REPO_ROOT / "node_modules" / ".bin" / "node"
    cli = REPO_ROOT / "dist" / "cli.js"
    if not node.exists() or not cli.exists():
        raise EnvServiceError("config", f"no built quarry in {REPO_ROOT} (run npm ci and npm run build there)")
    return [str(node), str(cli)]


@contextlib.contextmanager
def serve_env(
    db_dirs: Sequence[str | Path], command: Sequence[str] | None = None, token_file: str | None = None, jobs: int = 2
) -> Iterator[str]:
    """Starts `quarry serve-env`, yields its URL once it listens, stops it (SIGTERM) on exit."""
    args = [*(command or quarry_command()), "serve-env", "--port", "0", "--jobs", str(jobs)]
    for d in db_dirs:
        args += ["--db-dir", str(d)]
    if token_file:
        args += ["--token-file", token_file]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        prefix = "quarry env server listening on "
        if not first.startswith(prefix):
            err = proc.stderr.read() if proc.stderr else ""
            raise EnvServiceError("start", f"quarry serve-env did not start: {first.strip() or err.strip()}")
        yield first[len(prefix) :].strip()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
