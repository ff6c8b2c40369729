/** How numbers, money and times read on every page. */

const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });
const count = new Intl.NumberFormat('en-US');

/** Micro-units of the tenant's currency (the API's `*_micros`) as dollars. */
export function formatMicros(micros: number): string {
  return money.format(micros / 1e6);
}

/** Dollars typed in a form as the API's micro-units; null when not a positive amount. */
export function parseDollars(value: string): number | null {
  const dollars = Number(value);
  return Number.isFinite(dollars) && dollars > 0 ? Math.round(dollars * 1e6) : null;
}

/** A count with thousands separators. */
export function formatCount(value: number): string {
  return count.format(value);
}

/** An ISO time as the reader's local date and time, or a dash when absent. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** A UTC day (YYYY-MM-DD) `daysAgo` days before today: what the usage API's `since` and `until` take. */
export function utcDay(daysAgo = 0): string {
  return new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
}
