/** Server-sent events as the gateway writes them (`data: …` lines, a blank line after each event), read in pieces. */

/** The `data` of each event complete in `buffer`, and what follows the last one (the start of an event still to come). */
export function takeEvents(buffer: string): { data: string[]; rest: string } {
  // A piece of the stream may end anywhere, even between the \r and \n of a line end.
  const events = buffer.split(/\r?\n\r?\n|\r\r/);
  const rest = events.pop() ?? '';
  const data = events
    .map((event) =>
      event
        .split(/\r?\n|\r/)
        .filter((line) => line.startsWith('data:'))
        // One optional space after the colon belongs to the field syntax, not the value (the SSE spec).
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
        .join('\n'),
    )
    .filter((value) => value !== '');
  return { data, rest };
}
