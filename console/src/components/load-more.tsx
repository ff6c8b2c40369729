/** The end of a paged list: the last "Load more" error, and the button while the API has more. */
import { ErrorAlert } from './status.tsx';
import type { Paged } from './use-paged.ts';

/** Below a paged list's table. */
export function LoadMore<T>({ paged }: { paged: Paged<T> }) {
  return (
    <>
      <ErrorAlert error={paged.moreError} />
      {paged.hasMore && (
        <button type="button" onClick={() => void paged.loadMore()}>
          Load more
        </button>
      )}
    </>
  );
}
