import { equal, notEqual, ok } from "node:assert/strict";
import { fromBinary } from "@bufbuild/protobuf";
import { WatchResponseSchema } from "../gen/machined/v1/machine_pb.ts";
import type { ResourceSpecs } from "../../resources/mod.ts";
import { Store, type WatchEvent } from "../../runtime/mod.ts";
import { fakeServiceSpec } from "../testing.ts";
import { REDACTED } from "../auth/mod.ts";
import { createWatchFanout } from "./watch_fanout.ts";

const PTR = { type: "ServiceSpec" as const, namespace: "runtime", id: "web" };

Deno.test("a live event is encoded once per visibility, and every stream gets those bytes", async () => {
  const store = new Store<ResourceSpecs>();
  const fanout = createWatchFanout(store);
  const streams = Array.from({ length: 3 }, () => fanout.open("ServiceSpec", {}));
  for (const w of streams) equal((await w.next()).value?.kind, "bootstrapped");
  store.create({
    ...PTR,
    owner: "test",
    spec: { ...fakeServiceSpec(["/bin/web"]), env: { API_TOKEN: "s3cret" } },
  });
  const events: WatchEvent[] = [];
  for (const w of streams) events.push((await w.next()).value!);
  equal(events[1], events[0], "the streams read the same shared event");
  const reader = events.map((e) => fanout.frame(e, "os:reader"));
  equal(reader[1], reader[0], "the same bytes, not an equal copy");
  equal(reader[2], reader[0]);
  const admin = fanout.frame(events[0], "os:admin");
  notEqual(admin, reader[0]);
  equal(fanout.frame(events[0], "os:operator"), admin, "operators see what admins see");
  const envOf = (frame: Uint8Array) => {
    const m = fromBinary(WatchResponseSchema, frame.subarray(5));
    ok(m.event.case === "created" && m.event.value.spec.case === "serviceSpec");
    return m.event.value.spec.value.env.API_TOKEN;
  };
  equal(envOf(reader[0]), REDACTED);
  equal(envOf(admin), "s3cret");
  equal(new DataView(admin.buffer).getUint32(1), admin.byteLength - 5, "a gRPC length prefix");
  equal(fanout.message(events[0], "os:reader"), fanout.message(events[1], "os:reader"));
  for (const w of streams) w.close();
  equal(store.watchCount, 0);
});
