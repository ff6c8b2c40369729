/**
 * The V8 heap flags that web and worker start with. Procfile, docker-compose.yml, the Dockerfile's
 * CMD and package.json's `web` and `worker` scripts spell them, the test and bench processes take
 * them from here (spawnEntry), and test/tooling/heap-flags.test.ts holds every spelling to this list.
 *
 * Left to itself on a machine of gigabytes, V8 gives the young generation 64 MB semi-spaces and lets
 * the old generation grow to four times its live objects between full collections: that factor is
 * V8's for a heap allowed the machine's default maximum (4 GB on 16 GB and more), and a lower
 * maximum scales it down to 1.3–2. A worker with ~50 MB live sat at ~310 MB once warm and reached
 * ~500 MB running a 200 MB batch; with these flags it sits at ~265 MB and reaches ~355 MB, at the
 * same lines a second and the same CPU per chat completion (docs/benchmarks.md; 16 MB semi-spaces
 * cost 10 % of that CPU). 1,536 MB is no bound a process meets: a worker's live heap is its jobs'
 * bodies (64 jobs of 1 MB prompts are 64 MB).
 */
export const HEAP_FLAGS = ['--max-semi-space-size=32', '--max-old-space-size=1536'] as const;
