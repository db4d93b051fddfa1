// A screen's heading: it names the page (document title too) and takes focus when the screen
// opens, so keyboard and screen-reader users land on the new content after a navigation.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function ScreenTitle({ children, title }: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · callbridge`;
    ref.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

/** A table that scrolls sideways on a narrow screen; focusable so the keyboard can scroll it. */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export function ErrorText({ error }: { error: string | null }) {
  if (error === null) return null;
  return (
    <p role="alert" class="error">
      {error}
    </p>
  );
}
