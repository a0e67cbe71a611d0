import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiProblem } from './api';

/** The API's message, announced to screen readers as it appears. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** A page's heading, focused when the page opens so keyboard and screen-reader users start there. */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

/** A table that scrolls sideways inside itself on a narrow screen; focusable to scroll by keys. */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-box" role="region" aria-label={`${label}, scrollable`} tabIndex={0}>
      {children}
    </div>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

/**
 * Loads with `load` now and whenever `deps` change, and every `pollMs` while the page is
 * open (the delivery tables' live updates). A poll that fails keeps the last data shown.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const value = await latest.current();
      if (mine !== generation.current) return;
      setData(value);
      setError(null);
    } catch (problem) {
      if (mine !== generation.current) return;
      setError(problem);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    setLoading(true);
    setData(undefined);
    void reload();
    if (!pollMs) return () => undefined;
    const timer = setInterval(() => {
      if (!document.hidden) void reload();
    }, pollMs);
    return () => {
      clearInterval(timer);
      generation.current += 1;
    };
  }, deps);

  return { data, error, loading, reload };
}

/** Runs an action, keeping its error (the API's message) and a busy flag for its button. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (problem) {
      setError(problem);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString() : '—';

export const isProblem = (error: unknown): error is ApiProblem => error instanceof ApiProblem;

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

/** The attributes the console's text fields use. */
interface InputProps {
  type?: 'text' | 'password' | 'datetime-local';
  required?: boolean;
  readOnly?: boolean;
  autoComplete?: string;
  inputMode?: 'url' | 'text';
  placeholder?: string;
  spellcheck?: boolean;
  'aria-describedby'?: string;
}

/** A labelled text input bound to a value: the label names it for screen readers and tests. */
export function Field({
  id,
  label,
  value,
  onValue,
  ...input
}: { id: string; label: string; value: string; onValue: (value: string) => void } & InputProps) {
  return (
    <>
      <label for={id}>{label}</label>
      <input
        id={id}
        // Preact's typings tell input kinds apart by a literal `type`; a union of kinds is not
        // one of them, though each kind here takes every attribute given.
        type={(input.type ?? 'text') as 'text'}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        required={input.required}
        readOnly={input.readOnly}
        autoComplete={input.autoComplete}
        inputMode={input.inputMode}
        placeholder={input.placeholder}
        spellcheck={input.spellcheck}
        aria-describedby={input['aria-describedby']}
      />
    </>
  );
}
