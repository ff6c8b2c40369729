/** A page's frame: its one h1, which takes the focus when the page opens so that keyboard and screen reader users start there. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/** The page: its heading (focused on arrival, named in the tab's title) and its content. */
export function Page(props: { title: string; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Gateway console`;
    heading.current?.focus();
  }, [props.title]);
  return (
    <>
      <h1 tabIndex={-1} ref={heading}>
        {props.title}
      </h1>
      {props.children}
    </>
  );
}
