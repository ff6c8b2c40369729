/** The worker's registry of cancelled requests: one request of a job stops, the job's others do not. */
import { describe, expect, it } from 'vitest';
import { Cancellations } from '../../../src/infra/events/cancellations.ts';

describe('Cancellations', () => {
  it('aborts a running request and no other request of its job', () => {
    const cancellations = new Cancellations(1_000);
    const job = new AbortController();
    const first = cancellations.start('req_1', job.signal);
    const second = cancellations.start('req_2', job.signal);
    cancellations.cancel('req_1');
    expect(first.aborted).toBe(true);
    expect(second.aborted).toBe(false);
  });

  it('starts a request cancelled before its job ran already aborted, once', () => {
    const cancellations = new Cancellations(1_000);
    cancellations.cancel('req_1');
    const job = new AbortController();
    expect(cancellations.start('req_1', job.signal).aborted).toBe(true);
    cancellations.end('req_1');
    expect(cancellations.start('req_1', job.signal).aborted).toBe(false);
  });

  it('aborts every request when their job is aborted (shutdown, lost lock)', () => {
    const cancellations = new Cancellations(1_000);
    const job = new AbortController();
    const signals = ['req_1', 'req_2'].map((id) => cancellations.start(id, job.signal));
    job.abort(new Error('worker closing'));
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
  });

  it('forgets a cancellation whose job never came once its time is up', () => {
    let now = 0;
    const cancellations = new Cancellations(1_000, () => now);
    cancellations.cancel('req_old');
    now = 1_500;
    cancellations.cancel('req_new');
    const job = new AbortController();
    expect(cancellations.start('req_old', job.signal).aborted).toBe(false);
    expect(cancellations.start('req_new', job.signal).aborted).toBe(true);
  });

  it('does not abort a request that ended before its cancellation arrived', () => {
    const cancellations = new Cancellations(1_000);
    const job = new AbortController();
    const signal = cancellations.start('req_1', job.signal);
    cancellations.end('req_1');
    cancellations.cancel('req_1');
    expect(signal.aborted).toBe(false);
  });
});
