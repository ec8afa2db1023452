import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { CompiledMapping } from '../../pipeline/normalize/types.js';
import { createMappingRegistry, type RegistryStore } from './registry.js';
import type { DefinitionEntry } from './store.js';

function fakeStore() {
  const state = {
    definitions: [] as DefinitionEntry[],
    documents: new Map<string, Record<string, unknown>>(),
    policies: [] as { organization_id: number; mode: 'strict' | 'lenient' }[],
    version: 0,
    calls: { fingerprints: 0, definitions: 0, documents: [] as string[][], created: [] as string[] },
  };
  const store: RegistryStore = {
    fingerprints: async () => {
      state.calls.fingerprints++;
      return { mappings: `m${state.version}`, policies: `p${state.policies.map((p) => p.mode).join()}` };
    },
    definitions: async () => {
      state.calls.definitions++;
      return state.definitions.map((d) => ({ ...d }));
    },
    documents: async (ids) => {
      state.calls.documents.push(ids);
      return ids.map((id) => ({ id, document: state.documents.get(id)! }));
    },
    policies: async () => state.policies,
    createDefinition: async (d) => {
      state.calls.created.push(`${d.organization_id}/${d.platform}/${d.stream}/${d.name}`);
    },
  };
  return { state, store };
}

const compiled = (tag: string): CompiledMapping => ({
  reads: new Set([tag]),
  expected: new Set([tag]),
  map: () => ({ ok: true, event: { tag } }),
});

function setup() {
  const { state, store } = fakeStore();
  let now = 0;
  const compiles: string[] = [];
  const registry = createMappingRegistry({
    store,
    compile: (doc) => {
      compiles.push(String(doc.tag));
      if (doc.broken) throw new Error('does not compile');
      return compiled(String(doc.tag));
    },
    logger: pino({ level: 'silent' }),
    refreshMs: 1000,
    nowMs: () => now,
  });
  const advance = (ms: number) => (now += ms);
  const publish = (def: DefinitionEntry, versionId: string, document: Record<string, unknown>) => {
    state.documents.set(versionId, document);
    state.definitions = [...state.definitions.filter((d) => d.id !== def.id), { ...def, live_version_id: versionId }];
    state.version++;
  };
  return { state, registry, advance, publish, compiles };
}

const def = (id: string, organization_id: number | null, stream = 's'): DefinitionEntry => ({
  id,
  organization_id,
  platform: 'p',
  stream,
  live_version_id: null,
});

describe('mapping registry', () => {
  it('loads on first use, then checks at most once per interval and reloads only on a changed fingerprint', async () => {
    const { state, registry, advance, publish } = setup();
    publish(def('d1', 1), 'v1', { tag: 'one' });
    await registry.refreshIfStale();
    expect(registry.resolve(1, 'p', 's').mapping?.versionId).toBe('v1');

    await Promise.all([registry.refreshIfStale(), registry.refreshIfStale()]);
    expect(state.calls.fingerprints).toBe(1);

    advance(1000);
    await Promise.all([registry.refreshIfStale(), registry.refreshIfStale()]);
    expect(state.calls.fingerprints).toBe(2);
    expect(state.calls.definitions).toBe(1); // fingerprint unchanged

    publish(def('d1', 1), 'v2', { tag: 'two' });
    await registry.refreshIfStale(); // not due yet
    expect(registry.resolve(1, 'p', 's').mapping?.versionId).toBe('v1');
    advance(1000);
    await registry.refreshIfStale();
    expect(registry.resolve(1, 'p', 's').mapping).toMatchObject({ definitionId: 'd1', versionId: 'v2' });
  });

  it('compiles each live version once and fetches only documents it lacks', async () => {
    const { state, registry, publish, compiles } = setup();
    publish(def('d1', 1), 'v1', { tag: 'one' });
    await registry.refresh();
    publish(def('d2', 2), 'v2', { tag: 'two' });
    await registry.refresh();
    expect(compiles).toEqual(['one', 'two']);
    expect(state.calls.documents).toEqual([['v1'], ['v2']]);
  });

  it("resolves the organization's own live mapping first, else the built-in one", async () => {
    const { registry, publish, state } = setup();
    publish(def('builtin', null), 'vb', { tag: 'b' });
    publish(def('own', 1), 'vo', { tag: 'o' });
    state.definitions.push(def('empty', 2)); // created for the user, nothing published yet
    await registry.refresh();
    expect(registry.resolve(1, 'p', 's')).toMatchObject({ known: true, mapping: { versionId: 'vo' } });
    expect(registry.resolve(2, 'p', 's')).toMatchObject({ known: true, mapping: { versionId: 'vb' } });
    expect(registry.resolve(3, 'p', 's')).toMatchObject({ known: true, mapping: { versionId: 'vb' } });
    expect(registry.resolve(3, 'p', 'other')).toEqual({ known: false, mapping: undefined });
  });

  it('treats a live version that does not compile as no mapping, compiling it once', async () => {
    const { registry, publish, compiles, state } = setup();
    publish(def('d1', 1), 'bad', { tag: 'bad', broken: true });
    await registry.refresh();
    state.version++;
    await registry.refresh();
    expect(registry.resolve(1, 'p', 's')).toEqual({ known: true, mapping: undefined });
    expect(compiles).toEqual(['bad']);
  });

  it('answers the OCSF policy per organization, strict by default', async () => {
    const { registry, state } = setup();
    state.policies = [{ organization_id: 5, mode: 'lenient' }];
    await registry.refresh();
    expect(registry.policy(5)).toBe('lenient');
    expect(registry.policy(6)).toBe('strict');
  });

  it('creates the definition of an unknown stream once', async () => {
    const { registry, state } = setup();
    await registry.refresh();
    await registry.ensureDefinition(1, 'custom', 'app');
    await registry.ensureDefinition(1, 'custom', 'app');
    expect(state.calls.created).toEqual(['1/custom/app/custom / app']);
    expect(registry.resolve(1, 'custom', 'app')).toEqual({ known: true, mapping: undefined });
  });
});

describe('mapping registry: streams that are already OCSF', () => {
  it("passes a custom integration's ocsf_streams and an OCSF connector stream through; a published mapping wins", async () => {
    const { state, store } = fakeStore();
    let declared: { id: number; ocsf_streams: unknown }[] = [{ id: 7, ocsf_streams: ['ocsf', 42] }];
    const registry = createMappingRegistry({
      store: { ...store, ocsfStreams: async () => declared },
      compile: (doc) => compiled(String(doc.tag)),
      passthrough: compiled('passthrough'),
      logger: pino({ level: 'silent' }),
      refreshMs: 1000,
    });
    await registry.refresh();
    expect(registry.resolve(1, 'custom', 'ocsf', 7).mapping).toMatchObject({ versionId: null, passthrough: true });
    expect(registry.resolve(1, 'custom', 'ocsf', 8).mapping).toBeUndefined();
    expect(registry.resolve(1, 'custom', 'other', 7).mapping).toBeUndefined();
    expect(registry.resolve(1, 'aws_s3', 'security_lake').mapping).toMatchObject({ passthrough: true });
    expect(registry.resolve(1, 'aws_s3', 'objects').mapping).toBeUndefined();

    // The organization's own published mapping for the stream wins over the passthrough.
    state.documents.set('v1', { tag: 'own' });
    state.definitions = [{ id: 'd1', organization_id: 1, platform: 'custom', stream: 'ocsf', live_version_id: 'v1' }];
    state.version++;
    declared = [];
    await registry.refresh();
    expect(registry.resolve(1, 'custom', 'ocsf', 7).mapping).toMatchObject({ versionId: 'v1' });
    expect(registry.resolve(2, 'custom', 'ocsf', 9).mapping).toBeUndefined();
  });
});
