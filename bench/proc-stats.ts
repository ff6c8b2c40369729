/** Memory and CPU time of processes, read from /proc (Linux only). */
import { readFile, readdir, readlink } from 'node:fs/promises';

/** Peak (VmHWM) and current (VmRSS) resident memory, in KiB; null when the process is gone. */
export interface MemoryUse {
  peakKb: number;
  currentKb: number;
}

// USER_HZ: /proc/<pid>/stat counts CPU time in these ticks; 100 on every mainstream Linux build.
const TICKS_PER_SECOND = 100;

function statusField(status: string, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) : 0;
}

/** Reads VmHWM and VmRSS of a process. */
export async function readMemory(pid: number): Promise<MemoryUse | null> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => null);
  if (status === null) return null;
  return { peakKb: statusField(status, 'VmHWM'), currentKb: statusField(status, 'VmRSS') };
}

/** User + system CPU seconds a process has used so far (all its threads); 0 when it is gone. */
export async function readCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return 0;
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 of the whole line.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Busy seconds of one `/proc/stat` line: everything but idle and iowait. */
function busySeconds(line: string): number {
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

/** CPU seconds the whole machine has been busy (all cores; everything but idle and iowait). */
export async function readMachineBusySeconds(): Promise<number> {
  const stat = await readFile('/proc/stat', 'utf8').catch(() => '');
  return busySeconds(stat.split('\n', 1)[0] ?? '');
}

/** Seconds each core (`cpu<N>` in /proc/stat) has been busy, softirq included, by core number. */
export async function readCoreBusySeconds(): Promise<Map<number, number>> {
  const stat = await readFile('/proc/stat', 'utf8').catch(() => '');
  const cores = new Map<number, number>();
  for (const line of stat.split('\n')) {
    const match = /^cpu(\d+) /.exec(line);
    if (match) cores.set(Number(match[1]), busySeconds(line));
  }
  return cores;
}

/** CPU seconds used so far by named processes and by each core, at one instant. */
export interface CpuSample {
  processes: Map<string, number>;
  cores: Map<number, number>;
}

/** Reads the CPU seconds of `pids` (by name) and of every core. */
export async function sampleCpu(pids: ReadonlyMap<string, number>): Promise<CpuSample> {
  const processes = new Map(await Promise.all([...pids].map(async ([name, pid]) => [name, await readCpuSeconds(pid)] as const)));
  return { processes, cores: await readCoreBusySeconds() };
}

/**
 * The TCP ports a process listens on: its sockets (`socket:[inode]` among /proc/<pid>/fd) in state
 * LISTEN in /proc/<pid>/net/tcp and tcp6. How a bench finds a listener the process chose itself
 * (port 0) when its log, at warn level, does not name it.
 */
export async function readListeningPorts(pid: number): Promise<number[]> {
  const fds = await readdir(`/proc/${pid}/fd`);
  const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  const inodes = new Set(links.flatMap((link) => /^socket:\[(\d+)\]$/.exec(link)?.[1] ?? []));
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    const text = await readFile(`/proc/${pid}/net/${table}`, 'utf8').catch(() => '');
    // Fields: sl local_address rem_address st … inode (the 10th); st 0A is LISTEN, the port is hex.
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A' && inodes.has(fields[9] ?? '')) ports.add(Number.parseInt(fields[1]?.split(':').at(-1) ?? '', 16));
    }
  }
  return [...ports];
}

/** The CPUs each thread of a process may run on (`Cpus_allowed_list`), distinct lists joined by ` / `; null when it is gone. */
export async function readAffinity(pid: number): Promise<string | null> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => null);
  if (tasks === null) return null;
  const lists = new Set<string>();
  for (const task of tasks) {
    const status = await readFile(`/proc/${pid}/task/${task}/status`, 'utf8').catch(() => '');
    const match = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
    if (match) lists.add(match[1] as string);
  }
  return [...lists].join(' / ');
}

/**
 * CPU use of named processes over an interval, as a percentage of one core, plus `other`:
 * the rest of the machine's busy time (kernel work not charged to a process, or anything else running).
 */
export class CpuMeter {
  readonly #pids: ReadonlyMap<string, number>;
  #start = new Map<string, number>();
  #machineStart = 0;
  #startedAt = 0;

  constructor(pids: ReadonlyMap<string, number>) {
    this.#pids = pids;
  }

  /** Starts an interval. */
  async begin(): Promise<void> {
    this.#startedAt = performance.now();
    this.#start = new Map(await Promise.all([...this.#pids].map(async ([name, pid]) => [name, await readCpuSeconds(pid)] as const)));
    this.#machineStart = await readMachineBusySeconds();
  }

  /** Ends the interval: percent of one core per process name. */
  async end(): Promise<Record<string, number>> {
    const seconds = (performance.now() - this.#startedAt) / 1000;
    const machine = (await readMachineBusySeconds()) - this.#machineStart;
    const result: Record<string, number> = {};
    let named = 0;
    for (const [name, pid] of this.#pids) {
      const used = (await readCpuSeconds(pid)) - (this.#start.get(name) ?? 0);
      named += used;
      result[name] = seconds > 0 ? (100 * used) / seconds : 0;
    }
    result.other = seconds > 0 ? Math.max(0, (100 * (machine - named)) / seconds) : 0;
    result.total = seconds > 0 ? (100 * machine) / seconds : 0;
    return result;
  }
}
