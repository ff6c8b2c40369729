/** `url` with its password masked, fit to print. */
export function withoutPassword(url: string): string {
  const shown = new URL(url);
  if (shown.password) shown.password = '***';
  return shown.toString();
}
