/** A bench's command-line settings, or its usage and exit status 2 when they are wrong. */
export function settingsOrExit<T>(read: () => T, usage: string): T {
  try {
    return read();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    process.exit(2);
  }
}
