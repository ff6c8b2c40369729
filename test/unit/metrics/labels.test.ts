import { describe, expect, it } from 'vitest';
import { tenantLabeler } from '../../../src/infra/metrics/tenant-label.ts';
import { boundedLabel } from '../../../src/infra/metrics/bounded-label.ts';

describe('tenantLabeler', () => {
  it('names only the listed tenants', () => {
    const label = tenantLabeler('acme,globex');
    expect(['acme', 'globex', 'initech'].map(label)).toEqual(['acme', 'globex', 'other']);
  });

  it('names none by default and every tenant with *', () => {
    expect(tenantLabeler('')('acme')).toBe('other');
    expect(tenantLabeler('*')('acme')).toBe('acme');
  });
});

describe('boundedLabel', () => {
  it('keeps the first values it sees and calls every later one other', () => {
    const label = boundedLabel(2);
    expect(['a', 'b', 'a', 'c', 'b', 'd'].map(label)).toEqual(['a', 'b', 'a', 'other', 'b', 'other']);
  });
});
