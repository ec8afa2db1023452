// The search form: the query in its text form, the time range (relative or absolute), the
// columns, how many rows to keep and the aggregations. It builds the query definition of
// POST /api/search (docs/search.md); a 422 from the API is shown under the query, with a
// caret under the line and column it names.
import { useId } from 'react';
import type { ApiError, In } from '../../api/client';
import { Field } from '../../ui/kit';

export type QueryDefinition = NonNullable<In<'search.run'>['query']>;

export interface FormState {
  text: string;
  range: string;
  from: string;
  to: string;
  fields: string;
  limit: number;
  countBy: string;
  top: string;
  histogram: string;
}

export const RANGES: [string, string][] = [
  ['15m', 'Last 15 minutes'],
  ['1h', 'Last hour'],
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['absolute', 'Between two dates'],
];

export const INITIAL: FormState = {
  text: '',
  range: '24h',
  from: '',
  to: '',
  fields: '',
  limit: 100,
  countBy: '',
  top: '',
  histogram: '',
};

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** A local date-time input as an RFC 3339 instant (the browser's zone made explicit). */
function instant(local: string): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

export function toDefinition(f: FormState, organizationId: number | null): QueryDefinition {
  const from = instant(f.from);
  const to = instant(f.to);
  const time = f.range === 'absolute' ? { ...(from ? { from } : {}), ...(to ? { to } : {}) } : { last: f.range };
  const aggregations: NonNullable<QueryDefinition['aggregations']> = [{ type: 'count' }];
  if (list(f.countBy).length) aggregations.push({ type: 'count_by', fields: list(f.countBy).slice(0, 3), size: 10 });
  if (f.top.trim()) aggregations.push({ type: 'top', field: f.top.trim(), size: 10 });
  if (f.histogram) aggregations.push({ type: 'histogram', interval: f.histogram });
  return {
    ...(organizationId ? { organization_id: organizationId } : {}),
    time,
    ...(f.text.trim() ? { query: f.text } : {}),
    ...(list(f.fields).length ? { fields: list(f.fields) } : {}),
    limit: f.limit,
    aggregations,
  };
}

/** A stored query definition back into the form (a past run or a saved query). */
export function fromDefinition(q: unknown): FormState {
  const d = (q ?? {}) as QueryDefinition;
  const local = (iso?: string) => {
    if (!iso) return '';
    const t = new Date(iso);
    if (Number.isNaN(t.getTime())) return '';
    return new Date(t.getTime() - t.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  };
  const last = d.time?.last;
  const known = RANGES.some(([v]) => v === last);
  const aggs = d.aggregations ?? [];
  const countBy = aggs.find((a) => a.type === 'count_by');
  const top = aggs.find((a) => a.type === 'top');
  const histogram = aggs.find((a) => a.type === 'histogram');
  return {
    text: d.query ?? (d.where !== undefined ? JSON.stringify(d.where) : ''),
    range: last && known ? last : d.time?.from || d.time?.to ? 'absolute' : '24h',
    from: local(d.time?.from),
    to: local(d.time?.to),
    fields: (d.fields ?? []).join(', '),
    limit: d.limit ?? 100,
    countBy: countBy?.type === 'count_by' ? countBy.fields.join(', ') : '',
    top: top?.type === 'top' ? top.field : '',
    histogram: histogram?.type === 'histogram' ? histogram.interval : '',
  };
}

interface Problem {
  location?: string;
  message?: string;
  line?: number;
  column?: number;
  closest?: string;
}

/** The API's refusal next to the query: its detail, and the query's line with a caret at the column. */
function QueryError({ id, error, text }: { id: string; error: ApiError; text: string }) {
  const problem = ((error.details?.errors as Problem[] | undefined) ?? []).find((p) => p.line !== undefined);
  const line = problem?.line !== undefined ? text.split('\n')[problem.line - 1] : undefined;
  return (
    <div id={id} className="error" role="alert">
      <p>{error.message}</p>
      {line !== undefined && problem?.column !== undefined ? (
        <pre className="caret" aria-hidden="true" data-testid="query-caret">
          {line}
          {'\n'}
          {' '.repeat(Math.max(0, problem.column - 1))}^
        </pre>
      ) : null}
    </div>
  );
}

export function QueryForm({
  state,
  onChange,
  onRun,
  running,
  error,
}: {
  state: FormState;
  onChange: (next: FormState) => void;
  onRun: () => void;
  running: boolean;
  error: ApiError | null;
}) {
  const errorId = useId();
  const set = <K extends keyof FormState>(key: K, value: FormState[K]) => onChange({ ...state, [key]: value });
  return (
    <form
      className="panel"
      aria-label="Search query"
      onSubmit={(e) => {
        e.preventDefault();
        onRun();
      }}
    >
      <Field
        label="Query"
        hint='Text form, e.g. class_uid = 3002 and actor.user.name ~ "adm*" (docs/search.md); empty: every event of the range. Ctrl+Enter runs it.'
      >
        {(id, hint) => (
          <textarea
            id={id}
            rows={3}
            spellCheck={false}
            aria-describedby={[hint, error ? errorId : undefined].filter(Boolean).join(' ')}
            aria-invalid={error ? true : undefined}
            value={state.text}
            onChange={(e) => set('text', e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                onRun();
              }
            }}
          />
        )}
      </Field>
      {error ? <QueryError id={errorId} error={error} text={state.text} /> : null}
      <div className="row">
        <Field label="Time range">
          {(id) => (
            <select id={id} value={state.range} onChange={(e) => set('range', e.target.value)}>
              {RANGES.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        {state.range === 'absolute' ? (
          <>
            <Field label="From">
              {(id) => (
                <input id={id} type="datetime-local" value={state.from} onChange={(e) => set('from', e.target.value)} />
              )}
            </Field>
            <Field label="To" hint="Empty: now">
              {(id, hint) => (
                <input
                  id={id}
                  type="datetime-local"
                  aria-describedby={hint}
                  value={state.to}
                  onChange={(e) => set('to', e.target.value)}
                />
              )}
            </Field>
          </>
        ) : null}
        <Field label="Rows kept (the cap)">
          {(id) => (
            <input
              id={id}
              type="number"
              min={0}
              max={10000}
              value={state.limit}
              onChange={(e) => set('limit', Number(e.target.value))}
            />
          )}
        </Field>
        <Field label="Columns" hint="Fields, comma separated; empty: the whole event">
          {(id, hint) => (
            <input
              id={id}
              aria-describedby={hint}
              placeholder="actor.user.name, src_endpoint.ip"
              value={state.fields}
              onChange={(e) => set('fields', e.target.value)}
            />
          )}
        </Field>
      </div>
      <fieldset>
        <legend>Aggregations (the count is always given)</legend>
        <div className="row">
          <Field label="Count by" hint="Up to three fields, comma separated">
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                placeholder="status_id"
                value={state.countBy}
                onChange={(e) => set('countBy', e.target.value)}
              />
            )}
          </Field>
          <Field label="Top values of">
            {(id) => (
              <input
                id={id}
                placeholder="src_endpoint.ip"
                value={state.top}
                onChange={(e) => set('top', e.target.value)}
              />
            )}
          </Field>
          <Field label="Histogram">
            {(id) => (
              <select id={id} value={state.histogram} onChange={(e) => set('histogram', e.target.value)}>
                <option value="">None</option>
                {['1m', '5m', '15m', '1h', '1d'].map((i) => (
                  <option key={i} value={i}>
                    per {i}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
      </fieldset>
      <button type="submit" className="primary" disabled={running}>
        {running ? 'Searching…' : 'Run search'}
      </button>
    </form>
  );
}
