// The real-bundle set of the secret scanner: files of front-end libraries installed as dev dependencies, as
// sites publish them (browser builds, minified bundles, their source maps, and the language grammars of
// editors and highlighters). Every one is a false positive to the scanner if it finds anything in them:
// test/core/scan-real-bundles.test.ts asserts none, `npm run bench:scan` times them.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './service.js';

export interface RealBundle {
  name: string;
  /**
   * Paths under node_modules; a `*` matches within one path segment (`mode-*.js`, `@codemirror/*`), a
   * `**` segment any depth of folders.
   */
  files: readonly string[];
}

export const REAL_BUNDLES: readonly RealBundle[] = [
  { name: 'jquery', files: ['jquery/dist/jquery.js', 'jquery/dist/jquery.min.js'] },
  { name: 'react-dom', files: ['react-dom/cjs/react-dom-client.production.js'] },
  { name: 'vue', files: ['vue/dist/vue.global.js', 'vue/dist/vue.global.prod.js'] },
  { name: 'lodash', files: ['lodash/lodash.js', 'lodash/lodash.min.js'] },
  {
    name: 'bootstrap',
    files: [
      'bootstrap/dist/js/bootstrap.bundle.js',
      'bootstrap/dist/css/bootstrap.css',
      'bootstrap/dist/js/bootstrap.bundle.min.js.map',
    ],
  },
  { name: 'three', files: ['three/build/three.module.js', 'three/build/three.core.js'] },
  { name: 'd3', files: ['d3/dist/d3.js', 'd3/dist/d3.min.js'] },
  { name: 'chart.js', files: ['chart.js/dist/chart.umd.js'] },
  {
    name: 'pdfjs-dist',
    files: [
      'pdfjs-dist/build/pdf.mjs',
      'pdfjs-dist/build/pdf.worker.mjs',
      'pdfjs-dist/build/pdf.min.mjs',
      'pdfjs-dist/build/pdf.sandbox.min.mjs',
      'pdfjs-dist/build/pdf.mjs.map',
      'pdfjs-dist/web/pdf_viewer.mjs',
      'pdfjs-dist/web/pdf_viewer.css',
    ],
  },
  {
    name: 'highlight.js',
    files: ['@highlightjs/cdn-assets/highlight.js', '@highlightjs/cdn-assets/highlight.min.js'],
  },
  // Editors and renderers (issue 21): their language grammars name every rule's `token`.
  {
    name: 'monaco-editor',
    files: [
      // The AMD build: the editor and one minified file per basic language (the files that blocked).
      'monaco-editor/min/vs/*.js',
      'monaco-editor/min/vs/editor/editor.main.css',
      // What a bundler takes from the ESM build: the basic languages' Monarch grammars.
      'monaco-editor/esm/vs/languages/definitions/*/*.js',
    ],
  },
  {
    name: 'ace-builds',
    files: [
      'ace-builds/src-min-noconflict/ace.js',
      'ace-builds/src-min-noconflict/ext-language_tools.js',
      'ace-builds/src-min-noconflict/mode-*.js',
      'ace-builds/src-min-noconflict/theme-*.js',
    ],
  },
  {
    name: 'codemirror',
    files: [
      '@codemirror/*/dist/index.js',
      '@codemirror/legacy-modes/mode/*.js',
      '@lezer/*/dist/index.js',
      'codemirror/dist/index.js',
    ],
  },
  {
    name: 'prismjs',
    files: [
      'prismjs/prism.js',
      'prismjs/components/prism-*.min.js',
      'prismjs/plugins/*/*.min.js',
      'prismjs/themes/*.css',
    ],
  },
  { name: 'shiki', files: ['shiki/dist/*.mjs', '@shikijs/langs/dist/*.mjs', '@shikijs/themes/dist/*.mjs'] },
  {
    name: 'katex',
    files: [
      'katex/dist/katex.js',
      'katex/dist/katex.min.js',
      'katex/dist/katex.min.css',
      'katex/dist/contrib/*.min.js',
    ],
  },
  {
    name: 'mathjax',
    files: [
      'mathjax/tex-mml-chtml.js',
      'mathjax/tex-svg.js',
      'mathjax/input/**/*.js',
      'mathjax/a11y/**/*.js',
    ],
  },
  {
    name: 'tinymce',
    files: [
      'tinymce/tinymce.min.js',
      'tinymce/plugins/*/plugin.min.js',
      'tinymce/themes/*/theme.min.js',
      'tinymce/models/*/model.min.js',
      'tinymce/icons/*/icons.min.js',
      'tinymce/skins/**/*.min.css',
    ],
  },
  {
    name: 'swagger-ui',
    files: [
      '@fastify/swagger-ui/static/swagger-ui-bundle.js',
      '@fastify/swagger-ui/static/swagger-ui-standalone-preset.js',
      '@fastify/swagger-ui/static/swagger-ui.css',
      '@fastify/swagger-ui/static/oauth2-redirect.html',
    ],
  },
];

/** Files of `pattern` under `dir`, sorted; `*` within a segment, `**` for any depth of folders. */
function expand(dir: string, segments: readonly string[]): string[] {
  const [first, ...rest] = segments;
  if (first === undefined) return [];
  const isDir = (p: string) => statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
  const isFile = (p: string) => statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;
  if (first === '**') {
    const here = expand(dir, rest);
    const below = isDir(dir)
      ? readdirSync(dir)
          .sort()
          .filter((n) => isDir(join(dir, n)))
          .flatMap((n) => expand(join(dir, n), segments))
      : [];
    return [...here, ...below];
  }
  const names = first.includes('*')
    ? isDir(dir)
      ? readdirSync(dir)
          .sort()
          .filter((n) => new RegExp(`^${first.split('*').map(escapeRe).join('[^/]*')}$`).test(n))
      : []
    : [first];
  return names.flatMap((n) => {
    const p = join(dir, n);
    if (rest.length > 0) return expand(p, rest);
    return isFile(p) ? [p] : [];
  });
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export interface ResolvedBundle {
  name: string;
  /** Paths relative to node_modules. */
  files: string[];
  /** Patterns that matched no file (the library is not installed, or its layout changed). */
  missing: string[];
}

/** The set's files as installed in this checkout's node_modules. */
export function resolveRealBundles(root = join(REPO_ROOT, 'node_modules')): ResolvedBundle[] {
  return REAL_BUNDLES.map(({ name, files }) => {
    const found: string[] = [];
    const missing: string[] = [];
    for (const pattern of files) {
      const paths = expand(root, pattern.split('/'));
      if (paths.length === 0) missing.push(pattern);
      for (const p of paths) found.push(p.slice(root.length + 1));
    }
    return { name, files: [...new Set(found)], missing };
  });
}
