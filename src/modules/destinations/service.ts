// Destination rules. A caller sees its organizations' destinations and the global ones
// (organization_id null: shared sinks any organization's routes may use); other
// organizations' destinations are "not found". Only platform scope changes a global
// destination. The credential is validated against the type, sealed at once
// (platform/crypto/credentials.ts) and never returned, logged or audited: audit details
// say whether one is set, never what it is. Every change moves version and updated_at,
// which is what the dispatchers poll to rebuild their sinks.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import type { Credential } from '../../core/credentials.js';
import { AppError } from '../../core/errors.js';
import { EVENT_STORE_TYPE } from '../../pipeline/sinks/event_store/index.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, targetOrganization, type Scope } from '../../core/scope.js';
import {
  DEFAULT_DELIVERY,
  DeliverySettingsSchema,
  type DeliverySettingsInput,
} from '../../pipeline/delivery/settings.js';
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import type { Logger } from '../../platform/logger.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import { setAuditTarget } from '../audit/service.js';
import type { AuditFilter, AuditRow } from '../audit/store.js';
import type { LedgerDelta } from '../delivery/ledger.js';
import {
  AUDIT_TARGET_TYPE,
  checkDelivery,
  cleanName,
  CREDENTIAL_REVOKED,
  destinationOut,
  invalidCredential,
  outboundWarnings,
} from './rules.js';
import { destinationAccess } from './service-access.js';
import { credentialOperations } from './service-credential.js';
import type { SinkTypeRegistry } from './sink-types.js';
import type { DestinationFilter, DestinationPatch, DestinationRow, DestinationStore } from './store.js';

export interface CreateInput {
  name: string;
  type: string;
  organization_id?: number | null;
  description?: string;
  config: Record<string, unknown>;
  credential?: Credential;
  delivery?: DeliverySettingsInput;
  enabled?: boolean;
}

export interface UpdateInput {
  name?: string;
  description?: string;
  config?: Record<string, unknown>;
  delivery?: DeliverySettingsInput;
  enabled?: boolean;
  credential?: unknown;
}

export interface DestinationServiceDeps {
  store: DestinationStore;
  types: SinkTypeRegistry;
  cipher: CredentialCipher;
  clock: Clock;
  logger: Logger;
  /** The SSRF guard outbound test connections go through. */
  net: NetPolicy;
  fileRoot: string;
  audit: { list(scope: Scope, f: AuditFilter, page: OffsetPage): Promise<{ items: AuditRow[]; total: number }> };
  testTimeoutMs?: number;
}

export function createDestinationService(deps: DestinationServiceDeps) {
  const { store, types, cipher, clock, audit } = deps;
  const access = destinationAccess(deps);
  const { typeOf, checkedConfig, checkedCredential, visible, changeable, reread } = access;

  async function owner(actor: Actor, requested: number | null | undefined): Promise<number | null> {
    const scope = scopeOf(actor);
    if (requested === null || (requested === undefined && scope.global)) {
      if (!scope.global) {
        throw new AppError('destination.global_needs_platform_scope', {
          detail: 'Only platform scope creates global destinations; give organization_id',
        });
      }
      return null;
    }
    // Omitted by a platform caller: a global destination (above); else the one rule of core/scope.ts.
    return targetOrganization(store, scope, requested);
  }

  async function ensureNameFree(organizationId: number | null, name: string, exceptId?: string): Promise<void> {
    if (await store.nameExists(organizationId, name, exceptId)) {
      throw new AppError('destination.name_taken', {
        detail: `A destination named "${name}" already exists here`,
        details: { field: 'name' },
      });
    }
  }

  /** Whether destination `from` may mirror to `to`: same organization, or `to` is global. */
  async function checkShadow(from: DestinationRow, scope: Scope, targetId: string): Promise<void> {
    const invalid = (detail: string) =>
      new AppError('destination.invalid_shadow', { detail, details: { target_destination_id: targetId } });
    if (targetId === from.id) throw invalid('A destination cannot shadow itself');
    const target = await store.get(scope, targetId);
    // A global destination carries every organization's events: it may only mirror to another global one.
    if (!target || (target.organization_id !== null && target.organization_id !== from.organization_id)) {
      throw invalid('The shadow target must be a destination of the same organization, or a global one');
    }
    const seen = new Set([from.id]);
    for (let at: string | null | undefined = targetId; at; at = await store.shadowOf(at)) {
      if (seen.has(at)) throw invalid(`Shadowing to ${targetId} would form a cycle`);
      seen.add(at);
    }
  }

  /** One event store per organization (docs/search.md); none global. */
  async function checkEventStore(organizationId: number | null): Promise<void> {
    if (organizationId === null) {
      throw new AppError('destination.event_store_needs_organization', {
        detail: 'An event store belongs to one organization: give organization_id',
        details: { field: 'organization_id' },
      });
    }
    if (await store.typeExists(organizationId, EVENT_STORE_TYPE)) {
      throw new AppError('destination.event_store_exists', {
        detail: 'The organization already has an event store (every organization gets one when it is created)',
        details: { organization_id: organizationId },
      });
    }
  }

  return {
    types: () =>
      types.list().map(({ sinkType: t }) => ({
        type: t.type,
        title: t.title,
        description: t.description,
        config_schema: t.configSchema as Record<string, unknown>,
        credential_schema: (t.credentialSchema as Record<string, unknown> | null) ?? null,
        credential_required: t.credentialRequired,
        delivery_schema: DeliverySettingsSchema as unknown as Record<string, unknown>,
        delivery_defaults: { ...DEFAULT_DELIVERY },
      })),

    async list(scope: Scope, f: DestinationFilter, page: OffsetPage) {
      const { items, total } = await store.list(scope, f, page);
      return { items: items.map(destinationOut), total };
    },

    async get(scope: Scope, id: string) {
      return destinationOut(await visible(scope, id));
    },

    async create(actor: Actor, input: CreateInput) {
      const t = typeOf(input.type);
      const organizationId = await owner(actor, input.organization_id);
      const config = checkedConfig(t, input.config);
      if (input.credential === undefined && t.sinkType.credentialRequired) {
        throw invalidCredential(
          [{ location: 'body/credential', message: 'is required' }],
          `Type ${t.sinkType.type} needs a credential (body/credential)`,
        );
      }
      const credential = input.credential === undefined ? null : checkedCredential(t, input.credential);
      const delivery = checkDelivery(input.delivery ?? {});
      const name = cleanName(input.name);
      await ensureNameFree(organizationId, name);
      if (t.sinkType.type === EVENT_STORE_TYPE) await checkEventStore(organizationId);
      const id = newId();
      const now = clock.now();
      const sealed = credential ? cipher.seal(id, credential) : null;
      await store.insert(
        {
          id,
          organization_id: organizationId,
          name,
          description: input.description?.trim() ?? '',
          type: t.sinkType.type,
          config,
          delivery,
          enabled: input.enabled ?? true,
          credential: sealed?.ciphertext ?? null,
          credential_key_id: sealed?.keyId ?? null,
          credential_updated_at: sealed ? now : null,
          created_by: actor.kind === 'user' ? actor.id : null,
        },
        now,
      );
      setAuditTarget({
        type: AUDIT_TARGET_TYPE,
        id,
        organizationId,
        details: { name, type: t.sinkType.type, has_credential: sealed !== null },
      });
      return { ...(await reread(id)), warnings: await outboundWarnings(t.sinkType, config, deps.net) };
    },

    async update(actor: Actor, id: string, input: UpdateInput) {
      const row = await changeable(scopeOf(actor), id);
      setAuditTarget({ details: { changed: Object.keys(input).sort() } });
      if (input.credential !== undefined) {
        throw invalidCredential(
          [],
          `The credential is not changed here: POST /api/collectors/destinations/${id}/credential/rotate`,
        );
      }
      const patch: DestinationPatch = {};
      if (input.name !== undefined) {
        patch.name = cleanName(input.name);
        await ensureNameFree(row.organization_id, patch.name, id);
      }
      if (input.description !== undefined) patch.description = input.description.trim();
      if (input.config !== undefined) patch.config = checkedConfig(typeOf(row.type), input.config);
      if (input.delivery !== undefined) patch.delivery = checkDelivery(input.delivery);
      if (input.enabled === true && !row.enabled) {
        if (
          !row.has_credential &&
          (row.disabled_reason === CREDENTIAL_REVOKED || types.get(row.type)?.sinkType.credentialRequired)
        ) {
          throw new AppError('destination.no_credential', {
            detail: `The destination has no credential; set one with POST /api/collectors/destinations/${id}/credential/rotate, which also enables it`,
            details: { destination_id: id },
          });
        }
        patch.enabled = true;
        patch.disabled_reason = null;
      }
      if (input.enabled === false && row.enabled) {
        patch.enabled = false;
        patch.disabled_reason = null;
      }
      await store.update(id, patch, clock.now());
      const warnings = patch.config ? await outboundWarnings(typeOf(row.type).sinkType, patch.config, deps.net) : [];
      return { ...(await reread(id)), warnings };
    },

    async remove(actor: Actor, id: string): Promise<void> {
      const row = await changeable(scopeOf(actor), id);
      setAuditTarget({ details: { name: row.name, type: row.type } });
      const routeIds = await store.routesUsing(id);
      if (routeIds.length) {
        throw new AppError('destination.in_use', {
          detail: `Routes still deliver to this destination (${routeIds.join(', ')}); take it out of them first`,
          details: { route_ids: routeIds },
        });
      }
      const now = clock.now();
      const clearedShadows = await store.clearShadowsTo(id, now);
      // Events still waiting in the outbox will never be sent: they are counted where the
      // ledger's equation expects them (dead-lettered, or a dropped shadow copy).
      const removed = await store.deleteOutbox(id);
      const deltas: LedgerDelta[] = removed.map((r) => ({
        organization_id: r.organization_id,
        integration_id: r.integration_id,
        stream: r.stream,
        outcome: r.kind === 'shadow' ? 'shadow_dropped' : 'dead_lettered',
        destination_id: id,
        reason: 'destination_deleted',
        count: r.event_count,
      }));
      await store.addLedger(deltas, now);
      const { dlqEvents } = await store.deleteWithState(id);
      const count = (shadow: boolean) =>
        removed.filter((r) => (r.kind === 'shadow') === shadow).reduce((n, r) => n + r.event_count, 0);
      setAuditTarget({
        details: {
          name: row.name,
          type: row.type,
          cleared_shadows: clearedShadows,
          outbox_events_dead_lettered: count(false),
          shadow_events_dropped: count(true),
          dlq_events_removed: dlqEvents,
        },
      });
    },

    async shadow(actor: Actor, id: string, targetId: string | null) {
      const scope = scopeOf(actor);
      const row = await changeable(scope, id);
      setAuditTarget({ details: { from: row.shadow_destination_id, to: targetId } });
      if (targetId !== null) await checkShadow(row, scope, targetId);
      if (targetId !== row.shadow_destination_id)
        await store.update(id, { shadow_destination_id: targetId }, clock.now());
      return reread(id);
    },

    /**
     * The audit entries about the destination, newest first. A global destination's
     * entries made with platform scope have no organization: whoever sees it sees them.
     */
    async audit(scope: Scope, id: string, outcome: string | undefined, page: OffsetPage) {
      const row = await visible(scope, id);
      return audit.list(
        scope,
        { targetType: AUDIT_TARGET_TYPE, targetId: row.id, outcome, withPlatformEntries: row.organization_id === null },
        page,
      );
    },

    ...credentialOperations(deps, access),
  };
}

export type DestinationService = ReturnType<typeof createDestinationService>;
