// The one tenant-scoping filter every store query uses:
//   db.selectFrom('integrations').where(scoped(scope, 'integrations.organization_id'))
// A global scope adds no condition; an empty scope matches nothing.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Scope } from '../../core/scope.js';

export function scoped(scope: Scope, column: string): RawBuilder<SqlBool> {
  if (scope.global) return sql<SqlBool>`true`;
  if (scope.organizationIds.length === 0) return sql<SqlBool>`false`;
  return sql<SqlBool>`${sql.ref(column)} in (${sql.join(scope.organizationIds)})`;
}
