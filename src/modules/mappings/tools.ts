// The mapping author's tools: dry runs of a draft or stored version, raw samples, field
// discovery and the cast catalog. None of them changes anything. Samples hold real
// customer events, so whatever comes from them is masked before it leaves (maskEvent),
// except a dry run's for a caller who may read raw events anyway (RAW_EVENTS_PERMISSION).
import type { Permission } from '../../core/access.js';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { errors, type AppError } from '../../core/errors.js';
import type { OffsetPage } from '../../core/paging.js';
import { inScope, scopeOf, type Scope } from '../../core/scope.js';
import type { OcsfIssue } from '../../ocsf/types.js';
import { maskEvent, maskMapped, maskText } from '../../pipeline/mask.js';
import type { TypeCast } from '../../pipeline/normalize/casts.js';
import type { CaseResult } from '../../pipeline/normalize/cases.js';
import { oneLine, summarizeIssues, type OcsfPolicyMode } from '../../pipeline/normalize/stage.js';
import { MappingCompileError, type CompiledMapping, type MappingProblem } from '../../pipeline/normalize/types.js';
import { discoverFields } from './fields.js';
import { assertValidDocument, type MappingService } from './service.js';
import type { MappingStore, SampleRow } from './store.js';

/** What the tools need from the mapping language and the OCSF validator. */
export interface MappingEngine {
  checkDocument(doc: unknown): MappingProblem[];
  /** Throws MappingCompileError for a document that cannot be compiled. */
  compile(doc: Record<string, unknown>): CompiledMapping;
  validate(event: Record<string, unknown>): readonly OcsfIssue[];
  typeCasts(): readonly TypeCast[];
  /** Runs a valid document's test cases (empty when it has none). */
  runTests(doc: Record<string, unknown>): CaseResult[];
}

export type PolicyMode = OcsfPolicyMode;

export interface DryRunInput {
  document?: Record<string, unknown>;
  definition_id?: string;
  version_id?: string;
  events?: Record<string, unknown>[];
  sample?: { integration_id: number; stream?: string; limit?: number };
  organization_id?: number;
}

export interface DryRunItem {
  index: number;
  sample_id?: string;
  input?: Record<string, unknown>;
  ok: boolean;
  quarantine: boolean;
  error_kind?: string;
  error_detail?: string;
  ocsf?: Record<string, unknown>;
  issues: OcsfIssue[];
}

const COMPILED_CACHE_MAX = 64;

/**
 * Who holds it reads quarantined events raw (docs/permissions.md): a dry run on samples shows
 * them the input and the OCSF output unmasked, since a mapping author must read the real values.
 */
export const RAW_EVENTS_PERMISSION = 'quarantine.read' satisfies Permission;

/**
 * What the live pipeline does with a mapped event's OCSF issues (the rule of
 * normalizeBatch in pipeline/normalize/stage.ts): a missing required attribute always
 * quarantines; other issues quarantine under a strict policy and are flagged under a
 * lenient one. Dry runs need the OCSF output of quarantined events too, which the stage
 * does not keep, so they apply the rule per event here.
 */
export function judge(
  issues: readonly OcsfIssue[],
  mode: PolicyMode,
): { quarantine: boolean; kind?: 'missing_required' | 'invalid_ocsf' } {
  if (issues.length === 0) return { quarantine: false };
  if (issues.some((i) => i.kind === 'missing_required')) return { quarantine: true, kind: 'missing_required' };
  return { quarantine: mode === 'strict', kind: 'invalid_ocsf' };
}

function invalid(message: string, location = 'body'): AppError {
  return errors.validation(message, { errors: [{ location, message }] });
}

export function createMappingTools(deps: {
  store: MappingStore;
  mappings: MappingService;
  engine: MappingEngine;
  clock: Clock;
}) {
  const { store, mappings, engine, clock } = deps;
  // Versions never change once stored: a compiled version stays valid for the process.
  const compiled = new Map<string, CompiledMapping>();

  function compile(doc: Record<string, unknown>): CompiledMapping {
    try {
      return engine.compile(doc);
    } catch (err) {
      if (err instanceof MappingCompileError) assertValidDocument(err.problems);
      throw err;
    }
  }

  function compiledVersion(v: { id: string; document: Record<string, unknown> }): CompiledMapping {
    let c = compiled.get(v.id);
    if (!c) {
      c = compile(v.document);
      if (compiled.size >= COMPILED_CACHE_MAX) compiled.delete(compiled.keys().next().value as string);
      compiled.set(v.id, c);
    }
    return c;
  }

  async function integrationInScope(scope: Scope, id: number) {
    const integration = await store.integration(scope, id);
    if (!integration) throw errors.notFound('Integration');
    return integration;
  }

  /** The organization whose OCSF policy decides: the one named, else the data's, else the caller's only one. */
  async function policyFor(actor: Actor, named: number | undefined, dataOrg: number | null): Promise<PolicyMode> {
    if (named !== undefined && !inScope(scopeOf(actor), named)) throw errors.notFound('Organization');
    const own = !actor.global && actor.organizationIds.length === 1 ? actor.organizationIds[0] : undefined;
    const org = named ?? dataOrg ?? own;
    return org === undefined ? 'strict' : store.policyMode(org);
  }

  function run(
    mapping: CompiledMapping,
    raw: Record<string, unknown>,
    receivedAtMs: number,
    mode: PolicyMode,
  ): Omit<DryRunItem, 'index'> {
    const mapped = mapping.map(raw, { receivedAtMs });
    if (!mapped.ok)
      return { ok: false, quarantine: true, error_kind: mapped.kind, error_detail: oneLine(mapped.detail), issues: [] };
    let issues: OcsfIssue[];
    try {
      issues = [...engine.validate(mapped.event)];
    } catch (err) {
      // As in the stage: a validator bug costs the event, not the whole answer.
      const detail = oneLine(`normalization failed: ${err instanceof Error ? err.message : String(err)}`);
      return {
        ok: false,
        quarantine: true,
        error_kind: 'mapping_error',
        error_detail: detail,
        ocsf: mapped.event,
        issues: [],
      };
    }
    const verdict = judge(issues, mode);
    return {
      ok: issues.length === 0,
      quarantine: verdict.quarantine,
      ...(verdict.kind ? { error_kind: verdict.kind, error_detail: summarizeIssues(issues) } : {}),
      ocsf: mapped.event,
      issues,
    };
  }

  /** A result on a sample with personal data masked, in the sample and in the output together. */
  function masked(raw: Record<string, unknown>, item: Omit<DryRunItem, 'index'>): Omit<DryRunItem, 'index'> {
    const both = maskMapped(raw, item.ocsf);
    return {
      ...item,
      input: both.raw,
      ...(item.error_detail !== undefined ? { error_detail: maskText(item.error_detail) } : {}),
      ...(both.ocsf ? { ocsf: both.ocsf } : {}),
      issues: item.issues.map((i) => ({ ...i, message: maskText(i.message) })),
    };
  }

  return {
    async dryRun(actor: Actor, input: DryRunInput) {
      const scope = scopeOf(actor);
      if ((input.document === undefined) === (input.definition_id === undefined))
        throw invalid('Give exactly one of document and definition_id');
      if (input.version_id !== undefined && input.definition_id === undefined)
        throw invalid('version_id needs definition_id', 'body/version_id');
      if ((input.events === undefined) === (input.sample === undefined))
        throw invalid('Give exactly one of events and sample');

      let mapping: CompiledMapping;
      let version: { id: string; definition_id: string; version: number } | null = null;
      let dataOrg: number | null = null;
      if (input.document !== undefined) {
        assertValidDocument(engine.checkDocument(input.document));
        mapping = compile(input.document);
      } else {
        const def = await mappings.definition(scope, input.definition_id ?? '');
        const v = await mappings.resolveVersion(scope, def.id, input.version_id);
        mapping = compiledVersion(v);
        version = { id: v.id, definition_id: v.definition_id, version: v.version };
        dataOrg = def.organization_id;
      }

      let samples: SampleRow[] | undefined;
      if (input.sample) {
        const integration = await integrationInScope(scope, input.sample.integration_id);
        dataOrg = integration.organization_id;
        samples = (
          await store.samples(integration.id, input.sample.stream, { limit: input.sample.limit ?? 20, offset: 0 })
        ).items;
      }
      const mode = await policyFor(actor, input.organization_id, dataOrg);

      const now = clock.now().getTime();
      // Samples are real customer events: shown as they are only to whoever may read raw events.
      const mask = samples !== undefined && !actor.permissions.has(RAW_EVENTS_PERMISSION);
      const results: DryRunItem[] = samples
        ? samples.map((s, index) => {
            const item = run(mapping, s.raw, s.received_at.getTime(), mode);
            return { index, sample_id: s.id, ...(mask ? masked(s.raw, item) : { input: s.raw, ...item }) };
          })
        : (input.events ?? []).map((raw, index) => ({ index, ...run(mapping, raw, now, mode) }));
      const ok = results.filter((r) => r.ok).length;
      const quarantined = results.filter((r) => r.quarantine).length;
      return {
        version,
        policy: mode,
        masked: mask,
        results,
        summary: { total: results.length, ok, flagged: results.length - ok - quarantined, quarantined },
      };
    },

    async samples(scope: Scope, q: { integration_id: number; stream?: string }, page: OffsetPage) {
      const integration = await integrationInScope(scope, q.integration_id);
      const { items, total } = await store.samples(integration.id, q.stream, page);
      return {
        items: items.map((s) => ({
          id: s.id,
          integration_id: s.integration_id,
          stream: s.stream,
          received_at: s.received_at,
          raw: maskEvent(s.raw),
        })),
        total,
      };
    },

    async discoverFields(scope: Scope, definitionId: string, q: { integration_id?: number; limit: number }) {
      const def = await mappings.definition(scope, definitionId);
      if (q.integration_id !== undefined) {
        const integration = await integrationInScope(scope, q.integration_id);
        if (integration.platform !== def.platform) {
          throw invalid(
            `Integration ${integration.id} is of platform "${integration.platform}", not "${def.platform}"`,
            'querystring/integration_id',
          );
        }
        if (def.organization_id !== null && integration.organization_id !== def.organization_id) {
          throw invalid(
            `Integration ${integration.id} is not of the definition's organization`,
            'querystring/integration_id',
          );
        }
      }
      const samples = await store.samplesOfStream({
        scope,
        organizationId: def.organization_id,
        platform: def.platform,
        stream: def.stream,
        ...(q.integration_id !== undefined ? { integrationId: q.integration_id } : {}),
        limit: q.limit,
      });
      const live = def.live_version_id ? await mappings.resolveVersion(scope, def.id) : undefined;
      const reads = live ? compiledVersion(live).reads : new Set<string>();
      return discoverFields(
        samples.map((s) => s.raw),
        reads,
        maskEvent,
      );
    },

    /**
     * Runs the test cases (docs/mappings.md, Test cases) of a draft, or of a stored version,
     * without publishing: the answer publication would give, per case, so an author sees what
     * passes and why each failure fails. An invalid draft is 422 as in a dry run.
     */
    async testCases(
      actor: Actor,
      input: { document?: Record<string, unknown>; definition_id?: string; version_id?: string },
    ) {
      if ((input.document === undefined) === (input.definition_id === undefined))
        throw invalid('Give exactly one of document and definition_id');
      if (input.version_id !== undefined && input.definition_id === undefined)
        throw invalid('version_id needs definition_id', 'body/version_id');
      let document: Record<string, unknown>;
      let version: { id: string; definition_id: string; version: number } | null = null;
      if (input.document !== undefined) document = input.document;
      else {
        const scope = scopeOf(actor);
        const def = await mappings.definition(scope, input.definition_id ?? '');
        const v = await mappings.resolveVersion(scope, def.id, input.version_id);
        document = v.document;
        version = { id: v.id, definition_id: v.definition_id, version: v.version };
      }
      assertValidDocument(engine.checkDocument(document));
      const results = engine.runTests(document);
      const passed = results.filter((r) => r.ok).length;
      return { version, total: results.length, passed, failed: results.length - passed, results };
    },

    typeCasts: () => engine.typeCasts(),
  };
}

export type MappingTools = ReturnType<typeof createMappingTools>;
