// `weir config export|diff|import`: the configuration bundle of an organization through
// GET /api/collectors/config/export and POST /api/collectors/config/import.
//   diff   exit 0: nothing would change; 1: changes (or conflicts); 2: error
//   import exit 0: applied;              1: conflicts or secrets needed (nothing applied); 2: error
import { readFileSync, writeFileSync } from 'node:fs';
import { CliError, detailOf, jsonRequest, type Connection } from './api.js';
import { elapsed, type Progress } from './progress.js';

export interface ImportItem {
  kind: string;
  name: string;
  action: string;
  changes?: unknown;
  reason?: string;
  id?: unknown;
}

export interface ImportAnswer {
  dry_run?: boolean;
  applied?: boolean;
  summary?: Record<string, number>;
  items?: ImportItem[];
  detail?: string;
}

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(
      `cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      2,
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${what} ${file} is not JSON: ${(err as Error).message}`, 2);
  }
}

const query = (organization: string | undefined) =>
  organization === undefined ? '' : `?organization_id=${encodeURIComponent(organization)}`;

/** The server's refusal; when it needs the organization, which option gives it. */
function refusal(answer: { status: number; json: unknown }): string {
  const errors = (answer.json as { error?: { details?: { errors?: { location?: string }[] } } } | null)?.error?.details
    ?.errors;
  const needsOrganization = errors?.some((e) => e.location === 'query/organization_id');
  return `${detailOf(answer)}${needsOrganization ? '; give --organization N (GET /api/organizations/ lists them)' : ''}`;
}

export function checkOrganization(value: string | undefined): string | undefined {
  if (value !== undefined && !/^\d{1,10}$/.test(value))
    throw new CliError(`--organization must be an organization id (a number), got "${value}"`, 2);
  return value;
}

/** One line per item: action, kind, name; then its reason and changes, indented. */
export function formatItems(items: ImportItem[]): string[] {
  const lines: string[] = [];
  const w = { action: 9, kind: 4 };
  for (const i of items) {
    w.action = Math.max(w.action, String(i.action).length);
    w.kind = Math.max(w.kind, String(i.kind).length);
  }
  for (const i of items) {
    lines.push(`${String(i.action).padEnd(w.action)}  ${String(i.kind).padEnd(w.kind)}  ${i.name}`);
    if (i.reason) lines.push(`    reason: ${i.reason}`);
    const changes = i.changes;
    if (Array.isArray(changes))
      for (const c of changes) lines.push(`    ${typeof c === 'string' ? c : JSON.stringify(c)}`);
    else if (changes && typeof changes === 'object')
      for (const [k, v] of Object.entries(changes)) lines.push(`    ${k}: ${JSON.stringify(v)}`);
    else if (changes !== undefined && changes !== null) lines.push(`    ${JSON.stringify(changes)}`);
  }
  return lines;
}

export function formatSummary(s: Record<string, number> | undefined): string {
  const v = (k: string) => s?.[k] ?? 0;
  return `create ${v('create')}, update ${v('update')}, unchanged ${v('unchanged')}, conflict ${v('conflict')}`;
}

type Out = (line: string) => void;

export async function configExport(
  c: Connection,
  opts: { organization?: string; out?: string },
  out: Out,
): Promise<number> {
  const answer = await jsonRequest(
    c,
    'GET',
    `/api/collectors/config/export${query(checkOrganization(opts.organization))}`,
  );
  if (answer.status !== 200)
    throw new CliError(refusal(answer), answer.status === 422 || answer.status === 400 ? 2 : 1);
  const text = `${JSON.stringify(answer.json, null, 2)}\n`;
  if (opts.out) {
    writeFileSync(opts.out, text);
    out(`wrote ${opts.out}`);
  } else process.stdout.write(text);
  return 0;
}

/** The import's answer: a 409 carries the diff in the error body's details (the project's one error shape). */
function importAnswer(answer: { status: number; json: unknown }): ImportAnswer {
  const body = (answer.json ?? {}) as ImportAnswer & { error?: { details?: Partial<ImportAnswer> } };
  return answer.status === 409 && body.error?.details && Array.isArray(body.error.details.items)
    ? { ...body.error.details, detail: body.detail }
    : body;
}

export async function configDiff(
  c: Connection,
  file: string,
  opts: { organization?: string },
  out: Out,
): Promise<number> {
  const document = readJson(file, 'document');
  const answer = await jsonRequest(
    c,
    'POST',
    `/api/collectors/config/import${query(checkOrganization(opts.organization))}`,
    { document, dry_run: true },
  );
  const body = importAnswer(answer);
  if (answer.status !== 200 && !(answer.status === 409 && Array.isArray(body.items)))
    throw new CliError(refusal(answer), 2);
  const items = body.items ?? [];
  for (const line of formatItems(items)) out(line);
  out(`summary: ${formatSummary(body.summary)}`);
  if (answer.status === 409 && body.detail) out(`note: ${body.detail}`);
  return items.some((i) => i.action !== 'unchanged') ? 1 : 0;
}

/** The document's objects per kind: "integrations 2, routes 3". */
function contents(document: unknown): string {
  const kinds = Object.entries((document ?? {}) as Record<string, unknown>).filter(([, v]) => Array.isArray(v));
  const total = kinds.reduce((n, [, v]) => n + (v as unknown[]).length, 0);
  return `${total} objects (${kinds.map(([k, v]) => `${k} ${(v as unknown[]).length}`).join(', ')})`;
}

/** Per kind, how many objects each action touches: "route: 1 create, 2 unchanged". */
function planLines(items: ImportItem[]): string[] {
  const byKind = new Map<string, Map<string, number>>();
  for (const i of items) {
    const k = byKind.get(i.kind) ?? new Map<string, number>();
    k.set(i.action, (k.get(i.action) ?? 0) + 1);
    byKind.set(i.kind, k);
  }
  return [...byKind].map(([kind, a]) => `  ${kind}: ${[...a].map(([action, n]) => `${n} ${action}`).join(', ')}`);
}

export async function configImport(
  c: Connection,
  file: string,
  opts: { organization?: string; secrets?: string },
  out: Out,
  progress?: Progress,
): Promise<number> {
  const start = Date.now();
  const document = readJson(file, 'document');
  progress?.line(`read ${file}: ${contents(document)}`);
  let secrets: unknown;
  if (opts.secrets) {
    secrets = readJson(opts.secrets, 'secrets file');
    if (
      typeof secrets !== 'object' ||
      secrets === null ||
      Array.isArray(secrets) ||
      !Object.values(secrets).every((v) => typeof v === 'string')
    ) {
      throw new CliError(`secrets file ${opts.secrets} must be a JSON object of {"ref": "value"} strings`, 2);
    }
  }
  const send = (dryRun: boolean) =>
    jsonRequest(c, 'POST', `/api/collectors/config/import${query(checkOrganization(opts.organization))}`, {
      document,
      dry_run: dryRun,
      ...(secrets !== undefined ? { secrets } : {}),
    });
  if (progress?.enabled) {
    // The apply is one transaction: its plan first (a dry run), per kind, then the apply.
    progress.line('planning (dry run)');
    const planned = importAnswer(await send(true));
    for (const line of planLines(planned.items ?? [])) progress.line(line);
    const n = (planned.items ?? []).filter((i) => i.action === 'create' || i.action === 'update').length;
    progress.line(`applying ${n} change${n === 1 ? '' : 's'}, all or nothing (${elapsed(start)})`);
  }
  const answer = await send(false);
  progress?.line(`answered HTTP ${answer.status} after ${elapsed(start)}`);
  const body = importAnswer(answer);
  if (answer.status === 409 && Array.isArray(body.items)) {
    for (const line of formatItems(body.items.filter((i) => i.action !== 'unchanged'))) out(line);
    throw new CliError(`nothing applied: ${refusal(answer)}`, 1);
  }
  if (answer.status !== 200) throw new CliError(refusal(answer), 2);
  for (const line of formatItems((body.items ?? []).filter((i) => i.action !== 'unchanged'))) out(line);
  out(`${body.applied === false ? 'not applied' : 'applied'}: ${formatSummary(body.summary)}`);
  return 0;
}
