"""Reads machinectl's client config, so that a play uses the same file and
contexts an operator already uses with `machinectl` (pki/client_config.ts).

The file is YAML: `context`, and `contexts.<name>` with `endpoints` and the
CA, client certificate and key as base64 of PEM. PyYAML is imported lazily:
ansible-core itself depends on it, so the collection adds no dependency.
"""

from __future__ import annotations

import base64
import binascii
import os

from ansible_collections.machined.fleet.plugins.module_utils.errors import ClientConfigError

DEFAULT_API_PORT = 50000


def resolve_path(flag: str | None, env: dict, home: str) -> str:
    """Where the config lives, in machinectl's order: the flag,
    `$MACHINECTL_CONFIG`, `$XDG_CONFIG_HOME/machinectl/config.yaml` (absolute
    values only), then `~/.config/machinectl/config.yaml`."""
    if flag:
        return flag
    if env.get("MACHINECTL_CONFIG"):
        return env["MACHINECTL_CONFIG"]
    xdg = env.get("XDG_CONFIG_HOME") or ""
    if xdg.startswith("/"):
        return os.path.join(xdg, "machinectl", "config.yaml")
    return os.path.join(home, ".config", "machinectl", "config.yaml")


def parse(text: str, source: str) -> dict:
    """The config document as a dict. @raises ClientConfigError"""
    try:
        import yaml  # ansible-core's own dependency
    except ImportError as e:  # pragma: no cover - ansible-core always has it
        raise ClientConfigError(f"cannot read {source}: PyYAML is not installed") from e
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ClientConfigError(f"cannot parse {source} as YAML: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("contexts", {}), dict):
        raise ClientConfigError(f"invalid {source}: expected a mapping with `contexts`")
    return doc


def load(path: str) -> dict:
    """Reads and parses the file. @raises ClientConfigError"""
    try:
        with open(path, encoding="utf-8") as f:
            return parse(f.read(), path)
    except FileNotFoundError as e:
        raise ClientConfigError(
            f'no client config at "{path}" (give config=, set $MACHINECTL_CONFIG, '
            "or run machinectl gen config)"
        ) from e
    except OSError as e:
        raise ClientConfigError(f'cannot read client config "{path}": {e.strerror}') from e


def credentials(doc: dict, context: str | None, source: str = "client config") -> dict:
    """The selected context's endpoints and PEMs, like machinectl's
    resolveCredentials. @raises ClientConfigError"""
    name = context or doc.get("context")
    if not name:
        raise ClientConfigError(f"no context is selected in {source} (give context=)")
    contexts = doc.get("contexts") or {}
    ctx = contexts.get(name)
    if not isinstance(ctx, dict):
        known = ", ".join(f'"{n}"' for n in contexts) or "none"
        raise ClientConfigError(f'no context "{name}" in {source} (have {known})')
    out = {"name": name, "endpoints": [str(e) for e in ctx.get("endpoints") or []]}
    for field, key in (("ca", "ca_pem"), ("crt", "cert_pem"), ("key", "key_pem")):
        try:
            out[key] = base64.b64decode(str(ctx.get(field) or ""), validate=False).decode("ascii")
        except (binascii.Error, UnicodeDecodeError) as e:
            raise ClientConfigError(f'context "{name}": {field} is not base64 of a PEM') from e
        if "-----BEGIN" not in out[key]:
            raise ClientConfigError(f'context "{name}": {field} is not base64 of a PEM')
    return out


def with_default_port(endpoint: str) -> str:
    """`host` → `host:50000`, a bare IPv6 literal bracketed (as machinectl)."""
    if endpoint.startswith("[") and "]:" in endpoint:
        return endpoint
    if endpoint.startswith("[") and endpoint.endswith("]"):
        return f"{endpoint}:{DEFAULT_API_PORT}"
    colons = endpoint.count(":")
    if colons == 0:
        return f"{endpoint}:{DEFAULT_API_PORT}"
    if colons > 1:
        return f"[{endpoint}]:{DEFAULT_API_PORT}"
    return endpoint


def host_port(endpoint: str) -> tuple[str, int]:
    """(host without brackets, port) of an endpoint with its port."""
    ep = with_default_port(endpoint)
    host, _sep, port = ep.rpartition(":")
    return host.strip("[]"), int(port)
