// What every caller of a connector needs (the collection engine, backfill jobs, connection
// tests, tenant discovery): a ConnectorContext for one integration, with its decrypted
// config, an HTTP client behind the SSRF guard that counts usage, and the process-wide
// token cache. open() per unit of work (a cycle, a backfill run, a test); close() after.
import type { NetPolicy } from '../platform/net/policy.js';
import { createTokenCache, createVendorHttp, type VendorUsage } from './http.js';
import type { ConnectorContext } from './sdk.js';

export interface ConnectorRuntimeOptions {
  net: NetPolicy;
  requestTimeoutMs: number;
  maxRetryWaitMs: number;
  now?: () => Date;
}

export interface ConnectorTarget {
  /** Integration id: token cache scope. A provider test without an integration passes a unique string. */
  key: string | number;
  /** Config with secrets decrypted. */
  config: Readonly<Record<string, unknown>>;
  /** Values of the secret fields, stripped from every error message. */
  secrets: readonly string[];
  tenantId?: string | null;
}

export interface OpenConnector {
  ctx: ConnectorContext;
  usage: VendorUsage;
  close(): Promise<void>;
}

export function createConnectorRuntime(options: ConnectorRuntimeOptions) {
  const now = options.now ?? (() => new Date());
  const tokens = createTokenCache(() => now().getTime());
  return {
    open(target: ConnectorTarget, signal: AbortSignal, overrides: { maxRetryWaitMs?: number } = {}): OpenConnector {
      const http = createVendorHttp({
        net: options.net,
        signal,
        requestTimeoutMs: options.requestTimeoutMs,
        maxRetryWaitMs: overrides.maxRetryWaitMs ?? options.maxRetryWaitMs,
        secrets: () => target.secrets,
        now: () => now().getTime(),
      });
      const ctx: ConnectorContext = {
        config: target.config,
        tenantId: target.tenantId ?? null,
        http,
        tokens: tokens.scoped(String(target.key)),
        now,
        signal,
        net: options.net,
      };
      return { ctx, usage: http.usage, close: () => http.close() };
    },
  };
}

export type ConnectorRuntime = ReturnType<typeof createConnectorRuntime>;
