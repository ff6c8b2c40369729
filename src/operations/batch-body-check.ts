import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { CatalogFile } from '../domain/catalog/schema.ts';
import { candidatesOf } from '../domain/catalog/load-catalog.ts';
import { operationOfEndpoint } from '../domain/batches/batch-endpoints.ts';
import type { BodyCheck } from '../domain/batches/batch-line.ts';
import type { Operation } from './operation.ts';

/** The check of one line's body for each endpoint: its operation's schema, and a model (or tier) the catalog serves. */
export function bodyChecks(operations: ReadonlyMap<string, Operation>, catalog: CatalogFile): (endpoint: string) => BodyCheck {
  const checks = new Map<string, BodyCheck>();
  return (endpoint) => {
    const cached = checks.get(endpoint);
    if (cached) return cached;
    const operation = operations.get(operationOfEndpoint(endpoint) ?? '');
    if (!operation) return () => ({ code: 'invalid_url', message: `this gateway runs no batch for '${endpoint}'.`, param: 'url' });
    const schema = TypeCompiler.Compile(operation.body);
    const check: BodyCheck = (body) => {
      const problem = schema.Errors(body).First();
      if (problem) {
        const param = `body${problem.path.replaceAll('/', '.')}`;
        return { code: 'invalid_value', message: `'${param}' is invalid: ${problem.message}.`, param };
      }
      if (typeof body.model === 'string' && candidatesOf(catalog, body.model) === null)
        return { code: 'model_not_found', message: `The model '${body.model}' does not exist or is not served here.`, param: 'body.model' };
      return null;
    };
    checks.set(endpoint, check);
    return check;
  };
}
