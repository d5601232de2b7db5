#!/bin/bash
# Mutations of the timing rules (issue 8, item L): each is applied to a copy of src/ and must make
# tests/timing/test_timing_rules.py fail. Prints "caught" or "SURVIVED" per mutation.
#   bash benchmarks/timing_mutations.sh
cd "$(dirname "$0")/.."; WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
run() {
  rm -rf "$WORK/src"; cp -r src "$WORK/src"
  python - "$1" "$2" "$3" "$WORK" <<'PY'
import sys
f, old, new = sys.argv[1:4]
p = sys.argv[4] + "/src/fusekit/" + f
s = open(p).read(); assert s.count(old) == 1, (f, old); open(p, "w").write(s.replace(old, new))
PY
  if PYTHONPATH="$WORK/src" timeout 300 python -m pytest -q -x -p no:cacheprovider tests/timing/test_timing_rules.py >/dev/null 2>&1; then echo "SURVIVED: $4"; else echo "caught: $4"; fi
}
run timing/schedule.py "            misaligned = _alignment_factor(bursts, self.p)" "            misaligned = 1.0" "misaligned penalty removed"
run timing/schedule.py "slow + slow / p.misaligned_efficiency" "slow + slow" "misaligned efficiency removed"
run timing/schedule.py "        if lead and lead + n > -(-n // align) * align:" "        if lead:" "short bursts penalised too"
run timing/schedule.py "                deps.append(order.matched[i])" "                pass" "wait no longer waits for its set"
run timing/schedule.py "        elif instr.sync is not None and instr.sync.kind is SyncKind.ALL:
            self.barrier" "        elif False:
            self.barrier" "sync_all not waiting"
run timing/schedule.py "                if self.pipes[i - 1] == S:" "                if False:" "scalar accesses not holding the issue"
run timing/schedule.py "math.ceil(beats + conflict_cycles(instr, repeats, p) - 1e-9)" "round(beats + conflict_cycles(instr, repeats, p))" "vector rounding round()"
run timing/schedule.py "math.ceil(beats + conflict_cycles(instr, repeats, p) - 1e-9)" "(beats + conflict_cycles(instr, repeats, p))" "vector rounding removed"
run timing/schedule.py "            self.issue[i] = at + self.issue_cost" "            self.issue[i] = at" "issue cost dropped"
