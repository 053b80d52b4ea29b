import { describe, expect, it } from 'vitest';
import { containsSecret, redactSecrets, redactValue, SECRET_PATTERNS } from './redaction.js';

describe('secrets never reach memory', () => {
  it.each([
    [
      'anthropic_key',
      'key: sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789',
      'key: [REDACTED:anthropic_key]',
    ],
    ['openai_key', 'OPENAI sk-proj-abcdefghijklmnopqrstuvwx1234', 'OPENAI [REDACTED:openai_key]'],
    ['aws_access_key_id', 'id AKIAIOSFODNN7EXAMPLE here', 'id [REDACTED:aws_access_key_id] here'],
    [
      'aws_secret_access_key',
      'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1',
      'aws_secret_access_key = [REDACTED:aws_secret_access_key]',
    ],
    [
      'github_token',
      'token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB',
      'token [REDACTED:github_token]',
    ],
    ['github_pat', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnop', '[REDACTED:github_token]'],
    ['slack_token', 'xoxb-1234567890-abcdefghij', '[REDACTED:slack_token]'],
    [
      'bearer_token',
      'Authorization: Bearer abc.def.ghi-jkl_mno123',
      'Authorization: Bearer [REDACTED:bearer_token]',
    ],
    [
      'url_credentials',
      'postgres://app:hunter2@db:5432/x',
      'postgres://app:[REDACTED:url_credentials]@db:5432/x',
    ],
    ['password=', 'password=hunter2 and more', 'password=[REDACTED:assigned_secret] and more'],
    ['quoted api key', 'API_KEY: "abc123def"', 'API_KEY: "[REDACTED:assigned_secret]"'],
  ])('redacts %s', (_name, input, expected) => {
    const result = redactSecrets(input);
    expect(result.text).toBe(expected);
    expect(result.found.length).toBeGreaterThan(0);
  });

  it('redacts a whole private key block', () => {
    const text =
      'before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\nafter';
    expect(redactSecrets(text).text).toBe('before\n[REDACTED:private_key]\nafter');
  });

  it('is idempotent and leaves ordinary text alone', () => {
    const once = redactSecrets('password=hunter2 token sk-ant-abcdefghijklmnopqrstuvwxyz').text;
    expect(redactSecrets(once).text).toBe(once);
    expect(redactSecrets(once).found).toEqual([]);
    const plain = '# Progress\n- Session 1: wrote features.json; the password form (F3) is next.\n';
    expect(redactSecrets(plain).text).toBe(plain);
    expect(containsSecret(plain)).toBe(false);
  });
});

const alnum = (length: number, seed = 'aB3dE6gH9k'): string =>
  Array.from({ length }, (_, index) => seed[index % seed.length]).join('');
const hex = (length: number): string => alnum(length, '0123456789abcdef');

/**
 * One positive sample (the secret inside ordinary text) and one negative sample (a near miss
 * that must come through untouched) for every rule of the table.
 */
const SAMPLES: Record<string, { secret: string; positive: string; negative: string }> = {
  private_key: {
    secret: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
    positive:
      'key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----',
    negative: '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOC\n-----END PUBLIC KEY-----',
  },
  anthropic_key: {
    secret: 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789',
    positive: 'ANTHROPIC_API_KEY is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 today',
    negative: 'the sk-ant- prefix marks Anthropic keys',
  },
  openai_key: {
    secret: 'sk-proj-abcdefghijklmnopqrstuvwx1234',
    positive: 'use sk-proj-abcdefghijklmnopqrstuvwx1234 for the call',
    negative: 'we import sk-learn metrics',
  },
  stripe_key: {
    secret: `sk_live_${alnum(24)}`,
    positive: `stripe.setKey("sk_live_${alnum(24)}")`,
    negative: `publishable pk_live_${alnum(24)} is public`,
  },
  aws_access_key_id: {
    secret: 'AKIAIOSFODNN7EXAMPLE',
    positive: 'id AKIAIOSFODNN7EXAMPLE here',
    negative: 'the AKIA1234 prefix is too short',
  },
  aws_secret_access_key: {
    secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1',
    positive: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1',
    negative: 'aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}',
  },
  github_fine_grained_token: {
    secret: `github_pat_${alnum(22)}_${alnum(59)}`,
    positive: `GH_TOKEN=github_pat_${alnum(22)}_${alnum(59)} git push`,
    negative: 'fine-grained tokens start with github_pat_ and an id',
  },
  github_token: {
    secret: `ghp_${alnum(36)}`,
    positive: `token ghp_${alnum(36)}`,
    negative: 'ghp_short is not a token',
  },
  gitlab_token: {
    secret: `glpat-${alnum(20)}`,
    positive: `PRIVATE-TOKEN: glpat-${alnum(20)}`,
    negative: 'glpat-abc is a truncated example',
  },
  npm_token: {
    secret: `npm_${alnum(36)}`,
    positive: `//registry.npmjs.org/:_authToken=npm_${alnum(36)}`,
    negative: 'npm_config_registry is an environment variable',
  },
  huggingface_token: {
    secret: `hf_${alnum(34)}`,
    positive: `HF_TOKEN hf_${alnum(34)}`,
    negative: 'from huggingface_hub import hf_hub_download',
  },
  slack_token: {
    secret: 'xoxb-1234567890-abcdefghij',
    positive: 'slack xoxb-1234567890-abcdefghij',
    negative: 'xoxo-hugs and kisses',
  },
  slack_webhook: {
    secret: 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
    positive:
      'post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now',
    negative: 'Slack webhooks live under https://hooks.slack.com/',
  },
  sendgrid_key: {
    secret: `SG.${alnum(22)}.${alnum(43)}`,
    positive: `SENDGRID SG.${alnum(22)}.${alnum(43)}`,
    negative: 'SG.short.value',
  },
  twilio_api_key: {
    secret: `SK${hex(32)}`,
    positive: `twilio key SK${hex(32)}`,
    negative: `account AC${hex(32)} is an identifier`,
  },
  twilio_auth_token: {
    secret: hex(32),
    positive: `TWILIO_AUTH_TOKEN=${hex(32)}`,
    negative: 'rotate the twilio auth token every quarter',
  },
  azure_storage_key: {
    secret: `${alnum(86)}==`,
    positive: `DefaultEndpointsProtocol=https;AccountName=baton;AccountKey=${alnum(86)}==;EndpointSuffix=core.windows.net`,
    negative: 'AccountKey=short;AccountName=baton',
  },
  azure_client_secret: {
    secret: `Xy18Q~${alnum(34)}`,
    positive: `AZURE_CLIENT_SECRET Xy18Q~${alnum(34)}`,
    negative: 'the Q~ marker appears in Azure client secrets',
  },
  google_api_key: {
    secret: `AIza${alnum(35)}`,
    positive: `maps key AIza${alnum(35)}`,
    negative: 'AIzaShort is not a key',
  },
  google_service_account_key_id: {
    secret: hex(40),
    positive: `{"type": "service_account", "private_key_id": "${hex(40)}"}`,
    negative: '{"private_key_id": "see the console"}',
  },
  jwt: {
    secret:
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    positive:
      'cookie session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U;',
    negative: 'eyJ.not.a.jwt',
  },
  bearer_token: {
    secret: 'abc.def.ghi-jkl_mno123',
    positive: 'Authorization: Bearer abc.def.ghi-jkl_mno123',
    negative: 'the Bearer of bad news',
  },
  http_basic_credentials: {
    secret: 'dXNlcjpodW50ZXIy',
    positive: 'curl -H "Authorization: Basic dXNlcjpodW50ZXIy" https://api.example.com',
    negative: 'Basic authentication sends the Authorization header',
  },
  url_credentials: {
    secret: 'hunter2',
    positive: 'postgres://app:hunter2@db:5432/x',
    negative: 'https://example.com/path:with@signs',
  },
  assigned_secret: {
    secret: 'hunter2',
    positive: 'password=hunter2 and more',
    negative: '- Session 1: the password form (F3) is next.',
  },
};

describe('the rules table', () => {
  it('has a positive and a negative sample for every rule', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(SECRET_PATTERNS.map((rule) => rule.name).sort());
  });

  it.each(SECRET_PATTERNS.map((rule) => [rule.name]))('%s: redacts its positive sample', (name) => {
    const sample = SAMPLES[name]!;
    const result = redactSecrets(sample.positive);
    expect(result.found).toContain(name);
    expect(result.text).toContain(`[REDACTED:${name}]`);
    expect(result.text).not.toContain(sample.secret);
  });

  it.each(SECRET_PATTERNS.map((rule) => [rule.name]))(
    '%s: leaves its negative sample untouched (no rule fires)',
    (name) => {
      const sample = SAMPLES[name]!;
      expect(redactSecrets(sample.negative)).toEqual({ text: sample.negative, found: [] });
    },
  );

  it('never rewrites the marker another rule left', () => {
    const token = `glpat-${'Ab1'.repeat(8)}`;
    expect(redactSecrets(`git push https://${token}@gitlab.example/x`).text).toBe(
      'git push https://[REDACTED:gitlab_token]@gitlab.example/x',
    );
  });

  it('redacts a whole Google service-account key file', () => {
    const file = JSON.stringify({
      type: 'service_account',
      project_id: 'baton-demo',
      private_key_id: hex(40),
      private_key:
        '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----\n',
      client_email: 'baton@baton-demo.iam.gserviceaccount.com',
    });
    const result = redactSecrets(file);
    expect(result.text).not.toContain(hex(40));
    expect(result.text).not.toContain('MIIEvQIBADANBgkqhkiG9w0B');
    expect(result.text).toContain('baton@baton-demo.iam.gserviceaccount.com');
  });
});

describe('redactValue', () => {
  it('redacts every string of an event or log record, at any depth, and copies nothing else', () => {
    const token = `ghp_${alnum(36)}`;
    const event = {
      type: 'tool-call',
      turn: 3,
      summary: `bash: echo ${token}`,
      details: { output: [`npm_${alnum(36)}`, 'fine'], ok: true },
    };
    const redacted = redactValue(event);
    expect(JSON.stringify(redacted)).not.toMatch(/ghp_aB|npm_aB/);
    expect(redacted).toEqual({
      type: 'tool-call',
      turn: 3,
      summary: 'bash: echo [REDACTED:github_token]',
      details: { output: ['[REDACTED:npm_token]', 'fine'], ok: true },
    });
    expect(event.summary).toContain(token);
    const clean = { a: 'plain', n: 1 };
    expect(redactValue(clean)).toEqual(clean);
  });
});
