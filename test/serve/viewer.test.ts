// Generated pages of sites without index.html: the one-file viewer with Open Graph tags, and the
// directory listing with folder navigation. Site text is always escaped.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { seedSite, setMetadata } from '../helpers/seed.js';
import { siteRequest } from './site-client.js';

/** The content of `<meta property|name="key" content="...">`. */
function meta(html: string, key: string): string | undefined {
  const re = new RegExp(`<meta (?:property|name)="${key.replace(/[.:]/g, '\\$&')}" content="([^"]*)">`);
  return re.exec(html)?.[1];
}

describe('viewer page', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('a one-image site shows a viewer at / with title, description and absolute og tags', async () => {
    const { slug } = await seedSite(t.ctx, {
      files: { 'photo.jpg': Buffer.alloc(5000, 9) },
      title: 'Holiday <2024>',
      description: 'Sea & "sun"',
    });
    const res = await siteRequest(t, slug, '/');
    assert.equal(res.status, 200);
    assert.equal(res.header('content-type'), 'text/html; charset=utf-8');
    const origin = `http://${slug}.localhost:${t.port}`;
    assert.match(res.text, /<title>Holiday &#60;2024&#62;<\/title>/);
    assert.equal(meta(res.text, 'description'), 'Sea &#38; &#34;sun&#34;');
    assert.equal(meta(res.text, 'og:title'), 'Holiday &#60;2024&#62;');
    assert.equal(meta(res.text, 'og:description'), 'Sea &#38; &#34;sun&#34;');
    assert.equal(meta(res.text, 'og:url'), `${origin}/`);
    assert.equal(meta(res.text, 'og:image'), `${origin}/photo.jpg`);
    assert.match(res.text, /<img src="\/photo\.jpg"/);
    // The file itself is still served at its own URL.
    const direct = await siteRequest(t, slug, '/photo.jpg');
    assert.equal(direct.status, 200);
    assert.equal(direct.header('content-type'), 'image/jpeg');
  });

  test('og:image is the absolute URL of ogImagePath when set', async () => {
    const { slug } = await seedSite(t.ctx, {
      files: { 'talk.pdf': { body: '%PDF-1.4 fake', contentType: 'application/pdf' } },
      ogImagePath: 'cover image.png',
    });
    const res = await siteRequest(t, slug, '/');
    assert.equal(meta(res.text, 'og:image'), `http://${slug}.localhost:${t.port}/cover%20image.png`);
    assert.equal(meta(res.text, 'og:title'), 'talk.pdf');
    assert.match(res.text, /<iframe src="\/talk\.pdf"/);
  });

  const kinds: Array<[string, string, RegExp]> = [
    ['clip.mp4', 'video/mp4', /<video src="\/clip\.mp4" controls/],
    ['song.mp3', 'audio/mpeg', /<audio src="\/song\.mp3" controls/],
    ['notes.txt', 'text/plain', /<iframe src="\/notes\.txt"/],
    ['archive.zip', 'application/zip', /<a href="\/archive\.zip" download>/],
  ];
  for (const [name, type, pattern] of kinds) {
    test(`a one-file site of ${type} gets the matching viewer`, async () => {
      const { slug } = await seedSite(t.ctx, { files: { [name]: { body: 'bytes', contentType: type } } });
      const res = await siteRequest(t, slug, '/');
      assert.equal(res.status, 200);
      assert.match(res.text, pattern);
      assert.equal(meta(res.text, 'og:image'), undefined);
    });
  }

  test('file names are escaped in the viewer', async () => {
    const name = '"><script>alert(1)</script>.txt';
    const { slug } = await seedSite(t.ctx, { files: { [name]: 'x' } });
    const res = await siteRequest(t, slug, '/');
    assert.equal(res.status, 200);
    assert.doesNotMatch(res.text, /<script>alert/);
  });

  test('metadata changes show on the next request', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'a.png': Buffer.alloc(10) }, title: 'Before' });
    assert.equal(meta((await siteRequest(t, slug, '/')).text, 'og:title'), 'Before');
    await setMetadata(t.ctx, slug, { title: 'After', description: 'New words' });
    const res = await siteRequest(t, slug, '/');
    assert.equal(meta(res.text, 'og:title'), 'After');
    assert.equal(meta(res.text, 'description'), 'New words');
  });

  test('HEAD of the viewer answers headers only', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'a.png': Buffer.alloc(10) } });
    const res = await siteRequest(t, slug, '/', { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(res.body.length, 0);
  });
});

describe('directory listing', () => {
  let t: TestApp;
  let slug: string;
  before(async () => {
    t = await startTestApp();
    ({ slug } = await seedSite(t.ctx, {
      title: 'Shared files',
      description: 'Everything from the trip',
      ogImagePath: 'pics/cover.jpg',
      files: {
        'readme.txt': 'read me',
        'report <final>.pdf': { body: 'pdf', contentType: 'application/pdf' },
        'pics/cover.jpg': Buffer.alloc(100),
        'pics/day1/a.jpg': Buffer.alloc(50),
        'pics/day1/b.jpg': Buffer.alloc(60),
        'site/index.html': 'a folder with its own index',
      },
    }));
  });
  after(() => t.close());

  test('/ lists the root: folders then files, escaped, with og tags', async () => {
    const res = await siteRequest(t, slug, '/');
    assert.equal(res.status, 200);
    assert.match(res.text, /<a href="\/pics\/">pics\/<\/a>/);
    assert.match(res.text, /<a href="\/site\/">site\/<\/a>/);
    assert.match(res.text, /<a href="\/readme\.txt">readme\.txt<\/a>/);
    assert.match(res.text, /<a href="\/report%20%3Cfinal%3E\.pdf">report &#60;final&#62;\.pdf<\/a>/);
    assert.ok(res.text.indexOf('pics/') < res.text.indexOf('readme.txt'));
    assert.equal(meta(res.text, 'og:title'), 'Shared files');
    assert.equal(meta(res.text, 'description'), 'Everything from the trip');
    assert.equal(meta(res.text, 'og:image'), `http://${slug}.localhost:${t.port}/pics/cover.jpg`);
  });

  test('/pics/ lists that folder with a parent link; /pics redirects to /pics/', async () => {
    const res = await siteRequest(t, slug, '/pics/');
    assert.equal(res.status, 200);
    assert.match(res.text, /<a href="\/">\.\.\/<\/a>/);
    assert.match(res.text, /<a href="\/pics\/day1\/">day1\/<\/a>/);
    assert.match(res.text, /<a href="\/pics\/cover\.jpg">cover\.jpg<\/a>/);
    assert.doesNotMatch(res.text, /readme/);
    const nested = await siteRequest(t, slug, '/pics/day1/');
    assert.match(nested.text, /<a href="\/pics\/">\.\.\/<\/a>/);
    assert.match(nested.text, /b\.jpg/);
    const bare = await siteRequest(t, slug, '/pics');
    assert.equal(bare.status, 301);
    assert.equal(bare.header('location'), '/pics/');
  });

  test('a folder with its own index.html serves it; unknown folders answer 404', async () => {
    assert.equal((await siteRequest(t, slug, '/site/')).text, 'a folder with its own index');
    assert.equal((await siteRequest(t, slug, '/nope/')).status, 404);
  });

  test('direct file URLs always work', async () => {
    assert.equal((await siteRequest(t, slug, '/readme.txt')).text, 'read me');
    assert.equal((await siteRequest(t, slug, '/pics/day1/a.jpg')).status, 200);
  });

  test('a site with index.html gets no listing for its folders', async () => {
    const { slug: s } = await seedSite(t.ctx, {
      files: { 'index.html': 'home', 'img/a.png': Buffer.alloc(5) },
    });
    assert.equal((await siteRequest(t, s, '/img/')).status, 404);
  });
});
