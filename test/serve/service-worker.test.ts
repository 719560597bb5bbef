// Service workers outlive what registered them: a worker installed on a handle (or a custom domain, or a
// site since deleted or taken down) keeps answering for its old scope until its script can be replaced.
// The browser's update check asks for the script with `Service-Worker: script`; unless the host now
// serves a JavaScript file there, it gets a script that unregisters the worker (issue 19, attack pass).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { deleteSite, seedSite } from '../helpers/seed.js';
import { siteRequest } from './site-client.js';

const SW = { 'service-worker': 'script' };
const UNREGISTERS = /registration\.unregister\(\)/;

for (const fastPath of ['true', 'false']) {
  describe(`Service-Worker: script requests (SERVE_FAST_PATH=${fastPath})`, () => {
    let t: TestApp;
    let slug: string;
    const worker = "self.addEventListener('fetch', () => {});";

    before(async () => {
      t = await startTestApp({ SERVE_FAST_PATH: fastPath });
      ({ slug } = await seedSite(t.ctx, {
        files: {
          'index.html': '<h1>home</h1>',
          'sw.js': { body: worker, contentType: 'text/javascript' },
          _redirects: '/* /index.html 200',
        },
      }));
    });
    after(() => t.close());

    test("the site's own worker script is served as it is", async () => {
      // Twice: a memoized answer must not change what a worker update gets.
      for (let i = 0; i < 2; i++) {
        const res = await siteRequest(t, slug, '/sw.js', { headers: SW });
        assert.equal(res.status, 200);
        assert.equal(res.text, worker);
      }
    });

    test('a script the host no longer serves as JavaScript is replaced by one that unregisters the worker', async () => {
      // A missing path answered by the SPA fallback with HTML, then a path of a gated and a deleted site.
      const spa = await siteRequest(t, slug, '/old-worker.js', { headers: SW });
      assert.equal(spa.status, 200);
      assert.match(String(spa.header('content-type')), /^text\/javascript/);
      assert.match(spa.text, UNREGISTERS);
      assert.equal(spa.header('cache-control'), 'no-store');

      const { slug: gated } = await seedSite(t.ctx, {
        password: 'letmein',
        files: { 'sw.js': { body: 'secret worker', contentType: 'text/javascript' } },
      });
      const locked = await siteRequest(t, gated, '/sw.js', { headers: SW });
      assert.match(locked.text, UNREGISTERS);
      assert.doesNotMatch(locked.text, /secret worker/, 'a gated file leaked');

      const { slug: gone } = await seedSite(t.ctx, {
        files: { 'sw.js': { body: worker, contentType: 'text/javascript' } },
      });
      await deleteSite(t.ctx, gone);
      assert.match((await siteRequest(t, gone, '/sw.js', { headers: SW })).text, UNREGISTERS);
    });

    test('without the field nothing changes: the fallback page, and the kill script is never memoized', async () => {
      await siteRequest(t, slug, '/old-worker.js', { headers: SW });
      const page = await siteRequest(t, slug, '/old-worker.js');
      assert.equal(page.status, 200);
      assert.equal(page.text, '<h1>home</h1>');
      const missing = await siteRequest(t, slug, '/sw.js', { method: 'HEAD', headers: SW });
      assert.equal(missing.status, 200);
      assert.equal(missing.body.length, 0);
    });
  });
}
