// One SMTP session per message through nodemailer. The host is resolved and checked by the
// outbound net policy (the SSRF guard) first and nodemailer connects to that address, so
// the address checked is the address used (no DNS rebinding); the configured name stays
// the TLS server name, so certificates are verified against it. Plaintext (`none`) is
// allowed only to loopback and private addresses, checked on the resolved address.
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import ipaddr from 'ipaddr.js';
import nodemailer from 'nodemailer';
import type { NetPolicy } from '../../platform/net/policy.js';
import { findNetError } from '../../platform/net/errors.js';

export const SECURITY_MODES = ['starttls', 'tls', 'none'] as const;
export type Security = (typeof SECURITY_MODES)[number];

export interface SmtpSettings {
  host: string;
  port: number;
  security: Security;
  username: string | null;
  password: string | null;
  from: string;
  caPem: string | null;
}

export interface OutgoingMessage {
  to: string;
  subject: string;
  text: string;
  html?: string | null;
  attachments?: Attachment[];
}

/** A text attachment (a scheduled search's CSV). */
export interface Attachment {
  filename: string;
  content_type: string;
  content: string;
}

/** A send that did not succeed. permanent: trying again cannot help (5xx, auth, TLS, policy). */
export class SendError extends Error {
  readonly permanent: boolean;
  readonly responseCode: number | undefined;
  constructor(message: string, permanent: boolean, responseCode?: number) {
    super(message);
    this.name = 'SendError';
    this.permanent = permanent;
    this.responseCode = responseCode;
  }
}

export type SendMail = (settings: SmtpSettings, message: OutgoingMessage) => Promise<{ messageId: string }>;

const PLAINTEXT_RANGES = new Set(['loopback', 'private', 'uniqueLocal']);

/** Whether plaintext SMTP may go to this address: loopback, RFC 1918 or unique-local only. */
export function plaintextAllowed(address: string): boolean {
  try {
    let addr = ipaddr.parse(address);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
      addr = (addr as ipaddr.IPv6).toIPv4Address();
    return PLAINTEXT_RANGES.has(addr.range());
  } catch {
    return false;
  }
}

/** Node's certificate verification failures: the configuration is wrong, a retry cannot help. */
const CERT_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

interface MailerError {
  message?: string;
  code?: string;
  responseCode?: number;
  cause?: { code?: string };
}

/** Whether a nodemailer failure is permanent: a 5xx reply, an authentication or TLS failure. */
export function isPermanent(err: MailerError): boolean {
  if (typeof err.responseCode === 'number' && err.responseCode >= 500 && err.responseCode < 600) return true;
  if (err.code === 'EAUTH' || err.code === 'ETLS' || err.code === 'ENOAUTH') return true;
  if (err.code && CERT_ERRORS.has(err.code)) return true;
  if (err.cause?.code && CERT_ERRORS.has(err.cause.code)) return true;
  return /certificate/i.test(err.message ?? '');
}

/** The error text without any form of the password in it, cut to a bounded length. */
export function safeMessage(message: string, password: string | null): string {
  let out = message.replace(/[\r\n]+/g, ' ').trim();
  if (password) {
    for (const form of [password, Buffer.from(password).toString('base64')])
      if (form) out = out.split(form).join('***');
  }
  return out.length > 500 ? `${out.slice(0, 500)}…` : out;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new SendError(`${what} took longer than ${ms} ms`, false)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

export function createSmtpSender(deps: { net: NetPolicy; timeoutMs: number }): SendMail {
  const { net, timeoutMs } = deps;

  return async function send(settings, message) {
    let address: string;
    try {
      ({ address } = await withTimeout(net.resolve(settings.host), timeoutMs, `resolving ${settings.host}`));
    } catch (err) {
      if (err instanceof SendError) throw err;
      // blocked_address is the policy's answer: permanent until the administrator changes it.
      throw new SendError((err as Error).message ?? String(err), findNetError(err)?.kind === 'blocked_address');
    }
    if (settings.security === 'none' && !plaintextAllowed(address)) {
      throw new SendError(
        `security "none" (plaintext) is allowed only to loopback or private addresses; ${settings.host} is ${address}`,
        true,
      );
    }
    const servername = isIP(settings.host) ? undefined : settings.host;
    let transport: ReturnType<typeof nodemailer.createTransport> | undefined;
    try {
      transport = nodemailer.createTransport({
        host: address,
        port: settings.port,
        secure: settings.security === 'tls',
        requireTLS: settings.security === 'starttls',
        ignoreTLS: settings.security === 'none',
        ...(settings.username ? { auth: { user: settings.username, pass: settings.password ?? '' } } : {}),
        tls: {
          rejectUnauthorized: true,
          minVersion: 'TLSv1.2',
          ...(servername ? { servername } : {}),
          // `ca` replaces Node's roots: the relay's CA is trusted besides them, not instead.
          ...(settings.caPem ? { ca: [...rootCertificates, settings.caPem] } : {}),
        },
        ...(servername ? { servername } : {}),
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
        dnsTimeout: timeoutMs,
        disableFileAccess: true,
        disableUrlAccess: true,
      } as Parameters<typeof nodemailer.createTransport>[0]);
      const info = (await withTimeout(
        transport.sendMail({
          from: settings.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          ...(message.html ? { html: message.html } : {}),
          ...(message.attachments?.length
            ? {
                attachments: message.attachments.map((a) => ({
                  filename: a.filename,
                  content: a.content,
                  contentType: a.content_type,
                })),
              }
            : {}),
          disableFileAccess: true,
          disableUrlAccess: true,
        }),
        timeoutMs * 3,
        'the SMTP session',
      )) as { messageId?: string };
      return { messageId: info.messageId ?? '' };
    } catch (err) {
      if (err instanceof SendError) throw err;
      const e = err as MailerError;
      throw new SendError(safeMessage(e.message ?? String(err), settings.password), isPermanent(e), e.responseCode);
    } finally {
      transport?.close();
    }
  };
}
