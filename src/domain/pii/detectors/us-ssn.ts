import { finding, matchesOf, type PiiFinding } from '../types.ts';

const DASHED = /(?<![\w-]|\d[ -])(\d{3})([- ])(\d{2})\2(\d{4})(?![\w-]|[ -]\d)/g;
const CONTIGUOUS = /(?<![\w-])(\d{3})(\d{2})(\d{4})(?![\w-])/g;
// Nine bare digits are an SSN only when the text says so just before.
const CUE = /\b(?:ssn|ss#|social security(?: number| no\.?)?|tin|taxpayer id)\b[^\n\d]{0,20}$/i;

/** Whether area, group and serial are ones the SSA issues: not 000, 666 or 9xx; not 00; not 0000. */
export function isSsn(area: string, group: string, serial: string): boolean {
  if (area === '000' || area === '666' || area.startsWith('9')) return false;
  return group !== '00' && serial !== '0000';
}

/** US social security numbers: `123-45-6789`, `123 45 6789`, or nine digits right after "SSN". */
export function detectUsSsns(text: string): PiiFinding[] {
  const found: PiiFinding[] = [];
  for (const match of matchesOf(DASHED, text)) {
    if (isSsn(match[1] ?? '', match[3] ?? '', match[4] ?? '')) found.push(finding('us_ssn', text, match.index, match.index + match[0].length));
  }
  for (const match of matchesOf(CONTIGUOUS, text)) {
    if (!isSsn(match[1] ?? '', match[2] ?? '', match[3] ?? '')) continue;
    if (CUE.test(text.slice(Math.max(0, match.index - 40), match.index))) found.push(finding('us_ssn', text, match.index, match.index + 9));
  }
  return found;
}
