/**
 * What the PII scan (src/domain/pii) costs per text: p50/p99 of `scanText` over 1 KB, 10 KB and 100 KB of
 * realistic mixed prose (numbers, dates, versions, prices, ids, and a few real findings). In process,
 * no network; every size runs a bounded number of iterations within a time cap.
 *
 *   node bench/pii-scan.ts [--json]
 */
import { PiiMasker, scanText } from '../src/domain/pii/scanner.ts';

const SIZES = [
  { label: '1 KB', bytes: 1024, iterations: 2000 },
  { label: '10 KB', bytes: 10 * 1024, iterations: 500 },
  { label: '100 KB', bytes: 100 * 1024, iterations: 100 },
] as const;
const TIME_CAP_MS = 30_000;
const printJson = process.argv.includes('--json');

// Ordinary text full of look-alikes: what a chat prompt mostly is.
const FILLER = [
  'Could you summarise the attached meeting notes from 2024-05-17 and list the action items by owner?',
  'Order 4815162342 shipped on Tuesday; invoice INV-2024-000123 totals $1,299.99 incl. 8.25% tax.',
  'We upgraded Node from 22.11.0 to 24.21.0 and lodash to 4.17.21; build 10.0.19045.2965 is unaffected.',
  'The job ran from 10:32:11 to 11:02:45 UTC and processed 1,234,567 rows in 3 batches of 411,522.',
  'Request 3f2504e0-4f89-11d3-9a0c-0305e82c3301 hit commit 9fceb02d0ae598e95dc970b74767f19372d61af8.',
  'ISBN 978-3-16-148410-0 is out of print; tracking 1Z999AA10123456784 shows it in Memphis, TN 38118.',
  'In the second quarter revenue grew 12.4% while churn fell from 3.1% to 2.7% across 48 markets.',
  'Please rewrite the paragraph below in plain English, keep it under 120 words, and avoid jargon.',
];
// The few real findings a prompt carries.
const FINDINGS = [
  'Contact Laura at laura.m@example.com or +44 20 7946 0958.',
  'Card 4111 1111 1111 1111 was charged twice; refund to DE89 3704 0044 0532 0130 00.',
  'The request came from 203.0.113.42 with key AKIAIOSFODNN7EXAMPLE and SSN 123-45-6789.',
];

/** Mixed text of about `bytes` bytes: filler sentences with one finding sentence per ~1 KB. */
function mixedText(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const sentence = i % 9 === 4 ? FINDINGS[((i / 9) % FINDINGS.length) | 0]! : FILLER[i % FILLER.length]!;
    parts.push(sentence);
    size += Buffer.byteLength(sentence) + 1;
  }
  return parts.join(' ').slice(0, bytes);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** One row of the result table, times in milliseconds. */
interface Row {
  size: string;
  iterations: number;
  findings: number;
  p50: number;
  p99: number;
  mean: number;
  mbPerSecond: number;
  maskP50: number;
}

function timeOne(run: () => void): number {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function measure(label: string, bytes: number, iterations: number, deadline: number): Row {
  const text = mixedText(bytes);
  for (let i = 0; i < Math.min(20, iterations); i++) scanText(text);
  const samples: number[] = [];
  const maskSamples: number[] = [];
  for (let i = 0; i < iterations && performance.now() < deadline; i++) {
    samples.push(timeOne(() => scanText(text)));
    if (i % 10 === 0) maskSamples.push(timeOne(() => new PiiMasker().mask(text)));
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((sum, value) => sum + value, 0) / samples.length;
  const round = (value: number) => Number(value.toFixed(3));
  return {
    size: label,
    iterations: samples.length,
    findings: scanText(text).length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    mean: round(mean),
    mbPerSecond: round(bytes / 1024 / 1024 / (mean / 1000)),
    maskP50: round(
      percentile(
        [...maskSamples].sort((a, b) => a - b),
        50,
      ),
    ),
  };
}

const deadline = performance.now() + TIME_CAP_MS;
const rows = SIZES.map(({ label, bytes, iterations }) => measure(label, bytes, iterations, deadline));
if (printJson) console.log(JSON.stringify({ node: process.version, rows }, null, 2));
else {
  console.log(`PII scan, node ${process.version}, times in ms`);
  console.table(rows);
}
