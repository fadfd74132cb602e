"""What every module shares: the connection options (a machinectl client
config and context, or a pinned fingerprint for a node in maintenance
mode), building a NodeClient from them, and failing a task with the node's
reason and code."""

from __future__ import annotations

import os

from ansible_collections.machined.fleet.plugins.module_utils import client_config
from ansible_collections.machined.fleet.plugins.module_utils.connect import NodeClient
from ansible_collections.machined.fleet.plugins.module_utils.errors import (
    ConnectError,
    MachinedError,
    TransportError,
    UpgradeFailed,
)

CONNECTION_ARGS = {
    "endpoint": {"type": "str"},
    "config": {"type": "path"},
    # The client config's text, e.g. lookup('file', ...) of a Vault-encrypted file: never logged.
    "client_config": {"type": "str", "no_log": True},
    "context": {"type": "str"},
    "insecure": {"type": "bool", "default": False},
    "fingerprint": {"type": "str"},
    "timeout": {"type": "float", "default": 30.0},
}


def connection_args(**extra) -> dict:
    """The module's argument spec: the connection options plus `extra`."""
    return {**CONNECTION_ARGS, **extra}


def client_factory(params: dict):
    """A function returning a fresh NodeClient for the task's node (a wait
    through a reboot needs a new connection each try). The endpoint is
    `endpoint`, else the context's first. @raises MachinedError"""
    if params.get("insecure"):
        if not params.get("endpoint") or not params.get("fingerprint"):
            raise MachinedError("insecure=true needs endpoint and fingerprint (pinned)")
        fp = params["fingerprint"]
        return lambda: NodeClient(params["endpoint"], timeout=params["timeout"], fingerprint=fp)
    if params.get("client_config"):
        path = "client_config"
        doc = client_config.parse(params["client_config"], path)
    else:
        path = client_config.resolve_path(params.get("config"), dict(os.environ),
                                          os.path.expanduser("~"))
        doc = client_config.load(path)
    creds = client_config.credentials(doc, params.get("context"), path)
    endpoint = params.get("endpoint") or (creds["endpoints"] or [None])[0]
    if not endpoint:
        raise MachinedError(f'context "{creds["name"]}" has no endpoints (give endpoint=)')
    return lambda: NodeClient(client_config.with_default_port(endpoint), creds["ca_pem"],
                              creds["cert_pem"], creds["key_pem"], params["timeout"])


def failure(e: MachinedError) -> dict:
    """fail_json's arguments for an error: the message plus the node's code
    and reason (or the TLS alert), as fields a play can test."""
    out = {"msg": str(e)}
    if isinstance(e, ConnectError):
        out.update(code=e.code, reason=e.node_message, rpc=e.method)
    elif isinstance(e, TransportError):
        out.update(code="unavailable", reason=e.reason, endpoint=e.endpoint)
        if e.alert:
            out["tls_alert"] = e.alert
    elif isinstance(e, UpgradeFailed):
        out.update(code="rolled_back", outcome=e.outcome, reason=e.reason)
    return out


def run(module, body) -> None:
    """Runs `body(module)` and exits with its result; any MachinedError fails
    the task with failure()."""
    try:
        result = body(module)
    except MachinedError as e:
        module.fail_json(**failure(e))
    module.exit_json(**result)
