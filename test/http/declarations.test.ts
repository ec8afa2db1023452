import { describe, expect, it } from 'vitest';
import { createTestApp } from '../support/app.js';

describe('permission declarations', () => {
  it('refuses to start when a route declares no access requirement', async () => {
    await expect(
      createTestApp({
        extraRoutes: [
          (app) => {
            app.get('/api/undeclared', async () => ({}));
          },
        ],
      }),
    ).rejects.toThrow(/declares no access requirement/);
  });

  it('refuses to start when two routes share an operationId', async () => {
    const { route } = await import('../../src/platform/http/routes.js');
    const { Type } = await import('typebox');
    await expect(
      createTestApp({
        extraRoutes: [
          (app) => {
            for (const url of ['/api/a', '/api/b']) {
              route(app, {
                method: 'GET',
                url,
                operationId: 'dup.get',
                summary: 's',
                access: { requires: 'public' },
                schema: { response: { 200: Type.Object({}) } },
                handler: async () => ({}),
              });
            }
          },
        ],
      }),
    ).rejects.toThrow(/operationId dup.get/);
  });
});
