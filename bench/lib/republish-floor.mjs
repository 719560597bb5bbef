// The floor under `slipway publish` of a one-file change (bench/cli.ts): what a fresh Node process costs
// when it does nothing but the three requests of such a republish, with no folder walk, no hash cache, no
// CLI framework. Plain JavaScript on purpose, run as `node republish-floor.mjs <manifest.json>`: no
// TypeScript loader in the measured process.
// <manifest.json> is {"slug": ..., "files": [{path, size, contentType, hash}, ...]}, the site's live
// manifest; one file other than the first gets 40 KB of new random bytes, the rest keep their hashes.
// Env: SLIPWAY_URL, SLIPWAY_API_KEY. Prints {"uploaded": n}; exits 1 on any unexpected answer.

import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';

const { slug, files } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const changed = 1 + Math.floor(Math.random() * (files.length - 1));
const bytes = randomBytes(40_000);
const hash = createHash('sha256').update(bytes).digest('hex');
const manifest = files.map((f, i) => (i === changed ? { ...f, size: bytes.length, hash } : f));

const agent = new http.Agent({ keepAlive: true });
const key = process.env.SLIPWAY_API_KEY;

/** One request; resolves to {status, json}. */
function send(url, method, contentType, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method,
      agent,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': contentType,
        'content-length': String(body.length),
      },
    });
    req.once('error', reject);
    req.once('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.once('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          json = { text };
        }
        resolve({ status: res.statusCode, json });
      });
    });
    req.end(body);
  });
}

const fail = (what, answer) => {
  process.stderr.write(`${what}: ${answer.status} ${JSON.stringify(answer.json)}\n`);
  process.exit(1);
};

const json = (value) => Buffer.from(JSON.stringify(value));
const update = await send(
  `${process.env.SLIPWAY_URL}/api/v1/publish/${slug}`,
  'PUT',
  'application/json',
  json({ files: manifest }),
);
if (update.status !== 200) fail('update', update);
const plan = update.json.upload;
for (const u of plan.uploads) {
  const put = await send(u.url, 'PUT', u.headers['Content-Type'], bytes);
  if (put.status !== 200) fail('upload', put);
}
const done = await send(
  `${process.env.SLIPWAY_URL}/api/v1/publish/${slug}/finalize`,
  'POST',
  'application/json',
  json({ versionId: plan.versionId }),
);
if (done.status !== 200) fail('finalize', done);
agent.destroy();
process.stdout.write(`${JSON.stringify({ uploaded: plan.uploads.length })}\n`);
