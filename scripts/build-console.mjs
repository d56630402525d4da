// Build the review console (src/console) into dist/console: one ES module bundle (esbuild,
// pinned in package.json) plus the static page and stylesheet. Run by `npm run build`.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'console');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, 'src', 'console', 'main.ts')],
  outfile: join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome120', 'firefox120', 'safari17'],
  minify: false,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const f of ['index.html', 'app.css']) copyFileSync(join(root, 'src', 'console', 'static', f), join(out, f));
