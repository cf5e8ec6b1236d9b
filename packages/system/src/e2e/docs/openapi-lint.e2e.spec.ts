import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSystem } from '../../testing/harness.ts';

/*
 * The served OpenAPI document passes Redocly CLI's lint with the project's rule set
 * (services/gateway/src/docs/redocly.yaml: recommended, every problem counted, two justified
 * exceptions). Redocly also checks every example against its schema.
 */

const require = createRequire(import.meta.url);
const redoclyPackage = require.resolve('@redocly/cli/package.json');
const redocly = join(dirname(redoclyPackage), (require(redoclyPackage) as { bin: Record<string, string> }).bin.redocly!);
const config = fileURLToPath(new URL('../../../../../services/gateway/src/docs/redocly.yaml', import.meta.url));

let sys: TestSystem;
let dir: string;
beforeAll(async () => {
  sys = await TestSystem.start();
  dir = await mkdtemp(join(tmpdir(), 'castie-openapi-'));
});
afterAll(async () => {
  await sys.close();
  await rm(dir, { recursive: true, force: true });
});

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

describe('the OpenAPI document, linted', () => {
  it('has no errors and no warnings under the documented rule set', async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, (await sys.get('/docs/openapi.json')).text);
    const run = await promisify(execFile)(process.execPath, [redocly, 'lint', file, '--config', config, '--format', 'json'], { maxBuffer: 64 * 1024 * 1024 }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }));
    const report = JSON.parse(run.stdout) as LintReport;
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);
});
