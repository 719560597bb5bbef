// HyperLogLog sketches of a site's visitors (issue 25): 2^10 registers, standard error 1.04/sqrt(1024) =
// 3.25 %. A sketch is mergeable (register-wise max), so the counts of every node and worker of a day add up
// to the sketch of the day without any node knowing another's visitors. Small sketches (the usual site: a
// few visitors an hour) are kept sparse, as a list of (register, rank) pairs; past SPARSE_MAX pairs a dense
// register array. Stored as text (migrations use portable column types only): `s` + base64 of 3-byte
// pairs, or `d` + base64 of the 1024 registers.

export const HLL_P = 10;
export const HLL_M = 1 << HLL_P;
/** Relative standard error of an estimate (1.04 / sqrt(m)); docs/analytics.md quotes it. */
export const HLL_STANDARD_ERROR = 1.04 / Math.sqrt(HLL_M);
/** Pairs kept sparse before the dense array (3 bytes a pair vs 1024 bytes). */
const SPARSE_MAX = 64;

/** A sketch: sparse `(index << 8) | rank` numbers, or dense registers. */
export interface Sketch {
  sparse: number[] | null;
  dense: Uint8Array | null;
}

export function emptySketch(): Sketch {
  return { sparse: [], dense: null };
}

/** Adds an observation given as a well-mixed 32-bit hash: the top HLL_P bits pick the register. */
export function sketchAdd(s: Sketch, h: number): void {
  sketchAddRegister(s, sketchRegister(h));
}

/**
 * What an observation (a well-mixed 32-bit hash) sets, as one number `(index << 8) | rank` (never 0): the
 * top HLL_P bits pick the register; the rank is the position of the first 1 bit in the other 22 (1..23),
 * plenty below 4 billion visitors. A holder of one observation can keep this instead of a sketch.
 */
export function sketchRegister(h: number): number {
  const index = h >>> (32 - HLL_P);
  const rank = Math.min(Math.clz32(h << HLL_P) + 1, 32 - HLL_P + 1);
  return (index << 8) | rank;
}

/** Whether two sketchRegister() values set the same register (perhaps to different ranks). */
export function sameRegister(a: number, b: number): boolean {
  return a >>> 8 === b >>> 8;
}

/** Adds a sketchRegister() value. */
export function sketchAddRegister(s: Sketch, register: number): void {
  setRegister(s, register >>> 8, register & 0xff);
}

function setRegister(s: Sketch, index: number, rank: number): void {
  const dense = s.dense;
  if (dense !== null) {
    if (dense[index]! < rank) dense[index] = rank;
    return;
  }
  const sparse = s.sparse!;
  for (let i = 0; i < sparse.length; i++) {
    const v = sparse[i]!;
    if (v >>> 8 === index) {
      if ((v & 0xff) < rank) sparse[i] = (index << 8) | rank;
      return;
    }
  }
  if (sparse.length === 0) {
    // An array of exactly one: a push would reserve 17 slots, and most sketches of an hour hold one visitor
    // (100,000 sites' sketches are held until the flush: issue 23).
    s.sparse = [(index << 8) | rank];
    return;
  }
  if (sparse.length < SPARSE_MAX) {
    sparse.push((index << 8) | rank);
    return;
  }
  const d = new Uint8Array(HLL_M);
  for (const v of sparse) d[v >>> 8] = v & 0xff;
  d[index] = Math.max(d[index]!, rank);
  s.dense = d;
  s.sparse = null;
}

/** Register-wise max of `from` into `into`. */
export function sketchMerge(into: Sketch, from: Sketch): void {
  if (from.dense !== null) {
    for (let i = 0; i < HLL_M; i++) if (from.dense[i]! > 0) setRegister(into, i, from.dense[i]!);
  } else {
    for (const v of from.sparse!) setRegister(into, v >>> 8, v & 0xff);
  }
}

/** The estimated number of distinct observations (HLL with the small-range correction). */
export function sketchEstimate(s: Sketch): number {
  if (s.dense === null) {
    const n = s.sparse!.length;
    if (n === 0) return 0;
    // Few registers set: linear counting is exact enough (each distinct visitor almost always has its own).
    return Math.round(HLL_M * Math.log(HLL_M / (HLL_M - n)));
  }
  let sum = 0;
  let zeros = 0;
  for (let i = 0; i < HLL_M; i++) {
    const r = s.dense[i]!;
    sum += 2 ** -r;
    if (r === 0) zeros++;
  }
  const alpha = 0.7213 / (1 + 1.079 / HLL_M);
  const raw = (alpha * HLL_M * HLL_M) / sum;
  if (raw <= 2.5 * HLL_M && zeros > 0) return Math.round(HLL_M * Math.log(HLL_M / zeros));
  return Math.round(raw);
}

export function encodeSketch(s: Sketch): string {
  if (s.dense !== null) return `d${Buffer.from(s.dense).toString('base64')}`;
  const out = Buffer.alloc(s.sparse!.length * 3);
  s.sparse!.forEach((v, i) => {
    out.writeUInt16BE(v >>> 8, i * 3);
    out[i * 3 + 2] = v & 0xff;
  });
  return `s${out.toString('base64')}`;
}

/** A stored sketch; an unreadable one is empty (never a failure of the page that shows it). */
export function decodeSketch(text: string | null): Sketch {
  const s = emptySketch();
  if (text === null || text.length === 0) return s;
  const bytes = Buffer.from(text.slice(1), 'base64');
  if (text[0] === 'd' && bytes.length === HLL_M) {
    s.dense = new Uint8Array(bytes);
    s.sparse = null;
  } else if (text[0] === 's') {
    for (let i = 0; i + 2 < bytes.length; i += 3) {
      const index = bytes.readUInt16BE(i);
      if (index < HLL_M) setRegister(s, index, bytes[i + 2]!);
    }
  }
  return s;
}

/** Murmur3's 32-bit mixing of `text` into `h` (no allocation; only page views pay it). */
export function mixString(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    let k = Math.imul(text.charCodeAt(i), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  // A separator so ("ab","c") and ("a","bc") differ.
  h ^= text.length;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** Murmur3's finaliser: every input bit reaches every output bit. */
/** Mixes one 32-bit value into `h` (a murmur3 block): a string's hash computed once and kept, say. */
export function mixInt(h: number, value: number): number {
  let k = Math.imul(value | 0, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

export function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
