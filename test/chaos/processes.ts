/**
 * The gateway's processes under the campaign: web and worker children spawned exactly as the e2e
 * suites spawn them (test/helpers/gateway-processes.ts's spawnEntry: the heap flags, the environment),
 * each watched for its exit. A process told to stop is timed against its deadline; one that exits
 * untold is recorded (a crash is a broken promise) and started again, as an orchestrator would.
 */
import { spawnEntry, type GatewayProcess } from '../helpers/gateway-processes.ts';
import { freePort } from '../helpers/free-port.ts';

/** Whether a process ended when told, how long it took, and with what. */
export interface ProcessExit {
  name: string;
  pid: number;
  /** ms since the campaign started. */
  exitedAt: number;
  code: number | string;
  /** The signal the campaign sent, and when (null: it exited untold). */
  told: { signal: 'SIGTERM' | 'SIGKILL'; at: number } | null;
  /** Time from SIGTERM to exit. */
  stopMs: number | null;
  /** The last lines it wrote, for an untold exit. */
  tail: string | null;
}

interface Slot {
  name: string;
  kind: 'web' | 'worker';
  port: number | null;
  proc: GatewayProcess | null;
  told: ProcessExit['told'];
  restarting: Promise<void> | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function tailOf(output: string): string {
  return output.split('\n').slice(-12).join('\n').slice(-3000);
}

/** The gateway's web and worker processes. */
export class GatewayProcesses {
  readonly exits: ProcessExit[] = [];
  readonly #env: Record<string, string>;
  readonly #slots: Slot[] = [];
  readonly #clock: () => number;
  readonly #log: (line: string) => void;
  #stopping = false;

  constructor(env: Record<string, string>, clock: () => number, log: (line: string) => void) {
    this.#env = env;
    this.#clock = clock;
    this.#log = log;
  }

  /** Starts `webs` web processes (each on a port of its own, kept across restarts) and `workers` workers. */
  async start(webs: number, workers: number): Promise<void> {
    for (let i = 0; i < webs; i++) this.#slots.push({ name: `web${i}`, kind: 'web', port: await freePort(), proc: null, told: null, restarting: null });
    for (let i = 0; i < workers; i++) this.#slots.push({ name: `worker${i}`, kind: 'worker', port: null, proc: null, told: null, restarting: null });
    for (const slot of this.#slots) await this.#spawn(slot, 60_000, true);
  }

  /** Base URLs of the web processes (http://127.0.0.1:PORT), in order. */
  get webOrigins(): string[] {
    return this.#slots.filter((s) => s.kind === 'web').map((s) => `http://127.0.0.1:${s.port}`);
  }

  /** Names of the processes of a kind. */
  names(kind: 'web' | 'worker'): string[] {
    return this.#slots.filter((s) => s.kind === kind).map((s) => s.name);
  }

  /**
   * Sends `signal` to a process and resolves once it exited (SIGTERM: SIGKILL after `deadlineMs` + 5 s
   * if still running) with what it took; then starts it again after `downMs`.
   */
  async signalAndRestart(name: string, signal: 'SIGTERM' | 'SIGKILL', deadlineMs: number, downMs: number): Promise<string> {
    const slot = this.#slot(name);
    await slot.restarting;
    const proc = slot.proc;
    if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return `${name} was not running`;
    const stopped = await this.#stop(slot, signal, deadlineMs);
    await sleep(downMs);
    const ready = await this.#spawn(slot, 30_000, false);
    return `${name} ${stopped}; started again${ready ? '' : ' (not ready within 30 s)'}`;
  }

  /** SIGTERMs every process at once and waits for each (SIGKILL past its deadline + 5 s). */
  async stopAll(deadlineMs: number): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#slots.map((slot) => slot.restarting ?? Promise.resolve()));
    const running = this.#slots.filter((slot) => slot.proc && slot.proc.child.exitCode === null && slot.proc.child.signalCode === null);
    await Promise.all(running.map((slot) => this.#stop(slot, 'SIGTERM', deadlineMs)));
  }

  /** SIGKILLs whatever still runs (cleanup after a failure or an interrupt). */
  killAll(): void {
    this.#stopping = true;
    for (const slot of this.#slots) if (slot.proc && slot.proc.child.exitCode === null) slot.proc.child.kill('SIGKILL');
  }

  /** Output of every process so far (the last `chars` of each), for a failure report. */
  outputs(chars = 4000): string {
    return this.#slots.map((slot) => `--- ${slot.name}\n${slot.proc?.output().slice(-chars) ?? '(not running)'}`).join('\n');
  }

  #slot(name: string): Slot {
    const slot = this.#slots.find((s) => s.name === name);
    if (!slot) throw new Error(`no process ${name}`);
    return slot;
  }

  async #stop(slot: Slot, signal: 'SIGTERM' | 'SIGKILL', deadlineMs: number): Promise<string> {
    const proc = slot.proc as GatewayProcess;
    const at = this.#clock();
    slot.told = { signal, at };
    proc.child.kill(signal);
    const overdue = setTimeout(() => proc.child.kill('SIGKILL'), deadlineMs + 5_000);
    const code = await proc.exited;
    clearTimeout(overdue);
    return `exited (${code}) ${this.#clock() - at} ms after ${signal}`;
  }

  /** Spawns the slot's process and waits for it to be ready; false when it was not within `timeoutMs`. */
  async #spawn(slot: Slot, timeoutMs: number, mustBeReady: boolean): Promise<boolean> {
    const env = slot.port === null ? this.#env : { ...this.#env, PORT: String(slot.port) };
    const proc = spawnEntry(slot.kind === 'web' ? 'src/server.ts' : 'workers/main.ts', env);
    slot.proc = proc;
    slot.told = null;
    const startedAt = this.#clock();
    void proc.exited.then((code) => this.#exited(slot, proc, code, startedAt));
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) break;
      if (await this.#ready(slot, proc)) return true;
      await sleep(100);
    }
    if (mustBeReady) throw new Error(`${slot.name} was not ready within ${timeoutMs} ms:\n${proc.output().slice(-4000)}`);
    return false;
  }

  async #ready(slot: Slot, proc: GatewayProcess): Promise<boolean> {
    if (slot.kind === 'worker') return proc.output().includes('worker ready');
    const answer = await fetch(`http://127.0.0.1:${slot.port}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
    await answer?.body?.cancel();
    return answer?.status === 200;
  }

  #exited(slot: Slot, proc: GatewayProcess, code: number | string, _startedAt: number): void {
    const told = slot.proc === proc ? slot.told : null;
    const exitedAt = this.#clock();
    const stopMs = told?.signal === 'SIGTERM' ? exitedAt - told.at : null;
    this.exits.push({ name: slot.name, pid: proc.child.pid ?? -1, exitedAt, code, told, stopMs, tail: told ? null : tailOf(proc.output()) });
    if (told || this.#stopping || slot.proc !== proc) return;
    this.#log(`${(exitedAt / 1000).toFixed(1)}s  ${slot.name} exited untold (${code}); starting it again`);
    slot.restarting = sleep(1_000)
      .then(() => (this.#stopping ? undefined : this.#spawn(slot, 30_000, false).then(() => undefined)))
      .finally(() => (slot.restarting = null));
  }
}
