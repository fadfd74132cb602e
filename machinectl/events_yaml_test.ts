/**
 * `events -o yaml` prints what `get -w -o yaml` does: one YAML document per
 * event, separated by `---`, each parsing back to the event's fields.
 */
import { deepEqual, equal } from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { startApiFixture } from "../api/testing.ts";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";
import { clientConfig } from "./testing.ts";

Deno.test("events -o yaml: one YAML document per event, parsing back to its fields", async () => {
  const f = await startApiFixture();
  try {
    const config = await clientConfig(f, "os:reader");
    f.events.emit("service", "payload", "failed", "exit 1", { code: "1" });
    f.events.emit("power", "machine", "reboot", "requested", {});
    const io = bufferIo();
    const abort = new AbortController();
    const inner = io.out;
    io.out = (t) => {
      inner(t);
      if (io.stdout.length >= 2) abort.abort();
    };
    const code = await runMachinectl(
      ["--config", config, "events", "--tail", "2", "-o", "yaml"],
      io,
      { signal: abort.signal },
    );
    equal(code, 0, io.stderr.join("\n"));
    const docs = parseAllDocuments(io.stdout.join("\n"));
    if (!Array.isArray(docs)) throw new Error("not a YAML stream");
    const events = docs.map((d) => d.toJS()).filter((d) => d !== null);
    deepEqual(
      events.map((e) => [e.kind, e.subject, e.action, e.message, e.fields]),
      [
        ["service", "payload", "failed", "exit 1", { code: "1" }],
        ["power", "machine", "reboot", "requested", {}],
      ],
    );
    equal(typeof events[0].seq, "number");
  } finally {
    await f.close();
  }
});
