"""The connection options every module of machined.fleet takes."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  endpoint:
    description:
      - The node's API, C(host[:port]) (port 50000 by default). Defaults to the context's first endpoint.
    type: str
  config:
    description:
      - The machinectl client config. Defaults as machinectl does - C($MACHINECTL_CONFIG),
        then C($XDG_CONFIG_HOME/machinectl/config.yaml), then C(~/.config/machinectl/config.yaml).
    type: path
  client_config:
    description:
      - The client config's text instead of a file, e.g. C(lookup('file', 'secrets/prod/machinectl.yaml'))
        of a file encrypted with Ansible Vault (the lookup decrypts it). Never logged.
    type: str
  context:
    description: The context of the client config to use. Defaults to its current context.
    type: str
  insecure:
    description:
      - A node in maintenance mode - no client certificate, the server certificate pinned by I(fingerprint).
    type: bool
    default: false
  fingerprint:
    description: SHA-256 of the server certificate the node printed in maintenance mode (with I(insecure)).
    type: str
  timeout:
    description: Seconds one API call may take.
    type: float
    default: 30
notes:
  - "Runs on the controller (the node has no Python): use C(connection: local) and
    C(ansible_python_interpreter: {{ ansible_playbook_python }})."
"""
