/**
 * TrustedRootsController: writes one CA bundle (the image's system bundle, then each of
 * `machine.trusted_roots`) to a fixed path, atomically and only when its bytes change, and
 * publishes TrustedRootsStatus with the bundle's SHA-256. It runs before any config too, so
 * the bundle services are pointed at exists from the start. Input: MachineConfig. Output:
 * TrustedRootsStatus (it writes nothing else, and no other controller writes the bundle).
 * @module
 */
import { type CaCertificateFacts, inspectCaPem, type TrustedRootConfig } from "../../config/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type MachineController,
  type ResourceSpecs,
  TRUSTED_ROOTS_STATUS,
  TRUSTED_ROOTS_STATUS_ID,
  type TrustedRootsStatusSpec,
  type TrustedRootStatus,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import { type BundleFiles, MAX_SYSTEM_BUNDLE_BYTES, SYSTEM_BUNDLE_PATH } from "./bundle_files.ts";

const NAME = "trust.TrustedRootsController";

/** What the controller needs. */
export interface TrustedRootsDeps {
  files: BundleFiles;
  /** Where the merged bundle goes (a node: /run/machined/trust/ca-certificates.crt). */
  bundlePath: string;
  /** @default SYSTEM_BUNDLE_PATH */
  systemBundlePath?: string;
  events?: EventBus;
}

/** Builds the controller. */
export function trustedRootsController(deps: TrustedRootsDeps): MachineController {
  return new TrustedRootsController(deps);
}

/** See the module doc. */
export class TrustedRootsController implements MachineController {
  readonly name = NAME;
  readonly inputs = [
    { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
  ] as const;
  readonly outputs = [{ type: TRUSTED_ROOTS_STATUS, kind: "exclusive" }] as const;

  constructor(private readonly deps: TrustedRootsDeps) {}

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const config = ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config;
    const systemPath = this.deps.systemBundlePath ?? SYSTEM_BUNDLE_PATH;
    let system: string | undefined;
    let systemError = "";
    try {
      system = await this.deps.files.read(systemPath, MAX_SYSTEM_BUNDLE_BYTES);
      if (system === undefined) systemError = `${systemPath} does not exist`;
    } catch (e) {
      systemError = `cannot read ${systemPath}: ${(e as Error).message}`;
    }
    const bundle = composeBundle(system, config?.machine.trusted_roots ?? []);
    const sha256 = await sha256Hex(bundle.text);
    const current = await this.deps.files.read(this.deps.bundlePath, MAX_SYSTEM_BUNDLE_BYTES * 2)
      .catch(() => undefined);
    if (current !== bundle.text) {
      await this.deps.files.write(this.deps.bundlePath, bundle.text);
      this.deps.events?.emit(
        "controller",
        NAME,
        "bundle-written",
        `Wrote ${this.deps.bundlePath}: ${bundle.systemCertificates} system certificates and ${bundle.roots.length} configured roots (sha256 ${sha256})`,
      );
    }
    const spec: TrustedRootsStatusSpec = {
      path: this.deps.bundlePath,
      sha256,
      systemBundle: systemPath,
      systemCertificates: bundle.systemCertificates,
      systemError,
      roots: bundle.roots,
    };
    await ctx.apply(
      { type: TRUSTED_ROOTS_STATUS, namespace: "runtime", id: TRUSTED_ROOTS_STATUS_ID },
      spec,
    );
  }
}

/** The bundle's text and what it holds. */
export interface ComposedBundle {
  readonly text: string;
  readonly systemCertificates: number;
  readonly roots: TrustedRootStatus[];
}

/**
 * The system bundle as it is, then each configured root under a `# name` comment line (PEM
 * readers skip text between blocks). Roots were checked when the config was validated; one
 * that no longer parses is left out (and shown nowhere) rather than failing the bundle, and
 * one that expired since is kept (TLS refuses it anyway) with its expiry in the status. Pure.
 */
export function composeBundle(
  system: string | undefined,
  roots: readonly TrustedRootConfig[],
): ComposedBundle {
  const parts: string[] = [];
  if (system) parts.push(system.endsWith("\n") ? system : `${system}\n`);
  const listed: TrustedRootStatus[] = [];
  for (const root of roots) {
    // Expiry was checked at validation: -Infinity keeps one that expired since.
    const r = inspectCaPem(root.pem, Number.NEGATIVE_INFINITY);
    if (!r.ok) continue;
    parts.push(`# machined trusted root: ${root.name}\n${r.facts.pem.trimEnd()}\n`);
    listed.push(rootStatus(root.name, r.facts));
  }
  return {
    text: parts.join(""),
    systemCertificates: (system?.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length,
    roots: listed,
  };
}

function rootStatus(name: string, f: CaCertificateFacts): TrustedRootStatus {
  return {
    name,
    subject: f.subject,
    fingerprint: f.fingerprint,
    notAfter: f.notAfter.toISOString(),
  };
}

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}
