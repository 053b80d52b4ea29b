import { StoreError } from '../../store.js';

/** Nominal size every store reports for a directory (like `du` on ext4). */
export const DIRECTORY_SIZE = 4096;

/** Names `list({ skipHidden: true })` leaves out, with everything below them. */
export function isHiddenName(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}

/** `'a/b/c'` -> `'a/b'`; `'a'` -> `''` (the root). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

/** Every proper ancestor of `path` except the root, outermost first: `'a/b/c'` -> `['a', 'a/b']`. */
export function ancestorsOf(path: string): string[] {
  const segments = path.split('/');
  const ancestors: string[] = [];
  for (let index = 1; index < segments.length; index++) {
    ancestors.push(segments.slice(0, index).join('/'));
  }
  return ancestors;
}

/** True if `path` is strictly below `directory` (`directory` `''` is the root). */
export function isBelow(path: string, directory: string): boolean {
  if (directory === '') return path !== '';
  return path.startsWith(`${directory}/`);
}

/**
 * Defends a store against a caller that skipped the handler's path policy. The handler already
 * canonicalises every path; this only checks the documented `StorePath` shape, so it is cheap.
 */
export function assertStorePath(path: string): void {
  if (typeof path !== 'string') {
    throw new StoreError('invalid_path', 'The path must be a string.');
  }
  if (path === '') return;
  if (path.startsWith('/') || path.endsWith('/') || path.includes('\\') || path.includes('\0')) {
    throw new StoreError('invalid_path', 'The path is not a canonical store path.');
  }
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new StoreError('invalid_path', 'The path is not a canonical store path.');
    }
  }
}

/** UTF-8 size of a string in bytes. */
export function byteLength(content: string): number {
  return Buffer.byteLength(content, 'utf8');
}

/** Code-unit order, as the contract asks (not locale order): parents sort before children. */
export function compareCodeUnits(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
