"""EnvClient's keep-alive connection against a real `quarry serve-env`: a connection the service has closed is not
reused for an episode (a non-idempotent request), neither after a long idle gap nor when the send fails on it."""

from __future__ import annotations

import socket

from quarry_trainer import env as env_module
from quarry_trainer.env import EnvClient

TASK = {"protocol": "skyrl", "db": "concert", "question": "How many singers are there?", "gold_sql": "SELECT 1"}


def test_a_connection_the_peer_closed_is_replaced_before_an_episode_is_created(env_url):
    client = EnvClient(env_url)
    client.health()
    stale = client._local.conn
    # The connection dies under the client, as when the service's keep-alive timeout closes it during a long step.
    stale.sock.shutdown(socket.SHUT_RDWR)
    ep = client.create_episode(**TASK)
    assert ep["id"] and ep["messages"]
    assert client._local.conn is not stale
    client.end_episode(ep["id"])


def test_an_idle_connection_is_reopened(env_url, monkeypatch):
    client = EnvClient(env_url)
    client.health()
    first = client._local.conn
    client.health()
    assert client._local.conn is first, "a connection used a moment ago is kept"
    monkeypatch.setattr(env_module, "IDLE_REOPEN_SECONDS", 0.0)
    ep = client.create_episode(**TASK)
    assert client._local.conn is not first
    client.end_episode(ep["id"])


def test_a_send_failure_on_a_new_connection_is_reported_not_retried(env_url):
    port = int(env_url.rsplit(":", 1)[1])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    client = EnvClient(f"http://127.0.0.1:{closed}")
    try:
        client.create_episode(**TASK)
    except env_module.EnvServiceError as err:
        assert err.kind == "transport"
    else:
        raise AssertionError(f"an episode was created on a port nothing listens on (the service is on {port})")
