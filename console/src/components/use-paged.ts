/** A list the API gives a page at a time (its `next_cursor`): the first page loads with the page's inputs, the next ones on demand. */
import { useRef, useState } from 'preact/hooks';
import { useLoad, type Loaded } from './use-load.ts';

/** One page of a list, as the API answers it. */
export interface ListPage<T> {
  data: T[];
  next_cursor: string | null;
}

/** A paged list: its first page's load, every row read so far, and what "Load more" needs. */
export interface Paged<T> {
  first: Loaded<T[]>;
  rows: T[];
  /** The last "Load more" failed. */
  moreError: unknown;
  hasMore: boolean;
  loadMore(): Promise<void>;
}

/** Reads `fetchPage(null)` whenever `deps` change, and `fetchPage(cursor)` on each `loadMore`. */
export function usePaged<T>(fetchPage: (cursor: string | null, signal?: AbortSignal) => Promise<ListPage<T>>, deps: unknown[]): Paged<T> {
  const [more, setMore] = useState<{ rows: T[]; cursor: string | null; error: unknown }>({ rows: [], cursor: null, error: null });
  // The first page a later page follows: a page that comes back after the inputs changed belongs to another list and is dropped.
  const generation = useRef(0);
  const first = useLoad(async (signal) => {
    const page = await fetchPage(null, signal);
    if (!signal.aborted) {
      generation.current += 1;
      setMore({ rows: [], cursor: page.next_cursor, error: null });
    }
    return page.data;
  }, deps);
  const loadMore = async () => {
    const asked = generation.current;
    try {
      const page = await fetchPage(more.cursor);
      if (generation.current === asked) setMore({ rows: [...more.rows, ...page.data], cursor: page.next_cursor, error: null });
    } catch (error) {
      if (generation.current === asked) setMore({ ...more, error });
    }
  };
  return { first, rows: [...(first.data ?? []), ...more.rows], moreError: more.error, hasMore: more.cursor !== null, loadMore };
}
