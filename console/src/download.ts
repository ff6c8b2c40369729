/** A file made in the browser, saved through a temporary object URL (blob: needs no connect-src). */

/** Saves `text` as the file `name`. */
export function download(name: string, text: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The click has started the download by the time this runs; the URL is not needed afterwards.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
