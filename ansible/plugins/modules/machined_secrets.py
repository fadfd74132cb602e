#!/usr/bin/python
"""machined_secrets: generate a node CA, its secrets bundle and an admin
client config once, by calling `machinectl gen config`, so the certificates
are exactly what machined's own PKI code issues (roles in O=, name rules,
key types) instead of a second implementation that could drift."""

from __future__ import annotations

DOCUMENTATION = r"""
module: machined_secrets
short_description: Generate a node CA and an admin client config once (for Ansible Vault)
description:
  - Runs C(machinectl gen config NAME --endpoint ENDPOINT --out DEST) when DEST lacks its files, writing
    C(secrets.yaml) (the node CA, with its key), C(machinectl.yaml) (an admin client config) and
    C(machine.yaml) (a machine config trusting that CA), each mode 0600.
  - When the files exist, nothing is generated (C(changed=false)) - the CA is made once.
  - Returns paths and the CA's SHA-256 fingerprint only - never a key or certificate. Encrypt the files
    with C(ansible-vault encrypt) and keep them in the inventory's vault.
options:
  dest: {description: Directory for the files., type: path, required: true}
  name: {description: 'The node (cluster) name, written as hostname and CN.', type: str, required: true}
  endpoint:
    description: Where clients reach the API, written into the client config and the server certificate.
    type: str
    required: true
  machinectl:
    description: The command that runs machinectl, e.g. C([deno, run, -A, /src/machinectl/main.ts]).
    type: list
    elements: str
    default: [machinectl]
author: machined maintainers (@machined)
"""

EXAMPLES = r"""
- machined.fleet.machined_secrets:
    dest: "{{ playbook_dir }}/secrets/prod"
    name: prod
    endpoint: 10.0.0.10
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
paths: {description: The three files., returned: always, type: dict}
ca_sha256: {description: SHA-256 of the CA certificate (DER)., returned: always, type: str}
"""

import hashlib
import os
import ssl

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.machined.fleet.plugins.module_utils import client_config
from ansible_collections.machined.fleet.plugins.module_utils.common import run
from ansible_collections.machined.fleet.plugins.module_utils.errors import MachinedError

FILES = {"secrets": "secrets.yaml", "client_config": "machinectl.yaml",
         "machine_config": "machine.yaml"}


def generate(module):
    p = module.params
    paths = {k: os.path.join(p["dest"], v) for k, v in FILES.items()}
    present = [k for k, v in paths.items() if os.path.exists(v)]
    if present and len(present) < len(paths):
        raise MachinedError(f"{p['dest']} holds only {', '.join(present)}: refusing to mix CAs")
    changed = not present
    if changed and not module.check_mode:
        os.makedirs(p["dest"], mode=0o700, exist_ok=True)
        argv = [*p["machinectl"], "gen", "config", p["name"], "--endpoint", p["endpoint"],
                "--out", p["dest"]]
        rc, _out, err = module.run_command(argv)
        if rc != 0:
            raise MachinedError(f"machinectl gen config failed ({rc}): {err.strip()[-500:]}")
    result = {"changed": changed, "paths": paths, "ca_sha256": ""}
    if os.path.exists(paths["client_config"]) and not vaulted(paths["client_config"]):
        creds = client_config.credentials(client_config.load(paths["client_config"]), None)
        der = ssl.PEM_cert_to_DER_cert(creds["ca_pem"])
        result["ca_sha256"] = hashlib.sha256(der).hexdigest()
    return result


def vaulted(path: str) -> bool:
    """Whether the file was encrypted with ansible-vault since (then left alone)."""
    with open(path, "rb") as f:
        return f.read(14) == b"$ANSIBLE_VAULT"


def main():
    module = AnsibleModule(
        argument_spec={
            "dest": {"type": "path", "required": True},
            "name": {"type": "str", "required": True},
            "endpoint": {"type": "str", "required": True},
            "machinectl": {"type": "list", "elements": "str", "default": ["machinectl"]},
        },
        supports_check_mode=True,
    )
    run(module, generate)


if __name__ == "__main__":
    main()
