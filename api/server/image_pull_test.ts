import { deepEqual, equal, match, rejects } from "node:assert/strict";
import { Code } from "@connectrpc/connect";
import type { HandlerContext } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { outcome, startApiFixture } from "../testing.ts";
import {
  createImagePullHandler,
  imageRefProblem,
  MAX_IMAGE_REF_BYTES,
} from "./image_pull_handler.ts";
import { ImagePullRequestSchema } from "../gen/machined/v1/machine_pb.ts";
import { createCriClient } from "../../cri/mod.ts";
import type { CriImage } from "../../cri/mod.ts";

const HELLO: CriImage = {
  id: "sha256:c0ffee",
  tags: ["registry.example:5000/e2e/hello:1"],
  digests: ["registry.example:5000/e2e/hello@sha256:beef"],
  sizeBytes: 512,
  pinned: false,
};

Deno.test("ImagePull (operator) pulls through the CRI; Images then lists it; a reader is refused", async () => {
  const f = await startApiFixture();
  try {
    f.cri.pullable.set(HELLO.tags[0], HELLO);
    const operator = f.client(f.pki.clients["os:operator"]);
    const r = await operator.api.imagePull({ image: HELLO.tags[0] });
    deepEqual([r.imageId, r.socket], [HELLO.id, f.cri.socket]);
    const listed = await operator.api.images({});
    deepEqual(listed.images.map((i) => i.id).includes(HELLO.id), true);
    const reader = f.client(f.pki.clients["os:reader"]);
    equal(await outcome(() => reader.api.imagePull({ image: HELLO.tags[0] })), "PermissionDenied");
    equal(f.cri.calls.PullImage, 1, "the reader's call never reached containerd");
  } finally {
    await f.close();
  }
});

Deno.test("ImagePull: containerd's refusal is FailedPrecondition in its words; no runtime is Unavailable; a bad reference never reaches it", async () => {
  const f = await startApiFixture();
  try {
    const c = f.client(f.pki.clients["os:operator"]);
    await rejects(
      () => c.api.imagePull({ image: "registry.example/missing:1" }),
      (e: Error) => {
        match(e.message, /containerd could not pull "registry\.example\/missing:1": .*not found/);
        return true;
      },
    );
    equal(await outcome(() => c.api.imagePull({ image: "a b" })), "InvalidArgument");
    equal(await outcome(() => c.api.imagePull({ image: "" })), "InvalidArgument");
    equal(f.cri.calls.PullImage, 1);
    f.cri.failWith = Code.Unavailable;
    equal(await outcome(() => c.api.imagePull({ image: HELLO.tags[0] })), "Unavailable");
  } finally {
    await f.close();
  }
});

Deno.test("imageRefProblem bounds the reference: length, spaces, control characters", () => {
  equal(imageRefProblem("registry.example:5000/team/app@sha256:" + "a".repeat(64)), undefined);
  match(imageRefProblem("x".repeat(MAX_IMAGE_REF_BYTES + 1))!, /longer than 512 bytes/);
  equal(imageRefProblem("x".repeat(MAX_IMAGE_REF_BYTES)), undefined);
  match(imageRefProblem("app:1\x1b[2J")!, /control characters/);
  match(imageRefProblem("app:1\n")!, /spaces or control/);
});

Deno.test("ImagePull's budget: one pull at a time on the node (ResourceExhausted), each within its deadline (DeadlineExceeded)", async () => {
  const f = await startApiFixture();
  try {
    f.cri.hang = true;
    const deps = { store: f.store, cri: (socket: string) => createCriClient(socket) };
    const handler = createImagePullHandler(deps, { timeoutMs: 300 });
    const ctx = { signal: new AbortController().signal } as HandlerContext;
    const req = create(ImagePullRequestSchema, { image: HELLO.tags[0] });
    const first = handler.imagePull(req, ctx);
    const second = await Promise.resolve(handler.imagePull(req, ctx)).then(
      () => "answered",
      (e: Error) => e.name,
    );
    equal(second, "ResourceExhaustedError", "a second pull while one runs is refused");
    await rejects(Promise.resolve(first), (e: Error) => {
      equal(e.name, "DeadlineExceededError");
      match(e.message, /did not finish within 0\.3 s/);
      return true;
    });
    f.cri.hang = false;
    f.cri.pullable.set(HELLO.tags[0], HELLO);
    const after = await handler.imagePull(req, ctx);
    equal(after.imageId, HELLO.id, "the budget is free again once the first pull ended");
  } finally {
    await f.close();
  }
});
