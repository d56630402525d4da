#!/usr/bin/env bash
# The README quickstart, run as written (issue 24): the ```sh quickstart block of README.md is
# extracted and run with bash in the repository (after `npm ci && npm run build`), on a fresh
# data folder (MEMWARDEN_DATA) and a free port substituted for 7411 — nothing else is changed.
# The real embedding model is used. Then its output is checked: serve bootstrapped an operator,
# the operator's key created a platform key, that key stored and found alice's memory over HTTP
# and bob's over MCP, and bob's search did not see alice's. The serve it started is stopped by
# its process group. Exit 0 only if all of that holds.
set -euo pipefail
cd "$(dirname "$0")/.."

block="$(awk '/^```sh quickstart$/ { f = 1; next } /^```/ { if (f) exit } f' README.md)"
if [ -z "$block" ]; then
  echo "quickstart: README.md has no \`\`\`sh quickstart block" >&2
  exit 1
fi
PORT="${QUICKSTART_PORT:-$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")}"
block="${block//7411/$PORT}"
WORK="$(mktemp -d)"
export MEMWARDEN_DATA="$WORK/data"
unset MEMWARDEN_OPERATOR_KEY MEMWARDEN_DATABASE_URL MEMWARDEN_EMBEDDER
echo "== quickstart on port $PORT, data $MEMWARDEN_DATA"

# Its own process group, so the serve the block starts in the background is stopped with it.
set +e
setsid bash -euo pipefail -c "$block"$'\n'"echo; echo QUICKSTART-DONE" >"$WORK/out.txt" 2>"$WORK/err.txt" &
group=$!
for _ in $(seq 600); do
  grep -q QUICKSTART-DONE "$WORK/out.txt" 2>/dev/null && break
  kill -0 "$group" 2>/dev/null || break
  sleep 0.5
done
wait "$group" 2>/dev/null
status=$?
kill -TERM -- "-$group" 2>/dev/null
set -e
sleep 1
kill -KILL -- "-$group" 2>/dev/null || true

cat "$WORK/out.txt"
fail() {
  echo "quickstart FAILED: $1" >&2
  sed 's/^/  stderr: /' "$WORK/err.txt" | grep -v '^  stderr: {' | tail -20 >&2
  exit 1
}
[ "$status" = 0 ] || fail "the block exited $status"
grep -q QUICKSTART-DONE "$WORK/out.txt" || fail "the block did not finish"
out="$(cat "$WORK/out.txt")"
grep -q 'operator .* created; its API key' "$WORK/out.txt" || fail "serve did not print the bootstrap operator key"
[ "$(stat -c %a "$MEMWARDEN_DATA/operator-key")" = 600 ] || fail "operator-key is not mode 0600"
node - "$out" <<'JS' || fail "the answers are not what the README says"
// curl prints no newline after a body: split the output into its top-level JSON objects.
const text = process.argv[2];
const j = [];
const lines = [];
for (let i = 0, depth = 0, start = -1, inStr = false; i < text.length; i++) {
  const c = text[i];
  if (inStr) {
    if (c === '\\') i++;
    else if (c === '"') inStr = false;
  } else if (c === '"' && depth > 0) inStr = true;
  else if (c === '{') {
    if (depth++ === 0) start = i;
  } else if (c === '}' && depth > 0 && --depth === 0) {
    lines.push(text.slice(start, i + 1));
    j.push(JSON.parse(text.slice(start, i + 1)));
  }
}
const add = j.find((x) => x.content === 'Alice takes her coffee black');
if (add === undefined || !/^user:/.test(add.ns)) throw new Error('alice add: ' + lines[0]);
const search = j.find((x) => Array.isArray(x.results));
if (!search.results.some((r) => r.memory.content === 'Alice takes her coffee black')) throw new Error('alice search');
const mcp = j.filter((x) => x.jsonrpc === '2.0');
if (mcp.length !== 2 || mcp.some((m) => m.error !== undefined)) throw new Error('mcp: ' + JSON.stringify(mcp));
const bob = mcp[1].result.structuredContent.results.map((r) => r.memory.content);
if (!bob.includes('Bob takes his tea with milk')) throw new Error('bob search: ' + JSON.stringify(bob));
if (bob.some((c) => c.includes('Alice'))) throw new Error('bob saw alice: ' + JSON.stringify(bob));
if (mcp[0].result.structuredContent.memory.writer === add.ns) throw new Error('bob is alice');
console.log(`quickstart OK: alice ${add.ns} over HTTP, bob ${mcp[0].result.structuredContent.memory.writer} over MCP, isolated`);
JS
rm -rf "$WORK"
