// Finding a destination the caller may see or change, and checking a type's config and
// credential: what the service's operations start from.
import type { Credential } from '../../core/credentials.js';
import { AppError } from '../../core/errors.js';
import type { Scope } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import { AUDIT_TARGET_TYPE, destinationNotFound, destinationOut, invalidCredential } from './rules.js';
import type { RegisteredSinkType, SinkTypeRegistry } from './sink-types.js';
import type { DestinationRow, DestinationStore } from './store.js';

export function destinationAccess({ store, types }: { store: DestinationStore; types: SinkTypeRegistry }) {
  function typeOf(name: string): RegisteredSinkType {
    const t = types.get(name);
    if (!t) {
      throw new AppError('destination.unknown_type', {
        detail: `Unknown destination type "${name}"; GET /api/collectors/destinations/destination-types lists them`,
        details: { type: name, known: types.list().map((x) => x.sinkType.type) },
      });
    }
    return t;
  }

  function checkedConfig(t: RegisteredSinkType, config: Record<string, unknown>): Record<string, unknown> {
    const { config: withDefaults, issues } = t.checkConfig(config);
    const first = issues[0];
    if (first) {
      throw new AppError('destination.invalid_config', {
        detail: `${first.location} ${first.message}`,
        details: { type: t.sinkType.type, errors: issues },
      });
    }
    return withDefaults;
  }

  function checkedCredential(t: RegisteredSinkType, credential: Credential): Credential {
    const issues = t.checkCredential(credential);
    if (issues.length) throw invalidCredential(issues);
    return credential;
  }

  async function visible(scope: Scope, id: string, lock = false): Promise<DestinationRow> {
    const row = await store.get(scope, id, lock);
    if (!row) throw destinationNotFound();
    return row;
  }

  /** The destination, locked for a change the caller may make (404 unseen, 403 global without platform scope). */
  async function changeable(scope: Scope, id: string): Promise<DestinationRow> {
    const row = await visible(scope, id, true);
    setAuditTarget({ type: AUDIT_TARGET_TYPE, id, organizationId: row.organization_id });
    if (row.organization_id === null && !scope.global) {
      throw new AppError('destination.global_needs_platform_scope', {
        detail: 'Global destinations can be changed only with platform scope',
        details: { destination_id: id },
      });
    }
    return row;
  }

  async function reread(id: string) {
    const row = await store.get({ global: true, organizationIds: [] }, id);
    if (!row) throw destinationNotFound();
    return destinationOut(row);
  }

  return { typeOf, checkedConfig, checkedCredential, visible, changeable, reread };
}

export type DestinationAccess = ReturnType<typeof destinationAccess>;
