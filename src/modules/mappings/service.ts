// Mapping definitions and versions: who sees and changes what, publication and rollback.
// A built-in definition (organization_id null) is visible to every mapping reader and
// changeable only with platform scope; an organization's own definition exists for its
// scope only (else "not found"). Making a version live bumps the definition's updated_at,
// which the normalization workers poll to reload (docs/decisions/0016-mapping-versions.md).
import { createHash } from 'node:crypto';
import type { Actor } from '../../core/actor.js';
import { canonicalJson } from '../../core/canonical.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import type { CaseResult } from '../../pipeline/normalize/cases.js';
import type { MappingProblem } from '../../pipeline/normalize/types.js';
import { setAuditTarget } from '../audit/service.js';
import type { AuditFilter, AuditRow } from '../audit/store.js';
import { diffDocuments } from './diff.js';
import type { DefinitionFilter, DefinitionRow, MappingStore, VersionRow, VersionSummary } from './store.js';

/** The audit target type of mapping operations (the family name, as the unit of work derives it). */
export const AUDIT_TARGET_TYPE = 'mappings';

export interface PublishInput {
  document: Record<string, unknown>;
  comment?: string;
}

export interface RollbackInput {
  version_id?: string;
  version?: number;
}

export interface MappingServiceDeps {
  store: MappingStore;
  clock: Clock;
  /** Every problem of a document (shape and meaning); empty when it can be published. */
  checkDocument(doc: unknown): MappingProblem[];
  /** Runs a valid document's test cases (docs/mappings.md, Test cases). */
  runTests(doc: Record<string, unknown>): CaseResult[];
  audit: { list(scope: Scope, f: AuditFilter, page: OffsetPage): Promise<{ items: AuditRow[]; total: number }> };
}

export const definitionNotFound = () => errors.notFound('Mapping definition');
export const versionNotFound = () => errors.notFound('Mapping version');

/** SHA-256 of the document as canonical JSON: equal documents, equal checksums. */
export function documentChecksum(doc: unknown): string {
  return createHash('sha256').update(canonicalJson(doc)).digest('hex');
}

/** Throws mapping.invalid_document (422) listing every problem with its location. */
export function assertValidDocument(problems: MappingProblem[]): void {
  const first = problems[0];
  if (!first) return;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
  throw new AppError('mapping.invalid_document', {
    detail: `${first.at || '/'}: ${first.message}${more}`,
    details: { problems },
  });
}

/** Throws mapping.tests_failed (422) naming every failing case and why. */
export function assertCasesPass(results: CaseResult[]): void {
  const failed = results.filter((r) => !r.ok);
  const first = failed[0];
  if (!first) return;
  const others =
    failed.length > 1 ? ` (and ${failed.length - 1} more failing case${failed.length > 2 ? 's' : ''})` : '';
  throw new AppError('mapping.tests_failed', {
    detail: `${failed.length} of ${results.length} test cases fail; "${first.name}" (/tests/${first.index}): ${first.failures[0] ?? 'failed'}${others}`,
    details: {
      passed: results.length - failed.length,
      failed: failed.map((r) => ({ index: r.index, name: r.name, at: `/tests/${r.index}`, failures: r.failures })),
    },
  });
}

export function definitionOut(r: DefinitionRow) {
  return {
    id: r.id,
    organization_id: r.organization_id,
    platform: r.platform,
    stream: r.stream,
    name: r.name,
    description: r.description,
    builtin: r.organization_id === null,
    live_version:
      r.live_version_id !== null && r.live_version !== null && r.live_created_at !== null
        ? { id: r.live_version_id, version: r.live_version, created_at: r.live_created_at }
        : null,
    versions_count: r.versions_count,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function versionOut(v: VersionSummary, liveVersionId: string | null) {
  return {
    id: v.id,
    definition_id: v.definition_id,
    version: v.version,
    is_live: v.id === liveVersionId,
    builtin: v.builtin,
    comment: v.comment,
    checksum: v.checksum,
    created_by: v.created_by,
    created_at: v.created_at,
  };
}

export function createMappingService(deps: MappingServiceDeps) {
  const { store, clock, checkDocument, runTests, audit } = deps;

  async function visible(scope: Scope, id: string): Promise<DefinitionRow> {
    const def = await store.getDefinition(scope, id);
    if (!def) throw definitionNotFound();
    return def;
  }

  async function version(definitionId: string, versionId: string): Promise<VersionRow> {
    const v = await store.getVersion(definitionId, versionId);
    if (!v) throw versionNotFound();
    return v;
  }

  /** The definition, locked for a change the caller may make (404 unseen, 403 built-in without platform scope). */
  async function changeable(scope: Scope, id: string): Promise<DefinitionRow> {
    // Lock first, read after: the row read is the one the change applies to.
    await store.lockDefinition(id);
    const def = await visible(scope, id);
    if (def.organization_id === null && !scope.global) {
      throw new AppError('mapping.builtin_needs_platform_scope', {
        detail:
          "Built-in mappings can be changed only with platform scope; publish a version of your organization's own definition instead",
        details: { definition_id: id },
      });
    }
    setAuditTarget({ type: AUDIT_TARGET_TYPE, id, organizationId: def.organization_id });
    return def;
  }

  return {
    async list(scope: Scope, f: DefinitionFilter, page: OffsetPage) {
      const { items, total } = await store.listDefinitions(scope, f, page);
      return { items: items.map(definitionOut), total };
    },

    async get(scope: Scope, id: string) {
      const def = await visible(scope, id);
      const live = def.live_version_id ? await store.getVersion(def.id, def.live_version_id) : undefined;
      return { ...definitionOut(def), document: live?.document ?? null };
    },

    /** For the mapping tools: the definition in scope (404 otherwise). */
    definition: visible,

    /** For the mapping tools: a version of a visible definition, or its live one. */
    async resolveVersion(scope: Scope, definitionId: string, versionId?: string): Promise<VersionRow> {
      const def = await visible(scope, definitionId);
      if (versionId !== undefined) return version(def.id, versionId);
      if (!def.live_version_id) {
        throw errors.conflict(`Mapping definition ${def.id} has no live version; give version_id or a draft document`, {
          definition_id: def.id,
        });
      }
      return version(def.id, def.live_version_id);
    },

    async versions(scope: Scope, id: string, page: OffsetPage) {
      const def = await visible(scope, id);
      const { items, total } = await store.listVersions(def.id, page);
      return { items: items.map((v) => versionOut(v, def.live_version_id)), total };
    },

    async version(scope: Scope, id: string, versionId: string) {
      const def = await visible(scope, id);
      const v = await version(def.id, versionId);
      return { ...versionOut(v, def.live_version_id), document: v.document };
    },

    async publish(actor: Actor, id: string, input: PublishInput) {
      const def = await changeable(scopeOf(actor), id);
      assertValidDocument(checkDocument(input.document));
      // A version whose own test cases fail is not published: the cases are its contract.
      assertCasesPass(runTests(input.document));
      const now = clock.now();
      const checksum = documentChecksum(input.document);
      const row = await store.insertVersion(
        {
          id: newId(),
          definition_id: def.id,
          document: input.document,
          checksum,
          comment: input.comment?.trim() ?? '',
          builtin: false,
          created_by: actor.kind === 'user' ? actor.id : null,
        },
        now,
      );
      await store.setLive(def.id, row.id, now);
      setAuditTarget({
        details: { version: row.version, version_id: row.id, checksum, previous_version: def.live_version },
      });
      return versionOut(row, row.id);
    },

    /**
     * The organization's own definition of (platform, stream), created when missing, with
     * this name and description (configuration import); its id.
     */
    async ensureOwn(
      organizationId: number,
      values: { platform: string; stream: string; name: string; description: string },
    ): Promise<string> {
      const def = await store.ensureDefinition(
        { id: newId(), organization_id: organizationId, builtin: false, ...values },
        clock.now(),
      );
      if (def.name !== values.name || def.description !== values.description)
        await store.describeDefinition(def.id, values.name, values.description);
      return def.id;
    },

    async rollback(actor: Actor, id: string, input: RollbackInput) {
      const scope = scopeOf(actor);
      const def = await changeable(scope, id);
      if ((input.version_id === undefined) === (input.version === undefined)) {
        throw errors.validation('Give exactly one of version_id and version', {
          errors: [{ location: 'body', message: 'must have exactly one of version_id, version' }],
        });
      }
      const target =
        input.version_id !== undefined
          ? await store.getVersion(def.id, input.version_id)
          : await store.getVersionByNumber(def.id, input.version ?? 0);
      if (!target) throw versionNotFound();
      const details = {
        from_version: def.live_version,
        from_version_id: def.live_version_id,
        to_version: target.version,
        to_version_id: target.id,
      };
      setAuditTarget({ details });
      if (target.id === def.live_version_id) {
        throw new AppError('mapping.already_live', {
          detail: `Version ${target.version} is already live`,
          details: { version_id: target.id, version: target.version },
        });
      }
      await store.setLive(def.id, target.id, clock.now());
      return definitionOut(await visible(scope, def.id));
    },

    async diff(scope: Scope, id: string, fromId: string, toId: string) {
      const def = await visible(scope, id);
      const [a, b] = await Promise.all([store.getVersion(def.id, fromId), store.getVersion(def.id, toId)]);
      if (!a || !b) throw versionNotFound();
      return {
        from: { id: a.id, version: a.version },
        to: { id: b.id, version: b.version },
        changes: diffDocuments(a.document, b.document),
      };
    },

    /**
     * The audit entries about the definition, newest first. A built-in's entries made with
     * platform scope have no organization; they are shown to whoever can see the built-in,
     * while entries of other organizations' callers stay hidden.
     */
    async audit(scope: Scope, id: string, outcome: string | undefined, page: OffsetPage) {
      const def = await visible(scope, id);
      return audit.list(
        scope,
        { targetType: AUDIT_TARGET_TYPE, targetId: def.id, outcome, withPlatformEntries: def.organization_id === null },
        page,
      );
    },
  };
}

export type MappingService = ReturnType<typeof createMappingService>;
