import { describe, expect, it } from 'vitest';
import { renderTemplates, templateVariables } from '../../../src/domain/prompts/template.ts';
import { gatewayError as failure } from '../../helpers/gateway-errors.ts';

const templates = [
  { role: 'system', content: 'You help {{ company }} customers.' },
  { role: 'user', content: 'Hi, I am {{name}}. {{name}} asks about {{topic}}.' },
];

describe('templateVariables', () => {
  it('lists every placeholder once, sorted, with or without inner spaces', () => {
    expect(templateVariables(templates)).toEqual(['company', 'name', 'topic']);
  });

  it('ignores text that only looks like a placeholder', () => {
    expect(templateVariables([{ role: 'user', content: '{ {x} } {{1abc}} {{ a-b }} {{ok_1}}' }])).toEqual(['ok_1']);
  });
});

describe('renderTemplates', () => {
  it('substitutes every occurrence and ignores unused variables', () => {
    const rendered = renderTemplates(templates, { company: 'Acme', name: 'Ada', topic: 'queues', extra: 'unused' });
    expect(rendered).toEqual([
      { role: 'system', content: 'You help Acme customers.' },
      { role: 'user', content: 'Hi, I am Ada. Ada asks about queues.' },
    ]);
  });

  it('does not expand placeholders inside substituted values', () => {
    const rendered = renderTemplates([{ role: 'user', content: '{{a}} and {{b}}' }], { a: '{{b}}', b: 'B' });
    expect(rendered[0]?.content).toBe('{{b}} and B');
  });

  it('keeps $ patterns of values literally', () => {
    expect(renderTemplates([{ role: 'user', content: 'cost: {{a}}' }], { a: "$& $1 $$ $'" })[0]?.content).toBe("cost: $& $1 $$ $'");
  });

  it('names a missing variable as variables.<name> (400 missing_required_field)', () => {
    const error = failure(() => renderTemplates(templates, { company: 'Acme', name: 'Ada' }));
    expect(error).toMatchObject({ status: 400, code: 'missing_required_field', param: 'variables.topic' });
  });

  it('rejects a value that is not a string (400 invalid_value)', () => {
    for (const value of [3, null, true, ['x'], { a: 1 }]) {
      const error = failure(() => renderTemplates(templates, { company: 'Acme', name: 'Ada', topic: value }));
      expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'variables.topic' });
    }
  });

  it('does not read variables from the prototype', () => {
    const error = failure(() => renderTemplates([{ role: 'user', content: '{{toString}}' }], {}));
    expect(error).toMatchObject({ param: 'variables.toString' });
  });
});
