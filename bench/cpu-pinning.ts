/**
 * Pinning a bench's processes to CPUs with util-linux `taskset`: children are started under
 * `taskset -c` (spawnEntry, startPrivateRedis and startStack take the CPU list), and the bench's
 * own process, which runs the load generator, is moved with `taskset -a -p`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readAffinity } from './proc-stats.ts';

const run = promisify(execFile);

/** The CPUs of a list such as `0-3,6`. */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.split(',')) {
    const [from, to = from] = part.split('-').map(Number) as [number, number?];
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** Throws a clear error unless `taskset` runs and every CPU of `wanted` is one this process may use. */
export async function checkPinning(wanted: number[]): Promise<void> {
  try {
    await run('taskset', ['-c', '-p', String(process.pid)]);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      missing
        ? 'taskset not found on the PATH: install util-linux (apt-get install util-linux) to pin processes to CPUs'
        : `taskset failed: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const allowed = parseCpuList((await readAffinity(process.pid))?.split(' / ')[0] ?? '');
  const outside = wanted.filter((cpu) => !allowed.includes(cpu));
  if (outside.length > 0) throw new Error(`CPU ${outside.join(', ')} is not among those this process may use (${allowed.join(',')})`);
}

/**
 * Pins every thread of this process to `cpu`. `-a` reaches the threads Node has already started
 * (V8's platform workers, libuv's pool); threads started later inherit the affinity of their creator.
 */
export async function pinSelf(cpu: number): Promise<void> {
  await run('taskset', ['-a', '-c', '-p', String(cpu), String(process.pid)]);
  const affinity = await readAffinity(process.pid);
  if (affinity !== String(cpu)) throw new Error(`this process should run on CPU ${cpu} only, but its threads allow ${affinity}`);
}

/** A process of the run and the CPU it was pinned to. */
export interface Pinned {
  name: string;
  pid: number;
  cpu: number;
}

/** Throws unless every thread of each process may run on its `cpu` alone. */
export async function checkAffinity(processes: readonly Pinned[]): Promise<void> {
  for (const { name, pid, cpu } of processes) {
    const affinity = await readAffinity(pid);
    if (affinity !== String(cpu)) throw new Error(`${name} (pid ${pid}) should run on CPU ${cpu}, but its threads allow ${affinity ?? 'nothing: it is gone'}`);
  }
}
