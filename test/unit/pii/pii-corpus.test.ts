import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PII_CATEGORIES, scanText, type PiiCategory } from '../../../src/domain/pii/scanner.ts';

interface Expected {
  category: PiiCategory;
  value: string;
}

interface Snippet {
  id: string;
  text: string;
  expected: Expected[];
}

interface Tally {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
}

const THRESHOLD = 0.95;
const corpus = JSON.parse(readFileSync(new URL('../../fixtures/pii-corpus.json', import.meta.url), 'utf8')) as { snippets: Snippet[] };

/** Scores one snippet: a finding is a true positive when an expectation with its category and exact substring is still unmatched. */
function score(snippet: Snippet, tallies: Map<PiiCategory, Tally>, mistakes: string[]): void {
  const open = [...snippet.expected];
  for (const finding of scanText(snippet.text)) {
    const tally = tallies.get(finding.category)!;
    const at = open.findIndex((e) => e.category === finding.category && e.value === finding.value);
    if (at >= 0) {
      open.splice(at, 1);
      tally.truePositives++;
    } else {
      tally.falsePositives++;
      mistakes.push(`${snippet.id} false positive ${finding.category}: ${JSON.stringify(finding.value)}`);
    }
  }
  for (const missed of open) {
    tallies.get(missed.category)!.falseNegatives++;
    mistakes.push(`${snippet.id} missed ${missed.category}: ${JSON.stringify(missed.value)}`);
  }
}

function ratio(hits: number, misses: number): number {
  return hits + misses === 0 ? 1 : hits / (hits + misses);
}

describe('PII scanner on the labelled corpus', () => {
  const tallies = new Map(PII_CATEGORIES.map((category) => [category, { truePositives: 0, falsePositives: 0, falseNegatives: 0 }]));
  const mistakes: string[] = [];
  for (const snippet of corpus.snippets) score(snippet, tallies, mistakes);
  const table = PII_CATEGORIES.map((category) => {
    const t = tallies.get(category)!;
    return {
      category,
      expected: t.truePositives + t.falseNegatives,
      tp: t.truePositives,
      fp: t.falsePositives,
      fn: t.falseNegatives,
      precision: Number(ratio(t.truePositives, t.falsePositives).toFixed(3)),
      recall: Number(ratio(t.truePositives, t.falseNegatives).toFixed(3)),
    };
  });
  console.log(`PII corpus: ${corpus.snippets.length} snippets`);
  console.table(table);
  if (mistakes.length > 0) console.log(mistakes.join('\n'));

  it('has at least 200 snippets and 15 positives per category', () => {
    expect(corpus.snippets.length).toBeGreaterThanOrEqual(200);
    for (const row of table) expect(row.expected, row.category).toBeGreaterThanOrEqual(15);
  });

  it.each(PII_CATEGORIES)('%s: precision and recall at least 0.95', (category) => {
    const row = table.find((r) => r.category === category)!;
    expect(row.precision, `${category} precision`).toBeGreaterThanOrEqual(THRESHOLD);
    expect(row.recall, `${category} recall`).toBeGreaterThanOrEqual(THRESHOLD);
  });
});
