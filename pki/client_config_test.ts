import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import {
  addContext,
  type ClientContext,
  contextFromPem,
  emptyClientConfig,
  listContexts,
  mergeClientConfig,
  parseClientConfig,
  readClientConfig,
  resolveClientConfigPath,
  resolveCredentials,
  stringifyClientConfig,
  useContext,
  writeClientConfig,
} from "./client_config.ts";
import { withDefaultPort } from "./generate_client_config.ts";
import { isPkiError } from "./pki_error.ts";

const pem = (tag: string) => `-----BEGIN ${tag}-----\nAAAA\n-----END ${tag}-----\n`;
const ctx = (endpoint: string): ClientContext =>
  contextFromPem([endpoint], {
    caPem: pem("CERTIFICATE"),
    certPem: pem("CERTIFICATE"),
    keyPem: pem("PRIVATE KEY"),
  });

Deno.test("resolveClientConfigPath: flag, then $MACHINECTL_CONFIG, then ~/.config", () => {
  assert.equal(
    resolveClientConfigPath("/f.yaml", { MACHINECTL_CONFIG: "/e.yaml" }, "/h"),
    "/f.yaml",
  );
  assert.equal(
    resolveClientConfigPath(undefined, { MACHINECTL_CONFIG: "/e.yaml" }, "/h"),
    "/e.yaml",
  );
  assert.equal(
    resolveClientConfigPath("", { MACHINECTL_CONFIG: "" }, "/h"),
    "/h/.config/machinectl/config.yaml",
  );
});

Deno.test("resolveClientConfigPath: $XDG_CONFIG_HOME after $MACHINECTL_CONFIG, before ~/.config", () => {
  assert.equal(
    resolveClientConfigPath(undefined, { XDG_CONFIG_HOME: "/x" }, "/h"),
    "/x/machinectl/config.yaml",
  );
  assert.equal(
    resolveClientConfigPath(
      undefined,
      { MACHINECTL_CONFIG: "/e.yaml", XDG_CONFIG_HOME: "/x" },
      "/h",
    ),
    "/e.yaml",
  );
  assert.equal(
    resolveClientConfigPath("/f.yaml", { XDG_CONFIG_HOME: "/x" }, "/h"),
    "/f.yaml",
  );
  // Unset, empty or relative: the spec says to ignore it; today's default applies.
  for (const XDG_CONFIG_HOME of [undefined, "", "rel/dir"]) {
    assert.equal(
      resolveClientConfigPath(undefined, { XDG_CONFIG_HOME }, "/h"),
      "/h/.config/machinectl/config.yaml",
    );
  }
});

Deno.test("the file format matches the documented shape and round-trips", () => {
  const config = addContext(emptyClientConfig(), "node-1", ctx("127.0.0.1:50000"));
  const text = stringifyClientConfig(config);
  const doc = parse(text);
  assert.equal(doc.context, "node-1");
  assert.deepEqual(doc.contexts["node-1"].endpoints, ["127.0.0.1:50000"]);
  assert.equal(atob(doc.contexts["node-1"].key), pem("PRIVATE KEY"));
  assert.deepEqual(parseClientConfig(text), config);
  assert.deepEqual(parseClientConfig(""), emptyClientConfig());
});

Deno.test("add, use, list, merge with renaming", () => {
  let config = addContext(emptyClientConfig(), "a", ctx("a:50000"));
  config = addContext(config, "b", ctx("b:50000"));
  assert.equal(config.context, "a", "adding does not switch when a context is current");
  config = useContext(config, "b");
  assert.deepEqual(listContexts(config), [
    { name: "a", current: false, endpoints: ["a:50000"] },
    { name: "b", current: true, endpoints: ["b:50000"] },
  ]);
  assert.throws(() => useContext(config, "zz"), (e) => isPkiError(e, "no_context"));

  const incoming = addContext(
    addContext(emptyClientConfig(), "a", ctx("a2:50000")),
    "c",
    ctx("c:1"),
  );
  const { config: merged, renamed } = mergeClientConfig(config, incoming);
  assert.deepEqual(renamed, { a: "a-1" });
  assert.deepEqual(Object.keys(merged.contexts).sort(), ["a", "a-1", "b", "c"]);
  assert.equal(merged.context, "a-1", "the merged config's current context becomes current");
  assert.deepEqual(merged.contexts["a-1"].endpoints, ["a2:50000"]);
  assert.deepEqual(merged.contexts.a.endpoints, ["a:50000"], "the original is kept");
  assert.deepEqual(mergeClientConfig(merged, incoming).renamed, { a: "a-2", c: "c-1" });
});

Deno.test("resolveCredentials decodes PEM and names what is wrong", () => {
  const config = addContext(emptyClientConfig(), "n", ctx("n:50000"));
  const creds = resolveCredentials(config);
  assert.equal(creds.keyPem, pem("PRIVATE KEY"));
  assert.deepEqual(creds.endpoints, ["n:50000"]);
  assert.throws(() => resolveCredentials(emptyClientConfig()), (e) => isPkiError(e, "no_context"));
  assert.throws(
    () => resolveCredentials(config, "other"),
    (e) => isPkiError(e, "no_context") && e.details.context === "other",
  );
  const broken = { ...config, contexts: { n: { ...config.contexts.n, crt: btoa("hello") } } };
  assert.throws(
    () => resolveCredentials(broken),
    (e) => isPkiError(e, "invalid") && /crt/.test(e.message),
  );
  assert.throws(
    () => parseClientConfig("contexts:\n  x:\n    endpoints: 3\n"),
    (e) => isPkiError(e, "invalid") && e.message.includes("contexts.x"),
  );
});

Deno.test("read/write: a missing file is empty; writes are 0600 and create the directory", async () => {
  const home = await Deno.makeTempDir();
  try {
    const path = resolveClientConfigPath(undefined, {}, home);
    assert.deepEqual(await readClientConfig(path), emptyClientConfig());
    await writeClientConfig(path, addContext(emptyClientConfig(), "n", ctx("n:50000")));
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.equal((await readClientConfig(path)).context, "n");
    const names = (await Array.fromAsync(Deno.readDir(join(home, ".config", "machinectl"))))
      .map((e) => e.name);
    assert.deepEqual(names, ["config.yaml"]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("withDefaultPort", () => {
  assert.equal(withDefaultPort("node-1"), "node-1:50000");
  assert.equal(withDefaultPort("10.0.0.5:123"), "10.0.0.5:123");
  assert.equal(withDefaultPort("fd00::1"), "[fd00::1]:50000");
  assert.equal(withDefaultPort("[fd00::1]"), "[fd00::1]:50000");
  assert.equal(withDefaultPort("[fd00::1]:9"), "[fd00::1]:9");
});
