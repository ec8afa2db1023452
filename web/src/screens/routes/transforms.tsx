// A route's transforms as a form (docs/routing.md, Transforms): rows added and removed, each
// with the fields of its type: drop or keep fields (OCSF paths), sample at a rate, mask personal
// data in some fields or everywhere. Checked as they are typed the way the condition is: at
// once for what the form knows (a rate outside (0, 1], no field), then by the API's own check
// (a dry run of a draft route with these transforms), each problem shown on its row.
import { useQuery } from '@tanstack/react-query';
import { api, call, type ApiError } from '../../api/client';
import { useDebounced } from '../../ui/debounce';
import { Field } from '../../ui/kit';

export type TransformType = 'drop_fields' | 'keep_fields' | 'sample' | 'mask';
export interface TransformRow {
  type: TransformType;
  /** Field paths, comma separated (drop, keep, mask). */
  fields: string;
  /** The kept share, for sample. */
  rate: string;
}

const TYPES: [TransformType, string][] = [
  ['drop_fields', 'Drop fields'],
  ['keep_fields', 'Keep only fields'],
  ['sample', 'Sample'],
  ['mask', 'Mask personal data'],
];

const paths = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Rows from a stored route's transforms. */
export function transformRows(stored: unknown): TransformRow[] {
  if (!Array.isArray(stored)) return [];
  return stored.map((t: { type?: string; fields?: unknown; rate?: unknown }) => ({
    type: (TYPES.some(([k]) => k === t.type) ? t.type : 'drop_fields') as TransformType,
    fields: Array.isArray(t.fields) ? t.fields.join(', ') : '',
    rate: typeof t.rate === 'number' ? String(t.rate) : '',
  }));
}

/** The transforms the API takes. */
export function transformsOf(rows: TransformRow[]): unknown[] {
  return rows.map((r) => {
    if (r.type === 'sample') return { type: 'sample', rate: r.rate.trim() === '' ? null : Number(r.rate) };
    if (r.type === 'mask') return paths(r.fields).length ? { type: 'mask', fields: paths(r.fields) } : { type: 'mask' };
    return { type: r.type, fields: paths(r.fields) };
  });
}

/** What the form knows is wrong with a row, at once. */
function localProblem(r: TransformRow): string | undefined {
  if (r.type === 'sample') {
    const rate = Number(r.rate);
    if (r.rate.trim() === '' || !Number.isFinite(rate) || rate <= 0 || rate > 1)
      return 'The rate is the share of events kept: more than 0, at most 1 (0.1 keeps one in ten).';
  }
  if ((r.type === 'drop_fields' || r.type === 'keep_fields') && paths(r.fields).length === 0)
    return 'Name at least one field.';
  return undefined;
}

export interface TransformsCheck {
  /** A problem per row (local first, then the API's). */
  problems: (string | undefined)[];
  /** A problem not of one row. */
  general?: string;
  invalid: boolean;
}

export function useTransformsCheck(rows: TransformRow[], organizationId: number | null | undefined): TransformsCheck {
  const local = rows.map(localProblem);
  const key = local.some(Boolean) || rows.length === 0 ? undefined : JSON.stringify(transformsOf(rows));
  const draft = useDebounced(key, 400);
  const check = useQuery<unknown, ApiError>({
    queryKey: ['transforms-check', organizationId, draft],
    queryFn: () =>
      call(
        api.POST('/api/collectors/routes/dry-run', {
          body: {
            events: [{}],
            routes: [{ transforms: JSON.parse(draft!) as unknown }],
            ...(organizationId ? { organization_id: organizationId } : {}),
          },
        }),
      ),
    enabled: draft !== undefined,
    retry: false,
  });
  const problems = [...local];
  let general: string | undefined;
  const errs = draft === key ? ((check.error?.details?.errors ?? []) as { path?: string; message?: string }[]) : [];
  for (const e of errs) {
    const m = /^routes\[0\]\.transforms\[(\d+)\](.*)$/.exec(e.path ?? '');
    const where = m ? Number(m[1]) : undefined;
    const text = `${m?.[2] ? `${m[2].replace(/^\./, '')}: ` : ''}${e.message ?? ''}`;
    if (where !== undefined && where < problems.length) problems[where] ??= text;
    else general ??= check.error?.message;
  }
  if (draft === key && check.error && errs.length === 0) general = check.error.message;
  return { problems, ...(general ? { general } : {}), invalid: problems.some(Boolean) || general !== undefined };
}

export function TransformsEditor({
  rows,
  onChange,
  check,
}: {
  rows: TransformRow[];
  onChange: (rows: TransformRow[]) => void;
  check: TransformsCheck;
}) {
  const set = (i: number, patch: Partial<TransformRow>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset>
      <legend>Transforms (applied in order to the copies this route sends)</legend>
      {rows.length === 0 ? <p className="hint">None: destinations receive the event as normalized.</p> : null}
      <ol className="transforms" aria-label="Transforms">
        {rows.map((r, i) => (
          <li key={i} data-testid="transform-row">
            <div className="row">
              <Field label={`Transform ${i + 1}`}>
                {(id) => (
                  <select id={id} value={r.type} onChange={(e) => set(i, { type: e.target.value as TransformType })}>
                    {TYPES.map(([k, label]) => (
                      <option key={k} value={k}>
                        {label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              {r.type === 'sample' ? (
                <Field label="Rate (kept share)" hint="e.g. 0.1 keeps one event in ten (by event id)">
                  {(id, hint) => (
                    <input
                      id={id}
                      aria-describedby={hint}
                      inputMode="decimal"
                      value={r.rate}
                      onChange={(e) => set(i, { rate: e.target.value })}
                    />
                  )}
                </Field>
              ) : (
                <Field
                  label={r.type === 'mask' ? 'Fields (empty: everywhere)' : 'Fields'}
                  hint="OCSF paths, comma separated, e.g. actor.user.email_addr, unmapped"
                >
                  {(id, hint) => (
                    <input
                      id={id}
                      aria-describedby={hint}
                      spellCheck={false}
                      value={r.fields}
                      onChange={(e) => set(i, { fields: e.target.value })}
                    />
                  )}
                </Field>
              )}
              <button
                type="button"
                aria-label={`Remove transform ${i + 1}`}
                onClick={() => onChange(rows.filter((_, j) => j !== i))}
              >
                Remove
              </button>
            </div>
            {check.problems[i] ? <p className="error">{check.problems[i]}</p> : null}
          </li>
        ))}
      </ol>
      {check.general ? <p className="error">{check.general}</p> : null}
      <button type="button" onClick={() => onChange([...rows, { type: 'drop_fields', fields: '', rate: '' }])}>
        Add transform
      </button>
    </fieldset>
  );
}
