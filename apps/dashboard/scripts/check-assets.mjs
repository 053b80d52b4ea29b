// Build step: the server serves the UI from the package's public/ folder (no bundler), so the
// build fails if a file the server needs, or a module the UI imports, is missing.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'public');
const required = ['index.html', 'login.html', 'app.js', 'style.css'];
const missing = required.filter((name) => !existsSync(path.join(root, name)));

// Follow static imports from app.js so a renamed module is caught here, not in a browser.
const seen = new Set();
function follow(file) {
  if (seen.has(file)) return;
  seen.add(file);
  const full = path.join(root, file);
  if (!existsSync(full)) {
    missing.push(file);
    return;
  }
  const source = readFileSync(full, 'utf8');
  for (const match of source.matchAll(/^\s*import\s[^'"]*['"](\.[^'"]+)['"]/gm)) {
    follow(path.posix.join(path.posix.dirname(file), match[1]));
  }
}
follow('app.js');

if (missing.length > 0) {
  console.error(`dashboard assets missing from ${root}: ${missing.join(', ')}`);
  process.exit(1);
}
console.log(`dashboard assets ok: ${seen.size} modules, ${required.length} required files`);
