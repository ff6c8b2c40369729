/** CSV made in the browser from what a page shows: no request, and exactly the rows the reader saw. */

/** What a CSV cell may hold. */
export type Cell = string | number | boolean | null | undefined;

function field(value: Cell): string {
  const text = value === null || value === undefined ? '' : String(value);
  // RFC 4180 quoting; a leading = + - @ is prefixed so that a spreadsheet does not run it as a formula.
  const safe = typeof value === 'string' && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The rows as CSV text, with a header line. */
export function toCsv(header: string[], rows: Cell[][]): string {
  return [header, ...rows].map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
}
