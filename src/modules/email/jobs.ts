// Messages about an organization's data go to that organization's recipients only, through
// the job queue: notify() writes one delivery record per recipient and enqueues one send job
// for it (one recipient's failure never re-sends to the others). A transient failure (a
// connection refused, a timeout, a 4xx reply) is retried with exponential backoff; a
// permanent one (a 5xx reply, authentication, a certificate, the outbound policy) is not.
// The record says queued, retrying, sent, failed (with the last error) or cancelled, and a
// final failure is logged and written to the audit trail, never silently dropped.
import type { Clock } from '../../core/clock.js';
import { errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Logger } from '../../platform/logger.js';
import type { JobRegistration } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { AuditService } from '../audit/service.js';
import { NOT_CONFIGURED } from './service.js';
import { SendError, type Attachment, type SendMail, type SmtpSettings } from './smtp.js';
import { PENDING, type DeliveryRow, type EmailStore } from './store.js';

export const EMAIL_QUEUE = 'email';
export const SEND_JOB = 'email.send';

export interface SendPayload {
  delivery_id: string;
}

export interface EmailJobs {
  [EMAIL_QUEUE]: { [SEND_JOB]: SendPayload };
}

/** A message about one organization's data. */
export interface Notification {
  organizationId: number;
  /** One line; at most 998 characters. */
  subject: string;
  text: string;
  html?: string;
  /** Text attachments, each at most 5 MB (a scheduled search's CSV). */
  attachments?: Attachment[];
}

export interface QueuedDelivery {
  id: string;
  recipient_id: number;
  address: string;
  /** queued, or failed at once (SMTP not configured; the queue unavailable). */
  status: 'queued' | 'failed';
  error?: string;
}

export interface NotifyResult {
  organization_id: number;
  deliveries: QueuedDelivery[];
}

/** What later modules call (container.email). */
export interface EmailNotifier {
  notify(n: Notification): Promise<NotifyResult>;
}

export interface DeliveryDeps {
  store: EmailStore;
  queue: JobQueue;
  clock: Clock;
  logger: Logger;
  audit: Pick<AuditService, 'record'>;
  settings(): Promise<SmtpSettings | undefined>;
  send: SendMail;
  attempts: number;
  backoffMs: number;
}

const MAX_SUBJECT = 998;
const MAX_BODY = 1_000_000;
const MAX_ATTACHMENT = 5_000_000;

export function createDeliveries(deps: DeliveryDeps) {
  const { store, clock, logger } = deps;

  /** The final failure of a delivery: recorded on the row, logged, audited (no secret in any). */
  async function fail(d: DeliveryRow, attempts: number, error: string): Promise<void> {
    await store.updateDelivery(d.id, {
      status: 'failed',
      attempts,
      last_error: error,
      now: clock.now(),
      dropBody: true,
    });
    logger.warn(
      { delivery_id: d.id, organization_id: d.organization_id, recipient_id: d.recipient_id, attempts, error },
      'e-mail delivery failed',
    );
    try {
      await deps.audit.record({
        actor: undefined,
        operationId: 'emails.send',
        method: 'JOB',
        path: `queue:${EMAIL_QUEUE}/${SEND_JOB}`,
        outcome: 'failed',
        status: 502,
        errorCode: 'email.send_failed',
        correlationId: `email:${d.id}`,
        target: {
          type: 'email_delivery',
          id: d.id,
          organizationId: d.organization_id,
          details: { recipient_id: d.recipient_id, address: d.address, subject: d.subject, attempts, error },
        },
      });
    } catch (err) {
      logger.warn({ err, delivery_id: d.id }, 'e-mail delivery failure could not be audited');
    }
  }

  async function notify(n: Notification): Promise<NotifyResult> {
    if (!Number.isInteger(n.organizationId) || n.organizationId < 1)
      throw errors.invalid('organizationId must be a positive integer');
    const subject = n.subject.replace(/[\r\n]+/g, ' ').trim();
    if (!subject || subject.length > MAX_SUBJECT) throw errors.invalid(`subject must be 1-${MAX_SUBJECT} characters`);
    if (n.text.length > MAX_BODY || (n.html?.length ?? 0) > MAX_BODY)
      throw errors.invalid(`the body is larger than ${MAX_BODY} characters`);
    if (n.attachments?.some((a) => a.content.length > MAX_ATTACHMENT || !a.filename))
      throw errors.invalid(`an attachment needs a name and at most ${MAX_ATTACHMENT} characters`);
    const attachments = n.attachments?.length ? JSON.stringify(n.attachments) : null;
    const recipients = await store.recipientsOf(n.organizationId);
    // Why nothing can be sent now (recorded on every delivery), or null.
    let unusable: string | null = null;
    if (recipients.length > 0) {
      try {
        if ((await deps.settings()) === undefined) unusable = NOT_CONFIGURED;
      } catch (err) {
        unusable = `the SMTP settings cannot be read: ${(err as Error).message}`;
      }
    }
    const out: QueuedDelivery[] = [];
    for (const r of recipients) {
      const id = newId();
      const row = {
        id,
        organization_id: n.organizationId,
        recipient_id: r.id,
        address: r.address,
        subject,
        text_body: n.text,
        html_body: n.html ?? null,
        attachments,
      };
      if (unusable) {
        await store.insertDelivery({ ...row, status: 'failed', last_error: unusable, now: clock.now() });
        await fail(
          {
            ...row,
            status: 'failed',
            attempts: 0,
            last_error: unusable,
            message_id: null,
            created_at: clock.now(),
            updated_at: clock.now(),
          },
          0,
          unusable,
        );
        out.push({ id, recipient_id: r.id, address: r.address, status: 'failed', error: unusable });
        continue;
      }
      await store.insertDelivery({ ...row, status: 'queued', now: clock.now() });
      try {
        const payload: SendPayload = { delivery_id: id };
        await deps.queue.enqueue(EMAIL_QUEUE, SEND_JOB, payload, {
          jobId: id,
          attempts: deps.attempts,
          backoffMs: deps.backoffMs,
        });
        out.push({ id, recipient_id: r.id, address: r.address, status: 'queued' });
      } catch (err) {
        const error = 'the send job could not be queued';
        logger.warn({ err, delivery_id: id }, error);
        const stored = await store.getDelivery(id);
        if (stored) await fail(stored, 0, error);
        out.push({ id, recipient_id: r.id, address: r.address, status: 'failed', error });
      }
    }
    return { organization_id: n.organizationId, deliveries: out };
  }

  /** One attempt of a send job; throws only to have the queue retry a transient failure. */
  async function deliver(deliveryId: string, attempt: number, maxAttempts: number): Promise<void> {
    const d = await store.getDelivery(deliveryId);
    // BullMQ can start the job before the transaction that wrote the record commits: try again later.
    if (!d && attempt < maxAttempts) throw new Error(`e-mail delivery ${deliveryId} is not recorded (yet)`);
    if (!d || !(PENDING as readonly string[]).includes(d.status)) return; // sent, failed, cancelled, or its organization deleted
    let settings: SmtpSettings | undefined;
    try {
      settings = await deps.settings();
    } catch (err) {
      return fail(d, attempt, `the SMTP settings cannot be read: ${(err as Error).message}`);
    }
    if (!settings) return fail(d, attempt, NOT_CONFIGURED);
    try {
      const attachments = d.attachments ? (JSON.parse(d.attachments) as Attachment[]) : undefined;
      const { messageId } = await deps.send(settings, {
        to: d.address,
        subject: d.subject,
        text: d.text_body,
        html: d.html_body,
        ...(attachments ? { attachments } : {}),
      });
      await store.updateDelivery(d.id, {
        status: 'sent',
        attempts: attempt,
        last_error: null,
        message_id: messageId.slice(0, 500),
        now: clock.now(),
        dropBody: true,
      });
    } catch (err) {
      const error = err instanceof SendError ? err.message : 'the message could not be sent';
      const permanent = err instanceof SendError && err.permanent;
      if (permanent || attempt >= maxAttempts) {
        await fail(d, attempt, permanent ? error : `${error} (gave up after ${attempt} attempts)`);
        return;
      }
      await store.updateDelivery(d.id, { status: 'retrying', attempts: attempt, last_error: error, now: clock.now() });
      throw err;
    }
  }

  return { notify, deliver };
}

export function emailJobs(deliveries: ReturnType<typeof createDeliveries>): JobRegistration {
  return defineJobs({
    queue: EMAIL_QUEUE,
    role: 'worker',
    concurrency: 4,
    handlers: {
      [SEND_JOB]: async (job) => {
        const { delivery_id } = job.payload;
        await deliveries.deliver(delivery_id, job.attempt, job.maxAttempts);
      },
    },
  });
}
