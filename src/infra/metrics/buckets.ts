/** Histogram buckets, in seconds, for the three kinds of duration the gateway measures. */

/** The gateway's own work around a request: tens of microseconds to tens of milliseconds. */
export const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5];

/** Waiting in the queue: nothing when workers keep up, seconds in a burst. */
export const QUEUE_WAIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A model's answer: a first token in a fraction of a second, a long completion in minutes. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
