/** Two versions of a prompt side by side as one line diff. */
import { useState } from 'preact/hooks';
import { diffLines } from '../diff.ts';
import { versionText, type PromptVersion } from './prompt-types.ts';

const MARK = { same: '  ', added: '+ ', removed: '- ' } as const;

/** The "Compare … with" selects and the diff of the two versions (newest against the one before at first). */
export function PromptDiff(props: { versions: PromptVersion[] }) {
  const { versions } = props;
  const newest = versions.reduce((a, b) => (b.version > a.version ? b : a));
  const previous = versions
    .filter((v) => v.version < newest.version)
    .reduce<PromptVersion | null>((a, b) => (a === null || b.version > a.version ? b : a), null);
  const [from, setFrom] = useState((previous ?? newest).version);
  const [to, setTo] = useState(newest.version);
  const older = versions.find((v) => v.version === from);
  const newer = versions.find((v) => v.version === to);
  const lines = older && newer ? diffLines(versionText(older), versionText(newer)) : [];
  const options = versions.map((v) => (
    <option key={v.version} value={v.version}>
      {`Version ${v.version}`}
    </option>
  ));
  return (
    <section aria-labelledby="compare-title">
      <h3 id="compare-title">Compare versions</h3>
      <div class="filters">
        <div>
          <label for="compare-from">Compare</label>
          <select id="compare-from" value={from} onChange={(e) => setFrom(Number(e.currentTarget.value))}>
            {options}
          </select>
        </div>
        <div>
          <label for="compare-to">with</label>
          <select id="compare-to" value={to} onChange={(e) => setTo(Number(e.currentTarget.value))}>
            {options}
          </select>
        </div>
      </div>
      <pre class="diff" aria-label="Diff" role="region" tabIndex={0}>
        {lines.map((line, i) => (
          <span key={i} class={line.kind}>
            {line.kind === 'same' ? '' : <span class="visually-hidden">{line.kind === 'added' ? 'Added: ' : 'Removed: '}</span>}
            <span aria-hidden="true">{MARK[line.kind]}</span>
            {line.text}
            {'\n'}
          </span>
        ))}
      </pre>
      {from === to && <p class="small muted">The same version on both sides: no differences.</p>}
    </section>
  );
}
