import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { finding, matchesOf, type PiiFinding } from '../types.ts';

// Electronic form, or the print form in groups of four separated by single spaces (or dashes).
const CONTIGUOUS = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}[A-Z0-9]{11,30}(?![A-Za-z0-9])/g;
const GROUPED = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ -][A-Z0-9]{4}){2,7}(?:[ -][A-Z0-9]{1,3})?(?![A-Za-z0-9])/g;

/** Whether a written IBAN (spaces allowed) has its country's length and format and a valid mod-97 checksum. */
export function isIban(written: string): boolean {
  const electronic = electronicFormatIBAN(written.replace(/-/g, ''));
  return electronic !== null && isValidIBAN(electronic);
}

/** The longest valid IBAN at the start of a grouped candidate: trailing groups may be other words. */
function longestValid(raw: string): string | null {
  let candidate = raw;
  while (candidate.replace(/[ -]/g, '').length >= 15) {
    if (isIban(candidate)) return candidate;
    const cut = candidate.search(/[ -][A-Z0-9]+$/);
    if (cut < 0) return null;
    candidate = candidate.slice(0, cut);
  }
  return null;
}

/** IBANs of every country ibantools knows, checked for length, BBAN format and the mod-97 checksum. */
export function detectIbans(text: string): PiiFinding[] {
  const found: PiiFinding[] = [];
  for (const match of matchesOf(CONTIGUOUS, text)) {
    if (isIban(match[0])) found.push(finding('iban', text, match.index, match.index + match[0].length));
  }
  for (const match of matchesOf(GROUPED, text)) {
    const valid = longestValid(match[0]);
    if (valid !== null) found.push(finding('iban', text, match.index, match.index + valid.length));
  }
  return found;
}
