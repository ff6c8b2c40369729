import { describe, expect, it } from 'vitest';
import { PiiMasker, resolveOverlaps, scanText, type PiiFinding } from '../../../src/domain/pii/scanner.ts';

describe('PiiMasker', () => {
  it('gives the same value the same placeholder, within one text and across texts of one context', () => {
    const masker = new PiiMasker();
    const first = masker.mask('Mail ann@example.com, then ann@example.com again, or bob@example.com.');
    expect(first.text).toBe('Mail [EMAIL_1], then [EMAIL_1] again, or [EMAIL_2].');
    const second = masker.mask('Cc bob@example.com and ANN@example.com.');
    expect(second.text).toBe('Cc [EMAIL_2] and [EMAIL_1].');
  });

  it('numbers placeholders per category', () => {
    const { text } = new PiiMasker().mask('a@example.com +44 20 7946 0958 b@example.com (415) 555-2671 10.0.0.5');
    expect(text).toBe('[EMAIL_1] [PHONE_1] [EMAIL_2] [PHONE_2] [IP_ADDRESS_1]');
  });

  it('treats two spellings of one number as one value', () => {
    const { text } = new PiiMasker().mask('Card 4111 1111 1111 1111, again 4111-1111-1111-1111; call 415-555-2671 or (415) 555-2671.');
    expect(text).toBe('Card [PAYMENT_CARD_1], again [PAYMENT_CARD_1]; call [PHONE_1] or [PHONE_1].');
  });

  it('starts numbering afresh in a new context', () => {
    expect(new PiiMasker().mask('x@example.com').text).toBe('[EMAIL_1]');
    expect(new PiiMasker().mask('y@example.com').text).toBe('[EMAIL_1]');
  });

  it('leaves the text outside findings untouched, byte for byte', () => {
    const text = '  Héllo 👋\n\tSSN: 123-45-6789 — ok?  \r\n';
    const result = new PiiMasker().mask(text);
    expect(result.text).toBe('  Héllo 👋\n\tSSN: [US_SSN_1] — ok?  \r\n');
    expect(result.findings).toEqual([{ category: 'us_ssn', start: 17, end: 28, value: '123-45-6789' }]);
    expect(new PiiMasker().mask('nothing to see here, v1.2.3').text).toBe('nothing to see here, v1.2.3');
  });

  it('masks an overlap once, as the more specific category', () => {
    const key = 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z';
    const { text, findings } = new PiiMasker().mask(`Bearer ${key} and https://${key}@10.0.0.5`);
    expect(text).toBe('Bearer [SECRET_1] and https://[SECRET_1]@[IP_ADDRESS_1]');
    expect(findings.map((f) => f.category)).toEqual(['secret', 'secret', 'ip_address']);
  });

  it('returns findings in order with offsets into the original text', () => {
    const input = 'IBAN DE89 3704 0044 0532 0130 00 from 2001:db8::1';
    const { findings } = new PiiMasker().mask(input);
    for (const finding of findings) expect(input.slice(finding.start, finding.end)).toBe(finding.value);
    expect(findings.map((f) => f.category)).toEqual(['iban', 'ip_address']);
  });
});

describe('resolveOverlaps', () => {
  const at = (category: PiiFinding['category'], start: number, end: number): PiiFinding => ({ category, start, end, value: 'x'.repeat(end - start) });

  it('keeps the more specific category, then the longer finding, and sorts by position', () => {
    const kept = resolveOverlaps([at('phone', 0, 12), at('payment_card', 2, 20), at('ip_address', 30, 37), at('ip_address', 28, 40), at('email', 50, 60)]);
    expect(kept).toEqual([at('payment_card', 2, 20), at('ip_address', 28, 40), at('email', 50, 60)]);
  });

  it('lets adjacent findings both stand', () => {
    expect(resolveOverlaps([at('phone', 5, 10), at('email', 0, 5)])).toEqual([at('email', 0, 5), at('phone', 5, 10)]);
  });
});

describe('scanText', () => {
  it('finds nothing in an empty text', () => {
    expect(scanText('')).toEqual([]);
  });
});
