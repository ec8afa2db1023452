import { describe, expect, it } from 'vitest';
import { scimUsers } from './scim.js';

describe('SCIM errors', () => {
  it("carry the provider's detail without the token, even when the provider echoes the Authorization header", async () => {
    const token = `scim-${'t'.repeat(40)}`;
    const echoing = async (_url: string, init?: RequestInit) =>
      new Response(
        JSON.stringify({ detail: `invalid credentials: ${String(new Headers(init?.headers).get('authorization'))}` }),
        { status: 401, headers: { 'content-type': 'application/scim+json' } },
      );
    const err = await (async () => {
      for await (const _ of scimUsers(echoing, 'https://idp.example/scim/v2', token, () => undefined)) void _;
    })().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^SCIM GET \/Users answered HTTP 401: invalid credentials/);
    expect(err?.message).not.toContain('tttttttt');
  });
});
