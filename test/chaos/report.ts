/** The campaign's verdict: a Markdown table of the invariants, the offenders of those broken, and one JSON line. */
import type { InvariantResult } from './evidence.ts';

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The table: invariant, figures, held/broken. */
export function invariantTable(results: InvariantResult[]): string {
  const rows = results.map((r) => `| ${r.id}. ${cell(r.name)} | ${cell(r.figures)} | ${r.held ? 'held' : '**broken**'} |`);
  return ['| invariant | figures | verdict |', '|---|---|---|', ...rows].join('\n');
}

/** Each broken invariant's offenders, with what they got, their records and the faults just before. */
export function brokenDetails(results: InvariantResult[]): string {
  const lines: string[] = [];
  for (const result of results.filter((r) => !r.held)) {
    lines.push('', `### ${result.id}. ${result.name}: broken (${result.offenders.length} listed)`);
    for (const o of result.offenders) {
      const who = [o.tenant, o.kind, o.key ? `key ${o.key}` : null, o.tag ? `tag ${o.tag}` : null, o.requestId ? `request ${o.requestId}` : null]
        .filter((part) => part)
        .join(', ');
      lines.push(`- ${o.what}${who ? ` — ${who}` : ''}`);
      if (o.got) lines.push(`  - got: ${o.got}`);
      for (const record of o.records ?? []) lines.push(`  - record: ${record}`);
      if (o.records && o.records.length === 0 && o.requestId !== undefined) lines.push('  - records: none');
      for (const fault of o.faults ?? []) lines.push(`  - fault: ${fault}`);
    }
  }
  return lines.join('\n');
}
