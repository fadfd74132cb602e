import { espBackendConformance } from "./backend_conformance.ts";
import { FakeEspBackend } from "./backend_fake.ts";
import { DirEspFiles } from "./dir_files.ts";

espBackendConformance("FakeEspBackend", () =>
  Promise.resolve({
    esp: new FakeEspBackend(),
    close: () => Promise.resolve(),
  }));

espBackendConformance("DirEspFiles", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/A`);
  await Deno.mkdir(`${dir}/loader/entries`, { recursive: true });
  const files = new DirEspFiles(dir);
  return {
    esp: { read: (fn) => fn(files), write: (fn) => fn(files) },
    close: () => Deno.remove(dir, { recursive: true }),
  };
});
