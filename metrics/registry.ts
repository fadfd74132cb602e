/**
 * A small Prometheus registry: counters, gauges and histograms that code
 * updates as things happen, plus collectors that read a value at scrape time
 * (memory, service state), rendered in the text exposition format 0.0.4. It
 * is in-process and dependency-free because machined is PID 1: a scrape must
 * cost a few string joins, never a library's worker or a network call.
 */

/** Label names → values of one series. */
export type Labels = Readonly<Record<string, string>>;

/** What a collector returns: one family of series. */
export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge";
  readonly samples: readonly { readonly labels?: Labels; readonly value: number }[];
}

/** Reads families at scrape time; may be async (a /proc read). */
export type Collector = () => MetricFamily[] | Promise<MetricFamily[]>;

const COLLECTOR_ERRORS = "machined_metrics_collector_errors";

/** Metric names: `[a-zA-Z_:][a-zA-Z0-9_:]*`. */
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Default histogram buckets in seconds, from 1 ms to 10 s. */
export const DEFAULT_BUCKETS: readonly number[] = [
  0.001,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

abstract class Metric {
  protected readonly series = new Map<string, { labels: Labels; value: number }>();
  constructor(readonly name: string, readonly help: string) {
    if (!NAME.test(name)) throw new RangeError(`Invalid metric name "${name}"`);
  }
  protected entry(labels: Labels): { labels: Labels; value: number } {
    const key = labelKey(labels);
    let e = this.series.get(key);
    if (!e) this.series.set(key, e = { labels: { ...labels }, value: 0 });
    return e;
  }
  abstract render(): string[];
}

/** A value that only goes up (requests, failures). */
export class Counter extends Metric {
  /** @throws RangeError for a negative increment. */
  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new RangeError(`Counter "${this.name}" cannot decrease (by ${by})`);
    this.entry(labels).value += by;
  }
  render(): string[] {
    return family(this.name, this.help, "counter", [...this.series.values()]);
  }
}

/** A value that goes up and down (open streams). */
export class Gauge extends Metric {
  set(labels: Labels, value: number): void {
    this.entry(labels).value = value;
  }
  add(labels: Labels, by: number): void {
    this.entry(labels).value += by;
  }
  render(): string[] {
    return family(this.name, this.help, "gauge", [...this.series.values()]);
  }
}

/** Observations counted into cumulative buckets (durations in seconds). */
export class Histogram extends Metric {
  #buckets = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(name: string, help: string, readonly buckets: readonly number[] = DEFAULT_BUCKETS) {
    super(name, help);
  }
  observe(labels: Labels, value: number): void {
    const key = labelKey(labels);
    let h = this.#buckets.get(key);
    if (!h) {
      h = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#buckets.set(key, h);
    }
    this.buckets.forEach((le, i) => value <= le && h.counts[i]++);
    h.sum += value;
    h.count++;
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const h of this.#buckets.values()) {
      this.buckets.forEach((le, i) =>
        lines.push(sample(`${this.name}_bucket`, { ...h.labels, le: String(le) }, h.counts[i]))
      );
      lines.push(sample(`${this.name}_bucket`, { ...h.labels, le: "+Inf" }, h.count));
      lines.push(sample(`${this.name}_sum`, h.labels, h.sum));
      lines.push(sample(`${this.name}_count`, h.labels, h.count));
    }
    return lines;
  }
}

/** The metrics of one process, rendered together. */
export class MetricsRegistry {
  #metrics = new Map<string, Metric>();
  #collectors: Collector[] = [];

  /** @throws RangeError when the name is taken by another kind. */
  counter(name: string, help: string): Counter {
    return this.#add(name, () => new Counter(name, help), Counter);
  }
  gauge(name: string, help: string): Gauge {
    return this.#add(name, () => new Gauge(name, help), Gauge);
  }
  histogram(name: string, help: string, buckets?: readonly number[]): Histogram {
    return this.#add(name, () => new Histogram(name, help, buckets), Histogram);
  }
  /** Adds families read at every scrape. */
  collect(collector: Collector): void {
    this.#collectors.push(collector);
  }

  /**
   * The text exposition: every metric, then every collector's families. A
   * collector that throws is left out and counted in
   * `machined_metrics_collector_errors` (present when there are collectors),
   * so one broken reader never empties the scrape.
   */
  async render(): Promise<string> {
    const lines: string[] = [];
    for (const m of this.#metrics.values()) lines.push(...m.render());
    let errors = 0;
    for (const c of this.#collectors) {
      try {
        for (const f of await c()) lines.push(...family(f.name, f.help, f.type, f.samples));
      } catch {
        errors++;
      }
    }
    if (this.#collectors.length > 0) {
      const help = "Collectors that failed in this scrape";
      lines.push(...family(COLLECTOR_ERRORS, help, "gauge", [{ value: errors }]));
    }
    return lines.join("\n") + "\n";
  }

  #add<T extends Metric>(name: string, make: () => T, kind: abstract new (...a: never[]) => T): T {
    const have = this.#metrics.get(name);
    if (have instanceof kind) return have;
    if (have) throw new RangeError(`Metric "${name}" is already registered as another kind`);
    const m = make();
    this.#metrics.set(name, m);
    return m;
  }
}

function family(
  name: string,
  help: string,
  type: string,
  samples: readonly { labels?: Labels; value: number }[],
): string[] {
  if (!NAME.test(name)) throw new RangeError(`Invalid metric name "${name}"`);
  return [
    `# HELP ${name} ${escapeHelp(help)}`,
    `# TYPE ${name} ${type}`,
    ...samples.map((s) => sample(name, s.labels ?? {}, s.value)),
  ];
}

/** One sample line: `name{a="b"} 1`. */
export function sample(name: string, labels: Labels, value: number): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return `${name}${pairs.length ? `{${pairs.join(",")}}` : ""} ${formatValue(value)}`;
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function labelKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
}
