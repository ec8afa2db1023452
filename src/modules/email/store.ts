// E-mail rows: the SMTP settings (one row, id 1), recipients scoped by organization, and
// the delivery records the send jobs update.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import { organizationLookup } from '../../platform/db/organizations.js';
import type { DB } from '../../platform/db/index.js';
import type { EmailDeliveriesTable, EmailRecipientsTable, EmailSettingsTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type SettingsRow = Selectable<EmailSettingsTable>;
export type RecipientRow = Selectable<EmailRecipientsTable>;
export type DeliveryRow = Selectable<EmailDeliveriesTable>;

/** Deliveries that may still be sent. */
export const PENDING = ['queued', 'retrying'] as const;

export interface LastDelivery {
  recipient_id: number;
  id: string;
  status: string;
  attempts: number;
  last_error: string | null;
  subject: string;
  updated_at: Date;
}

export function createEmailStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const recipientsInScope = (scope: Scope) =>
    q().selectFrom('email_recipients').where(scoped(scope, 'email_recipients.organization_id'));

  return {
    async settings(): Promise<SettingsRow | undefined> {
      return q().selectFrom('email_settings').selectAll().where('id', '=', 1).executeTakeFirst();
    },

    async saveSettings(row: Omit<SettingsRow, 'id'>): Promise<SettingsRow> {
      return q()
        .insertInto('email_settings')
        .values({ id: 1, ...row })
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    ...organizationLookup(db),

    async listRecipients(
      scope: Scope,
      page: OffsetPage,
      organizationId?: number,
    ): Promise<{ items: RecipientRow[]; total: number }> {
      let base = recipientsInScope(scope);
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      const items = await base.selectAll().orderBy('id').limit(page.limit).offset(page.offset).execute();
      const count = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return { items, total: Number(count.n) };
    },

    async getRecipient(scope: Scope, id: number): Promise<RecipientRow | undefined> {
      return recipientsInScope(scope).selectAll().where('id', '=', id).executeTakeFirst();
    },

    async recipientsOf(organizationId: number): Promise<RecipientRow[]> {
      return q()
        .selectFrom('email_recipients')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .orderBy('id')
        .execute();
    },

    /** Whether the address is a recipient of one of the organizations (case-insensitive). */
    async isRecipientOf(organizationIds: readonly number[], address: string): Promise<boolean> {
      if (organizationIds.length === 0) return false;
      const row = await q()
        .selectFrom('email_recipients')
        .select('id')
        .where('organization_id', 'in', [...organizationIds])
        .where(sql<boolean>`lower(address) = lower(${address})`)
        .executeTakeFirst();
      return Boolean(row);
    },

    async userEmail(userId: number): Promise<string | null> {
      const row = await q().selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst();
      return row?.email ?? null;
    },

    async insertRecipient(r: {
      organization_id: number;
      address: string;
      name: string | null;
      now: Date;
    }): Promise<RecipientRow> {
      return q()
        .insertInto('email_recipients')
        .values({ organization_id: r.organization_id, address: r.address, name: r.name, created_at: r.now })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async deleteRecipient(id: number): Promise<void> {
      await q().deleteFrom('email_recipients').where('id', '=', id).execute();
    },

    /** The newest delivery of each recipient. */
    async lastDeliveries(recipientIds: number[]): Promise<Map<number, LastDelivery>> {
      if (recipientIds.length === 0) return new Map();
      const rows = await q()
        .selectFrom('email_deliveries')
        .select(['recipient_id', 'id', 'status', 'attempts', 'last_error', 'subject', 'updated_at'])
        .distinctOn('recipient_id')
        .where('recipient_id', 'in', recipientIds)
        .orderBy('recipient_id')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return new Map(rows.map((r) => [r.recipient_id!, r as LastDelivery]));
    },

    async insertDelivery(
      d: Omit<DeliveryRow, 'attempts' | 'last_error' | 'message_id' | 'created_at' | 'updated_at' | 'attachments'> & {
        attachments?: string | null;
        last_error?: string | null;
        now: Date;
      },
    ): Promise<void> {
      const { now, ...row } = d;
      await q()
        .insertInto('email_deliveries')
        .values({
          ...row,
          attachments: d.attachments ?? null,
          last_error: d.last_error ?? null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    },

    async getDelivery(id: string): Promise<DeliveryRow | undefined> {
      return q().selectFrom('email_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** dropBody: the message's body is not kept once the delivery is final (the record keeps subject and address). */
    async updateDelivery(
      id: string,
      patch: {
        status: string;
        attempts?: number;
        last_error?: string | null;
        message_id?: string | null;
        now: Date;
        dropBody?: boolean;
      },
    ): Promise<void> {
      const { now, dropBody, ...rest } = patch;
      await q()
        .updateTable('email_deliveries')
        .set({ ...rest, ...(dropBody ? { text_body: '', html_body: null, attachments: null } : {}), updated_at: now })
        .where('id', '=', id)
        .execute();
    },

    /** Pending deliveries of a recipient become cancelled (its row is about to go). */
    async cancelPending(recipientId: number, reason: string, now: Date): Promise<number> {
      const res = await q()
        .updateTable('email_deliveries')
        .set({
          status: 'cancelled',
          last_error: reason,
          text_body: '',
          html_body: null,
          attachments: null,
          updated_at: now,
        })
        .where('recipient_id', '=', recipientId)
        .where('status', 'in', [...PENDING])
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },

    /** An organization's delivery records (its data deletion); its recipients stay, as its users do. */
    async deleteDeliveries(organizationId: number): Promise<number> {
      const res = await q()
        .deleteFrom('email_deliveries')
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}

export type EmailStore = ReturnType<typeof createEmailStore>;
