/**
 * A label whose values the gateway does not choose alone: an error code may be a provider's own
 * (a provider's 4xx passes its code to the client). The first `limit` distinct values keep
 * their name and any later one is `other`, so that no upstream can grow the series without bound.
 */
export function boundedLabel(limit: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= limit) return 'other';
    seen.add(value);
    return value;
  };
}

/** Distinct error codes a process names in its series: the gateway's own are about fifty. */
export const ERROR_CODE_LABELS = 200;
