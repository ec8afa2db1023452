import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { Logger } from '../../platform/logger.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { AuditService } from '../audit/service.js';
import type { OrgDataStep } from '../organizations/jobs.js';
import { createDeliveries, emailJobs, type EmailNotifier } from './jobs.js';
import { emailRoutes } from './routes.js';
import { createEmailService } from './service.js';
import { createSmtpSender } from './smtp.js';
import { createEmailStore } from './store.js';

/** Sending e-mail (docs/email.md): the queue's retries and the SMTP timeouts. */
export interface EmailConfig {
  /** Attempts of a send job, the first included (transient failures only). */
  attempts: number;
  /** Base of the exponential backoff between attempts: base * 2^(attempt-1). */
  backoffMs: number;
  /** Connection, greeting and socket timeout of one SMTP session (the test send included). */
  timeoutMs: number;
}

export interface EmailDeps {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  queue: QueuePort;
  audit: Pick<AuditService, 'record'>;
  cipher: CredentialCipher;
  net: NetPolicy;
  config: EmailConfig;
  dataDeletion?: { addStep(step: OrgDataStep): void };
}

export function wireEmail(deps: EmailDeps) {
  const store = createEmailStore(deps.db);
  const send = createSmtpSender({ net: deps.net, timeoutMs: deps.config.timeoutMs });
  const service = createEmailService({
    store,
    cipher: deps.cipher,
    net: deps.net,
    clock: deps.clock,
    send,
    timeoutMs: deps.config.timeoutMs,
  });
  const deliveries = createDeliveries({
    store,
    queue: deps.queue,
    clock: deps.clock,
    logger: deps.logger,
    audit: deps.audit,
    settings: service.smtpSettings,
    send,
    attempts: deps.config.attempts,
    backoffMs: deps.config.backoffMs,
  });
  deps.dataDeletion?.addStep({
    name: 'email_deliveries',
    run: async (organizationId) => ({ rows: await store.deleteDeliveries(organizationId) }),
  });
  const notifier: EmailNotifier = { notify: deliveries.notify };
  return {
    notifier,
    /** Re-encrypts the SMTP password under the current master key (call at start). */
    resealPassword: service.resealPassword,
    jobs: [emailJobs(deliveries)],
    routes: (app: Api) => emailRoutes(app, service, store.lastDeliveries),
  };
}
