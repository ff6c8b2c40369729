/**
 * The house's boundaries (docs/architecture.md, "The rules, and what checks them"), checked by
 * `npm run lint:boundaries` over src/ and workers/, and shown to bite by test/tooling/boundaries.test.ts.
 *
 * Layers: src/web and src/worker are the two processes; src/operations, src/domain, src/infra,
 * src/providers, src/wire, src/errors and src/cli are shared code beneath them. Only the entry points
 * (src/server.ts, workers/main.ts) and the one-process development mode (src/dev.ts, src/dev/) import a
 * process's folder.
 *
 * Type-only imports count (tsPreCompilationDeps): a type names a module as surely as a value does. The one
 * exception is a cycle (no-circular), which matters at run time only.
 */

/** A process's folder: what only its entry points and the development mode may import (no rule names those: they may import anything). */
const WEB = '^src/web/';
const WORKER = '^src/worker/';

/**
 * A provider's own folder, src/providers/<name>/; src/providers/shared/ is not one (it is the providers'
 * shared library, public file by file), nor are the seam's top-level files (types.ts, descriptor.ts,
 * descriptors.ts, registry.ts), which are the seam itself.
 */
const PROVIDER_FOLDER = '^src/providers/(?!shared/)[^/]+/';
const PROVIDER_FACE = '^src/providers/[^/]+/index[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, of values or of types: a cycle makes load order matter and hides which module is the lower one.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'web-not-to-worker',
      severity: 'error',
      comment: 'The web process never imports the worker process; what both need belongs in operations/, domain/ or infra/.',
      from: { path: WEB },
      to: { path: WORKER },
    },
    {
      name: 'worker-not-to-web',
      severity: 'error',
      comment: 'The worker process never imports the web process; what both need belongs in operations/, domain/ or infra/.',
      from: { path: WORKER },
      to: { path: WEB },
    },
    {
      name: 'domain-not-to-processes',
      severity: 'error',
      comment: 'domain/ is beneath both processes and beneath operations/: it imports none of them.',
      from: { path: '^src/domain/' },
      to: { path: [WEB, WORKER, '^src/operations/'] },
    },
    {
      name: 'infra-not-to-processes',
      severity: 'error',
      comment: 'infra/ is beneath both processes and beneath operations/: it imports none of them.',
      from: { path: '^src/infra/' },
      to: { path: [WEB, WORKER, '^src/operations/'] },
    },
    {
      name: 'operations-not-to-processes',
      severity: 'error',
      comment: 'An operation is shared by both processes (the web admits it, the worker runs it): it imports neither.',
      from: { path: '^src/operations/' },
      to: { path: [WEB, WORKER] },
    },
    {
      name: 'shared-code-not-to-processes',
      severity: 'error',
      comment: 'Only the entry points (src/server.ts, workers/main.ts) and the development mode (src/dev.ts, src/dev/) import a process.',
      from: { path: ['^src/(cli|errors)/', '^src/(config|log|boot|release)[.]ts$'] },
      to: { path: [WEB, WORKER] },
    },
    {
      name: 'providers-stay-beneath',
      severity: 'error',
      comment:
        'A provider translates and calls an upstream: it may import src/wire, src/errors, src/providers/* and npm packages, ' +
        'not the processes, the operations, infra/ or domain/, not even for a type: the shape of its catalog entry is ' +
        "the providers' own (src/providers/model.ts), and the catalog's schema is built from it.",
      from: { path: '^src/providers/' },
      to: { path: [WEB, WORKER, '^src/operations/', '^src/infra/', '^src/domain/'] },
    },
    {
      name: 'provider-internals',
      severity: 'error',
      comment:
        'Outside the providers, a provider is reached through its index.ts only (src/providers/<name>/index.ts). ' +
        'src/providers/descriptors.ts may also import a <name>/descriptor.ts (today it reads the list of providers, src/providers/index.ts).',
      from: { pathNot: ['^src/providers/[^/]+/', '^src/providers/descriptors[.]ts$'] },
      to: { path: PROVIDER_FOLDER, pathNot: PROVIDER_FACE },
    },
    {
      name: 'provider-descriptors-list',
      severity: 'error',
      comment: "src/providers/descriptors.ts imports a provider's index.ts or descriptor.ts, nothing else of its folder.",
      from: { path: '^src/providers/descriptors[.]ts$' },
      to: { path: PROVIDER_FOLDER, pathNot: [PROVIDER_FACE, '^src/providers/[^/]+/descriptor[.]ts$'] },
    },
    {
      name: 'provider-internals-across-providers',
      severity: 'error',
      comment:
        'Inside src/providers/, a provider reaches another only through its index.ts, and src/providers/shared/ ' + '(beneath every provider) reaches none.',
      from: { path: '^src/providers/([^/]+)/' },
      to: { path: PROVIDER_FOLDER, pathNot: ['^src/providers/$1/', PROVIDER_FACE] },
    },
    {
      name: 'shared-providers-code-not-to-a-provider',
      severity: 'error',
      comment: 'src/providers/shared/ is beneath every provider: it imports none of them, not even an index.ts.',
      from: { path: '^src/providers/shared/' },
      to: { path: PROVIDER_FOLDER },
    },
    {
      name: 'wire-only-wire',
      severity: 'error',
      comment: 'src/wire holds shapes only: it imports other wire modules and @sinclair/typebox (the language the shapes are written in), nothing else.',
      from: { path: '^src/wire/' },
      to: { pathNot: ['^src/wire/', '^node_modules/@sinclair/typebox/'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dependencies',
      severity: 'error',
      comment: 'The image installs with --omit=dev (Dockerfile): shipped code imports no devDependency at run time (import type is fine).',
      from: { path: '^(src|workers)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-tests',
      severity: 'error',
      comment: 'Shipped code imports nothing from test/ (the image has no test/).',
      from: { path: '^(src|workers)/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
    // Violations in files being changed by others when the rules came in; each entry says the fix. The list only
    // shrinks: test/tooling/boundaries.test.ts fails while an entry no longer happens, so a fix removes its entry.
    // A violation that cannot be mended at once is listed here, in dependency-cruiser's baseline format
    // (`depcruise --output-type baseline`), with a comment saying its fix; none is today.
    knownViolations: [],
  },
};
