/**
 * Running an install's plan steps on the ESP, and receiving a bundle's files
 * into the target slot as `*.new`: streamed in one write session (a plain
 * bundle), or, for a bundle whose files must be checked before a byte is
 * written (a Secure Boot bundle's UKIs), held in memory and checked first,
 * the ESP opened for writing only once they passed.
 * @module
 */
import { createHash } from "node:crypto";
import type { EspBackend, EspFiles } from "../platform/esp/mod.ts";
import { bytesContent, textContent } from "../platform/esp/mod.ts";
import { BundleError, type OpenedBundle, SlotError } from "../bundle/mod.ts";
import type { InstallSteps, PlanStep } from "./slot_plan.ts";
import { writeOrNoSpace } from "./install_guards.ts";

/** Progress while receiving (bytes of the bundle's files). */
export type OnInstallEvent = (e: { phase: "received"; bytes: number; total: number }) => void;

/**
 * Run plan steps in order (`receive` steps are not runnable here).
 * @throws SlotError verify-failed when a re-hash differs.
 */
export async function runSteps(fs: EspFiles, steps: PlanStep[]): Promise<void> {
  for (const s of steps) {
    switch (s.op) {
      case "remove":
        await fs.remove(s.path);
        break;
      case "rename":
        await fs.rename(s.from, s.to);
        break;
      case "syncDir":
        await fs.syncDir(s.dir);
        break;
      case "writeEntry":
        await fs.writeFile(s.path, textContent(s.text));
        break;
      case "verify": {
        const got = await hashChunks(fs.readChunks(s.path));
        if (got.sha256 !== s.sha256 || got.size !== s.size) {
          throw new SlotError(
            "verify-failed",
            `${s.path} reads back as ${got.size} bytes sha256 ${got.sha256.slice(0, 12)}…, ` +
              `written as ${s.size} bytes ${s.sha256.slice(0, 12)}…`,
          );
        }
        break;
      }
      case "receive":
        throw new TypeError(`a receive step (${s.path}) needs the bundle stream`);
    }
  }
}

/** Clean, stream the files into `*.new`, commit; on any failure remove this bundle's `*.new`. */
export async function receiveInto(
  fs: EspFiles,
  opened: OpenedBundle,
  plan: InstallSteps,
  onEvent: OnInstallEvent | undefined,
): Promise<void> {
  try {
    await runSteps(fs, plan.clean);
    await opened.receive({
      file: (f, chunks) =>
        writeOrNoSpace(fs, `/${plan.target}/${f.name}.new`, { size: f.size, chunks }),
    }, progress(onEvent));
    await runSteps(fs, plan.settle);
  } catch (e) {
    // A refused bundle leaves nothing of itself (a power cut leaves *.new, cleaned next time).
    await removeReceived(fs, plan);
    throw e;
  }
}

/**
 * Receive a bundle whose `plan.hold` files are held in memory and checked by
 * `check` before the ESP opens for writing; then one write session cleans,
 * writes the held files that have a receive step, and streams the rest (the
 * held files come first in the bundle). On any failure the `*.new` files are
 * removed.
 * @throws BundleError bad-uki for a held file above `maxHeldBytes`, whatever
 *   `check` throws, and what {@link receiveInto} throws.
 */
export async function receiveHeld(
  esp: EspBackend,
  opened: OpenedBundle,
  plan: InstallSteps,
  o: {
    check: (name: string, bytes: Uint8Array) => Promise<void>;
    maxHeldBytes: number;
    onEvent?: OnInstallEvent;
  },
): Promise<void> {
  // Only what will be written stays in memory; a held file without a receive step is dropped.
  const held = new Map<string, Uint8Array>();
  const checked = new Set<string>();
  const hold = new Set(plan.hold ?? []);
  const written = new Set(plan.receive.flatMap((s) => s.op === "receive" ? [s.file] : []));
  await opened.receive({
    file: async (f, chunks) => {
      if (hold.has(f.name)) {
        if (f.size > o.maxHeldBytes) {
          throw new BundleError(
            "bad-uki",
            `${f.name} is ${f.size} bytes (at most ${o.maxHeldBytes})`,
          );
        }
        const bytes = await collect(chunks, f.size);
        await o.check(f.name, bytes);
        checked.add(f.name);
        if (written.has(f.name)) held.set(f.name, bytes);
        return;
      }
      const missing = [...hold].filter((n) => !checked.has(n));
      if (missing.length) throw new BundleError("bad-manifest", `${missing.join(", ")} not first`);
      await esp.write((fs) => writeAfterHeld(fs, plan, held, { ...f, chunks }));
    },
  }, progress(o.onEvent));
}

/** A receive progress callback that reports every 8 MiB and at the end. */
function progress(onEvent: OnInstallEvent | undefined): (bytes: number, total: number) => void {
  let lastReport = 0;
  return (bytes, total) => {
    if (bytes === total || bytes - lastReport >= 8 << 20) {
      lastReport = bytes;
      onEvent?.({ phase: "received", bytes, total });
    }
  };
}

/** The write session of {@link receiveHeld}: one streamed file after the held ones. */
async function writeAfterHeld(
  fs: EspFiles,
  plan: InstallSteps,
  held: Map<string, Uint8Array>,
  streamed: { name: string; size: number; chunks: AsyncIterable<Uint8Array> },
): Promise<void> {
  try {
    await runSteps(fs, plan.clean);
    for (const s of plan.receive) {
      if (s.op !== "receive") continue;
      const bytes = held.get(s.file);
      if (bytes) await writeOrNoSpace(fs, s.path, bytesContent(bytes));
      else if (s.file === streamed.name) await writeOrNoSpace(fs, s.path, streamed);
    }
    await runSteps(fs, plan.settle);
  } catch (e) {
    await removeReceived(fs, plan);
    throw e;
  }
}

async function collect(chunks: AsyncIterable<Uint8Array>, size: number): Promise<Uint8Array> {
  const out = new Uint8Array(size);
  let at = 0;
  for await (const c of chunks) {
    if (at + c.length > size) throw new BundleError("file-mismatch", `more than ${size} bytes`);
    out.set(c, at);
    at += c.length;
  }
  return at === size ? out : out.subarray(0, at);
}

/** Remove this install's `*.new` files (errors ignored: the next install's clean retries). */
export async function removeReceived(fs: EspFiles, plan: InstallSteps): Promise<void> {
  const leftovers = plan.receive.flatMap((s) => s.op === "receive" ? [rmStep(s.path)] : []);
  await runSteps(fs, leftovers).catch(() => {});
}

export async function hashChunks(
  chunks: AsyncIterable<Uint8Array>,
): Promise<{ size: number; sha256: string }> {
  const h = createHash("sha256");
  let size = 0;
  for await (const c of chunks) {
    h.update(c);
    size += c.length;
  }
  return { size, sha256: h.digest("hex") };
}

export function rmStep(path: string): PlanStep {
  return { op: "remove", path };
}
