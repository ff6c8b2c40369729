/** A line diff (longest common subsequence): prompts are a few dozen lines, so the quadratic table is small. */

/** One line of a diff: kept, added in the newer text, or removed from the older. */
export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

/** The lines of `before` and `after` in order, each marked. */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  // common[i][j]: the length of the longest common subsequence of a[i..] and b[j..].
  const common = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) {
      const row = common[i] as number[];
      row[j] = a[i] === b[j] ? (common[i + 1] as number[])[j + 1]! + 1 : Math.max((common[i + 1] as number[])[j]!, row[j + 1]!);
    }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push({ kind: 'same', text: a[i++]! });
      j++;
    } else if (i < a.length && (j === b.length || (common[i + 1] as number[])[j]! >= (common[i] as number[])[j + 1]!)) {
      // On a tie the removal goes first, as diff and git print it.
      lines.push({ kind: 'removed', text: a[i++]! });
    } else {
      lines.push({ kind: 'added', text: b[j++]! });
    }
  }
  return lines;
}
