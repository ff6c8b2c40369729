/**
 * The tenant label of a series. Every tenant as a label value would let the number of series grow
 * with the number of customers, which is what makes a Prometheus fall over; the operator names
 * the tenants worth a series of their own (METRICS_TENANTS) and the rest are counted together.
 */
export const OTHER_TENANTS = 'other';

/** Parses METRICS_TENANTS ('' none, '*' every tenant, or ids separated by commas) into the label function. */
export function tenantLabeler(setting: string): (tenantId: string) => string {
  if (setting === '*') return (tenantId) => tenantId;
  const named = new Set(setting.split(',').filter((id) => id !== ''));
  return (tenantId) => (named.has(tenantId) ? tenantId : OTHER_TENANTS);
}
