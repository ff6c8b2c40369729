/** Something `npm run dev` needs and cannot have; each line is printed as it is, then dev exits 1. */
export class DevSetupError extends Error {
  /** What is missing, then how to get it: one line each. */
  readonly lines: readonly string[];

  constructor(...lines: string[]) {
    super(lines.join(' '));
    this.name = 'DevSetupError';
    this.lines = lines;
  }
}
