# Reading test runner logs, for .ci/run (sourced; tested by .ci/tally_test.ts).
# Every function takes a log file; colours are stripped first.

strip_colours() { sed -E 's/\x1b\[[0-9;]*m//g' "$1"; }

# The log without what tests printed: deno shows a test's own output between
# "------- output -------" and "----- output end -----" (after "./f => name ..."
# on the same line with --parallel). Tests that re-run a suite in a namespace
# print its summary there, which must not count twice.
runner_lines() {
  strip_colours "$1" | awk '
    /^------- output -------$/ { inside = 1; next }
    inside && /----- output end -----$/ { inside = 0; next }
    !inside'
}

# "passed failed skipped" summed over every summary line in the log.
#   deno test:  "ok | 12 passed (3 steps) | 0 failed | 2 ignored (1 step) (5s)"
#   cargo test: "test result: ok. 5 passed; 0 failed; 1 ignored; ..."
# Skipped counts ignored tests and ignored steps; passed and failed count
# tests, as the runners do.
log_counts() {
  runner_lines "$1" | awk '
    /^(ok|FAILED) \| [0-9]+ passed/ {
      for (i = 1; i <= NF; i++) {
        if ($(i + 1) ~ /^passed/) p += $i
        if ($(i + 1) ~ /^failed/) f += $i
        if ($(i + 1) ~ /^ignored/) {
          s += $i
          if ($(i + 2) ~ /^\([0-9]+$/) s += substr($(i + 2), 2)
        }
      }
    }
    /^test result: / {
      for (i = 1; i <= NF; i++) {
        if ($(i + 1) ~ /^passed/) p += $i
        if ($(i + 1) ~ /^failed/) f += $i
        if ($(i + 1) ~ /^ignored/) s += $i
      }
    }
    END { printf "%d %d %d\n", p, f, s }'
}

# The names of the tests and steps deno reported as ignored, one per line, as
# printed before " ... ignored" (with "./file => " in front in --parallel runs).
ignored_tests() {
  runner_lines "$1" | sed -nE 's/^[[:space:]]*(.*) \.\.\. ignored( \([^)]*\))?[[:space:]]*$/\1/p'
}

# The ignored tests of a log that no pattern of the allow-list file matches.
# Allow-list lines: "<extended regex> # <why CI may skip it>"; blank lines and
# lines starting with # are comments. A pattern line without a reason is an
# error (exit 2), so every expected skip says why.
unexpected_skips() {
  local log=$1 allow=$2 patterns
  patterns=$(mktemp)
  if ! awk -v file="$allow" '
    /^[[:space:]]*(#|$)/ { next }
    {
      i = index($0, " # ")
      if (i == 0) { printf "%s:%d: no \" # reason\" after the pattern\n", file, NR > "/dev/stderr"; bad = 1; next }
      pattern = substr($0, 1, i - 1)
      sub(/[[:space:]]+$/, "", pattern)
      print pattern
    }
    END { exit bad }' "$allow" >"$patterns"; then
    rm -f "$patterns"
    return 2
  fi
  if [ -s "$patterns" ]; then
    ignored_tests "$log" | grep -v -E -f "$patterns" || true
  else
    ignored_tests "$log"
  fi
  rm -f "$patterns"
}

# PATH without any directory that holds a deno executable, as on a fresh machine.
path_without_deno() {
  local dir out=() IFS=:
  for dir in $1; do
    [ -n "$dir" ] && ! [ -x "$dir/deno" ] && out+=("$dir")
  done
  printf '%s' "${out[*]}"
}
