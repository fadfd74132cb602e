/**
 * `machinectl rotate-ca`'s run over a fleet: each node steps through accept,
 * switch and (with `finish`) finish (plan.ts), one step across every node
 * before the next, with the operator's machine config files edited to match
 * what each node runs. The client config's context gets the new admin
 * credentials (trusting both CAs for the server) once every node accepts the
 * new CA, and trusts the new CA alone after finish. Every run starts by
 * reading where each node stands, so a run that was cut resumes (the state
 * file keeps the new CA meanwhile: rotation_state.ts).
 *
 * @module
 */
import {
  certificateFromPem,
  contextFromPem,
  createCertificateAuthority,
  issueClientCertificate,
  readClientConfig,
  resolveCredentials,
  roleFromCertificate,
  writeClientConfig,
} from "../../pki/mod.ts";
import { caOfConfigText, withCaSection } from "./config_edit.ts";
import { applyLive, observeCa, type Reached, reachNode } from "./node_access.ts";
import {
  caSectionFor,
  mayRun,
  type NodeStand,
  type RotationCas,
  type RotationStep,
  standOf,
} from "./plan.ts";
import {
  type PemCredentials,
  pemCredentials,
  readRotationState,
  type RotationState,
  rotationStatePath,
  writeRotationState,
} from "./rotation_state.ts";

/** Options of {@link rotateCa}. */
export interface RotateCaOptions {
  /** The nodes' endpoints. */
  readonly nodes: readonly string[];
  /** Each node's machine config file (same order as `nodes`); it holds `machine.ca.key`. */
  readonly files: readonly string[];
  /** The client config file. */
  readonly configPath: string;
  /** Its context to rotate. @default the current one */
  readonly context?: string;
  /** Also drop the old CA (old client configs are refused from then on). */
  readonly finish: boolean;
  /** Progress lines. */
  readonly out: (line: string) => void;
  /** Called before each step on each node; a throw cuts the rotation there (tests). */
  readonly beforeStep?: (node: string, step: RotationStep) => void | Promise<void>;
  /** How long a node may take to serve its new CAs after an apply. @default 60 s */
  readonly waitMs?: number;
}

/** What a finished run reached: each node's stand. */
export type RotationResult = Record<string, NodeStand["next"]>;

/**
 * Runs (or resumes) a rotation.
 * @throws Error naming the node or file when a node is unreachable, foreign or refuses
 */
export async function rotateCa(o: RotateCaOptions): Promise<RotationResult> {
  if (o.nodes.length === 0 || o.nodes.length !== o.files.length) {
    throw new RangeError(
      `rotate-ca needs one machine config file per node: ${o.nodes.length} node(s), ${o.files.length} file(s)`,
    );
  }
  const statePath = rotationStatePath(o.configPath);
  const state = await readRotationState(statePath) ?? await startRotation(o, statePath);
  const cas: RotationCas = {
    oldCrt: firstPem(state.old.caPem),
    newCrt: state.newCa.certPem,
  };
  const steps: RotationStep[] = o.finish ? ["accept", "switch", "finish"] : ["accept", "switch"];
  for (const step of steps) {
    const reached = await reachAll(o, state, cas);
    const stands = reached.map((r) => standOf(r.observed, cas));
    if (!mayRun(step, stands)) throw stuck(o, stands, step);
    for (const [i, node] of o.nodes.entries()) {
      if (stands[i].next !== step) continue;
      await o.beforeStep?.(node, step);
      await runStep(o, i, step, reached[i], state, cas);
    }
    if (step === "accept") await useCredentials(o, state, state.next, "old and new CA");
  }
  const final = await reachAll(o, state, cas);
  const result = Object.fromEntries(
    o.nodes.map((n, i) => [n, standOf(final[i].observed, cas).next]),
  );
  if (o.finish) {
    const only = { ...state.next, caPem: state.newCa.certPem };
    await useCredentials(o, state, only, "new CA only");
    await Deno.remove(statePath);
    o.out(`rotation finished; removed ${statePath}`);
  } else {
    o.out(
      "every node serves the new CA and still accepts the old one; once every client has a new " +
        "client config, run again with --finish",
    );
  }
  return result;
}

/** A fresh rotation: a new CA, admin credentials from it, and the state file. */
async function startRotation(o: RotateCaOptions, statePath: string): Promise<RotationState> {
  const config = await readClientConfig(o.configPath);
  const creds = resolveCredentials(config, o.context);
  const cert = certificateFromPem(creds.certPem, `${o.configPath} (${creds.name})`);
  if (roleFromCertificate(cert) !== "os:admin") {
    throw new Error(`rotate-ca needs an os:admin client config; context "${creds.name}" is not`);
  }
  const oldCrt = firstPem(creds.caPem);
  for (const file of o.files) {
    const ca = caOfConfigText(await Deno.readTextFile(file), file);
    if (ca.crt?.trim() !== oldCrt.trim()) {
      throw new Error(
        `"${file}": machine.ca.crt is not the CA context "${creds.name}" trusts; rotate-ca edits ` +
          `the config files the nodes run`,
      );
    }
  }
  const stamp = new Date().toISOString().slice(0, 16);
  const newCa = await createCertificateAuthority({ commonName: `machined ${stamp}` });
  const name = cert.subjectName.getField("CN")[0] ?? "admin";
  const client = await issueClientCertificate({ ca: newCa, name, role: "os:admin" });
  const state: RotationState = {
    context: creds.name,
    old: pemCredentials(creds),
    newCa,
    next: {
      caPem: `${oldCrt.trim()}\n${newCa.certPem.trim()}\n`,
      certPem: client.certPem,
      keyPem: client.keyPem,
    },
  };
  await writeRotationState(statePath, state);
  o.out(`new CA "${newCa.cert.subject}"; rotation state in ${statePath} (keep it private)`);
  return state;
}

/** Every node as it stands; files that lag behind their node are brought in line. */
async function reachAll(o: RotateCaOptions, state: RotationState, cas: RotationCas) {
  const reached: Reached[] = [];
  for (const [i, node] of o.nodes.entries()) {
    const r = await reachNode(node, [state.next, state.old]);
    const stand = standOf(r.observed, cas);
    if (stand.next === "foreign") throw new Error(`Node "${node}": ${stand.reason}`);
    await syncFile(o.files[i], r, state, cas);
    reached.push(r);
  }
  return reached;
}

/** One step on one node: edit its file's text, apply it live, wait for the node, save the file. */
async function runStep(
  o: RotateCaOptions,
  i: number,
  step: RotationStep,
  reached: Reached,
  state: RotationState,
  cas: RotationCas,
): Promise<void> {
  const [node, file] = [o.nodes[i], o.files[i]];
  const text = await Deno.readTextFile(file);
  const section = caSectionFor(step, reached.observed, {
    ...cas,
    oldKey: caOfConfigText(text, file).key,
    newKey: state.newCa.keyPem,
  });
  if (section.key === undefined) throw new Error(`"${file}" has no machine.ca.key`);
  const next = withCaSection(text, file, { ...section, key: section.key });
  await applyLive(node, reached.via, next);
  await waitForStep(o, node, state, cas, step);
  await Deno.writeTextFile(file, next);
  o.out(`${node}: ${step} done`);
}

const AFTER: Record<RotationStep, NodeStand["next"]> = {
  accept: "switch",
  switch: "finish",
  finish: "done",
};

/**
 * Waits until the node's config has taken `step` and apid serves it: the new
 * credentials get in (accept), the server certificate chains to the new CA
 * alone (switch), or an old client certificate is refused (finish).
 */
async function waitForStep(
  o: RotateCaOptions,
  node: string,
  state: RotationState,
  cas: RotationCas,
  step: RotationStep,
): Promise<void> {
  const waitMs = o.waitMs ?? 60_000;
  const deadline = performance.now() + waitMs;
  const via = step === "switch" ? { ...state.next, caPem: cas.newCrt } : state.next;
  let last: unknown;
  while (performance.now() < deadline) {
    try {
      const observed = await observeCa(node, via);
      const served = step !== "finish" ||
        !(await answers(node, { ...state.old, caPem: state.next.caPem }));
      if (standOf(observed, cas).next === AFTER[step] && served) return;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Node "${node}" did not take step ${step} within ${waitMs} ms`, { cause: last });
}

async function answers(node: string, creds: PemCredentials): Promise<boolean> {
  try {
    await observeCa(node, creds);
    return true;
  } catch {
    return false;
  }
}

/**
 * A file one step behind its node (the run was cut between the apply and the
 * write) gets the node's `machine.ca`: the new CA's key once the node serves it.
 */
async function syncFile(file: string, r: Reached, state: RotationState, cas: RotationCas) {
  const text = await Deno.readTextFile(file);
  const ca = caOfConfigText(text, file);
  const norm = (l: readonly string[]) => l.map((p) => p.trim()).join("\n");
  const crt = r.observed.crt ?? "";
  if (ca.crt?.trim() === crt.trim() && norm(ca.accepted) === norm(r.observed.accepted)) return;
  const key = crt.trim() === cas.newCrt.trim() ? state.newCa.keyPem : ca.key;
  if (key === undefined || (crt.trim() === cas.oldCrt.trim() && ca.crt?.trim() !== crt.trim())) {
    throw new Error(
      `"${file}" cannot be brought in line with its node: the old CA key is not in it`,
    );
  }
  await Deno.writeTextFile(
    file,
    withCaSection(text, file, { crt, key, accepted: r.observed.accepted }),
  );
}

/** Points the rotated context at `creds` (endpoints and nodes kept). */
async function useCredentials(
  o: RotateCaOptions,
  state: RotationState,
  creds: { caPem: string; certPem: string; keyPem: string },
  what: string,
): Promise<void> {
  const config = await readClientConfig(o.configPath);
  const current = config.contexts[state.context];
  if (!current) throw new Error(`Context "${state.context}" is gone from "${o.configPath}"`);
  const next = { ...current, ...contextFromPem(current.endpoints, creds) };
  if (next.ca === current.ca && next.crt === current.crt && next.key === current.key) return;
  config.contexts[state.context] = next;
  await writeClientConfig(o.configPath, config);
  o.out(`client config "${o.configPath}" (context "${state.context}"): new credentials, ${what}`);
}

function stuck(o: RotateCaOptions, stands: readonly NodeStand[], step: RotationStep): Error {
  const where = o.nodes.map((n, i) => `${n}: next ${stands[i].next}`).join(", ");
  return new Error(`Cannot run step ${step} yet (${where})`);
}

/** The first PEM certificate of a bundle. */
function firstPem(bundle: string): string {
  const m = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/.exec(bundle);
  return m ? m[0] : bundle;
}
