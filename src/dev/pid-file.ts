/** One process at a time on a directory: PGlite, unlike PostgreSQL, does not stop a second one opening its files. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { DevSetupError } from './dev-setup-error.ts';

function running(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Writes this process's pid to `path`, unless a running process already did (a DevSetupError
 * naming `what`); a file left by a process that died is taken over. Returns the release, which
 * also runs when the process exits.
 */
export function claimPidFile(path: string, what: string): () => void {
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = Number(readFileSync(path, 'utf8'));
      if (running(holder))
        throw new DevSetupError(
          `${what} is in use by another process (pid ${holder}).`,
          `Stop that one first (or, if pid ${holder} is not a dev, delete ${path}).`,
        );
      rmSync(path, { force: true });
    }
  }
  const release = () => {
    process.off('exit', release);
    rmSync(path, { force: true });
  };
  process.on('exit', release);
  return release;
}
