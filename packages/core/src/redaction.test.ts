import { describe, expect, it } from 'vitest';
import { containsSecret, redactSecrets } from './redaction.js';

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
