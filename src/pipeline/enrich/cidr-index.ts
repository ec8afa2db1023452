// Longest-prefix match over IPv4 and IPv6 networks in time that does not grow with the number
// of networks: one hash map per distinct prefix length, probed from the longest length present
// down. A lookup costs at most (distinct IPv4 lengths) map probes, 33 at worst, whatever the
// table holds; tables of one length (say all /32 or all /24) cost one probe.
import { parseAddress, parseIPv4, maskV4, parseNetwork, type Network } from './ip.js';
import type { Row } from './types.js';

interface V6Entry {
  w0: number;
  w1: number;
  w2: number;
  w3: number;
  row: Row;
}

// 128-bit keys have no allocation-free Map key, so IPv6 maps are keyed by a 32-bit hash of the
// masked words and hold the (rarely more than one) entries sharing it.
function hash4(w0: number, w1: number, w2: number, w3: number): number {
  let h = Math.imul(w0 ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ w1 ^ (h >>> 13), 0xc2b2ae35);
  h = Math.imul(h ^ w2 ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ w3 ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function maskWord(w: number, bitsLeft: number): number {
  if (bitsLeft >= 32) return w >>> 0;
  if (bitsLeft <= 0) return 0;
  return (w & maskV4(bitsLeft)) >>> 0;
}

export class CidrIndex {
  private readonly v4 = new Map<number, Map<number, Row>>();
  private readonly v6 = new Map<number, Map<number, V6Entry[]>>();
  private v4Lengths = new Int32Array(0);
  private v4Masks = new Uint32Array(0);
  private v4Maps: Map<number, Row>[] = [];
  private v6Lengths: number[] = [];
  private v6Maps: Map<number, V6Entry[]>[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds (or replaces: the last row wins) the row of a network; false when the key is not one. */
  add(key: string, row: Row): boolean {
    const net = parseNetwork(key);
    if (!net) return false;
    this.addNetwork(net, row);
    return true;
  }

  addNetwork(net: Network, row: Row): void {
    if (net.v === 4) {
      let m = this.v4.get(net.len);
      if (!m) this.v4.set(net.len, (m = new Map()));
      // Signed 32-bit keys: small integers to V8, where values above 2^31 would be boxed numbers.
      const k = net.n | 0;
      if (!m.has(k)) this.count++;
      m.set(k, row);
      return;
    }
    const [w0, w1, w2, w3] = words(net.parts);
    let m = this.v6.get(net.len);
    if (!m) this.v6.set(net.len, (m = new Map()));
    const h = hash4(w0, w1, w2, w3);
    let bucket = m.get(h);
    if (!bucket) m.set(h, (bucket = []));
    const same = bucket.find((e) => e.w0 === w0 && e.w1 === w1 && e.w2 === w2 && e.w3 === w3);
    if (same) same.row = row;
    else {
      bucket.push({ w0, w1, w2, w3, row });
      this.count++;
    }
  }

  /** Call once after the last add: fixes the probing order, longest prefix first. */
  seal(): this {
    const l4 = [...this.v4.keys()].sort((a, b) => b - a);
    this.v4Lengths = Int32Array.from(l4);
    this.v4Masks = Uint32Array.from(l4, maskV4);
    this.v4Maps = l4.map((l) => this.v4.get(l)!);
    this.v6Lengths = [...this.v6.keys()].sort((a, b) => b - a);
    this.v6Maps = this.v6Lengths.map((l) => this.v6.get(l)!);
    return this;
  }

  get(key: string): Row | undefined {
    const n = parseIPv4(key);
    if (n >= 0) return this.getV4(n);
    const a = parseAddress(key);
    if (!a) return undefined;
    return a.v === 4 ? this.getV4(a.n) : this.getV6(a.parts);
  }

  getV4(n: number): Row | undefined {
    const maps = this.v4Maps;
    const masks = this.v4Masks;
    for (let i = 0; i < maps.length; i++) {
      const row = maps[i]!.get(n & masks[i]!);
      if (row !== undefined) return row;
    }
    return undefined;
  }

  getV6(parts: number[]): Row | undefined {
    if (this.v6Maps.length === 0) return undefined;
    const [a0, a1, a2, a3] = words(parts);
    for (let i = 0; i < this.v6Maps.length; i++) {
      const len = this.v6Lengths[i]!;
      const w0 = maskWord(a0, len);
      const w1 = maskWord(a1, len - 32);
      const w2 = maskWord(a2, len - 64);
      const w3 = maskWord(a3, len - 96);
      const bucket = this.v6Maps[i]!.get(hash4(w0, w1, w2, w3));
      if (!bucket) continue;
      for (const e of bucket) if (e.w0 === w0 && e.w1 === w1 && e.w2 === w2 && e.w3 === w3) return e.row;
    }
    return undefined;
  }
}

function words(p: number[]): [number, number, number, number] {
  return [
    (p[0]! * 65536 + p[1]!) >>> 0,
    (p[2]! * 65536 + p[3]!) >>> 0,
    (p[4]! * 65536 + p[5]!) >>> 0,
    (p[6]! * 65536 + p[7]!) >>> 0,
  ];
}
