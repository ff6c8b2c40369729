/** UTC calendar windows of budget policies. */
import { describe, expect, it } from 'vitest';
import { windowEnd, windowStart } from '../../../src/domain/budget/windows.ts';

const at = (iso: string) => new Date(iso);

describe('budget windows', () => {
  it('hour: from the full hour to the next one', () => {
    expect(windowStart('hour', at('2025-03-10T12:34:56.789Z'))).toEqual(at('2025-03-10T12:00:00Z'));
    expect(windowEnd('hour', at('2025-03-10T23:59:59.999Z'))).toEqual(at('2025-03-11T00:00:00Z'));
  });

  it('day: UTC midnight to the next, across month and year ends', () => {
    expect(windowStart('day', at('2025-03-10T23:59:59Z'))).toEqual(at('2025-03-10T00:00:00Z'));
    expect(windowEnd('day', at('2025-02-28T10:00:00Z'))).toEqual(at('2025-03-01T00:00:00Z'));
    expect(windowEnd('day', at('2024-02-28T10:00:00Z'))).toEqual(at('2024-02-29T00:00:00Z'));
    expect(windowEnd('day', at('2025-12-31T23:59:59Z'))).toEqual(at('2026-01-01T00:00:00Z'));
  });

  it('month: first of the month to the first of the next, December to January', () => {
    expect(windowStart('month', at('2025-03-31T23:59:59Z'))).toEqual(at('2025-03-01T00:00:00Z'));
    expect(windowEnd('month', at('2025-01-31T12:00:00Z'))).toEqual(at('2025-02-01T00:00:00Z'));
    expect(windowEnd('month', at('2025-12-15T00:00:00Z'))).toEqual(at('2026-01-01T00:00:00Z'));
    expect(windowStart('month', at('2026-01-01T00:00:00Z'))).toEqual(at('2026-01-01T00:00:00Z'));
  });

  it('a boundary instant belongs to the window it starts', () => {
    expect(windowStart('day', at('2025-03-11T00:00:00Z'))).toEqual(at('2025-03-11T00:00:00Z'));
    expect(windowEnd('day', at('2025-03-11T00:00:00Z'))).toEqual(at('2025-03-12T00:00:00Z'));
  });
});
