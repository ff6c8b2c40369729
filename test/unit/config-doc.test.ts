import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { CONFIG_DOC_PATH, renderConfigDoc } from '../../scripts/config-doc.ts';

const ROOT = new URL('../../', import.meta.url);

describe('docs/configuration.md', () => {
  it('is what the configuration schema generates (run `npm run docs:config` after changing src/config.ts)', () => {
    expect(readFileSync(new URL(CONFIG_DOC_PATH, ROOT), 'utf8')).toBe(renderConfigDoc());
  });

  it('has a row per variable with its default, what it accepts and its meaning', () => {
    const page = renderConfigDoc(
      Type.Object({
        A_MS: Type.Integer({ minimum: 1, maximum: 10, default: 5, description: 'Waits | this long.' }),
        B_URL: Type.String({ pattern: '^https?://', description: 'Somewhere.' }),
        C_MODE: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off')], { description: 'A switch.' })),
      }),
    );
    expect(page).toContain('| `A_MS` | `5` | integer 1–10 | Waits \\| this long. |');
    expect(page).toContain('| `B_URL` | required | matching `^https?://` | Somewhere. |');
    expect(page).toContain('| `C_MODE` | unset | `on`, `off` | A switch. |');
  });
});
