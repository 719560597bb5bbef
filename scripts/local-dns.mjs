#!/usr/bin/env node
// A tiny DNS server for trying custom domains on one machine (docs/custom-domains.md): it answers the
// records given on the command line and passes every other question to the system's resolver, so the
// service can use it as DNS_SERVERS for everything (the site proxy looks names up there too).
//
//   node scripts/local-dns.mjs [--port 5300] [--host 127.0.0.1] [--no-forward] NAME TYPE VALUE ...
//   node scripts/local-dns.mjs www.example.test CNAME localhost \
//     _service.www.example.test TXT service-verify=...
//
// TYPE is A, AAAA, CNAME or TXT; names match without regard to case or a trailing dot. `localhost` is
// answered with the loopback addresses (RFC 6761) unless given: an apex domain is checked against the
// addresses of CNAME_TARGET, `localhost` on a local run. UDP only (the answers are small). Node's
// standard library only: no install needed.

import dgram from 'node:dgram';
import { getServers } from 'node:dns';
import { isIPv4, isIPv6 } from 'node:net';

const TYPES = { A: 1, CNAME: 5, TXT: 16, AAAA: 28 };
const CLASS_IN = 1;
const TTL_SECONDS = 5;
const FORWARD_TIMEOUT_MS = 3000;

const usage = `usage: node scripts/local-dns.mjs [--port 5300] [--host 127.0.0.1] [--no-forward] NAME TYPE VALUE ...
  TYPE: A, AAAA, CNAME or TXT. Example:
  node scripts/local-dns.mjs www.example.test CNAME localhost _service.www.example.test TXT service-verify=abc`;

function fail(message) {
  process.stderr.write(`local-dns: ${message}\n${usage}\n`);
  process.exit(2);
}

const bare = (name) => name.toLowerCase().replace(/\.$/, '');

/** The command line: options, then NAME TYPE VALUE triples. */
function parseArgs(argv) {
  const options = { port: 5300, host: '127.0.0.1', forward: true };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${usage}\n`);
      process.exit(0);
    } else if (arg === '--port') {
      options.port = Number(argv[++i]);
      if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535)
        fail('--port takes 0-65535');
    } else if (arg === '--host') {
      options.host = argv[++i] ?? fail('--host takes an address');
    } else if (arg === '--no-forward') {
      options.forward = false;
    } else rest.push(arg);
  }
  if (rest.length === 0 || rest.length % 3 !== 0) fail('give the records as NAME TYPE VALUE triples');
  const records = new Map();
  for (let i = 0; i < rest.length; i += 3) {
    const name = bare(rest[i]);
    const type = rest[i + 1].toUpperCase();
    const value = rest[i + 2];
    if (!(type in TYPES)) fail(`unknown type ${rest[i + 1]} (A, AAAA, CNAME or TXT)`);
    if (type === 'A' && !isIPv4(value)) fail(`A ${name}: ${value} is not an IPv4 address`);
    if (type === 'AAAA' && !isIPv6(value)) fail(`AAAA ${name}: ${value} is not an IPv6 address`);
    if (!records.has(name)) records.set(name, []);
    records.get(name).push({ type, value: type === 'CNAME' ? bare(value) : value });
  }
  if (!records.has('localhost')) {
    records.set('localhost', [
      { type: 'A', value: '127.0.0.1' },
      { type: 'AAAA', value: '::1' },
    ]);
  }
  return { options, records };
}

/** The question of a query: its name, type and where the question section ends. */
function readQuestion(msg) {
  let offset = 12;
  const labels = [];
  for (;;) {
    const len = msg[offset];
    if (len === undefined || len > 63) throw new Error('bad name');
    offset += 1;
    if (len === 0) break;
    labels.push(msg.subarray(offset, offset + len).toString('latin1'));
    offset += len;
  }
  if (offset + 4 > msg.length) throw new Error('short question');
  return { name: bare(labels.join('.')), type: msg.readUInt16BE(offset), end: offset + 4 };
}

function encodeName(name) {
  const parts = name.split('.').filter(Boolean);
  return Buffer.concat([
    ...parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p, 'latin1')])),
    Buffer.from([0]),
  ]);
}

function ipv6Bytes(address) {
  const [head, tail = ''] = address.includes('::') ? address.split('::') : [address, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  const out = Buffer.alloc(16);
  for (const [i, g] of groups.entries()) out.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  return out;
}

function rdata(record) {
  if (record.type === 'A') return Buffer.from(record.value.split('.').map(Number));
  if (record.type === 'AAAA') return ipv6Bytes(record.value);
  if (record.type === 'CNAME') return encodeName(record.value);
  // TXT: character strings of at most 255 bytes each.
  const text = Buffer.from(record.value, 'utf8');
  const chunks = [];
  for (let i = 0; i < text.length || i === 0; i += 255) {
    const chunk = text.subarray(i, i + 255);
    chunks.push(Buffer.from([chunk.length]), chunk);
  }
  return Buffer.concat(chunks);
}

/** One answer record; the name is written out (no compression). */
function answer(name, record) {
  const data = rdata(record);
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(TYPES[record.type], 0);
  fixed.writeUInt16BE(CLASS_IN, 2);
  fixed.writeUInt32BE(TTL_SECONDS, 4);
  fixed.writeUInt16BE(data.length, 8);
  return Buffer.concat([encodeName(name), fixed, data]);
}

/** The records for a question: its own type, or a CNAME (followed through the local table) for A/AAAA. */
function answersFor(records, name, qtype) {
  const out = [];
  const seen = new Set();
  let current = name;
  while (records.has(current) && !seen.has(current)) {
    seen.add(current);
    const list = records.get(current);
    const own = list.filter((r) => TYPES[r.type] === qtype);
    if (own.length > 0) return [...out, ...own.map((r) => ({ name: current, record: r }))];
    const alias = list.find((r) => r.type === 'CNAME');
    if (!alias || (qtype !== TYPES.A && qtype !== TYPES.AAAA)) break;
    out.push({ name: current, record: alias });
    current = alias.value;
  }
  return out;
}

function reply(query, question, answers, rcode) {
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  const rd = query[2] & 0x01;
  header[2] = 0x80 | 0x04 | rd; // QR, AA, RD as asked
  header[3] = 0x80 | rcode; // RA
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  return Buffer.concat([
    header,
    query.subarray(12, question.end),
    ...answers.map((a) => answer(a.name, a.record)),
  ]);
}

/** Passes a query to the system's resolver and its answer back (unknown names: the rest of the world). */
function forward(upstream, query) {
  return new Promise((resolve) => {
    const socket = dgram.createSocket(isIPv6(upstream.host) ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      socket.close();
      resolve(null);
    }, FORWARD_TIMEOUT_MS);
    socket.on('message', (msg) => {
      clearTimeout(timer);
      socket.close();
      resolve(msg);
    });
    socket.on('error', () => {
      clearTimeout(timer);
      socket.close();
      resolve(null);
    });
    socket.send(query, upstream.port, upstream.host);
  });
}

function systemResolver(self) {
  for (const server of getServers()) {
    const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(server);
    if (!m) continue;
    const target = { host: m[1], port: Number(m[2] ?? 53) };
    if (target.host === self.host && target.port === self.port) continue;
    return target;
  }
  return null;
}

const { options, records } = parseArgs(process.argv.slice(2));
const socket = dgram.createSocket(isIPv6(options.host) ? 'udp6' : 'udp4');
let upstream = null;

socket.on('message', async (query, from) => {
  let question;
  try {
    question = readQuestion(query);
  } catch {
    return; // not a query we can read: no answer, as a server does with garbage
  }
  const answers = answersFor(records, question.name, question.type);
  let response;
  if (answers.length > 0 || records.has(question.name)) response = reply(query, question, answers, 0);
  else if (upstream) response = (await forward(upstream, query)) ?? reply(query, question, [], 2);
  else response = reply(query, question, [], 3); // NXDOMAIN
  socket.send(response, from.port, from.address);
});

socket.on('error', (err) => {
  process.stderr.write(`local-dns: ${err.message}\n`);
  process.exit(1);
});

socket.bind(options.port, options.host, () => {
  const { port } = socket.address();
  const self = { host: options.host, port };
  upstream = options.forward ? systemResolver(self) : null;
  const server = isIPv6(options.host) ? `[${options.host}]:${port}` : `${options.host}:${port}`;
  const lines = [`local DNS on ${server} (UDP): start the service with DNS_SERVERS=${server}`];
  for (const [name, list] of records) for (const r of list) lines.push(`  ${name} ${r.type} ${r.value}`);
  lines.push(
    upstream ? `  other names: asked of ${upstream.host}:${upstream.port}` : '  other names: NXDOMAIN',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
});

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => socket.close(() => process.exit(0)));
