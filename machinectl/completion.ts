/**
 * `machinectl completion bash|zsh|fish`: a shell completion script generated
 * from the command declarations (names, flags, which flags take a value,
 * the words an enum flag such as `-o` takes) and the resource type names `get` takes, so completion cannot
 * drift from what the dispatcher accepts. zsh reuses the bash script through
 * bashcompinit.
 *
 * @module
 */
import { RESOURCE_DESCRIPTORS, RESOURCE_TYPES } from "../resources/mod.ts";
import { allFlags, type Command, CONNECTION_FLAGS, defineCommand } from "./command.ts";
import { valueFlagWords } from "./flag_parse.ts";
import type { FlagDecls } from "./flags.ts";
import { CliError } from "./io.ts";

/** The shells a script is generated for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;

/** Resource type names and aliases, as `get` accepts them. */
export function resourceTypeWords(): string[] {
  return [...RESOURCE_TYPES, ...RESOURCE_TYPES.flatMap((t) => RESOURCE_DESCRIPTORS[t].aliases)];
}

function flagWords(flags: FlagDecls): string[] {
  return [
    ...Object.entries(flags).flatMap(([n, f]) => [`--${n}`, ...(f.short ? [`-${f.short}`] : [])]),
    "--help",
  ];
}

/** The enum flags' words, per command: `"get|-o"|"get|--output") ... table json yaml`. */
function enumCases(commands: readonly Command[]): string {
  return commands.flatMap((c) =>
    Object.entries(allFlags(c)).filter(([, f]) => f.kind === "enum").map(([n, f]) => {
      const spelled = [`--${n}`, ...(f.short ? [`-${f.short}`] : [])];
      const names = [c.name, ...(c.aliases ?? [])];
      const pattern = names.flatMap((cmd) => spelled.map((s) => `"${cmd}|${s}"`)).join("|");
      const words = f.kind === "enum" ? q(f.values) : "";
      return `    ${pattern}) COMPREPLY=($(compgen -W "${words}" -- "$cur")); return ;;`;
    })
  ).join("\n");
}

function q(words: readonly string[]): string {
  return words.map((w) => w.replace(/[^\w@%+=:,./-]/g, "")).join(" ");
}

/** The bash script (also sourced by zsh). */
export function bashCompletion(commands: readonly Command[]): string {
  const names = commands.flatMap((c) => [c.name, ...(c.aliases ?? [])]);
  const first = [...new Set(names.map((n) => n.split(" ")[0]))];
  const groups = [...new Set(names.filter((n) => n.includes(" ")).map((n) => n.split(" ")[0]))];
  const byName = (fn: (c: Command) => string[]) =>
    commands.flatMap((c) =>
      [c.name, ...(c.aliases ?? [])].map((n) => `    "${n}") echo "${q(fn(c))}" ;;`)
    ).join("\n");
  return `# machinectl bash completion (generated: machinectl completion bash)
_machinectl_flags() {
  case "$1" in
${byName((c) => flagWords(allFlags(c)))}
    *) echo "${q(flagWords(CONNECTION_FLAGS))}" ;;
  esac
}
_machinectl_value_flags() {
  case "$1" in
${byName((c) => valueFlagWords(allFlags(c)))}
    *) echo "${q(valueFlagWords(CONNECTION_FLAGS))}" ;;
  esac
}
_machinectl() {
  local cur prev cmd="" i w
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local groups=" ${q(groups)} " names="|${names.join("|")}|"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in
      --*=*) ;;
      -*) [[ " $(_machinectl_value_flags "$cmd") " == *" $w "* ]] && ((i++)) ;;
      *)
        if [[ -z "$cmd" ]]; then cmd="$w"
        elif [[ "$groups" == *" $cmd "* && "$names" == *"|$cmd $w|"* ]]; then cmd="$cmd $w"
        else break
        fi ;;
    esac
  done
  case "$cmd|$prev" in
${enumCases(commands)}
  esac
  if [[ " $(_machinectl_value_flags "$cmd") " == *" $prev "* ]]; then return; fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_machinectl_flags "$cmd")" -- "$cur")); return
  fi
  if [[ -z "$cmd" ]]; then
    COMPREPLY=($(compgen -W "${q(first)}" -- "$cur")); return
  fi
  if [[ "$groups" == *" $cmd "* ]]; then
    local subs=""
    case "$cmd" in
${
    groups.map((g) =>
      `      "${g}") subs="${
        q([
          ...new Set(names.filter((n) => n.startsWith(`${g} `)).map((n) => n.split(" ")[1])),
        ])
      }" ;;`
    ).join("\n")
  }
    esac
    COMPREPLY=($(compgen -W "$subs" -- "$cur")); return
  fi
  case "$cmd" in
    get) COMPREPLY=($(compgen -W "${q(resourceTypeWords())}" -- "$cur")) ;;
    completion) COMPREPLY=($(compgen -W "${SHELLS.join(" ")}" -- "$cur")) ;;
  esac
}
complete -o default -F _machinectl machinectl
`;
}

/** The zsh script: the bash one through bashcompinit. */
export function zshCompletion(commands: readonly Command[]): string {
  return `#compdef machinectl
# machinectl zsh completion (generated: machinectl completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(commands)}`;
}

/** The fish script: one `complete` line per command and flag. */
export function fishCompletion(commands: readonly Command[]): string {
  const lines = [
    "# machinectl fish completion (generated: machinectl completion fish)",
    "function __machinectl_cmd",
    "    set -l words (commandline -opc)[2..-1]",
    "    set -l out",
    "    for w in $words",
    "        string match -q -- '-*' $w; and continue",
    "        set -a out $w",
    "    end",
    "    string join ' ' $out[1..2]",
    "end",
    "complete -c machinectl -f",
  ];
  const firsts = new Map<string, string>();
  for (const c of commands) {
    const w = c.name.split(" ")[0];
    if (!firsts.has(w)) firsts.set(w, c.name.includes(" ") ? "" : c.summary);
  }
  for (const [w, summary] of firsts) {
    lines.push(
      `complete -c machinectl -n "test -z (__machinectl_cmd)" -a ${w} -d ${fishStr(summary)}`,
    );
  }
  for (const c of commands) {
    const [g, sub] = c.name.split(" ");
    if (sub) {
      lines.push(
        `complete -c machinectl -n "test (__machinectl_cmd) = ${g}" -a ${sub} -d ${
          fishStr(c.summary)
        }`,
      );
    }
    const when = sub
      ? `test (__machinectl_cmd) = '${c.name}'`
      : `string match -q -- '${c.name}*' (__machinectl_cmd)`;
    for (const [n, f] of Object.entries(allFlags(c))) {
      const values = f.kind === "enum"
        ? ` -xa "${q(f.values)}"`
        : f.kind !== "boolean"
        ? " -r"
        : "";
      lines.push(
        `complete -c machinectl -n "${when}" -l ${n}` + (f.short ? ` -s ${f.short}` : "") +
          values + ` -d ${fishStr(f.help)}`,
      );
    }
  }
  lines.push(
    `complete -c machinectl -n "test (__machinectl_cmd) = get" -a "${q(resourceTypeWords())}"`,
    `complete -c machinectl -n "test (__machinectl_cmd) = completion" -a "${SHELLS.join(" ")}"`,
  );
  return lines.join("\n") + "\n";
}

function fishStr(s: string): string {
  return `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** The script for `shell`. @throws CliError for another shell. */
export function completionScript(shell: string, commands: readonly Command[]): string {
  switch (shell) {
    case "bash":
      return bashCompletion(commands);
    case "zsh":
      return zshCompletion(commands);
    case "fish":
      return fishCompletion(commands);
  }
  throw new CliError(`completion: which shell? ${SHELLS.join(", ")}`, 2);
}

/** The `completion` command; `commands` is read late so it can list itself. */
export function completionCommand(commands: () => readonly Command[]): Command {
  return defineCommand({
    name: "completion",
    args: "bash|zsh|fish",
    summary: "Print a shell completion script (e.g. source <(machinectl completion bash))",
    connects: false,
    flags: {},
    run({ args, io }) {
      if (args.length !== 1) throw new CliError("usage: machinectl completion bash|zsh|fish", 2);
      io.out(completionScript(args[0], commands()).trimEnd());
      return Promise.resolve(0);
    },
  });
}
