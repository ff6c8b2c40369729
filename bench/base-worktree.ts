/**
 * A git revision checked out beside this one (`git worktree add --detach` in a temporary folder),
 * with this checkout's node_modules linked in, so that its processes can run as this checkout's do.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, realpath, rm, symlink, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const run = promisify(execFile);

/** A checked-out revision. */
export interface Worktree {
  root: string;
  /** The full commit id. */
  commit: string;
  /** Removes the worktree and its folder. */
  remove(): Promise<void>;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await run('git', args, { cwd })).stdout.trim();
}

/** The short commit of a checkout's HEAD, with `+dirty` when its working tree has changes. */
export async function describeCheckout(checkout: string): Promise<string> {
  const head = await git(checkout, 'rev-parse', '--short', 'HEAD');
  return (await git(checkout, 'status', '--porcelain')) === '' ? head : `${head}+dirty`;
}

/** Checks out `rev` of `checkout`'s repository in a new temporary worktree. */
export async function addWorktree(checkout: string, rev: string): Promise<Worktree> {
  const commit = await git(checkout, 'rev-parse', '--verify', '--quiet', `${rev}^{commit}`).catch(() => {
    throw new Error(`unknown revision ${rev}`);
  });
  const root = await mkdtemp(join(tmpdir(), 'gw-base-'));
  const remove = async () => {
    await unlink(join(root, 'node_modules')).catch(() => undefined); // the link only, never what it points to
    await git(checkout, 'worktree', 'remove', '--force', root).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
    await git(checkout, 'worktree', 'prune');
  };
  try {
    await git(checkout, 'worktree', 'add', '--detach', root, commit);
    await symlink(await realpath(join(checkout, 'node_modules')), join(root, 'node_modules'), 'dir');
  } catch (error) {
    await remove();
    throw error;
  }
  return { root, commit, remove };
}
