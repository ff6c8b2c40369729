/** Summary of what the gateway's child processes logged during a bench run. */

/** Counts the children's log lines by process, level and message (they log at warn and above). */
export function summariseLogs(output: string): string {
  const counts = new Map<string, number>();
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue;
    let key = line.slice(0, 160);
    try {
      const entry = JSON.parse(line) as { process?: string; level?: number; msg?: string; err?: { message?: string } };
      key = `${entry.process} ${entry.level} ${entry.msg}${entry.err?.message ? `: ${entry.err.message}` : ''}`;
    } catch {
      // Not a pino line (e.g. a Node warning): counted as it is.
    }
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `  ${String(count).padStart(6)} × ${key}`).join('\n');
}

/** What each measured side's web and worker logged at warn and above, for the end of a bench's report ('' when nothing). */
export function sideLogsReport(measured: ReadonlyArray<{ side: { role: string }; logs: string }>): string {
  return measured
    .filter(({ logs }) => logs !== '')
    .map(({ side, logs }) => `\n${side.role} web/worker log lines at warn and above (count × process level message):\n${logs}\n`)
    .join('');
}
