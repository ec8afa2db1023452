import { describe, expect, it } from 'vitest';
import { NetError } from './errors.js';
import { blockedReason, createNetPolicy, InvalidCidrError, parseCidrs } from './ssrf.js';

describe('SSRF guard', () => {
  const none = parseCidrs([]);

  it('refuses loopback, link-local, unspecified and metadata addresses', () => {
    for (const a of [
      '127.0.0.1',
      '127.8.9.10',
      '::1',
      '169.254.169.254',
      'fe80::1',
      '0.0.0.0',
      '::',
      'fd00:ec2::254',
      '100.100.100.200',
      '::ffff:127.0.0.1',
    ]) {
      expect(blockedReason(a, none), a).not.toBeNull();
    }
  });

  it('lets public and private addresses through', () => {
    for (const a of ['10.1.2.3', '192.168.1.10', '172.16.0.1', '8.8.8.8', '2001:db8::1', 'fd12::1']) {
      expect(blockedReason(a, none), a).toBeNull();
    }
  });

  it('an allowed range opens exactly that range', () => {
    const allowed = parseCidrs(['127.0.0.1/32', '::1']);
    expect(blockedReason('127.0.0.1', allowed)).toBeNull();
    expect(blockedReason('::1', allowed)).toBeNull();
    expect(blockedReason('127.0.0.2', allowed)).not.toBeNull();
    expect(blockedReason('169.254.169.254', allowed)).not.toBeNull();
  });

  it('rejects a malformed range at start', () => {
    expect(() => parseCidrs(['not-a-cidr'])).toThrow(InvalidCidrError);
  });

  it('checks the resolved address, not the name', async () => {
    const policy = createNetPolicy({ allowCidrs: [] });
    await expect(policy.resolve('localhost')).rejects.toMatchObject({ kind: 'blocked_address' });
    await expect(policy.resolve('localhost')).rejects.toBeInstanceOf(NetError);
    await expect(policy.resolve('[::1]')).rejects.toMatchObject({ kind: 'blocked_address' });
    const open = createNetPolicy({ allowCidrs: ['127.0.0.0/8', '::1/128'] });
    await expect(open.resolve('127.0.0.1')).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('guards connections made through its lookup', async () => {
    const { connect } = await import('node:net');
    const policy = createNetPolicy({ allowCidrs: [] });
    const err = await new Promise<Error>((resolve) => {
      const socket = connect({ host: 'localhost', port: 9, lookup: policy.lookup });
      socket.on('error', resolve);
    });
    expect(err).toMatchObject({ kind: 'blocked_address' });
  });
});
