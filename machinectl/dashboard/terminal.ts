/**
 * The thin terminal layer: the alternate screen, raw keys (`q`, Ctrl-C),
 * the size (SIGWINCH, with a size check on every paint as a fallback), and
 * painting rows. Whatever happens, {@link Terminal.restore} puts the
 * terminal back as it was.
 */
import type { ScreenSize } from "./render.ts";

const ESC = "\x1b[";
const ENTER = `${ESC}?1049h${ESC}?25l${ESC}H${ESC}2J`;
const LEAVE = `${ESC}?25h${ESC}?1049l`;

/** A terminal the dashboard owns while it runs. */
export interface Terminal {
  size(): ScreenSize;
  /** Paints `rows` from the top-left, clearing what each row and the rest of the screen held. */
  paint(rows: readonly string[]): void;
  /** Resolves when the user asks to quit (`q`, `Q`, Ctrl-C, Ctrl-D, or stdin closing). */
  readonly quit: Promise<void>;
  /** Calls `f` on every resize. */
  onResize(f: () => void): void;
  /** Leaves the alternate screen, shows the cursor, ends raw mode. Idempotent. */
  restore(): void;
}

/** Takes over the console. @throws Error when stdout or stdin is not a terminal. */
export function openTerminal(): Terminal {
  if (!Deno.stdout.isTerminal() || !Deno.stdin.isTerminal()) {
    throw new Error("needs a terminal on stdin and stdout, not a pipe or a file");
  }
  const encoder = new TextEncoder();
  const write = (text: string) => {
    const bytes = encoder.encode(text);
    let n = 0;
    while (n < bytes.length) n += Deno.stdout.writeSync(bytes.subarray(n));
  };
  Deno.stdin.setRaw(true);
  write(ENTER);
  const resizeListeners: (() => void)[] = [];
  const onWinch = () => resizeListeners.forEach((f) => f());
  Deno.addSignalListener("SIGWINCH", onWinch);
  let restored = false;
  const quit = readQuitKey();
  return {
    size() {
      const { columns, rows } = Deno.consoleSize();
      return { width: columns, height: rows };
    },
    paint(rows) {
      if (restored) return;
      write(`${ESC}H` + rows.map((r) => `${r}${ESC}K`).join("\r\n") + `${ESC}J`);
    },
    quit,
    onResize(f) {
      resizeListeners.push(f);
    },
    restore() {
      if (restored) return;
      restored = true;
      Deno.removeSignalListener("SIGWINCH", onWinch);
      write(LEAVE);
      try {
        Deno.stdin.setRaw(false);
      } catch { /* stdin already gone */ }
    },
  };
}

/** Reads raw stdin until a quit key; stdin closing counts as quitting too. */
async function readQuitKey(): Promise<void> {
  const buf = new Uint8Array(64);
  while (true) {
    const n = await Deno.stdin.read(buf);
    if (n === null) return;
    for (const b of buf.subarray(0, n)) {
      if (b === 0x71 || b === 0x51 || b === 0x03 || b === 0x04) return;
    }
  }
}
