import { scanText } from './scan.ts';
import type { PiiCategory, PiiFinding } from './types.ts';

/** A masked text and what was replaced in it (offsets into the original text). */
export interface MaskResult {
  text: string;
  findings: PiiFinding[];
}

/** The key under which two spellings of one value share a placeholder (`(415) 555-2671` and `415-555-2671`). */
function canonical(finding: PiiFinding): string {
  switch (finding.category) {
    case 'email':
    case 'ip_address':
      return finding.value.toLowerCase();
    case 'secret':
      return finding.value;
    default:
      return finding.value.replace(/[^0-9A-Za-z+]/g, '').toUpperCase();
  }
}

/** Masks findings with typed placeholders: the same value gets the same placeholder within one masking context (`[EMAIL_1]`, `[EMAIL_2]`, `[PHONE_1]` …). */
export class PiiMasker {
  readonly #placeholders = new Map<string, string>();
  readonly #counts = new Map<PiiCategory, number>();

  /** The placeholder of a finding's value in this context, allotting the next number of its category when new. */
  placeholderFor(finding: PiiFinding): string {
    const key = `${finding.category}\u0000${canonical(finding)}`;
    const known = this.#placeholders.get(key);
    if (known !== undefined) return known;
    const next = (this.#counts.get(finding.category) ?? 0) + 1;
    this.#counts.set(finding.category, next);
    const placeholder = `[${finding.category.toUpperCase()}_${next}]`;
    this.#placeholders.set(key, placeholder);
    return placeholder;
  }

  /** Scans a text and replaces every finding with its placeholder; the rest of the text is left as it was. */
  mask(text: string): MaskResult {
    const findings = scanText(text);
    let masked = '';
    let at = 0;
    for (const finding of findings) {
      masked += text.slice(at, finding.start) + this.placeholderFor(finding);
      at = finding.end;
    }
    return { text: masked + text.slice(at), findings };
  }
}
