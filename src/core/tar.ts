// A streaming reader of tar archives (POSIX ustar and pax, with GNU long names and base-256 sizes): the
// entries of an archive deploy (core/archive.ts). It holds one 512-byte header and the pax/long-name
// records of the entry at hand (bounded), never an entry's bytes: a file's body is handed on chunk by
// chunk as it arrives. Written here rather than taken from tar-stream: every refusal must name its entry
// with the spec's error body, metadata must be bounded (tar-stream 2/3 buffer a pax header of any size),
// and a truncated stream must be an error, not a quiet end.

import { ApiError } from './errors.js';

export const BLOCK = 512;

/** Longest pax extended header or GNU long-name record an entry may carry. */
export const MAX_META_RECORD_BYTES = 64 * 1024;

export type TarEntryType =
  | 'file'
  | 'directory'
  | 'symlink'
  | 'hardlink'
  | 'character-device'
  | 'block-device'
  | 'fifo'
  | 'other';

export interface TarEntry {
  /** The name as the archive gives it (pax `path`, GNU long name, or ustar prefix + name). */
  name: string;
  type: TarEntryType;
  /** The typeflag byte as a character (for messages about `other`). */
  typeflag: string;
  /** Bytes of the entry's body. */
  size: number;
}

/** A refusal of the archive as a whole (corrupt, truncated): 400 with the spec's error body. */
export function badArchive(message: string, entry?: string): ApiError {
  return new ApiError('INVALID_REQUEST', message, {
    ...(entry === undefined ? {} : { extra: { entry } }),
    hint: 'Send a gzip-compressed tar of the site folder, e.g. `tar -czf site.tar.gz -C dist .`.',
  });
}

const TYPES: Record<string, TarEntryType> = {
  '0': 'file',
  '\0': 'file',
  '7': 'file', // contiguous file: a regular file to every reader
  '1': 'hardlink',
  '2': 'symlink',
  '3': 'character-device',
  '4': 'block-device',
  '5': 'directory',
  '6': 'fifo',
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Pulls exact byte counts out of a stream of chunks. Chunks handed out by `some` are views of the
 * source's own chunks (no copy); `exact` copies only when a read spans two chunks.
 */
class ByteSource {
  private chunk: Uint8Array = new Uint8Array(0);
  private offset = 0;
  private done = false;
  /** Bytes handed out so far. */
  position = 0;

  constructor(private readonly source: AsyncIterator<Uint8Array>) {}

  private async fill(): Promise<boolean> {
    while (this.offset >= this.chunk.length) {
      if (this.done) return false;
      const next = await this.source.next();
      if (next.done) {
        this.done = true;
        return false;
      }
      this.chunk = next.value;
      this.offset = 0;
    }
    return true;
  }

  /** Up to `max` bytes (at least one), or null at the end of the stream. */
  async some(max: number): Promise<Uint8Array | null> {
    if (!(await this.fill())) return null;
    const n = Math.min(max, this.chunk.length - this.offset);
    const out = this.chunk.subarray(this.offset, this.offset + n);
    this.offset += n;
    this.position += n;
    return out;
  }

  /** Exactly `n` bytes; null if the stream ended before the first of them, a short read throws. */
  async exact(n: number, what: () => string): Promise<Uint8Array | null> {
    const first = await this.some(n);
    if (first === null) return null;
    if (first.length === n) return first;
    const out = new Uint8Array(n);
    out.set(first, 0);
    let got = first.length;
    while (got < n) {
      const more = await this.some(n - got);
      if (more === null) throw badArchive(`The archive is truncated: it ends inside ${what()}.`);
      out.set(more, got);
      got += more.length;
    }
    return out;
  }

  /** Reads and drops `n` bytes. */
  async skip(n: number, what: () => string): Promise<void> {
    for (let left = n; left > 0; ) {
      const got = await this.some(left);
      if (got === null) throw badArchive(`The archive is truncated: it ends inside ${what()}.`);
      left -= got.length;
    }
  }
}

const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

/** A NUL-terminated field as text (raw bytes; names are decoded by the caller). */
function field(block: Uint8Array, start: number, length: number): Uint8Array {
  const end = block.indexOf(0, start);
  return block.subarray(start, end === -1 || end > start + length ? start + length : end);
}

const ascii = (bytes: Uint8Array) => String.fromCharCode(...bytes);

/** A numeric field: octal text (spaces/NULs around it), or GNU base-256 (high bit of the first byte set). */
function numeric(block: Uint8Array, start: number, length: number): number | null {
  if ((block[start]! & 0x80) !== 0) {
    if ((block[start]! & 0x40) !== 0) return null; // negative
    let value = block[start]! & 0x3f;
    for (let i = start + 1; i < start + length; i++) {
      value = value * 256 + block[i]!;
      if (!Number.isSafeInteger(value)) return null;
    }
    return value;
  }
  const text = ascii(field(block, start, length)).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) return null;
  const value = Number.parseInt(text, 8);
  return Number.isSafeInteger(value) ? value : null;
}

/** The header checksum holds (unsigned sum, or the signed sum some old writers used). */
function checksumHolds(block: Uint8Array): boolean {
  const stored = numeric(block, 148, 8);
  if (stored === null) return false;
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const b = i >= 148 && i < 156 ? 0x20 : block[i]!;
    unsigned += b;
    signed += b >= 0x80 ? b - 256 : b;
  }
  return stored === unsigned || stored === signed;
}

function isZeroBlock(block: Uint8Array): boolean {
  for (let i = 0; i < BLOCK; i++) if (block[i] !== 0) return false;
  return true;
}

function decodeName(bytes: Uint8Array, where: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw badArchive(`${where}: the entry name is not UTF-8 text.`);
  }
}

/** Pax records `"<len> <key>=<value>\n"` (POSIX.1-2001). */
function paxRecords(data: Uint8Array, where: string): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    if (data[at] === 0) break; // NUL padding some writers leave
    const space = data.indexOf(0x20, at);
    const length = space === -1 ? Number.NaN : Number(ascii(data.subarray(at, space)));
    if (!Number.isSafeInteger(length) || length <= 0 || at + length > data.length) {
      throw badArchive(`${where}: a pax extended header is malformed.`);
    }
    const record = data.subarray(space + 1, at + length - 1); // without the trailing newline
    const eq = record.indexOf(0x3d);
    if (eq === -1) throw badArchive(`${where}: a pax extended header is malformed.`);
    records.set(decodeName(record.subarray(0, eq), where), decodeName(record.subarray(eq + 1), where));
    at += length;
  }
  return records;
}

export interface TarReaderLimits {
  /** Entries of any kind (directories and metadata records included). */
  maxEntries: number;
  /** Header, pax and long-name bytes in all (a gzip of millions of empty headers is small). */
  maxMetaBytes: number;
}

/**
 * The entries of a tar stream, one at a time: `next()` gives an entry's header, then the caller reads its
 * body with `body()` (or leaves it, and `next()` skips it). The end-of-archive block must come: a stream
 * that stops before it is truncated.
 */
export class TarReader {
  private readonly input: ByteSource;
  /** Unread body bytes of the entry at hand (with its padding after them). */
  private left = 0;
  private pad = 0;
  private current: TarEntry | null = null;
  private entries = 0;
  private metaBytes = 0;
  ended = false;

  constructor(
    source: AsyncIterable<Uint8Array>,
    private readonly limits: TarReaderLimits,
  ) {
    this.input = new ByteSource(source[Symbol.asyncIterator]());
  }

  /** Bytes of the (uncompressed) archive read so far. */
  get position(): number {
    return this.input.position;
  }

  private countMeta(n: number): void {
    this.metaBytes += n;
    if (this.metaBytes > this.limits.maxMetaBytes) {
      throw badArchive(
        `The archive's headers take more than ${this.limits.maxMetaBytes} bytes; it is not a site folder.`,
      );
    }
  }

  private describe = () =>
    this.current ? `the entry ${JSON.stringify(this.current.name)}` : 'an entry header';

  /** The next entry, or null after the end-of-archive block. */
  async next(): Promise<TarEntry | null> {
    if (this.ended) return null;
    if (this.left + this.pad > 0) {
      const what = this.describe;
      this.countMeta(this.left); // a skipped body (a directory's) is not a file's bytes
      await this.input.skip(this.left + this.pad, what);
      this.left = 0;
      this.pad = 0;
    }
    this.current = null;
    let pax = new Map<string, string>();
    let longName: string | undefined;
    for (;;) {
      const block = await this.input.exact(BLOCK, () => 'an entry header');
      if (block === null) {
        throw badArchive('The archive is truncated: it ends without the end-of-archive blocks.');
      }
      this.countMeta(BLOCK);
      if (isZeroBlock(block)) {
        this.ended = true;
        return null;
      }
      if (++this.entries > this.limits.maxEntries) {
        throw badArchive(`The archive has more than ${this.limits.maxEntries} entries.`);
      }
      if (!checksumHolds(block)) {
        throw badArchive(
          `The archive is corrupt: header ${this.entries} (at byte ${this.input.position - BLOCK}) fails its checksum.`,
        );
      }
      const magic = ascii(block.subarray(257, 263));
      const ustar = magic === 'ustar\0';
      const rawName = field(block, 0, 100);
      const prefix = ustar ? field(block, 345, 155) : new Uint8Array(0);
      const headerName = decodeName(
        prefix.length > 0 ? Buffer.concat([prefix, Buffer.from('/'), rawName]) : rawName,
        `header ${this.entries}`,
      );
      const typeflag = String.fromCharCode(block[156]!);
      let size = numeric(block, 124, 12);
      if (size === null)
        throw badArchive(`The archive is corrupt: ${JSON.stringify(headerName)} has a bad size.`);
      const where = JSON.stringify(headerName);

      if (typeflag === 'x' || typeflag === 'g' || typeflag === 'L' || typeflag === 'K') {
        if (size > MAX_META_RECORD_BYTES) {
          throw badArchive(
            `The archive's extended header before ${where} is ${size} bytes; at most ${MAX_META_RECORD_BYTES} are accepted.`,
          );
        }
        const data =
          size === 0 ? new Uint8Array(0) : await this.input.exact(size, () => 'an extended header');
        if (data === null) throw badArchive('The archive is truncated: it ends inside an extended header.');
        await this.input.skip(padding(size), () => 'an extended header');
        this.countMeta(size + padding(size));
        if (typeflag === 'x') pax = paxRecords(data, `The entry after header ${this.entries}`);
        else if (typeflag === 'L')
          longName = decodeName(field(data, 0, data.length), `header ${this.entries}`);
        // 'g' (global: git archive's commit id) and 'K' (a long link target) change no file.
        continue;
      }

      const name = pax.get('path') ?? longName ?? headerName;
      const paxSize = pax.get('size');
      if (paxSize !== undefined) {
        if (!/^[0-9]+$/.test(paxSize) || !Number.isSafeInteger(Number(paxSize))) {
          throw badArchive(
            `The archive is corrupt: the pax size of ${JSON.stringify(name)} is not a number.`,
            name,
          );
        }
        size = Number(paxSize);
      }
      const entry: TarEntry = { name, type: TYPES[typeflag] ?? 'other', typeflag, size };
      this.current = entry;
      // Links, devices and FIFOs have no body whatever the size field says (ustar); be safe: skip it.
      this.left = size;
      this.pad = padding(size);
      return entry;
    }
  }

  /** The body of the entry `next()` gave, chunk by chunk (views of the input: consume each before the next). */
  async *body(): AsyncGenerator<Uint8Array, void, undefined> {
    const entry = this.current;
    if (entry === null) return;
    const what = this.describe;
    while (this.left > 0) {
      const chunk = await this.input.some(this.left);
      if (chunk === null) throw badArchive(`The archive is truncated: it ends inside ${what()}.`, entry.name);
      this.left -= chunk.length;
      yield chunk;
    }
    await this.input.skip(this.pad, what);
    this.pad = 0;
  }

  /** Reads what follows the end-of-archive block (record padding) and drops it; more than `max` bytes is refused. */
  async finish(max: number): Promise<void> {
    let seen = 0;
    for (
      let chunk = await this.input.some(BLOCK * 64);
      chunk !== null;
      chunk = await this.input.some(BLOCK * 64)
    ) {
      seen += chunk.length;
      if (seen > max)
        throw badArchive(`The archive has more than ${max} bytes after its end-of-archive block.`);
    }
  }
}
