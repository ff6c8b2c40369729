/**
 * docs/configuration.md, generated from the configuration schema (src/config.ts) so that the
 * table of settings cannot drift from what the processes read: `npm run docs:config` writes it,
 * and a unit test fails while it is stale.
 */
import { writeFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import { EnvSchema } from '../src/config.ts';

/** Where the generated page lives, from the repository root. */
export const CONFIG_DOC_PATH = 'docs/configuration.md';

const PREAMBLE = `# Configuration

Generated from \`src/config.ts\` by \`npm run docs:config\`; edit the schema, not this page.

Everything comes from the environment, is validated at start, and a bad or missing value
stops the process with one line naming the variable. Besides these, a process needs:

- **Redis**: \`REDIS_URL\` (one server) or \`REDIS_CLUSTER_NODES\` (a Redis Cluster), one of the two.
- **A store**: \`DATABASE_URL\` (PostgreSQL) or \`MONGODB_URI\` (MongoDB), one of the two.
- **Provider keys**: whatever \`api_key_env\` names in the catalog (e.g. \`OPENAI_API_KEY\`).
- The other \`OTEL_*\` variables of OpenTelemetry's SDK, which it reads itself ([operations.md](operations.md#tracing)).

| variable | default | accepted | meaning |
|---|---|---|---|
`;

function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function defaultOf(schema: TSchema, required: boolean): string {
  if (schema.default === undefined) return required ? 'required' : 'unset';
  return schema.default === '' ? 'empty' : `\`${String(schema.default)}\``;
}

function acceptedOf(schema: TSchema): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as TSchema[]).map((member) => `\`${String(member.const)}\``).join(', ');
  if (schema.type === 'integer') {
    const low = schema.minimum === undefined ? '' : String(schema.minimum);
    const high = schema.maximum === undefined ? '…' : String(schema.maximum);
    return `integer ${low}–${high}`;
  }
  if (schema.type === 'boolean') return '`true`, `false`';
  return typeof schema.pattern === 'string' ? `matching \`${schema.pattern}\`` : 'text';
}

/** The page for a schema of environment variables: one row per variable, in the schema's order. */
export function renderConfigDoc(schema: TSchema = EnvSchema): string {
  const properties = schema.properties as Record<string, TSchema>;
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  const rows = Object.entries(properties).map(
    ([name, property]) =>
      `| \`${name}\` | ${defaultOf(property, required.has(name))} | ${cell(acceptedOf(property))} | ${cell(String(property.description ?? ''))} |`,
  );
  return `${PREAMBLE}${rows.join('\n')}\n`;
}

if (import.meta.main) {
  writeFileSync(new URL(`../${CONFIG_DOC_PATH}`, import.meta.url), renderConfigDoc());
}
