// A tiny tar writer for tests: every header type an archive deploy must take or refuse (files, folders,
// links, devices, FIFOs, pax and GNU long names), with control over names and sizes, gzip-compressed.

import { gzipSync } from 'node:zlib';

export interface TarEntrySpec {
  name: string;
  /** Typeflag: '0' file (default), '5' folder, '1' hard link, '2' symlink, '3'/'4' devices, '6' FIFO, ... */
  type?: string;
  body?: string | Buffer;
  linkname?: string;
  /** A pax extended header ('x') before the entry. */
  pax?: Record<string, string>;
  /** A GNU long-name record ('L') before the entry. */
  gnuLongName?: string;
  /** The size field, when it must lie (defaults to the body's length). */
  size?: number;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** One 512-byte ustar header. */
export function tarHeader(
  name: string,
  size: number,
  type: string,
  linkname = '',
  magic: 'ustar' | 'gnu' = 'ustar',
): Buffer {
  const block = Buffer.alloc(512);
  const nameBytes = Buffer.from(name);
  if (nameBytes.length > 100) throw new Error(`name over 100 bytes: use pax or gnuLongName (${name})`);
  nameBytes.copy(block, 0);
  block.write(octal(0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(1_700_000_000, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(type, 156, 'ascii');
  Buffer.from(linkname).copy(block, 157);
  if (magic === 'ustar') block.write('ustar\u000000', 257, 'binary');
  else block.write('ustar  \u0000', 257, 'binary');
  let sum = 0;
  for (const b of block) sum += b;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);

function record(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

/** The uncompressed tar of `entries`, with the two end blocks (unless `end` is false). */
export function tar(entries: TarEntrySpec[], options: { end?: boolean } = {}): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    if (e.pax) {
      const data = Buffer.from(
        Object.entries(e.pax)
          .map(([k, v]) => record(k, v))
          .join(''),
      );
      parts.push(tarHeader('PaxHeader', data.length, 'x'), data, pad(data.length));
    }
    if (e.gnuLongName !== undefined) {
      const data = Buffer.from(`${e.gnuLongName}\0`);
      parts.push(tarHeader('././@LongLink', data.length, 'L', '', 'gnu'), data, pad(data.length));
    }
    const body = e.body === undefined ? Buffer.alloc(0) : Buffer.from(e.body);
    const name = Buffer.byteLength(e.name) > 100 ? e.name.slice(0, 100) : e.name;
    parts.push(
      tarHeader(name, e.size ?? body.length, e.type ?? '0', e.linkname ?? ''),
      body,
      pad(body.length),
    );
  }
  if (options.end !== false) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** The gzip of tar(entries). */
export const tgz = (entries: TarEntrySpec[], options: { end?: boolean } = {}): Buffer =>
  gzipSync(tar(entries, options));

/** Files as tar entries (path -> body), in order. */
export const fileEntries = (files: Record<string, string | Buffer>, prefix = ''): TarEntrySpec[] =>
  Object.entries(files).map(([name, body]) => ({ name: `${prefix}${name}`, body }));
