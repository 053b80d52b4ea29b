import { describe, expect, it } from 'vitest';
import { MAX_REDACTED_TEXT_BYTES, SECRET_PATTERNS, redactSecrets } from './redaction.js';

/**
 * Every rule runs in time linear in its input: the worker runs them on its main thread over text
 * the agent wrote (memory writes, events, transcripts, the files of a checkpoint). Each input
 * below is a near miss repeated to the largest size the rules see, shaped to make a backtracking
 * rule scan the rest of the input from every start (what made 1 MB of `eyJ-` take 514 s).
 */
const ADVERSARIAL_UNITS: Record<string, string[]> = {
  private_key: ['-----BEGIN A ', '-----BEGIN ', '-----BEGIN PRIVATE KEY-----', '-----END A '],
  anthropic_key: ['sk-ant-', 'sk-ant-a.'],
  openai_key: ['sk-', 'sk-proj-', 'sk-proj-a '],
  stripe_key: ['sk_live_', 'rk_test_a-'],
  aws_access_key_id: ['AKIA', 'AKIAAAAA'],
  aws_secret_access_key: [
    'aws_secret_access_key=',
    'aws_secret_access_key="a',
    'awssecretaccesskey ',
  ],
  github_fine_grained_token: ['github_pat_', `github_pat_${'a'.repeat(22)}_`],
  github_token: ['ghp_', 'github_pat_a'],
  gitlab_token: ['glpat-', 'glpat-a.'],
  npm_token: ['npm_', 'npm_a'],
  huggingface_token: ['hf_', 'hf_a'],
  slack_token: ['xoxb-', 'xoxb-a.'],
  slack_webhook: ['https://hooks.slack.com/services/', 'https://hooks.slack.com/services/a:'],
  sendgrid_key: ['SG.', `SG.${'a'.repeat(22)}.`],
  twilio_api_key: ['SK', 'SKa'],
  twilio_auth_token: ['twilio_auth_token=', 'twilio_auth_token= '],
  azure_storage_key: ['AccountKey=', 'AccountKey=a'],
  azure_client_secret: ['aaa1Q~', 'a1Q~'],
  google_api_key: ['AIza', 'AIzaa-'],
  google_service_account_key_id: ['"private_key_id": "', '"private_key_id" '],
  jwt: ['eyJ-', 'eyJaaaaaaaa.', 'eyJaaaaaaaa.eyJaaaaaaaa-'],
  bearer_token: ['Bearer ', 'Token a', 'Bearer\t'],
  http_basic_credentials: ['Authorization: ', 'Authorization Basic ', 'Authorization: Basic a!'],
  url_credentials: ['a.', 'a://', 'a://b:', 'a://b:c:', 'a+b-c.'],
  assigned_secret: ['password=', 'password="a', "password='a", 'password: ', 'api_key='],
};

/** `unit` repeated to the size limit; `tail` variants add a long run of one character. */
function attack(unit: string): string[] {
  const repeated = unit.repeat(Math.ceil(MAX_REDACTED_TEXT_BYTES / unit.length));
  const run = `${unit}${'a'.repeat(MAX_REDACTED_TEXT_BYTES - unit.length)}`;
  return [repeated.slice(0, MAX_REDACTED_TEXT_BYTES), run];
}

/** Far above what a linear scan of 1 MiB takes on a loaded machine, far below a quadratic one. */
const LIMIT_MS = 2_000;

describe('every secret rule is linear in its input', () => {
  it('has adversarial inputs for every rule of the table', () => {
    expect(Object.keys(ADVERSARIAL_UNITS).sort()).toEqual(
      SECRET_PATTERNS.map((rule) => rule.name).sort(),
    );
  });

  it.each(SECRET_PATTERNS.map((rule) => [rule.name, rule] as const))(
    '%s: adversarial inputs of the maximum size finish in time',
    (name, rule) => {
      for (const unit of ADVERSARIAL_UNITS[name] ?? []) {
        for (const input of attack(unit)) {
          const started = performance.now();
          redactSecrets(input, [rule]);
          const elapsed = performance.now() - started;
          expect(elapsed, `${name} on ${JSON.stringify(unit)}`).toBeLessThan(LIMIT_MS);
        }
      }
    },
    60_000,
  );

  it('the whole table on a mix of every near miss at the maximum size finishes in time', () => {
    const mix = Object.values(ADVERSARIAL_UNITS).flat().join(' ');
    const input = mix.repeat(Math.ceil(MAX_REDACTED_TEXT_BYTES / mix.length));
    const started = performance.now();
    redactSecrets(input.slice(0, MAX_REDACTED_TEXT_BYTES));
    expect(performance.now() - started).toBeLessThan(LIMIT_MS * 2);
  }, 60_000);
});
