/**
 * The user apid (machined-edge) runs as on a node: `machined-api`, which owns
 * nothing but its PKI copy (api/host/apid_pki.ts). The ProcessSpec itself is
 * api/edge/edge_process_spec.ts.
 */

/** apid's user and group on a node. */
export const APID_UID = 50000;
/** @see APID_UID */
export const APID_GID = 50000;
