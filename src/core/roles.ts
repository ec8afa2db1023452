// The role -> permission table, the one source for enforcement, /api/auth/permissions
// and docs/permissions.md. Consistent with the spec's rules: only admin holds
// integration.write, org.manage and secret.read (rule 1); operator is the role for
// integration.reset, quarantine.read and quarantine.discard (rule 2); viewer is the role
// for integration.read, destination.read and route.read (rule 3). Each role includes the
// one below it.
import { PERMISSIONS, type Permission } from './access.js';

export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type RoleName = (typeof ROLES)[number];

const VIEWER: Permission[] = ['integration.read', 'destination.read', 'route.read', 'mapping.read', 'drift.read'];

const OPERATOR: Permission[] = [
  ...VIEWER,
  'integration.reset',
  'quarantine.read',
  'quarantine.discard',
  'drift.ignore',
  'drift.mark_mapped',
  'mapping.write',
  'audit.read',
  'query.run',
  'query.save',
];

// Admin holds every permission, internal.tenant.read included: an internal service gets
// it through an admin service account, never through a person's operator or viewer role.
const ADMIN: Permission[] = [...PERMISSIONS];

export const ROLE_PERMISSIONS: Readonly<Record<RoleName, ReadonlySet<Permission>>> = Object.freeze({
  viewer: new Set(VIEWER),
  operator: new Set(OPERATOR),
  admin: new Set(ADMIN),
});

export function isRole(value: unknown): value is RoleName {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export function permissionsOf(role: string): ReadonlySet<Permission> {
  return isRole(role) ? ROLE_PERMISSIONS[role] : new Set();
}
