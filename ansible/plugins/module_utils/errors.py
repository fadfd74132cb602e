"""Typed errors of the machined collection.

Every failure a module reports is one of these, so that a play's message
always says which node, which RPC, and the node's own reason with its
Connect code (or the TLS alert that refused the handshake), instead of a
Python traceback or a flattened string.
"""

from __future__ import annotations


class MachinedError(Exception):
    """Base of every error this collection raises on purpose."""


class ConnectError(MachinedError):
    """The node answered an RPC with a Connect error.

    `code` is the Connect code name (`invalid_argument`, `permission_denied`,
    ...), as the node sent it; `message` is the node's reason.
    """

    def __init__(self, method: str, code: str, message: str, details=None, http_status=None):
        self.method = method
        self.code = code
        self.node_message = message
        self.details = details or []
        self.http_status = http_status
        super().__init__(f"{method}: {code}: {message}")


class TransportError(MachinedError):
    """The node could not be reached, or TLS refused the connection.

    `reason` is a short machine-readable cause: `refused`, `timeout`,
    `tls_alert`, `untrusted_server`, `fingerprint_mismatch`, `protocol` or
    `unreachable`; `alert` is the TLS alert's name (e.g. `unknown_ca`,
    `certificate_required`) when the node sent one.
    """

    def __init__(self, endpoint: str, reason: str, message: str, alert: str | None = None):
        self.endpoint = endpoint
        self.reason = reason
        self.alert = alert
        super().__init__(f"{endpoint}: {message}")


class ClientConfigError(MachinedError):
    """The machinectl client config is missing, malformed or has no such context."""


class WaitTimeout(MachinedError):
    """A node did not reach the state waited for within the timeout."""


class UpgradeFailed(MachinedError):
    """An upgrade did not end with the new slot blessed: the node came back on
    its old slot (the loader fell back after the new one used its boot tries,
    or its trial failed). `outcome` and `reason` are the node's own record
    (UpgradeStatus.last), so the task's failure says why."""

    def __init__(self, message: str, outcome: str = "", reason: str = ""):
        self.outcome = outcome
        self.reason = reason
        super().__init__(message)
