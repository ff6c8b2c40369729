/**
 * A captioned table that scrolls sideways inside its own box, so a narrow screen never scrolls the page. The box is
 * a named, focusable region so that a keyboard can scroll it too.
 */
import type { ComponentChildren } from 'preact';

/** One column: its header and how a row fills its cell. */
export interface Column<T> {
  header: string;
  cell(row: T): ComponentChildren;
  /** Right-aligned, for numbers. */
  numeric?: boolean;
  /** Long text that wraps (cells stay on one line otherwise). */
  wrap?: boolean;
}

const cellClass = <T,>(column: Column<T>) => (column.numeric ? 'num' : column.wrap ? 'wrap' : undefined);

/** The table; with no rows it keeps its caption and headers and says `empty` (text starting with "No "). */
export function Table<T>(props: { caption: string; columns: Column<T>[]; rows: T[]; rowKey(row: T): string; empty: string }) {
  return (
    <div class="table-wrap" role="region" aria-label={props.caption} tabIndex={0}>
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col" key={column.header} class={cellClass(column)}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 ? (
            <tr>
              <td colSpan={props.columns.length} class="muted">
                {props.empty}
              </td>
            </tr>
          ) : (
            props.rows.map((row) => (
              <tr key={props.rowKey(row)}>
                {props.columns.map((column) => (
                  <td key={column.header} class={cellClass(column)}>
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
