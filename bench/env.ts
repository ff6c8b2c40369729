/** Reading the bench's settings from the environment, validated. */

/** A number from the environment, `fallback` when unset; throws when outside [min, max]. */
export function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} must be a number in [${min}, ${max}]; got ${raw}`);
  return value;
}

/** A comma-separated list from the environment, `fallback` when unset. */
export function envList(name: string, fallback: string): string[] {
  return (process.env[name] || fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
