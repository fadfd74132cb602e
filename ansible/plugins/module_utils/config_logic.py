"""Pure decisions of machined_config: the desired document (a base plus
RFC 7386 merge patches, applied here on the client until the node takes
patches itself), and whether a dry run's answer means a change.

`changed` is decided by the node's hashes only (canonical JSON, RFC 8785, of
the parsed config with its defaults): two texts that differ in comments,
quoting or key order are the same config, and a diff shown for redacted
secrets alone is not a change either way.
"""

from __future__ import annotations

import copy

from ansible_collections.machined.fleet.plugins.module_utils.errors import MachinedError

APPLY_MODES = {
    "auto": "APPLY_MODE_AUTO",
    "no_reboot": "APPLY_MODE_NO_REBOOT",
    "reboot": "APPLY_MODE_REBOOT",
    "staged": "APPLY_MODE_STAGED",
    "try": "APPLY_MODE_TRY",
}


class PatchError(MachinedError):
    """A patch is not a mapping, or the base document is not one."""


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch: mappings merge key by key, `None` (YAML
    `null`) deletes a key, anything else replaces. Pure; inputs untouched."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def desired_document(base: dict, patches: list) -> dict:
    """`base` with each patch merged in order. @raises PatchError"""
    if not isinstance(base, dict):
        raise PatchError("the machine config must be a YAML mapping")
    doc = base
    for i, p in enumerate(patches or []):
        if not isinstance(p, dict):
            raise PatchError(f"patch {i + 1} is not a mapping (an RFC 7386 merge patch)")
        doc = merge_patch(doc, p)
    return doc


def differs(dry_run: dict) -> bool:
    """Whether applying changes the node: the hashes differ. A node that
    returns no hash yet (none in force) always differs."""
    current = dry_run.get("currentSha256", "")
    requested = dry_run.get("requestedSha256", "")
    if not requested:
        raise MachinedError("the node's dry run returned no requested_sha256 (too old a node?)")
    return current != requested


def ansible_diff(dry_run: dict, endpoint: str) -> dict:
    """Ansible's diff from the node's unified diff (already redacted by the
    node, so secrets never reach the play's output)."""
    return {
        "before_header": f"{endpoint} (in force, sha256 {dry_run.get('currentSha256', '')[:12]})",
        "after_header": f"requested (sha256 {dry_run.get('requestedSha256', '')[:12]})",
        "prepared": dry_run.get("diff", ""),
    }


def summary(dry_run: dict) -> dict:
    """What the module returns about a dry run or apply, in snake case."""
    return {
        "changed_fields": dry_run.get("changed", []),
        "domains": dry_run.get("domains", []),
        "reboot_fields": dry_run.get("rebootFields", []),
        "reboots": bool(dry_run.get("reboots", False)),
        "refusal": dry_run.get("refusal", ""),
        "current_sha256": dry_run.get("currentSha256", ""),
        "requested_sha256": dry_run.get("requestedSha256", ""),
        "mode": dry_run.get("mode", ""),
        "diff_truncated": bool(dry_run.get("diffTruncated", False)),
    }
