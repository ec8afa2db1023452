// The server side of bench/auth.ts: Weir's app (embedded or on PostgreSQL + Redis) with two
// identical trivial routes, one public and one needing a token, plus a token to call it.
// Prints one JSON line {address, token} when ready.
import { Type } from 'typebox';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { route, type Api } from '../src/platform/http/routes.js';
import { createLogger } from '../src/platform/logger.js';
import { hashPassword } from '../src/modules/auth/passwords.js';

function benchRoutes(app: Api): void {
  for (const [url, requires] of [
    ['/api/bench/public', 'public'],
    ['/api/bench/authed', 'authenticated'],
  ] as const) {
    route(app, {
      method: 'GET',
      url,
      operationId: `bench.${requires}`,
      summary: 'trivial route',
      access: { requires },
      schema: { response: { 200: Type.Object({ ok: Type.Boolean() }) } },
      handler: async () => ({ ok: true }),
    });
  }
}

const config = loadConfig({ ...process.env, WEIR_TOKEN_RATE_LIMIT: '1000000' });
const container = await createContainer(config, {
  role: 'api',
  logger: createLogger({ level: config.logLevel, role: 'api' }),
});
const db = container.database.db;
const user = await db
  .insertInto('users')
  .values({
    username: `bench-${Date.now()}`,
    email: 'bench@example.test',
    password_hash: await hashPassword('bench-password'),
    role: 'admin',
    organization_id: null,
  })
  .returning('id')
  .executeTakeFirstOrThrow();
const { token } = await container.identity.tokens.create(
  { kind: 'user', id: user.id, role: 'admin' },
  { name: 'bench' },
);
const app = await buildApp(container, { extraRoutes: [benchRoutes] });
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ address, token })}\n`);
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => container.close())
    .then(() => process.exit(0));
});
