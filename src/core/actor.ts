// Who is calling. Built once per request by the authentication mechanism and handed to
// services; services scope every read and write by it.
import type { Permission } from './access.js';

export interface Actor {
  kind: 'user' | 'service_account';
  id: number;
  name: string;
  /** Platform (global) scope: above every organization. */
  global: boolean;
  /** Organizations in scope; ignored when global. */
  organizationIds: readonly number[];
  permissions: ReadonlySet<Permission>;
  /** How the caller authenticated: decides 401 details and WWW-Authenticate. */
  via: 'token' | 'session';
  tokenId?: number;
}
