#!/usr/bin/env bash
# Makes the packed scale-out bench (../shared/tools/scale-out, copied into .devcarry/ by pack.sh)
# spread its load over TENANTS tenants, one `app` key each, requests taking the keys in turn.
# A tenant's Redis work lives in one hash slot and its jobs in one queue shard (docs/scale-out.md),
# so the bench's single tenant can never use more than one master of a Redis Cluster: several
# tenants are how a cluster's throughput can be measured at all. Run it after each pack.sh:
#
#   ../shared/tools/scale-out/pack.sh && bash bench/scale-out/multi-tenant.sh
#   run: bash .devcarry/device.sh ... --env "TENANTS=16"   (TENANTS unset or 1: as before)
set -euo pipefail
cd "$(dirname "$0")/../.."
CARRY=.devcarry
[ -f "$CARRY/orchestrate.mjs" ] && [ -f "$CARRY/loadgen.mjs" ] || { echo "multi-tenant.sh: run pack.sh first" >&2; exit 2; }
grep -q 'TENANTS' "$CARRY/orchestrate.mjs" && { echo "multi-tenant.sh: already patched"; exit 0; }
node_modules/.bin/node - "$CARRY" <<'JS'
const { readFileSync, writeFileSync } = require('node:fs');
const dir = process.argv[2];
const edit = (file, from, to) => {
  const path = `${dir}/${file}`;
  const text = readFileSync(path, 'utf8');
  if (!text.includes(from)) throw new Error(`${file}: the bench changed; cannot find: ${from.slice(0, 80)}`);
  writeFileSync(path, text.replace(from, to));
};
edit('orchestrate.mjs',
  "  const tenant = `scale${Date.now().toString(36)}`;\n  run('tenant', ['bin/gateway.mjs', 'tenants', 'create', tenant]);\n  const key = run('tenant', ['bin/gateway.mjs', 'keys', 'create', '--tenant', tenant, '--role', 'app']).split('\\n').at(-1).trim();",
  "  const tenants = Math.max(1, Number(gatewayEnv({ role: 'cli' }).TENANTS ?? 1));\n  const keys = [];\n  for (let t = 0; t < tenants; t++) {\n    const tenant = `scale${Date.now().toString(36)}t${t}`;\n    run('tenant', ['bin/gateway.mjs', 'tenants', 'create', tenant]);\n    keys.push(run('tenant', ['bin/gateway.mjs', 'keys', 'create', '--tenant', tenant, '--role', 'app']).split('\\n').at(-1).trim());\n  }\n  const key = keys.every(Boolean) ? keys.join(',') : '';\n  const tenant = `${tenants} tenant(s)`;");
edit('orchestrate.mjs', 'headers: { authorization: `Bearer ${E.GW_KEY}`,', "headers: { authorization: `Bearer ${E.GW_KEY.split(',')[0]}`,");
edit('loadgen.mjs',
  "  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${cfg.key}` };",
  "  const keys = cfg.key.split(',');\n  let nextKey = 0;\n  const base = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };");
edit('loadgen.mjs',
  "      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent }, (res) => {",
  "      const headers = { ...base, authorization: `Bearer ${keys[nextKey++ % keys.length]}` };\n      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent }, (res) => {");
JS
echo "multi-tenant.sh: $CARRY/orchestrate.mjs and loadgen.mjs now spread the load over TENANTS tenants"
