// A rabbitmq integration's detail page in a real browser, against the RabbitMQ of this
// machine: the consumer's state, counters, last rejection reason and last message time (as
// the worker reports them), and "Test connection" answering with what the broker holds
// instead of asking for an ingestion token. Passes axe; captured for the CI artifacts.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import amqp from 'amqplib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, launch, openPage, shot, type Watched, heading, bootstrapAdmin, createOrganization } from './browser.js';
import { buildConsole, CHROMIUM, startWeir, type RunningWeir } from './server.js';

const hasChromium = existsSync(CHROMIUM);
const AMQP = 'amqp://guest:guest@127.0.0.1:5672';
const queue = `weir-console-${randomUUID().slice(0, 8)}`;

let weir: RunningWeir;
let browser: Browser;
let admin: Watched;

describe.skipIf(!hasChromium)('a rabbitmq integration in the console', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    const dir = await buildConsole();
    // Loopback allowed for the broker of this machine; consumers refreshed fast.
    [weir, browser] = await Promise.all([
      startWeir(dir, { WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', WEIR_BUS_REFRESH_MS: '200' }),
      launch(),
    ]);
    admin = await openPage(browser);
  }, 180_000);
  afterAll(async () => {
    const conn = await amqp.connect(AMQP).catch(() => undefined);
    await conn
      ?.createChannel()
      .then((ch) => ch.deleteQueue(queue))
      .catch(() => undefined);
    await conn?.close().catch(() => undefined);
    await browser?.close();
    await weir?.stop();
  });

  it('shows the consumer with its state and counters, and tests the broker', async () => {
    const { page } = admin;
    await page.goto(`${weir.url}/`);
    await bootstrapAdmin(page);
    await createOrganization(page, 'Acme');

    const created = await page.evaluate(async (q) => {
      const res = await fetch('/api/integrations/', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'app events',
          platform: 'rabbitmq',
          config: { url: 'amqp://127.0.0.1:5672/', username: 'guest', password: 'guest', queue: q, declare: true },
        }),
      });
      return { status: res.status, body: (await res.json()) as { id?: number; detail?: string } };
    }, queue);
    expect(created.status, created.body.detail).toBe(201);
    await page.goto(`${weir.url}/integrations/${created.body.id}`);
    await heading(page, 'app events');
    const panel = page.getByRole('region', { name: 'Bus consumers' });
    const table = panel.getByRole('table', { name: /Bus consumers/ });
    const row = table.getByRole('row').filter({ hasText: queue });
    await row.getByText('consuming').waitFor({ timeout: 30_000 });

    const conn = await amqp.connect(AMQP);
    const ch = await conn.createConfirmChannel();
    ch.sendToQueue(queue, Buffer.from('{"user":"alice","action":"login"}'));
    ch.sendToQueue(queue, Buffer.from('not json'));
    await ch.waitForConfirms();
    await conn.close();
    // Source, State, Received, Accepted, Rejected, Released, Last rejection, Last message, Process.
    await expect
      .poll(async () => (await row.getByRole('cell').allInnerTexts()).slice(2, 6), { timeout: 30_000 })
      .toEqual(['2', '1', '1', '0']);
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells[6]).toMatch(/JSON/i);
    expect(cells[7]!.trim()).not.toBe('—');

    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText(/Connection succeeded/).waitFor();
    const facts = panel.getByRole('definition');
    await panel.getByText(`queue "${queue}" has 0 messages ready and 1 consumer`).waitFor();
    expect(await facts.allInnerTexts()).toEqual(['0', '1']);
    expect(await panel.getByText(/ingestion token/i).count()).toBe(0);

    await shot(page, 'integration-bus-consumers');
    expect(await axe(page), 'axe on integration-bus-consumers').toEqual([]);
    expect(admin.problems).toEqual([]);
  });
});
