import assert from "node:assert/strict";
import { procKiB, rssParts } from "./footprint.ts";

Deno.test("footprint: a process's resident set split into anonymous, file-backed and shmem", async () => {
  const fields = await rssParts("machined", "self");
  const m =
    /^ machined_rss_anon_kib=(\d+) machined_rss_file_kib=(\d+) machined_rss_shmem_kib=(\d+)$/
      .exec(fields);
  assert.ok(m, fields);
  assert.ok(Number(m[1]) > 0 && Number(m[2]) > 0, fields);
  assert.equal(
    await rssParts("apid", undefined),
    " apid_rss_anon_kib=undefined apid_rss_file_kib=undefined apid_rss_shmem_kib=undefined",
  );
  assert.equal(await procKiB("/proc/self/status", "NoSuchField"), undefined);
});
