// What a route requires. Every route declares one of these when it is registered;
// a route without a declaration fails at start (platform/http/routes.ts).

export const PERMISSIONS = [
  'user.manage',
  'integration.read',
  'integration.write',
  'integration.reset',
  'org.manage',
  'secret.read',
  'destination.read',
  'route.read',
  'mapping.read',
  'mapping.write',
  'mapping.rollback',
  'audit.read',
  'drift.read',
  'drift.ignore',
  'drift.mark_mapped',
  'drift.delete',
  'quarantine.read',
  'quarantine.discard',
  'query.run',
  'query.save',
  'internal.tenant.read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

/** `public`: no credential; `authenticated`: any valid credential; else a permission. */
export type Requirement = 'public' | 'authenticated' | Permission;

export interface AccessDeclaration {
  requires: Requirement;
  /** The caller must have platform (global) scope in addition. */
  globalScope?: boolean;
  /** A 403 does not name the missing permission (internal endpoints). */
  quietDenial?: boolean;
  /**
   * The credential a `public` operation's handler checks itself instead of the access hooks
   * (push ingestion: the ingestion token). Published as the operation's security in the API document.
   */
  ownCredential?: IngestionCredential;
}

/**
 * How an ingestion token is presented, per protocol: `ingestion-token` (push, OTLP: Bearer or
 * X-Ingest-Token), `splunk-hec` (Authorization: Splunk or Bearer), `elasticsearch` (Basic
 * with the token as password, ApiKey or Bearer), `firehose` (X-Amz-Firehose-Access-Key).
 */
export type IngestionCredential = 'ingestion-token' | 'splunk-hec' | 'elasticsearch' | 'firehose';

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

export function isRequirement(value: unknown): value is Requirement {
  return value === 'public' || value === 'authenticated' || (typeof value === 'string' && isPermission(value));
}
