// Planning enrichment: tables, the sources that fill or answer lookups, the policies over them.
import { changed, type Json, type PlanContext } from './plan.js';

/** Tables: key column and match fixed; changed rows are a new version (replace). */
export function planTables(ctx: PlanContext): void {
  const { deps, actor, organizationId, doc, current, cur, step, tableIds } = ctx;
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
}

/** Sources (the organization's own): kind fixed; the credential's value a secret; a feed creates the table it fills, which policies may name. */
export function planSources(ctx: PlanContext): void {
  const { deps, actor, organizationId, doc, current, cur, secrets, step, given, tableIds, sourceIds } = ctx;
  for (const src of doc.enrichment_sources ?? []) {
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
}

/** Policies: a table or source by name; a changed definition is a new version. */
export function planPolicies(ctx: PlanContext): void {
  const { deps, actor, organizationId, doc, current, cur, step, tableIds, sourceIds } = ctx;
  // A feed creates the table it fills, so a policy may name a table the document only implies.
  const feedTables = new Map<string, string>();
  for (const src of doc.enrichment_sources ?? [])
    if (src.kind === 'feed' && src.table) feedTables.set(src.table, src.name);
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
          tableName !== undefined ? { table_id: tableIds.get(tableName)! } : { source_id: sourceIds.get(sourceName!)! },
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
}
