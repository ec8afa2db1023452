// E-mail end to end against a real SMTP server (smtp-server on loopback, messages parsed by
// mailparser): the SMTP settings (password write-only, kept, never shown or audited), the
// test send over STARTTLS with a trusted CA, a wrong CA, implicit TLS, AUTH right and wrong,
// a server that is down; recipients scoped by organization; notify() through the queue with
// its delivery records (sent, failed after retries, failed at once on a 5xx, cancelled).
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  TEST_SECRET_KEY,
  type Principal,
} from '../../../test/support/identity.js';
import { lookup } from 'node:dns/promises';
import {
  NAME_CA_PEM,
  OTHER_CA_PEM,
  startSmtpServer,
  TEST_CA_PEM,
  type TestSmtpServer,
} from '../../../test/support/smtp-server.js';
import { createCredentialCipher } from '../../platform/crypto/credentials.js';
import { decodeSecret, keyRing } from '../../platform/crypto/keys.js';
import { createNetPolicy } from '../../platform/net/ssrf.js';
import type { Consumer } from '../../platform/queue/port.js';
import { startConsumers } from '../../roles/jobs.js';
import { wireEmail } from './index.js';
import { EMAIL_QUEUE } from './jobs.js';
import { NOT_CONFIGURED } from './service.js';
import { createSmtpSender, SendError } from './smtp.js';

const PASSWORD = 'Sm7p-s3cret-do-not-leak';
const ENV = {
  WEIR_TOKEN_RATE_LIMIT: '100000',
  WEIR_EMAIL_ATTEMPTS: '3',
  WEIR_EMAIL_BACKOFF_MS: '50',
  WEIR_EMAIL_TIMEOUT_MS: '3000',
};

let t: TestApp;
let orgA: number;
let orgB: number;
let platform: Principal;
let adminA: Principal;
let consumers: Consumer[] = [];
let starttls: TestSmtpServer;
let implicit: TestSmtpServer;
let authed: TestSmtpServer;
/** Every response body, to look for the password in. */
const bodies: string[] = [];

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
async function call(method: Method, url: string, who: Principal, payload?: unknown) {
  const res = await t.app.inject({
    method,
    url,
    headers: who.headers,
    ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
  });
  bodies.push(res.body);
  return res;
}

const configure = (port: number, extra: Record<string, unknown> = {}) =>
  call('PUT', '/api/emails/config', platform, {
    host: '127.0.0.1',
    port,
    security: 'starttls',
    from_address: 'weir@example.test',
    ca_pem: TEST_CA_PEM,
    ...extra,
  });

async function ownAddress(p: Principal): Promise<string> {
  const row = await t.container.database.db
    .selectFrom('users')
    .select('email')
    .where('id', '=', p.id)
    .executeTakeFirstOrThrow();
  return row.email!;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

interface Delivery {
  id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  address: string;
}

async function waitForDeliveries(ids: string[], timeoutMs = 20_000): Promise<Delivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await t.container.database.db
      .selectFrom('email_deliveries')
      .select(['id', 'status', 'attempts', 'last_error', 'address'])
      .where('id', 'in', ids)
      .execute();
    if (rows.length === ids.length && rows.every((r) => !['queued', 'retrying'].includes(r.status))) return rows;
    if (Date.now() > deadline) throw new Error(`deliveries still pending: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function addRecipient(org: number, address: string): Promise<number> {
  const res = await call('POST', '/api/emails/', platform, {
    address,
    organization_id: org,
    name: `Recipient ${address}`,
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ id: number }>().id;
}

beforeAll(async () => {
  t = await createTestApp({ env: ENV, captureLogs: true });
  orgA = await createOrganization(t, 'Mail Org A');
  orgB = await createOrganization(t, 'Mail Org B');
  platform = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  starttls = await startSmtpServer();
  implicit = await startSmtpServer({ implicitTls: true });
  authed = await startSmtpServer({ auth: { user: 'relay-user', password: PASSWORD }, reject: ['gone@a.example.test'] });
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.queue === EMAIL_QUEUE),
    t.container.logger,
  );
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await Promise.all([starttls, implicit, authed].filter(Boolean).map((s) => s.close()));
  await t?.close();
});

describe('SMTP settings', () => {
  it('reads as unconfigured and a test says why nothing was sent', async () => {
    const res = await call('GET', '/api/emails/config', adminA);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ configured: false, host: null, password_set: false });
    const test = await call('POST', '/api/emails/test', platform, { to: 'someone@example.test' });
    expect(test.statusCode).toBe(200);
    expect(test.json()).toEqual({ sent: false, to: 'someone@example.test', error: NOT_CONFIGURED });
  });

  it('keeps the password write-only: set, shown only as password_set, kept when omitted', async () => {
    const put = await configure(authed.port, { username: 'relay-user', password: PASSWORD });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({
      configured: true,
      host: '127.0.0.1',
      port: authed.port,
      security: 'starttls',
      username: 'relay-user',
      password_set: true,
    });
    expect(put.body).not.toContain(PASSWORD);
    const stored = await t.container.database.db
      .selectFrom('email_settings')
      .select(['password'])
      .executeTakeFirstOrThrow();
    expect(stored.password).not.toContain(PASSWORD);
    // A PUT without the password keeps it: the authenticated send still works.
    const again = await configure(authed.port, { username: 'relay-user' });
    expect(again.json()).toMatchObject({ password_set: true });
    const test = await call('POST', '/api/emails/test', platform, { to: 'kept@example.test' });
    expect(test.json()).toMatchObject({ sent: true });
    const mail = (await authed.waitFor(1)).at(-1)!;
    expect(mail.user).toBe('relay-user');
    expect(mail.envelope.to).toEqual(['kept@example.test']);
  });

  it('refuses what it cannot use, with a 422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ security: 'none', host: '93.184.216.34' }, 'body/security'],
      [{ host: 'not a host!' }, 'body/host'],
      [{ ca_pem: 'not a certificate' }, 'body/ca_pem'],
      [{ ca_pem: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----' }, 'body/ca_pem'],
      [{ password: 'x' }, 'body/password'],
      [{ username: 'someone-new', password: null }, 'body/password'],
    ];
    for (const [extra, field] of cases) {
      const res = await configure(starttls.port, extra);
      expect(res.statusCode, JSON.stringify(extra)).toBe(422);
      expect(res.json<{ detail: string }>().detail).toContain(field);
    }
    // Plaintext to loopback or a private address is allowed.
    expect((await configure(starttls.port, { security: 'none', ca_pem: null })).statusCode).toBe(200);
    expect((await configure(25, { security: 'none', host: '10.20.30.40', ca_pem: null })).statusCode).toBe(200);
  });

  it('is changed only with platform scope', async () => {
    expect(
      (
        await call('PUT', '/api/emails/config', adminA, {
          host: '127.0.0.1',
          port: 25,
          security: 'none',
          from_address: 'a@example.test',
        })
      ).statusCode,
    ).toBe(403);
  });
});

describe('POST /api/emails/test', () => {
  it('delivers over STARTTLS with the CA the settings trust: subject, from, to and body arrive', async () => {
    expect((await configure(starttls.port)).statusCode).toBe(200);
    const res = await call('POST', '/api/emails/test', platform, { to: 'ops@example.test' });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ sent: boolean; message_id: string }>();
    expect(body.sent).toBe(true);
    expect(body.message_id).toMatch(/^<.+>$/);
    const mail = (await starttls.waitFor(1))[0]!;
    expect(mail.secure).toBe(true);
    expect(mail.parsed.subject).toBe('Weir test message');
    expect(mail.parsed.from?.text).toBe('weir@example.test');
    expect(mail.envelope).toEqual({ from: 'weir@example.test', to: ['ops@example.test'] });
    expect(mail.parsed.text).toContain('test message from Weir');
    expect(mail.parsed.messageId).toBe(body.message_id);
  });

  it("fails clearly when the server's certificate is not from the trusted CA", async () => {
    await configure(starttls.port, { ca_pem: OTHER_CA_PEM });
    const before = starttls.received.length;
    const res = await call('POST', '/api/emails/test', platform, { to: 'ops@example.test' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ sent: false, error: expect.stringMatching(/certificate/i) });
    expect(starttls.received.length).toBe(before);
  });

  it('verifies the certificate against the configured name, though it connects to the checked address', async () => {
    // The certificate names localhost only: it verifies for host "localhost" (the TLS server
    // name), not for the address Weir actually connects to.
    const { address } = await lookup('localhost');
    const named = await startSmtpServer({ nameOnlyCertificate: true, listenAddress: address });
    try {
      await configure(named.port, { host: 'localhost', ca_pem: NAME_CA_PEM });
      expect((await call('POST', '/api/emails/test', platform, { to: 'named@example.test' })).json()).toMatchObject({
        sent: true,
      });
      expect((await named.waitFor(1))[0]!.envelope.to).toEqual(['named@example.test']);
      await configure(named.port, { host: address, ca_pem: NAME_CA_PEM });
      const byAddress = await call('POST', '/api/emails/test', platform, { to: 'named@example.test' });
      expect(byAddress.json()).toMatchObject({
        sent: false,
        error: expect.stringMatching(/altnames|certificate|host/i),
      });
      expect(named.received).toHaveLength(1);
    } finally {
      await named.close();
    }
  });

  it('delivers over implicit TLS', async () => {
    await configure(implicit.port, { security: 'tls' });
    const res = await call('POST', '/api/emails/test', platform, { to: 'tls@example.test' });
    expect(res.json()).toMatchObject({ sent: true });
    const mail = (await implicit.waitFor(1))[0]!;
    expect(mail.secure).toBe(true);
    expect(mail.envelope.to).toEqual(['tls@example.test']);
  });

  it('says an authentication failure, without the password', async () => {
    await configure(authed.port, { username: 'relay-user', password: 'wrong-password' });
    const res = await call('POST', '/api/emails/test', platform, { to: 'ops@example.test' });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ sent: boolean; error: string }>();
    expect(body.sent).toBe(false);
    expect(body.error).toMatch(/535|auth/i);
    expect(authed.authAttempts.at(-1)).toEqual({ user: 'relay-user', ok: false });
  });

  it('answers sent:false when the server is down', async () => {
    await configure(await freePort());
    const res = await call('POST', '/api/emails/test', platform, { to: 'ops@example.test' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ sent: false, error: expect.stringMatching(/ECONNREFUSED|connect/i) });
  });

  it('is no relay: an organization admin sends only to its recipients or its own address', async () => {
    await configure(starttls.port);
    await addRecipient(orgA, 'team-a@a.example.test');
    await addRecipient(orgB, 'team-b@b.example.test');
    const stranger = await call('POST', '/api/emails/test', adminA, { to: 'anyone@elsewhere.example' });
    expect(stranger.statusCode).toBe(403);
    expect(stranger.json<{ detail: string }>().detail).toContain('recipient of your organizations');
    expect((await call('POST', '/api/emails/test', adminA, { to: 'team-b@b.example.test' })).statusCode).toBe(403);
    const count = starttls.received.length;
    expect((await call('POST', '/api/emails/test', adminA, { to: 'TEAM-A@a.example.test' })).json()).toMatchObject({
      sent: true,
    });
    // Without a body: the caller's own address.
    const own = await call('POST', '/api/emails/test', adminA);
    expect(own.json()).toMatchObject({ sent: true, to: await ownAddress(adminA) });
    const arrived = await starttls.waitFor(count + 2);
    expect(arrived.slice(count).map((m) => m.envelope.to[0])).toEqual([
      'TEAM-A@a.example.test',
      await ownAddress(adminA),
    ]);
  });
});

describe('recipients', () => {
  it("lists only the caller's organizations, pages, and refuses duplicates", async () => {
    await addRecipient(orgA, 'second-a@a.example.test');
    const dup = await call('POST', '/api/emails/', platform, {
      address: 'Second-A@a.example.test',
      organization_id: orgA,
    });
    expect(dup.statusCode).toBe(409);
    const missing = await call('POST', '/api/emails/', platform, {
      address: 'x@example.test',
      organization_id: 987654,
    });
    expect(missing.statusCode).toBe(404);
    const mine = await call('GET', '/api/emails/', adminA);
    expect(mine.statusCode).toBe(200);
    const items = mine.json<{ organization_id: number; address: string }[]>();
    expect(items.length).toBeGreaterThanOrEqual(2);
    expect(items.every((r) => r.organization_id === orgA)).toBe(true);
    expect(mine.headers['x-total-count']).toBe(String(items.length));
    const page = await call('GET', '/api/emails/?page=1&size=1', platform);
    expect(page.json<unknown[]>()).toHaveLength(1);
    expect(Number(page.headers['x-total-count'])).toBeGreaterThanOrEqual(3);
    const onlyB = await call('GET', `/api/emails/?organization_id=${orgB}`, platform);
    expect(onlyB.json<{ address: string }[]>().map((r) => r.address)).toEqual(['team-b@b.example.test']);
  });

  it('creates and deletes only with platform scope; a recipient gone is 404', async () => {
    expect(
      (await call('POST', '/api/emails/', adminA, { address: 'x@a.example.test', organization_id: orgA })).statusCode,
    ).toBe(403);
    const id = await addRecipient(orgB, 'temp@b.example.test');
    expect((await call('DELETE', `/api/emails/${id}`, adminA)).statusCode).toBe(403);
    expect((await call('DELETE', `/api/emails/${id}`, platform)).statusCode).toBe(204);
    expect((await call('DELETE', `/api/emails/${id}`, platform)).statusCode).toBe(404);
  });
});

describe('notify through the queue', () => {
  it("sends an organization's message only to that organization's recipients, and the list shows it sent", async () => {
    await configure(starttls.port);
    const before = starttls.received.length;
    const result = await t.container.email.notify({
      organizationId: orgA,
      subject: 'Org A report',
      text: 'Only for A',
      html: '<p>Only for A</p>',
    });
    expect(result.deliveries.map((d) => d.status)).toEqual(['queued', 'queued']);
    const done = await waitForDeliveries(result.deliveries.map((d) => d.id));
    expect(done.every((d) => d.status === 'sent' && d.attempts === 1)).toBe(true);
    // Once final, the record keeps subject and address, not the body.
    const kept = await t.container.database.db
      .selectFrom('email_deliveries')
      .select(['subject', 'text_body', 'html_body', 'message_id'])
      .where(
        'id',
        'in',
        done.map((d) => d.id),
      )
      .execute();
    expect(
      kept.every((r) => r.subject === 'Org A report' && r.text_body === '' && r.html_body === null && r.message_id),
    ).toBe(true);
    expect(t.container.organizations.dataDeletion.steps()).toContain('email_deliveries');
    const arrived = (await starttls.waitFor(before + 2)).slice(before);
    const to = arrived.flatMap((m) => m.envelope.to).sort();
    expect(to).toEqual(['second-a@a.example.test', 'team-a@a.example.test']);
    expect(to).not.toContain('team-b@b.example.test');
    expect(arrived[0]!.parsed.subject).toBe('Org A report');
    expect(arrived[0]!.parsed.html).toContain('<p>Only for A</p>');
    // Organization B's message reaches B only.
    const forB = await t.container.email.notify({ organizationId: orgB, subject: 'Org B report', text: 'Only for B' });
    await waitForDeliveries(forB.deliveries.map((d) => d.id));
    const afterB = (await starttls.waitFor(before + 3)).slice(before + 2);
    expect(afterB.map((m) => m.envelope.to)).toEqual([['team-b@b.example.test']]);
    expect(
      starttls.received.filter((m) => m.parsed.subject === 'Org A report').flatMap((m) => m.envelope.to),
    ).not.toContain('team-b@b.example.test');

    const list = (await call('GET', '/api/emails/', adminA)).json<
      { address: string; last_delivery: { status: string; subject: string } | null }[]
    >();
    expect(list.find((r) => r.address === 'team-a@a.example.test')?.last_delivery).toMatchObject({
      status: 'sent',
      subject: 'Org A report',
    });
  });

  it('records a wrong password as failed (permanent: no retry), shows it in the list and the audit trail', async () => {
    const org = await createOrganization(t, 'Mail Org Auth');
    const rid = await addRecipient(org, 'auth@c.example.test');
    await configure(authed.port, { username: 'relay-user', password: 'not-the-password' });
    const result = await t.container.email.notify({ organizationId: org, subject: 'Auth check', text: 'x' });
    const [done] = await waitForDeliveries(result.deliveries.map((d) => d.id));
    expect(done).toMatchObject({ status: 'failed', attempts: 1 });
    expect(done!.last_error).toMatch(/535|auth/i);
    const list = (await call('GET', `/api/emails/?organization_id=${org}`, platform)).json<
      { id: number; last_delivery: { status: string; last_error: string } }[]
    >();
    expect(list).toEqual([
      expect.objectContaining({
        id: rid,
        last_delivery: expect.objectContaining({ status: 'failed', last_error: expect.stringMatching(/535|auth/i) }),
      }),
    ]);
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'emails.send')
      .where('target_id', '=', done!.id)
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ outcome: 'failed', organization_id: org, error_code: 'email.send_failed' });
  });

  it('refuses a 5xx recipient at once, without retries', async () => {
    const org = await createOrganization(t, 'Mail Org Reject');
    await addRecipient(org, 'gone@a.example.test');
    await configure(authed.port, { username: 'relay-user', password: PASSWORD });
    const result = await t.container.email.notify({ organizationId: org, subject: 'Bounce', text: 'x' });
    const [done] = await waitForDeliveries(result.deliveries.map((d) => d.id));
    expect(done).toMatchObject({ status: 'failed', attempts: 1 });
    expect(done!.last_error).toContain('550');
  });

  it('retries a server that is down, then records the failure', async () => {
    const org = await createOrganization(t, 'Mail Org Down');
    await addRecipient(org, 'down@d.example.test');
    await configure(await freePort());
    const result = await t.container.email.notify({ organizationId: org, subject: 'Down', text: 'x' });
    const [done] = await waitForDeliveries(result.deliveries.map((d) => d.id));
    expect(done).toMatchObject({ status: 'failed', attempts: 3 });
    expect(done!.last_error).toMatch(/gave up after 3 attempts/);
    expect(t.logs.some((l) => l.msg === 'e-mail delivery failed' && l.delivery_id === done!.id)).toBe(true);
  });

  it("records failed deliveries at once when SMTP is not configured, and cancels a deleted recipient's pending message", async () => {
    const org = await createOrganization(t, 'Mail Org Cancel');
    const rid = await addRecipient(org, 'cancel@e.example.test');
    await configure(starttls.port);
    // No consumer runs while the recipient is deleted: the message is still pending.
    await Promise.all(consumers.map((c) => c.close()));
    const result = await t.container.email.notify({ organizationId: org, subject: 'Cancel me', text: 'x' });
    const id = result.deliveries[0]!.id;
    expect((await call('DELETE', `/api/emails/${rid}`, platform)).statusCode).toBe(204);
    const row = await t.container.database.db
      .selectFrom('email_deliveries')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'cancelled', recipient_id: null, address: 'cancel@e.example.test' });
    consumers = startConsumers(
      t.container.queue,
      t.container.jobs.filter((j) => j.queue === EMAIL_QUEUE),
      t.container.logger,
    );
    // The job runs and sends nothing: a later message to another organization arrives alone.
    const other = await t.container.email.notify({ organizationId: orgB, subject: 'After cancel', text: 'x' });
    await waitForDeliveries(other.deliveries.map((d) => d.id));
    await new Promise((r) => setTimeout(r, 200));
    expect(starttls.received.some((m) => m.parsed.subject === 'Cancel me')).toBe(false);
    expect(
      (
        await t.container.database.db
          .selectFrom('email_deliveries')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('cancelled');

    const none = await createOrganization(t, 'Mail Org Unconfigured');
    await addRecipient(none, 'x@f.example.test');
    await t.container.database.db.deleteFrom('email_settings').execute();
    const unconfigured = await t.container.email.notify({ organizationId: none, subject: 'Nowhere', text: 'x' });
    expect(unconfigured.deliveries).toEqual([expect.objectContaining({ status: 'failed', error: NOT_CONFIGURED })]);
  });
});

describe('secrets', () => {
  it('re-encrypts the password under a new master key, which only the new key opens', async () => {
    await configure(authed.port, { username: 'relay-user', password: PASSWORD });
    const db = t.container.database.db;
    const before = await db
      .selectFrom('email_settings')
      .select(['password', 'password_key_id'])
      .executeTakeFirstOrThrow();
    const oldKey = keyRing(decodeSecret(TEST_SECRET_KEY)).key('credentials');
    const newKey = keyRing(decodeSecret('7a'.repeat(32))).key('credentials');
    const wire = (current: Buffer, previous: Buffer[]) =>
      wireEmail({
        db,
        clock: t.container.clock,
        logger: t.container.logger,
        queue: t.container.queue,
        audit: t.container.audit,
        config: t.container.config.email,
        cipher: createCredentialCipher(current, previous, 'smtp'),
        net: createNetPolicy({ allowCidrs: ['127.0.0.0/8'] }),
      });
    expect(await wire(newKey, [oldKey]).resealPassword()).toBe(true);
    const after = await db
      .selectFrom('email_settings')
      .select(['password', 'password_key_id'])
      .executeTakeFirstOrThrow();
    expect(after.password_key_id).not.toBe(before.password_key_id);
    expect(after.password).not.toContain(PASSWORD);
    expect(await wire(newKey, []).resealPassword()).toBe(false);
    // The rotated password still authenticates (opened under the new key).
    const rotated = createCredentialCipher(newKey, [], 'smtp').open('email-settings', {
      ciphertext: after.password!,
      keyId: after.password_key_id,
    });
    expect(rotated).toEqual({ password: PASSWORD });
    expect(() =>
      createCredentialCipher(oldKey, [], 'smtp').open('email-settings', {
        ciphertext: after.password!,
        keyId: after.password_key_id,
      }),
    ).toThrow();
    // Restore the key the test app runs with.
    await db.updateTable('email_settings').set(before).execute();
  });

  it('never shows the password in a response, the audit trail or the logs', async () => {
    expect(bodies.length).toBeGreaterThan(10);
    for (const b of bodies) expect(b).not.toContain(PASSWORD);
    const audit = await t.container.database.db.selectFrom('audit_log').selectAll().execute();
    expect(JSON.stringify(audit)).not.toContain(PASSWORD);
    expect(JSON.stringify(audit)).not.toContain(Buffer.from(PASSWORD).toString('base64'));
    const put = audit.filter((a) => a.operation_id === 'emails.put_config' && a.outcome === 'success');
    expect(put.length).toBeGreaterThan(0);
    expect(put.map((a) => (a.details as { password?: string }).password)).toContain('set');
    // Test sends are audited with their outcome, the failed ones with the reason.
    const tests = audit
      .filter((a) => a.operation_id === 'emails.test' && a.status === 200)
      .map((a) => a.details as { to: string; sent: boolean; error?: string });
    expect(tests).toContainEqual({ to: 'kept@example.test', sent: true });
    expect(tests).toContainEqual(expect.objectContaining({ sent: false, error: expect.stringMatching(/535|auth/i) }));
    expect(audit.filter((a) => a.operation_id === 'emails.test' && a.status === 403)).toHaveLength(2);
    expect(JSON.stringify(t.logs)).not.toContain(PASSWORD);
  });
});

describe('outbound policy', () => {
  it('a relay the policy refuses is a permanent failure: the queue does not try it again', async () => {
    const send = createSmtpSender({ net: createNetPolicy({ allowCidrs: [] }), timeoutMs: 2_000 });
    const settings = {
      host: '127.0.0.1',
      port: starttls.port,
      security: 'starttls' as const,
      username: null,
      password: null,
      from: 'weir@example.test',
      caPem: TEST_CA_PEM,
    };
    const err = await send(settings, { to: 'ops@example.test', subject: 's', text: 't' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SendError);
    expect(err).toMatchObject({ permanent: true, message: expect.stringMatching(/loopback address/) });
  });

  it('refuses a loopback relay unless WEIR_OUTBOUND_ALLOW_CIDRS allows it, at PUT and at send', async () => {
    const strict = await createTestApp({ env: { ...ENV, WEIR_OUTBOUND_ALLOW_CIDRS: '' } });
    try {
      const admin = await createPrincipal(strict, { role: 'admin' });
      const put = await strict.app.inject({
        method: 'PUT',
        url: '/api/emails/config',
        headers: admin.headers,
        payload: {
          host: '127.0.0.1',
          port: starttls.port,
          security: 'starttls',
          from_address: 'weir@example.test',
          ca_pem: TEST_CA_PEM,
        },
      });
      expect(put.statusCode).toBe(422);
      expect(put.json<{ detail: string }>().detail).toMatch(/loopback address.*WEIR_OUTBOUND_ALLOW_CIDRS/);
      // Settings written before the policy changed: the send is refused, not attempted.
      await strict.container.database.db
        .insertInto('email_settings')
        .values({
          id: 1,
          host: '127.0.0.1',
          port: starttls.port,
          security: 'starttls',
          username: null,
          password: null,
          password_key_id: null,
          from_address: 'weir@example.test',
          ca_pem: TEST_CA_PEM,
          updated_by: null,
        })
        .execute();
      const before = starttls.received.length;
      const test = await strict.app.inject({
        method: 'POST',
        url: '/api/emails/test',
        headers: admin.headers,
        payload: { to: 'ops@example.test' },
      });
      expect(test.json()).toMatchObject({
        sent: false,
        error: expect.stringMatching(/refused to connect to 127\.0\.0\.1: loopback address/),
      });
      expect(starttls.received.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});
