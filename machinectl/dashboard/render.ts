/**
 * The dashboard screen as a pure function of its state and size: one string
 * per terminal row, none longer than the width, never more rows than the
 * height. The terminal layer only paints what this returns, so every layout
 * rule is tested on plain strings. Every row is escaped (escapeText, the
 * escaper every machinectl output goes through): node data shows its control
 * characters visibly and cannot move the cursor or start a row.
 */
import type { DashboardState, Link, ServiceRow } from "./state.ts";
import { sparkline } from "./sparkline.ts";
import { escapeText } from "../terminal_text.ts";

/** Terminal size in character cells. */
export interface ScreenSize {
  readonly width: number;
  readonly height: number;
}

/** Rows above the services: title, stage, link, blank, CPU, memory, blank. */
const TOP_ROWS = 7;

/** Renders the whole screen. */
export function renderDashboard(s: DashboardState, size: ScreenSize): string[] {
  const width = Math.max(20, size.width);
  const height = Math.max(1, size.height);
  const rows = [
    titleRow(s, width),
    stageRow(s),
    linkRow(s),
    "",
    ...resourceRows(s, width),
    "",
  ];
  const rest = height - TOP_ROWS;
  const services = serviceRows(s);
  const serviceBudget = Math.min(services.length + 1, Math.max(3, Math.floor(rest / 3)));
  const left = rest - serviceBudget;
  const eventBudget = Math.ceil(left / 2);
  rows.push(...section("SERVICES", services, serviceBudget, width, "head"));
  rows.push(...section(title("EVENTS", s.refused.events), eventRows(s), eventBudget, width));
  const logs = s.logs.map((l) => oneLine(l.text));
  rows.push(...section(title("LOGS (machined)", s.refused.logs), logs, left - eventBudget, width));
  return rows.slice(0, height).map((r) => fit(escapeText(r), width));
}

function title(name: string, refused: string | undefined): string {
  return refused === undefined ? name : `${name}: unavailable: ${oneLine(refused)}`;
}

function titleRow(s: DashboardState, width: number): string {
  const left = `${s.hostname || "?"}  ${s.link.endpoint}` +
    (s.version ? `  machined ${s.version}` : "");
  const clock = clockTime(s.now);
  return left.length + clock.length + 1 > width
    ? left
    : left + " ".repeat(width - left.length - clock.length) + clock;
}

function stageRow(s: DashboardState): string {
  const seen = s.link.kind === "connected" ? "" : " (last seen)";
  const stage = `stage ${s.stage ?? "?"}${s.stage === null ? "" : seen}`;
  const mode = s.mode ? `   mode ${s.mode}` : "";
  if (s.stage === null) return `${stage}${mode}`;
  if (s.ready) return `${stage}   ready${mode}`;
  const unmet = s.unmet.map((c) => c.reason ? `${c.name} (${c.reason})` : c.name).join(", ");
  return `${stage}   NOT READY${unmet ? `: ${unmet}` : ""}${mode}`;
}

function linkRow(s: DashboardState): string {
  const rebooted = s.rebootedAt === null ? "" : `   rebooted at ${clockTime(s.rebootedAt)}`;
  return linkText(s.link, s.now) + rebooted;
}

/** What the connection is doing, in words. */
export function linkText(link: Link, now: number): string {
  switch (link.kind) {
    case "connecting":
      return "connecting…";
    case "connected":
      return `connected since ${clockTime(link.since)}`;
    case "reconnecting": {
      const wait = Math.max(0, Math.ceil((link.retryAt - now) / 1000));
      return `reconnecting… (attempt ${link.attempt}, next in ${wait} s): ${oneLine(link.error)}`;
    }
  }
}

function resourceRows(s: DashboardState, width: number): string[] {
  const sample = s.lastSample;
  const graph = Math.max(10, Math.min(60, width - 40));
  if (!sample) {
    const why = s.sampleError ? `unavailable: ${oneLine(s.sampleError)}` : "waiting for a sample";
    return [`CPU  ${why}`, `MEM  ${why}`];
  }
  const cpu = s.cpu.at(-1);
  const cpuText = cpu === undefined ? "  …" : `${(cpu * 100).toFixed(0).padStart(3)}%`;
  const used = sample.memUsedBytes;
  const total = sample.memTotalBytes;
  const share = total > 0 ? ((used / total) * 100).toFixed(0) : "?";
  return [
    `CPU  ${sparkline(s.cpu, graph)} ${cpuText}  load ${sample.load1.toFixed(2)}  ` +
    `${sample.cores} cores${perCore(sample.perCore)}`,
    `MEM  ${sparkline(s.mem, graph)} ${share.padStart(3)}%  ${bytes(used)} / ${bytes(total)}`,
  ];
}

/** One cell per core (the first 64), a glance at whether one core is pinned. */
function perCore(shares: readonly number[]): string {
  const shown = shares.slice(0, 64);
  return shown.length === 0 ? "" : ` ${sparkline(shown, shown.length)}`;
}

function serviceRows(s: DashboardState): string[] {
  const list = [...s.services.values()].sort((a, b) => a.id.localeCompare(b.id));
  if (list.length === 0) return ["  (no services)"];
  const idWidth = Math.max(2, ...list.map((r) => oneLine(r.id).length));
  const head = `  ${"ID".padEnd(idWidth)}  STATE        HEALTH  RESTARTS  PID      MESSAGE`;
  return [head, ...list.map((r) => serviceRow(r, idWidth))];
}

function serviceRow(r: ServiceRow, idWidth: number): string {
  return `  ${oneLine(r.id).padEnd(idWidth)}  ${oneLine(r.state).padEnd(11)}  ` +
    `${(r.healthy ? "ok" : "-").padEnd(6)}  ${String(r.restarts).padEnd(8)}  ` +
    `${(r.pid === null ? "-" : String(r.pid)).padEnd(7)}  ${oneLine(r.message)}`;
}

function eventRows(s: DashboardState): string[] {
  return s.events.map((e) =>
    `${clockTime(e.time)}  ${oneLine(e.kind).padEnd(8)} ${oneLine(e.subject).padEnd(16)} ` +
    `${oneLine(e.action).padEnd(9)} ` +
    oneLine(e.message)
  );
}

/**
 * A titled block in `budget` rows (the title is one of them): services keep
 * their first rows (`head`), events and logs their newest (`tail`).
 */
function section(
  title: string,
  lines: readonly string[],
  budget: number,
  width: number,
  keep: "head" | "tail" = "tail",
): string[] {
  if (budget <= 0) return [];
  const room = budget - 1;
  const shown = keep === "head"
    ? lines.slice(0, room)
    : lines.slice(Math.max(0, lines.length - room));
  const rule = `─ ${title} `;
  return [rule + "─".repeat(Math.max(0, width - rule.length)), ...shown];
}

/** `HH:MM:SS` in local time. */
export function clockTime(epochMs: number): string {
  const d = new Date(epochMs);
  return [d.getHours(), d.getMinutes(), d.getSeconds()]
    .map((n) => String(n).padStart(2, "0")).join(":");
}

function bytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** A field on one row, its control characters shown (`\x1b`, `\n`): it cannot move the cursor. */
function oneLine(text: string): string {
  return escapeText(text);
}

/** Cuts a row to the width, marking the cut with `…`. */
function fit(row: string, width: number): string {
  const chars = [...row];
  return chars.length <= width ? row : chars.slice(0, width - 1).join("") + "…";
}
