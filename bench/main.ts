/**
 * `deno task bench`: runs every benchmark and prints one JSON object per line
 * (machine-readable), then writes them all to bench/results/latest.json.
 * Pass names to run a subset: `deno task bench runtime api`.
 */
import { controllerChain, type Figure, storeThroughput, watchFanout } from "./runtime_bench.ts";

const suites: Record<string, () => Promise<Figure[]>> = {
  runtime: async () => [
    ...storeThroughput(),
    await watchFanout(1),
    await watchFanout(100),
    await watchFanout(1000, 100),
    await controllerChain(),
  ],
};

const wanted = Deno.args.length > 0 ? Deno.args : Object.keys(suites);
const all: Figure[] = [];
for (const name of wanted) {
  const suite = suites[name];
  if (!suite) {
    console.error(`unknown benchmark suite "${name}"; known: ${Object.keys(suites).join(", ")}`);
    Deno.exit(2);
  }
  for (const figure of await suite()) {
    const line = { suite: name, ...figure };
    console.log(JSON.stringify(line));
    all.push(line);
  }
}
const dir = new URL("./results/", import.meta.url);
await Deno.mkdir(dir, { recursive: true });
await Deno.writeTextFile(
  new URL("latest.json", dir),
  JSON.stringify({ at: new Date().toISOString(), deno: Deno.version.deno, figures: all }, null, 2) +
    "\n",
);
