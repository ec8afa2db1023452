// The console's small component kit: native elements with labels and roles, so every
// screen is keyboard accessible and passes axe without per-screen effort.
import { useEffect, useId, useRef, type ReactNode } from 'react';
import { ApiError } from '../api/client';
import { formatDate } from './format';

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <header className="page-header">
      <h1>{title}</h1>
      {children ? <div className="actions">{children}</div> : null}
    </header>
  );
}

/** The API's `detail` (or a network failure), announced to screen readers. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError || error instanceof Error ? error.message : String(error);
  return (
    <p className="error" role="alert">
      {text}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

export function Time({ value }: { value: string | null | undefined }) {
  if (!value) return <span>—</span>;
  return (
    <time dateTime={value} title={value}>
      {formatDate(value)}
    </time>
  );
}

const TONE: Record<string, string> = {
  healthy: 'ok',
  ok: 'ok',
  passed: 'ok',
  closed: 'ok',
  active: 'ok',
  live: 'ok',
  succeeded: 'ok',
  completed: 'ok',
  mapped: 'ok',
  reprocessed: 'ok',
  enabled: 'ok',
  degraded: 'warn',
  lagging: 'warn',
  half_open: 'warn',
  capped: 'warn',
  new: 'warn',
  running: 'warn',
  pending: 'warn',
  queued: 'warn',
  never_run: 'muted',
  unhealthy: 'bad',
  failing: 'bad',
  open: 'bad',
  failed: 'bad',
  quarantined: 'bad',
  error: 'bad',
  disabled: 'muted',
  idle: 'muted',
  ignored: 'muted',
  inactive: 'muted',
  cancelled: 'muted',
  // Detections: triage statuses and OCSF severities.
  in_progress: 'warn',
  resolved: 'ok',
  false_positive: 'muted',
  suppressed: 'muted',
  informational: 'muted',
  low: 'muted',
  medium: 'warn',
  high: 'bad',
  critical: 'bad',
  fatal: 'bad',
};

export function Badge({ value }: { value: string | boolean | null | undefined }) {
  const text = value === true ? 'yes' : value === false ? 'no' : (value ?? '—');
  return <span className={`badge ${TONE[String(text)] ?? 'muted'}`}>{String(text).replace(/_/g, ' ')}</span>;
}

interface FieldProps {
  label: string;
  hint?: string;
  children: (id: string, describedBy: string | undefined) => ReactNode;
}

export function Field({ label, hint, children }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id, hintId)}
      {hint ? (
        <small id={hintId} className="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  className?: string;
}

export function DataTable<T>({
  rows,
  columns,
  rowKey,
  caption,
  empty = 'Nothing here yet.',
}: {
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => string | number;
  caption: string;
  empty?: string;
}) {
  if (rows.length === 0) return <p className="empty">{empty}</p>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.header} scope="col" className={c.className}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.header} className={c.className}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Server-side paging of a `{total, limit, offset}` listing. */
export function Pager({
  total,
  limit,
  offset,
  onOffset,
  label,
}: {
  total: number;
  limit: number;
  offset: number;
  onOffset: (offset: number) => void;
  label: string;
}) {
  const last = Math.min(offset + limit, total);
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <span>
        {total === 0 ? 0 : offset + 1}–{last} of {total}
      </span>
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </button>
      <button type="button" disabled={last >= total} onClick={() => onOffset(offset + limit)}>
        Next
      </button>
    </nav>
  );
}

export function Progress({ value, max, label }: { value: number; max: number; label: string }) {
  const pct = max > 0 ? Math.min(100, Math.round((value / max) * 100)) : 0;
  return (
    <div className="progress">
      <progress value={value} max={max || 1} aria-label={label} />
      <span>
        {label}: {pct}%
      </span>
    </div>
  );
}

/** A modal on the native <dialog>: focus is trapped and Escape closes it. */
export function Dialog({
  title,
  open,
  onClose,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <header className="dialog-header">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="ghost" onClick={onClose} aria-label="Close">
          ×
        </button>
      </header>
      {open ? children : null}
    </dialog>
  );
}

export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre className="json" tabIndex={0} aria-label={label}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function Stat({ label, value, tone }: { label: string; value: ReactNode; tone?: string }) {
  return (
    <div className={`stat ${tone ?? ''}`}>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}
