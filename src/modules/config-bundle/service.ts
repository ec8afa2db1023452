// Export and import of the configuration bundle. Import plans first (create, update,
// unchanged, conflict by name), then applies through each module's own service (their
// validators, their versions) inside the request's one transaction: all or nothing. A dry
// run applies the same way and rolls back to a savepoint, so it reports what the apply
// would refuse (docs/decisions/0033-configuration-bundle.md).
import { Settings } from 'typebox/system';
import { Value } from 'typebox/value';
import type { Actor } from '../../core/actor.js';
import { canonicalJson } from '../../core/canonical.js';
import type { CredentialValue } from '../../core/credentials.js';
import { AppError, isAppError } from '../../core/errors.js';
import { scopeOf, targetOrganization } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import {
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  ConfigBundle,
  MAX_DEPTH,
  type ImportItem,
  type ImportResult,
} from './schema.js';
import { setPath, snapshot, type BundlePorts, type Current } from './snapshot.js';

type Json = Record<string, unknown>;
type Kind = ImportItem['kind'];

export interface ImportInput {
  document: Json;
  dry_run?: boolean;
  secrets?: Record<string, string>;
}

export interface BundleDeps extends BundlePorts {
  organizationExists(id: number): Promise<boolean>;
  /** Runs fn and rolls back what it wrote (a savepoint of the open transaction). */
  rolledBack<T>(fn: () => Promise<T>): Promise<T>;
}

function depth(v: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [node, d] = stack.pop()!;
    if (d > limit) return false;
    if (typeof node === 'object' && node !== null) for (const c of Object.values(node)) stack.push([c, d + 1]);
  }
  return true;
}

/** 422 unless the document is a bundle of a format and version this Weir reads, of a valid shape. */
export function checkDocument(doc: Json): ConfigBundle {
  if (doc.format !== BUNDLE_FORMAT) {
    throw new AppError('config_bundle.unsupported_version', {
      detail: `document/format must be "${BUNDLE_FORMAT}"`,
      details: { errors: [{ location: 'body/document/format', message: `must be "${BUNDLE_FORMAT}"` }] },
    });
  }
  if (
    typeof doc.version !== 'number' ||
    !Number.isInteger(doc.version) ||
    doc.version < 1 ||
    doc.version > BUNDLE_VERSION
  ) {
    const newer = typeof doc.version === 'number' && doc.version > BUNDLE_VERSION;
    throw new AppError('config_bundle.unsupported_version', {
      detail: newer
        ? `document/version ${doc.version} is newer than this Weir reads (${BUNDLE_VERSION}); upgrade Weir or export with the version you run`
        : `document/version must be an integer from 1 to ${BUNDLE_VERSION}`,
      details: {
        supported: [BUNDLE_VERSION],
        errors: [{ location: 'body/document/version', message: `must be ${BUNDLE_VERSION}` }],
      },
    });
  }
  if (!depth(doc, MAX_DEPTH))
    throw invalid([{ location: 'body/document', message: `is nested deeper than ${MAX_DEPTH} levels` }]);
  const saved = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: 20 });
  try {
    if (!Value.Check(ConfigBundle, doc)) {
      throw invalid(
        [...Value.Errors(ConfigBundle, doc)]
          .filter((e) => !e.schemaPath.includes('/anyOf/'))
          .slice(0, 20)
          .map((e) => ({ location: `body/document${e.instancePath}`, message: e.message })),
      );
    }
  } finally {
    Settings.Set({ maxErrors: saved });
  }
  const bundle = doc as unknown as ConfigBundle;
  const problems: { location: string; message: string }[] = [];
  for (const key of [
    'integrations',
    'mappings',
    'destinations',
    'routes',
    'enrichment_tables',
    'enrichment_sources',
    'enrichment_policies',
  ] as const) {
    const seen = new Set<string>();
    (bundle[key] ?? []).forEach((o, i) => {
      const k = key === 'integrations' ? o.name.toLowerCase() : o.name;
      if (seen.has(k))
        problems.push({ location: `body/document/${key}/${i}/name`, message: `"${o.name}" is listed twice` });
      seen.add(k);
    });
  }
  bundle.mappings.forEach((m, i) => {
    if (!m.versions?.length) return;
    const numbers = m.versions.map((v) => v.version);
    if (numbers.some((n, j) => j > 0 && n <= numbers[j - 1]!))
      problems.push({
        location: `body/document/mappings/${i}/versions`,
        message: 'must be in increasing version order',
      });
    const live = m.versions.find((v) => v.version === m.version);
    if (!live)
      problems.push({
        location: `body/document/mappings/${i}/version`,
        message: 'must be the number of one of its versions (the live one)',
      });
    else if (canonicalJson(live.document) !== canonicalJson(m.document))
      problems.push({
        location: `body/document/mappings/${i}/document`,
        message: `must equal version ${live.version}'s document (the live one)`,
      });
  });
  if (problems.length) throw invalid(problems);
  return bundle;
}

function invalid(errors: { location: string; message: string }[]): AppError {
  const first = errors[0] ?? { location: 'body/document', message: 'is not valid' };
  return new AppError('config_bundle.invalid_document', {
    detail: `${first.location} ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`,
    details: { errors },
  });
}

/** Field names whose values differ (versions and informative fields left out). */
function changed(a: Json, b: Json, ignore: string[] = ['version']): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((k) => !ignore.includes(k) && canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null))
    .sort();
}

/** Every secret marker in a value, with its path. */
function markers(v: unknown, path: string[] = [], out: { path: string[]; ref: string }[] = []) {
  if (typeof v !== 'object' || v === null) return out;
  const ref = (v as Json).$secret;
  if (typeof ref === 'string' && Object.keys(v).length === 1) out.push({ path, ref });
  else for (const [k, c] of Object.entries(v)) markers(c, [...path, k], out);
  return out;
}

interface Step {
  item: ImportItem;
  apply?: () => Promise<string | number | undefined>;
}

export function createBundleService(deps: BundleDeps) {
  async function organization(actor: Actor, requested: number | undefined) {
    return targetOrganization({ organizationExists: deps.organizationExists }, scopeOf(actor), requested);
  }

  function plan(
    actor: Actor,
    organizationId: number,
    doc: ConfigBundle,
    current: Current,
    secrets: Record<string, string>,
  ): Step[] {
    const scope = scopeOf(actor);
    const steps: Step[] = [];
    const cur = current.bundle;
    const step = (
      kind: Kind,
      name: string,
      action: ImportItem['action'],
      extra: Partial<ImportItem> = {},
      apply?: Step['apply'],
    ) =>
      steps.push({
        item: { kind, name, action, ...extra },
        ...(action === 'create' || action === 'update' ? { apply } : {}),
      });
    const given = (ref: string) => Object.prototype.hasOwnProperty.call(secrets, ref);
    const missing = (refs: string[]) => refs.filter((r) => !given(r));

    // Destinations: type fixed; a new one needs every credential field.
    const destNames = new Set([
      ...doc.destinations.map((d) => d.name),
      ...current.ids.destination.keys(),
      ...current.ids.globalDestination.keys(),
    ]);
    const destIds = new Map(current.ids.destination);
    for (const d of doc.destinations) {
      const existing = cur.destinations.find((x) => x.name === d.name);
      const refs = markers(d.credential);
      const credential: Record<string, CredentialValue> = {};
      for (const m of refs) if (given(m.ref)) setPath(credential as Json, m.path, secrets[m.ref]);
      const body = {
        name: d.name,
        description: d.description,
        config: d.config,
        delivery: d.delivery,
        enabled: d.enabled,
      };
      if (!existing) {
        const need = missing(refs.map((m) => m.ref));
        if (need.length) {
          step('destination', d.name, 'conflict', { reason: `secret needed: ${need.join(', ')}` });
          continue;
        }
        step('destination', d.name, 'create', {}, async () => {
          const created = await deps.destinations.create(actor, {
            ...body,
            type: d.type,
            organization_id: organizationId,
            ...(refs.length ? { credential } : {}),
          });
          destIds.set(d.name, created.id);
          return created.id;
        });
        continue;
      }
      if (existing.type !== d.type) {
        step('destination', d.name, 'conflict', { reason: `exists with type ${existing.type}, not ${d.type}` });
        continue;
      }
      const id = current.ids.destination.get(d.name)!;
      const changes = changed(body, {
        name: existing.name,
        description: existing.description,
        config: existing.config,
        delivery: existing.delivery,
        enabled: existing.enabled,
      });
      const newSecrets = refs.filter((m) => given(m.ref));
      if (newSecrets.length) changes.push('credential');
      if (!changes.length) {
        step('destination', d.name, 'unchanged', { id });
        continue;
      }
      step('destination', d.name, 'update', { changes, id }, async () => {
        const patch = Object.fromEntries(changes.filter((c) => c !== 'credential').map((c) => [c, (body as Json)[c]]));
        if (Object.keys(patch).length) await deps.destinations.update(actor, id, patch);
        if (newSecrets.length) await deps.destinations.patchCredential(actor, id, credential);
        return id;
      });
    }

    // Integrations: platform fixed; parents by name; parents are applied before children.
    const intNames = new Map([...current.ids.integration.keys()].map((n) => [n.toLowerCase(), n]));
    const intIds = new Map([...current.ids.integration].map(([n, id]) => [n.toLowerCase(), id]));
    for (const i of doc.integrations) intNames.set(i.name.toLowerCase(), i.name);
    const ordered = [...doc.integrations].sort((a, b) => Number(a.parent !== null) - Number(b.parent !== null));
    for (const i of ordered) {
      const existing = cur.integrations.find((x) => x.name.toLowerCase() === i.name.toLowerCase());
      if (i.parent !== null && !intNames.has(i.parent.toLowerCase())) {
        step('integration', i.name, 'conflict', {
          reason: `parent "${i.parent}" is neither in the document nor in the organization`,
        });
        continue;
      }
      const refs = markers(i.config);
      const config = structuredClone(i.config);
      for (const m of refs) setPath(config, m.path, given(m.ref) ? secrets[m.ref] : { configured: true });
      const parentId = () => (i.parent === null ? null : (intIds.get(i.parent.toLowerCase()) ?? null));
      if (!existing) {
        const need = missing(refs.map((m) => m.ref));
        if (need.length) {
          step('integration', i.name, 'conflict', { reason: `secret needed: ${need.join(', ')}` });
          continue;
        }
        step('integration', i.name, 'create', {}, async () => {
          const created = await deps.integrations.create(actor, {
            name: i.name,
            platform: i.platform,
            organization_id: organizationId,
            config,
            is_active: i.is_active,
            parent_id: parentId(),
          });
          intIds.set(i.name.toLowerCase(), created.id);
          return created.id;
        });
        continue;
      }
      if (existing.platform !== i.platform) {
        step('integration', i.name, 'conflict', {
          reason: `exists with platform ${existing.platform}, not ${i.platform}`,
        });
        continue;
      }
      const id = current.ids.integration.get(existing.name)!;
      const changes = changed(
        { is_active: i.is_active, parent: i.parent?.toLowerCase() ?? null, config: i.config },
        { is_active: existing.is_active, parent: existing.parent?.toLowerCase() ?? null, config: existing.config },
      );
      if (refs.some((m) => given(m.ref)) && !changes.includes('config')) changes.push('config');
      if (!changes.length) {
        step('integration', i.name, 'unchanged', { id });
        continue;
      }
      step('integration', i.name, 'update', { changes, id }, async () => {
        await deps.integrations.update(scope, id, {
          ...(changes.includes('config') ? { config } : {}),
          ...(changes.includes('is_active') ? { is_active: i.is_active } : {}),
          ...(changes.includes('parent') ? { parent_id: parentId() } : {}),
        });
        return id;
      });
    }

    // Mappings: one definition per (platform, stream); a changed document is a new version.
    for (const m of doc.mappings) {
      const existing = cur.mappings.find((x) => x.name === m.name);
      const other = cur.mappings.find((x) => x.name !== m.name && x.platform === m.platform && x.stream === m.stream);
      if (other) {
        step('mapping', m.name, 'conflict', {
          reason: `${m.platform} / ${m.stream} is already mapped by "${other.name}"`,
        });
        continue;
      }
      if (existing && (existing.platform !== m.platform || existing.stream !== m.stream)) {
        step('mapping', m.name, 'conflict', { reason: `exists for ${existing.platform} / ${existing.stream}` });
        continue;
      }
      // An existing definition keeps its history: a new version when the live document differs.
      const changes = existing ? changed(m, existing, ['version', 'versions']) : [];
      if (existing && !changes.length) {
        step('mapping', m.name, 'unchanged', { id: current.ids.mapping.get(m.name)! });
        continue;
      }
      if (existing) {
        step('mapping', m.name, 'update', { changes, id: current.ids.mapping.get(m.name)! }, async () => {
          const id = await deps.mappings.ensureOwn(organizationId, {
            platform: m.platform,
            stream: m.stream,
            name: m.name,
            description: m.description,
          });
          if (m.document && changes.includes('document'))
            await deps.mappings.publish(actor, id, { document: m.document, comment: 'configuration import' });
          return id;
        });
        continue;
      }
      // A missing definition gets the exported history: each version in order, then the live one made live again.
      const history = m.versions?.length
        ? m.versions
        : m.document
          ? [{ version: m.version ?? 1, comment: 'configuration import', document: m.document }]
          : [];
      step('mapping', m.name, 'create', {}, async () => {
        const id = await deps.mappings.ensureOwn(organizationId, {
          platform: m.platform,
          stream: m.stream,
          name: m.name,
          description: m.description,
        });
        let liveId: string | undefined;
        let lastId: string | undefined;
        for (const v of history) {
          lastId = (await deps.mappings.publish(actor, id, { document: v.document, comment: v.comment })).id;
          if (v.version === m.version) liveId = lastId;
        }
        if (liveId !== undefined && liveId !== lastId) await deps.mappings.rollback(actor, id, { version_id: liveId });
        return id;
      });
    }

    // Tables: key column and match fixed; changed rows are a new version (replace).
    const tableIds = new Map(current.ids.table);
    for (const t of doc.enrichment_tables) {
      const existing = cur.enrichment_tables.find((x) => x.name === t.name);
      if (!existing) {
        step('enrichment_table', t.name, 'create', {}, async () => {
          const created = await deps.tables.create(actor, {
            organization_id: organizationId,
            name: t.name,
            description: t.description,
            key_column: t.key_column,
            match: t.match as never,
            format: 'json',
            rows: t.rows,
            comment: 'configuration import',
          });
          tableIds.set(t.name, created.id);
          return created.id;
        });
        continue;
      }
      if (existing.key_column !== t.key_column || existing.match !== t.match) {
        step('enrichment_table', t.name, 'conflict', {
          reason: `exists with key_column ${existing.key_column} and match ${existing.match}`,
        });
        continue;
      }
      const id = current.ids.table.get(t.name)!;
      const changes = changed({ rows: t.rows }, { rows: existing.rows });
      if (!changes.length) {
        step('enrichment_table', t.name, 'unchanged', { id });
        continue;
      }
      step('enrichment_table', t.name, 'update', { changes, id }, async () => {
        await deps.tables.addVersion(actor, id, {
          mode: 'replace',
          format: 'json',
          rows: t.rows,
          comment: 'configuration import',
        });
        return id;
      });
    }

    // Sources (the organization's own): kind fixed; the credential's value a secret; a feed
    // creates the table it fills, which policies may name.
    const sourceIds = new Map(current.ids.source);
    const feedTables = new Map<string, string>(); // table name → the feed that fills it (document)
    for (const src of doc.enrichment_sources ?? []) {
      if (src.kind === 'feed' && src.table) feedTables.set(src.table, src.name);
      const existing = (cur.enrichment_sources ?? []).find((x) => x.name === src.name);
      const ref = src.credential?.value.$secret;
      const credential = () =>
        src.credential && ref !== undefined && given(ref)
          ? { header: src.credential.header, value: secrets[ref]! }
          : undefined;
      const body = { description: src.description, config: src.config, enabled: src.enabled, shared: src.shared };
      if (!existing) {
        if (current.ids.source.has(src.name)) {
          step('enrichment_source', src.name, 'conflict', {
            reason: 'the name is taken by a shared source of another organization or the built-in one',
          });
          continue;
        }
        if (ref !== undefined && !given(ref)) {
          step('enrichment_source', src.name, 'conflict', { reason: `secret needed: ${ref}` });
          continue;
        }
        if (src.kind === 'mmdb' && !src.mmdb_base64) {
          step('enrichment_source', src.name, 'conflict', {
            reason:
              'the database is not in the document (larger than the bundle carries): create the source with its upload first, then import',
          });
          continue;
        }
        step('enrichment_source', src.name, 'create', {}, async () => {
          const created = await deps.sources.create(actor, {
            ...body,
            organization_id: organizationId,
            name: src.name,
            kind: src.kind,
            ...(credential() ? { credential: credential()! } : {}),
            ...(src.kind === 'mmdb' ? { mmdb_base64: src.mmdb_base64! } : {}),
          });
          sourceIds.set(src.name, created.id);
          if (src.table && created.table_id) tableIds.set(src.table, created.table_id);
          return created.id;
        });
        continue;
      }
      if (existing.kind !== src.kind) {
        step('enrichment_source', src.name, 'conflict', {
          reason: `exists with kind ${existing.kind}, not ${src.kind}`,
        });
        continue;
      }
      const id = current.ids.ownSource.get(src.name)!;
      const changes = changed(body, {
        description: existing.description,
        config: existing.config,
        enabled: existing.enabled,
        shared: existing.shared,
      });
      const header = (c: typeof src.credential) => c?.header ?? null;
      if (header(src.credential) !== header(existing.credential) || credential()) changes.push('credential');
      // A database left out (too large to carry) keeps the stored one.
      if (src.kind === 'mmdb' && src.mmdb_base64 && src.mmdb_base64 !== existing.mmdb_base64) changes.push('database');
      if (!changes.length) {
        step('enrichment_source', src.name, 'unchanged', { id });
        continue;
      }
      if (changes.includes('credential') && src.credential && !credential()) {
        step('enrichment_source', src.name, 'conflict', {
          changes,
          reason: `secret needed to change the credential's header: ${ref}`,
        });
        continue;
      }
      step('enrichment_source', src.name, 'update', { changes, id }, async () => {
        await deps.sources.update(actor, id, {
          ...Object.fromEntries(changes.filter((c) => c in body).map((c) => [c, (body as Json)[c]])),
          ...(changes.includes('credential') ? { credential: credential() ?? null } : {}),
          ...(changes.includes('database') ? { mmdb_base64: src.mmdb_base64! } : {}),
        });
        return id;
      });
    }

    // Routes: destinations by name (the document's, the organization's, or global ones).
    for (const r of [...doc.routes].sort((a, b) => a.position - b.position)) {
      const unknown = r.destinations.filter((n) => !destNames.has(n));
      if (unknown.length) {
        step('route', r.name, 'conflict', {
          reason: `unknown destination${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
        });
        continue;
      }
      const existing = cur.routes.find((x) => x.name === r.name);
      const destinationIds = () => r.destinations.map((n) => destIds.get(n) ?? current.ids.globalDestination.get(n)!);
      const definition = () => ({
        description: r.description,
        enabled: r.enabled,
        condition: r.condition ?? null,
        transforms: r.transforms,
        destination_ids: destinationIds(),
        final: r.final,
        position: r.position,
        comment: 'configuration import',
      });
      if (!existing) {
        step(
          'route',
          r.name,
          'create',
          {},
          async () =>
            (await deps.routes.create(actor, { name: r.name, organization_id: organizationId, ...definition() })).id,
        );
        continue;
      }
      const id = current.ids.route.get(r.name)!;
      const changes = changed(r, existing);
      if (!changes.length) {
        step('route', r.name, 'unchanged', { id });
        continue;
      }
      step('route', r.name, 'update', { changes, id }, async () => {
        const all = definition() as Json;
        await deps.routes.update(
          actor,
          id,
          Object.fromEntries([
            ...changes.filter((c) => c !== 'destinations').map((c) => [c, all[c]]),
            ...(changes.includes('destinations') ? [['destination_ids', all.destination_ids]] : []),
            ['comment', 'configuration import'],
          ]),
        );
        return id;
      });
    }

    // Policies: a table or source by name; a changed definition is a new version.
    for (const p of doc.enrichment_policies) {
      const tableName = 'table' in p.lookup ? p.lookup.table : undefined;
      const sourceName = 'source' in p.lookup ? p.lookup.source : undefined;
      if (
        tableName !== undefined &&
        !doc.enrichment_tables.some((t) => t.name === tableName) &&
        !feedTables.has(tableName) &&
        !current.ids.table.has(tableName)
      ) {
        step('enrichment_policy', p.name, 'conflict', {
          reason: `table "${tableName}" is neither in the document nor in the organization`,
        });
        continue;
      }
      if (
        sourceName !== undefined &&
        !(doc.enrichment_sources ?? []).some((x) => x.name === sourceName) &&
        !current.ids.source.has(sourceName)
      ) {
        step('enrichment_policy', p.name, 'conflict', {
          reason: `source "${sourceName}" is neither in the document nor in the organization`,
        });
        continue;
      }
      const input = () => {
        const { version: _v, enabled: _e, lookup: _l, ...rest } = p;
        return {
          ...rest,
          lookup:
            tableName !== undefined
              ? { table_id: tableIds.get(tableName)! }
              : { source_id: sourceIds.get(sourceName!)! },
          comment: 'configuration import',
        } as never;
      };
      const existing = cur.enrichment_policies.find((x) => x.name === p.name);
      if (!existing) {
        step('enrichment_policy', p.name, 'create', {}, async () => {
          const created = await deps.policies.create(actor, {
            ...(input() as object),
            organization_id: organizationId,
          } as never);
          if (!p.enabled) await deps.policies.enable(actor, created.id, false);
          return created.id;
        });
        continue;
      }
      const id = current.ids.policy.get(p.name)!;
      const changes = changed(p, existing);
      if (!changes.length) {
        step('enrichment_policy', p.name, 'unchanged', { id });
        continue;
      }
      step('enrichment_policy', p.name, 'update', { changes, id }, async () => {
        if (changes.some((c) => c !== 'enabled')) await deps.policies.addVersion(actor, id, input());
        if (changes.includes('enabled')) await deps.policies.enable(actor, id, p.enabled);
        return id;
      });
    }

    // Collector settings: installation-wide, so only platform scope changes them.
    if (doc.collector_settings) {
      const changes = changed(
        doc.collector_settings,
        pick(cur.collector_settings ?? {}, Object.keys(doc.collector_settings)),
        [],
      );
      const settings = doc.collector_settings;
      if (!changes.length) step('collector_settings', 'collector_settings', 'unchanged');
      else if (!scope.global)
        step('collector_settings', 'collector_settings', 'conflict', {
          changes,
          reason:
            'collector settings are installation-wide: importing them needs platform scope (leave collector_settings out to keep them)',
        });
      else
        step('collector_settings', 'collector_settings', 'update', { changes }, async () => {
          await deps.collectorSettings.updateConfig(actor, pick(settings, changes) as never);
          return undefined;
        });
    }
    return steps;
  }

  function result(steps: Step[], dryRun: boolean, applied: boolean): ImportResult {
    const summary = { create: 0, update: 0, unchanged: 0, conflict: 0 };
    for (const s of steps) summary[s.item.action] += 1;
    return { dry_run: dryRun, applied, summary, items: steps.map((s) => s.item) };
  }

  /** Runs every step in order; an item's refusal (its module's validator) names the item. */
  async function run(steps: Step[], keepIds: boolean): Promise<void> {
    for (const s of steps) {
      if (!s.apply) continue;
      try {
        const id = await s.apply();
        if (keepIds && id !== undefined) s.item.id = id;
      } catch (err) {
        if (!isAppError(err)) throw err;
        throw new AppError(err.code, {
          status: err.status,
          detail: `${s.item.kind} "${s.item.name}": ${err.message}`,
          details: { ...err.details, kind: s.item.kind, name: s.item.name },
        });
      }
    }
  }

  return {
    async export(actor: Actor, requested: number | undefined) {
      const organizationId = await organization(actor, requested);
      const { bundle } = await snapshot(deps, scopeOf(actor), organizationId);
      return bundle;
    },

    async import(actor: Actor, requested: number | undefined, input: ImportInput): Promise<ImportResult> {
      const organizationId = await organization(actor, requested);
      const doc = checkDocument(input.document);
      const dryRun = input.dry_run ?? false;
      const current = await snapshot(deps, scopeOf(actor), organizationId);
      const steps = plan(actor, organizationId, doc, current, input.secrets ?? {});
      const out = () => result(steps, dryRun, !dryRun);
      const conflicts = steps.filter((s) => s.item.action === 'conflict');
      if (conflicts.length && !dryRun) {
        const r = { ...out(), applied: false };
        throw new AppError('config_bundle.conflict', {
          detail: `${conflicts.length} item(s) in conflict, nothing applied: ${conflicts
            .slice(0, 3)
            .map((c) => `${c.item.kind} "${c.item.name}": ${c.item.reason}`)
            .join('; ')}`,
          details: r,
        });
      }
      if (dryRun) {
        // The same writes, undone: a dry run refuses what the apply would refuse.
        if (!conflicts.length) await deps.rolledBack(() => run(steps, false));
        setAuditTarget({
          type: 'config_bundle',
          id: organizationId,
          organizationId,
          details: { dry_run: true, summary: out().summary },
        });
        return out();
      }
      await run(steps, true);
      setAuditTarget({
        type: 'config_bundle',
        id: organizationId,
        organizationId,
        details: {
          dry_run: false,
          summary: out().summary,
          items: steps
            .filter((s) => s.apply)
            .map((s) => ({
              kind: s.item.kind,
              name: s.item.name,
              action: s.item.action,
              ...(s.item.changes ? { changes: s.item.changes } : {}),
            })),
        },
      });
      return out();
    },
  };
}

function pick(o: Record<string, unknown>, keys: string[]): Json {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}

export type BundleService = ReturnType<typeof createBundleService>;
