// A real SMTP server for the e-mail tests (smtp-server on a loopback port): plaintext with
// STARTTLS, or implicit TLS, with the test certificate of test/fixtures/smtp (signed by the
// test CA there); optional AUTH with one user; every message that arrives parsed by
// mailparser. The name-only certificate (localhost, no address) shows that certificates are
// checked against the configured name although Weir connects to the address it resolved and
// checked. Addresses listed in `reject` get a permanent 550 at RCPT TO.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'smtp');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');

/** The CA that signed the server's certificate (trust it through ca_pem). */
export const TEST_CA_PEM = fixture('ca.pem');
/** The CA of the name-only certificate (DNS:localhost, no IP address in it). */
export const NAME_CA_PEM = fixture('name-ca.pem');
/** A CA that signed nothing the server presents. */
export const OTHER_CA_PEM = fixture('other-ca.pem');

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  /** The authenticated user, if any. */
  user: string | undefined;
  secure: boolean;
  parsed: ParsedMail;
}

export interface TestSmtpServer {
  port: number;
  received: ReceivedMail[];
  /** Resolves once `count` messages have arrived in total. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Authentication attempts, with their outcome (no password kept). */
  authAttempts: { user: string; ok: boolean }[];
  close(): Promise<void>;
}

export interface TestSmtpOptions {
  /** implicit TLS from the first byte (port-465 style); else plaintext offering STARTTLS. */
  implicitTls?: boolean;
  /** Require AUTH PLAIN/LOGIN with this user. */
  auth?: { user: string; password: string };
  /** Recipients refused with 550. */
  reject?: string[];
  /** Present the certificate naming only localhost (signed by NAME_CA_PEM) instead of the default one (localhost and 127.0.0.1). */
  nameOnlyCertificate?: boolean;
  /** Default 127.0.0.1. */
  listenAddress?: string;
}

export async function startSmtpServer(options: TestSmtpOptions = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const authAttempts: { user: string; ok: boolean }[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const reject = new Set((options.reject ?? []).map((a) => a.toLowerCase()));

  const server = new SMTPServer({
    secure: Boolean(options.implicitTls),
    key: fixture(options.nameOnlyCertificate ? 'name-only-key.pem' : 'server-key.pem'),
    cert: fixture(options.nameOnlyCertificate ? 'name-only.pem' : 'server.pem'),
    logger: false,
    // AUTH over plaintext is refused by default; the tests always authenticate after TLS.
    authOptional: !options.auth,
    ...(options.auth ? {} : { disabledCommands: ['AUTH'] }),
    onAuth(auth, _session, callback) {
      const ok =
        Boolean(options.auth) && auth.username === options.auth!.user && auth.password === options.auth!.password;
      authAttempts.push({ user: auth.username ?? '', ok });
      if (!ok) {
        const err = Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 });
        return callback(err);
      }
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      if (reject.has(address.address.toLowerCase())) {
        return callback(Object.assign(new Error(`mailbox ${address.address} unavailable`), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        simpleParser(Buffer.concat(chunks)).then(
          (parsed) => {
            received.push({
              envelope: {
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                to: session.envelope.rcptTo.map((r) => r.address),
              },
              user: typeof session.user === 'string' ? session.user : undefined,
              secure: session.secure,
              parsed,
            });
            for (const w of waiters.filter((x) => received.length >= x.count)) w.resolve();
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  server.on('error', () => {
    /* a client that hangs up mid-session (the wrong-CA test) is not a test failure */
  });

  const port = await new Promise<number>((resolve, fail) => {
    const net = server.listen(0, options.listenAddress ?? '127.0.0.1', () =>
      resolve((net.address() as AddressInfo).port),
    );
    net.once('error', fail);
  });

  return {
    port,
    received,
    authAttempts,
    waitFor(count, timeoutMs = 15_000) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, fail) => {
        const timer = setTimeout(
          () => fail(new Error(`${received.length} of ${count} messages arrived in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
