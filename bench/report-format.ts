/** Number and table formatting of the benches' Markdown reports. */

/** A figure with `digits` decimals and thousands separators; `—` when there is none. */
export function num(value: number | undefined, digits = 1): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** mine / base; undefined when either is missing or base is 0. */
export function ratio(base: number | undefined, mine: number | undefined): number | undefined {
  return base === undefined || mine === undefined || base === 0 ? undefined : mine / base;
}

/** A Markdown table: the first column left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const align = header.map((_, i) => (i === 0 ? '---' : '---:'));
  return [header, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}
