// Sums the vitest JSON reports every package wrote into one closing line: "N passed, N failed".
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
for (const group of ['packages', 'apps']) {
  if (!existsSync(group)) continue;
  for (const name of readdirSync(group)) {
    const report = join(group, name, 'test-results', 'vitest.json');
    if (!existsSync(report)) continue;
    const result = JSON.parse(readFileSync(report, 'utf8'));
    passed += result.numPassedTests ?? 0;
    failed += result.numFailedTests ?? 0;
    skipped += (result.numPendingTests ?? 0) + (result.numTodoTests ?? 0);
  }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
