import { describe, expect, it } from 'vitest';
import type { PlatformDefinition } from '../../connectors/platform-definition.js';
import { createPlatformRegistry, CUSTOM_PLATFORM, keepSecrets, maskSecrets } from './platforms.js';

const VENDOR: PlatformDefinition = {
  name: 'vendor',
  display_name: 'Vendor',
  kind: 'pull',
  description: 'test',
  config_schema: {
    type: 'object',
    properties: {
      base_url: { type: 'string', format: 'uri' },
      api_key: { type: 'string', minLength: 8, writeOnly: true },
      oauth: {
        type: 'object',
        properties: { client_id: { type: 'string' }, client_secret: { type: 'string', writeOnly: true } },
      },
    },
    required: ['base_url', 'api_key'],
    additionalProperties: false,
  },
};

describe('platform registry', () => {
  const registry = createPlatformRegistry([CUSTOM_PLATFORM, VENDOR]);

  it('lists custom as a push platform needing no configuration', () => {
    const custom = registry.get('custom');
    expect(custom?.kind).toBe('push');
    expect(custom?.validate({})).toEqual([]);
    expect(custom?.validate({ url: 'x' })[0]?.location).toBe('body/config/url');
  });

  it('finds secret fields at any depth', () => {
    expect(registry.get('vendor')?.secretFields).toEqual(['api_key', 'oauth.client_secret']);
  });

  it('reports every config issue with its location', () => {
    const issues = registry.get('vendor')?.validate({ base_url: 'not a url', api_key: 'short' }) ?? [];
    expect(issues.map((i) => i.location).sort()).toEqual(['body/config/api_key', 'body/config/base_url']);
    expect(registry.get('vendor')?.validate({ api_key: 'longenough' })[0]?.location).toBe('body/config/base_url');
  });

  it('refuses a platform registered twice or badly named', () => {
    expect(() => registry.register(VENDOR)).toThrow(/twice/);
    expect(() => registry.register({ ...VENDOR, name: 'Bad Name' })).toThrow(/form/);
  });
});

describe('secret fields', () => {
  const vendor = { secretFields: ['api_key', 'oauth.client_secret'] };

  it('masks secrets that hold a value and leaves the rest', () => {
    const stored = {
      base_url: 'https://x',
      api_key: 's3cret-value',
      oauth: { client_id: 'id', client_secret: 'другой секрет' },
    };
    const masked = maskSecrets(vendor, stored);
    expect(masked).toEqual({
      base_url: 'https://x',
      api_key: { configured: true },
      oauth: { client_id: 'id', client_secret: { configured: true } },
    });
    expect(JSON.stringify(masked)).not.toContain('s3cret');
    expect(stored.api_key).toBe('s3cret-value');
    expect(maskSecrets(vendor, { base_url: 'https://x' })).toEqual({ base_url: 'https://x' });
  });

  it('keeps a stored secret when the placeholder is sent back, replaces it when a value is sent', () => {
    const stored = { base_url: 'https://x', api_key: 'old-secret' };
    expect(keepSecrets(vendor, { base_url: 'https://y', api_key: { configured: true } }, stored)).toEqual({
      config: { base_url: 'https://y', api_key: 'old-secret' },
      unresolved: [],
    });
    expect(keepSecrets(vendor, { base_url: 'https://y', api_key: 'new-secret' }, stored).config.api_key).toBe(
      'new-secret',
    );
    expect(keepSecrets(vendor, { oauth: { client_secret: { configured: true } } }, stored).unresolved).toEqual([
      'oauth.client_secret',
    ]);
  });
});
