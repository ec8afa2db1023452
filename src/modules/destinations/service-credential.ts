// The credential's operations (rotate, patch, revoke, its audit, re-sealing) and the connection
// test, the one operation that opens it. The credential is decrypted only in memory, here.
import type { Actor } from '../../core/actor.js';
import type { Credential, CredentialValue } from '../../core/credentials.js';
import { AppError } from '../../core/errors.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import type { TestResult } from '../../pipeline/sinks/types.js';
import { setAuditTarget } from '../audit/service.js';
import { reencryptCredentials } from './rekey.js';
import { AUDIT_TARGET_TYPE, CREDENTIAL_REVOKED, destinationOut } from './rules.js';
import type { DestinationServiceDeps } from './service.js';
import type { DestinationAccess } from './service-access.js';
import { testDestination } from './tester.js';

export function credentialOperations(deps: DestinationServiceDeps, access: DestinationAccess) {
  const { store, types, cipher, clock, logger } = deps;
  const { typeOf, checkedCredential, visible, changeable, reread } = access;

  return {
    async rotate(actor: Actor, id: string, credential: Credential) {
      const row = await changeable(scopeOf(actor), id);
      const sealed = cipher.seal(id, checkedCredential(typeOf(row.type), credential));
      const now = clock.now();
      const revoked = row.disabled_reason === CREDENTIAL_REVOKED;
      await store.update(
        id,
        {
          credential: sealed.ciphertext,
          credential_key_id: sealed.keyId,
          credential_updated_at: now,
          ...(revoked ? { enabled: true, disabled_reason: null } : {}),
        },
        now,
      );
      setAuditTarget({ details: { had_credential: row.has_credential, re_enabled: revoked } });
      return reread(id);
    },

    /**
     * The shape of the stored credential (field names; a map field's keys), never a value:
     * what a configuration export names as secrets to give. null when there is none.
     */
    async credentialFields(scope: Scope, id: string): Promise<Record<string, string[] | null> | null> {
      const row = await visible(scope, id);
      const sealed = row.has_credential ? await store.credentialOf(row.id) : undefined;
      if (!sealed?.credential) return null;
      const credential = cipher.open(row.id, { ciphertext: sealed.credential, keyId: sealed.credential_key_id });
      return Object.fromEntries(
        Object.entries(credential).map(([f, v]) => [f, typeof v === 'string' ? null : Object.keys(v)]),
      );
    },

    /** Rotates to the stored credential with the given fields replaced (a map field merged key by key). */
    async patchCredential(actor: Actor, id: string, patch: Record<string, CredentialValue>) {
      const row = await visible(scopeOf(actor), id);
      const sealed = row.has_credential ? await store.credentialOf(row.id) : undefined;
      const stored: Record<string, CredentialValue> = sealed?.credential
        ? { ...cipher.open(row.id, { ciphertext: sealed.credential, keyId: sealed.credential_key_id }) }
        : {};
      for (const [field, value] of Object.entries(patch)) {
        const before = stored[field];
        stored[field] = typeof value === 'string' || typeof before !== 'object' ? value : { ...before, ...value };
      }
      return this.rotate(actor, id, stored);
    },

    async revoke(actor: Actor, id: string) {
      const row = await changeable(scopeOf(actor), id);
      setAuditTarget({ details: { had_credential: row.has_credential } });
      if (!row.has_credential) {
        if (row.disabled_reason === CREDENTIAL_REVOKED) return destinationOut(row);
        throw new AppError('destination.no_credential', {
          detail: 'The destination has no credential to revoke',
          details: { destination_id: id },
        });
      }
      const now = clock.now();
      await store.update(
        id,
        {
          credential: null,
          credential_key_id: null,
          credential_updated_at: now,
          enabled: false,
          disabled_reason: CREDENTIAL_REVOKED,
        },
        now,
      );
      return reread(id);
    },

    /** Opens a real connection with the credential decrypted in memory; delivers nothing. */
    async test(actor: Actor, id: string): Promise<TestResult> {
      const row = await visible(scopeOf(actor), id);
      setAuditTarget({ type: AUDIT_TARGET_TYPE, id, organizationId: row.organization_id });
      const result = await (async (): Promise<TestResult> => {
        const t = types.get(row.type);
        if (!t)
          return {
            ok: false,
            detail: `Destination type ${row.type} is not available in this build`,
            latency_ms: 0,
            error_kind: 'config',
          };
        let credential: Credential | null = null;
        const stored = await store.credentialOf(id);
        if (stored?.credential) {
          try {
            credential = cipher.open(id, { ciphertext: stored.credential, keyId: stored.credential_key_id });
          } catch (err) {
            return { ok: false, detail: (err as Error).message, latency_ms: 0, error_kind: 'config' };
          }
        } else if (t.sinkType.credentialRequired) {
          return {
            ok: false,
            detail: 'The destination has no credential: set one with credential/rotate',
            latency_ms: 0,
            error_kind: 'config',
          };
        }
        return testDestination({
          destinationId: id,
          organizationId: row.organization_id,
          sinkType: t.sinkType,
          config: t.checkConfig(row.config).config,
          credential,
          net: deps.net,
          fileRoot: deps.fileRoot,
          logger: logger.child({ destination_id: id }),
          timeoutMs: deps.testTimeoutMs,
        });
      })();
      setAuditTarget({
        details: {
          ok: result.ok,
          ...(result.error_kind ? { error_kind: result.error_kind } : {}),
          latency_ms: result.latency_ms,
        },
      });
      // Health reads it: a success after failures shows the destination working again (the detail is already redacted).
      await store.recordTest(id, clock.now(), result.ok, result.ok ? null : `test: ${result.detail}`.slice(0, 1000));
      return result;
    },

    async credentialAudit(scope: Scope, id: string, page: OffsetPage) {
      const row = await visible(scope, id);
      return store.credentialAudit(scope, row.id, row.organization_id === null, page);
    },

    /** Re-seals every credential not under the current key (after a WEIR_SECRET_KEY rotation); logs counts only. */
    reencryptCredentials: () => reencryptCredentials({ store, cipher, logger }),
  };
}
