// A syslog integration's detail page in a real browser: each listener's state, protocol and
// port, counters and last message time (as the receiver reports them), and "Test connection"
// answering per listener instead of asking for an ingestion token. The messages are Cisco ASA
// lines of test/corpus sent over a real UDP socket. Passes axe; captured for the CI artifacts.
import dgram from 'node:dgram';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, launch, openPage, shot, type Watched, heading, bootstrapAdmin, createOrganization } from './browser.js';
import { buildConsole, CHROMIUM, startWeir, type RunningWeir } from './server.js';

const hasChromium = existsSync(CHROMIUM);
const LINES = readFileSync(new URL('../corpus/cisco_asa/syslog/elastic-asa-program-tag.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .slice(0, 3)
  .map((l) => `<166>${l}`);

let weir: RunningWeir;
let browser: Browser;
let admin: Watched;

/** The first administrator and one organization, Acme, made through the console. */
async function ready(w: Watched): Promise<void> {
  const { page } = w;
  await page.goto(`${weir.url}/`);
  await bootstrapAdmin(page);
  await createOrganization(page, 'Acme');
}

/** A UDP port of the default WEIR_SYSLOG_PORTS range (5140-5199) free on this host. */
async function freeSyslogPort(): Promise<number> {
  for (let port = 5140; port <= 5199; port++) {
    const free = await new Promise<boolean>((resolve) => {
      const s = dgram.createSocket('udp4');
      s.once('error', () => resolve(false));
      s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    const tcpFree = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free && tcpFree) return port;
  }
  throw new Error('no free port in 5140-5199');
}

describe.skipIf(!hasChromium)('a syslog integration in the console', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    const dir = await buildConsole();
    [weir, browser] = await Promise.all([startWeir(dir), launch()]);
    admin = await openPage(browser);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await weir?.stop();
  });

  it('shows each listener with its state and counters, and tests the listeners', async () => {
    const { page } = admin;
    await ready(admin);
    const port = await freeSyslogPort();
    // The platform administrator of a single organization needs no organization_id.
    const created = await page.evaluate(async (p) => {
      const res = await fetch('/api/integrations/', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'edge firewalls',
          platform: 'syslog',
          config: {
            listeners: [
              { protocol: 'udp', port: p },
              { protocol: 'tcp', port: p },
            ],
          },
        }),
      });
      return { status: res.status, body: (await res.json()) as { id?: number; detail?: string } };
    }, port);
    expect(created.status, created.body.detail).toBe(201);
    await page.goto(`${weir.url}/integrations/${created.body.id}`);
    await heading(page, 'edge firewalls');
    const panel = page.getByRole('region', { name: 'Syslog listeners' });
    const table = panel.getByRole('table', { name: /Syslog listeners/ });
    const udpRow = table.getByRole('row').filter({ hasText: `udp/${port}` });
    await udpRow.getByText('listening').waitFor({ timeout: 30_000 });
    await table
      .getByRole('row')
      .filter({ hasText: `tcp/${port}` })
      .getByText('listening')
      .waitFor();

    const udp = dgram.createSocket('udp4');
    for (const line of LINES)
      await new Promise<void>((ok, ko) => udp.send(line, port, '127.0.0.1', (e) => (e ? ko(e) : ok())));
    udp.close();
    // Received and accepted show the three messages once the receiver reports them (every 5 s).
    await expect
      .poll(async () => (await udpRow.getByRole('cell').allInnerTexts()).slice(2, 4), { timeout: 30_000 })
      .toEqual(['3', '3']);
    expect((await udpRow.getByRole('cell').nth(7).innerText()).trim()).not.toBe('—');

    await page.getByRole('button', { name: 'Test connection' }).click();
    const results = panel.getByRole('list', { name: 'Connection test per listener' });
    await results.waitFor();
    await expect.poll(() => results.getByRole('listitem').allInnerTexts()).toHaveLength(2);
    const texts = await results.getByRole('listitem').allInnerTexts();
    expect(texts.find((t) => t.includes(`tcp/${port}`))).toMatch(/accepts connections/);
    expect(texts.find((t) => t.includes(`udp/${port}`))).toMatch(/received 3, accepted 3/);
    expect(await panel.getByText(/ingestion token/i).count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.getByText(/Connection succeeded/).waitFor();

    await shot(page, 'integration-syslog-listener');
    expect(await axe(page), 'axe on integration-syslog-listener').toEqual([]);
    expect(admin.problems).toEqual([]);
  });
});
