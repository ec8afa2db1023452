// E-mail administration: the instance's SMTP settings (the password sealed, write-only,
// kept when a PUT omits it), recipients per organization, and the synchronous test send
// (which is not a relay: without platform scope it goes only to a recipient of the caller's
// organizations or to the caller's own address). docs/email.md.
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { credentialString } from '../../core/credentials.js';
import { AppError, errors } from '../../core/errors.js';
import { pageToOffset, type SizedPage } from '../../core/paging.js';
import { targetOrganization, type Scope } from '../../core/scope.js';
import { CredentialDecryptError, type CredentialCipher } from '../../platform/crypto/credentials.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import { setAuditTarget } from '../audit/service.js';
import { plaintextAllowed, SendError, type SendMail, type Security, type SmtpSettings } from './smtp.js';
import type { EmailStore, SettingsRow } from './store.js';

/** The row id sealed into the password's associated data. */
const SETTINGS_ROW = 'email-settings';
const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
export const NOT_CONFIGURED = 'SMTP is not configured (PUT /api/emails/config)';

export interface PutConfig {
  host: string;
  port: number;
  security: Security;
  username?: string | null;
  password?: string | null;
  from_address: string;
  ca_pem?: string | null;
}

export interface EmailServiceDeps {
  store: EmailStore;
  cipher: CredentialCipher;
  net: NetPolicy;
  clock: Clock;
  send: SendMail;
  timeoutMs: number;
}

const invalid = (field: string, message: string) =>
  errors.validation(`body/${field} ${message}`, { errors: [{ location: `body/${field}`, message }] });

/** The certificates of a PEM text; 422 for anything else (a private key above all). */
function checkCaPem(pem: string): string {
  const text = pem.trim();
  if (/PRIVATE KEY/.test(text))
    throw invalid('ca_pem', 'holds a private key; give only the certificate of the authority');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0)
    throw invalid('ca_pem', 'must hold at least one PEM certificate (-----BEGIN CERTIFICATE-----)');
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      throw invalid('ca_pem', 'holds a certificate that does not parse');
    }
  }
  return blocks.join('\n') + '\n';
}

export function createEmailService(deps: EmailServiceDeps) {
  const { store, cipher, net, clock } = deps;

  function passwordOf(row: SettingsRow): string | null {
    if (!row.password) return null;
    return (
      credentialString(
        cipher.open(SETTINGS_ROW, { ciphertext: row.password, keyId: row.password_key_id }),
        'password',
      ) ?? null
    );
  }

  function view(row: SettingsRow | undefined) {
    return {
      configured: Boolean(row),
      host: row?.host ?? null,
      port: row?.port ?? null,
      security: (row?.security as Security | undefined) ?? null,
      username: row?.username ?? null,
      password_set: Boolean(row?.password),
      from_address: row?.from_address ?? null,
      ca_pem: row?.ca_pem ?? null,
      updated_at: row?.updated_at ?? null,
    };
  }

  /** The settings a send uses (the password opened), or undefined when unconfigured. */
  async function smtpSettings(): Promise<SmtpSettings | undefined> {
    const row = await store.settings();
    if (!row) return undefined;
    return {
      host: row.host,
      port: row.port,
      security: row.security as Security,
      username: row.username,
      password: passwordOf(row),
      from: row.from_address,
      caPem: row.ca_pem,
    };
  }

  async function checkHost(host: string, security: Security): Promise<void> {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    if (!isIP(bare) && !HOSTNAME.test(bare)) throw invalid('host', 'must be a host name or an IP address');
    const refused = await net.refusal(bare, deps.timeoutMs);
    if (refused) {
      throw invalid(
        'host',
        `resolves to ${refused.address} (${refused.reason}), which outbound connections may not reach; allow its range with ${refused.setting}`,
      );
    }
    if (security !== 'none') return;
    // Plaintext only where it cannot cross the internet: judged on the address now, and again at every send.
    let address: string;
    try {
      ({ address } = await net.resolve(bare));
    } catch {
      throw invalid(
        'host',
        'does not resolve; security "none" needs a host whose address can be checked to be loopback or private',
      );
    }
    if (!plaintextAllowed(address)) {
      throw invalid(
        'security',
        `"none" (plaintext) is allowed only to loopback or private addresses; ${bare} is ${address}. Use starttls or tls`,
      );
    }
  }

  return {
    smtpSettings,

    /** After a master-key rotation: the password moves under the current key (at start). */
    async resealPassword(): Promise<boolean> {
      const row = await store.settings();
      if (!row?.password || !cipher.isStale(row.password_key_id)) return false;
      const password = passwordOf(row);
      if (!password) return false;
      const s = cipher.seal(SETTINGS_ROW, { password });
      await store.saveSettings({ ...row, password: s.ciphertext, password_key_id: s.keyId });
      return true;
    },

    async getConfig() {
      return view(await store.settings());
    },

    async putConfig(actor: Actor, body: PutConfig) {
      const host = body.host.trim();
      await checkHost(host, body.security);
      const ca = body.ca_pem ? checkCaPem(body.ca_pem) : null;
      const current = await store.settings();
      const username = body.username?.trim() || null;
      let sealed: { password: string | null; password_key_id: string | null };
      let passwordChange: 'set' | 'kept' | 'removed' | 'none';
      if (!username) {
        if (body.password) throw invalid('password', 'needs a username');
        sealed = { password: null, password_key_id: null };
        passwordChange = current?.password ? 'removed' : 'none';
      } else if (body.password) {
        const s = cipher.seal(SETTINGS_ROW, { password: body.password });
        sealed = { password: s.ciphertext, password_key_id: s.keyId };
        passwordChange = 'set';
      } else if (body.password === undefined && current?.password) {
        sealed = { password: current.password, password_key_id: current.password_key_id };
        passwordChange = 'kept';
      } else {
        throw invalid('password', 'is required with a username (none is stored yet)');
      }
      const row = await store.saveSettings({
        host,
        port: body.port,
        security: body.security,
        username,
        ...sealed,
        from_address: body.from_address,
        ca_pem: ca,
        updated_by: actor.kind === 'user' ? actor.id : null,
        updated_at: clock.now(),
      });
      setAuditTarget({
        type: 'email_config',
        id: 'smtp',
        organizationId: null,
        details: {
          host,
          port: body.port,
          security: body.security,
          username,
          password: passwordChange,
          from_address: body.from_address,
          ca_pem: ca !== null,
        },
      });
      return view(row);
    },

    async listRecipients(scope: Scope, page: SizedPage, organizationId?: number) {
      return store.listRecipients(scope, pageToOffset(page), organizationId);
    },

    async createRecipient(scope: Scope, body: { address: string; name?: string | null; organization_id?: number }) {
      const organizationId = await targetOrganization(store, scope, body.organization_id);
      const address = body.address.trim();
      try {
        const row = await store.insertRecipient({
          organization_id: organizationId,
          address,
          name: body.name?.trim() || null,
          now: clock.now(),
        });
        setAuditTarget({ type: 'email_recipient', id: row.id, organizationId, details: { address } });
        return row;
      } catch (err) {
        if (isUniqueViolation(err))
          throw errors.conflict(`${address} is already a recipient of this organization`, { field: 'address' });
        throw err;
      }
    },

    async deleteRecipient(scope: Scope, id: number) {
      const row = await store.getRecipient(scope, id);
      if (!row) throw errors.notFound('E-mail recipient');
      // Decision 0032: pending messages to a deleted recipient are cancelled, not sent.
      const cancelled = await store.cancelPending(
        id,
        'the recipient was deleted before the message was sent',
        clock.now(),
      );
      await store.deleteRecipient(id);
      setAuditTarget({
        type: 'email_recipient',
        id,
        organizationId: row.organization_id,
        details: { address: row.address, cancelled_deliveries: cancelled },
      });
    },

    /** Sends one message now and says whether it went; never a 5xx for the relay's faults. */
    async test(actor: Actor, requested: string | undefined) {
      const own = actor.kind === 'user' ? await store.userEmail(actor.id) : null;
      const to = requested?.trim() || own;
      if (!to) throw invalid('to', 'is required: a service account has no address of its own');
      const allowed =
        actor.global ||
        (own !== null && own.toLowerCase() === to.toLowerCase()) ||
        (await store.isRecipientOf(actor.organizationIds, to));
      if (!allowed) {
        throw new AppError('auth.forbidden', {
          detail:
            'Without platform scope a test message goes only to a recipient of your organizations or to your own address',
          details: { field: 'to' },
        });
      }
      setAuditTarget({ type: 'email_config', id: 'smtp', details: { to } });
      let settings: SmtpSettings | undefined;
      try {
        settings = await smtpSettings();
      } catch (err) {
        const error =
          err instanceof CredentialDecryptError
            ? `the stored SMTP password cannot be opened: ${err.message}; PUT it again`
            : 'the SMTP settings cannot be read';
        return { sent: false, to, error };
      }
      if (!settings) {
        setAuditTarget({ details: { to, sent: false, error: NOT_CONFIGURED } });
        return { sent: false, to, error: NOT_CONFIGURED };
      }
      try {
        const { messageId } = await deps.send(settings, {
          to,
          subject: 'Weir test message',
          text: `This is a test message from Weir, sent at ${clock.now().toISOString()} through ${settings.host}:${settings.port} (${settings.security}).`,
        });
        setAuditTarget({ details: { to, sent: true } });
        return { sent: true, to, message_id: messageId };
      } catch (err) {
        const error = err instanceof SendError ? err.message : 'the message could not be sent';
        setAuditTarget({ details: { to, sent: false, error } });
        return { sent: false, to, error };
      }
    },
  };
}

export type EmailService = ReturnType<typeof createEmailService>;
