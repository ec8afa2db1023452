// Detection rules (docs/detections.md): organization-owned, versioned like mappings. Every change
// of the definition is a new version made live at once (the pass picks it up within
// WEIR_MAPPING_REFRESH_MS); a rollback makes an earlier version's definition live again as a new
// version. Definitions are checked whole (checkRule), fields against OCSF with the closest name.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, targetOrganization, type Scope } from '../../core/scope.js';
import { checkRule, type RuleDefinition } from '../../pipeline/detect/rules.js';
import { readRuleText } from '../../pipeline/detect/rule-text.js';
import { printCondition } from '../../pipeline/conditions/print.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { compileSigma, SigmaError } from '../../pipeline/detect/sigma/compile.js';
import { setAuditTarget } from '../audit/service.js';
import type { DetectionStore, RuleVersionRow, RuleWithVersion } from './store.js';

export interface RuleBody {
  name: string;
  organization_id?: number;
  enabled?: boolean;
  definition: RuleDefinition;
  comment?: string;
}

export function ruleOut(r: RuleWithVersion) {
  return {
    id: r.id,
    organization_id: r.organization_id,
    name: r.name,
    enabled: r.enabled,
    version: r.version,
    definition: r.definition as RuleDefinition | null,
    condition_text: printCondition((r.definition as RuleDefinition | null)?.condition ?? null),
    live_version_id: r.live_version_id,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function versionOut(v: RuleVersionRow) {
  return {
    id: v.id,
    version: v.version,
    definition: v.definition as unknown as RuleDefinition,
    comment: v.comment,
    created_by: v.created_by,
    created_at: v.created_at,
  };
}

export function invalidRule(problems: { location: string; message: string; closest?: string }[]): AppError {
  const first = problems[0]!;
  return new AppError('detection.invalid_rule', {
    detail: `${first.location}: ${first.message}${first.closest ? ` (closest known field: ${first.closest})` : ''}`,
    details: { errors: problems },
  });
}

export interface SigmaImport {
  yaml: string;
  organization_id?: number;
  name?: string;
  enabled?: boolean;
  group_by?: string[];
  threshold?: { count: number; window_seconds: number };
  suppression_seconds?: number;
}

/** A Sigma rule compiled, with the request's overrides; 422 naming the location and the reason when it cannot be kept faithfully. */
function fromSigma(body: SigmaImport): { name: string; definition: RuleDefinition; sigmaId?: string } {
  let compiled;
  try {
    compiled = compileSigma(body.yaml);
  } catch (e) {
    if (!(e instanceof SigmaError)) throw e;
    throw new AppError('detection.invalid_sigma', {
      detail: `${e.location}: ${e.reason}`,
      details: { errors: [{ location: e.location, message: e.reason }] },
    });
  }
  const definition: RuleDefinition = { ...compiled.definition };
  if (body.group_by !== undefined) definition.group_by = body.group_by;
  if (body.threshold !== undefined) definition.threshold = body.threshold;
  if (body.suppression_seconds !== undefined) definition.suppression_seconds = body.suppression_seconds;
  const sigmaId = compiled.definition.origin?.id;
  return { name: body.name ?? compiled.title, definition, ...(typeof sigmaId === 'string' ? { sigmaId } : {}) };
}

function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed)
    throw errors.validation('body/name must not be blank', {
      errors: [{ location: 'body/name', message: 'must not be blank' }],
    });
  return trimmed;
}

export function createRulesService(deps: {
  store: DetectionStore;
  clock: Clock;
  invalidate(organizationId: number): void;
}) {
  const { store, clock } = deps;
  const nameTaken = (name: string) =>
    new AppError('resource.conflict', {
      detail: `A detection rule named "${name}" already exists in the organization`,
      details: { field: 'name' },
    });

  async function visible(scope: Scope, id: string, lock = false): Promise<RuleWithVersion> {
    const r = await store.getRule(scope, id, lock);
    if (!r) throw errors.notFound('Detection rule');
    return r;
  }

  /** The definition checked whole; a condition given as text (docs/conditions.md) is kept as its tree. */
  function checked(given: unknown): RuleDefinition {
    const text = readRuleText(given);
    if (text.syntax) throw invalidRule([text.syntax]);
    const problems = text.place(checkRule(text.definition));
    if (problems.length) throw invalidRule(problems);
    return text.definition as RuleDefinition;
  }

  async function addVersion(
    actor: Actor,
    ruleId: string,
    definition: RuleDefinition,
    comment: string,
  ): Promise<number> {
    const version = (await store.maxVersion(ruleId)) + 1;
    const id = newId();
    await store.insertVersion(
      {
        id,
        rule_id: ruleId,
        version,
        definition: definition as unknown as Record<string, unknown>,
        comment,
        created_by: actor.kind === 'user' ? actor.id : null,
      },
      clock.now(),
    );
    await store.updateRule(ruleId, { live_version_id: id }, clock.now());
    return version;
  }

  const service = {
    async list(scope: Scope, organizationId: number | undefined, page: OffsetPage) {
      const { items, total } = await store.listRules(scope, organizationId, page);
      return { items: items.map(ruleOut), total };
    },

    async get(scope: Scope, id: string) {
      return ruleOut(await visible(scope, id));
    },

    async create(actor: Actor, body: RuleBody) {
      const organizationId = await targetOrganization(store, scopeOf(actor), body.organization_id);
      const definition = checked(body.definition);
      const name = cleanName(body.name);
      const id = newId();
      try {
        await store.insertRule(
          {
            id,
            organization_id: organizationId,
            name,
            enabled: body.enabled ?? true,
            created_by: actor.kind === 'user' ? actor.id : null,
          },
          clock.now(),
        );
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(name);
        throw err;
      }
      await addVersion(actor, id, definition, body.comment ?? '');
      setAuditTarget({ type: 'detection_rule', id, organizationId, details: { name, version: 1, definition } });
      deps.invalidate(organizationId);
      return ruleOut((await store.getRule(scopeOf(actor), id))!);
    },

    async update(actor: Actor, id: string, body: Partial<Omit<RuleBody, 'organization_id'>>) {
      const r = await visible(scopeOf(actor), id, true);
      const patch: { name?: string; enabled?: boolean } = {};
      if (body.name !== undefined) patch.name = cleanName(body.name);
      if (body.enabled !== undefined) patch.enabled = body.enabled;
      let version: number | undefined;
      try {
        if (Object.keys(patch).length) await store.updateRule(id, patch, clock.now());
        if (body.definition !== undefined)
          version = await addVersion(actor, id, checked(body.definition), body.comment ?? '');
      } catch (err) {
        if (isUniqueViolation(err)) throw nameTaken(patch.name ?? r.name);
        throw err;
      }
      setAuditTarget({
        type: 'detection_rule',
        id,
        organizationId: r.organization_id,
        details: { changed: Object.keys(body).sort(), ...(version ? { version } : {}) },
      });
      deps.invalidate(r.organization_id);
      return ruleOut((await store.getRule(scopeOf(actor), id))!);
    },

    async remove(actor: Actor, id: string): Promise<void> {
      const r = await visible(scopeOf(actor), id, true);
      setAuditTarget({ type: 'detection_rule', id, organizationId: r.organization_id, details: { name: r.name } });
      await store.deleteRule(id);
      deps.invalidate(r.organization_id);
    },

    async versions(scope: Scope, id: string) {
      await visible(scope, id);
      return (await store.versions(id)).map(versionOut);
    },

    /**
     * A Sigma rule compiled into a rule (docs/sigma.md): created like any rule (version 1, live
     * at once), or with `dryRun` only compiled and checked, nothing stored.
     */
    async importSigma(actor: Actor, body: SigmaImport, dryRun: boolean) {
      const { name, definition, sigmaId } = fromSigma(body);
      if (dryRun) {
        await targetOrganization(store, scopeOf(actor), body.organization_id);
        const compiled = checked(definition);
        return { name: cleanName(name), definition: compiled, condition_text: printCondition(compiled.condition) };
      }
      return service.create(actor, {
        name,
        definition,
        ...(body.organization_id !== undefined ? { organization_id: body.organization_id } : {}),
        ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
        comment: sigmaId ? `imported from Sigma rule ${sigmaId}` : 'imported from a Sigma rule',
      });
    },

    /** Makes an earlier version's definition live again, as a new version. */
    async rollback(actor: Actor, id: string, version: number, comment?: string) {
      const r = await visible(scopeOf(actor), id, true);
      const target = await store.ruleVersion(id, version);
      if (!target) throw errors.notFound('Rule version');
      if (r.version === version)
        throw new AppError('detection.already_current', {
          detail: `Version ${version} is the live version`,
          details: { version },
        });
      const made = await addVersion(
        actor,
        id,
        target.definition as unknown as RuleDefinition,
        comment ?? `rollback to version ${version}`,
      );
      setAuditTarget({
        type: 'detection_rule',
        id,
        organizationId: r.organization_id,
        details: { rolled_back_to: version, version: made },
      });
      deps.invalidate(r.organization_id);
      return ruleOut((await store.getRule(scopeOf(actor), id))!);
    },
  };
  return service;
}

export type RulesService = ReturnType<typeof createRulesService>;
