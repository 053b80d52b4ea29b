import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { etcSnapshot } from './etc-snapshot.js';

let scratch: string;
let source: string;
let parent: string;

beforeEach(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'baton-etc-snapshot-'));
  source = path.join(scratch, 'etc');
  parent = path.join(scratch, 'snapshots');
  mkdirSync(parent);
  mkdirSync(path.join(source, 'ssl', 'certs'), { recursive: true });
  mkdirSync(path.join(source, 'ssl', 'private'), { mode: 0o710 });
  chmodSync(path.join(source, 'ssl', 'private'), 0o710);
  writeFileSync(path.join(source, 'ssl', 'private', 'server.key'), 'PRIVATE KEY');
  writeFileSync(path.join(source, 'ssl', 'certs', 'ca.pem'), 'CERT');
  symlinkSync('/usr/share/ca-certificates/x.crt', path.join(source, 'ssl', 'certs', 'x.pem'));
  writeFileSync(path.join(source, 'passwd'), 'root:x:0:0::/root:/bin/bash\n');
  writeFileSync(path.join(source, 'shadow'), 'root:$6$secret:::');
  writeFileSync(path.join(source, 'npmrc'), '//registry.npmjs.org/:_authToken=secret');
  writeFileSync(path.join(source, 'gitconfig'), '[core]\n', { mode: 0o600 });
  chmodSync(path.join(source, 'gitconfig'), 0o600);
  mkdirSync(path.join(source, 'python3.11'));
  writeFileSync(path.join(source, 'python3.11', 'sitecustomize.py'), '');
});

afterEach(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('the /etc snapshot', () => {
  it('holds the allowed entries only, symlinks as symlinks', () => {
    const etc = etcSnapshot({ source, parent });
    expect(readFileSync(path.join(etc, 'passwd'), 'utf8')).toContain('root:x:0:0');
    expect(readFileSync(path.join(etc, 'ssl', 'certs', 'ca.pem'), 'utf8')).toBe('CERT');
    expect(readlinkSync(path.join(etc, 'ssl', 'certs', 'x.pem'))).toBe(
      '/usr/share/ca-certificates/x.crt',
    );
    expect(existsSync(path.join(etc, 'python3.11', 'sitecustomize.py'))).toBe(true);
    expect(existsSync(path.join(etc, 'shadow'))).toBe(false);
    expect(existsSync(path.join(etc, 'npmrc'))).toBe(false);
  });

  it('leaves out what other users cannot read, even under an allowed entry', () => {
    const etc = etcSnapshot({ source, parent });
    expect(existsSync(path.join(etc, 'ssl', 'private'))).toBe(false);
    expect(existsSync(path.join(etc, 'gitconfig'))).toBe(false);
  });

  it('is made once, and again when an entry changes', () => {
    const first = etcSnapshot({ source, parent });
    expect(etcSnapshot({ source, parent })).toBe(first);
    writeFileSync(
      path.join(source, 'passwd'),
      'root:x:0:0::/root:/bin/bash\nagent:x:1000:1000::/home/agent:/bin/sh\n',
    );
    const second = etcSnapshot({ source, parent });
    expect(second).not.toBe(first);
    expect(readFileSync(path.join(second, 'passwd'), 'utf8')).toContain('agent:x:1000');
    // The earlier snapshot stays for commands that still have it mounted.
    expect(readFileSync(path.join(first, 'passwd'), 'utf8')).not.toContain('agent');
    writeFileSync(path.join(source, 'ssl', 'certs', 'new.pem'), 'CERT 2');
    const third = etcSnapshot({ source, parent });
    expect(third).not.toBe(second);
    expect(existsSync(path.join(third, 'ssl', 'certs', 'new.pem'))).toBe(true);
  });
});
