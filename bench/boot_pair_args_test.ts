import assert from "node:assert/strict";
import { parseBootPairArgs } from "./boot_pair_args.ts";

Deno.test("boot_pair args: two images, the pairs (3 by default) and the options in any order", () => {
  assert.deepEqual(parseBootPairArgs(["a.img", "b.img"]), {
    before: "a.img",
    after: "b.img",
    pairs: 3,
    client: undefined,
    memory: undefined,
    label: undefined,
  });
  assert.deepEqual(
    parseBootPairArgs([
      "--client",
      "c.yaml",
      "a.img",
      "b.img",
      "5",
      "--memory=page-out",
      "--label",
      "x",
    ]),
    { before: "a.img", after: "b.img", pairs: 5, client: "c.yaml", memory: "page-out", label: "x" },
  );
});

Deno.test("boot_pair args: usage errors before anything boots", () => {
  const error = (argv: string[]) => {
    const r = parseBootPairArgs(argv);
    assert.ok("error" in r, JSON.stringify(r));
    return r.error;
  };
  assert.match(error(["a.img"]), /two images/);
  assert.match(error(["a.img", "b.img", "3", "c.img"]), /two images/);
  assert.match(error(["a.img", "b.img", "0"]), /pairs "0"/);
  assert.match(error(["a.img", "b.img", "--memory", "rss"]), /neither footprint nor page-out/);
  assert.match(error(["a.img", "b.img", "--pairs", "3"]), /Unknown option "--pairs"/);
  assert.match(error(["a.img", "b.img", "--client"]), /needs a value/);
});
