// What the enrichment services share: the organization a new object is for, the stored
// form of table data, the activity list, and the 422s with every problem listed.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { Actor } from '../../core/actor.js';
import { AppError, errors, type ErrorCode } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { decodeTable, encodeTable } from '../../pipeline/enrich/table.js';
import type { TableData } from '../../pipeline/enrich/types.js';
import type { EnrichmentStore } from './store.js';

const zip = promisify(gzip);
const unzip = promisify(gunzip);

export interface Problem {
  path: string;
  message: string;
  closest?: string;
}

/** 422 with the first problem in detail and all of them in error.details.errors. */
export function refuse(code: ErrorCode, problems: readonly Problem[]): never {
  const first = problems[0]!;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
  throw new AppError(code, { detail: `${first.path}: ${first.message}${more}`, details: { errors: problems } });
}

export const nameTaken = (what: string, name: string) =>
  new AppError('enrichment.name_taken', {
    detail: `A ${what} named "${name}" already exists in the organization`,
    details: { name },
  });

export function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed)
    throw errors.validation('body/name must not be blank', {
      errors: [{ location: 'body/name', message: 'must not be blank' }],
    });
  return trimmed;
}

export { targetOrganization } from '../../core/scope.js';

export const createdBy = (actor: Actor) => (actor.kind === 'user' ? actor.id : null);

/** The stored form of a table version: base64(gzip(encoded)), with its checksum. */
export async function storeTableData(data: TableData): Promise<{ data: string; checksum: string }> {
  const bytes = encodeTable(data);
  const checksum = createHash('sha256').update(bytes).digest('hex');
  return { data: (await zip(bytes)).toString('base64'), checksum };
}

/** The encoded bytes of a stored table version (decodeTable reads them). */
export async function tableBytes(stored: string): Promise<Uint8Array> {
  return new Uint8Array(await unzip(Buffer.from(stored, 'base64')));
}

export async function loadTableData(stored: string): Promise<TableData> {
  return decodeTable(await tableBytes(stored));
}

export type Activity = (entry: {
  organization_id: number;
  kind: string;
  subject_type: 'table' | 'source' | 'policy';
  subject_id: string;
  message: string;
  actor?: Actor;
}) => Promise<void>;

export function activityWriter(store: Pick<EnrichmentStore, 'addActivity'>, now: () => Date): Activity {
  return async (e) =>
    store.addActivity({
      id: newId(),
      organization_id: e.organization_id,
      at: now(),
      kind: e.kind,
      subject_type: e.subject_type,
      subject_id: e.subject_id,
      message: e.message,
      actor_id: e.actor ? createdBy(e.actor) : null,
    });
}
