/**
 * UTC calendar windows of budget policies: a window runs from its start up to, not
 * including, the next boundary, which is also when it resets.
 */
import type { BudgetWindow } from '../../infra/store/repository.ts';

/** Start of the window that contains `now`. */
export function windowStart(window: BudgetWindow, now: Date): Date {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  switch (window) {
    case 'hour':
      return new Date(Date.UTC(year, month, now.getUTCDate(), now.getUTCHours()));
    case 'day':
      return new Date(Date.UTC(year, month, now.getUTCDate()));
    case 'month':
      return new Date(Date.UTC(year, month, 1));
  }
}

/** End of the window that contains `now`: the next boundary (`resets_at`). */
export function windowEnd(window: BudgetWindow, now: Date): Date {
  const start = windowStart(window, now);
  switch (window) {
    case 'hour':
      return new Date(start.getTime() + 3_600_000);
    case 'day':
      // Date.UTC rolls day 32 into the next month and month 12 into January of the next year.
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1));
    case 'month':
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  }
}
